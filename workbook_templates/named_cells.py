"""The second room of reading a planner: the cells its defined names point at.

The package has passed :mod:`workbook_templates.xlsx_safety`'s checks part by part; this
module reads, in the same bounded scan of each part (the ``rows`` hook of
:func:`~workbook_templates.xlsx_safety.check_part`):

- the stylesheet's date formats (:class:`Styles`; a malformed one refused naming the part)
  and the shared strings as Excel shows them (:class:`Strings`: rich-text runs read,
  phonetic runs left out), in :func:`check_xml_parts`;
- the workbook-level parts (manifest, ``workbook.xml`` with the defined names and its
  relationships, core document properties) by openpyxl's own readers (:func:`read_book`),
  each at most :data:`~workbook_templates.xlsx_safety.MAX_BOOK_PART_ELEMENTS` elements,
  through ``defusedxml``; openpyxl never loads a worksheet, and the custom document
  properties are not read; two sheet entries on one part are refused (:func:`open_book`);
- the defined names' cells, bounded before any cell is read: one name spans at most
  :data:`MAX_SCENARIO_COLUMNS` cells of one row (:func:`name_cells`), all of them together
  at most :data:`MAX_CELLS_READ` (the box the reader walks, :func:`check_area`);
- on the worksheets that hold named cells, the rows of those cells (:class:`Rows`, in
  :func:`grab`: only the rows of ``<sheetData>``, each at most
  :data:`~workbook_templates.xlsx_safety.MAX_ROW_CELLS` cells and
  :data:`~workbook_templates.xlsx_safety.MAX_ROW_ELEMENTS` elements, read by
  :class:`CellReader` with the saved values in the spreadsheet grammar, for what was typed
  and for the value last saved). The worksheets are scanned last, once the workbook says
  which cells are wanted.

What a planner's names mean is :mod:`workbook_templates.reader`'s.
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from xml.etree import ElementTree

import openpyxl
from openpyxl.formula.translate import Translator
from openpyxl.utils.cell import column_index_from_string, range_boundaries
from openpyxl.utils.datetime import from_excel, from_ISO8601
from openpyxl.worksheet.formula import ArrayFormula, DataTableFormula
from openpyxl.xml.constants import SHEET_MAIN_NS

from . import xlsx_safety
from .xlsx_safety import (
    CONTENT_TYPES,
    MAX_BOOK_PART_ELEMENTS,
    MAX_CELL_TEXT_CHARS,
    MAX_ROW_CELLS,
    MAX_ROW_ELEMENTS,
    SHEET_ROWS,
    CellError,
    PartError,
    StringText,
    Tally,
    check_part,
    fail,
    own_text,
    part_problem,
)

__all__ = [
    "MAX_SCENARIO_COLUMNS",
    "MAX_CELLS_READ",
    "Styles",
    "Strings",
    "CellReader",
    "Rows",
    "Book",
    "check_xml_parts",
    "read_book",
    "open_book",
    "strings_in_part",
    "destination",
    "name_cells",
    "check_area",
    "grab",
    "a1",
]

CELL_TAG = f"{{{SHEET_MAIN_NS}}}c"
VALUE_TAG = f"{{{SHEET_MAIN_NS}}}v"
FORMULA_TAG = f"{{{SHEET_MAIN_NS}}}f"
INLINE_STRING = f"{{{SHEET_MAIN_NS}}}is"
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
_ROW = f"{SHEET_MAIN_NS}}}row"
_FORMULA = f"{SHEET_MAIN_NS}}}f"


def _et_name(name):
    """expat's ``namespace}local`` as ElementTree spells it, ``{namespace}local``."""
    return "{" + name if "}" in name else name


def _local(tag):
    return tag.rsplit("}", 1)[-1]


class Styles:
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
    """Builds one element at a time during a scan (:class:`Scan` hands it the events);
    :meth:`take` gets each element once its end tag is read."""

    builder = None
    depth = 0

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


class Strings:
    """The shared strings, read during the scan of their part as Excel shows them
    (:class:`~workbook_templates.xlsx_safety.StringText`: each ``<si>`` child of the root,
    its ``<t>`` and its rich-text runs' ``<t>``, phonetic runs left out), without a tree;
    ``_x005F_`` escapes undone as openpyxl undoes them. A string over
    :data:`MAX_CELL_TEXT_CHARS` characters, runs together, is refused."""

    def __init__(self):
        self.text = StringText(MAX_CELL_TEXT_CHARS)

    @property
    def strings(self):
        return [text.replace("x005F_", "") for text in self.text.strings]

    def start(self, tag, attrs, depth):
        self.text.start(tag, depth)

    def data(self, text):
        self.text.data(text)

    def end(self, tag, depth):
        self.text.end(tag, depth)


class CellReader:
    """The cells of a worksheet's rows as a spreadsheet reads them, as openpyxl's worksheet
    parser types them (``row``, ``column``, ``value``, ``data_type``, ``style_id``), written
    with openpyxl's public parts (its formula translator, its date conversions): only the
    ``<c>`` children of a row are cells; a saved value is read by the spreadsheet grammar
    (:func:`~workbook_templates.xlsx_safety.number`, ``boolean``, ``string_index``), not by
    Python's ``int()``; an inline string's text is its ``<t>`` and rich-text runs' ``<t>``
    (:func:`~workbook_templates.xlsx_safety.own_text`). A value outside the grammar is a
    :class:`~workbook_templates.xlsx_safety.CellError` naming the cell. With ``data_only``
    a formula cell reads as the value last saved, else as its formula text."""

    def __init__(self, shared_strings, epoch, date_formats, timedelta_formats):
        self.shared_strings = shared_strings
        self.epoch = epoch
        self.date_formats, self.timedelta_formats = date_formats, timedelta_formats
        self.data_only = False
        self.shared_formulae = {}  # {si: Translator} of each shared formula's first cell
        self.row_counter = self.col_counter = 0

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
                    a1(row, column), f"is written in row {self.row_counter}, not its own"
                )
            self.col_counter = column
        else:
            self.col_counter += 1
            row, column = self.row_counter, self.col_counter
        cell = a1(row, column)
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

    def parse_formula(self, element):
        """A formula cell's text: ``=`` and its formula; a shared formula's later cells
        translated from its first cell's text; an array or data-table formula as openpyxl's
        objects for them."""
        formula = element.find(FORMULA_TAG)
        kind = formula.get("t")
        value = "=" + (formula.text or "")
        if kind == "array":
            return ArrayFormula(ref=formula.get("ref"), text=value)
        if kind == "dataTable":
            return DataTableFormula(**formula.attrib)
        if kind == "shared":
            idx = formula.get("si")
            if idx in self.shared_formulae:
                return self.shared_formulae[idx].translate_formula(element.get("r"))
            if value != "=":
                self.shared_formulae[idx] = Translator(value, element.get("r"))
        return value

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
_CELL = CELL_TAG[1:]


class Rows(_Builder):
    """The rows of one worksheet that hold named cells, read during its scan (:class:`Scan`).

    Only the ``<row>`` children of the worksheet's one ``<sheetData>`` are rows (a row
    anywhere else, say in an extension list, is no cell a spreadsheet shows). Each row inside
    the box of the named cells is built as a small element tree, at most
    :data:`MAX_ROW_CELLS` cells and :data:`MAX_ROW_ELEMENTS` elements (checked as it is
    built), and given to openpyxl's worksheet parser (:class:`CellReader`) twice, once for
    what was typed (formula text) and once for the values last saved: the same cells, types
    and dates as two read-only loads gave, from one parse. Rows are taken as openpyxl's
    read-only worksheet takes them (a row number already passed is skipped; reading stops
    past the last row of the box); rows above the box are only built when they hold a shared
    formula, whose text later cells refer to. ``sheet`` is the sheet's title, for a cell's
    refusal.
    """

    worksheet = True  # a parse error is the part's, whatever its name (check_part)

    def __init__(self, book, box, sheet=None):
        self.sheet = sheet
        self.min_row, self.max_row, self.min_col, self.max_col = box
        self.parser = CellReader(
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


_STYLES = "xl/styles.xml"
_STRINGS = "xl/sharedStrings.xml"


def check_xml_parts(path, zf, parts, tally=None):
    """Scan ``parts`` ((info, by name) pairs) in order (:func:`check_part`), counting into
    the package's ``tally``; the :class:`Styles` and :class:`Strings` read on the way (None
    when not among them)."""
    tally = tally if tally is not None else Tally()
    styles = strings = None
    for info, by_name in parts:
        hook = None
        if info.filename == _STYLES:
            hook = styles = Styles()
        elif info.filename == _STRINGS:
            hook = strings = Strings()
        check_part(path, zf, info, by_name, hook, tally)
    return styles, strings


@dataclass
class Book:
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


def read_book(data, styles=None, strings=None, strings_of=None, sizes=None):
    """A :class:`Book` read by openpyxl's own readers (as ``load_workbook(read_only=True)``
    reads them, with the same errors), without opening any worksheet: the worksheets are
    read once, in the bounded scan (:func:`grab`). The shared strings are those read in
    the scan (``strings``) when the manifest names ``xl/sharedStrings.xml`` for them, else
    ``strings_of(part)``'s: never openpyxl's reader. ``sizes`` (``{part: elements}``, from
    the scan) bounds the parts openpyxl builds objects from (:func:`_check_book_part`); the
    custom document properties are not read. ``styles`` are the :class:`Styles` read in the
    scan of ``xl/styles.xml`` (None: the package has no stylesheet there, which is where
    openpyxl reads it, so no cell is shown as a date)."""
    from openpyxl.packaging.relationship import get_rels_path
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.xml.constants import ARC_CORE, SHARED_STRINGS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "extension not supported" and the like
        reader = ExcelReader(io.BytesIO(data), read_only=True, keep_vba=False,
                             data_only=False, keep_links=False)  # fmt: skip
        action = "read manifest"
        try:
            if sizes is not None:
                _check_book_part(CONTENT_TYPES, sizes, ())
            reader.read_manifest()
            if sizes is not None:  # the parts openpyxl builds objects from, each bounded
                book_part = _workbook_part(reader.package)
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
    dates, spans = styles.formats() if styles is not None else (set(), set())
    return Book(
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


def _workbook_part(package):
    """The workbook part the manifest names, as openpyxl's reader finds it (an override of a
    workbook content type, else ``xl/workbook.xml``, which every package here holds)."""
    from openpyxl.xml.constants import ARC_WORKBOOK, XLSM, XLSX, XLTM, XLTX

    for content_type in (XLTM, XLTX, XLSM, XLSX):
        part = package.find(content_type)
        if part:
            return part.PartName[1:]
    return ARC_WORKBOOK


def open_book(path, data, styles=None, strings=None, strings_of=None, sizes=None):
    """:func:`read_book`, its failures as one line naming the file; two sheet entries whose
    relationships lead to one part are refused (no spreadsheet writes it; each would be
    read again)."""
    with xlsx_safety.read_failures(path):
        try:
            book = read_book(data, styles, strings, strings_of, sizes)
        except PartError as exc:
            part_problem(path, exc.part, exc.message)
    shared = xlsx_safety.shared_part(book.sheet_parts)
    if shared is not None:
        first, second, part = shared
        fail(
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


def strings_in_part(path, zf, tally):
    """``strings_of(part)`` for :func:`read_book`: the shared strings of a part of another
    name than ``xl/sharedStrings.xml``, read by a second bounded scan of it."""

    def strings_of(name):
        strings = Strings()
        check_part(path, zf, zf.getinfo(name), True, strings, tally)
        return strings.strings

    return strings_of


# ---------------------------------------------------------------------------------------------
# Defined names -> cells
# ---------------------------------------------------------------------------------------------


def destination(dn):
    """(sheet title, reference) of a defined name pointing at one range, else None.

    A quote in a sheet's title is doubled in the reference, as Excel writes it
    (``'Team''s = plan'!$D$4``); openpyxl leaves it doubled.
    """
    dests = list(dn.destinations) if dn is not None and dn.type == "RANGE" else []
    if len(dests) != 1:
        return None
    sheet, ref = dests[0]
    return sheet.replace("''", "'"), ref


def name_cells(path, wb, name):
    """(sheet title, [(row, col), ...]) of a one-row defined name, or None if missing.

    The span is bounded (:data:`MAX_SCENARIO_COLUMNS`) before the cells are listed."""
    dn = wb.defined_names.get(name)
    if dn is None:
        return None
    found = destination(dn)
    if found is None:
        fail(path, f"defined name {name!r} does not point at one range ({dn.attr_text})")
    sheet, ref = found
    if sheet not in wb.sheetnames:
        fail(path, f"defined name {name!r} points at a missing sheet {sheet!r}")
    try:
        min_col, min_row, max_col, max_row = range_boundaries(ref.replace("$", ""))
    except (TypeError, ValueError):
        fail(path, f"defined name {name!r} has an unreadable range {ref!r}")
    if None in (min_col, min_row, max_col, max_row) or min_row != max_row:
        fail(path, f"defined name {name!r} must span one row ({dn.attr_text})", sheet)
    if max_col - min_col + 1 > MAX_SCENARIO_COLUMNS:
        fail(
            path,
            f"defined name {name!r} ({dn.attr_text}) spans {max_col - min_col + 1:,} "
            f"scenario columns, over the limit of {MAX_SCENARIO_COLUMNS} per planner; "
            "refused before reading",
        )
    return sheet, [(min_row, c) for c in range(min_col, max_col + 1)]


def check_area(path, wb, named):
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
    fail(
        path,
        f"defined name {far!r} ({ref}) makes the named cells span {total:,} cells, over the "
        f"limit of {MAX_CELLS_READ:,} cells read per planner (a planner's named cells sit "
        "within about 300); refused before reading",
    )


def _box_area(cells):
    rows = [r for _, r, _ in cells]
    cols = [c for _, _, c in cells]
    return (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)


def grab(path, zf, book, wanted, later, tally=None):
    """({sheet: {(row, col): (typed value, is formula)}}, {sheet: {(row, col): saved value}})
    of the wanted cells (``{sheet: {(row, col), ...}}``).

    Each worksheet is parsed once: its bounded scan (:func:`check_part`) reads the rows
    of its named cells (:class:`Rows`). ``later`` are the worksheets not yet scanned
    ((info, by name) pairs, in package order); those without named cells are only scanned.
    A sheet whose part has another name (found by its relationship) was scanned already and
    is read in a second scan. Each part holds one sheet (:func:`open_book`).
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
            check_part(path, zf, info, by_name, tally=tally)
            continue
        for sheet in sheets:  # one: a part of two sheets was refused
            cells = wanted[sheet]
            rows = [r for r, _ in cells]
            cols = [c for _, c in cells]
            found = Rows(book, (min(rows), max(rows), min(cols), max(cols)), sheet)
            check_part(path, zf, info, by_name, found, tally)
            typed[sheet] = {
                rc: (cell["value"], cell["data_type"] == "f")
                for rc, cell in found.typed.items()
                if rc in cells
            }
            saved[sheet] = {rc: cell["value"] for rc, cell in found.saved.items() if rc in cells}
    return typed, saved


def a1(row, col):
    return f"{openpyxl.utils.get_column_letter(col)}{row}"
