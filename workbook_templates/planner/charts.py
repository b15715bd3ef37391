"""The Charts sheet: wall-clock days against accelerators, and the filled scenarios compared.

Page 1: the selected scenario's days against accelerators (log axes) and the table of the
scenarios that have figures (filled columns first, by formulas, so that empty custom
columns are never plotted), and the reference runs and the example charted apart (their total
cost). Page 2, four charts of the team's scenarios: total cost P10-P50-P90 (floating bars:
stacked bars on an invisible P10 base), total cost at P50, accelerator-hours and wall-clock
days.
"""

from __future__ import annotations

from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.chart.data_source import NumFmt
from openpyxl.chart.shapes import GraphicalProperties
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs import model

from ..sheetkit import Book, number_format, put_text
from .layout import N_CUSTOM, SCENARIO_COLUMNS, checks_flag, show_axes
from .sensitivity import SENS_ACCELERATORS

#: The table of filled scenarios: header row, and one row per scenario column.
TABLE_HEAD = 22
N_SCENARIOS = len(SCENARIO_COLUMNS)
#: The first rows of the table are the team's (custom) columns, the last the three reference
#: columns: page 2's charts plot the team's rows only, so that a reference run's cost (tens of
#: millions) never squashes a team's bars; the references have their own chart on page 1.
N_TEAM = N_CUSTOM
N_REFERENCES = N_SCENARIOS - N_CUSTOM
#: The rank row (which filled scenario each column is), under the table.
RANK_ROW = TABLE_HEAD + N_SCENARIOS + 2
#: The row page 1 breaks after; page 2 holds four charts, two by two.
PAGE_BREAKS = (33,)
CHART_HEIGHT_CM, CHART_WIDTH_CM = 7.8, 13.9
#: The rows of page 2's two rows of charts, and the columns of its two columns.
CHART_ROWS = (PAGE_BREAKS[0] + 2, PAGE_BREAKS[0] + 18)
CHART_COLS = ("A", "E")
US_DOLLARS = '"$"#,##0'
NOTE_FONT = Font(italic=True, color="595959")
#: Notes on the chart pages: how the charts fill in, and why a bar of the range chart is missing.
FILL_NOTE = (
    "These charts plot the scenarios in the table on page 1 and fill in as scenario columns "
    "are filled on Inputs (a column without its required inputs is left out)."
)
RANGE_NOTE = (
    "No bar: P10 = P50 = P90 (throughput uncertainty typed as 0, price uncertainty 0 or "
    "blank). A blank throughput uncertainty takes the calibrated spread, typed MFU or not."
)
#: Table columns: (header, defined-name source or formula, number format). The two spreads are
#: rounded to the cent: with no range, P10 = P50 = P90 up to the last bit, and Excel and
#: LibreOffice show such a difference as 0 while Gnumeric shows the bit (3.6E-12).
_TABLE = (
    ("Scenario", "scenario_name", "General"),
    ("Total cost P10 (US$)", "total_cost_usd_p10", US_DOLLARS),
    ("Total cost P50 (US$)", "total_cost_usd", US_DOLLARS),
    ("Total cost P90 (US$)", "total_cost_usd_p90", US_DOLLARS),
    ("P10 to P50 (US$)", '=IF(ISNUMBER(<D>),ROUND(<D>-<C>,2),"")', US_DOLLARS),
    ("Contingency, P90 - P50 (US$)", '=IF(ISNUMBER(<E>),ROUND(<E>-<D>,2),"")', US_DOLLARS),
    ("Accelerator-hours", "accelerator_hours", number_format("accelerator-hours")),
    ("Wall-clock days", "wall_clock_days", number_format("days")),
)


def charts_sheet(book):
    """The Charts sheet (after Calculations and Sensitivity)."""
    ws = book.sheet("Charts", {"A": 14, "B": 30, **{get_column_letter(c): 15
                                                    for c in range(3, 10)}})  # fmt: skip
    book.title(
        ws,
        "Charts",
        "Wall-clock days against accelerators (selected scenario), and the scenarios that have "
        "figures (empty columns are left out).",
    )
    checks_flag(ws, "A3")
    last = _days_table(book, ws)
    note = put_text(ws.cell(last + 1, 1), "Selected scenario at its own TFLOP/s (Summary).")
    note.font = NOTE_FONT
    _days_chart(ws, last)
    _filled_table(book, ws)
    _scenario_charts(ws)
    for row in PAGE_BREAKS:
        ws.row_breaks.append(Break(id=row))
    Book.finish(ws, print_area=f"A1:I{PAGE_BREAKS[0] + 33}")
    return ws


def _days_table(book, ws):
    """Accelerators (the Sensitivity axis) and the selected scenario's days; last row."""
    put_text(ws["A4"], "Accelerators").style = "Header"
    put_text(ws["B4"], "Wall-clock days").style = "Header"
    days_first = book.cells["sens.days_first"][1]  # first MFU column, first row
    first_row = int("".join(ch for ch in days_first if ch.isdigit()))
    for i in range(len(SENS_ACCELERATORS)):
        r = 5 + i
        ws.cell(r, 1, f"=Sensitivity!$B${first_row + i}").style = "Link"
        ws.cell(r, 1).number_format = number_format("accelerators")
        days = model.excel(
            "wall_clock_days",
            {"accelerator_hours": "{sel.accelerator_hours}", "accelerators": f"A{r}"},
        )
        ws.cell(
            r, 2, book.formula(f'=IF(AND({{sel.scenario_ready}},N(A{r})>0),{days},"")', ws.title)
        )
        ws.cell(r, 2).number_format = number_format("days")
    return 4 + len(SENS_ACCELERATORS)


def _axis_titles(chart, x_title, y_title, y_format):
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    chart.y_axis.numFmt = NumFmt(formatCode=y_format, sourceLinked=False)
    show_axes(chart)


def _days_chart(ws, last):
    """Wall-clock days against accelerators, for the selected scenario, on log axes."""
    sc = ScatterChart(scatterStyle="lineMarker")
    sc.title = "Days against accelerators (selected)"
    # the lowest day label (1) left out: it would print over the lowest accelerators label
    _axis_titles(sc, "Accelerators (log scale)", "Wall-clock days (log scale)",
                 '[<2]"";#,##0')  # fmt: skip
    sc.x_axis.numFmt = NumFmt(formatCode="#,##0", sourceLinked=False)
    sc.x_axis.scaling.logBase = 10
    sc.y_axis.scaling.logBase = 10
    xs = Reference(ws, min_col=1, min_row=5, max_row=last)
    ys = Reference(ws, min_col=2, min_row=4, max_row=last)
    series = Series(ys, xs, title_from_data=True)
    series.marker.symbol = "circle"
    sc.series.append(series)
    sc.legend = None
    sc.width, sc.height = 8.6, 8.5
    ws.add_chart(sc, "C4")


def _filled_table(book, ws):
    """The scenarios with figures, filled columns first (formulas), and the rank row."""
    put_text(ws.cell(TABLE_HEAD - 1, 1),
             "Scenarios with figures (filled columns, in order; these feed the charts)"
             ).style = "Section"  # fmt: skip
    book.header(ws, TABLE_HEAD, ["No.", *(h for h, _, _ in _TABLE)])
    ws.row_dimensions[TABLE_HEAD].height = 30
    # rank row: the j-th column's place among the filled ones ("" when not filled)
    put_text(ws.cell(RANK_ROW, 1), "Place among the filled scenarios, by column (hidden row)")
    ws.row_dimensions[RANK_ROW].hidden = True
    for j in range(N_SCENARIOS):
        if j < N_REFERENCES:  # the references and the example: fixed rows after the team's
            rank = f'=IF(INDEX(scenario_ready,1,{j + 1}),{N_TEAM + j + 1},"")'
        else:  # the team's filled columns first, in order
            rank = (f'=IF(INDEX(scenario_ready,1,{j + 1}),COUNTIF(INDEX(scenario_ready,1,'
                    f'{N_REFERENCES + 1}):INDEX(scenario_ready,1,{j + 1}),TRUE),"")')  # fmt: skip
        cell = ws.cell(RANK_ROW, 3 + j, rank)
        cell.style = "Calc"
    ranks = f"$C${RANK_ROW}:${get_column_letter(2 + N_SCENARIOS)}${RANK_ROW}"
    for k in range(N_SCENARIOS):
        r = TABLE_HEAD + 1 + k
        ws.cell(r, 1, k + 1)
        idx = f"IFERROR(MATCH({k + 1},{ranks},0),0)"
        for i, (_, source, fmt) in enumerate(_TABLE):
            if source.startswith("="):
                text = source.replace("<C>", f"C{r}").replace("<D>", f"D{r}")
                text = text.replace("<E>", f"E{r}")
            else:
                text = f'=IF({idx}>0,INDEX({source},1,{idx}),"")'
            cell = ws.cell(r, 2 + i, text)
            cell.style = "Link" if not source.startswith("=") else "Calc"
            cell.number_format = fmt


def _bar_chart(title, y_title, y_format):
    chart = BarChart()
    chart.type = "bar"  # horizontal: the scenario names read across, the first on top
    chart.title = title
    chart.legend = None
    chart.gapWidth = 50
    _axis_titles(chart, "Scenario", y_title, y_format)
    chart.x_axis.scaling.orientation = "maxMin"  # the first scenario on top
    chart.y_axis.scaling.min = 0  # bars from zero: lengths compare (no cut-off axis)
    chart.width, chart.height = CHART_WIDTH_CM, CHART_HEIGHT_CM
    return chart


def _scenario_charts(ws):
    """The range chart and three bar charts over the filled scenarios, two per page."""
    first, last = TABLE_HEAD + 1, TABLE_HEAD + N_SCENARIOS
    team = TABLE_HEAD + N_TEAM  # the last row of the team's scenarios
    team_cats = Reference(ws, min_col=2, min_row=first, max_row=team)

    def column(col, to=last):
        return Reference(ws, min_col=col, min_row=TABLE_HEAD, max_row=to)

    # floating bars: an invisible P10 base, then P10 to P50 and P50 to P90 stacked on it
    rng = _bar_chart("Total cost of your scenarios: P10 to P50 (light), P50 to P90 (dark)",
                     "Total cost (US$): bars run from P10 to P90, P50 where they meet",
                     US_DOLLARS)  # fmt: skip
    rng.grouping, rng.overlap = "stacked", 100
    for col in (3, 6, 7):
        rng.add_data(column(col, team), titles_from_data=True)
    rng.set_categories(team_cats)
    base, low, high = rng.series
    base.graphicalProperties = GraphicalProperties(noFill=True)
    base.graphicalProperties.line.noFill = True
    low.graphicalProperties = GraphicalProperties(solidFill="9DC3E6")
    high.graphicalProperties = GraphicalProperties(solidFill="1F4E78")
    ws.add_chart(rng, f"{CHART_COLS[0]}{CHART_ROWS[0]}")
    for row, text in ((PAGE_BREAKS[0] + 1, FILL_NOTE), (CHART_ROWS[1] - 1, RANGE_NOTE)):
        put_text(ws.cell(row, 1), text).font = NOTE_FONT

    charts = (
        (4, "Total cost of your scenarios (P50)", "Total cost (US$)", US_DOLLARS),
        (8, "Accelerator-hours of your scenarios", "Accelerator-hours", "#,##0"),
        (9, "Wall-clock days of your scenarios", "Wall-clock days", "#,##0"),
    )
    anchors = (f"{CHART_COLS[1]}{CHART_ROWS[0]}", f"{CHART_COLS[0]}{CHART_ROWS[1]}",
               f"{CHART_COLS[1]}{CHART_ROWS[1]}")  # fmt: skip
    for (col, title, y_title, fmt), anchor in zip(charts, anchors, strict=True):
        chart = _bar_chart(title, y_title, fmt)
        chart.add_data(column(col, team), titles_from_data=True)
        chart.set_categories(team_cats)
        ws.add_chart(chart, anchor)
    # the reference runs and the example, charted apart (page 1)
    refs = _bar_chart("References (P50 cost)", "Total cost (US$ millions)", '"$"#,##0,,"M"')
    refs.add_data(Reference(ws, min_col=4, min_row=team + 1, max_row=last), titles_from_data=False)
    refs.set_categories(Reference(ws, min_col=2, min_row=team + 1, max_row=last))
    refs.width, refs.height = 11.4, 8.5
    ws.add_chart(refs, "F4")
