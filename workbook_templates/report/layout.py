"""How the hand-off workbook looks: headers, number formats, styles, widths, row heights, print.

Shared by :mod:`.xlsx` (one table per sheet) and :mod:`.summary` (the management summary and
the budget view). Text goes in through :func:`workbook_templates.sheetkit.put_text` (never a
formula); a wrapped cell's row is made as tall as its word-wrapped lines (:func:`fit_rows`),
so nothing prints over the next row.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re

import numpy as np
import pandas as pd
from openpyxl.comments import Comment
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.styles.cell_style import StyleArray
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.table import Table, TableStyleInfo

from udfs import schedule

from ..printing import empty_row, title_rows
from ..sheetkit import PAPER_SIZES, number_format, print_setup, put_formula, put_text
from .consolidate import Q

__all__ = ["cell_lines", "realign", "header", "fmt", "put", "write_table", "fit_columns",
           "fit_rows", "fit_header_rows", "wrapped_lines", "setup_print", "STYLES", "MONTH",
           "DATE", "USD", "lines", "keep_together", "page_room", "sheet_width", "file_cell",
           "row_height", "total_row", "add_table", "header_cells",
           "PAGE_LANDSCAPE", "PAGE_PORTRAIT", "is_header"]  # fmt: skip

# The workbook kit's formats (sheetkit.NUMBER_FORMATS), by the unit they show.
USD = number_format("US$")
USD_CENTS = number_format("US$/accelerator-hour")
INT = number_format("accelerator-hours")
PCT = number_format("fraction")
DATE = number_format("date")
#: The one month format of every workbook (as the planner's monthly schedule).
MONTH = "mmm yyyy"
#: Billions, for the wide Runs sheet (the cell keeps the exact figure).
BILLIONS = "#,##0.0,,,"
LINE_PT = 15.0

_HEADER_FILL = PatternFill("solid", fgColor="1F3864")
STYLES = {
    "header_font": Font(bold=True, color="FFFFFF"),
    "header_fill": _HEADER_FILL,
    "header_align": Alignment(wrap_text=True, vertical="top"),
    "bold": Font(bold=True),
    "title": Font(bold=True, size=14),
    "section": Font(bold=True, size=12, color="1F3864"),
    "total_border": Border(top=Side(style="thin"), bottom=Side(style="double")),
    "subtotal_border": Border(top=Side(style="thin")),
    "status_fill": {
        "WARN": PatternFill("solid", fgColor="FFEB9C"),
        "ERROR": PatternFill("solid", fgColor="FFC7CE"),
    },
}

_EXTRA = {
    # name: (header, number format)
    "file": ("File", None),
    "column": ("Column", None),
    "scenario": ("Scenario", None),
    "budget_status": ("Budget status", None),
    "owner": ("Owner", None),
    "defaults_used": ("Blank inputs: value used", None),
    "scheduled": ("In monthly schedule", None),
    "throughput_source": ("Throughput source", None),
    "throughput_sigma": ("Throughput sigma (ln)", "0.000"),
    "price_sigma": ("Price sigma (ln)", "0.000"),
    "other_costs_usd": ("Other costs (US$)", USD),
    "compute_cost_share": ("Compute share", PCT),
    "electricity_cost_share": ("Electricity share", PCT),
    "other_costs_share": ("Other share", PCT),
    "month": ("Month", MONTH),
    "start_month": ("Start", MONTH),
    "end_month": ("End", MONTH),
    "end_month_p90": ("End, P90", MONTH),
    "first_month": ("From", MONTH),
    "fiscal_year": ("Fiscal year", None),
    "quarter": ("Quarter", None),
    "share": ("Share of run", PCT),
    "runs": ("Runs", INT),
    "actual_to_date_usd": ("Actual to date (US$)", USD),
    "eac_usd": ("Forecast at completion (US$)", USD),
    "files": ("Files", INT),
    "cumulative_total_cost_usd": ("Cumulative (US$)", USD),
    "contingency_usd": ("Contingency P90 - P50 (US$)", USD),
    "contingency_throughput_usd": ("Throughput part (US$)", USD),
    "contingency_price_usd": ("Price part (US$)", USD),
    "expected_cost_usd": ("Expected cost, mean (US$)", USD),
    "planner_template_version": ("Planner template version", None),
    "approval": ("Approval", None),
    "expense_class": ("Expense class", None),
    "currency": ("Currency", None),
    "rate": ("Rate (US$/h)", USD_CENTS),
    "run_code": ("Run code", None),
    "run_code_derived": ("Run code derived", None),
    "plan_fingerprint": ("Plan fingerprint", None),
    "version": ("Version", None),
    "baseline_status": ("Status in the baseline", None),
    "line": ("Line", None),
    "baseline_p50_usd": ("Baseline P50 (US$)", USD),
    "p50_usd": ("P50 now (US$)", USD),
    "change_usd": ("Change in P50 (US$)", USD),
    "baseline_approved_usd": ("Approved in the baseline (US$)", USD),
    "change": ("What changed", None),
    "sheet": ("Sheet", None),
    "cell": ("Cell", None),
    "name": ("Quantity", None),
    "cached_value": ("Saved in the file", "#,##0.########"),
    "engine_value": ("Engine", "#,##0.########"),
    "relative_difference": ("Relative difference", "0.00E+00"),
    "cell_holds": ("Cell holds", None),
    "check": ("Check", None),
    "status": ("Status", None),
    "detail": ("Detail", None),
    "size_bytes": ("Size (bytes)", INT),
    "plan_accelerator_hours": ("Plan accelerator-hours", INT),
    "actual_accelerator_hours": ("Actual accelerator-hours", INT),
    "budget_usd": ("Budget (US$)", USD),
    "actual_usd": ("Actual (US$)", USD),
    "variance_usd": ("Variance (US$)", USD),
    "volume_usd": ("Volume (US$)", USD),
    "rate_usd": ("Rate (US$)", USD),
    "efficiency_usd": ("Efficiency (US$)", USD),
    "scope_usd": ("Scope (US$)", USD),
    "timing_usd": ("Timing (US$)", USD),
    "forecast_usd": ("Forecast, P50 (US$)", USD),
    "source": ("Source", None),
    "sha256": ("SHA-256", None),
    "template_version": ("Template version", None),
    "scenarios_read": ("Scenarios read", INT),
    "budget_status_row": ("Budget status row", None),
    "cached_values": ("Saved values", None),
    "section": ("Section", None),
    "item": ("Item", None),
    "value": ("Value", "General"),
    "unit": ("Unit", None),
    "input": ("Input name", None),
    "input_label": ("Input", None),
    "value_used": ("Value used", "General"),
    "why": ("Why", None),
}

#: Widest a column gets (longer text wraps, and its row grows).
WIDE = {"file": 24, "detail": 80, "defaults_used": 40, "sha256": 34, "item": 34,
        "scenario": 28, "owner": 16, "check": 22, "section": 14,
        "why": 80, "input": 28, "input_label": 42}  # fmt: skip


def realign(cell, **changes):
    """Set some of ``cell``'s alignment (vertical, wrap_text, indent...), keeping the rest.

    The workbook's alignment for each (alignment, changes) is made once and its index reused
    (tens of thousands of cells share a handful of alignments)."""
    wb = cell.parent.parent
    cache = wb.__dict__.setdefault("_realigned", {})
    if not cell.has_style:
        cell._style = StyleArray()
    style = cell._style
    key = (style.alignmentId, *sorted(changes.items()))
    index = cache.get(key)
    if index is None:
        a = wb._alignments[style.alignmentId]
        keep = {"horizontal": a.horizontal, "vertical": a.vertical, "wrap_text": a.wrap_text,
                "indent": a.indent}  # fmt: skip
        index = cache[key] = wb._alignments.add(Alignment(**{**keep, **changes}))
    style.alignmentId = index
    return cell


def _alignment_of(cell):
    """``cell``'s alignment as the workbook holds it (read only: no style proxy made)."""
    style = cell._style
    return cell.parent.parent._alignments[style.alignmentId if style is not None else 0]


def is_header(cell):
    """Whether ``cell`` has the header fill (compared by the workbook's fill index)."""
    style = cell._style
    if style is None or not style.fillId:
        return False
    wb = cell.parent.parent
    index = wb.__dict__.get("_header_fill_id")
    if index is None:
        index = wb.__dict__["_header_fill_id"] = wb._fills.add(STYLES["header_fill"])
    return style.fillId == index


def header(name):
    """A column's header: the quantity's label and unit, or the column's own title."""
    if name.endswith(("_p10", "_p90")) and name[:-4] in Q:
        return f"{header(name[:-4])}, {name[-3:].upper()}"
    if name in Q:
        q = Q[name]
        unit = _SHORT_UNITS.get(q.unit, q.unit)
        if not unit or unit.lower() in q.label.lower():
            return q.label
        return f"{q.label} ({unit})"
    return _EXTRA.get(name, (name, None))[0]


#: Units as a header shows them (none for a date or a ratio; a fraction shows as %).
_SHORT_UNITS = {"date": "", "ratio": "", "fraction": "%", "US$/accelerator-hour": "US$/h"}


def fmt(name, unit=None):
    """The number format of a column (or of a value of ``unit``)."""
    if unit:
        return number_format(unit) if unit != "fraction" else PCT
    if name.endswith(("_p10", "_p90")) and name[:-4] in Q:
        return fmt(name[:-4])
    if name in Q:
        return number_format(Q[name].unit)
    return _EXTRA.get(name, (None, None))[1]


def put(ws, row, col, value, number_format=None):
    """Write one value; text is always stored as text (never as a formula)."""
    cell = _cell(ws, row, col)
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime().date()
    if isinstance(value, str):
        return put_text(cell, value)
    cell.value = value
    if number_format and not isinstance(value, bool):
        cell.number_format = number_format
    return cell


def _header_row(ws, row, columns, first_col=1):
    for j, name in enumerate(columns, start=first_col):
        put_text(ws.cell(row=row, column=j), header(name))
    header_cells(ws, row, range(first_col, first_col + len(columns)))


def header_cells(ws, row, columns):
    """Style the cells of ``row`` in ``columns`` (column numbers) as a table's header."""
    for j in columns:
        cell = ws.cell(row=row, column=j)
        cell.font, cell.fill, cell.alignment = (
            STYLES["header_font"], STYLES["header_fill"], STYLES["header_align"])  # fmt: skip


def file_cell(ws, row, col, path):
    """A file as its base name, with the full path in a note."""
    cell = put(ws, row, col, os.path.basename(path) or path)
    if os.path.basename(path) != path:
        cell.comment = Comment(f"Full path: {path}", "compute-lab report", width=300, height=60)
    return cell


def total_of(name, values):
    """The sum of a column's figures as a spreadsheet computes it (blanks skipped): US$ as
    the sum of the whole cents (the CSV files' totals, to the cent), else the exactly
    rounded sum; 0 when there is no figure (a sum of blanks)."""
    figures = [float(v) for v in values if v is not None and not pd.isna(v)]
    if schedule.is_money(name):
        return schedule.usd(sum(schedule.to_cents(v) for v in figures))
    return math.fsum(figures)


def put_sum(ws, row, col, formula, name, values, number_format=None):
    """A formula cell adding up ``values`` (column ``name``'s figures), the sum saved beside
    it (:func:`.sheetkit.put_formula`)."""
    return put_formula(_cell(ws, row, col), formula, total_of(name, values), number_format)


def add_table(ws, name, head, last, width):
    """An Excel Table ``name`` over the header at row ``head`` and the rows to ``last``, the
    first ``width`` columns."""
    table = Table(displayName=name, ref=f"A{head}:{get_column_letter(width)}{last}")
    table.tableStyleInfo = TableStyleInfo(name="TableStyleLight1", showRowStripes=False)
    ws.add_table(table)


def total_row(ws, row, df, columns, label, formulas, *, subtotal=False, formats=None):
    """A bold (sub)total row labelled ``label``: each column of ``formulas`` (column -> its
    formula) adds up ``df``'s figures of that column, the sum saved beside it
    (:func:`put_sum`); a column with no figure stays blank. A subtotal has a thin rule above
    it, a total a double one."""
    put(ws, row, 1, label).font = STYLES["bold"]
    formats = formats or [fmt(n) for n in columns]
    border = STYLES["subtotal_border" if subtotal else "total_border"]
    for j, name in enumerate(columns, start=1):
        cell = ws.cell(row=row, column=j)
        cell.border, cell.font = border, STYLES["bold"]
        if name in formulas:
            values = pd.to_numeric(df[name], errors="coerce")
            if values.notna().any():
                put_sum(ws, row, j, formulas[name], name, values, formats[j - 1] or None)


def _total_row(ws, row, df, columns, formats, label, additive, first):
    """A total row: ``SUBTOTAL(9, ...)`` over the rows ``first`` to ``row - 1`` of each
    additive column, so that it follows a filter and is recalculated by any spreadsheet (a
    nested subtotal is not counted twice), its sum saved beside it."""
    letters = {name: get_column_letter(j) for j, name in enumerate(columns, start=1)}
    formulas = {name: f"=SUBTOTAL(9,{letters[name]}{first}:{letters[name]}{row - 1})"
                for name in additive if name in letters}  # fmt: skip
    total_row(ws, row, df, columns, label, formulas, formats=formats)


def write_table(ws, df, start_row=1, *, totals=None, additive=(), formats=None):
    """Write ``df`` under a header row; returns the last row written.

    ``totals`` labels a totals row over the ``additive`` columns; ``formats`` overrides the
    column formats. A ``file`` column shows base names, the full path in a note; a ``status``
    column is filled only for WARN and ERROR (a real failure stands out, nothing else).
    """
    columns = list(df.columns)
    _header_row(ws, start_row, columns)
    formats = formats or [fmt(n) for n in columns]
    row = start_row
    for record in df.itertuples(index=False, name=None):
        row += 1
        for j, (name, value) in enumerate(zip(columns, record, strict=True), start=1):
            cell = (file_cell(ws, row, j, value) if name == "file" and value
                    else put(ws, row, j, value, formats[j - 1]))  # fmt: skip
            if name == "status" and value in STYLES["status_fill"]:
                cell.fill = STYLES["status_fill"][value]
    if totals and len(df):
        row += 1
        _total_row(ws, row, df, columns, formats, totals, additive, start_row + 1)
    return row


def display_len(value, number_format):
    """About how many characters ``value`` takes when shown with ``number_format``."""
    if value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool):
        return 5
    if isinstance(value, _dt.date):
        return 10 if number_format != MONTH else 8
    if not isinstance(value, int | float) or not math.isfinite(value):
        return len(str(value))
    number_format = number_format or "General"
    if "E+" in number_format:
        return 10 + (value < 0)
    if "%" in number_format:
        return len(f"{value * 100:,.1f}%")
    if number_format == BILLIONS:
        return len(f"{value / 1e9:,.1f}")
    if number_format == "General":
        return len(f"{value:.10g}")
    body = number_format.split(";")[0]
    decimals = len(body.split(".", 1)[1].rstrip('"')) if "." in body else 0
    return len(f"{value:,.{min(decimals, 10)}f}") + ("$" in body)


def _longest_word(text):
    """The longest piece of ``text`` a line break cannot split (a break may follow a space
    or a hyphen: "Accelerator-" and "hours")."""
    return max((len(w) for w in re.split(r"\s+|(?<=-)", str(text)) if w), default=0)


def _cell(ws, row, col):
    """``ws.cell(row, col)`` (made if missing, as it makes it), found without its checks."""
    cell = ws._cells.get((row, col))
    return cell if cell is not None else ws.cell(row=row, column=col)


def fit_columns(ws, columns, header_row, last_row, first_col=1, wide=None):
    """Size each column to its widest shown value and its header (headers wrap on up to
    three lines, never inside a word); text wider than the column's cap wraps (and
    :func:`fit_rows` sizes rows); a figure or a word of a header is never cut by the cap."""
    wide = {**WIDE, **(wide or {})}
    for j, name in enumerate(columns, start=first_col):
        head = header(name)
        need, whole = len(head) / 3.4 + 1.5, _longest_word(head) + 1.5
        figures = 0
        for r in range(header_row + 1, last_row + 1):
            cell = _cell(ws, r, j)
            if isinstance(cell.value, str) and cell.value.startswith("="):  # a (sub)total:
                figures = max(figures, 1)  # as wide as the column's figures, and a digit more
                continue
            if isinstance(cell.value, int | float | _dt.date) and not isinstance(cell.value, bool):
                figures = max(figures, display_len(cell.value, cell.number_format))
                continue
            if _alignment_of(cell).wrap_text is False:  # a line of text (:func:`lines`) runs on
                continue
            if is_header(cell) and isinstance(cell.value, str):
                whole = max(whole, _longest_word(cell.value) + 1.5)
                need = max(need, len(cell.value) / 3.4 + 1.5)  # wraps: 4 lines
                continue
            shown = display_len(cell.value, cell.number_format) * (1.1 if cell.font.b else 1)
            need = max(need, shown + 2)
        cap = wide.get(name, 40)
        letter = get_column_letter(j)
        figure_need = (figures + 1) * 1.1 + 1.5 if figures else 0
        ws.column_dimensions[letter].width = max(min(max(need, 7), cap), whole, figure_need)
        for r in range(header_row + 1, last_row + 1):
            cell = _cell(ws, r, j)
            if (isinstance(cell.value, str) and len(cell.value) + 2 > cap
                    and cell.data_type != "f"  # a formula shows its figure: never wraps
                    and _alignment_of(cell).wrap_text is not False):  # fmt: skip
                realign(cell, wrap_text=True, vertical="top")


#: Characters of plain (not bold) text a column holds per width unit: Calibri's letters are
#: narrower than its digits, by which a column's width is counted (a cautious ratio).
TEXT_PER_UNIT = 1.2


def wrapped_lines(text, width, per_unit=1.0):
    """Lines ``text`` takes when word-wrapped in a column ``width`` characters wide (a
    cautious count: a character as wide as a digit, or ``per_unit`` characters a width unit
    for plain text; long words broken)."""
    per_line = max(1, int(width * per_unit) - 1)
    lines = 0
    for paragraph in str(text).split("\n"):
        used, count = 0, 1
        for word in paragraph.split(" "):
            n = len(word)
            if used and used + 1 + n > per_line:
                count, used = count + 1, 0
            while n > per_line:  # a word longer than a line is broken
                count, n = count + 1, n - per_line
            used = used + (1 if used else 0) + n
        lines += count
    return lines


def cell_lines(cell, width):
    """Lines the text of ``cell`` takes, wrapped in ``width`` character units: plain text at
    :data:`TEXT_PER_UNIT` characters a unit, bold text and text without a space (a SHA-256)
    at one; text without a space breaks after each hyphen, as a spreadsheet breaks it (a run
    code such as ``TEAM-A-70B-DENSE``), and a path (a word with two slashes or more) after
    each slash (``/data/actuals/2027-04.csv row 5``)."""
    text = str(cell.value)
    plain = not (cell.font is not None and cell.font.b) and " " in text
    if not plain and " " not in text:
        text = text.replace("-", "- ")
    text = " ".join(w.replace("/", "/ ") if w.count("/") > 1 else w for w in text.split(" "))
    return wrapped_lines(text, width, TEXT_PER_UNIT if plain else 1.0)


def fit_rows(ws, first_row=1, line_pt=LINE_PT):
    """Every row with wrapped text as tall as its most wrapped cell (never shorter); a merged
    cell wraps across the merged columns."""
    spans = {(m.min_row, m.min_col): sum(ws.column_dimensions[get_column_letter(j)].width or 8.43
                                         for j in range(m.min_col, m.max_col + 1))
             for m in ws.merged_cells.ranges}  # fmt: skip
    for row in ws.iter_rows(min_row=first_row):
        need = 1
        for c in row:
            if (isinstance(c.value, str) and c.data_type != "f"
                    and _alignment_of(c).wrap_text):  # fmt: skip
                width = spans.get((c.row, c.column)) or ws.column_dimensions[
                    c.column_letter].width or 8.43  # fmt: skip
                need = max(need, cell_lines(c, width))
        if need > 1:
            r = row[0].row
            ws.row_dimensions[r].height = max(ws.row_dimensions[r].height or 0,
                                              line_pt * need + 2)  # fmt: skip


def fit_header_rows(ws, first_row=1):
    """Every header row (dark fill) as tall as its most wrapped header, at least two lines."""
    for row in ws.iter_rows(min_row=first_row):
        heads = [c for c in row if is_header(c) and isinstance(c.value, str)]
        if heads:
            lines = max(wrapped_lines(c.value, ws.column_dimensions[c.column_letter].width or 8.43)
                        for c in heads)  # fmt: skip
            ws.row_dimensions[row[0].row].height = LINE_PT * max(2, lines) + 3


#: Printable body of a landscape page in (width units of a column, points of height) at 100%,
#: the smaller of Letter and A4 (half-inch sides, 0.75-inch top and bottom, a little for the
#: page header and footer): a sheet no wider than this prints one page wide at full size.
PAGE_LANDSCAPE = (128, 487)
#: The same for a portrait page.
PAGE_PORTRAIT = (92, 684)
#: Pixels a column takes beyond its width in characters (Calibri 11: 7 px a character).
_PAD_PX = 5


def sheet_width(ws, last_col=None):
    """The width of ``ws``'s columns in character units, each column's padding included."""
    last_col = last_col or ws.max_column
    px = sum((ws.column_dimensions[get_column_letter(j)].width or 8.43) * 7 + _PAD_PX
             for j in range(1, last_col + 1))  # fmt: skip
    return px / 7


def lines(ws, row, col, text, chars, font=None):
    """``text`` word-wrapped at ``chars`` characters, one line per row from ``row`` in
    column ``col``, each running on into the empty cells to its right (never merged, never
    wrapped in its cell); returns the row after the last line."""
    import textwrap

    shown = [
        line
        for part in str(text).split("\n")
        for line in textwrap.wrap(part, width=chars, break_long_words=True) or [""]
    ]
    for line in shown:
        cell = put(ws, row, col, line)
        cell.alignment = Alignment(wrap_text=False, vertical="top")
        if font is not None:
            cell.font = font
        row += 1
    return row


#: The height LibreOffice gives a row of 11-point text whose height is not set (Excel: 15).
LO_ROW_PT = 12.8


def row_height(ws, r, default=LINE_PT):
    return ws.row_dimensions[r].height or default


#: Pixels a column's width unit takes: 7 in Excel (Calibri's digit), about 9.5 in a
#: LibreOffice without Calibri or Carlito (its substitute's digits are wider), which prints a
#: sheet scaled down to fit the page's width.
PX_PER_UNIT = (7.0, 9.5)
#: The printable body of a page, (width px, height pt), by (orientation, paperSize).
_BODY = {("landscape", 9): (1026, 487), ("landscape", 1): (960, 504),
         ("portrait", 9): (698, 734), ("portrait", 1): (720, 684)}  # fmt: skip


#: Steps of LibreOffice's width unit tried between Excel's and the widest (px): its scale
#: is known only to lie between, so a page break is put where no step would split a block.
_PX_STEPS = 6


def _page_models(ws):
    """[(height of a row whose height is not set, page height in the sheet's points)]: Excel,
    LibreOffice with Calibri's metrics, and LibreOffice printing the sheet scaled down, at
    :data:`_PX_STEPS` scales from Calibri's width to the widest substitute's."""
    width_px, body = _BODY[(ws.page_setup.orientation, int(ws.page_setup.paperSize or 9))]
    wide = sheet_width(ws)
    excel = min(1.0, width_px / (wide * PX_PER_UNIT[0]))
    models = [(LINE_PT, body / excel), (LO_ROW_PT, body / excel)]
    low, high = PX_PER_UNIT
    for i in range(1, _PX_STEPS + 1):
        px = low + (high - low) * i / _PX_STEPS
        model = (LO_ROW_PT, body / min(1.0, width_px / (wide * px)))
        if model not in models:
            models.append(model)
    return models


def _page_tops(ws, models):
    """Per page model: a function of a row, the points its page's repeated header rows take
    above it when a page starts at that row (0 above the rows or without print titles)."""
    titles = title_rows(ws)
    if titles is None:
        return [lambda r: 0.0 for _ in models]
    top, bottom = titles
    heights = [sum(row_height(ws, i, default) for i in range(top, bottom + 1))
               for default, _ in models]  # fmt: skip
    return [lambda r, h=h: h if r > bottom else 0.0 for h in heights]


def page_room(ws, last_row):
    """Points (of the sheet, before any scaling to the page) left on the page below
    ``last_row`` as it prints, the least of the page models (:func:`_page_models`), the
    sheet's page breaks and repeated header rows honoured: whether a chart fits below the
    rows."""
    models = _page_models(ws)
    tops = _page_tops(ws, models)
    forced = {b.id for b in ws.row_breaks.brk}
    used = [0.0] * len(models)
    for r in range(1, last_row + 1):
        for k, (default, page) in enumerate(models):
            h = row_height(ws, r, default)
            if r - 1 in forced or used[k] + h > page:
                used[k] = tops[k](r)
            used[k] += h
    return min(page - u for (_, page), u in zip(models, used, strict=True))


def keep_together(ws, blocks, first_row=1):
    """Page breaks so that no block (``(first row, rows to keep)``: a section's title, its
    header and its first rows) starts at the foot of a page and goes on over the next: a break
    is put before a block that would not fit in what is left of the page, in Excel or in
    LibreOffice (:func:`_page_models`), a continuation page's repeated header rows counted.
    Call it once the print set-up is done."""
    from openpyxl.worksheet.pagebreak import Break

    models = _page_models(ws)
    tops = _page_tops(ws, models)
    starts = dict(blocks)
    forced = {b.id for b in ws.row_breaks.brk}
    used = [0.0] * len(models)
    fresh = [True] * len(models)  # at the top of a page
    for r in range(first_row, ws.max_row + 1):
        for k, (default, page) in enumerate(models):
            if r in starts and not fresh[k] and r - 1 not in forced:
                need = sum(row_height(ws, i, default) for i in range(r, r + starts[r]))
                if used[k] + need > page:
                    # after the last row with something in it: the empty rows above the block
                    # go with it, never make a page of their own where a page ends among them
                    b = r - 1
                    while b > first_row and empty_row(ws, b):
                        b -= 1
                    ws.row_breaks.append(Break(id=b))
                    forced.add(b)
                    if b < r - 1:  # the rows b + 1 to r - 1 open the next page, in every model
                        for m, (d, _) in enumerate(models):
                            gap = sum(row_height(ws, i, d) for i in range(b + 1, r))
                            used[m], fresh[m] = tops[m](b + 1) + gap, False
                    break
        for k, (default, page) in enumerate(models):
            h = row_height(ws, r, default)
            if r - 1 in forced or used[k] + h > page:
                used[k] = tops[k](r)
            used[k] += h
            fresh[k] = False


def setup_print(ws, title, generated, pages_wide=1, header_rows=None, title_cols=None,
                portrait=False, paper=None):  # fmt: skip
    """Landscape (or ``portrait``) A4 or Letter (sheetkit's print set-up; ``paper`` "a4" or
    "letter" overrides its choice), header and footer with the date as the body writes it
    (``yyyy-mm-dd``)."""
    print_setup(ws, pages_wide=pages_wide, print_titles=header_rows, title_cols=title_cols)
    if portrait:
        ws.page_setup.orientation = "portrait"
    if paper is not None:
        ws.page_setup.paperSize = PAPER_SIZES[paper]
    for part, text in (
        (ws.oddHeader.left, "Compute Lab hand-off"),
        (ws.oddHeader.right, title),
        (ws.oddFooter.left, f"Generated {generated:%Y-%m-%d %H:%M} UTC"),
        (ws.oddFooter.right, "Page &P of &N"),
    ):
        part.text, part.size = text, 8
