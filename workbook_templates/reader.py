"""Read filled training-run planners back, safely, through their defined names.

A filled ``training-run-planner.xlsx`` comes from outside (a team fills a copy and sends it
on), so it is treated as untrusted input:

1. the file must be a regular file no larger than a size limit, checked before anything is
   parsed; it is read once into memory and never opened for writing;
2. it must be a valid zip (every member passes its CRC check, no two entries share a name)
   whose declared uncompressed size stays under a limit, in total and for each part, checked
   before anything is decompressed (zip bombs), with ``[Content_Types].xml`` and
   ``xl/workbook.xml``; an OLE file is an encrypted (password-protected) workbook or an Excel
   97-2003 one, and is named as such;
3. macro-enabled workbooks are refused: ``.xlsm``/``.xltm``/``.xlam`` names, a
   ``vbaProject.bin`` member, or a macro content type (VBA project, Excel 4.0 macro sheets);
4. every XML part, whatever its name, is parsed once, by a bounded scan (:class:`_Scan`):
   expat with defusedxml's refusals (document type declarations, entities, external
   references), so an entity-expansion bomb ("billion laughs") or external entity is refused
   before openpyxl sees the file; no tree is kept, a part past :data:`MAX_PART_ELEMENTS`
   elements or :data:`MAX_XML_DEPTH` levels is refused, so memory stays flat; a text
   (``<t>``) over Excel's cell limit, :data:`MAX_CELL_TEXT_CHARS`, is refused too; all parts
   together hold at most :data:`MAX_PACKAGE_ELEMENTS` elements and
   :data:`MAX_DEFINED_NAMES` defined names (:mod:`workbook_templates.xlsx_safety`). The same
   pass reads the stylesheet's date formats (a malformed one refused naming the part), the
   shared strings (as Excel shows them: rich-text runs read, phonetic runs left out) and, on
   the worksheets that hold named cells, the rows of those cells (:class:`_Rows`: only the
   rows of ``<sheetData>``, each at most :data:`MAX_ROW_CELLS` cells and
   :data:`MAX_ROW_ELEMENTS` elements, read by openpyxl's cell parser with the saved values
   in the spreadsheet grammar, :class:`_CellParser`, for what was typed and for the value
   last saved); the worksheets are scanned last, once the workbook says which cells are
   wanted, and two sheet entries on one part are refused. A part that is sure to be within
   every bound (at most :data:`QUICK_PART_BYTES` and :data:`QUICK_PART_TAGS` ``<``, plain
   UTF-8 without ``<!DOCTYPE``) is parsed by the C parser into a small tree instead, its
   depth and texts measured on it; one that breaks a bound there, or anything else, goes
   through the streaming pass, whose outcome and message it always is (:func:`_scan_part`);
5. openpyxl's readers read the small workbook-level parts (manifest, ``workbook.xml`` with
   the defined names and its relationships, core document properties: :func:`_read_book`),
   each at most :data:`MAX_BOOK_PART_ELEMENTS` elements, through ``defusedxml``
   (:func:`check_defusedxml`); openpyxl never loads a worksheet, and the custom document
   properties are not read;
6. before any cell is read, the defined names' references are bounded: one name spans at most
   :data:`MAX_SCENARIO_COLUMNS` cells, all of them together at most :data:`MAX_CELLS_READ`
   (the box the reader walks), and a caller may bound the scenario columns left in a run
   (``columns_left``, :class:`ColumnBudgetError`). Text inputs are at most
   :data:`MAX_TEXT_CHARS` characters without control characters; dates lie from
   :data:`FIRST_DATE` to :data:`LAST_DATE`.

The planner's contract is in :mod:`udfs.quantities`: one workbook-scoped defined name per
input and output, named as the quantity, each spanning one row across the scenario columns.
:func:`read_planner` returns a :class:`Planner` with one :class:`Scenario` per column that has
inputs (any required input filled), each input's value checked for its kind (number, text,
date) and located by sheet and cell, and the cached output values when the file carries
them. It does not compute anything: :mod:`workbook_templates.report` runs the engine.
An older planner without the rows in :data:`OPTIONAL_INPUTS` (budget status, owner,
uncertainties, run code) reads with those inputs blank; ``Planner.missing_optional`` names them.

Every problem is a :class:`Problem` (sheet, cell, message) gathered in a
:class:`PlannerError` that names the file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import itertools
import math
import operator
import os
import re
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree
from xml.parsers import expat

import defusedxml
import defusedxml.ElementTree as DefusedET
import openpyxl
import openpyxl.xml.functions
from openpyxl.utils.cell import column_index_from_string, range_boundaries
from openpyxl.utils.datetime import from_excel, from_ISO8601
from openpyxl.worksheet._reader import (
    CELL_TAG,
    FORMULA_TAG,
    INLINE_STRING,
    VALUE_TAG,
    WorkSheetParser,
)
from openpyxl.xml.constants import SHEET_MAIN_NS

from udfs.numbers import SIZE_INPUTS, NumberTextError, parse_size
from udfs.plan import REQUIRED
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS
from udfs.validation import MAX_TEXT_CHARS, control_character, is_blank

from . import xlsx_safety
from .run_codes import RUN_CODE_RULE, valid_run_code
from .xlsx_safety import (
    MAX_BOOK_PART_ELEMENTS,
    MAX_DEFINED_NAMES,
    MAX_PACKAGE_ELEMENTS,
    MAX_ROW_CELLS,
    MAX_ROW_ELEMENTS,
    SHEET_ROWS,
    CellError,
    PartError,
    StringText,
    Tally,
    own_text,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_UNCOMPRESSED_BYTES",
    "MAX_PART_BYTES",
    "MAX_PART_ELEMENTS",
    "MAX_XML_DEPTH",
    "MAX_PARTS",
    "MAX_SCENARIO_COLUMNS",
    "MAX_CELLS_READ",
    "MAX_TEXT_CHARS",
    "MAX_CELL_TEXT_CHARS",
    "MAX_XML_RUN_BYTES",
    "MAX_PACKAGE_ELEMENTS",
    "MAX_DEFINED_NAMES",
    "MAX_BOOK_PART_ELEMENTS",
    "MAX_ROW_CELLS",
    "MAX_ROW_ELEMENTS",
    "ColumnBudgetError",
    "Problem",
    "PlannerError",
    "CellRef",
    "Scenario",
    "Planner",
    "check_defusedxml",
    "read_planner",
]

#: Largest planner file accepted, in bytes (a filled planner is a few tens of kB).
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
#: Largest total uncompressed size of the zip's members, in bytes.
MAX_UNCOMPRESSED_BYTES = 200 * 1024 * 1024
#: Largest uncompressed size of one member (part) of the zip, in bytes. A planner's largest
#: part is about 40 kB.
MAX_PART_BYTES = 32 * 1024 * 1024
#: Most XML elements in one part. A planner's largest part holds about 2,000.
MAX_PART_ELEMENTS = 1_000_000
#: Deepest nesting of XML elements (a chart, the deepest part of a workbook, is about 15).
MAX_XML_DEPTH = 256
#: Most members (parts) in the package. A planner has about 30.
MAX_PARTS = 10_000
#: Most scenario columns in one planner (cells one defined name spans). The planner has 8; a
#: team that widens its copy has room for twelve times as many. Checked from the defined
#: names' references before any cell is read (a planner of 10,000 columns took 118 s and
#: 1.1 GB to consolidate).
MAX_SCENARIO_COLUMNS = 100
#: Most cells read from one planner: the area, sheet by sheet, from the first named cell to
#: the last (the reader walks that box, twice). A planner's is about 300 cells; one widened
#: to :data:`MAX_SCENARIO_COLUMNS` columns about 3,500. Checked from the defined names'
#: references before any cell is read (names spread from row 1 to row 1,048,576 made the
#: reader walk millions of empty cells: 43 s at row 20,000).
MAX_CELLS_READ = 20_000
#: Longest text in any ``<t>`` element of a part (a shared or inline string): Excel's own
#: limit for one cell. No spreadsheet saves a longer one; a crafted file of 30 million
#: characters is refused while its part is scanned, before openpyxl holds it twice.
MAX_CELL_TEXT_CHARS = 32_767
#: Longest run of bytes in an XML part without a ``<`` or ``>``: one attribute, comment,
#: text or processing instruction. The parser (expat 2.5) rescans an unfinished token from
#: its start on every 16 kB it is fed, so one token of 30 million bytes (a 97 kB file) took
#: 110 s; the longest legitimate run, a cell text of 32,767 characters written as numeric
#: character references, is about 330 kB. Checked on the raw bytes before the parser sees them.
MAX_XML_RUN_BYTES = 1024 * 1024
#: The dates a start date may hold: those a spreadsheet shows as a date (serials 1 to
#: 2,958,465); before 1900 Excel shows ``####``.
FIRST_DATE = _dt.date(1900, 1, 1)
LAST_DATE = _dt.date(9999, 12, 31)
DATE_RANGE = f"from {FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}"

_MACRO_SUFFIXES = {".xlsm", ".xltm", ".xlam"}
_OTHER_SUFFIXES = {
    ".xls": "an Excel 97-2003 (.xls) workbook; save it as .xlsx",
    ".xlsb": "an Excel binary (.xlsb) workbook; save it as .xlsx",
    ".ods": "an OpenDocument spreadsheet; save it as .xlsx",
    ".csv": "a CSV file, not a planner workbook",
}
_MACRO_CONTENT_TYPES = (
    "macroenabled",  # application/vnd.ms-excel.sheet.macroEnabled.main+xml and friends
    "vbaproject",  # application/vnd.ms-office.vbaProject
    "macrosheet",  # Excel 4.0 macro sheets
    "ms-excel.intlmacrosheet",
)
#: An OLE compound file: Excel 97-2003, or an encrypted (password-protected) .xlsx, whose
#: package is the ``EncryptedPackage`` stream (the name is stored in UTF-16).
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ENCRYPTED_STREAM = "EncryptedPackage".encode("utf-16-le")
_UNSAVED = object()  # an input formula without a saved value
_CT_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"

INPUT_NAMES = tuple(q.name for q in PLAN_INPUTS)
OUTPUT_NAMES = tuple(q.name for q in PLAN_OUTPUTS)
_KIND = {q.name: q.kind for q in PLAN_INPUTS}
_LABEL = {q.name: q.label for q in PLAN_INPUTS + PLAN_OUTPUTS}
#: Inputs that count whole things.
_WHOLE = ("accelerators",)
#: Inputs an older planner may lack (added with the budget view and the ranges): their cells
#: read as blank, and ``Planner.missing_optional`` names them.
OPTIONAL_INPUTS = ("budget_status", "owner", "throughput_range_pct", "price_range_pct",
                   "approval_ref", "approval_date", "pricing_basis", "other_costs_usd",
                   "approver", "approved_amount_usd", "cost_centre", "gl_account",
                   "run_code")  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Errors and records
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where (sheet and cell, when known) and what."""

    message: str
    sheet: str | None = None
    cell: str | None = None

    @property
    def where(self):
        if self.sheet and self.cell:
            return f"{_quote_sheet(self.sheet)}!{self.cell}"
        return self.sheet or ""


class PlannerError(Exception):
    """A file that cannot be consolidated; ``problems`` says where and why.

    ``str(err)`` is one line per problem: ``FILE: Sheet!C7: message``.
    """

    def __init__(self, path, problems):
        self.path = Path(path)
        self.problems = list(problems)
        super().__init__(self.describe())

    def __reduce__(self):  # sent back from a reading process (report's --jobs)
        return (type(self), (self.path, self.problems), self.__dict__)

    def describe(self):
        lines = []
        for p in self.problems:
            where = f"{p.where}: " if p.where else ""
            message = " ".join(str(p.message).splitlines())  # one line per problem, always
            lines.append(f"{self.path}: {where}{message}")
        return "\n".join(lines)


class ColumnBudgetError(PlannerError):
    """A file whose scenario columns would take a run over its total (``columns_left``);
    ``width`` is its number of scenario columns."""

    width = 0


def _flat(exc, limit=200):
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(exc, limit=200):
    """``Type: message`` of an exception on one line: its first line, with the first line of
    the error that caused it (openpyxl wraps the real one in a paragraph of advice)."""

    def first(e):
        text = " ".join(str(e).split("\n", 1)[0].split())
        return f"{type(e).__name__}: {text}" if text else type(e).__name__

    shown = first(exc)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        shown += f" ({first(cause)})"
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _fail(path, message, sheet=None, cell=None):
    raise PlannerError(path, [Problem(message, sheet, cell)])


@dataclass(frozen=True)
class CellRef:
    sheet: str
    cell: str

    def __str__(self):
        return f"{_quote_sheet(self.sheet)}!{self.cell}"


def _quote_sheet(title):
    plain = title.replace("_", "").replace(".", "").isalnum() and not title[:1].isdigit()
    return title if plain else "'" + title.replace("'", "''") + "'"


@dataclass
class Scenario:
    """One scenario column of a planner that has inputs.

    ``inputs`` maps every input name to its value as typed (None when blank; dates as
    ``datetime.date``); ``cells`` maps input and output names to their :class:`CellRef`;
    ``cached`` maps output names to the value a spreadsheet last saved there (None when the
    cell holds no saved value); ``formulas`` maps output names to whether the cell holds a
    formula (False means somebody typed a value over it).
    """

    path: Path
    index: int  # 1-based position among the scenario columns
    column: str  # the column letter of the scenario_name cell
    name: str
    inputs: dict
    cells: dict
    cached: dict = field(default_factory=dict)
    formulas: dict = field(default_factory=dict)

    def cell_of(self, argument):
        """The CellRef of an input or output name, or None."""
        return self.cells.get(argument)

    def problem(self, name, message):
        """A Problem located at ``name``'s cell (or at the scenario column)."""
        ref = self.cells.get(name)
        if ref is None:
            ref = self.cells["scenario_name"]
            return Problem(f"scenario {self.name!r}: {message}", ref.sheet, f"column {self.column}")
        return Problem(message, ref.sheet, ref.cell)


@dataclass
class Planner:
    """A planner read back: its scenarios with inputs and what else was found."""

    path: Path
    template_version: object
    active_scenario: object
    scenarios: list
    skipped_columns: list  # (column letter, scenario name or "") of columns without inputs
    has_cached_values: bool
    size_bytes: int
    sha256: str  # of the bytes read, for the audit trail
    problems: list = field(default_factory=list)  # bad cells, with collect=True
    missing_optional: list = field(default_factory=list)  # OPTIONAL_INPUTS without a name
    width: int = 0  # scenario columns (cells scenario_name spans)
    own_runs: object = None  # udfs.own_runs.OwnRuns of the "Our runs" sheet, or None


# ---------------------------------------------------------------------------------------------
# Safe opening
# ---------------------------------------------------------------------------------------------


def check_defusedxml():
    """Raise RuntimeError unless openpyxl parses XML through defusedxml.

    openpyxl uses ``defusedxml`` when it is installed and ``OPENPYXL_DEFUSEDXML`` is not
    ``False``; a filled planner must never be parsed without it.
    """
    if not openpyxl.DEFUSEDXML or not openpyxl.xml.functions.iterparse.__module__.startswith(
        "defusedxml"
    ):
        raise RuntimeError(
            "openpyxl is not using defusedxml (is it installed, and OPENPYXL_DEFUSEDXML "
            "unset?): refusing to parse untrusted workbooks"
        )


def _read_bytes(path, max_bytes):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        _fail(path, "no such file")
    except OSError as exc:
        _fail(path, f"cannot be read: {exc.strerror or exc}")
    if not stat.S_ISREG(st.st_mode):
        _fail(path, "is not a regular file")
    if st.st_size > max_bytes:
        _fail(
            path,
            f"is {st.st_size:,} bytes, over the size limit of {max_bytes:,} bytes "
            "(raise it with --max-size-mb if the file is genuine)",
        )
    suffix = Path(path).suffix.lower()
    if suffix in _MACRO_SUFFIXES:
        _fail(path, f"is a macro-enabled workbook ({suffix}); save it as a plain .xlsx")
    if suffix in _OTHER_SUFFIXES:
        _fail(path, f"is {_OTHER_SUFFIXES[suffix]}")
    try:  # read-only, never waiting on a writer: a path made a FIFO since its stat is refused
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                _fail(path, "is not a regular file")
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        _fail(path, f"cannot be read: {exc.strerror or exc}")
    if len(data) > max_bytes:  # grew after stat
        _fail(path, f"is over the size limit of {max_bytes:,} bytes")
    return data


def _check_zip(path, data):
    """Validate the package; return the open ZipFile."""
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            _fail(
                path,
                "is encrypted (password-protected): save an unprotected copy (remove the "
                "password to open) and give that",
            )
        _fail(path, "is an Excel 97-2003 (.xls) or other OLE file, not an .xlsx; save it as .xlsx")
    if not data.startswith(b"PK"):
        _fail(path, "is not an .xlsx workbook (not a zip file)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        _fail(
            path, f"is not a valid .xlsx workbook: the zip is corrupt or truncated ({_flat(exc)})"
        )
    except Exception as exc:  # noqa: BLE001 - any failure here means an unreadable zip
        _fail(path, f"is not a valid .xlsx workbook ({_one_line(exc)})")
    try:
        _check_members(path, zf)
    except BaseException:
        zf.close()  # closed here, not by a finaliser
        raise
    return zf


def _check_members(path, zf):
    infos = zf.infolist()
    if len(infos) > MAX_PARTS:
        _fail(
            path,
            f"holds {len(infos):,} parts, over the limit of {MAX_PARTS:,} (a planner has about "
            "30); refused",
        )
    names = {i.filename for i in infos}
    repeated = xlsx_safety.duplicate_entry(i.filename for i in infos)
    if repeated is not None:
        _fail(
            path,
            f"holds two zip entries named {repeated!r} (names compared ignoring case, as "
            "Excel compares part names): readers disagree on which is the part; refused",
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_UNCOMPRESSED_BYTES:
        _fail(
            path,
            f"unpacks to {total:,} bytes, over the limit of {MAX_UNCOMPRESSED_BYTES:,} "
            "(a zip bomb or not a planner)",
        )
    for info in infos:  # before anything is decompressed
        if info.file_size > MAX_PART_BYTES:
            _part_problem(
                path,
                info.filename,
                f"expands to {info.file_size:,} bytes, over the limit of {MAX_PART_BYTES:,} "
                "for one part (a zip or XML bomb, or not a planner)",
            )
    for info in infos:
        if info.filename.rsplit("/", 1)[-1].lower() == "vbaproject.bin":
            _fail(path, f"is a macro-enabled workbook (it contains {info.filename}); refused")
    if "[Content_Types].xml" not in names or "xl/workbook.xml" not in names:
        _fail(path, "is not an Excel workbook (no xl/workbook.xml in the package)")
    try:
        bad = zf.testzip()
    except Exception as exc:  # noqa: BLE001 - zlib errors, truncated members...
        _fail(path, f"is a corrupt or truncated .xlsx ({_one_line(exc)})")
    if bad is not None:
        _fail(path, f"is a corrupt .xlsx: member {bad} fails its CRC check")


def _looks_like_xml(zf, info):
    """True when a part's first bytes are XML (a UTF-8/16 byte-order mark, then ``<``)."""
    try:
        with zf.open(info) as fh:
            head = fh.read(64)
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError):
        return True  # let the parse below say what is wrong
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True
    return head.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<")


def _part_problem(path, name, message):
    _fail(path, f"part {name}: {message}; refused")


class _RunBound:
    """A part's stream that refuses a run of :data:`MAX_XML_RUN_BYTES` without ``<``/``>``."""

    def __init__(self, fh, on_long_run):
        self._fh = fh
        self._run = 0
        self._on_long_run = on_long_run

    def read(self, size=-1):
        chunk = self._fh.read(size)
        first = min((i for i in (chunk.find(b"<"), chunk.find(b">")) if i >= 0), default=-1)
        if first < 0:
            self._run += len(chunk)
        else:
            self._run += first
            if self._run <= MAX_XML_RUN_BYTES:
                self._run = len(chunk) - 1 - max(chunk.rfind(b"<"), chunk.rfind(b">"))
        if self._run > MAX_XML_RUN_BYTES:
            self._on_long_run()
        return chunk


#: Bytes fed to the parser at a time (as ElementTree's iterparse feeds it): the run bound
#: above sees every run of a chunk whole, so a run is never missed between two chunks.
_CHUNK = 16 * 1024
_OVERRIDE = _CT_NS[1:] + "Override"  # expat's spelling: namespace "}" local name
_DEFAULT = _CT_NS[1:] + "Default"
_ROW = f"{SHEET_MAIN_NS}}}row"
_FORMULA = f"{SHEET_MAIN_NS}}}f"
_ROW_ET = "{" + _ROW
_FORMULA_ET = "{" + _FORMULA


def _et_name(name):
    """expat's ``namespace}local`` as ElementTree spells it, ``{namespace}local``."""
    return "{" + name if "}" in name else name


class _Scan:
    """One bounded pass over one XML part: expat, the parser defusedxml wraps, with
    defusedxml's refusals (document type declarations, entities, external references).

    Elements are counted and their depth bounded as they open; no tree is kept (memory stays
    flat whatever the part holds). A ``<t>``'s text is measured as it arrives. With ``rows``
    (a :class:`_Rows`), the rows of a worksheet that hold named cells are read in the same
    pass. Elements and defined names are counted into the package's ``tally``
    (:class:`~workbook_templates.xlsx_safety.Tally`) as they open.
    """

    def __init__(self, path, name, rows=None, tally=None):
        self.path, self.name, self.rows = path, name, rows  # rows: any reader of the part
        self.tally = tally if tally is not None else Tally()
        self.count = self.depth = 0
        self.ctypes = []
        self.texts = []  # [length, child seen] of each open <t>, innermost last
        p = expat.ParserCreate(namespace_separator="}")
        p.StartDoctypeDeclHandler = self._doctype
        p.EntityDeclHandler = self._entity
        p.UnparsedEntityDeclHandler = self._entity
        p.ExternalEntityRefHandler = self._external
        p.DefaultHandlerExpand = self._default
        p.StartElementHandler = self._start
        p.EndElementHandler = self._end
        p.CharacterDataHandler = self._data
        p.buffer_text = True
        self.parser = p

    def _doctype(self, name, sysid, pubid, has_internal_subset):
        raise defusedxml.DTDForbidden(name, sysid, pubid)

    def _entity(self, name, *args):
        raise defusedxml.EntitiesForbidden(name, None, None, None, None, None)

    def _external(self, context, base, sysid, pubid):
        raise defusedxml.ExternalReferenceForbidden(context, base, sysid, pubid)

    def _default(self, text):  # as ElementTree's parser: an undefined entity is an error
        if text[:1] == "&":
            p = self.parser
            err = expat.error(
                f"undefined entity {text}: line {p.ErrorLineNumber}, column {p.ErrorColumnNumber}"
            )
            err.code, err.lineno, err.offset = 11, p.ErrorLineNumber, p.ErrorColumnNumber
            raise err

    def _start(self, tag, attrs):
        self.count += 1
        tally = self.tally
        tally.elements += 1
        if tag[-11:] == "definedName" and xlsx_safety.is_defined_name(tag):
            tally.names += 1
        if tally.elements > MAX_PACKAGE_ELEMENTS or tally.names > MAX_DEFINED_NAMES:
            tally.add(0)  # refuses this part, naming the bound
        if self.count > MAX_PART_ELEMENTS:
            self._problem(
                f"holds over {MAX_PART_ELEMENTS:,} XML elements, over the limit for one part "
                "(an XML bomb or not a planner)"
            )
        if self.depth >= MAX_XML_DEPTH:
            self._problem(
                f"nests XML elements over {MAX_XML_DEPTH} deep, over the limit (an XML bomb "
                "or not a planner)"
            )
        self.depth += 1
        if tag == _OVERRIDE or tag == _DEFAULT:
            self.ctypes.append(attrs.get("ContentType", "").lower())
        if self.texts:
            self.texts[-1][1] = True
        if tag.endswith("}t"):
            self.texts.append([0, False])
        if self.rows is not None:
            self.rows.start(tag, attrs, self.depth)

    def _data(self, text):
        if self.texts and not self.texts[-1][1]:
            self.texts[-1][0] += len(text)
        if self.rows is not None:
            self.rows.data(text)

    def _end(self, tag):
        if tag.endswith("}t"):
            length = self.texts.pop()[0]
            if length > MAX_CELL_TEXT_CHARS:
                self._problem(
                    f"holds a text of {length:,} characters, over Excel's limit of "
                    f"{MAX_CELL_TEXT_CHARS:,} for one cell (no spreadsheet saves one)"
                )
        if self.rows is not None:
            self.rows.end(tag, self.depth)
        self.depth -= 1

    def _problem(self, message):
        _part_problem(self.path, self.name, message)

    def run(self, zf, info):
        def long_run():
            self._problem(
                f"holds over {MAX_XML_RUN_BYTES:,} bytes without an XML tag (a text, attribute "
                "or comment far longer than any spreadsheet writes)"
            )

        with zf.open(info) as raw:
            fh = _RunBound(raw, long_run)
            while chunk := fh.read(_CHUNK):
                self.parser.Parse(chunk, False)
            self.parser.Parse(b"", True)
        self.tally.parts[info.filename] = self.count
        return self.ctypes


def _local(tag):
    return tag.rsplit("}", 1)[-1]


class _Styles:
    """The styles that show a number as a date or a time span, read during the scan of
    ``xl/styles.xml`` as openpyxl's stylesheet reads them (``Stylesheet._normalise_numbers``):
    the cell formats (``cellXfs``) whose number format is a date (or a time span). A number
    format without a whole-number ``numFmtId`` or without a ``formatCode``, and a cell format
    whose ``numFmtId`` is not a whole number, are refused (:class:`PartError`); a cell
    format naming a format the part does not define is not a date, as openpyxl reads it."""

    def __init__(self):
        self.custom = {}  # {numFmtId: formatCode}
        self.ids = []  # numFmtId of each cell format, in order
        self.where = []

    def reset(self):
        self.__init__()

    def tree(self, root):
        """Read the part's tree (the quick path of :func:`_scan_part`), as :meth:`start`
        reads its elements: the children of ``numFmts`` and ``cellXfs`` under the root."""
        for group in root:
            local = _local(group.tag)
            for child in group if local in ("numFmts", "cellXfs") else ():
                if local == "numFmts" and _local(child.tag) == "numFmt":
                    self._custom(child.attrib)
                elif local == "cellXfs" and _local(child.tag) == "xf":
                    self._cell_format(child.attrib)
        return True

    def _custom(self, attrs):
        fmt_id = _format_id(attrs.get("numFmtId"), "a number format (numFmt)")
        code = attrs.get("formatCode")
        if code is None:
            raise PartError(f"number format {fmt_id} has no formatCode")
        self.custom[fmt_id] = code

    def _cell_format(self, attrs):
        what = f"cell format {len(self.ids)} (xf of cellXfs)"
        self.ids.append(_format_id(attrs.get("numFmtId", "0"), what))

    def start(self, tag, attrs, depth):
        local = _local(tag)
        self.where[depth - 1 :] = [local]
        if depth == 3 and local == "numFmt" and self.where[1] == "numFmts":
            self._custom(attrs)
        elif depth == 3 and local == "xf" and self.where[1] == "cellXfs":
            self._cell_format(attrs)

    def data(self, text):
        pass

    def end(self, tag, depth):
        pass

    def formats(self):
        """(date formats, time-span formats): sets of cell format indexes."""
        from openpyxl.styles.numbers import (
            builtin_format_code,
            is_date_format,
            is_timedelta_format,
        )

        dates, spans, kinds = set(), set(), {}  # kinds: {numFmtId: (date, span)}, asked once
        for idx, fmt_id in enumerate(self.ids):
            kind = kinds.get(fmt_id)
            if kind is None:
                fmt = self.custom[fmt_id] if fmt_id in self.custom else builtin_format_code(fmt_id)
                kind = kinds[fmt_id] = (is_date_format(fmt), is_timedelta_format(fmt))
            if kind[0]:
                dates.add(idx)
            if kind[1]:
                spans.add(idx)
        return dates, spans


_WHOLE_NUMBER = re.compile(r"[0-9]{1,9}", re.ASCII)


def _format_id(text, what):
    """A ``numFmtId``: a whole number in ASCII digits, else :class:`PartError`."""
    if text is None or _WHOLE_NUMBER.fullmatch(text) is None:
        shown = "no numFmtId" if text is None else f"numFmtId {text[:20]!r}"
        raise PartError(f"{what} has {shown}, not a whole number")
    return int(text)


class _Builder:
    """Builds one element at a time during a scan (:class:`_Scan` hands it the events);
    :meth:`take` gets each element once its end tag is read."""

    builder = None
    depth = 0

    def reset(self):
        """Start again (the streaming pass after a quick one that gave up)."""
        self.__init__(*self.args)

    @staticmethod
    def outermost(root, tag):
        """The elements ``tag`` of ``root``'s tree in document order, as the streaming pass
        takes them; None when one holds another (built into it there: left to that pass)."""
        found = list(root.iter(tag))
        if any(len(list(node.iter(tag))) > 1 for node in found):
            return None
        return found

    def data(self, text):
        if self.builder is not None:
            self.builder.data(text)

    def end(self, tag, depth):
        if self.builder is None:
            return
        self.builder.end(_et_name(tag))
        if depth == self.depth:
            node, self.builder = self.builder.close(), None
            self.take(node)


class _Strings:
    """The shared strings, read during the scan of their part as Excel shows them
    (:class:`~workbook_templates.xlsx_safety.StringText`: each ``<si>`` child of the root,
    its ``<t>`` and its rich-text runs' ``<t>``, phonetic runs left out), without a tree;
    ``_x005F_`` escapes undone as openpyxl undoes them. A string over
    :data:`MAX_CELL_TEXT_CHARS` characters, runs together, is refused."""

    SI = "{" + SHEET_MAIN_NS + "}si"

    def __init__(self):
        self.text = StringText(MAX_CELL_TEXT_CHARS)

    def reset(self):
        self.__init__()

    @property
    def strings(self):
        return [text.replace("x005F_", "") for text in self.text.strings]

    def tree(self, root):
        """Read the part's tree (the quick path of :func:`_scan_part`): each ``<si>``."""
        for node in root:
            if node.tag == self.SI:
                text = own_text(node)
                if len(text) > MAX_CELL_TEXT_CHARS:  # the streaming pass refuses it
                    raise PartError("a shared string over the cell limit")
                self.text.strings.append(text)
        return True

    def start(self, tag, attrs, depth):
        self.text.start(tag, depth)

    def data(self, text):
        self.text.data(text)

    def end(self, tag, depth):
        self.text.end(tag, depth)


class _CellParser(WorkSheetParser):
    """openpyxl's worksheet parser, its rows' cells read as a spreadsheet reads them: only the
    ``<c>`` children of a row are cells; a saved value is read by the spreadsheet grammar
    (:func:`~workbook_templates.xlsx_safety.number`, ``boolean``, ``string_index``), not by
    Python's ``int()``; an inline string's text is its ``<t>`` and rich-text runs' ``<t>``
    (:func:`~workbook_templates.xlsx_safety.own_text`). A value outside the grammar is a
    :class:`CellError` naming the cell."""

    def parse_row(self, row):
        r = row.get("r")
        self.row_counter = _row_number(r) if r is not None else self.row_counter + 1
        self.col_counter = 0
        return self.row_counter, [self.parse_cell(el) for el in row if el.tag == CELL_TAG]

    def parse_cell(self, element):
        data_type = element.get("t", "n")
        coordinate = element.get("r")
        if coordinate:
            row, column = _cell_reference(coordinate)
            if row != self.row_counter:  # openpyxl's reading put it in the row it is in
                raise CellError(
                    _coordinate(row, column), f"is written in row {self.row_counter}, not its own"
                )
            self.col_counter = column
        else:
            self.col_counter += 1
            row, column = self.row_counter, self.col_counter
        cell = _coordinate(row, column)
        style_id = element.get("s", "0")
        if _WHOLE_NUMBER.fullmatch(style_id) is None:
            raise CellError(cell, f"has the style {style_id[:20]!r}, not a whole number")
        style_id = int(style_id)
        value = None if data_type == "inlineStr" else element.findtext(VALUE_TAG) or None
        if not self.data_only and element.find(FORMULA_TAG) is not None:
            data_type, value = "f", self.parse_formula(element)
        elif value is not None:
            value, data_type = self._saved(value, data_type, style_id, cell)
        elif data_type == "inlineStr":
            child = element.find(INLINE_STRING)
            if child is not None:
                data_type, value = "s", own_text(child)
                if len(value) > MAX_CELL_TEXT_CHARS:
                    raise CellError(
                        cell, f"holds a text over Excel's limit of {MAX_CELL_TEXT_CHARS:,}"
                    )
        return {"row": row, "column": column, "value": value, "data_type": data_type,
                "style_id": style_id}  # fmt: skip

    def _saved(self, value, data_type, style_id, cell):
        """(value, data type) of a saved ``<v>``, as openpyxl types it."""
        if data_type == "n":
            value = xlsx_safety.number(value, cell)
            if style_id in self.date_formats:
                spans = style_id in self.timedelta_formats
                try:
                    return from_excel(value, self.epoch, timedelta=spans), "d"
                except (OverflowError, ValueError):  # no date: refused by name when read
                    return "#VALUE!", "e"
        elif data_type == "s":
            strings = self.shared_strings
            value = strings[xlsx_safety.string_index(value, len(strings), cell)]
        elif data_type == "b":
            value = xlsx_safety.boolean(value, cell)
        elif data_type == "str":
            data_type = "s"
        elif data_type == "d":
            try:
                value = from_ISO8601(value)
            except (ValueError, TypeError, OverflowError):
                raise CellError(
                    cell, f"holds the saved date {value[:40]!r}, not an ISO 8601 date"
                ) from None
        return value, data_type


_ROW_NUMBER = re.compile(r"[0-9]{1,7}(?:\.0*)?", re.ASCII)
_CELL_REFERENCE = re.compile(r"\$?([A-Z]{1,3})\$?([0-9]{1,7})", re.ASCII)


def _row_number(text):
    """A row's ``r``: ASCII digits (``12.0`` too, as openpyxl's ``parse_row`` reads it), else
    :class:`PartError` (``int()`` would read Arabic-Indic digits)."""
    if _ROW_NUMBER.fullmatch(text) is None:
        raise PartError(f"a row numbered {text[:20]!r}, not a whole number in ASCII digits")
    return int(text.split(".")[0])


def _cell_reference(text):
    """(row, column) of a cell's ``r``: A1 style in ASCII, within a worksheet's columns and
    rows, else :class:`PartError` (openpyxl's reading takes any Unicode digit)."""
    found = _CELL_REFERENCE.fullmatch(text)
    column = column_index_from_string(found.group(1)) if found else 0
    row = int(found.group(2)) if found else 0
    if not (1 <= column <= MAX_ROW_CELLS and 1 <= row <= SHEET_ROWS):
        raise PartError(f"a cell reference {text[:20]!r}, not a cell of a worksheet")
    return row, column


_SHEET_DATA = f"{SHEET_MAIN_NS}}}sheetData"
_SHEET_DATA_ET = "{" + _SHEET_DATA
_CELL = CELL_TAG[1:]


class _Rows(_Builder):
    """The rows of one worksheet that hold named cells, read during its scan (:class:`_Scan`).

    Only the ``<row>`` children of the worksheet's one ``<sheetData>`` are rows (a row
    anywhere else, say in an extension list, is no cell a spreadsheet shows). Each row inside
    the box of the named cells is built as a small element tree, at most
    :data:`MAX_ROW_CELLS` cells and :data:`MAX_ROW_ELEMENTS` elements (checked as it is
    built), and given to openpyxl's worksheet parser (:class:`_CellParser`) twice, once for
    what was typed (formula text) and once for the values last saved: the same cells, types
    and dates as two read-only loads gave, from one parse. Rows are taken as openpyxl's
    read-only worksheet takes them (a row number already passed is skipped; reading stops
    past the last row of the box); rows above the box are only built when they hold a shared
    formula, whose text later cells refer to. ``sheet`` is the sheet's title, for a cell's
    refusal.
    """

    def __init__(self, book, box, sheet=None):
        self.args = (book, box, sheet)
        self.sheet = sheet
        self.min_row, self.max_row, self.min_col, self.max_col = box
        self.parser = _CellParser(
            None,
            book.shared_strings,
            epoch=book.epoch,
            date_formats=book.date_formats,
            timedelta_formats=book.timedelta_formats,
        )
        self.counter = self.min_row
        self.done = False
        self.builder = None
        self.depth = 0
        self.accept = self.shared = False
        self.in_data = False  # inside the worksheet's <sheetData>
        self.sheet_data = 0
        self.last = 0  # the number of the last row of <sheetData> seen
        self.elements = self.cells = 0  # of the row being built
        self.typed, self.saved = {}, {}  # {(row, col): value}, {(row, col): data type}

    def start(self, tag, attrs, depth):
        if self.builder is not None:
            self.elements += 1
            if depth == self.depth + 1 and tag == _CELL:
                self.cells += 1
            self._bound(self.elements, self.cells)
            if tag == _FORMULA and attrs.get("t") == "shared":
                self.shared = True
            self.builder.start(_et_name(tag), {_et_name(k): v for k, v in attrs.items()})
            return
        if depth == 2:
            self.in_data = tag == _SHEET_DATA
            self.sheet_data += self.in_data
            if self.sheet_data > 1:
                raise PartError("holds two sheetData elements (a worksheet has one)")
        if tag != _ROW or depth != 3 or not self.in_data:
            return
        self._in_order(attrs)
        if self.done:
            return
        idx = self._index(attrs)
        if idx > self.max_row:
            self.done = True
            return
        self.accept = idx >= self.counter
        self.counter = max(self.counter, idx + self.accept)
        self.shared, self.depth = False, depth
        self.elements, self.cells, self.row = 1, 0, idx
        self.builder = ElementTree.TreeBuilder()
        self.builder.start(_et_name(tag), {_et_name(k): v for k, v in attrs.items()})

    def _in_order(self, attrs):
        """Refuse a row that does not follow the last one (:class:`PartError`): a
        spreadsheet writes each row once, in order, and LibreOffice shows the last copy of a
        repeated row where openpyxl's reading takes the first. Every row of ``<sheetData>``
        is checked, past the box of the named cells too."""
        idx = _row_number(attrs["r"]) if "r" in attrs else self.last + 1
        if not 1 <= idx <= SHEET_ROWS:
            raise PartError(f"row number {idx} is outside a worksheet's rows, 1 to {SHEET_ROWS:,}")
        if idx <= self.last:
            raise PartError(
                f"row {idx} comes after row {self.last}: rows out of order or repeated (a "
                "spreadsheet writes each row once, in order)"
            )
        self.last = idx

    def _bound(self, elements, cells):
        if cells > MAX_ROW_CELLS:
            raise PartError(
                f"row {self.row} holds over {MAX_ROW_CELLS:,} cells, more than a worksheet "
                "has columns"
            )
        if elements > MAX_ROW_ELEMENTS:
            raise PartError(
                f"row {self.row} holds over {MAX_ROW_ELEMENTS:,} XML elements, over the limit "
                "for one row"
            )

    def tree(self, root):
        """Read the part's tree (the quick path of :func:`_scan_part`): the rows of its
        ``<sheetData>`` in document order, taken as :meth:`start` and :meth:`take` take
        them."""
        data = [node for node in root if node.tag == _SHEET_DATA_ET]
        if len(data) > 1:
            raise PartError("two sheetData")  # the streaming pass says it
        for row in data[0] if data else ():
            if row.tag != _ROW_ET:
                continue
            self._in_order(row.attrib)
            if self.done:
                continue
            idx = self._index(row.attrib)
            if idx > self.max_row:
                self.done = True
                continue
            self.row = idx
            self._bound(sum(1 for _ in row.iter()), sum(1 for c in row if c.tag == CELL_TAG))
            self.accept = idx >= self.counter
            self.counter = max(self.counter, idx + self.accept)
            self.shared = any(f.get("t") == "shared" for f in row.iter(_FORMULA_ET))
            self.take(row)
        return True

    def _index(self, attrs):
        """The row's number, as openpyxl's ``parse_row`` reads it."""
        if "r" not in attrs:
            return self.parser.row_counter + 1
        return _row_number(attrs["r"])

    def take(self, row):
        p = self.parser
        before = p.row_counter
        if not self.accept:
            if self.shared:  # a shared formula's first cell: later cells refer to its text
                p.data_only = False
                p.parse_row(row)
            p.row_counter = self._index(dict(row.attrib)) if "r" in row.attrib else before + 1
            return
        p.data_only = True
        idx, saved = p.parse_row(row)
        p.row_counter = before
        p.data_only = False
        _, typed = p.parse_row(row)
        for cells, out in ((saved, self.saved), (typed, self.typed)):
            for cell in cells:
                if self.min_col <= cell["column"] <= self.max_col:
                    out[(idx, cell["column"])] = cell


def _scan_part(path, zf, info, rows=None, tally=None):
    """Scan one XML part; the content types it declares. Its elements and defined names
    count into the package's ``tally``.

    A part small enough to be within every bound whatever it holds is parsed by the C
    parser into a tree (:func:`_quick_tree`), its depth and texts measured on the tree, and
    ``rows`` (the part's reader) given the tree; anything else (a larger part, a part that
    is not plain UTF-8 or has a document type declaration, one that breaks a bound or is
    not well-formed, an error while reading it) is scanned by the bounded streaming pass
    (:class:`_Scan`), which refuses it with its one-line message: the outcome is the
    streaming pass's in every case, the quick one only saves time.
    """
    tally = tally if tally is not None else Tally()
    if info.filename != _CONTENT_TYPES and info.file_size <= QUICK_PART_BYTES:
        quick = _quick_tree(zf, info)
        if quick is not None and tally.fits(*quick[1:]):  # else the scan refuses it in order
            try:
                if rows is None or rows.tree(quick[0]):
                    tally.add(*quick[1:])
                    tally.parts[info.filename] = quick[1]
                    return []
            except Exception:  # noqa: BLE001 - the streaming pass raises it, in its order
                pass
            if rows is not None:
                rows.reset()
    return _Scan(path, info.filename, rows, tally).run(zf, info)


#: Largest part read by the quick path (:func:`_quick_tree`): at most
#: :data:`MAX_XML_RUN_BYTES`, so no run of it can break that bound. A planner's largest part
#: is about 160 kB. Not a bound on files: a larger part is scanned by the streaming pass.
QUICK_PART_BYTES = MAX_XML_RUN_BYTES
#: Most ``<`` in a part read by the quick path: each element needs one, so the tree holds at
#: most this many elements (a few MB; far under :data:`MAX_PART_ELEMENTS`). A planner's
#: largest part has about 2,200 elements; a part with more is scanned by the streaming pass.
QUICK_PART_TAGS = 32_768
_CONTENT_TYPES = "[Content_Types].xml"
_UTF8_BOM = b"\xef\xbb\xbf"
_DECLARED_ENCODING = re.compile(rb"""encoding\s*=\s*["']([^"']*)["']""")


def _plain_utf8(data):
    """True when expat reads ``data`` as UTF-8 (no byte-order mark but UTF-8's, an XML
    declaration naming no encoding or UTF-8): then a document type declaration, whatever it
    holds, is the bytes ``<!DOCTYPE`` in it."""
    data = data.removeprefix(_UTF8_BOM)
    if not data.startswith(b"<") or data.startswith(b"<\0"):
        return False
    if not data.startswith(b"<?xml"):
        return True
    end = data.find(b"?>")
    found = _DECLARED_ENCODING.search(data[: end if end >= 0 else 0])
    return end >= 0 and (found is None or found.group(1).lower() == b"utf-8")


def _quick_tree(zf, info):
    """(element tree, elements, defined names) of the part, parsed by the C parser, when it
    is sure to be within every bound of one part in the streaming pass (:class:`_Scan`),
    else None (the bounds across the package are the caller's, from the counts).

    Sure, because: at most :data:`QUICK_PART_BYTES` (no run over :data:`MAX_XML_RUN_BYTES`)
    and :data:`QUICK_PART_TAGS` ``<`` (elements, far under :data:`MAX_PART_ELEMENTS`);
    plain UTF-8 without ``<!DOCTYPE`` (no document type: no entity of any kind; an undefined
    one is a parse error); depth at most :data:`MAX_XML_DEPTH`; every ``<t>``'s text (what
    precedes its first child, as the streaming pass counts it) at most
    :data:`MAX_CELL_TEXT_CHARS` characters.
    """
    try:
        with zf.open(info) as fh:
            data = fh.read(QUICK_PART_BYTES + 1)
    except Exception:  # noqa: BLE001 - the streaming pass says what is wrong
        return None
    if len(data) > QUICK_PART_BYTES or data.count(b"<") > QUICK_PART_TAGS:
        return None
    if b"<!DOCTYPE" in data or not _plain_utf8(data):
        return None
    parser = ElementTree.XMLParser()
    try:
        parser.feed(data)
        root = parser.close()
    except Exception:  # noqa: BLE001 - not well-formed, an undefined entity...
        return None
    level, depth, elements = [root], 0, 0
    while level:  # the tree level by level, in C: its depth
        depth += 1
        elements += len(level)
        if depth > MAX_XML_DEPTH:
            return None
        level = list(itertools.chain.from_iterable(level))
    if len(data) > MAX_CELL_TEXT_CHARS:  # a shorter part holds no longer text
        for tag in set(map(_TAG, root.iter())):
            if tag.endswith("}t") and any(
                len(t.text or "") > MAX_CELL_TEXT_CHARS for t in root.iter(tag)
            ):
                return None
    names = 0
    if b"definedName" in data:
        names = sum(map(xlsx_safety.is_defined_name, map(_TAG, root.iter())))
    return root, elements, names


_TAG = operator.attrgetter("tag")


def _xml_parts(zf):
    """(info, by name) of each part to scan: every part that is XML by name (``.xml``,
    ``.rels``) or by its first bytes, whatever its extension, since openpyxl follows the
    package's relationships to parts of any name."""
    for info in zf.infolist():
        if info.is_dir():
            continue
        by_name = info.filename.lower().endswith((".xml", ".rels"))
        if by_name or _looks_like_xml(zf, info):
            yield info, by_name


def _is_worksheet(name):
    """True for a part openpyxl and spreadsheets name as a worksheet: scanned last, once
    the workbook says which of them hold named cells (read in the same scan)."""
    return name.startswith("xl/worksheets/") and name.lower().endswith(".xml")


def _check_part(path, zf, info, by_name, rows=None, tally=None):
    """Scan one part, bounded; refuse unsafe XML and macro content types.

    Each part's expanded size and element count are bounded, and the package's (``tally``).
    VML drawings (legacy comments) are often not well-formed and openpyxl does not parse
    them: a parse error in a part that is not XML by name is not a problem, a document type
    declaration is. What the part's reader (``rows``) refuses names the part, or the sheet
    and cell; any other failure while reading it names the part.
    """
    name = info.filename
    try:
        ctypes = _scan_part(path, zf, info, rows, tally)
    except CellError as exc:
        _fail(path, exc.message, getattr(rows, "sheet", None), exc.cell)
    except PartError as exc:
        _part_problem(path, name, exc.message)
    except defusedxml.DefusedXmlException as exc:
        _fail(
            path,
            f"contains unsafe XML in {name} ({type(exc).__name__}: document type or "
            "entity declarations, as in an XML bomb); refused",
        )
    except (DefusedET.ParseError, expat.ExpatError) as exc:
        if not by_name and not isinstance(rows, _Rows):
            return  # not XML openpyxl reads (a VML drawing, a binary that starts "<")
        _fail(path, f"is a corrupt .xlsx: {name} is not well-formed XML ({_flat(exc)})")
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError) as exc:
        _fail(path, f"is a corrupt or truncated .xlsx ({name}: {_flat(exc)})")
    except PlannerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed part surfaces in its reader
        _part_problem(path, name, f"could not be read ({_one_line(exc)})")
    if name == _CONTENT_TYPES:
        for ctype in ctypes:
            if any(m in ctype for m in _MACRO_CONTENT_TYPES):
                _fail(path, f"is a macro-enabled workbook (content type {ctype}); refused")


#: Parts read in their scan, as openpyxl's load reads them: the stylesheet's date formats
#: and the shared strings (when the package's manifest names this part for them).
_STYLES = "xl/styles.xml"
_STRINGS = "xl/sharedStrings.xml"


def _check_xml_parts(path, zf, parts, tally=None):
    """Scan ``parts`` ((info, by name) pairs) in order (:func:`_check_part`), counting into
    the package's ``tally``; the :class:`_Styles` and :class:`_Strings` read on the way (None
    when not among them)."""
    tally = tally if tally is not None else Tally()
    styles = strings = None
    for info, by_name in parts:
        hook = None
        if info.filename == _STYLES:
            hook = styles = _Styles()
        elif info.filename == _STRINGS:
            hook = strings = _Strings()
        _check_part(path, zf, info, by_name, hook, tally)
    return styles, strings


@dataclass
class _Book:
    """What a planner's workbook-level parts say: defined names, sheets, strings, styles."""

    defined_names: object  # openpyxl DefinedNameDict of the workbook-scoped names
    sheetnames: list
    parts: dict  # {sheet title: zip member of the worksheet}
    sheet_parts: list  # [(sheet title, zip member)] of every sheet, chart sheets too
    properties: object
    epoch: object
    shared_strings: list
    date_formats: set
    timedelta_formats: set


def _read_book(data, styles=None, strings=None, strings_of=None, sizes=None):
    """A :class:`_Book` read by openpyxl's own readers (as ``load_workbook(read_only=True)``
    reads them, with the same errors), without opening any worksheet: the worksheets are
    read once, in the bounded scan (:func:`_grab`). The shared strings are those read in
    the scan (``strings``) when the manifest names ``xl/sharedStrings.xml`` for them, else
    ``strings_of(part)``'s: never openpyxl's reader. ``sizes`` (``{part: elements}``, from
    the scan) bounds the parts openpyxl builds objects from (:func:`_check_book_part`); the
    custom document properties are not read."""
    from openpyxl.packaging.relationship import get_rels_path
    from openpyxl.reader.excel import ExcelReader, _find_workbook_part
    from openpyxl.styles.stylesheet import apply_stylesheet
    from openpyxl.xml.constants import ARC_CORE, SHARED_STRINGS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "extension not supported" and the like
        reader = ExcelReader(io.BytesIO(data), read_only=True, keep_vba=False,
                             data_only=False, keep_links=False)  # fmt: skip
        action = "read manifest"
        try:
            if sizes is not None:
                _check_book_part(_CONTENT_TYPES, sizes, ())
            reader.read_manifest()
            if sizes is not None:  # the parts openpyxl builds objects from, each bounded
                book_part = _find_workbook_part(reader.package).PartName[1:]
                for name in (book_part, get_rels_path(book_part), ARC_CORE):
                    _check_book_part(name, sizes, reader.valid_files)
            action = "read strings"
            part = reader.package.find(SHARED_STRINGS)
            if strings is not None and part is not None and part.PartName[1:] == _STRINGS:
                reader.shared_strings = strings.strings  # read in the scan
            elif part is not None:
                reader.shared_strings = strings_of(part.PartName[1:])
            action = "read workbook"
            reader.read_workbook()
            action = "read properties"
            reader.read_properties()
            action = "read stylesheet"
            if styles is None:
                apply_stylesheet(reader.archive, reader.wb)
            action = "read worksheets"
            sheets = [(s.name, rel) for s, rel in reader.parser.find_sheets()
                      if rel.target in reader.valid_files]  # fmt: skip
            action = "assign names"
            reader.parser.assign_names()
        except ValueError as e:
            raise ValueError(
                f"Unable to read workbook: could not {action} from {reader.archive.filename}.\n"
                "This is most probably because the workbook source files contain some invalid "
                "XML.\nPlease see the exception for more details."
            ) from e
        finally:
            reader.archive.close()
    wb = reader.wb
    dates, spans = (wb._date_formats, wb._timedelta_formats)
    if styles is not None:
        dates, spans = styles.formats()
    return _Book(
        defined_names=wb.defined_names,
        sheetnames=[name for name, _ in sheets],
        parts={name: rel.target for name, rel in sheets if "chartsheet" not in rel.Type},
        sheet_parts=[(name, rel.target) for name, rel in sheets],
        properties=wb.properties,
        epoch=wb.epoch,
        shared_strings=reader.shared_strings,
        date_formats=dates,
        timedelta_formats=spans,
    )


def _open_book(path, data, styles=None, strings=None, strings_of=None, sizes=None):
    """:func:`_read_book`, its failures as one line naming the file; two sheet entries whose
    relationships lead to one part are refused (no spreadsheet writes it; each would be
    read again)."""
    try:
        book = _read_book(data, styles, strings, strings_of, sizes)
    except PartError as exc:
        _part_problem(path, exc.part, exc.message)
    except PlannerError:
        raise
    except defusedxml.DefusedXmlException as exc:
        _fail(path, f"contains unsafe XML ({type(exc).__name__}); refused")
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds on bad files
        _fail(path, f"could not be read as a workbook ({_one_line(exc)})")
    shared = xlsx_safety.shared_part(book.sheet_parts)
    if shared is not None:
        first, second, part = shared
        _fail(
            path,
            f"sheets {first!r} and {second!r} are one part, {part} (a workbook gives each "
            "sheet its own part); refused",
        )
    return book


def _check_book_part(name, sizes, members):
    """Refuse (:class:`PartError`) a part openpyxl reads into objects (the manifest, the
    workbook part and its relationships, the document properties) of over
    :data:`MAX_BOOK_PART_ELEMENTS` elements, or one of the package's ``members`` not scanned
    yet (a workbook part named as a worksheet, which is scanned last)."""
    if name not in sizes and name in members:
        raise PartError(
            "is the workbook's own part but is named as a worksheet (xl/worksheets/)",
            part=name,
        )
    count = sizes.get(name, 0)
    if count > MAX_BOOK_PART_ELEMENTS:
        raise PartError(
            f"holds {count:,} XML elements, over the limit of {MAX_BOOK_PART_ELEMENTS:,} for a "
            "part read into objects (a planner's workbook part holds about 250)",
            part=name,
        )


def _strings_of(path, zf, tally):
    """``strings_of(part)`` for :func:`_read_book`: the shared strings of a part of another
    name than ``xl/sharedStrings.xml``, read by a second bounded scan of it."""

    def strings_of(name):
        strings = _Strings()
        _check_part(path, zf, zf.getinfo(name), True, strings, tally)
        return strings.strings

    return strings_of


# ---------------------------------------------------------------------------------------------
# Defined names -> cells
# ---------------------------------------------------------------------------------------------


def _destination(dn):
    """(sheet title, reference) of a defined name pointing at one range, else None.

    A quote in a sheet's title is doubled in the reference, as Excel writes it
    (``'Team''s = plan'!$D$4``); openpyxl leaves it doubled.
    """
    dests = list(dn.destinations) if dn is not None and dn.type == "RANGE" else []
    if len(dests) != 1:
        return None
    sheet, ref = dests[0]
    return sheet.replace("''", "'"), ref


def _name_cells(path, wb, name):
    """(sheet title, [(row, col), ...]) of a one-row defined name, or None if missing.

    The span is bounded (:data:`MAX_SCENARIO_COLUMNS`) before the cells are listed."""
    dn = wb.defined_names.get(name)
    if dn is None:
        return None
    found = _destination(dn)
    if found is None:
        _fail(path, f"defined name {name!r} does not point at one range ({dn.attr_text})")
    sheet, ref = found
    if sheet not in wb.sheetnames:
        _fail(path, f"defined name {name!r} points at a missing sheet {sheet!r}")
    try:
        min_col, min_row, max_col, max_row = range_boundaries(ref.replace("$", ""))
    except (TypeError, ValueError):
        _fail(path, f"defined name {name!r} has an unreadable range {ref!r}")
    if None in (min_col, min_row, max_col, max_row) or min_row != max_row:
        _fail(path, f"defined name {name!r} must span one row ({dn.attr_text})", sheet)
    if max_col - min_col + 1 > MAX_SCENARIO_COLUMNS:
        _fail(
            path,
            f"defined name {name!r} ({dn.attr_text}) spans {max_col - min_col + 1:,} "
            f"scenario columns, over the limit of {MAX_SCENARIO_COLUMNS} per planner; "
            "refused before reading",
        )
    return sheet, [(min_row, c) for c in range(min_col, max_col + 1)]


def _check_area(path, wb, named):
    """Refuse, before any cell is read, names whose cells span more than
    :data:`MAX_CELLS_READ` cells in all (the box of each sheet, from the first named cell
    to the last). ``named`` is ``{name: (sheet, [(row, col), ...])}``; the message names the
    name farthest from the others and its reference."""
    boxes = {}
    for name, (sheet, cells) in named.items():
        boxes.setdefault(sheet, []).extend((name, r, c) for r, c in cells)
    total = sum(_box_area(cells) for cells in boxes.values())
    if total <= MAX_CELLS_READ:
        return
    sheet, cells = max(boxes.items(), key=lambda kv: _box_area(kv[1]))
    mid_row = sorted(r for _, r, _ in cells)[len(cells) // 2]
    mid_col = sorted(c for _, _, c in cells)[len(cells) // 2]
    far = max(cells, key=lambda x: abs(x[1] - mid_row) + abs(x[2] - mid_col))[0]
    dn = wb.defined_names.get(far)
    ref = dn.attr_text if dn is not None else far
    _fail(
        path,
        f"defined name {far!r} ({ref}) makes the named cells span {total:,} cells, over the "
        f"limit of {MAX_CELLS_READ:,} cells read per planner (a planner's named cells sit "
        "within about 300); refused before reading",
    )


def _box_area(cells):
    rows = [r for _, r, _ in cells]
    cols = [c for _, _, c in cells]
    return (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)


def _grab(path, zf, book, wanted, later, tally=None):
    """({sheet: {(row, col): (typed value, is formula)}}, {sheet: {(row, col): saved value}})
    of the wanted cells (``{sheet: {(row, col), ...}}``).

    Each worksheet is parsed once: its bounded scan (:func:`_check_part`) reads the rows
    of its named cells (:class:`_Rows`). ``later`` are the worksheets not yet scanned
    ((info, by name) pairs, in package order); those without named cells are only scanned.
    A sheet whose part has another name (found by its relationship) was scanned already and
    is read in a second scan. Each part holds one sheet (:func:`_open_book`).
    """
    tally = tally if tally is not None else Tally()
    by_part = {}
    for sheet in wanted:
        part = book.parts.get(sheet)
        if part is None:
            raise ValueError(f"sheet {sheet!r} is a chart sheet, not a worksheet")
        by_part.setdefault(part, []).append(sheet)
    scanned = {info.filename for info, _ in later}
    parts = list(later) + [(zf.getinfo(n), True) for n in by_part if n not in scanned]
    typed, saved = {}, {}
    for info, by_name in parts:
        sheets = by_part.get(info.filename)
        if not sheets:
            _check_part(path, zf, info, by_name, tally=tally)
            continue
        for sheet in sheets:  # one: a part of two sheets was refused
            cells = wanted[sheet]
            rows = [r for r, _ in cells]
            cols = [c for _, c in cells]
            found = _Rows(book, (min(rows), max(rows), min(cols), max(cols)), sheet)
            _check_part(path, zf, info, by_name, found, tally)
            typed[sheet] = {
                rc: (cell["value"], cell["data_type"] == "f")
                for rc, cell in found.typed.items()
                if rc in cells
            }
            saved[sheet] = {rc: cell["value"] for rc, cell in found.saved.items() if rc in cells}
    return typed, saved


_BOOLEAN_FORMULA = re.compile(r"^=?\s*(TRUE|FALSE)\s*(\(\s*\))?\s*$", re.IGNORECASE)


def _is_boolean_formula(text):
    """True for ``=TRUE()``/``=FALSE()`` (or ``=TRUE``): a typed TRUE/FALSE, not a number."""
    return isinstance(text, str) and _BOOLEAN_FORMULA.match(text) is not None


def _coordinate(row, col):
    return f"{openpyxl.utils.get_column_letter(col)}{row}"


# ---------------------------------------------------------------------------------------------
# Values by kind
# ---------------------------------------------------------------------------------------------


def _number(value):
    """(value, error message)"""
    if isinstance(value, bool):
        return None, "must be a number, not TRUE/FALSE"
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return None, "must be a finite number"
        return value, None
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return None, f"must be a number, not a date or time (got {value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        if value.startswith("#"):
            return None, f"must be a number, not the error value {shown}"
        return None, f"must be a number, not text (got {shown!r})"
    return None, f"must be a number (got {type(value).__name__})"


#: Line breaks and tabs a text input may hold (a cell typed with Alt+Enter), as a table that
#: deletes them before :func:`udfs.validation.control_character` looks for the rest.
_WITHOUT_TEXT_WHITESPACE = str.maketrans("", "", "\t\n\r")


#: The largest number a text input (a name, an owner, a reference) may hold, read as its text.
MAX_TEXT_NUMBER = 1e15


def _text(value):
    if isinstance(value, bool):
        return None, "must be text, not TRUE/FALSE"
    if isinstance(value, str):
        # A C0 control a workbook cannot hold (Excel writes it as _x0001_), a C1 control, a
        # line separator or a bidirectional override that would reorder what a table shows:
        # the rule own-runs names follow.
        bad = control_character(value.translate(_WITHOUT_TEXT_WHITESPACE))
        if bad:
            return None, (
                f"holds the control character {bad}, which a name in a workbook, a CSV file "
                "or a message must not hold; retype the text"
            )
        if len(value.strip()) > MAX_TEXT_CHARS:
            return None, (
                f"is {len(value.strip()):,} characters long, over the limit of "
                f"{MAX_TEXT_CHARS} for a text input (starts {value.strip()[:20]!r})"
            )
        return value.strip(), None
    if isinstance(value, int | float):
        if not math.isfinite(value) or abs(value) > MAX_TEXT_NUMBER:  # no name, a slip
            return None, f"must be text, not the number {value:g}"
        return f"{value:g}", None
    return str(value), None


def _date(value, epoch):
    """(date, error message): a date from :data:`FIRST_DATE` to :data:`LAST_DATE`."""
    rule = f"must be a date {DATE_RANGE}"
    if isinstance(value, _dt.datetime):
        value = value.date()
    if isinstance(value, _dt.date):
        if not FIRST_DATE <= value <= LAST_DATE:
            return None, f"{rule}, the dates a spreadsheet shows (got {value.isoformat()})"
        return value, None
    if isinstance(value, bool):
        return None, f"{rule}, not TRUE/FALSE"
    if isinstance(value, _dt.time | _dt.timedelta):  # a serial number below 1: no date
        return None, f"{rule}, not a time of day (got {value}: a serial number below 1)"
    if isinstance(value, int | float):  # a serial number without a date format
        try:
            converted = from_excel(value, epoch)
        except (ValueError, OverflowError, TypeError):
            return None, f"{rule} (got the number {value:g})"
        if isinstance(converted, _dt.datetime) and 1 <= value < 2958466:
            return _date(converted, epoch)
        return None, f"{rule} (got the number {value:g})"
    if isinstance(value, str):
        if value.strip() == "#VALUE!":  # how openpyxl reads a date cell past 9999-12-31
            return None, (
                f"{rule} (got #VALUE!: an error value, or a serial number outside that range)"
            )
        return None, f"must be a date, not text (got {value[:40]!r}); type it as a date"
    return None, rule


# ---------------------------------------------------------------------------------------------
# The planner
# ---------------------------------------------------------------------------------------------


def read_planner(path, max_bytes=DEFAULT_MAX_BYTES, collect=False, columns_left=None):
    """Read one filled planner: its scenarios with inputs, located and type-checked.

    With ``collect``, bad cells (a blank required cell, a value of the wrong kind) do not
    raise: they are in ``Planner.problems`` and their columns are left out of ``scenarios``,
    so that a caller can add the engine's objections to the other columns and report all.
    ``columns_left`` (a run's total bound on scenario columns, less those already read):
    a file with more scenario columns raises :class:`ColumnBudgetError` before any cell is
    read.

    Raises
    ------
    PlannerError
        The file is missing, too large, not a valid or safe workbook, or not a planner; or,
        without ``collect``, a scenario column has a bad cell (all such cells are listed).
    """
    check_defusedxml()
    path = Path(path)
    data = _read_bytes(path, max_bytes)
    zf = _check_zip(path, data)
    with zf:
        try:
            planner = _read_package(path, zf, data, collect, columns_left)
        except PlannerError:
            raise
        except defusedxml.DefusedXmlException as exc:
            _fail(path, f"contains unsafe XML ({type(exc).__name__}); refused")
        except Exception as exc:  # noqa: BLE001 - a malformed sheet part surfaces while reading
            _fail(path, f"could not be read as a workbook ({_one_line(exc)})")
    planner.sha256 = hashlib.sha256(data).hexdigest()
    return planner


def _read_package(path, zf, data, collect, columns_left):
    """The :class:`Planner` of the open package ``zf`` (:func:`read_planner`'s work)."""
    tally = Tally()  # elements and defined names of every part, as they are scanned
    parts = list(_xml_parts(zf))
    later = [(info, by_name) for info, by_name in parts if _is_worksheet(info.filename)]
    styles, strings = _check_xml_parts(
        path, zf, [p for p in parts if not _is_worksheet(p[0].filename)], tally
    )
    try:  # every part openpyxl reads here has passed the scan; no worksheet is read yet
        strings_of = _strings_of(path, zf, tally)
        book = _open_book(path, data, styles, strings, strings_of, tally.parts)
        optional, cells = _locate(path, book, columns_left)
    except PlannerError:  # a bound the worksheets break is reported first, then this refusal
        _check_xml_parts(path, zf, later, tally)
        raise
    with warnings.catch_warnings():  # "marked as a date but ... outside the limits"
        warnings.simplefilter("ignore")  # such a cell reads #VALUE!, refused by name
        cells.read(*_grab(path, zf, book, cells.wanted, later, tally))
    return _read(path, book, cells, optional, len(data), collect)


def _locate(path, book, columns_left):
    """(optional inputs missing, :class:`_Cells` located and bounded), before any cell is
    read; every failure a PlannerError."""
    try:
        optional = _check_names(path, book)
        present = [n for n in (*INPUT_NAMES, *OUTPUT_NAMES) if n not in optional]
        return optional, _Cells(path, book, present, columns_left)
    except PlannerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed name surfaces while locating
        _fail(path, f"could not be read as a workbook ({_one_line(exc)})")


def _check_names(path, wb):
    """The optional input rows the planner lacks (an older planner); PlannerError when it is
    not a planner, or an incomplete one."""
    missing = [n for n in (*INPUT_NAMES, *OUTPUT_NAMES) if wb.defined_names.get(n) is None]
    optional = [n for n in OPTIONAL_INPUTS if n in missing]
    if len(optional) < len(missing):  # a planner without the optional rows is an older one
        optional = []
    missing = [n for n in missing if n not in optional]
    n_names = len(INPUT_NAMES) + len(OUTPUT_NAMES)
    if len(missing) == n_names:
        _fail(
            path,
            "is not a training-run planner: it has none of the planner's defined names "
            "(scenario_name, total_params, ...)",
        )
    if len(missing) > n_names / 2:  # another workbook that shares a few quantity names
        title = getattr(getattr(wb, "properties", None), "title", None)
        what = f" (it is titled {str(title)[:60]!r})" if title else ""
        _fail(
            path,
            f"is not a training-run planner{what}: {len(missing)} of the planner's {n_names} "
            f"defined names are missing ({', '.join(missing[:4])}, ...)",
        )
    if missing:
        _fail(
            path,
            f"is not a complete training-run planner: defined name(s) missing: "
            f"{', '.join(missing)}",
        )
    return optional


def _extras(wb):
    """{name: (sheet, (row, col))} of the single-cell names template_version, active_scenario."""
    extras = {}
    for name in ("template_version", "active_scenario"):
        found = _destination(wb.defined_names.get(name))
        if found is not None and found[0] in wb.sheetnames:
            sheet, ref = found
            try:
                min_col, min_row, _, _ = range_boundaries(ref.replace("$", ""))
            except (TypeError, ValueError):
                continue
            if min_col is not None and min_row is not None:
                extras[name] = (sheet, (min_row, min_col))
    return extras


class _Cells:
    """The planner's named cells: typed values and formulas, and the values last saved."""

    def __init__(self, path, book, names, columns_left=None):
        self.locations = {name: _name_cells(path, book, name) for name in names}
        self.width = len(self.locations["scenario_name"][1])
        if columns_left is not None and self.width > columns_left:
            err = ColumnBudgetError(path, [Problem(f"has {self.width} scenario columns")])
            err.width = self.width
            raise err
        for name, (sheet, cells) in self.locations.items():
            if len(cells) != self.width:
                _fail(
                    path,
                    f"defined name {name!r} spans {len(cells)} cells but scenario_name spans "
                    f"{self.width}: the scenario columns do not line up",
                    sheet,
                )
        self.extras = _extras(book)
        named = dict(self.locations)
        named.update({n: (sheet, [cell]) for n, (sheet, cell) in self.extras.items()})
        _check_area(path, book, named)
        self.wanted = {}  # {sheet: {(row, col), ...}}: the cells to read
        for sheet, cells in self.locations.values():
            self.wanted.setdefault(sheet, set()).update(cells)
        for sheet, cell in self.extras.values():
            self.wanted.setdefault(sheet, set()).add(cell)
        from .planner.own_runs import AREA, TITLE  # the team's runs (issue 17), bounded

        if TITLE in book.parts:
            self.wanted.setdefault(TITLE, set()).update(AREA)
        self.formulas = self.values = None

    def read(self, formulas, values):
        """Take the cells read (:func:`_grab`)."""
        self.formulas, self.values = formulas, values

    def value(self, name, k, cached=False):
        """The cell's value: typed (formula text for a formula), or as last saved."""
        if name not in self.locations:  # an optional row the planner does not have: blank
            return None
        sheet, cells = self.locations[name]
        if cached:
            return self.values[sheet].get(cells[k])
        return self.formulas[sheet].get(cells[k], (None, False))[0]

    def is_formula(self, name, k):
        if name not in self.locations:
            return False
        sheet, cells = self.locations[name]
        return self.formulas[sheet].get(cells[k], (None, False))[1]

    def ref(self, name, k):
        sheet, cells = self.locations[name]
        return CellRef(sheet, _coordinate(*cells[k]))

    def extra(self, name):
        if name not in self.extras:
            return None
        sheet, cell = self.extras[name]
        return self.values[sheet].get(cell)


def _raw_inputs(cells, k):
    """A column's input values as typed (a formula's saved value), and formula problems."""
    raw, problems = {}, []
    for name in INPUT_NAMES:
        v = cells.value(name, k)
        if cells.is_formula(name, k):  # an input computed by a formula: take what was saved
            text = v
            v = cells.value(name, k, cached=True)
            if _is_boolean_formula(text) and v is not None:
                # TRUE typed into a cell, as LibreOffice saves it (=TRUE(), value 1)
                v = text.strip().upper().startswith(("=TRUE", "TRUE"))
            if v is None:
                ref = cells.ref(name, k)
                problems.append(
                    Problem(
                        f"{name} ({_LABEL[name]}) holds a formula with no saved value; "
                        "type the value, or recalculate and save the workbook",
                        ref.sheet,
                        ref.cell,
                    )
                )
                v = _UNSAVED
        raw[name] = v
    return raw, problems


def _checked(name, v, ref, epoch):
    """(value, Problem or None) of one filled input, checked for its kind."""
    kind = _KIND[name]
    if kind == "number" and name in SIZE_INPUTS and isinstance(v, str) and not v.startswith("#"):
        try:  # text such as 70B: the planner's grammar, read as the planner reads it
            value, error = parse_size(v), None
        except NumberTextError as exc:
            value, error = None, str(exc)
    elif kind == "number":
        value, error = _number(v)
        if not error and name in _WHOLE and value != math.floor(value):
            error = f"must be a whole number (got {value:.15g})"
    elif kind == "date":
        value, error = _date(v, epoch)
    else:
        value, error = _text(v)
        if not error and name == "run_code" and not valid_run_code(value):
            error = f"must be a run code: {RUN_CODE_RULE} (got {value!r})"
    problem = Problem(f"{name} ({_LABEL[name]}) {error}", ref.sheet, ref.cell) if error else None
    return value, problem


def _inputs(raw, refs, epoch):
    """(inputs, problems) of a column with inputs: each value checked for its kind."""
    inputs, problems = {}, []
    for name in INPUT_NAMES:
        v, ref = raw[name], refs.get(name)
        if is_blank(v) or v is _UNSAVED:
            if name in REQUIRED and v is not _UNSAVED:
                problems.append(
                    Problem(
                        f"{name} ({_LABEL[name]}) is required: the cell is blank while "
                        "other required inputs of this scenario column are filled",
                        ref.sheet,
                        ref.cell,
                    )
                )
            inputs[name] = None
            continue
        inputs[name], problem = _checked(name, v, ref, epoch)
        if problem is not None:
            problems.append(problem)
    return inputs, problems


def _own_runs(cells, problems):
    """The team's runs typed on the "Our runs" sheet (issue 17), or None (no sheet: an older
    planner, or no row typed). A bad row is a Problem naming the sheet, row and column."""
    from udfs.validation import CommandError

    from .planner.own_runs import LETTERS, TITLE, read_rows

    if TITLE not in cells.values:  # an older planner: no such sheet
        return None
    saved = cells.values[TITLE]
    try:
        rows = read_rows(lambda r, c: saved.get((r, c)))
        if not rows:  # none typed (as from_rows says), without importing it and pandas
            return None
        from udfs import own_runs

        return own_runs.from_rows(rows, f"sheet {TITLE!r}", LETTERS)
    except CommandError as err:
        problems.append(Problem(str(err), TITLE))
        return None


def _read(path, book, cells, optional, size, collect):
    present = list(cells.locations)  # the names located (optional inputs missing left out)
    epoch = book.epoch
    problems, scenarios, skipped = [], [], []
    any_cached = False
    for k in range(cells.width):
        column = "".join(ch for ch in cells.ref("scenario_name", k).cell if ch.isalpha())
        raw, formula_problems = _raw_inputs(cells, k)
        if not any(not is_blank(raw[n]) for n in REQUIRED):
            # Not consolidated (an unused custom column, or one whose required inputs are
            # all blank); listed so that nothing disappears unseen.
            label = raw["scenario_name"]
            skipped.append((column, "" if is_blank(label) else str(label).strip()))
            continue
        refs = {n: cells.ref(n, k) for n in present}
        inputs, input_problems = _inputs(raw, refs, epoch)
        name = inputs["scenario_name"] or f"Scenario {k + 1}"
        cached = {n: cells.value(n, k, cached=True) for n in OUTPUT_NAMES}
        formula_cells = {n: cells.is_formula(n, k) for n in OUTPUT_NAMES}
        # Saved values of formula cells: what Excel or LibreOffice computed (a value typed
        # over a formula is there whoever saved the file, so it does not count).
        any_cached = any_cached or any(
            cached[n] is not None for n in OUTPUT_NAMES if formula_cells[n]
        )
        if formula_problems or input_problems:
            problems.extend(formula_problems + input_problems)
            continue  # a column with a bad cell is not a scenario; its problems are kept
        scenarios.append(
            Scenario(path, k + 1, column, name, inputs, refs, cached, formula_cells),
        )
    own_runs = _own_runs(cells, problems)
    if problems and not collect:
        raise PlannerError(path, problems)
    return Planner(
        own_runs=own_runs,
        path=path,
        template_version=cells.extra("template_version"),
        active_scenario=cells.extra("active_scenario"),
        scenarios=scenarios,
        skipped_columns=skipped,
        has_cached_values=any_cached,
        size_bytes=size,
        sha256="",
        problems=problems,
        missing_optional=optional,
        width=cells.width,
    )
