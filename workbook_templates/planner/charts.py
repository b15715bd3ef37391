"""The Charts sheet: scenario comparison; wall-clock days against accelerators."""

from __future__ import annotations

from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.worksheet.pagebreak import Break

from udfs import model

from ..sheetkit import Book, number_format, paragraph, put_text
from .layout import FIRST_COL, LAST_COL, checks_flag, show_axes
from .sensitivity import SENS_ACCELERATORS


def charts_sheet(book):
    """The Charts sheet (after Calculations and Sensitivity)."""
    ws = book.sheet("Charts", {"A": 16, "B": 16})
    book.title(ws, "Charts", "Scenario comparison, and wall-clock days against accelerators.")
    checks_flag(ws, "A3")
    put_text(ws["A4"], "Accelerators").style = "Header"
    put_text(ws["B4"], "Wall-clock days").style = "Header"
    days_first = book.cells["sens.days_first"][1]  # C7: first MFU column, first row
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
    last = 4 + len(SENS_ACCELERATORS)
    paragraph(ws, last + 1, 1, "Selected scenario at its own TFLOP/s (Summary).", 6)
    _days_chart(ws, last)
    _scenario_charts(book, ws)
    Book.finish(ws)
    return ws


def _days_chart(ws, last):
    """Wall-clock days against accelerators, for the selected scenario."""
    sc = ScatterChart(scatterStyle="lineMarker")
    sc.title = "Wall-clock days against accelerators (selected scenario)"
    sc.x_axis.title = "Accelerators"
    sc.y_axis.title = "Days"
    xs = Reference(ws, min_col=1, min_row=5, max_row=last)
    ys = Reference(ws, min_col=2, min_row=4, max_row=last)
    series = Series(ys, xs, title_from_data=True)
    series.marker.symbol = "circle"
    sc.series.append(series)
    sc.legend = None
    show_axes(sc)
    sc.width, sc.height = 17, 9
    ws.add_chart(sc, "D4")


def _scenario_charts(book, ws):
    """Total cost, accelerator-hours and days by scenario, one chart per printed page."""
    calc = book.wb["Calculations"]
    cats = Reference(calc, min_col=FIRST_COL, max_col=LAST_COL, min_row=4)  # scenario names
    charts = (
        ("total_cost_usd", "Total cost by scenario (US$)", "A24"),
        ("accelerator_hours", "Accelerator-hours by scenario", "A44"),
        ("wall_clock_days", "Wall-clock days by scenario", "A64"),
    )
    for name, title, anchor in charts:
        _, row, _, _ = book.rows[name]
        chart = BarChart()
        chart.type = "col"
        chart.title = title
        chart.legend = None
        data = Reference(calc, min_col=FIRST_COL, max_col=LAST_COL, min_row=row)
        chart.add_data(data, from_rows=True, titles_from_data=False)
        chart.set_categories(cats)
        show_axes(chart)
        chart.width, chart.height = 24, 9.5
        ws.add_chart(chart, anchor)
        ws.row_breaks.append(Break(id=int(anchor[1:]) - 1))  # one chart per printed page
