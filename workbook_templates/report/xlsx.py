"""The hand-off workbook: the Summary (one page), the Budget, then the data sheets.

Every sheet prints one page wide at full size on landscape Letter or A4 (the Summary and
Runs in portrait): the columns are chosen and sized to fit the page (:data:`.layout.
PAGE_LANDSCAPE`), and each table's title, header and first rows are kept on one page
(:func:`.layout.keep_together`). Runs shows runs.csv turned, one column per run; Costs holds
the costs and the ranges; Checks the checks, the files read and the mismatches. Each table is
an Excel Table named like its CSV file (the Variance chart's ``variance_months``: no file, it
sums variance.csv and forecast.csv by month), its totals ``SUBTOTAL(9, ...)`` rows below it; no cell
is merged. Files show as base names with the full path in a note; months as ``mmm yyyy``; the
Monthly chart has a date axis, every month from the first to the last; the Variance chart
sets budget, actual and forecast side by side by month.
"""

from __future__ import annotations

import datetime as _dt

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.chart.axis import DateAxis
from openpyxl.chart.series import SeriesLabel
from openpyxl.chart.text import RichText
from openpyxl.drawing.text import CharacterProperties, Paragraph, ParagraphProperties
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.pagebreak import Break

from udfs.quantities import RANGE_QUANTITIES
from udfs.variance import PARTS

from ..files import save_workbook
from ..printing import title_rows, used_area
from .baseline_data import write_baseline_data
from .consolidate import Q
from .layout import (
    _SHORT_UNITS,
    BILLIONS,
    MONTH,
    PAGE_LANDSCAPE,
    PAGE_PORTRAIT,
    STYLES,
    USD,
    add_table,
    file_cell,
    fit_columns,
    fit_header_rows,
    fit_rows,
    fmt,
    header,
    is_header,
    keep_together,
    page_room,
    put,
    put_sum,
    realign,
    setup_print,
    sheet_width,
    write_table,
)
from .summary import MONTHLY_RANGES, sheet_guide, write_budget, write_summary
from .tables import CONTINGENCY_PARTS, TABLE_COLUMNS, UNSCHEDULED, with_unscheduled
from .variance_tables import BY_MONTH_COLUMNS, MONTHS_COLUMNS, TO_DATE_COLUMNS, UNPLANNED_COLUMNS

__all__ = ["build_workbook", "write_workbook", "ADDITIVE", "SHEETS", "TABLE_NAMES",
           "RUN_ROWS"]  # fmt: skip

#: Columns whose sum is meaningful in a totals row.
ADDITIVE = {
    "training_flops", "accelerator_hours", "compute_cost_usd", "electricity_kwh",
    "electricity_cost_usd", "co2_tonnes", "total_cost_usd", "other_costs_usd",
    "contingency_usd", *CONTINGENCY_PARTS, "plan_accelerator_hours", "actual_accelerator_hours",
    "budget_usd", "actual_usd", "variance_usd", "forecast_usd", *(f"{p}_usd" for p in PARTS),
    *(f"{q}_{k}" for q in RANGE_QUANTITIES if q != "wall_clock_days" for k in ("p10", "p90")),
}  # fmt: skip

#: The Runs sheet's rows: runs.csv's columns but the name (the header), turned.
RUN_ROWS = [n for n in TABLE_COLUMNS["runs"]
            if n not in ("scenario", "defaults_used", "scheduled", "run_code_derived",
                         "plan_fingerprint")]  # fmt: skip
#: The Monthly chart's (height, width) in cm.
CHART_CM = (6.4, 22.0)
#: Rows of a table that go with its chart to the next page when the chart does not fit
#: under the table and the page repeats the table's header (the totals row among them).
CHART_ROWS = 4
#: The least a chart that is enlarged on the next page (the Variance chart) is enlarged by
#: when the table's last rows go with it (else it goes alone, at its full enlargement).
ENLARGED_WITH_ROWS = 1.5
#: The Monthly chart's series: the P50 and, stacked on it, the contingency up to the P90.
SERIES_NAMES = {"total_cost_usd": "P50 (the estimate)",
                "contingency_usd": "Contingency: P50 up to P90"}  # fmt: skip
#: The Variance chart's axis and legend text (pt): readable when the wide sheet prints scaled
#: down, the chart on the next page.
CHART_TEXT_PT = 12
#: The Variance chart's series: column of the ``variance_months`` table -> (name, colour).
VARIANCE_SERIES = {"budget_usd": ("Budget (P50 plan)", "A6A6A6"),
                   "actual_usd": ("Actual", "1F4E79"),
                   "forecast_usd": ("Forecast (P50)", "F4B183")}  # fmt: skip
#: Runs per page across on the Runs sheet (its first column repeats on each page).
RUNS_PER_PAGE = 4
_RUN_WIDTHS = (38, 13, 18)

#: The Checks sheet's saved values that differ, narrower than mismatches.csv so that the
#: sheet prints one page wide: the cell as "Calculations!G48 (typed value)" (its sheet, and
#: what it holds), the long scenario name in the wide Detail column.
MISMATCH_COLUMNS = ["file", "cell", "scenario", "name", "cached_value", "engine_value",
                    "relative_difference"]  # fmt: skip

#: (sheet, [(table, its columns on the sheet, totals row label, section title)],
#: columns frozen at the left). A sheet of one table has its header on row 1, repeated on
#: every printed page; a sheet of several has a title above each, and its last table, when
#: it is the longest, has its header repeated on the pages it runs onto.
SHEETS = (
    ("Costs", [
        ("costs", ["scenario", "accelerator_hours", "usd_per_accelerator_hour",
                   "compute_cost_usd", "electricity_cost_usd", "other_costs_usd",
                   "total_cost_usd", "compute_cost_share"],
         "Total", None),
        ("ranges", ["scenario", "accelerator_hours_p10", "accelerator_hours",
                    "accelerator_hours_p90", "total_cost_usd_p10", "total_cost_usd",
                    "total_cost_usd_p90", "contingency_usd", *CONTINGENCY_PARTS], "Total",
         "Ranges: P10, P50 and P90 (ranges.csv has every quantity's); the contingency by "
         "cause"),
        ("monthly_by_run", ["scenario", "month", "share", "compute_cost_usd",
                            "electricity_cost_usd", "other_costs_usd", "total_cost_usd",
                            "total_cost_usd_p90", "contingency_usd"], "Total",
         "Monthly spend by run (the rows the Monthly sheet adds up)"),
    ], 1),
    ("Blank inputs", [("blank_inputs", ["scenario", "input_label", "value_used", "unit",
                                        "why"], None, None)], 1),
    ("Monthly", [("monthly", list(TABLE_COLUMNS["monthly"]), "Total", None)], 1),
    ("Checks", [
        ("checks", ["check", "status", "detail", "file"], None, None),
        ("files", ["file", "size_bytes", "sha256", "planner_template_version",
                   "budget_status_row", "cached_values"], None,
         "Files read (files.csv also has the scenarios read)"),
        ("mismatches", MISMATCH_COLUMNS, None,
         "Saved values that differ from the engine"),
    ], 2),
    ("Sources", [("sources", ["section", "item", "value", "unit", "detail"], None, None)], 2),
)  # fmt: skip

#: The Variance sheet (report --actuals), after Monthly: the same shape as SHEETS' entries.
VARIANCE_SHEET = ("Variance", [
    ("variance_to_date", TO_DATE_COLUMNS, "Total to date", None),
    ("variance_by_month", [c for c in BY_MONTH_COLUMNS if c != "scenario"], "Total to date",
     "By run and month (variance.csv has them in long format)"),
    ("unplanned", UNPLANNED_COLUMNS, "Total",
     "Spend no budget run holds: run codes no plan has (unplanned) and FOCUS spend without a "
     "run tag (unallocated)"),
    ("variance_months", MONTHS_COLUMNS, "Total",
     "Every budget run by month: budget (the P50 plan), actual and forecast (P50; the actual "
     "months, then the re-forecast), the chart's figures"),
], 1)  # fmt: skip

#: The Baseline sheet, after Monthly, in a hand-off made with report --baseline.
BASELINE_SHEET = ("Baseline", [("baseline", [
    "run_code", "scenario", "budget_status", "baseline_status", "line", "month",
    "baseline_p50_usd", "p50_usd", "change_usd", "baseline_approved_usd", "change"], None,
    None)], 2)  # fmt: skip


#: Every data sheet (after Summary, Budget and Runs) by its title.
_DATA_SHEETS = {s[0]: s for s in (*SHEETS, VARIANCE_SHEET, BASELINE_SHEET)}


def _sheets(c):
    """The data sheets of ``c``'s hand-off: those :func:`.summary.sheet_guide` lists for it
    (the Variance sheet given actuals, the Baseline sheet given a baseline table), in its
    order."""
    return [_DATA_SHEETS[title] for title, _ in sheet_guide(c) if title in _DATA_SHEETS]


#: Sheet -> the Excel Tables on it, each named like its CSV file (and, with a baseline,
#: ``Baseline`` -> ``baseline``).
TABLE_NAMES = {
    "Budget": ("budget", "not_in_budget"),
    "Runs": ("runs",),
    **{title: tuple(t[0] for t in parts) for title, parts, _ in SHEETS},
}

_EMPTY = {
    "mismatches": "No saved value differs from the engine.",
    "monthly": "No budget run with a start date: nothing to schedule.",
    "monthly_by_run": "No budget run with a start date: nothing to schedule.",
    "costs": "No scenario is in the budget (see Not in the budget on the Budget sheet).",
    "ranges": "No scenario is in the budget.",
    "blank_inputs": "No input was left blank.",
    "variance_to_date": "No budget run has actuals.",
    "variance_by_month": "No budget run has actuals.",
    "unplanned": "None: every dollar of the actuals is a budget run's.",
    "variance_months": "No budget run has a scheduled month.",
}
#: Widest a column gets on these sheets (longer text wraps): each sheet fits the page.
_WIDE = {"source": 30, "run_code": 20, "detail": 40, "why": 40, "input_label": 28,
         "scenario": 18, "file": 22, "sha256": 34, "item": 26, "check": 20, "month": 14,
         "unit": 14}  # fmt: skip
#: Sheets whose widest column takes what the others leave of the page.
_SHEET_WIDE = {"Sources": {"detail": 58},
               "Checks": {"detail": 64, "status": 17, "budget_status_row": 16,
                          "cached_values": 14},
               "Variance": {"budget_usd": 16, "scenario": 16},
               "Baseline": {"change": 26}}  # fmt: skip
#: The Runs sheet shows parameters and tokens in billions (the cells hold the exact figures).
_IN_BILLIONS = ("total_params", "active_params", "training_tokens")


def _heading(name):
    return f"{header(name)} (billions)" if name in _IN_BILLIONS else header(name)


def _units(ws, df, first_row):
    """Sources and Blank inputs: each value in its own unit's format, the unit beside it."""
    col = list(df.columns).index("value" if "value" in df.columns else "value_used") + 1
    for i, unit in enumerate(df["unit"], start=first_row):
        cell = ws.cell(row=i, column=col)
        if unit and isinstance(cell.value, int | float):
            cell.number_format = fmt("value", unit)
        if unit in _SHORT_UNITS:
            ws.cell(row=i, column=col + 1).value = _SHORT_UNITS[unit] or None
        if unit == "fraction":  # shown as a percentage: say so
            ws.cell(row=i, column=col + 1).value = "%"
        ws.cell(row=i, column=col + 1).alignment = Alignment(
            horizontal="left", vertical="top", indent=1
        )


def _block(ws, row, table, df, totals, title):
    """One table on ``ws`` from ``row`` (its title first, if any): header, rows, totals, an
    Excel Table over the header and rows. Returns (its header row, the last row)."""
    if title:
        cell = put(ws, row, 1, title)
        cell.font, cell.alignment = STYLES["section"], Alignment(wrap_text=False)
        row += 1
    head = row
    if not len(df) and title:  # an empty table after another: its title and one line
        cell = put(ws, head, 1, _EMPTY.get(table, "Nothing to show."))
        cell.alignment = Alignment(wrap_text=False)
        return head, head
    last = write_table(ws, df, head, totals=totals, additive=ADDITIVE)
    for j, name in enumerate(df.columns, start=1):
        if table == "ranges" and name in RANGE_QUANTITIES:  # the point estimate is the P50
            ws.cell(row=head, column=j).value = f"{header(name)}, P50"
    if "unit" in df.columns and len(df):
        _units(ws, df, head + 1)
    if not len(df):
        cell = put(ws, last + 1, 1, _EMPTY.get(table, "Nothing to show."))
        cell.alignment = Alignment(wrap_text=False)
        return head, cell.row
    add_table(ws, table, head, head + len(df), len(df.columns))
    return head, last


def _sheet(wb, c, title, parts, freeze, generated, paper):
    ws = wb.create_sheet(title)
    row, blocks, names, chart, heads = 1, [], None, None, []
    for table, columns, totals, section in parts:
        df = with_unscheduled(c, table) if table == "monthly" else c.tables[table]
        if table == "mismatches":  # the cell, its sheet and what it holds in one column
            where = zip(df["sheet"], df["cell"], df["cell_holds"], strict=True)
            df = df.assign(cell=[f"{s}!{r} ({h})" for s, r, h in where])
        df = df[columns]
        units = None
        if table == "mismatches":  # the quantity's label (mismatches.csv: its name)
            units = [Q[n].unit if n in Q else None for n in df["name"]]
            df = df.assign(name=[Q[n].label if n in Q else n for n in df["name"]])
        names = (names or []) + list(columns[len(names or []) :])  # each column's first name
        head, last = _block(ws, row, table, df, totals, section if row > 1 else None)
        if units:  # each saved and engine value in its quantity's own format
            _value_formats(ws, head, list(columns), units)
        if table == "monthly" and len(df):  # the rows page 1's period formulas add up
            for column, name in MONTHLY_RANGES.items():
                letter = get_column_letter(columns.index(column) + 1)
                wb.defined_names[name] = DefinedName(
                    name, attr_text=f"{quote_sheetname(title)}!${letter}${head + 1}:"
                    f"${letter}${head + len(df)}")  # fmt: skip
        heads.append((len(df), head))
        blocks.append((row, min(4, last - row + 1)))  # the title, header and first rows
        if table == "monthly" and len(df[df["month"] != UNSCHEDULED]):
            chart = (_chart, df[df["month"] != UNSCHEDULED], head)
        if table == "variance_months" and len(df):
            chart = (_variance_chart, df, head)
        row = last + 3
    for line in ws.iter_rows(min_row=2):  # a row grown by wrapped text reads from the top
        for cell in line:
            if cell.value is not None and not is_header(cell):
                realign(cell, vertical="top")
    _pad_text_after_figures(ws)
    fit_columns(ws, names, 1, ws.max_row, wide={**_WIDE, **_SHEET_WIDE.get(title, {})})
    fit_rows(ws, 2)
    fit_header_rows(ws)
    ws.freeze_panes = ws.cell(row=2, column=freeze + 1)
    setup_print(ws, title, generated, pages_wide=1, paper=paper,
                header_rows=_repeated_header(heads))  # fmt: skip
    keep_together(ws, blocks)
    if chart is not None:  # once the rows have their heights and the pages their breaks
        chart[0](ws, *chart[1:])
    return ws


def _repeated_header(heads):
    """The header row a sheet repeats atop each page it continues on (``heads``: (rows, header
    row) of each table, in order): the one table's, or the last table's when it is the
    longest (Costs' monthly spend, the Variance sheet's months), which no other table
    follows; else none."""
    rows, head = heads[-1]
    if rows and (len(heads) == 1 or rows >= max(n for n, _ in heads)):
        return f"{head}:{head}"
    return None


def _value_formats(ws, head, columns, units):
    """The mismatches' saved and engine values (the rows under ``head``) each in the format
    of its quantity's unit (``units``, one a row), as the Sources sheet shows values."""
    for i, unit in enumerate(units, start=head + 1):
        for name in ("cached_value", "engine_value"):
            cell = ws.cell(row=i, column=columns.index(name) + 1)
            if unit and isinstance(cell.value, int | float):
                cell.number_format = fmt("value", unit)


def _pad_text_after_figures(ws):
    """Indent the text of a column that follows right-aligned figures or dates in the column
    to its left (the whole column, so it stays aligned), so that the two never touch in
    print ("2027-03-01 calibrated default", "4 yes")."""

    def figure(value):
        return isinstance(value, int | float | _dt.date) and not isinstance(value, bool)

    for j in range(2, ws.max_column + 1):
        rows = range(2, ws.max_row + 1)
        if not any(isinstance(ws.cell(row=r, column=j).value, str)
                   and figure(ws.cell(row=r, column=j - 1).value) for r in rows):  # fmt: skip
            continue
        for r in rows:
            cell = ws.cell(row=r, column=j)
            if isinstance(cell.value, str) and not is_header(cell):
                realign(cell, horizontal="left", indent=max(1, cell.alignment.indent or 0))


def _run_headers(df):
    """One header per run: its name, made unique (a name in two files: its run code)."""
    names = list(df["scenario"].astype(str))
    return [n if names.count(n) == 1 else f"{n} ({code})" for n, code in zip(
        names, df["run_code"], strict=True)]  # fmt: skip


def _runs_sheet(wb, c, generated, paper):
    """Runs: runs.csv turned, one column per run and a row per input and output (a default
    used for a blank input in grey italics); a Total column for the figures that add up."""
    ws = wb.create_sheet("Runs")
    df = c.tables["runs"]
    runs = len(df)
    put(ws, 1, 1, "Quantity (grey italics: a default used for a blank input)")
    for j, text in enumerate(_run_headers(df), start=2):
        put(ws, 1, j, text)
    total_col = runs + 2
    if runs:
        put(ws, 1, total_col, "Total")
    blank = {((b.file, b.column), b.input)
             for b in c.tables["blank_inputs"].itertuples(index=False)}  # fmt: skip
    grey = Font(italic=True, color="808080")
    for i, name in enumerate(RUN_ROWS, start=2):
        put(ws, i, 1, _heading(name))
        number_format = BILLIONS if name in _IN_BILLIONS else fmt(name)
        where = zip(df["file"], df["column"], strict=True)
        for j, (value, rid) in enumerate(zip(df[name], where, strict=True), start=2):
            cell = (
                file_cell(ws, i, j, value)
                if name == "file"
                else put(ws, i, j, value, number_format)
            )
            if (rid, name) in blank:
                cell.font = grey
        if runs and name in ADDITIVE:
            first, last = get_column_letter(2), get_column_letter(runs + 1)
            cell = put_sum(ws, i, total_col, f"=SUBTOTAL(9,{first}{i}:{last}{i})", name,
                           df[name], number_format)  # fmt: skip
            cell.font = STYLES["bold"]
    for j in range(1, total_col + (1 if runs else 0)):
        cell = ws.cell(row=1, column=j)
        cell.font, cell.fill, cell.alignment = (
            STYLES["header_font"], STYLES["header_fill"], STYLES["header_align"])  # fmt: skip
    if runs:
        add_table(ws, "runs", 1, len(RUN_ROWS) + 1, runs + 1)
    else:
        put(ws, len(RUN_ROWS) + 2, 1, "No scenario is in the budget (see the Budget sheet).")
    _fit_runs(ws, runs, total_col)
    pages = max(1, -(-runs // RUNS_PER_PAGE))
    setup_print(ws, "Runs", generated, pages_wide=pages, header_rows="1:1",
                title_cols="A:A" if pages > 1 else None, portrait=True, paper=paper)  # fmt: skip
    return ws


def _fit_runs(ws, runs, total_col):
    label, narrow, wide = _RUN_WIDTHS
    shown = min(runs, RUNS_PER_PAGE) + 1  # and the Total column
    width = max(narrow, min(wide, (PAGE_PORTRAIT[0] - label - shown) / shown))
    ws.column_dimensions["A"].width = label
    for j in range(2, total_col + 1):
        ws.column_dimensions[get_column_letter(j)].width = width
    for row in ws.iter_rows():
        for cell in row:
            if cell.data_type == "f":
                realign(cell, vertical="top")
            elif isinstance(cell.value, str) and cell.row > 1 and cell.column <= total_col:
                realign(cell, vertical="top", wrap_text=len(cell.value) + 2 > (
                    label if cell.column == 1 else width))  # fmt: skip
            elif cell.value is not None and cell.row > 1:
                realign(cell, vertical="top")
    fit_rows(ws, 2)
    fit_header_rows(ws)
    ws.freeze_panes = "B2"


def _chart(ws, df, head):
    """Spend by month on a date axis (every month, $0 where nothing is spent): the P50 and,
    stacked on it, the contingency up to the P90 (US$); budget runs only."""
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    extra = df["contingency_usd"].fillna(0).abs().sum() > 0
    chart.title = "Spend by month: P50, and up to P90" if extra else "Spend by month (P50)"
    chart.legend.position = "b"
    # the $0 label left out: at the foot of the axis it would print over the first month
    chart.y_axis.numFmt = chart.y_axis.number_format = '[=0]"";' + USD
    chart.y_axis.majorGridlines = None
    chart.x_axis = DateAxis(crossAx=100, axPos="b")
    chart.x_axis.number_format = MONTH
    chart.x_axis.majorTimeUnit = "months"
    chart.x_axis.baseTimeUnit = "months"
    chart.x_axis.majorUnit = max(1, -(-len(df) // 12))
    chart.x_axis.delete = chart.y_axis.delete = False
    n = len(df)
    for name in ("total_cost_usd", "contingency_usd") if extra else ("total_cost_usd",):
        col = list(df.columns).index(name) + 1
        chart.add_data(Reference(ws, min_col=col, min_row=head + 1, max_row=head + n))
        chart.series[-1].tx = SeriesLabel(v=SERIES_NAMES[name])
    chart.set_categories(Reference(ws, min_col=1, min_row=head + 1, max_row=head + n))
    _place(ws, chart)


def _variance_chart(ws, df, head):
    """Budget (the P50 plan), actual and forecast (P50) by month of every budget run
    together, side by side (US$), on a date axis: the ``variance_months`` table's rows."""
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap, chart.gapWidth = "col", "clustered", 0, 60
    chart.title = "Budget, actual and forecast by month"
    chart.legend.position = "b"
    chart.y_axis.numFmt = chart.y_axis.number_format = '[=0]"";' + USD
    chart.y_axis.majorGridlines = None
    chart.x_axis = DateAxis(crossAx=100, axPos="b")  # every month, a gap where nothing is
    chart.x_axis.number_format = MONTH
    chart.x_axis.majorTimeUnit = chart.x_axis.baseTimeUnit = "months"
    span = (df["month"].max().year - df["month"].min().year) * 12 + (
        df["month"].max().month - df["month"].min().month) + 1  # fmt: skip
    chart.x_axis.majorUnit = max(1, -(-span // 12))
    chart.x_axis.delete = chart.y_axis.delete = False
    n = len(df)
    for name, (label, colour) in VARIANCE_SERIES.items():
        col = list(df.columns).index(name) + 1
        chart.add_data(Reference(ws, min_col=col, min_row=head + 1, max_row=head + n))
        series = chart.series[-1]
        series.tx = SeriesLabel(v=label)
        series.graphicalProperties.solidFill = colour
        series.graphicalProperties.line.solidFill = colour
    chart.set_categories(Reference(ws, min_col=1, min_row=head + 1, max_row=head + n))
    text = CharacterProperties(sz=CHART_TEXT_PT * 100)
    for part in (chart.x_axis, chart.y_axis, chart.legend):
        part.txPr = RichText(p=[Paragraph(pPr=ParagraphProperties(defRPr=text),
                                          endParaRPr=text)])  # fmt: skip
    _place(ws, chart, alone=2.0)


def _place(ws, chart, alone=1.0):
    """Put ``chart`` below the last row of ``ws``, on the next page when the rest of the page,
    as it prints, is too short for it (:func:`.layout.page_room`): with the table's last
    :data:`CHART_ROWS` rows when the page repeats the table's header (never a header over a
    chart alone) and they fit there with it, the whole table with its title when it is no
    longer than that, else alone. On the next page and ``alone`` not
    1, it is up to ``alone`` times as tall as it fits and as wide as the page (the sheet
    prints scaled down to its width)."""
    chart.height, chart.width = CHART_CM
    anchor = ws.max_row + 2  # below the totals row and a blank row
    tall = CHART_CM[0] / 2.54 * 72  # points
    if tall > page_room(ws, anchor - 1):  # never cut: on the next page, from the blank row
        # at the latest (its frame's top edge would print on the page above)
        titles = title_rows(ws)
        ws.row_breaks.append(Break(id=anchor - 2))
        if titles and anchor - 2 - CHART_ROWS > titles[1] + 1:  # the table's last rows with it
            ws.row_breaks.brk[-1] = Break(id=anchor - 2 - CHART_ROWS)
            if page_room(ws, anchor - 1) < tall * min(alone, ENLARGED_WITH_ROWS):
                ws.row_breaks.brk[-1] = Break(id=anchor - 2)
        elif titles and titles[0] > 2:  # a short table: its title, header and rows go with it
            ws.row_breaks.brk[-1] = Break(id=titles[0] - 2)
            if page_room(ws, anchor - 1) < tall:
                ws.row_breaks.brk[-1] = Break(id=anchor - 2)
        if alone != 1:  # as tall as the rest of the page lets it, up to alone times
            scale = min(1.0, PAGE_LANDSCAPE[0] / sheet_width(ws))
            high = max(1.0, min(alone, 0.95 * page_room(ws, anchor - 1) / tall))
            chart.height, chart.width = CHART_CM[0] * high, CHART_CM[1] / scale
    ws.add_chart(chart, f"A{anchor}")
    ws.print_area = used_area(ws)  # the print set-up's area, and the chart


def build_workbook(c, generated=None, share=False):
    """The hand-off workbook of ``c`` (an openpyxl Workbook). ``share``: each sheet's cells of
    one look share one style array once the sheet is done (:func:`share_styles`; less
    memory), for a workbook that is saved as it is, its cells never restyled."""
    if generated is None:  # the same date as the CSV files of the same run
        if getattr(c, "as_of", None) is None:
            c.as_of = _dt.datetime.now(_dt.UTC).replace(tzinfo=None, microsecond=0)
        generated = c.as_of
    paper = getattr(c, "paper", None)
    wb, seen = Workbook(), {}
    sheets = [lambda: write_summary(wb.active, c, generated, paper),
              lambda: write_budget(wb.create_sheet("Budget"), c, generated, paper),
              lambda: _runs_sheet(wb, c, generated, paper)]  # fmt: skip
    sheets += [lambda s=s: _sheet(wb, c, *s, generated, paper) for s in _sheets(c)]
    for make in sheets:
        make()
        if share:  # the sheet is done
            share_styles(wb.worksheets[-1], seen)
    assert [s for s, _ in sheet_guide(c)] == wb.sheetnames  # noqa: S101 (the guide lists them all)
    write_baseline_data(wb, c, generated)  # very hidden: what a later report --baseline reads
    if share:
        share_styles(wb.worksheets[-1], seen)
    wb.properties.creator = "compute-lab report"
    wb.properties.title = "Compute Lab hand-off"
    return wb


def share_styles(ws, seen):
    """Make the cells of one look on ``ws`` share one style array (``seen``: look -> array,
    shared by the sheets of a workbook). openpyxl keeps one array per cell, over a hundred
    bytes, for a few dozen looks in a hand-off of a million cells. Only for a finished
    sheet: setting a cell's style changes its array in place."""
    for cell in ws._cells.values():
        style = cell._style
        if style is not None:
            cell._style = seen.setdefault(tuple(style), style)


def write_workbook(c, path):
    """Write the hand-off workbook of ``c`` to ``path`` (any existing file is replaced)."""
    save_workbook(build_workbook(c, share=True), path)
