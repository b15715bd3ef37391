"""The Monthly spend sheet: the selected run spread over calendar months, at P50 and P90.

The P50 spreads the run's cost evenly over its wall-clock days; the P90 is the P90 run
(:mod:`udfs.schedule`): the P90 cost less other costs spread evenly over the P90 wall-clock
days from the same start, so a slower run bills its accelerators' capacity for longer and
ends later, at most at the P90 price; other costs keep the P50 schedule. Both use the spec's
formulas (``run_days_in_month``, ``month_share``, ``month_total_cost_usd_p90``).

The schedule has :data:`~.layout.MONTHS` rows from the run's first month (so a run of any
length up to that is laid out whole, and the defined names ``monthly_month``,
``monthly_share``, ``monthly_accelerator_hours``, ``monthly_total_cost_usd`` and
``monthly_total_cost_usd_p90`` span every row). Months after the P90 run's last month plus one
month of margin are blanked by conditional formatting, and the page prints the first
:data:`PRINTED_MONTHS` months (the spend after them is shown above the table), on one page.
"""

from __future__ import annotations

from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from udfs import model

from ..sheetkit import BOOLEAN_FORMAT, Book, bold, number_format, put_text, state_colours
from .layout import MONTHS

#: Months of the schedule on the printed page (the rest stays on the sheet).
PRINTED_MONTHS = 24
#: The one month format of the sheet (and of the hand-off's months).
MONTH_FORMAT = "mmm yyyy"
#: The first schedule row (the header is the row above).
FIRST_ROW = 14
_COLUMNS = (
    ("Month", 11, MONTH_FORMAT),
    ("Next month", 11, MONTH_FORMAT),
    ("Run days in month", 13, "#,##0.00"),  # wide enough for the US$ links beside it
    ("Share of run", 10, "0.00%"),
    ("Accelerator-hours", 15, number_format("accelerator-hours")),
    ("Compute cost (US$)", 15, number_format("US$")),
    ("Electricity cost (US$)", 15, number_format("US$")),
    ("Total cost with other costs, P50 (US$)", 15, number_format("US$")),
    ("Total cost, P90 (US$)", 15, number_format("US$")),
    ("Cumulative total cost, P50 (US$)", 17, number_format("US$")),
)


def monthly_sheet(book):
    """The Monthly spend sheet of the selected scenario (after Summary)."""
    ws = book.sheet("Monthly spend", {get_column_letter(1 + j): w
                                      for j, (_, w, _) in enumerate(_COLUMNS)})  # fmt: skip
    book.title(
        ws,
        "Monthly spend schedule of the selected scenario",
        "Spend per calendar month from the start date (Inputs): P50 over the run's wall-clock "
        "time; P90 over the P90 run's, which bills the accelerators for longer.",
    )
    first, last = FIRST_ROW, FIRST_ROW + MONTHS - 1
    _selected(book, ws)
    _timing(book, ws, first, last)
    head = first - 1
    _schedule(book, ws, head)
    _totals(book, ws, first, last)
    printed = first + PRINTED_MONTHS - 1
    Book.finish(ws, freeze=f"A{first}", print_titles=f"{head}:{head}",
                print_area=f"A1:J{printed}", pages_tall=1)  # fmt: skip
    return ws


def _label(ws, r, c, text, span=2):
    """A label over ``span`` merged columns (so that it never runs into a neighbour)."""
    put_text(ws.cell(r, c), text)
    ws.merge_cells(start_row=r, start_column=c, end_row=r, end_column=c + span - 1)


def _value(book, ws, r, c, name, formula, fmt, style="Link"):
    cell = ws.cell(r, c, book.formula(formula, ws.title))
    cell.style = style
    cell.number_format = fmt
    cell.alignment = Alignment(horizontal="right")
    book.place_cell(name, ws, cell.coordinate)
    return cell


def _selected(book, ws):
    """Left block (A:C): the selected run's figures at P50 (links to Summary)."""
    cell = ws.cell(3, 1, book.formula('="Selected scenario: "&{sel.scenario_name}', ws.title))
    cell.style = "Section"
    put_text(ws["A4"], "Its figures at P50 (Summary)").style = "Section"
    items = (
        # the start date as used: "" when blank (Gnumeric's INDEX of a blank cell is 0,
        # LibreOffice's is blank, so the blank is resolved on Calculations)
        ("mon.start", "Start date", "=INDEX(start_date_used,1,{active_scenario})", "date"),
        ("mon.days", "Wall-clock days", "={sel.wall_clock_days}", "days"),
        ("mon.days_p90", "Wall-clock days, P90",
         "=INDEX(wall_clock_days_p90,1,{active_scenario})", "days"),
        ("mon.hours", "Accelerator-hours", "={sel.accelerator_hours}", "accelerator-hours"),
        ("mon.compute", "Compute cost (US$)", "={sel.compute_cost_usd}", "US$"),
        ("mon.electricity", "Electricity cost (US$)",
         "=INDEX(electricity_cost_usd,1,{active_scenario})", "US$"),
        ("mon.other", "Other costs (US$)", "=N(INDEX(other_costs_usd_used,1,{active_scenario}))",
         "US$"),
        ("mon.total", "Total cost, P50 (US$)", "={sel.total_cost_usd}", "US$"),
    )  # fmt: skip
    for i, (name, label, formula, unit) in enumerate(items):
        _label(ws, 5 + i, 1, label)
        _value(book, ws, 5 + i, 3, name, formula, number_format(unit))


def _timing(book, ws, first, last):
    """Right block (E:H): the run's start and end, the P90 ratio, spend after the page."""
    put_text(ws["E4"], "Schedule").style = "Section"
    _value(book, ws, 4, 8, "mon.checks", '="Checks: "&{sel.checks}', "General", "Link")
    state_colours(ws, "H4")
    rows = (
        ("mon.ok", "Schedule ready", "=AND(ISNUMBER({mon.start}),N({mon.days})>0)", BOOLEAN_FORMAT,
         "Calc"),
        ("mon.t0", "Run start (midnight)", '=IF({mon.ok},INT({mon.start}),"")', "yyyy-mm-dd",
         "Calc"),
        ("mon.t1", "Run end", '=IF({mon.ok},{mon.t0}+{mon.days},"")', "yyyy-mm-dd hh:mm",
         "Calc"),
        ("mon.t1_p90", "P90 run end",
         '=IF(AND({mon.ok},N({mon.days_p90})>0),{mon.t0}+{mon.days_p90},"")',
         "yyyy-mm-dd hh:mm", "Calc"),
        ("mon.total_p90", "Total cost, P90 (US$)",
         '=IF(ISNUMBER(INDEX(total_cost_usd_p90,1,{active_scenario})),'
         'INDEX(total_cost_usd_p90,1,{active_scenario}),"")', number_format("US$"), "Link"),
        ("mon.after_page", f"Spend after month {PRINTED_MONTHS}, P50 (US$)",
         f"=SUM(H{first + PRINTED_MONTHS}:H{last})", number_format("US$"), "Calc"),
    )  # fmt: skip
    for i, (name, label, formula, fmt, style) in enumerate(rows):
        _label(ws, 5 + i, 5, label, span=3)
        _value(book, ws, 5 + i, 8, name, formula, fmt, style)
    put_text(
        ws.cell(11, 5),
        f"Months after the P90 run's last month + 1 are blank; the page prints {PRINTED_MONTHS} "
        f"months, the sheet holds {MONTHS}.",
    ).style = "Note"
    ws.cell(11, 5).alignment = Alignment(wrap_text=False)


def _run_days(row):
    """The spec's run_days_in_month for schedule row ``row`` (A: month, B: next month).

    Dates count in days from the run's start (midnight), so the months' bounds are whole
    numbers and a run of minutes keeps its precision (its one month holds 100% of it).
    """
    return model.excel(
        "run_days_in_month",
        {"run_start": "{mon.t0}", "wall_clock_days": "{mon.days}", "month_start": f"A{row}",
         "next_month": f"B{row}"},
    )  # fmt: skip


def _share(row):
    """The spec's month_share for schedule row ``row`` (C: run days in the month)."""
    return model.excel(
        "month_share", {"run_days_in_month": f"C{row}", "wall_clock_days": "{mon.days}"}
    )


def _total_p90(row):
    """The spec's month_total_cost_usd_p90 for schedule row ``row`` (D: share of the run): the
    P90 run's days in the month over its days (the P90 run from the same start)."""
    days_p90 = model.excel(
        "run_days_in_month",
        {"run_start": "{mon.t0}", "wall_clock_days": "{mon.days_p90}", "month_start": f"A{row}",
         "next_month": f"B{row}"},
    )  # fmt: skip
    share_p90 = model.excel(
        "month_share", {"run_days_in_month": days_p90, "wall_clock_days": "{mon.days_p90}"}
    )
    return model.excel(
        "month_total_cost_usd_p90",
        {"total_cost_usd_p90": "{mon.total_p90}", "other_costs_usd": "{mon.other}",
         "month_share_p90": share_p90, "month_share": f"D{row}"},
    )  # fmt: skip


def _schedule(book, ws, head):
    """One row per calendar month: share of the run, hours, costs at P50 and P90, cumulative."""
    book.header(ws, head, [text for text, _, _ in _COLUMNS])
    ws.row_dimensions[head].height = 30
    first = head + 1
    g = "=IF({mon.ok},"
    for k in range(MONTHS):
        row = first + k
        month = (
            g + "DATE(YEAR({mon.t0}),MONTH({mon.t0}),1)" + ',"")'
            if k == 0
            else g + f'DATE(YEAR(A{row - 1}),MONTH(A{row - 1})+1,1),"")'
        )
        formulas = (
            month,
            g + f'DATE(YEAR(A{row}),MONTH(A{row})+1,1),"")',
            g + _run_days(row) + ',"")',
            g + _share(row) + ',"")',
            g + f'D{row}*{{mon.hours}},"")',
            g + f'D{row}*{{mon.compute}},"")',
            g + f'D{row}*{{mon.electricity}},"")',
            g + f'D{row}*{{mon.total}},"")',
            "=IF(AND({mon.ok},ISNUMBER({mon.total_p90}),N({mon.days_p90})>0),"
            + _total_p90(row)
            + ',"")',
            g + f'SUM(H${first}:H{row}),"")',
        )
        for j, (formula, (_, _, fmt)) in enumerate(zip(formulas, _COLUMNS, strict=True)):
            cell = ws.cell(row, 1 + j, book.formula(formula, ws.title))
            cell.number_format = fmt
    # a month after the P90 run's last month + 1 month of margin reads as blank
    last = first + MONTHS - 1
    ws.conditional_formatting.add(
        f"A{first + 1}:J{last}",
        FormulaRule(formula=[f"AND(N($D{first})=0,N($D{first + 1})=0,"
                             f"N($I{first})=0,N($I{first + 1})=0)"],
                    font=Font(color="FFFFFF")),
    )  # fmt: skip


def _totals(book, ws, first, last):
    """The totals row, the schedule's defined names and the note on the share formula."""
    total = last + 1
    put_text(ws.cell(total, 1), "Total").style = "Section"
    for j in range(2, 9):
        letter = get_column_letter(1 + j)
        cell = ws.cell(total, 1 + j, f"=SUM({letter}{first}:{letter}{last})")
        cell.number_format = ws.cell(first, 1 + j).number_format
        bold(cell)
    book.place_cell("mon.share_total", ws, f"D{total}")
    book.place_cell("mon.p90_sum", ws, f"I{total}")
    book.name("monthly_month", f"'Monthly spend'!$A${first}:$A${last}")
    book.name("monthly_share", f"'Monthly spend'!$D${first}:$D${last}")
    book.name("monthly_accelerator_hours", f"'Monthly spend'!$E${first}:$E${last}")
    book.name("monthly_total_cost_usd", f"'Monthly spend'!$H${first}:$H${last}")
    book.name("monthly_total_cost_usd_p90", f"'Monthly spend'!$I${first}:$I${last}")
    note = ws.cell(
        total + 2,
        1,
        f"{MONTHS} months are laid out; a run (or P90 run) longer than that fails the Checks "
        "sheet's schedule check. Each month's share = max(0, min(end, next month) - max(start, "
        "month)) / days, the same formula as the Compute Lab engine's monthly schedule. The P90 "
        "column is the P90 run: (P90 total - other costs) x its share of the P90 run's days + "
        "other costs x the P50 share; it never bills more than the accelerators' capacity x "
        "the P90 price.",
    )
    note.style = "Note"
    ws.merge_cells(start_row=total + 2, start_column=1, end_row=total + 3, end_column=10)
