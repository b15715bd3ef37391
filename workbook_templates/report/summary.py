"""The Summary sheet: a one-page management summary, then the budget view.

Page 1: the master check (OK / WARN / ERROR) and what needs a look, the budget by status
(Approved and Proposed subtotals, the total, P90 and contingency), by fiscal year, and what
is not in the budget. Then, on the following pages: the budget by run (subtotals by status),
by month, quarter and fiscal year with a cumulative column, the key assumptions per run, and
the "Not in the budget" table (never summed).
"""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.worksheet.pagebreak import Break

from udfs import __version__

from ..sheetkit import GLOSSARY
from .layout import (
    STYLES,
    USD,
    fit_columns,
    fit_header_rows,
    fit_rows,
    put,
    realign,
    setup_print,
    write_table,
)
from .tables import UNSCHEDULED, with_unscheduled

__all__ = ["write_summary", "SHEET_GUIDE"]

SHEET_GUIDE = (
    ("Summary", "management summary (page 1), then the budget by run, by period, the key "
     "assumptions and what is not in the budget"),
    ("Runs", "one row per budget run: the inputs used, the throughput source, the defaults"),
    ("Outputs", "one row per budget run: every output of the engine"),
    ("Blank inputs", "each blank input of a budget run: the value used and why"),
    ("Costs", "cost breakdown per budget run: compute, electricity; shares; totals"),
    ("Ranges", "P10 / P50 / P90 per budget run, and the contingency (P90 - P50)"),
    ("Monthly", "spend by calendar month across budget runs, cumulative, P90, with a chart"),
    ("Monthly by run", "each budget run's monthly spend (the rows Monthly adds up)"),
    ("Mismatches", "saved output values in the files that differ from the engine"),
    ("Checks", "what was checked, file by file: OK, WARN (look), ERROR (failed), INFO"),
    ("Files", "the files read: size, SHA-256, template version, budget status row"),
    ("Sources", "method, defaults, the catalogue figures used and their sources"),
)  # fmt: skip

_MONEY = ("total_cost_usd", "total_cost_usd_p90", "contingency_usd")
_WIDE = {"file": 21, "scenario": 24, "budget_status": 12, "fiscal_year": 12, "month": 12}
#: Lines of "needs a look" on page 1 (the rest: see Checks).
_MAX_LOOK = 6


def _section(ws, row, text, note=None):
    put(ws, row, 1, text).font = STYLES["section"]
    if note:
        put(ws, row + 1, 1, note)
        return row + 2
    return row + 1


def _status_line(ws, row, c):
    checks = c.tables["checks"]
    master = c.master_status
    put(ws, row, 1, "Checks").font = STYLES["bold"]
    cell = put(ws, row, 2, master)
    cell.font = STYLES["bold"]
    if master in STYLES["status_fill"]:
        cell.fill = STYLES["status_fill"][master]
    look = checks[checks["status"].isin(["WARN", "ERROR"])]
    put(ws, row, 3, "nothing needs a look" if not len(look)
        else f"{len(look)} item(s) need a look (the Checks sheet):")  # fmt: skip
    row += 1
    for item in look.head(_MAX_LOOK).itertuples(index=False):
        put(ws, row, 2, item.status)
        put(ws, row, 3, f"{item.check}: {item.detail}")
        row += 1
    if len(look) > _MAX_LOOK:
        put(ws, row, 3, f"... and {len(look) - _MAX_LOOK} more on the Checks sheet")
        row += 1
    return row


def _not_in_budget_line(ws, row, c):
    others = c.tables["not_in_budget"]
    if not len(others):
        put(ws, row, 1, "Not in the budget: none")
        return row + 1
    counts = others.groupby(["scenario", "budget_status"], sort=False).size()
    names = "; ".join(f"{name}: {status}" + (f", in {n} files" if n > 1 else "")
                      for (name, status), n in counts.items())  # fmt: skip
    put(ws, row, 1, f"Not in the budget ({len(others)} scenario(s), never summed): {names}")
    return row + 1


#: Page 1's headline figures: (defined name, label, totals column, note). Each is a number
#: in its own cell with a workbook-scoped name, for a reader or a formula to pick up.
HEADLINE = (
    ("handoff_total_p50", "Budget total (P50)", "total_cost_usd", "the estimate"),
    ("handoff_total_p90", "Budget total (P90)", "total_cost_usd_p90",
     "exceeded by one run in ten"),
    ("handoff_contingency", "Contingency (P90 - P50)", "contingency_usd",
     "to hold back above the estimate"),
    ("handoff_approved", "Approved", "approved_total_cost_usd", "P50, Approved runs"),
    ("handoff_proposed", "Proposed", "proposed_total_cost_usd",
     "P50, Proposed runs (a blank status counts as Proposed)"),
)  # fmt: skip
#: What the total includes and excludes, said on page 1.
SCOPE = (
    "The total includes: the accelerators' compute (rental, or the ownership equivalent, at "
    "each run's price per accelerator-hour), their electricity where the price does not "
    "include power (pricing basis), and the other costs typed per run. It excludes: staff, "
    "data, storage, networking and failed or repeated runs, unless typed as other costs."
)


def _headline(ws, c, t, row):
    """The headline figures, one number cell each, named; the scope of the total; the run
    count. Returns the last row written."""
    from openpyxl.workbook.defined_name import DefinedName

    for i, (name, label, column, note) in enumerate(HEADLINE):
        r = row + i
        put(ws, r, 1, label).font = STYLES["bold"]
        cell = put(ws, r, 2, float(t[column]), USD)
        cell.font = STYLES["title"] if i == 0 else STYLES["bold"]
        put(ws, r, 3, note).alignment = Alignment(indent=1)
        ws.parent.defined_names[name] = DefinedName(name, attr_text=f"Summary!$B${r}")
    r = row + len(HEADLINE)
    unscheduled = t["unscheduled_total_cost_usd"]
    put(ws, r, 1, f"{int(t['runs'])} run(s) in the budget from {int(t['files'])} file(s)"
        + (f"; ${unscheduled:,.0f} without a start date (the 'Unscheduled' row of the period "
           "tables)" if unscheduled else ""))  # fmt: skip
    put(ws, r + 1, 1, SCOPE)
    return r + 1


def _management(ws, c, generated):
    t = c.tables["totals"].iloc[0]
    put(ws, 1, 1, "Compute Lab hand-off: training-run budget").font = STYLES["title"]
    fy = _MONTHS[c.fiscal_year_start - 1]
    put(
        ws,
        2,
        1,
        f"Generated {generated:%Y-%m-%d %H:%M} UTC by compute-lab {__version__}; "
        f"fiscal years start in {fy}. Every figure is recomputed from the planners' inputs.",
    )
    row = _headline(ws, c, t, 4)
    row = _status_line(ws, row + 1, c) + 1
    row = _section(ws, row, "Budget by status")
    row = write_table(ws, c.tables["status_totals"][["budget_status", "runs", *_MONEY]], row,
                      totals="Total in the budget", additive=("runs", *_MONEY))  # fmt: skip
    row = _section(ws, row + 2, "By fiscal year")
    years = with_unscheduled(c, "fiscal_years")
    years = years[["fiscal_year", *_MONEY, "cumulative_total_cost_usd"]]
    row = write_table(ws, years, row, totals="Total", additive=_MONEY) if len(years) else (
        put(ws, row, 1, _unscheduled_text(c)).row)  # fmt: skip
    row = _not_in_budget_line(ws, row + 2, c)
    row = _section(ws, row + 1, "Words")
    for word, meaning in GLOSSARY:
        put(ws, row, 1, word).font = STYLES["bold"]
        put(ws, row, 2, meaning)
        row += 1
    return row - 1


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def _unscheduled_text(c):
    if not c.budget_runs:
        return "Nothing is in the budget: no period to show."
    return "No budget run has a start date: nothing to schedule by period."


def _bold_last(ws, row, columns):
    for j in range(1, columns + 1):
        ws.cell(row=row, column=j).font = STYLES["bold"]
        ws.cell(row=row, column=j).border = STYLES["total_border"]


def _budget_view(ws, c, row):
    tables = c.tables
    row = _section(ws, row, "Budget by run",
                   "Approved and Proposed runs (a blank status counts as Proposed), with a "
                   "subtotal each; P90 and contingency from the calibrated ranges.")  # fmt: skip
    budget = tables["budget"].drop(columns=["column", "run_id"])
    additive = ("accelerator_hours", "compute_cost_usd", "electricity_cost_usd", *_MONEY)
    if len(budget):
        row = write_table(ws, budget, row, totals="Total in the budget", additive=additive,
                          subtotal_by="budget_status")  # fmt: skip
    else:
        row = put(ws, row, 1, "No scenario is in the budget.").row
    for title, name, cols in (
        ("Budget by month", "monthly", ["month", "compute_cost_usd", "electricity_cost_usd"]),
        ("Budget by quarter", "quarterly", ["quarter", "first_month"]),
    ):  # by fiscal year: on page 1 only (one table, not two)
        row = _section(ws, row + 2, title)
        df = with_unscheduled(c, name)[[*cols, *_MONEY, "cumulative_total_cost_usd"]]
        more = ("compute_cost_usd", "electricity_cost_usd", *_MONEY)
        row = (write_table(ws, df, row, totals="Total", additive=more) if len(df)
               else put(ws, row, 1, _unscheduled_text(c)).row)  # fmt: skip
    row = _section(ws, row + 2, "Key assumptions per run",
                   "Price per accelerator-hour (rental, or the ownership equivalent); where "
                   "the throughput comes from; PUE; electricity price.")  # fmt: skip
    assumptions = tables["assumptions"].drop(columns=["column", "run_id"])
    row = write_table(ws, assumptions, row) if len(assumptions) else row
    row = _section(
        ws,
        row + 2,
        "Not in the budget",
        "Reference and Excluded scenarios: listed for information, never summed.",
    )
    others = tables["not_in_budget"].drop(columns=["column", "run_id"])
    return write_table(ws, others, row) if len(others) else put(ws, row, 1, "None.").row


def write_summary(ws, c, generated):
    """Fill ``ws`` (the first sheet) with the management summary and the budget view."""
    ws.title = "Summary"
    last_page1 = _management(ws, c, generated)
    ws.row_breaks.append(Break(id=last_page1 + 1))
    last = _budget_view(ws, c, last_page1 + 3)
    columns = ["file", "scenario", "budget_status", "approval", "owner", "start_month",
               "end_month",
               "accelerator_hours", "compute_cost_usd", "electricity_cost_usd",
               "total_cost_usd", "total_cost_usd_p90", "contingency_usd"]  # fmt: skip
    fit_columns(ws, columns, last_page1 + 4, last, wide=_WIDE)
    for (cell,) in ws.iter_rows(min_row=1, max_row=last, max_col=1):  # titles and totals
        if isinstance(cell.value, str) and cell.font.b and cell.fill != STYLES["header_fill"]:
            realign(cell, wrap_text=False)  # run on into the empty cells to their right
    for letter in "ABCDEFGHIJKL":  # the money columns hold P90 figures of the management page
        ws.column_dimensions[letter].width = max(ws.column_dimensions[letter].width or 0, 12)
    for row in ws.iter_rows(min_row=3):  # a row grown by wrapped text reads from the top
        for cell in row:
            if cell.value is not None and cell.fill != STYLES["header_fill"]:
                realign(cell, vertical="top")
    _wrap_long_text(ws, last)
    for (cell,) in ws.iter_rows(min_row=1, max_row=last, max_col=1):
        if cell.value == UNSCHEDULED:  # wraps in its column, its neighbour holds a figure
            realign(cell, wrap_text=True)
    fit_rows(ws, 1)
    fit_header_rows(ws)
    setup_print(ws, "Summary", generated, pages_wide=1)


def _wrap_long_text(ws, last):
    """Sentences written in one cell wrap across the printed width (merged A:L)."""
    for r in range(1, last + 1):
        for col in (1, 3):
            cell = ws.cell(row=r, column=col)
            alone = all(ws.cell(row=r, column=j).value is None for j in range(col + 1, 13))
            if isinstance(cell.value, str) and len(cell.value) > 20 and cell.font != STYLES[
                    "header_font"] and alone:  # fmt: skip
                ws.merge_cells(start_row=r, start_column=col, end_row=r, end_column=12)
                realign(cell, wrap_text=True, vertical="top")
