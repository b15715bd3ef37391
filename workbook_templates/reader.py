"""Read filled training-run planners back, safely, through their defined names.

A filled ``training-run-planner.xlsx`` comes from outside (a team fills a copy and sends it
on), so it is read in three rooms, each a module:

1. :mod:`workbook_templates.xlsx_safety`: the file and its package, untrusted. A size limit
   before anything is parsed; a valid zip within its size bounds (zip bombs); no macros;
   every XML part scanned once, bounded (elements, depth, runs, texts; all parts together
   elements and defined names) with defusedxml's refusals of document types and entities.
2. :mod:`workbook_templates.named_cells`: the cells the defined names point at, bounded
   (:data:`MAX_SCENARIO_COLUMNS` per name, :data:`MAX_CELLS_READ` in all) before any cell is
   read, read in the same scan of each worksheet, typed and as last saved.
3. This module: what the planner's names mean. The planner's contract is in
   :mod:`udfs.quantities`: one workbook-scoped defined name per input and output, named as
   the quantity, each spanning one row across the scenario columns. :func:`read_planner`
   returns a :class:`Planner` with one :class:`Scenario` per column that has inputs (any
   required input filled), each input's value checked for its kind (number, text, date) and
   located by sheet and cell, and the cached output values when the file carries them. Text
   inputs are at most :data:`MAX_TEXT_CHARS` characters without control characters; dates
   lie from :data:`FIRST_DATE` to :data:`LAST_DATE`. A caller may bound the scenario
   columns left in a run (``columns_left``, :class:`ColumnBudgetError`).

It does not compute anything: :mod:`workbook_templates.report` runs the engine. An older
planner without the rows in :data:`OPTIONAL_INPUTS` (budget status, owner,
uncertainties, run code) reads with those inputs blank; ``Planner.missing_optional`` names them.

Every problem is a :class:`Problem` (sheet, cell, message) gathered in a
:class:`PlannerError` that names the file. The bounds and errors of the first two rooms are
importable from here too.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from openpyxl.utils.cell import range_boundaries
from openpyxl.utils.datetime import from_excel

from udfs.numbers import SIZE_INPUTS, NumberTextError, parse_size
from udfs.plan import REQUIRED
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS
from udfs.validation import MAX_TEXT_CHARS, control_character, is_blank

from .named_cells import (
    MAX_CELLS_READ,
    MAX_SCENARIO_COLUMNS,
    a1,
    check_area,
    check_xml_parts,
    destination,
    grab,
    name_cells,
    open_book,
    strings_in_part,
)
from .run_codes import RUN_CODE_RULE, valid_run_code
from .xlsx_safety import (
    DEFAULT_MAX_BYTES,
    MAX_BOOK_PART_ELEMENTS,
    MAX_CELL_TEXT_CHARS,
    MAX_DEFINED_NAMES,
    MAX_PACKAGE_ELEMENTS,
    MAX_PART_BYTES,
    MAX_PART_ELEMENTS,
    MAX_PARTS,
    MAX_ROW_CELLS,
    MAX_ROW_ELEMENTS,
    MAX_UNCOMPRESSED_BYTES,
    MAX_XML_DEPTH,
    MAX_XML_RUN_BYTES,
    PlannerError,
    Problem,
    Tally,
    check_defusedxml,
    check_zip,
    fail,
    is_worksheet,
    one_line,
    quote_sheet,
    read_bytes,
    read_failures,
    xml_parts,
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
    "OPTIONAL_INPUTS",
    "ColumnBudgetError",
    "Problem",
    "PlannerError",
    "CellRef",
    "Scenario",
    "Planner",
    "check_defusedxml",
    "read_planner",
]


#: The dates a start date may hold: those a spreadsheet shows as a date (serials 1 to
#: 2,958,465); before 1900 Excel shows ``####``.
FIRST_DATE = _dt.date(1900, 1, 1)
LAST_DATE = _dt.date(9999, 12, 31)
DATE_RANGE = f"from {FIRST_DATE.isoformat()} to {LAST_DATE.isoformat()}"

_UNSAVED = object()  # an input formula without a saved value
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


class ColumnBudgetError(PlannerError):
    """A file whose scenario columns would take a run over its total (``columns_left``);
    ``width`` is its number of scenario columns."""

    width = 0


@dataclass(frozen=True)
class CellRef:
    sheet: str
    cell: str

    def __str__(self):
        return f"{quote_sheet(self.sheet)}!{self.cell}"


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


_BOOLEAN_FORMULA = re.compile(r"^=?\s*(TRUE|FALSE)\s*(\(\s*\))?\s*$", re.IGNORECASE)


def _is_boolean_formula(text):
    """True for ``=TRUE()``/``=FALSE()`` (or ``=TRUE``): a typed TRUE/FALSE, not a number."""
    return isinstance(text, str) and _BOOLEAN_FORMULA.match(text) is not None


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
    data = read_bytes(path, max_bytes)
    zf = check_zip(path, data)
    with zf, read_failures(path):  # a malformed sheet part surfaces while reading
        planner = _read_package(path, zf, data, collect, columns_left)
    planner.sha256 = hashlib.sha256(data).hexdigest()
    return planner


def _read_package(path, zf, data, collect, columns_left):
    """The :class:`Planner` of the open package ``zf`` (:func:`read_planner`'s work)."""
    tally = Tally()  # elements and defined names of every part, as they are scanned
    parts = list(xml_parts(zf))
    later = [(info, by_name) for info, by_name in parts if is_worksheet(info.filename)]
    styles, strings = check_xml_parts(
        path, zf, [p for p in parts if not is_worksheet(p[0].filename)], tally
    )
    try:  # every part openpyxl reads here has passed the scan; no worksheet is read yet
        strings_of = strings_in_part(path, zf, tally)
        book = open_book(path, data, styles, strings, strings_of, tally.parts)
        optional, cells = _locate(path, book, columns_left)
    except PlannerError:  # a bound the worksheets break is reported first, then this refusal
        check_xml_parts(path, zf, later, tally)
        raise
    with warnings.catch_warnings():  # "marked as a date but ... outside the limits"
        warnings.simplefilter("ignore")  # such a cell reads #VALUE!, refused by name
        cells.read(*grab(path, zf, book, cells.wanted, later, tally))
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
        fail(path, f"could not be read as a workbook ({one_line(exc)})")


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
        fail(
            path,
            "is not a training-run planner: it has none of the planner's defined names "
            "(scenario_name, total_params, ...)",
        )
    if len(missing) > n_names / 2:  # another workbook that shares a few quantity names
        title = getattr(getattr(wb, "properties", None), "title", None)
        what = f" (it is titled {str(title)[:60]!r})" if title else ""
        fail(
            path,
            f"is not a training-run planner{what}: {len(missing)} of the planner's {n_names} "
            f"defined names are missing ({', '.join(missing[:4])}, ...)",
        )
    if missing:
        fail(
            path,
            f"is not a complete training-run planner: defined name(s) missing: "
            f"{', '.join(missing)}",
        )
    return optional


def _extras(wb):
    """{name: (sheet, (row, col))} of the single-cell names template_version, active_scenario."""
    extras = {}
    for name in ("template_version", "active_scenario"):
        found = destination(wb.defined_names.get(name))
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
        self.locations = {name: name_cells(path, book, name) for name in names}
        self.width = len(self.locations["scenario_name"][1])
        if columns_left is not None and self.width > columns_left:
            err = ColumnBudgetError(path, [Problem(f"has {self.width} scenario columns")])
            err.width = self.width
            raise err
        for name, (sheet, cells) in self.locations.items():
            if len(cells) != self.width:
                fail(
                    path,
                    f"defined name {name!r} spans {len(cells)} cells but scenario_name spans "
                    f"{self.width}: the scenario columns do not line up",
                    sheet,
                )
        self.extras = _extras(book)
        named = dict(self.locations)
        named.update({n: (sheet, [cell]) for n, (sheet, cell) in self.extras.items()})
        check_area(path, book, named)
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
        """Take the cells read (:func:`grab`)."""
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
        return CellRef(sheet, a1(*cells[k]))

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
