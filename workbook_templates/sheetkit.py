"""The small writer every template is rendered with: styles, rows described as data, names.

A template is a list of rows (name, label, unit, formula template, note) per sheet. A formula
template refers to other quantities by name in braces, and :meth:`Book.formula` turns each
``{name}`` into a cell reference:

- a *row* quantity (one value per scenario column) becomes the cell of the same column, on
  whatever sheet the quantity lives (``{total_params}`` -> ``Inputs!D6`` in column D);
- a *cell* quantity (one value) becomes its absolute address (``{default.mfu}`` ->
  ``Inputs!$C$12``);
- ``{range:name}`` is the whole row of a row quantity (``Calculations!$D$30:$K$30``), for
  ``INDEX(...,1,active_scenario)``.

Workbook-scoped defined names are added with :meth:`Book.name`. Text from any data source goes
through :func:`put_text`, so a string that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return stays text (:func:`safe_text` for CSV). One copy each, for every template:
number formats (:data:`NUMBER_FORMATS`), print set-up (:func:`print_setup`), the
formula-injection guard (:data:`FORMULA_LEADS`) and validation encodings
(:func:`rule_validation`); the print set-up is :mod:`workbook_templates.printing`'s.
"""

from __future__ import annotations

import math
import re
import unicodedata
from copy import copy
from dataclasses import dataclass

from openpyxl import Workbook
from openpyxl.styles import Alignment, Border, Font, NamedStyle, PatternFill, Protection, Side
from openpyxl.utils import (
    get_column_letter,
    quote_sheetname,
)
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from udfs.quantities import (
    AT_LEAST_ONE,
    FRACTION,
    MAX_RUN_CODE_CHARS,
    NON_NEGATIVE,
    POSITIVE,
    RUN_CODE_RULE,
    Bound,
)

from .printing import (  # the print set-up, importable from here too
    MIN_PRINT_SCALE_PCT,  # noqa: F401
    PAPER_ENV,  # noqa: F401
    PAPER_SIZES,  # noqa: F401
    chart_extent,  # noqa: F401
    column_width,
    paper_size,  # noqa: F401
    print_setup,
    used_area,
)

__all__ = [
    "Book",
    "bound_validation",
    "rule_validation",
    "validate_rule",
    "Row",
    "NUMBER_FORMATS",
    "put_text",
    "safe_text",
    "reader_text",
    "print_setup",
    "align_table",
    "header_footer",
    "used_area",
    "bold",
    "number_format",
    "state_colours",
    "GLOSSARY",
    "FORMULA_LEADS",
    "FORMULA_LOOKALIKES",
    "put_formula",
    "SavedValuesArchive",
]

#: Characters that make a spreadsheet treat a typed string as a formula (OWASP's CSV
#: injection list): the one formula-injection guard of every workbook and CSV writer.
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
#: Lookalikes of :data:`FORMULA_LEADS` that a spreadsheet with East Asian input may read as
#: them: every character whose compatibility form (NFKC) is one (fullwidth ``＝＋－＠``, the
#: small forms ``﹦﹢﹣﹫``), and the minus sign U+2212. Escaped the same way.
FORMULA_LOOKALIKES = tuple(
    sorted(
        {chr(c) for c in range(0x80, 0x10000)
         if chr(c) not in FORMULA_LEADS
         and unicodedata.normalize("NFKC", chr(c)) in FORMULA_LEADS[:4]}
        | {"\u2212"}
    )
)  # fmt: skip

INPUT_BLUE = "0000FF"
INPUT_FILL = "FFF2CC"
LINK_GREEN = "00803C"
HEADER_FILL = "1F4E78"
CONSTANT_FILL = "EDEDED"
CHECK_OK_FILL = "C6EFCE"
CHECK_BAD_FILL = "FFC7CE"
CHECK_WARN_FILL = "FFEB9C"
#: A unit as the unit column shows it, to match the cell's format (a fraction shows as %).
DISPLAY_UNITS = {"fraction": "%"}
#: The one set of states of every workbook: OK, WARN (something to look at), ERROR.
STATES = ("OK", "WARN", "ERROR")
#: The five words a finance reader meets, in five lines (the Cover of every workbook and the
#: hand-off's page 1).
#: The model size (active parameters) at which the glossary quotes the calibrated default MFU.
GLOSSARY_ACTIVE_PARAMS = 70e9
#: How the glossary names a calibrated generation of accelerators (else by its own name).
_GENERATION_WORDS = {"other": "others"}


def mfu_meaning():
    """The glossary's MFU line, its figures the calibration's stored defaults
    (:func:`udfs.calibration.predicted_mfu`'s model at :data:`GLOSSARY_ACTIVE_PARAMS`; H100
    stands for its generation, H800 and H200 too)."""
    from udfs import calibration

    m = calibration.default_mfu_model()
    figures = ", ".join(
        f"{_GENERATION_WORDS.get(g, g)} {float(m.predict(g, GLOSSARY_ACTIVE_PARAMS)):.0%}"
        for g in m.intercepts
    )
    size = f"{GLOSSARY_ACTIVE_PARAMS / 1e9:.0f}B"
    return ("Model FLOPs utilisation: the share of peak speed turned into model arithmetic; "
            f"calibrated default at {size} active: {figures}.")  # fmt: skip


GLOSSARY = (
    ("MFU", mfu_meaning()),
    ("TFLOP/s", "Trillions of arithmetic operations per second, per accelerator: its peak, or "
     "the effective speed = peak x MFU x goodput."),
    ("Goodput", "The share of the run's time spent training, after failures, restarts and "
     "checkpoints (1 = no time lost)."),
    ("P50 / P90", "P50: the estimate, as likely to be exceeded as not. P90: exceeded by one "
     "run in ten; the budget's cautious line."),
    ("Contingency", "P90 - P50 of the total cost: what to hold back above the estimate to "
     "cover nine runs in ten."),
)  # fmt: skip
#: The font colour of a default in use (an input left blank): greyed, in italics.
DEFAULT_GREY = "808080"
#: Number format of a TRUE/FALSE cell: Excel shows a logical value as TRUE/FALSE whatever the
#: format; LibreOffice can print it as 1/0, and this format prints 1 as TRUE and 0 as FALSE.
BOOLEAN_FORMAT = '"TRUE";"TRUE";"FALSE"'

#: Number formats by unit.
NUMBER_FORMATS = {
    "parameters": "#,##0",
    "tokens": "#,##0",
    "accelerators": "#,##0",
    "FLOPs": "0.000E+00",
    "TFLOP/s": "#,##0.0",
    "fraction": "0.0%",
    "US$/accelerator-hour": '"$"#,##0.00',
    "W": "#,##0",
    "ratio": "0.00",
    "US$/kWh": '"$"0.000',
    "gCO2/kWh": "#,##0",
    "bytes": "0.0",
    "date": "yyyy-mm-dd",
    "accelerator-hours": "#,##0",
    "days": "#,##0.0",
    "GB": "#,##0.0",
    "US$": '"$"#,##0',
    "kWh": "#,##0",
    "tCO2": "#,##0.0",
    "runs/year": "0.00",
    "hours": "#,##0.0",
    "index": "0",
    "x": "0.0",
    "%": "0.0%",
    "TRUE/FALSE": BOOLEAN_FORMAT,  # a logical prints TRUE/FALSE, not 1/0, after LibreOffice
}


def bold(cell):
    """Make ``cell``'s font bold, keeping its colour."""
    font = copy(cell.font)
    font.bold = True
    cell.font = font
    return cell


def number_format(unit):
    """The display format for a unit ('General' when the unit has none)."""
    return NUMBER_FORMATS.get(unit, "General")


def put_text(cell, value):
    """Write data-source text so that it is never read as a formula.

    A string that starts with ``=``, ``+``, ``-`` or ``@`` is stored as a plain string with
    Excel's quote prefix (what typing ``'=text`` does), not as a formula.
    """
    text = "" if value is None else str(value)
    cell.value = text
    if text.startswith(FORMULA_LEADS + FORMULA_LOOKALIKES):
        cell.data_type = "s"
        cell.quotePrefix = True
    return cell


#: A worksheet's formula cells with their computed values: {coordinate: number}, filled by
#: :func:`put_formula`, written by :class:`SavedValuesArchive`.
_SAVED = "_compute_lab_saved_values"
#: A formula cell as openpyxl writes it: its reference, its formula, an empty value.
_FORMULA_CELL = re.compile(rb'(<c r="([A-Z]+[0-9]+)"[^>]*>)(<f>[^<]*</f>)(?:<v\s*/>|<v></v>)')


def put_formula(cell, formula, value, number_format=None):
    """Write ``formula`` in ``cell`` with ``value`` (a number: what the formula computes)
    saved beside it, as Excel saves a computed value, so that a reader that does not
    recalculate (pandas, a file previewer) sees the figure. openpyxl writes no value for a
    formula: :class:`SavedValuesArchive` adds it when the workbook is saved. Returns the
    cell."""
    cell.value = formula
    if number_format:
        cell.number_format = number_format
    saved = cell.parent.__dict__.setdefault(_SAVED, {})
    saved[cell.coordinate] = value
    return cell


def with_saved_values(xml, saved):
    """A worksheet's XML (bytes) with each formula cell of ``saved`` ({coordinate: number})
    given its value (``<v>``; an infinite or NaN value is not saved); refuses a cell of
    ``saved`` the XML has no formula for."""
    found = set()

    def fill(m):
        coordinate = m.group(2).decode()
        if coordinate not in saved:
            return m.group(0)
        found.add(coordinate)
        value = saved[coordinate]
        if isinstance(value, float) and not math.isfinite(value):
            return m.group(0)  # no number to save: left to the spreadsheet
        text = repr(float(value)) if isinstance(value, float) else str(int(value))
        return m.group(1) + m.group(3) + b"<v>" + text.encode() + b"</v>"

    out = _FORMULA_CELL.sub(fill, xml)
    missing = saved.keys() - found
    if missing:
        raise ValueError(f"no formula to save a value for in cell(s) {sorted(missing)[:5]}")
    return out


class SavedValuesArchive:
    """The zip ``archive`` openpyxl writes ``wb`` to, each worksheet's XML with the values
    :func:`put_formula` saved (everything else passed through)."""

    def __init__(self, archive, wb):
        self._archive, self._wb = archive, wb

    def __getattr__(self, name):
        return getattr(self._archive, name)

    def write(self, filename, arcname=None, *args, **kwargs):
        sheets = {ws.path[1:]: ws for ws in self._wb.worksheets}
        saved = getattr(sheets.get(arcname), _SAVED, None)
        if not saved:
            return self._archive.write(filename, arcname, *args, **kwargs)
        with open(filename, "rb") as fh:
            xml = fh.read()
        return self._archive.writestr(arcname, with_saved_values(xml, saved))


#: A reference to the engine's code in a note ("(udfs.calibration)", ", udfs.ranges"), which
#: a finance reader has no use for.
_CODE_NAME = re.compile(r"\s*\(udfs\.[\w.]+\)|,\s*udfs\.[\w.]+(?=\))")


def reader_text(text):
    """``text`` without references to the engine's code names (``udfs.x``), for a reader."""
    return _CODE_NAME.sub("", text)


def safe_text(value):
    """``value`` with a leading apostrophe when a spreadsheet would read it as a formula (CSV)."""
    if isinstance(value, str) and value.startswith(FORMULA_LEADS + FORMULA_LOOKALIKES):
        return "'" + value
    return value


#: Page header and footer codes (the same in Excel and LibreOffice): file, sheet, page x of N.
HEADER_LEFT, HEADER_CENTER, FOOTER_RIGHT = "&F", "&A", "Page &P of &N"


def header_footer(wb, generated):
    """The same page header and footer on every sheet of ``wb``.

    Header: the file name, the sheet name, the template version; footer: the date the
    template was generated (``yyyy-mm-dd``, as on the sheets) and "Page x of N".
    """
    date = generated.strftime("%Y-%m-%d")
    for ws in wb.worksheets:
        for part, text in (
            (ws.oddHeader.left, HEADER_LEFT),
            (ws.oddHeader.center, HEADER_CENTER),
            (ws.oddHeader.right, f"Template version {TEMPLATE_VERSION}"),
            (ws.oddFooter.left, f"Compute Lab, generated {date}"),
            (ws.oddFooter.right, FOOTER_RIGHT),
        ):
            part.text = text
            part.size = 8
            part.color = "595959"


def align_table(ws, header_row, note_col, last_row=None):
    """A label-unit-value(s)-note table that reads level when a wrapped note grows a row.

    Every filled cell below ``header_row`` (to ``last_row``) sits at the top of its row, the
    ``note_col`` text left-aligned and indented so that it never touches a right-aligned
    figure; the header row is centred vertically and wrapped (inputs among the headers too).
    """
    for row in ws.iter_rows(min_row=header_row, max_row=last_row):
        for c in row:
            if c.value is None or type(c).__name__ == "MergedCell":
                continue
            a = c.alignment
            note = c.column == note_col and c.row > header_row
            c.alignment = Alignment(
                horizontal="left" if note else a.horizontal,
                vertical="center" if c.row == header_row else "top",
                wrap_text=a.wrap_text or c.row == header_row,
                indent=2 if note else a.indent,
            )


def fit_wrapped_rows(ws, line_height=15.0):
    """Give rows with wrapped text enough height for their lines (an estimate by width)."""
    spans = {}
    for merged in ws.merged_cells.ranges:
        width = sum(
            column_width(ws, get_column_letter(c))
            for c in range(merged.min_col, merged.max_col + 1)
        )
        spans[(merged.min_row, merged.min_col)] = (width, merged.max_row - merged.min_row + 1)
    for row in ws.iter_rows():
        need = 1
        for c in row:
            if not isinstance(c.value, str) or c.data_type == "f" or not c.alignment.wrap_text:
                continue
            width, rows = spans.get((c.row, c.column), (column_width(ws, c.column_letter), 1))
            chars = max(1.0, width * 1.1)
            lines = sum(max(1, -(-len(part) // int(chars))) for part in c.value.split("\n"))
            need = max(need, -(-lines // rows))
        if need > 1:
            r = row[0].row
            current = ws.row_dimensions[r].height or line_height
            ws.row_dimensions[r].height = max(current, line_height * need)


@dataclass(frozen=True)
class Row:
    """One quantity of a sheet: its name, label, unit, formula template and note."""

    name: str
    label: str
    unit: str = ""
    formula: str = ""
    note: str = ""
    style: str = "Calc"  # "Calc", "Link" or "Check"
    named: bool = False  # add a workbook-scoped defined name spanning the row


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w.:]*)\}")


class Book:
    """An openpyxl Workbook with the project's styles and a registry of quantity locations."""

    def __init__(self):
        self.wb = Workbook()
        self.wb.remove(self.wb.active)
        self.rows = {}  # name -> (sheet title, row, first column, last column)
        self.cells = {}  # name -> (sheet title, coordinate)
        self._register_styles()

    # -- styles -------------------------------------------------------------------------------

    def _register_styles(self):
        thin = Side(style="thin", color="BFBFBF")
        styles = [
            NamedStyle(
                "Input",
                font=Font(color=INPUT_BLUE),
                fill=PatternFill("solid", fgColor=INPUT_FILL),
                border=Border(left=thin, right=thin, top=thin, bottom=thin),
                protection=Protection(locked=False),
            ),
            NamedStyle("Calc", font=Font(color="000000")),
            NamedStyle("Link", font=Font(color=LINK_GREEN)),
            NamedStyle(
                "Constant",
                font=Font(color="000000"),
                fill=PatternFill("solid", fgColor=CONSTANT_FILL),
            ),
            NamedStyle(
                "Header",
                font=Font(bold=True, color="FFFFFF"),
                fill=PatternFill("solid", fgColor=HEADER_FILL),
                alignment=Alignment(wrap_text=True, vertical="center"),
            ),
            NamedStyle("Title", font=Font(bold=True, size=14, color=HEADER_FILL)),
            NamedStyle("Section", font=Font(bold=True, color=HEADER_FILL)),
            NamedStyle(
                "Note",
                font=Font(italic=True, color="595959"),
                alignment=Alignment(wrap_text=True, vertical="top"),
            ),
        ]
        for style in styles:
            self.wb.add_named_style(style)

    # -- sheets -------------------------------------------------------------------------------

    def sheet(self, title, widths=None, tab_color=None):
        """A new worksheet; ``widths`` maps column letters to widths."""
        if len(title) > 31:
            raise ValueError(f"sheet title over 31 characters: {title!r}")
        ws = self.wb.create_sheet(title)
        for col, width in (widths or {}).items():
            ws.column_dimensions[col].width = width
        if tab_color:
            ws.sheet_properties.tabColor = tab_color
        return ws

    @staticmethod
    def finish(ws, freeze=None, protect=True, print_titles=None, pages_wide=1, title_cols=None,
               print_area=None, pages_tall=0, paged=False):  # fmt: skip
        """Freeze panes, landscape fit-to-width printing, and protection (no password).

        A wide sheet prints ``pages_wide`` pages across (each as tall as it needs), repeating
        the ``print_titles`` rows and the ``title_cols`` columns (``"A:B"``) on every page;
        ``print_area`` and ``pages_tall`` as in :func:`print_setup`. Also sizes the rows
        that hold wrapped text (openpyxl does not, and Excel only on edit).
        """
        fit_wrapped_rows(ws)
        if freeze:
            ws.freeze_panes = freeze
        print_setup(ws, pages_wide, print_titles, title_cols, print_area, pages_tall, paged)
        if protect:
            ws.protection.sheet = True
            ws.protection.selectLockedCells = False
            ws.protection.selectUnlockedCells = False
            ws.protection.formatColumns = False  # let readers widen columns
        return ws

    # -- registry and formulas ----------------------------------------------------------------

    def place_row(self, name, ws, row, first_col, last_col, named=False):
        """Record that row quantity ``name`` lives on ``ws`` row ``row``, columns first..last."""
        if name in self.rows or name in self.cells:
            raise ValueError(f"quantity placed twice: {name}")
        self.rows[name] = (ws.title, row, first_col, last_col)
        if named:
            self.name(name, self.range_ref(name))

    def place_cell(self, name, ws, coordinate, named=False):
        """Record that single-cell quantity ``name`` lives at ``ws!coordinate``."""
        if name in self.rows or name in self.cells:
            raise ValueError(f"quantity placed twice: {name}")
        self.cells[name] = (ws.title, coordinate)
        if named:
            self.name(name, self.ref(name))

    def name(self, name, target):
        """Add a workbook-scoped defined name for ``target`` (an absolute reference)."""
        self.wb.defined_names[name] = DefinedName(name, attr_text=target)

    def range_ref(self, name):
        """Absolute reference to the whole row of row quantity ``name``."""
        title, row, first, last = self.rows[name]
        a, b = get_column_letter(first), get_column_letter(last)
        return f"{quote_sheetname(title)}!${a}${row}:${b}${row}"

    def ref(self, name, from_sheet=None, col=None):
        """Reference to ``name`` as seen from ``from_sheet`` (column ``col`` for row quantities).

        A single cell with a workbook-scoped defined name of its own is referred to by that
        name (``mfu_max``, not ``'Inputs'!$C$34``): a formula reads as what it uses.
        """
        if name in self.cells and name in self.wb.defined_names:
            return name
        if name in self.cells:
            title, coord = self.cells[name]
            letters = "".join(c for c in coord if c.isalpha())
            digits = coord[len(letters) :]
            address = f"${letters}${digits}"
        else:
            title, row, _, _ = self.rows[name]
            if col is None:
                raise ValueError(f"{name} is a row quantity: give a column")
            address = f"{col}{row}"
        if title == from_sheet:
            return address
        return f"{quote_sheetname(title)}!{address}"

    def formula(self, template, from_sheet, col=None):
        """Render a formula template for one column of ``from_sheet``."""

        def sub(match):
            key = match.group(1)
            if key.startswith("range:"):
                return self.range_ref(key[len("range:") :])
            return self.ref(key, from_sheet, col)

        return _PLACEHOLDER.sub(sub, template)

    # -- writing ------------------------------------------------------------------------------

    def label_cells(self, ws, row, label, unit="", note="", label_col=1, unit_col=2, note_col=None):
        """Write a row's label, unit and note (all plain text; code names left out of notes)."""
        put_text(ws.cell(row, label_col), label)
        if unit_col:
            put_text(ws.cell(row, unit_col), DISPLAY_UNITS.get(unit, unit))
        if note_col and note:
            put_text(ws.cell(row, note_col), reader_text(note)).style = "Note"

    def write_rows(self, ws, first_row, rows, cols, note_col=None, label_col=1, unit_col=2):
        """Render ``rows`` (``Row`` or a section title string) from ``first_row`` down.

        Each ``Row`` gets the same formula template in every column of ``cols`` (column
        numbers), styled by ``row.style`` and formatted by its unit. Returns the next free row.
        """
        r = first_row
        for item in rows:
            if isinstance(item, str):
                r += 1 if r > first_row else 0
                ws.cell(r, label_col, item).style = "Section"
                r += 1
                continue
            self.label_cells(ws, r, item.label, item.unit, item.note, label_col, unit_col, note_col)
            self.place_row(item.name, ws, r, cols[0], cols[-1], named=item.named)
            for c in cols:
                letter = get_column_letter(c)
                cell = ws.cell(r, c, self.formula(item.formula, ws.title, letter))
                cell.style = item.style if item.style in ("Calc", "Link") else "Calc"
                cell.number_format = number_format(item.unit)
            r += 1
        return r

    @staticmethod
    def header(ws, row, values, first_col=1):
        """A header row (white on dark blue)."""
        for i, value in enumerate(values):
            cell = ws.cell(row, first_col + i)
            put_text(cell, value)
            cell.style = "Header"

    @staticmethod
    def title(ws, text, subtitle=None):
        """Sheet title in A1 and an optional one-line subtitle in A2."""
        ws["A1"] = text
        ws["A1"].style = "Title"
        if subtitle:
            put_text(ws["A2"], subtitle).style = "Note"
            ws["A2"].alignment = Alignment(wrap_text=False)

    @staticmethod
    def input_cell(cell, value, unit=""):
        """An input: blue on pale yellow, unlocked, formatted by unit."""
        if isinstance(value, str):
            put_text(cell, value)
        else:
            cell.value = value
        cell.style = "Input"
        cell.number_format = number_format(unit)
        return cell

    @staticmethod
    def validation(ws, ranges, kind, formula1=None, formula2=None, operator=None, prompt="",
                   error="", title=""):  # fmt: skip
        """Data validation with an input message and a stop alert on ``ranges``."""
        dv = DataValidation(
            type=kind,
            formula1=formula1,
            formula2=formula2,
            operator=operator,
            allow_blank=True,
            showInputMessage=True,
            showErrorMessage=True,
            errorStyle="stop",
        )
        dv.promptTitle = title[:32] or None
        dv.prompt = prompt[:255] or None
        dv.errorTitle = (title[:32] or "Invalid value") if error else None
        dv.error = error[:255] or None
        ws.add_data_validation(dv)
        dv.add(ranges)
        return dv


#: Version written into every template (cover, ``template_version`` name, document properties).
TEMPLATE_VERSION = "1.1.0"

CHANGE_LOG = (
    (
        "1.0.0",
        "First release: training-run planner (dense and MoE references, the DeepSeek-V3-like "
        "example plan, custom columns), cluster sizing and dense-versus-MoE workbooks, "
        "generated by the compute-lab templates command.",
    ),
    (
        "1.1.0",
        "Training-run planner: a budget status per scenario (Reference, Proposed, Approved, "
        "Excluded); a calibrated default MFU when MFU is left blank, with P10/P90 ranges of "
        "hours and cost; checks in three states (OK, WARN, ERROR). Every workbook: pages print "
        "with a header and footer and within the page width, and check cells read TRUE or "
        "FALSE in every spreadsheet program.",
    ),
)

COLOUR_LEGEND = (
    ("Input", "Input: type here (blue on pale yellow, unlocked)"),
    ("Calc", "Calculation: a formula (black, locked)"),
    ("Link", "Link: brings a figure from another sheet or resolves a blank input (green)"),
    ("Constant", "Fixed figure from the engine or the catalogue (grey, locked)"),
)


#: The Cover's how-to step on the checks of a template with :func:`add_checks`: the master
#: check on the Checks sheet shows TRUE, the Cover's own Checks line shows OK.
CHECKS_STEP = (
    "Checks: every check must pass: the master check on the Checks sheet then reads OK, as "
    "does the Checks line on this Cover (ERROR otherwise, in red)."
)


def add_cover(book, title, purpose, how_to, sheets, sources, generated):
    """The cover sheet: purpose, how to use, colour legend, version, date, sheet index, sources.

    ``sheets`` is a list of (sheet title, what it is for); ``sources`` a list of strings.
    Places the single cell ``template_version`` (a defined name).
    """
    ws = book.sheet("Cover", {"A": 30, "B": 95})
    book.title(ws, title)
    put_text(ws["A3"], "Purpose").style = "Section"
    put_text(ws["B3"], purpose).style = "Note"
    r = 5
    ws.cell(r, 1, "How to use").style = "Section"
    for i, step in enumerate(how_to, 1):
        put_text(ws.cell(r, 2), f"{i}. {step}").alignment = Alignment(wrap_text=True)
        r += 1
    r += 1
    ws.cell(r, 1, "Colour legend").style = "Section"
    r += 1
    for style, text in COLOUR_LEGEND:
        sample = ws.cell(r, 1, 1234)
        sample.style = style
        sample.protection = Protection(locked=True)  # a sample, not an input
        sample.number_format = "#,##0"
        sample.alignment = Alignment(horizontal="left")
        put_text(ws.cell(r, 2), text)
        r += 1
    r += 1
    ws.cell(r, 1, "Template version")
    ws.cell(r, 2, TEMPLATE_VERSION).alignment = Alignment(horizontal="left")
    book.place_cell("template_version", ws, f"B{r}", named=True)
    r += 1
    ws.cell(r, 1, "Generated")
    ws.cell(r, 2, generated).number_format = "yyyy-mm-dd hh:mm"
    ws.cell(r, 2).alignment = Alignment(horizontal="left")
    book.place_cell("generated_at", ws, f"B{r}")
    r += 1
    ws.cell(r, 1, "Generator")
    ws.cell(r, 2, "compute-lab templates (Compute Lab)")
    r += 1
    ws.cell(r, 1, "Checks")
    ws.cell(r, 2, '=IF(master_status="OK","OK: every check passes","ERROR: see the Checks sheet")')
    state_colours(ws, f"B{r}")
    r += 1
    r += 1
    ws.cell(r, 1, "Sheets").style = "Section"
    r += 1
    for sheet, what in sheets:
        target = quote_sheetname(sheet)
        ws.cell(r, 1, f'=HYPERLINK("#{target}!A1","{sheet}")').font = Font(
            color="0563C1", underline="single"
        )
        put_text(ws.cell(r, 2), what).alignment = Alignment(wrap_text=True)
        r += 1
    r += 1
    ws.cell(r, 1, "Words").style = "Section"
    for word, meaning in GLOSSARY:
        r += 1
        put_text(ws.cell(r, 1), word).alignment = Alignment(vertical="top")
        put_text(ws.cell(r, 2), meaning).alignment = Alignment(wrap_text=True)
    r += 2
    ws.cell(r, 1, "Sources").style = "Section"
    r += 1
    for src in sources:
        put_text(ws.cell(r, 2), src).alignment = Alignment(wrap_text=True)
        r += 1
    r += 1
    put_text(
        ws.cell(r, 1),
        "Sheets are protected without a password (Review > Unprotect Sheet) so that formulas "
        "are not overwritten by accident.",
    ).style = "Note"
    ws.merge_cells(start_row=r, start_column=1, end_row=r, end_column=2)
    Book.finish(ws, pages_tall=1)  # the cover is one page
    return ws


def add_change_log(book, generated):
    """The change log sheet (version, date, change)."""
    ws = book.sheet("Change log", {"A": 12, "B": 18, "C": 100})
    book.title(ws, "Change log")
    book.header(ws, 4, ["Version", "Date", "Change"])
    for i, (version, change) in enumerate(CHANGE_LOG):
        ws.cell(5 + i, 1, version).alignment = Alignment(horizontal="left", vertical="top")
        ws.cell(5 + i, 2, generated.date()).number_format = "yyyy-mm-dd"
        ws.cell(5 + i, 2).alignment = Alignment(horizontal="left", vertical="top")
        put_text(ws.cell(5 + i, 3), change).alignment = Alignment(wrap_text=True, vertical="top")
    Book.finish(ws, freeze="A5")
    return ws


def set_properties(book, title, subject, generated):
    """Document properties: title, subject, creator, version (core and custom)."""
    from openpyxl.packaging.custom import StringProperty

    props = book.wb.properties
    props.title = title
    props.subject = subject
    props.creator = "Compute Lab"
    props.keywords = f"compute-lab; training run; template {TEMPLATE_VERSION}"
    props.version = TEMPLATE_VERSION
    props.description = f"Generated by compute-lab templates, version {TEMPLATE_VERSION}"
    props.created = generated
    props.modified = generated
    book.wb.custom_doc_props.append(StringProperty(name="template_version", value=TEMPLATE_VERSION))
    header_footer(book.wb, generated)


def order_sheets(book, titles):
    """Put the sheets in ``titles`` order (sheets can be built in any order)."""
    wb = book.wb
    for target, title in enumerate(titles):
        current = wb.sheetnames.index(title)
        if current != target:
            wb.move_sheet(title, offset=target - current)
    wb.active = 0
    for i, ws in enumerate(wb):  # exactly one selected tab, or Excel opens in [Group] mode
        ws.sheet_view.tabSelected = i == 0


@dataclass(frozen=True)
class Column:
    """One column of a list table: header, unit, and a formula template or an axis of inputs.

    In ``formula``, ``{row}`` is the table row's number and ``<X>`` the cell of column ``X``
    on the same row; other ``{name}`` placeholders resolve through the Book.
    """

    name: str
    header: str
    unit: str = ""
    formula: str = ""
    inputs: tuple = ()
    width: float = 16


def write_table(book, ws, top, columns, n_rows, first_col=1, named=True):
    """A list table: header at ``top``, ``n_rows`` rows; input columns and formula columns.

    Each column's values get a defined name (``column.name``) spanning its rows when
    ``named``. Returns (first data row, last data row).
    """
    book.header(ws, top, [f"{c.header}" + (f" ({c.unit})" if c.unit else "") for c in columns],
                first_col)  # fmt: skip
    ws.row_dimensions[top].height = 32
    first, last = top + 1, top + n_rows
    letters = {c.name: get_column_letter(first_col + j) for j, c in enumerate(columns)}
    for j, c in enumerate(columns):
        letter = letters[c.name]
        ws.column_dimensions[letter].width = c.width
        for i in range(n_rows):
            r = first + i
            cell = ws.cell(r, first_col + j)
            if c.inputs:
                Book.input_cell(cell, c.inputs[i], c.unit)
                continue
            text = c.formula.replace("{row}", str(r))
            for other, col_letter in letters.items():
                text = text.replace(f"<{other}>", f"{col_letter}{r}")
            cell.value = book.formula(text, ws.title)
            cell.style = "Calc"
            cell.number_format = number_format(c.unit)
        if named:
            book.name(c.name, f"{quote_sheetname(ws.title)}!${letter}${first}:${letter}${last}")
    return first, last


def bound_validation(bound, cell, total=None):
    """The data-validation encoding of a number input's bound (a
    :class:`udfs.quantities.Bound`): (type, formula1, formula2, operator).

    A bound of one end is Excel's own whole or decimal rule ("> 0": greater than 0); any
    other is a custom formula relative to ``cell``, the first cell of the validated range
    (``AND(ISNUMBER(C5),C5>0,C5<=1)``), ``total`` the cell of the quantity it may not exceed
    (``bound.not_above``, checked when that cell is filled).
    """
    kind = "whole" if bound.whole else "decimal"
    if bound.high is None and not bound.not_above:
        op = "greaterThanOrEqual" if bound.low_inclusive else "greaterThan"
        return kind, f"{bound.low:g}", None, op
    tests = [f"ISNUMBER({cell})"]
    if bound.low is not None:
        tests.append(f"{cell}{bound.low_op}{bound.low:g}")
    if bound.high is not None:
        tests.append(f"{cell}{bound.high_op}{bound.high:g}")
    if bound.whole:
        tests.append(f"{cell}=INT({cell})")
    if bound.not_above:
        tests.append(f"OR(ISBLANK({total}),{cell}<={total})")
    return "custom", f"AND({','.join(tests)})", None, None


def rule_validation(rule, cell, total=None, list_source=None):
    """The data-validation encoding of a quantity's rule: (type, formula1, formula2, operator).

    The one table of rule encodings for every template: a text rule ("a catalogue name",
    "a date", "text"), or a number's (its :class:`udfs.quantities.Bound` text, or the bound
    itself: :func:`bound_validation`). ``cell`` is the first cell of the validated range
    (custom formulas are relative to it), ``total`` the cell of the total parameters,
    ``list_source`` the defined name of a list (rule "a catalogue name").
    """
    if isinstance(rule, Bound):
        return bound_validation(rule, cell, total)
    texts = {
        "a catalogue name": ("list", list_source, None, None),
        "a date": ("date", "36526", None, "greaterThanOrEqual"),  # 2000-01-01 or later
        "text": ("textLength", "1", "60", "between"),
        RUN_CODE_RULE: ("textLength", "1", str(MAX_RUN_CODE_CHARS), "between"),
    }
    if rule in texts:
        return texts[rule]
    return bound_validation(_BOUND_OF_TEXT[rule], cell, total)


#: A number's rule text -> its bound, for the templates' own inputs (sizing, comparison).
_BOUND_OF_TEXT = {b.text: b for b in (POSITIVE, NON_NEGATIVE, AT_LEAST_ONE, FRACTION)}


def validate_rule(book, ws, rng, rule, label, unit="", note="", error=None, **where):
    """Data validation for ``rule`` on ``rng``, with an input message and a stop alert.

    ``rule`` is a rule text or a :class:`udfs.quantities.Bound` (its text is shown);
    ``where`` passes ``total`` and ``list_source`` to :func:`rule_validation`; ``error``
    replaces the default alert ("<label> must be <rule>.").
    """
    first = rng.split(":")[0]
    kind, f1, f2, op = rule_validation(rule, first, **where)
    if isinstance(rule, Bound):
        rule = rule.text
    prompt = (
        f"{label}" + (f" ({unit})" if unit else "") + f": {rule}." + (f" {note}" if note else "")
    )
    book.validation(ws, rng, kind, f1, f2, op, prompt=prompt,
                    error=error or f"{label} must be {rule}.", title=label)  # fmt: skip


def input_block(book, ws, top, items, note_col=4, value_col=3):
    """Single-cell inputs, one per row from ``top``: (name, label, unit, value, rule, note).

    Label in A, unit in B, the input in ``value_col`` (a defined name ``name``), the note in
    ``note_col``. Returns the next free row.
    """
    r = top
    for name, label, unit, value, rule, note in items:
        book.label_cells(ws, r, label, unit, note, note_col=note_col)
        cell = Book.input_cell(ws.cell(r, value_col), value, unit)
        book.place_cell(name, ws, cell.coordinate, named=True)
        if rule:
            validate_rule(book, ws, cell.coordinate, rule, label, unit, note)
        r += 1
    return r


def output_block(book, ws, top, items, note_col=4, style="Calc", value_col=3):
    """Single-cell formulas, one per row: (name, label, unit, formula template, note)."""
    r = top
    for name, label, unit, formula, note in items:
        book.label_cells(ws, r, label, unit, note, note_col=note_col)
        cell = ws.cell(r, value_col, book.formula(formula, ws.title))
        cell.style = style
        cell.number_format = number_format(unit)
        book.place_cell(name, ws, cell.coordinate, named=True)
        r += 1
    return r


def check_colours(ws, rng, bad_fill=CHECK_BAD_FILL):
    """Colour check results over ``rng`` (relative to its first cell), shown as TRUE/FALSE.

    Green for TRUE and "OK"; ``bad_fill`` (red) for FALSE, "ERROR" and error values; amber
    for "WARN". A blank or other cell stays uncoloured: only real failures are flagged (in
    Excel and LibreOffice a blank cell equals FALSE, so each rule tests the type first).
    Every cell of ``rng`` gets :data:`BOOLEAN_FORMAT`, so a check prints TRUE or FALSE (not
    1 or 0) in LibreOffice too; text such as "OK" shows as it is.
    """
    from openpyxl.formatting.rule import FormulaRule

    for row in ws[rng]:
        for cell in row:
            cell.number_format = BOOLEAN_FORMAT
    first = rng.split(":")[0]
    rules = (
        (f"ISERROR({first})", bad_fill),
        (f"AND(ISLOGICAL({first}),{first}=TRUE)", CHECK_OK_FILL),
        (f"AND(ISLOGICAL({first}),{first}=FALSE)", bad_fill),
        (f'AND(ISTEXT({first}),{first}="OK")', CHECK_OK_FILL),
        (f'AND(ISTEXT({first}),{first}="WARN")', CHECK_WARN_FILL),
        (f'AND(ISTEXT({first}),{first}="ERROR")', bad_fill),
    )
    for formula, colour in rules:
        ws.conditional_formatting.add(
            rng,
            FormulaRule(
                formula=[formula], fill=PatternFill("solid", fgColor=colour), stopIfTrue=True
            ),
        )


def add_checks(book, checks, widths=None):
    """A Checks sheet: (label, formula template) rows, TRUE = pass, and ``master_check``."""
    ws = book.sheet("Checks", widths or {"A": 70, "B": 4, "C": 12})
    book.title(ws, "Checks", "TRUE = passes. The master check reads OK or ERROR.")
    book.header(ws, 4, ["Check", "", "Result"])
    r = 5
    for label, formula in checks:
        put_text(ws.cell(r, 1), label)
        ws.cell(r, 3, book.formula(formula, ws.title))
        r += 1
    put_text(ws.cell(r + 1, 1), "No check fails (every check above)").style = "Section"
    cell = ws.cell(r + 1, 3, f"=IFERROR(AND(C5:C{r - 1}),FALSE)")
    book.place_cell("master_check", ws, cell.coordinate, named=True)
    put_text(ws.cell(r + 2, 1), "Master check: OK or ERROR").style = "Section"
    cell = ws.cell(r + 2, 3, f'=IF(C{r + 1},"{STATES[0]}","{STATES[2]}")')
    bold(cell)
    book.place_cell("master_status", ws, cell.coordinate, named=True)
    check_colours(ws, f"C5:C{r + 2}")
    Book.finish(ws, freeze="A5")
    return ws


def state_colours(ws, rng):
    """Colour a cell that shows a state in words: amber when it says WARN, red when it says
    ERROR (the same colours as the Checks sheet); OK stays plain."""
    from openpyxl.formatting.rule import FormulaRule

    first = rng.split(":")[0].replace("$", "")
    for word, fill in (("ERROR", CHECK_BAD_FILL), ("WARN", CHECK_WARN_FILL)):
        ws.conditional_formatting.add(rng, FormulaRule(
            formula=[f'AND(ISTEXT({first}),ISNUMBER(SEARCH("{word}",{first})))'],
            fill=PatternFill("solid", fgColor=fill), stopIfTrue=True))  # fmt: skip


def paragraph(ws, row, col, text, last_col):
    """A note paragraph in ``row``, merged from ``col`` to ``last_col`` and wrapped."""
    cell = put_text(ws.cell(row, col), text)
    cell.style = "Note"
    ws.merge_cells(start_row=row, start_column=col, end_row=row, end_column=last_col)
    return cell
