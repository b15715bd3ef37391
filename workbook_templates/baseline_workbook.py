"""A baseline given as a hand-off workbook (``report --out``), read back as untrusted input.

The workbook's very hidden "Baseline data" sheet
(:mod:`workbook_templates.report.baseline_data`) holds two tables, one below the other with an
empty row between: ``baseline_runs`` (runs.csv's columns a baseline reads) and
``baseline_p50`` (per run code and month, the P50 to the cent, and the hand-off's version and
as-of date). Their cells are the text the CSV files hold, so that
:func:`workbook_templates.baseline.baseline_of` reads them by the same rules as a CSV folder,
and the two give one baseline.

The file is read by the planner reader's rooms, never by ``openpyxl.load_workbook``: at most
:data:`MAX_BASELINE_WORKBOOK_BYTES`, the package's bounds
(:func:`~workbook_templates.xlsx_safety.check_zip`), every part but the worksheets scanned
by the bounded pass (:func:`~workbook_templates.named_cells.check_xml_parts`), the
workbook-level parts read by :func:`~workbook_templates.named_cells.open_book`; of the
worksheets only the "Baseline data" sheet is scanned, row by row
(:class:`~workbook_templates.named_cells.Rows`: each row bounded as it is built, at most
:data:`~workbook_templates.baseline.MAX_BASELINE_ROWS` rows and
:data:`MAX_BASELINE_COLUMNS` columns). A formula, an error value or a cell past the tables is
refused. Every refusal is one :class:`~workbook_templates.baseline.BaselineError` line naming
the file, and the sheet, row and column when known.
"""

from __future__ import annotations

import datetime as _dt
import os
import stat
import warnings

import defusedxml

from .baseline import MAX_BASELINE_ROWS, BaselineError, BaselineTable, baseline_of
from .named_cells import Rows, check_xml_parts, open_book, strings_in_part
from .xlsx_safety import (
    SHEET_ROWS,
    PlannerError,
    Tally,
    check_defusedxml,
    check_part,
    check_zip,
    is_worksheet,
    read_bytes,
    xml_parts,
)

__all__ = ["MAX_BASELINE_WORKBOOK_BYTES", "MAX_BASELINE_COLUMNS", "BASELINE_DATA_SHEET",
           "read_baseline_workbook"]  # fmt: skip

#: Largest baseline workbook, in bytes. Its parts are held to the planner reader's bounds
#: (an unpacked part of at most 32 MiB, 1,000,000 XML elements): a hand-off of a few hundred
#: runs; a larger one is given as its CSV folder.
MAX_BASELINE_WORKBOOK_BYTES = 64 * 1024 * 1024
#: Most columns of the Baseline data sheet read (its widest table, baseline_runs, has 31).
MAX_BASELINE_COLUMNS = 64
#: The very hidden sheet of a hand-off workbook that a baseline reads.
BASELINE_DATA_SHEET = "Baseline data"
#: The two tables of the sheet, in order, with the columns each must have.
_TABLES = (("baseline_runs", ("run_code", "scenario", "budget_status")),
           ("baseline_p50", ("run_code", "month", "p50_usd")))  # fmt: skip
_REDO = "give its CSV folder (report --csv DIR), or re-run that report to write it again"


def read_baseline_workbook(path):
    """The :class:`~workbook_templates.baseline.Baseline` of a hand-off workbook;
    :class:`~workbook_templates.baseline.BaselineError` (one line) otherwise."""
    try:
        st = os.stat(path)
    except OSError:
        raise BaselineError(f"{path}: no such file (give the workbook or the CSV folder of a "
                            "hand-off)") from None  # fmt: skip
    if stat.S_ISREG(st.st_mode) and st.st_size > MAX_BASELINE_WORKBOOK_BYTES:
        raise BaselineError(f"{path}: {st.st_size:,} bytes, over the limit of "
                            f"{MAX_BASELINE_WORKBOOK_BYTES:,} for a baseline workbook; give its "
                            "CSV folder (report --csv DIR)")  # fmt: skip
    check_defusedxml()
    try:
        data = read_bytes(path, MAX_BASELINE_WORKBOOK_BYTES)
        with check_zip(path, data) as zf:
            tables = _read_package(path, zf, data)
    except _RefusedError as exc:
        raise BaselineError(str(exc)) from None
    except PlannerError as exc:
        raise BaselineError(" ".join(exc.describe().split())) from None
    except defusedxml.DefusedXmlException as exc:
        name = type(exc).__name__
        raise BaselineError(f"{path}: contains unsafe XML ({name}); refused") from None
    return baseline_of(path, tables["baseline_p50"], tables["baseline_runs"])


def _read_package(path, zf, data):
    tally = Tally()
    parts = list(xml_parts(zf))
    styles, strings = check_xml_parts(
        path, zf, [p for p in parts if not is_worksheet(p[0].filename)], tally
    )
    book = open_book(path, data, styles, strings, strings_in_part(path, zf, tally), tally.parts)
    if BASELINE_DATA_SHEET not in book.parts:
        if {"Summary", "Budget", "Runs"} <= set(book.sheetnames):
            raise BaselineError(f"{path}: a hand-off workbook without the {BASELINE_DATA_SHEET!r} "
                                f"sheet (made by an earlier version of compute-lab report): "
                                f"{_REDO}")  # fmt: skip
        raise BaselineError(f"{path}: not a hand-off workbook (no {BASELINE_DATA_SHEET!r} "
                            "sheet; a planner is not a baseline): give the workbook or the CSV "
                            "folder of an earlier compute-lab report")  # fmt: skip
    sheet = _SheetTables(book, path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_part(path, zf, zf.getinfo(book.parts[BASELINE_DATA_SHEET]), True, sheet, tally)
    return sheet.finish()


class _RefusedError(PlannerError):
    """A :class:`BaselineError` raised inside the sheet's scan, carried out of it as is."""

    def __init__(self, message):
        Exception.__init__(self, message)
        self.path, self.problems = None, []

    def describe(self):
        return str(self)


class _SheetTables(Rows):
    """The tables of the Baseline data sheet, read row by row during its bounded scan: the
    first row and each row after an empty one is a table's header; every cell text."""

    def __init__(self, book, path):
        super().__init__(book, (1, SHEET_ROWS, 1, MAX_BASELINE_COLUMNS), BASELINE_DATA_SHEET)
        self.path = path
        self.tables, self.previous, self.blank = [], 0, True

    def _where(self, table):
        return f"{self.path}: sheet {BASELINE_DATA_SHEET!r}, table {table}"

    def take(self, row):
        try:
            self._take(row)
        except BaselineError as exc:  # through the scan's handlers, which wrap any other
            raise _RefusedError(str(exc)) from None

    def _take(self, row):
        p = self.parser
        p.data_only = False
        idx, cells = p.parse_row(row)
        cells = [c for c in cells if c["value"] not in (None, "") or c["data_type"] == "f"]
        wide = next((c for c in cells if c["column"] > MAX_BASELINE_COLUMNS), None)
        if wide is not None:
            raise BaselineError(f"{self.path}: sheet {BASELINE_DATA_SHEET!r}: row {idx}, column "
                                f"{_letter(wide['column'])}: past the {MAX_BASELINE_COLUMNS} "
                                "columns a baseline table has at most")  # fmt: skip
        new = idx != self.previous + 1 or self.blank  # after an empty row: a header
        self.previous, self.blank = idx, not cells
        if not cells:
            return
        if new or not self.tables:
            self._header(idx, cells)
            return
        name, table = self.tables[-1]
        if len(table.rows) >= MAX_BASELINE_ROWS:
            raise BaselineError(f"{table.path}: row {idx}: over {MAX_BASELINE_ROWS:,} rows, the "
                                "limit for a baseline table")  # fmt: skip
        fields = {}
        for cell in cells:
            column = cell["column"]
            if column > len(table.header):
                raise BaselineError(f"{table.where(idx, _letter(column))}: a cell past the "
                                    f"table's {len(table.header)} columns")  # fmt: skip
            fields[table.header[column - 1]] = _text(table, idx, cell)
        table.rows.append((idx, {h: fields.get(h, "") for h in table.header}))

    def _header(self, idx, cells):
        if len(self.tables) == len(_TABLES):
            raise BaselineError(f"{self._where(_TABLES[-1][0])}: row {idx}: a third table; the "
                                f"{BASELINE_DATA_SHEET!r} sheet holds two")  # fmt: skip
        name, needed = _TABLES[len(self.tables)]
        where = BaselineTable(self._where(name), [], [], name)
        header = [""] * max(c["column"] for c in cells)
        for cell in cells:
            header[cell["column"] - 1] = _text(where, idx, cell)
        missing = [c for c in needed if c not in header]
        if missing or "" in header or len(set(header)) != len(header):
            raise BaselineError(f"{where.path}: row {idx}: the header is not the {name} table's "
                                f"(needs {', '.join(needed)}, each column named once)")  # fmt: skip
        where.header = header
        self.tables.append((name, where))

    def finish(self):
        found = dict(self.tables)
        for name, _ in _TABLES:
            if name not in found:
                raise BaselineError(f"{self._where(name)}: missing; the sheet is not as "
                                    f"compute-lab report writes it: {_REDO}")  # fmt: skip
        return found


def _letter(column):
    from openpyxl.utils import get_column_letter

    return get_column_letter(column)


def _text(table, idx, cell):
    """A cell's text: a string as it is; a number as the CSV files write one; a formula or an
    error value refused."""
    value, kind = cell["value"], cell["data_type"]
    where = table.where(idx, table.header[cell["column"] - 1] if cell["column"] <= len(
        table.header) and table.header else _letter(cell["column"]))  # fmt: skip
    if kind == "f":
        raise BaselineError(f"{where}: holds a formula; the {BASELINE_DATA_SHEET!r} sheet holds "
                            "values only")  # fmt: skip
    if kind == "e" or isinstance(value, bool):
        raise BaselineError(f"{where}: holds {value!r}, not text or a number")
    if isinstance(value, _dt.datetime | _dt.date):
        return value.date().isoformat() if isinstance(value, _dt.datetime) else value.isoformat()
    if isinstance(value, int | float):
        return f"{value:.15g}"
    return str(value)
