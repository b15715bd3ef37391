"""The Monthly spend sheet: the selected run spread over calendar months."""

from __future__ import annotations

from openpyxl.utils import get_column_letter

from udfs import model

from ..sheetkit import Book, bold, number_format, paragraph, put_text
from .layout import MONTHS


def monthly_sheet(book):
    """The Monthly spend sheet of the selected scenario (after Summary)."""
    ws = book.sheet("Monthly spend", {"A": 14, "B": 14, "C": 16, "D": 12, "E": 18, "F": 16,
                                      "G": 16, "H": 16, "I": 18})  # fmt: skip
    book.title(
        ws,
        "Monthly spend schedule of the selected scenario",
        "Spend spread evenly over the run's wall-clock time from the start date (Inputs), "
        "per calendar month.",
    )
    items = (
        ("mon.start", "Start date", "date", "=INDEX(start_date,{active_scenario})"),
        ("mon.days", "Wall-clock days", "days", "={sel.wall_clock_days}"),
        ("mon.hours", "Accelerator-hours", "accelerator-hours", "={sel.accelerator_hours}"),
        ("mon.compute", "Compute cost", "US$", "={sel.rental_cost_usd}"),
        ("mon.electricity", "Electricity cost", "US$",
         "=INDEX(electricity_cost_usd,{active_scenario})"),
    )  # fmt: skip
    _links(book, ws, items)
    head = 4 + len(items) + 5
    first, last = _schedule(book, ws, head)
    _totals(book, ws, first, last)
    Book.finish(ws, freeze=f"A{first}", print_titles=f"{head}:{head}")
    return ws


def _links(book, ws, items):
    """The selected run's figures, and its start and end (midnight of the start date)."""
    for i, (name, label, unit, formula) in enumerate(items):
        r = 4 + i
        put_text(ws.cell(r, 1), label)
        put_text(ws.cell(r, 2), unit)
        cell = ws.cell(r, 3, book.formula(formula, ws.title))
        cell.style = "Link"
        cell.number_format = number_format(unit)
        book.place_cell(name, ws, cell.coordinate)
    r = 4 + len(items)
    put_text(ws.cell(r, 1), "Schedule ready")
    ws.cell(r, 3, book.formula("=AND(ISNUMBER({mon.start}),N({mon.days})>0)", ws.title))
    book.place_cell("mon.ok", ws, f"C{r}")
    put_text(ws.cell(r + 1, 1), "Run start (midnight)")
    ws.cell(r + 1, 3, book.formula('=IF({mon.ok},INT({mon.start}),"")', ws.title))
    ws.cell(r + 1, 3).number_format = "yyyy-mm-dd"
    book.place_cell("mon.t0", ws, f"C{r + 1}")
    put_text(ws.cell(r + 2, 1), "Run end")
    ws.cell(r + 2, 3, book.formula('=IF({mon.ok},{mon.t0}+{mon.days},"")', ws.title))
    ws.cell(r + 2, 3).number_format = "yyyy-mm-dd hh:mm"
    book.place_cell("mon.t1", ws, f"C{r + 2}")
    put_text(ws.cell(r + 3, 1), "Checks")
    ws.cell(r + 3, 3, book.formula("={sel.checks}", ws.title)).style = "Link"


def _run_days(row):
    """The spec's run_days_in_month for schedule row ``row`` (A: month, B: next month)."""
    return model.excel(
        "run_days_in_month",
        {"run_start": "{mon.t0}", "run_end": "{mon.t1}", "month_start": f"A{row}",
         "next_month": f"B{row}"},
    )  # fmt: skip


def _share(row):
    """The spec's month_share for schedule row ``row`` (C: run days in the month)."""
    return model.excel(
        "month_share", {"run_days_in_month": f"C{row}", "wall_clock_days": "{mon.days}"}
    )


def _schedule(book, ws, head):
    """One row per calendar month: share of the run, hours and costs, cumulative cost."""
    book.header(
        ws,
        head,
        ["Month", "Next month", "Run days in month", "Share of run", "Accelerator-hours",
         "Compute cost", "Electricity cost", "Total cost", "Cumulative total cost"],
    )  # fmt: skip
    ws.row_dimensions[head].height = 30
    first = head + 1
    last = first + MONTHS - 1
    g = "=IF({mon.ok},"
    for k in range(MONTHS):
        row = first + k
        month = (
            g + "DATE(YEAR({mon.t0}),MONTH({mon.t0}),1)" + ',"")'
            if k == 0
            else g + f'DATE(YEAR(A{row - 1}),MONTH(A{row - 1})+1,1),"")'
        )
        cells = [
            (month, "yyyy-mm-dd"),
            (g + f'DATE(YEAR(A{row}),MONTH(A{row})+1,1),"")', "yyyy-mm-dd"),
            (g + _run_days(row) + ',"")', "#,##0.00"),
            (g + _share(row) + ',"")', "0.00%"),
            (g + f'D{row}*{{mon.hours}},"")', number_format("accelerator-hours")),
            (g + f'D{row}*{{mon.compute}},"")', number_format("US$")),
            (g + f'D{row}*{{mon.electricity}},"")', number_format("US$")),
            (g + f'F{row}+G{row},"")', number_format("US$")),
            (g + f'SUM(H${first}:H{row}),"")', number_format("US$")),
        ]
        for j, (formula, fmt) in enumerate(cells):
            cell = ws.cell(row, 1 + j, book.formula(formula, ws.title))
            cell.number_format = fmt
    return first, last


def _totals(book, ws, first, last):
    """The totals row, the schedule's defined names and the note on the share formula."""
    total = last + 1
    put_text(ws.cell(total, 1), "Total").style = "Section"
    for j in range(2, 8):
        letter = get_column_letter(1 + j)
        cell = ws.cell(total, 1 + j, f"=SUM({letter}{first}:{letter}{last})")
        cell.number_format = ws.cell(first, 1 + j).number_format
        bold(cell)
    book.place_cell("mon.share_total", ws, f"D{total}")
    book.name("monthly_month", f"'Monthly spend'!$A${first}:$A${last}")
    book.name("monthly_share", f"'Monthly spend'!$D${first}:$D${last}")
    book.name("monthly_accelerator_hours", f"'Monthly spend'!$E${first}:$E${last}")
    book.name("monthly_total_cost_usd", f"'Monthly spend'!$H${first}:$H${last}")
    paragraph(
        ws,
        total + 2,
        1,
        f"{MONTHS} months are laid out; a run longer than that fails the Checks sheet's "
        "schedule check. Each month's share = max(0, min(end, next month) - max(start, month)) "
        "/ days, the same formula as udfs.engine.month_shares.",
        9,
    )
