"""Bounds and grammar of an untrusted .xlsx package, beyond one part's own bounds.

The reader (:mod:`workbook_templates.reader`) scans every XML part once, bounded part by part;
this module holds what spans the package or reads what a spreadsheet shows:

- the package: zip entry names are unique (compared as OPC compares part names, ignoring
  case), each sheet entry of the workbook has its own part, and all parts together hold at
  most :data:`MAX_PACKAGE_ELEMENTS` XML elements and :data:`MAX_DEFINED_NAMES` defined names
  (:class:`Tally`, counted while the parts are scanned);
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

Refusals are :class:`PartError` (the reader names the file and the part) and
:class:`CellError` (it names the file, the sheet and the cell).
"""

from __future__ import annotations

import math
import re

from openpyxl.xml.constants import SHEET_MAIN_NS

__all__ = [
    "MAX_PACKAGE_ELEMENTS",
    "MAX_DEFINED_NAMES",
    "MAX_BOOK_PART_ELEMENTS",
    "MAX_ROW_CELLS",
    "MAX_ROW_ELEMENTS",
    "SHEET_ROWS",
    "PartError",
    "CellError",
    "Tally",
    "duplicate_entry",
    "shared_part",
    "number",
    "boolean",
    "string_index",
    "own_text",
    "StringText",
]

#: Most XML elements in all the parts of one package together. A planner holds about 16,000;
#: this leaves room for one part at the bound of one part (``MAX_PART_ELEMENTS``, 1,000,000)
#: and as much again, and is scanned in about 2 s. Fifty parts each just under the bound of
#: one part (332 kB of zip) took 40 s and were accepted.
MAX_PACKAGE_ELEMENTS = 2_000_000
#: Most defined names in a package. A planner has about 190; openpyxl holds each in an object
#: of about 1 kB, so 10,000 take about 10 MB (725,000 names, a 2 MB file, took 590 MB and
#: 18 s before this bound).
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

    def fits(self, elements, names):
        """True when ``elements`` and ``names`` more stay within both bounds."""
        return (
            self.elements + elements <= MAX_PACKAGE_ELEMENTS
            and self.names + names <= MAX_DEFINED_NAMES
        )

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
