"""Read filled training-run planners back, safely, through their defined names.

A filled ``training-run-planner.xlsx`` comes from outside (a team fills a copy and sends it
on), so it is treated as untrusted input:

1. the file must be a regular file no larger than a size limit, checked before anything is
   parsed; it is read once into memory and never opened for writing;
2. it must be a valid zip (every member passes its CRC check) whose declared uncompressed size
   stays under a limit, in total and for each part, checked before anything is decompressed
   (zip bombs), with ``[Content_Types].xml`` and ``xl/workbook.xml``; an OLE file is an
   encrypted (password-protected) workbook or an Excel 97-2003 one, and is named as such;
3. macro-enabled workbooks are refused: ``.xlsm``/``.xltm``/``.xlam`` names, a
   ``vbaProject.bin`` member, or a macro content type (VBA project, Excel 4.0 macro sheets);
4. every XML part, whatever its name, is parsed first with ``defusedxml`` with document
   type declarations forbidden, so an entity-expansion bomb ("billion laughs") or external
   entity is refused before openpyxl sees the file; the parse clears elements as it goes and
   refuses a part past :data:`MAX_PART_ELEMENTS` elements, so memory stays flat; openpyxl
   itself must be using ``defusedxml`` too (:func:`check_defusedxml`);
   A text (``<t>``) over Excel's cell limit, :data:`MAX_CELL_TEXT_CHARS`, is refused too;
5. openpyxl loads it read-only twice: once for the formulas (to see which cells hold
   formulas) and once for the values a spreadsheet last saved (``data_only=True``); both are
   closed by the reader, never left to a finaliser;
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
uncertainties) reads with those inputs blank; ``Planner.missing_optional`` names them.

Every problem is a :class:`Problem` (sheet, cell, message) gathered in a
:class:`PlannerError` that names the file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import math
import os
import re
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import defusedxml
import defusedxml.ElementTree as DefusedET
import openpyxl
import openpyxl.xml.functions
from openpyxl.utils.cell import range_boundaries
from openpyxl.utils.datetime import from_excel

from udfs.plan import REQUIRED
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS
from udfs.validation import is_blank

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
#: Longest text of one input cell (scenario name, owner, accelerator name, status), in
#: characters: a name is a few words; 255 is what Excel allows in a sheet name's cousins (a
#: defined name, a chart title) and keeps every table of the hand-off readable. A longer text
#: is refused at its cell, so the workbook and every CSV file carry the same text.
MAX_TEXT_CHARS = 255
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
                   "approval_ref", "approval_date", "pricing_basis", "other_costs_usd")  # fmt: skip


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

    def describe(self):
        lines = []
        for p in self.problems:
            where = f"{p.where}: " if p.where else ""
            message = " ".join(str(p.message).splitlines())  # one line per problem, always
            lines.append(f"{self.path}: {where}{message}")
        return "\n".join(lines)


class ColumnBudgetError(PlannerError):
    """A file whose scenario columns would take a run over its total (``columns_left``)."""


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
    try:
        with open(path, "rb") as fh:  # read-only: a source file is never written
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


def _scan_part(path, zf, info):
    """Parse one XML part with defusedxml, DTDs forbidden, within the element bound.

    Each element is cleared when it ends and its parent lets go of its children, so memory
    stays flat whatever the part holds (attributes are read at the start); past
    :data:`MAX_PART_ELEMENTS` the part is refused.
    Returns the content types the part declares (for ``[Content_Types].xml``).
    """
    name = info.filename
    ctypes = []
    count = 0
    stack = []

    def long_run():
        _part_problem(
            path,
            name,
            f"holds over {MAX_XML_RUN_BYTES:,} bytes without an XML tag (a text, attribute or "
            "comment far longer than any spreadsheet writes)",
        )

    with zf.open(info) as raw:
        fh = _RunBound(raw, long_run)
        for event, elem in DefusedET.iterparse(fh, events=("start", "end"), forbid_dtd=True):
            if event == "start":
                count += 1
                if count > MAX_PART_ELEMENTS:
                    _part_problem(
                        path,
                        name,
                        f"holds over {MAX_PART_ELEMENTS:,} XML elements, over the limit for "
                        "one part (an XML bomb or not a planner)",
                    )
                if len(stack) >= MAX_XML_DEPTH:
                    _part_problem(
                        path,
                        name,
                        f"nests XML elements over {MAX_XML_DEPTH} deep, over the limit (an "
                        "XML bomb or not a planner)",
                    )
                if elem.tag in (_CT_NS + "Override", _CT_NS + "Default"):
                    ctypes.append(elem.get("ContentType", "").lower())
                stack.append(elem)
                continue
            stack.pop()
            if elem.tag.endswith("}t") and elem.text and len(elem.text) > MAX_CELL_TEXT_CHARS:
                _part_problem(
                    path,
                    name,
                    f"holds a text of {len(elem.text):,} characters, over Excel's limit of "
                    f"{MAX_CELL_TEXT_CHARS:,} for one cell (no spreadsheet saves one)",
                )
            elem.clear()
            if stack:
                # Drop the parent's children: the finished ones, and those the parser has
                # already built ahead of these events (still referenced by the events).
                del stack[-1][:]
    return ctypes


def _check_xml_parts(path, zf):
    """Parse every XML part with defusedxml, bounded; refuse macro content types.

    Every part that is XML by name (``.xml``, ``.rels``, ``.vml``) or by its first bytes is
    parsed, whatever its extension, since openpyxl follows the package's relationships to
    parts of any name. Each part's expanded size and element count are bounded. VML
    drawings (legacy comments) are often not well-formed and openpyxl does not parse them:
    a parse error there is not a problem, a document type declaration is.
    """
    for info in zf.infolist():
        name = info.filename
        if info.is_dir():
            continue
        by_name = name.lower().endswith((".xml", ".rels"))
        if not by_name and not _looks_like_xml(zf, info):
            continue
        try:
            ctypes = _scan_part(path, zf, info)
        except defusedxml.DefusedXmlException as exc:
            _fail(
                path,
                f"contains unsafe XML in {name} ({type(exc).__name__}: document type or "
                "entity declarations, as in an XML bomb); refused",
            )
        except DefusedET.ParseError as exc:
            if not by_name:
                continue  # not XML openpyxl reads (a VML drawing, a binary that starts "<")
            _fail(path, f"is a corrupt .xlsx: {name} is not well-formed XML ({_flat(exc)})")
        except (zipfile.BadZipFile, EOFError, OSError, RuntimeError) as exc:
            _fail(path, f"is a corrupt or truncated .xlsx ({name}: {_flat(exc)})")
        if name == "[Content_Types].xml":
            for ctype in ctypes:
                if any(m in ctype for m in _MACRO_CONTENT_TYPES):
                    _fail(path, f"is a macro-enabled workbook (content type {ctype}); refused")


def _load(path, data, data_only):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "extension not supported" and the like
            return openpyxl.load_workbook(
                io.BytesIO(data),
                read_only=True,
                data_only=data_only,
                keep_vba=False,
                keep_links=False,
            )
    except defusedxml.DefusedXmlException as exc:
        _fail(path, f"contains unsafe XML ({type(exc).__name__}); refused")
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds on bad files
        _fail(path, f"could not be read as a workbook ({_one_line(exc)})")


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


def _grab(wb, wanted, formulas=False):
    """{sheet: {(row, col): value}} for the wanted cells, one pass per sheet.

    With ``formulas`` the values are ``(value, is_formula)``, from the cell's data type (text
    that merely starts with "=" is not a formula).
    """
    out = {}
    for sheet, cells in wanted.items():
        rows = [r for r, _ in cells]
        cols = [c for _, c in cells]
        min_row, max_row, min_col, max_col = min(rows), max(rows), min(cols), max(cols)
        values = {}
        ws = wb[sheet]
        for r, row in enumerate(
            ws.iter_rows(
                min_row=min_row,
                max_row=max_row,
                min_col=min_col,
                max_col=max_col,
            ),
            start=min_row,
        ):
            for c, cell in enumerate(row, start=min_col):
                if (r, c) in cells:
                    if formulas:
                        values[(r, c)] = (cell.value, cell.data_type == "f")
                    else:
                        values[(r, c)] = cell.value
        out[sheet] = values
    return out


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


#: Control characters a worksheet cannot hold (openpyxl's ILLEGAL_CHARACTERS_RE): tab,
#: newline and carriage return are text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


#: The largest number a text input (a name, an owner, a reference) may hold, read as its text.
MAX_TEXT_NUMBER = 1e15


def _text(value):
    if isinstance(value, bool):
        return None, "must be text, not TRUE/FALSE"
    if isinstance(value, str):
        bad = _CONTROL.search(value)
        if bad:  # a workbook cannot hold it (Excel writes it as _x0001_; openpyxl refuses it)
            return None, (
                f"holds the control character \\x{ord(bad.group()):02x}, which a workbook "
                "cannot hold; retype the text"
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
        _check_xml_parts(path, zf)
    formulas_wb = _load(path, data, data_only=False)
    values_wb = None
    try:  # both workbooks closed here, whatever happens: never by a finaliser
        values_wb = _load(path, data, data_only=True)
        planner = _read(path, formulas_wb, values_wb, len(data), collect, columns_left)
        planner.sha256 = hashlib.sha256(data).hexdigest()
        return planner
    except PlannerError:
        raise
    except defusedxml.DefusedXmlException as exc:
        _fail(path, f"contains unsafe XML ({type(exc).__name__}); refused")
    except Exception as exc:  # noqa: BLE001 - a malformed sheet part surfaces while reading
        _fail(path, f"could not be read as a workbook ({_one_line(exc)})")
    finally:
        formulas_wb.close()
        if values_wb is not None:
            values_wb.close()


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

    def __init__(self, path, formulas_wb, values_wb, names, columns_left=None):
        self.locations = {name: _name_cells(path, formulas_wb, name) for name in names}
        self.width = len(self.locations["scenario_name"][1])
        if columns_left is not None and self.width > columns_left:
            raise ColumnBudgetError(path, [Problem(f"has {self.width} scenario columns")])
        for name, (sheet, cells) in self.locations.items():
            if len(cells) != self.width:
                _fail(
                    path,
                    f"defined name {name!r} spans {len(cells)} cells but scenario_name spans "
                    f"{self.width}: the scenario columns do not line up",
                    sheet,
                )
        self.extras = _extras(formulas_wb)
        named = dict(self.locations)
        named.update({n: (sheet, [cell]) for n, (sheet, cell) in self.extras.items()})
        _check_area(path, formulas_wb, named)
        wanted = {}
        for sheet, cells in self.locations.values():
            wanted.setdefault(sheet, set()).update(cells)
        for sheet, cell in self.extras.values():
            wanted.setdefault(sheet, set()).add(cell)
        with warnings.catch_warnings():  # "marked as a date but ... outside the limits"
            warnings.simplefilter("ignore")  # such a cell reads #VALUE!, refused by name
            self.formulas = _grab(formulas_wb, wanted, formulas=True)
            self.values = _grab(values_wb, wanted)

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
    if kind == "number":
        value, error = _number(v)
        if not error and name in _WHOLE and value != math.floor(value):
            error = f"must be a whole number (got {value:.15g})"
    elif kind == "date":
        value, error = _date(v, epoch)
    else:
        value, error = _text(v)
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


def _own_runs(path, values_wb, problems):
    """The team's runs typed on the "Our runs" sheet (issue 17), or None (no sheet: an older
    planner, or no row typed). A bad row is a Problem naming the sheet, row and column."""
    from udfs.validation import CommandError

    from .planner.own_runs import TITLE, read_rows

    if TITLE not in values_wb.sheetnames:
        return None
    from udfs import own_runs

    try:
        return own_runs.from_rows(read_rows(values_wb[TITLE]), f"sheet {TITLE!r}")
    except CommandError as err:
        problems.append(Problem(str(err), TITLE))
        return None


def _read(path, formulas_wb, values_wb, size, collect, columns_left=None):
    optional = _check_names(path, formulas_wb)
    present = [n for n in (*INPUT_NAMES, *OUTPUT_NAMES) if n not in optional]
    cells = _Cells(path, formulas_wb, values_wb, present, columns_left)
    epoch = getattr(values_wb, "epoch", None)
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
    own_runs = _own_runs(path, values_wb, problems)
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
