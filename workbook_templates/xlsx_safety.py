"""The first room of reading a planner: an untrusted .xlsx package made safe to read.

Nothing here knows what a planner is. :func:`read_bytes` and :func:`check_zip` take a file
from outside (a team fills a copy and sends it on) and refuse, before anything is
decompressed or parsed:

1. a file that is not a regular file or is over a size limit; it is read once into memory
   and never opened for writing;
2. a package that is not a valid zip (every member passes its CRC check, no two entries
   share a name, compared as OPC compares part names, ignoring case), whose declared
   uncompressed size is over a limit in total or for one part (zip bombs), or without
   ``[Content_Types].xml`` and ``xl/workbook.xml``; an OLE file is an encrypted
   (password-protected) workbook or an Excel 97-2003 one, and is named as such;
3. macro-enabled workbooks: ``.xlsm``/``.xltm``/``.xlam`` names, a ``vbaProject.bin``
   member, or a macro content type (VBA project, Excel 4.0 macro sheets).

Then :func:`check_part` scans each XML part once, whatever its name (:func:`xml_parts`),
by a bounded pass (:class:`Scan`): expat with defusedxml's refusals (document type
declarations, entities, external references), so an entity-expansion bomb ("billion
laughs") or an external entity is refused before openpyxl sees the file. No tree is kept;
a part past :data:`MAX_PART_ELEMENTS` elements or :data:`MAX_XML_DEPTH` levels, a run of
:data:`MAX_XML_RUN_BYTES` bytes without a tag, or a ``<t>`` over Excel's cell limit
(:data:`MAX_CELL_TEXT_CHARS`) is refused, so memory stays flat. All parts together hold at
most :data:`MAX_PACKAGE_ELEMENTS` elements and :data:`MAX_DEFINED_NAMES` defined names
(:class:`Tally`). A reader of the part (the ``rows`` hook: the styles, the shared strings,
a worksheet's named rows, :mod:`workbook_templates.named_cells`) is handed the scan's events.

The same module holds the rules of what a spreadsheet shows, shared by the next room:

- a worksheet's rows: only the ``<row>`` children of ``<sheetData>`` are cells, each row
  once and in order (numbered 1 to :data:`SHEET_ROWS`); one row holds at most
  :data:`MAX_ROW_CELLS` cells and :data:`MAX_ROW_ELEMENTS` elements, checked as it is
  built, before anything reads it;
- a cell's saved value, read by the spreadsheet grammar (:func:`number`): a number is ASCII
  digits with an optional sign, one decimal point and an exponent, and finite; a boolean is
  0 or 1; a shared string's index is ASCII digits within the table (not Python's ``int()``,
  which takes ``1_024``, Arabic-Indic digits and ``NaN``);
- a string's text as Excel shows it (:func:`own_text`, :class:`StringText`): the ``<t>`` of
  a ``<si>`` or ``<is>`` and the ``<t>`` of its rich-text runs ``<r>``, never its phonetic
  runs ``<rPh>``.

A refused file is a :class:`PlannerError` (one :class:`Problem` per line, naming the file,
and the sheet and cell when known); inside a part's scan :class:`PartError` (the caller
names the file and the part) and :class:`CellError` (the sheet and the cell).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path
from xml.parsers import expat

import defusedxml
import defusedxml.ElementTree as DefusedET
import openpyxl
import openpyxl.xml.functions
from openpyxl.xml.constants import SHEET_MAIN_NS

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MAX_UNCOMPRESSED_BYTES",
    "MAX_PART_BYTES",
    "MAX_PART_ELEMENTS",
    "MAX_XML_DEPTH",
    "MAX_PARTS",
    "MAX_CELL_TEXT_CHARS",
    "MAX_XML_RUN_BYTES",
    "MAX_PACKAGE_ELEMENTS",
    "MAX_DEFINED_NAMES",
    "MAX_BOOK_PART_ELEMENTS",
    "MAX_ROW_CELLS",
    "MAX_ROW_ELEMENTS",
    "SHEET_ROWS",
    "PartError",
    "read_failures",
    "CellError",
    "Tally",
    "duplicate_entry",
    "shared_part",
    "number",
    "boolean",
    "string_index",
    "own_text",
    "StringText",
    "Problem",
    "PlannerError",
    "check_defusedxml",
    "read_bytes",
    "check_zip",
    "xml_parts",
    "is_worksheet",
    "check_part",
    "scan_part",
    "Scan",
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
_CT_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"

#: Most XML elements in all the parts of one package together. A planner holds about 16,000;
#: this leaves room for one part at the bound of one part (``MAX_PART_ELEMENTS``, 1,000,000)
#: and as much again, and is scanned in about 2 s. Fifty parts each just under the bound of
#: one part (332 kB of zip) would take about 40 s.
MAX_PACKAGE_ELEMENTS = 2_000_000
#: Most defined names in a package. A planner has about 190; openpyxl holds each in an object
#: of about 1 kB, so 10,000 take about 10 MB (725,000 names, a 2 MB file, would take about
#: 590 MB and 18 s).
MAX_DEFINED_NAMES = 10_000
#: Most XML elements in each part openpyxl reads into objects (the manifest, the workbook
#: part and its relationships, the document properties): :data:`MAX_DEFINED_NAMES` names and
#: as many other elements (sheets, views). A planner's workbook part holds about 250;
#: openpyxl builds an object of about 1 kB from each element, so 900,000 workbook views took
#: 481 MB and 40 s, 600,000 content types 411 MB and 35 s.
MAX_BOOK_PART_ELEMENTS = 2 * MAX_DEFINED_NAMES
#: Most cells (``<c>``) in one row: a worksheet's columns, A to XFD, in Excel and LibreOffice.
#: A row is built as a small tree before its cells are read; a row of 999,000 empty cells
#: (a 134 kB file) took 685 MB.
MAX_ROW_CELLS = 16_384
#: Most XML elements in one row, the cells' children counted: four per cell (``<c>``, a
#: formula ``<f>``, a value ``<v>``, or an inline string's ``<is>`` and ``<t>``) in a row of
#: :data:`MAX_ROW_CELLS` cells. Bounds the tree of one row (about 10 MB) whatever its cells
#: hold.
MAX_ROW_ELEMENTS = 4 * MAX_ROW_CELLS
#: Rows of a worksheet, 1 to 1,048,576, in Excel and LibreOffice: a row numbered outside
#: them is no row a spreadsheet shows.
SHEET_ROWS = 1_048_576

_NS = "{" + SHEET_MAIN_NS + "}"
#: A number as a spreadsheet saves it in ``<v>``: an optional sign, ASCII digits with at most
#: one decimal point, and an optional exponent.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_GRAMMAR = "ASCII digits 0-9 with an optional sign, one decimal point and an exponent"


class PartError(Exception):
    """A part that breaks a rule; ``message`` says which (the reader names file and part)."""

    def __init__(self, message, part=None):
        super().__init__(message)
        self.message = message
        self.part = part  # when the part is not the one being scanned


class CellError(PartError):
    """A cell whose saved value breaks the spreadsheet grammar; ``cell`` is its reference."""

    def __init__(self, cell, message):
        super().__init__(message)
        self.cell = cell


class Tally:
    """Elements and defined names counted over every part of one package, as they are
    scanned; :meth:`add` refuses the part that takes either over its bound."""

    def __init__(self):
        self.elements = 0
        self.names = 0
        self.parts = {}  # {part: elements} of each part scanned

    def add(self, elements, names=0):
        self.elements += elements
        self.names += names
        if self.elements > MAX_PACKAGE_ELEMENTS:
            raise PartError(
                f"takes the package over {MAX_PACKAGE_ELEMENTS:,} XML elements in all its "
                "parts, over the limit for one workbook (a planner holds about 16,000)"
            )
        if self.names > MAX_DEFINED_NAMES:
            raise PartError(
                f"takes the package over {MAX_DEFINED_NAMES:,} defined names, over the limit "
                "for one workbook (a planner has about 190)"
            )


def is_defined_name(tag):
    """True for a ``definedName`` element (any namespace: counted as a spreadsheet might)."""
    return tag == "definedName" or tag.endswith("}definedName")


def duplicate_entry(names):
    """The first zip entry name that repeats an earlier one, compared ignoring case (as OPC
    compares part names), else None."""
    seen = set()
    for name in names:
        key = name.casefold()
        if key in seen:
            return name
        seen.add(key)
    return None


def shared_part(sheets):
    """``(first sheet, second sheet, part)`` of two sheet entries whose relationships lead to
    one part, else None; ``sheets`` is ``[(title, part), ...]``."""
    owner = {}
    for title, part in sheets:
        key = part.casefold()
        if key in owner:
            return owner[key], title, part
        owner[key] = title
    return None


def number(text, cell):
    """The number a spreadsheet reads from ``<v>text</v>`` (an int when written without a
    point or exponent), else :class:`CellError`."""
    if _NUMBER.fullmatch(text) is None:
        raise CellError(
            cell,
            f"holds the saved number {_shown(text)}, which is not a number as a spreadsheet "
            f"reads one ({_GRAMMAR}); save the file from a spreadsheet again",
        )
    value = float(text)
    if not math.isfinite(value):
        raise CellError(
            cell, f"holds the saved number {_shown(text)}, beyond a spreadsheet's numbers"
        )
    if _DIGITS.fullmatch(text.lstrip("+-")):
        return int(text)
    return value


def boolean(text, cell):
    """TRUE/FALSE of a boolean cell's ``<v>``: 1 or 0, else :class:`CellError`."""
    if text not in ("0", "1"):
        raise CellError(cell, f"holds the saved boolean {_shown(text)}, not 0 or 1")
    return text == "1"


def string_index(text, count, cell):
    """The shared string index of ``<v>text</v>``: ASCII digits below ``count``."""
    if _DIGITS.fullmatch(text) is None or int(text) >= count:
        raise CellError(
            cell,
            f"refers to shared string {_shown(text)}, not one of the {count:,} the workbook holds",
        )
    return int(text)


def _shown(text):
    return repr(text if len(text) <= 40 else text[:37] + "...")


_SI, _T, _R = _NS + "si", _NS + "t", _NS + "r"
_SI_EXPAT, _T_EXPAT, _R_EXPAT = (name[1:] for name in (_SI, _T, _R))


def own_text(node):
    """The text of a string element (``<si>`` or ``<is>``, a tree) as Excel shows it: its
    ``<t>`` and the ``<t>`` of each rich-text run ``<r>``, in order; phonetic runs
    (``<rPh>``), run properties and anything else left out. A ``<t>``'s text is its own
    character data (the text around any element inside it)."""
    pieces = []
    for child in node:
        if child.tag == _T:
            pieces.append(_t_text(child))
        elif child.tag == _R:
            pieces.extend(_t_text(t) for t in child if t.tag == _T)
    return "".join(pieces)


def _t_text(t):
    return (t.text or "") + "".join(c.tail or "" for c in t)


class StringText:
    """:func:`own_text` of each ``<si>`` child of the root, read from a scan's events
    (expat's ``namespace}local`` tags), without a tree. ``strings`` gets each one's text;
    a text over ``limit`` characters is refused as it grows."""

    def __init__(self, limit):
        self.limit = limit
        self.strings = []
        self.pieces = None  # of the open <si>
        self.length = 0
        self.stack = []  # tags from the root, and whether each open element's data counts
        self.counts = []

    def start(self, tag, depth):
        self.stack[depth - 1 :] = [tag]
        counts = (
            self.pieces is not None
            and tag == _T_EXPAT
            and (depth == 3 or (depth == 4 and self.stack[2] == _R_EXPAT))
        )
        self.counts.append(counts)
        if depth == 2 and tag == _SI_EXPAT:
            self.pieces, self.length = [], 0

    def data(self, text):
        if self.counts and self.counts[-1]:
            self.length += len(text)
            if self.length > self.limit:
                raise PartError(
                    f"holds a string of over {self.limit:,} characters (its runs together), "
                    "over Excel's limit for one cell"
                )
            self.pieces.append(text)

    def end(self, tag, depth):
        self.counts.pop()
        if depth == 2 and tag == _SI_EXPAT and self.pieces is not None:
            self.strings.append("".join(self.pieces))
            self.pieces = None


# ---------------------------------------------------------------------------------------------
# Refusals
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
            return f"{quote_sheet(self.sheet)}!{self.cell}"
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


def flat(exc, limit=200):
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(exc, limit=200):
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


def fail(path, message, sheet=None, cell=None):
    """Raise the :class:`PlannerError` of one problem."""
    raise PlannerError(path, [Problem(message, sheet, cell)])


@contextlib.contextmanager
def read_failures(path):
    """Whatever reading the workbook at ``path`` raises, as one line naming the file: a
    :class:`PlannerError` as it is, unsafe XML refused, anything else (openpyxl raises many
    kinds on a bad file) "could not be read as a workbook"."""
    try:
        yield
    except PlannerError:
        raise
    except defusedxml.DefusedXmlException as exc:
        fail(path, f"contains unsafe XML ({type(exc).__name__}); refused")
    except Exception as exc:  # noqa: BLE001 - openpyxl raises many kinds on bad files
        fail(path, f"could not be read as a workbook ({one_line(exc)})")


def quote_sheet(title):
    """A sheet's title as a reference writes it: quoted (a quote doubled) unless plain."""
    plain = title.replace("_", "").replace(".", "").isalnum() and not title[:1].isdigit()
    return title if plain else "'" + title.replace("'", "''") + "'"


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


def read_bytes(path, max_bytes):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        fail(path, "no such file")
    except OSError as exc:
        fail(path, f"cannot be read: {exc.strerror or exc}")
    if not stat.S_ISREG(st.st_mode):
        fail(path, "is not a regular file")
    if st.st_size > max_bytes:
        fail(
            path,
            f"is {st.st_size:,} bytes, over the size limit of {max_bytes:,} bytes "
            "(raise it with --max-size-mb if the file is genuine)",
        )
    suffix = Path(path).suffix.lower()
    if suffix in _MACRO_SUFFIXES:
        fail(path, f"is a macro-enabled workbook ({suffix}); save it as a plain .xlsx")
    if suffix in _OTHER_SUFFIXES:
        fail(path, f"is {_OTHER_SUFFIXES[suffix]}")
    try:  # read-only, never waiting on a writer: a path made a FIFO since its stat is refused
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with open(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                fail(path, "is not a regular file")
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        fail(path, f"cannot be read: {exc.strerror or exc}")
    if len(data) > max_bytes:  # grew after stat
        fail(path, f"is over the size limit of {max_bytes:,} bytes")
    return data


def check_zip(path, data):
    """Validate the package; return the open ZipFile."""
    if data.startswith(_OLE_MAGIC):
        if _ENCRYPTED_STREAM in data:
            fail(
                path,
                "is encrypted (password-protected): save an unprotected copy (remove the "
                "password to open) and give that",
            )
        fail(path, "is an Excel 97-2003 (.xls) or other OLE file, not an .xlsx; save it as .xlsx")
    if not data.startswith(b"PK"):
        fail(path, "is not an .xlsx workbook (not a zip file)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        fail(path, f"is not a valid .xlsx workbook: the zip is corrupt or truncated ({flat(exc)})")
    except Exception as exc:  # noqa: BLE001 - any failure here means an unreadable zip
        fail(path, f"is not a valid .xlsx workbook ({one_line(exc)})")
    try:
        _check_members(path, zf)
    except BaseException:
        zf.close()  # closed here, not by a finaliser
        raise
    return zf


def _check_members(path, zf):
    infos = zf.infolist()
    if len(infos) > MAX_PARTS:
        fail(
            path,
            f"holds {len(infos):,} parts, over the limit of {MAX_PARTS:,} (a planner has about "
            "30); refused",
        )
    names = {i.filename for i in infos}
    repeated = duplicate_entry(i.filename for i in infos)
    if repeated is not None:
        fail(
            path,
            f"holds two zip entries named {repeated!r} (names compared ignoring case, as "
            "Excel compares part names): readers disagree on which is the part; refused",
        )
    total = sum(i.file_size for i in infos)
    if total > MAX_UNCOMPRESSED_BYTES:
        fail(
            path,
            f"unpacks to {total:,} bytes, over the limit of {MAX_UNCOMPRESSED_BYTES:,} "
            "(a zip bomb or not a planner)",
        )
    for info in infos:  # before anything is decompressed
        if info.file_size > MAX_PART_BYTES:
            part_problem(
                path,
                info.filename,
                f"expands to {info.file_size:,} bytes, over the limit of {MAX_PART_BYTES:,} "
                "for one part (a zip or XML bomb, or not a planner)",
            )
    for info in infos:
        if info.filename.rsplit("/", 1)[-1].lower() == "vbaproject.bin":
            fail(path, f"is a macro-enabled workbook (it contains {info.filename}); refused")
    if "[Content_Types].xml" not in names or "xl/workbook.xml" not in names:
        fail(path, "is not an Excel workbook (no xl/workbook.xml in the package)")
    try:
        bad = zf.testzip()
    except Exception as exc:  # noqa: BLE001 - zlib errors, truncated members...
        fail(path, f"is a corrupt or truncated .xlsx ({one_line(exc)})")
    if bad is not None:
        fail(path, f"is a corrupt .xlsx: member {bad} fails its CRC check")


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


def part_problem(path, name, message):
    fail(path, f"part {name}: {message}; refused")


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


class Scan:
    """One bounded pass over one XML part: expat, the parser defusedxml wraps, with
    defusedxml's refusals (document type declarations, entities, external references).

    Elements are counted and their depth bounded as they open; no tree is kept (memory stays
    flat whatever the part holds). A ``<t>``'s text is measured as it arrives. With ``rows``
    (a reader of the part: :mod:`workbook_templates.named_cells`' ``Styles``, ``Strings``,
    ``Rows``), the part is read in the same pass. Elements and defined names are counted into
    the package's ``tally`` (:class:`Tally`) as they open.
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
        if tag[-11:] == "definedName" and is_defined_name(tag):
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
        part_problem(self.path, self.name, message)

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


def scan_part(path, zf, info, rows=None, tally=None):
    """Scan one XML part by the bounded streaming pass (:class:`Scan`); the content types it
    declares. Its elements and defined names count into the package's ``tally``; ``rows``,
    the part's reader, is handed its events."""
    return Scan(path, info.filename, rows, tally).run(zf, info)


CONTENT_TYPES = "[Content_Types].xml"


def xml_parts(zf):
    """(info, by name) of each part to scan: every part that is XML by name (``.xml``,
    ``.rels``) or by its first bytes, whatever its extension, since openpyxl follows the
    package's relationships to parts of any name."""
    for info in zf.infolist():
        if info.is_dir():
            continue
        by_name = info.filename.lower().endswith((".xml", ".rels"))
        if by_name or _looks_like_xml(zf, info):
            yield info, by_name


def is_worksheet(name):
    """True for a part openpyxl and spreadsheets name as a worksheet: scanned last, once
    the workbook says which of them hold named cells (read in the same scan)."""
    return name.startswith("xl/worksheets/") and name.lower().endswith(".xml")


def check_part(path, zf, info, by_name, rows=None, tally=None):
    """Scan one part, bounded; refuse unsafe XML and macro content types.

    Each part's expanded size and element count are bounded, and the package's (``tally``).
    VML drawings (legacy comments) are often not well-formed and openpyxl does not parse
    them: a parse error in a part that is not XML by name is not a problem, a document type
    declaration is. What the part's reader (``rows``) refuses names the part, or the sheet
    and cell; any other failure while reading it names the part.
    """
    name = info.filename
    try:
        ctypes = scan_part(path, zf, info, rows, tally)
    except CellError as exc:
        fail(path, exc.message, getattr(rows, "sheet", None), exc.cell)
    except PartError as exc:
        part_problem(path, name, exc.message)
    except defusedxml.DefusedXmlException as exc:
        fail(
            path,
            f"contains unsafe XML in {name} ({type(exc).__name__}: document type or "
            "entity declarations, as in an XML bomb); refused",
        )
    except (DefusedET.ParseError, expat.ExpatError) as exc:
        if not by_name and not getattr(rows, "worksheet", False):
            return  # not XML openpyxl reads (a VML drawing, a binary that starts "<")
        fail(path, f"is a corrupt .xlsx: {name} is not well-formed XML ({flat(exc)})")
    except (zipfile.BadZipFile, EOFError, OSError, RuntimeError) as exc:
        fail(path, f"is a corrupt or truncated .xlsx ({name}: {flat(exc)})")
    except PlannerError:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed part surfaces in its reader
        part_problem(path, name, f"could not be read ({one_line(exc)})")
    if name == CONTENT_TYPES:
        for ctype in ctypes:
            if any(m in ctype for m in _MACRO_CONTENT_TYPES):
                fail(path, f"is a macro-enabled workbook (content type {ctype}); refused")
