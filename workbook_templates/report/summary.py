"""The Summary sheet, one portrait page a CFO reads, and the Budget sheet behind it.

Summary: the headline figures (P50 total, P90, contingency, approved, proposed), each a
number in its own named cell; what the total includes and excludes; the master check (OK /
WARN / ERROR) and what needs a look; the budget by status; the budget by fiscal year and
quarter, P50 and P90, each figure a named cell (:func:`period_name`); what is not in the
budget; five words explained. Budget (landscape): the budget by run (a subtotal per status),
the key assumptions per run and the "Not in the budget" table (never summed). No cell is
merged: a long sentence is word-wrapped into lines, one cell each (:func:`.layout.lines`).
"""

from __future__ import annotations

import math
import os
import textwrap

import pandas as pd
from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName

from udfs import __version__, ranges, schedule

from ..printing import empty_row
from ..sheetkit import GLOSSARY, put_formula
from .consolidate import APPROVAL_INCOMPLETE
from .layout import (
    STYLES,
    USD,
    add_table,
    fit_columns,
    fit_header_rows,
    fit_rows,
    header_cells,
    is_header,
    keep_together,
    lines,
    put,
    put_sum,
    realign,
    setup_print,
    total_row,
    write_table,
)
from .tables import UNSCHEDULED, over_approved_cents, with_unscheduled
from .variance_tables import actuals_sentence

__all__ = ["write_summary", "write_budget", "forecast_block", "period_name", "sheet_guide",
           "period_covered",
           "SHEET_GUIDE", "OPTIONAL_SHEETS", "HEADLINE"]  # fmt: skip

SHEET_GUIDE = (
    ("Summary", "management summary, one page: the headline figures, the checks, the budget "
     "by status, by fiscal year and quarter (P50, P90), with actuals the forecast at "
     "completion against it, what is not in the budget, five words"),
    ("Budget", "the budget by run (a subtotal per status) and what is not in the budget"),
    ("Runs", "every input and output per budget run, one column per run (runs.csv turned); "
     "a default used for a blank input in grey"),
    ("Costs", "per budget run: compute, electricity, other costs; the P10 / P50 / P90 ranges "
     "and the contingency (P90 - P50), by cause (throughput, price); the monthly spend (the "
     "rows Monthly adds up)"),
    ("Blank inputs", "each blank input of a budget run: the value used and why"),
    ("Monthly", "spend by calendar month across budget runs, cumulative, P90, with a chart"),
    ("Variance", "with report --actuals only: plan against actual per run to date and per "
     "month, the variance split into volume, rate, efficiency, scope and timing; unplanned "
     "spend"),
    ("Baseline", "with report --baseline only: per run and month, the baseline's P50 and this "
     "hand-off's; an Approved run's approved amount beside its run total"),
    ("Checks", "what was checked: OK, WARN (look), ERROR (failed), INFO; the files read "
     "(size, SHA-256, template version); saved values that differ from the engine"),
    ("Sources", "method, defaults, the catalogue figures used and their sources"),
)  # fmt: skip

_MONEY = ("total_cost_usd", "total_cost_usd_p90", "contingency_usd")


#: The sheets a hand-off has only given what they show: sheet -> whether hand-off ``c`` has it
#: (Variance with actuals, Baseline with a baseline table). The workbook writes the sheets of
#: :func:`sheet_guide`.
OPTIONAL_SHEETS = {
    "Variance": lambda c: getattr(c, "actuals", None) is not None,
    "Baseline": lambda c: "baseline" in c.tables,
}


def sheet_guide(c):
    """The sheets of ``c``'s hand-off, in order, and what each holds: :data:`SHEET_GUIDE`
    without the :data:`OPTIONAL_SHEETS` ``c`` has not."""
    return tuple(g for g in SHEET_GUIDE if g[0] not in OPTIONAL_SHEETS or OPTIONAL_SHEETS[g[0]](c))


def _actuals_text(c):
    """Page one's sentence on the actuals (:func:`.variance_tables.actuals_sentence`; None
    without actuals)."""
    t = getattr(c, "variance_totals", None)
    if getattr(c, "actuals", None) is None or t is None:
        return None
    return actuals_sentence(t, "${:,.0f}".format, tail=" See the Variance sheet.")


#: The Summary's columns (portrait): labels, then figures; at most PAGE_PORTRAIT wide.
_SUMMARY_WIDTHS = {"A": 22, "B": 15, "C": 13, "D": 13, "E": 13, "F": 13}
#: The Summary's row height (pt): 11-point text, set so that Excel and LibreOffice agree.
ROW_PT = 13.5
#: The title's row (14-point text) and an empty row between two parts of the page (pt).
TITLE_PT, SPACER_PT = 21.0, 7.0
#: Characters a line of text takes across the Summary's width (a cautious count), and a
#: line of bold text.
_LINE_CHARS = 100
_BOLD_CHARS = 88
#: Most lines under the master check on the Summary: a check with items that need a look,
#: one line each, or, with more checks, the first ones and a line counting the rest (the
#: Checks sheet has them).
_MAX_LOOK = 3
_LOOK_CHARS = 62
#: The checks page 1 lists first (after any ERROR): money counted as Approved that is not.
_LOOK_FIRST = ("Within the approved amount", "Approval")


def _section(ws, row, text, note=None, chars=_LINE_CHARS):
    cell = put(ws, row, 1, text)
    cell.font, cell.alignment = STYLES["section"], Alignment(wrap_text=False)
    return lines(ws, row + 1, 1, note, chars) if note else row + 1


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
    first = {check: i for i, check in enumerate(_LOOK_FIRST)}
    groups = sorted(
        look.groupby("check", sort=False),  # one line a check: count, first item
        key=lambda g: ((g[1]["status"] != "ERROR").all(), first.get(g[0], len(first))),
    )
    shown = groups if len(groups) <= _MAX_LOOK else groups[: _MAX_LOOK - 1]
    for check, items in shown:
        status = "ERROR" if (items["status"] == "ERROR").any() else "WARN"
        cell = put(ws, row, 2, status)
        cell.fill = STYLES["status_fill"][status]
        more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
        text = textwrap.shorten(f"{check}{more}: {items['detail'].iloc[0]}", _LOOK_CHARS,
                                placeholder=" ...")  # fmt: skip
        row = lines(ws, row, 3, text, _LOOK_CHARS)
    if len(groups) > len(shown):
        rest = sum(len(items) for _, items in groups[len(shown) :])
        put(ws, row, 3, f"... and {rest} more on the Checks sheet")
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
    text = f"Not in the budget ({len(others)} scenario(s), never summed): {names}"
    return lines(ws, row, 1, text, _LINE_CHARS)


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
     "P50, Proposed runs (blank status, incomplete approval)"),
)  # fmt: skip
#: What the total includes and excludes, said on page 1.
SCOPE = (
    "The total includes the compute cost (rental or the ownership equivalent), electricity "
    "the price leaves out and the other costs typed; it excludes staff, data, storage, "
    "networking and failed or repeated runs unless typed as other costs."
)


def _name(ws, name, row, col):
    letter = ws.cell(row=row, column=col).column_letter
    ws.parent.defined_names[name] = DefinedName(name, attr_text=f"Summary!${letter}${row}")


#: The Budget sheet's Table of runs (``budget``), one workbook name per column, for the
#: formulas that add it up: column -> name.
BUDGET_RANGES = {"budget_status": "budget_runs_status", "total_cost_usd": "budget_runs_p50",
                 "total_cost_usd_p90": "budget_runs_p90",
                 "contingency_usd": "budget_runs_contingency"}  # fmt: skip
_R = BUDGET_RANGES
#: Page 1's headline formulas over the Budget sheet's Table of runs (:data:`BUDGET_RANGES`):
#: a ``SUBTOTAL`` adds a column up, a ``SUMIF`` picks a status's runs.
HEADLINE_FORMULAS = {
    "handoff_total_p50": f"=SUBTOTAL(9,{_R['total_cost_usd']})",
    "handoff_total_p90": f"=SUBTOTAL(9,{_R['total_cost_usd_p90']})",
    "handoff_contingency": f"=SUBTOTAL(9,{_R['contingency_usd']})",
    "handoff_approved": f'=SUMIF({_R["budget_status"]},"Approved",{_R["total_cost_usd"]})',
    "handoff_proposed": f'=SUMIF({_R["budget_status"]},"Proposed",{_R["total_cost_usd"]})'
    f'+SUMIF({_R["budget_status"]},"{APPROVAL_INCOMPLETE}",{_R["total_cost_usd"]})',
}


def _figure(ws, c, row, name, label, value, note):
    """One named figure of page 1: its label, the number (a formula over the Budget sheet's
    rows when there is one and the budget has runs, its value saved), a note."""
    put(ws, row, 1, label).font = STYLES["bold"]
    formula = HEADLINE_FORMULAS.get(name)
    if formula and len(c.tables["budget"]):
        cell = put_formula(ws.cell(row=row, column=2), formula, value, USD)
    else:
        cell = put(ws, row, 2, value, USD)
    cell.font = STYLES["bold"]
    put(ws, row, 3, note).alignment = Alignment(indent=1)
    _name(ws, name, row, 2)


def _headline(ws, c, t, row):
    """The headline figures, one number cell each, named; the P90 if runs were independent
    beside the P90; the run count; the scope of the total. Returns the row after the last
    written."""
    for i, (name, label, column, note) in enumerate(HEADLINE):
        if name == "handoff_contingency":  # by cause (each run's on the Costs sheet)
            note = (
                f"throughput ${float(t['contingency_throughput_usd']):,.0f} + price "
                f"${float(t['contingency_price_usd']):,.0f}"
            )
        if name == "handoff_total_p90":  # short: the independent P90 is beside it
            note = "exceeded 1 run in 10"
        if name == "handoff_approved" and (over := sum(map(over_approved_cents, c.budget_runs))):
            note += f"; {schedule.short_usd(over)} of it over the approved amounts"
        if name == "handoff_total_p50":  # and the months it covers
            note = ", ".join(filter(None, (note, period_covered(c))))
        _figure(ws, c, row + i, name, label, float(t[column]), note)
    p90_row = row + [h[0] for h in HEADLINE].index("handoff_total_p90")
    which = _p90_independent(ws, t, p90_row)
    unscheduled = t["unscheduled_total_cost_usd"]
    text = (f"{int(t['runs'])} run(s) from {int(t['files'])} file(s)"
            + (f"; ${unscheduled:,.0f} has no start date ('Unscheduled')"
               if unscheduled else "") + ". " + SCOPE + which)  # fmt: skip
    return lines(ws, row + len(HEADLINE), 1, text, _LINE_CHARS)


def period_covered(c):
    """The months the budget runs' schedule covers, said beside page 1's P50: the first start
    month to the last end month of the P50 schedule (one month: that month), and the last
    end month of the P90's ("Feb 2027 - Apr 2028 (P90 to Jun 2028)"); empty when no budget
    run has a start date."""
    runs = c.tables["budget"]
    if not len(runs) or runs["start_month"].isna().all():
        return ""
    first, last, last_p90 = (pd.to_datetime(runs[k]).dropna() for k in
                             ("start_month", "end_month", "end_month_p90"))  # fmt: skip
    first, last, last_p90 = first.min(), last.max(), max(last_p90.max(), last.max())
    months = f"{first:%b %Y}" + (f" - {last:%b %Y}" if last > first else "")
    return f"{months} (P90 to {last_p90:%b %Y})"


#: Page 1's P90 if the runs were independent: (defined name, label, totals column).
P90_INDEPENDENT = (
    "handoff_total_p90_independent",
    "if independent:",
    "total_cost_usd_p90_independent",
)
#: Which P90 to budget, said on page 1 when the budget has several runs.
WHICH_P90 = (
    " The P90 sums the runs' P90s (all late together): budget it while runs share "
    "accelerators, a supplier or prices."
)


def _p90_independent(ws, t, row):
    """Beside the P90 (on ``row``): the P90 if the runs were independent, a named cell.
    Returns the sentence on which to budget (empty for one run, where the two agree)."""
    name, label, column = P90_INDEPENDENT
    put(ws, row, 5, label).alignment = Alignment(horizontal="right")
    runs = int(t["runs"])
    if runs:  # the Budget sheet's working; one run's is its own P90
        formula = "=budget_independent_p90" if runs > 1 else "=handoff_total_p90"
        put_formula(ws.cell(row=row, column=6), formula, float(t[column]), USD)
    else:
        put(ws, row, 6, float(t[column]), USD)
    _name(ws, name, row, 6)
    return WHICH_P90 if runs > 1 else ""


def period_name(period, level):
    """The defined name of a period's figure: ``budget_`` + the fiscal year or quarter in
    lower case, "/" and spaces dropped or made "_" (FY2027 -> fy2027, FY2026/27 Q1 ->
    fy2026_27q1, Unscheduled -> unscheduled) + ``_p50`` or ``_p90``."""
    key = str(period).lower().replace("/", "_").replace(" ", "")
    return f"budget_{key}_{level}"


def _period_rows(c):
    """[(label, {quarter number: (p50, p90, quarter label, first month)}, (p50, p90))] per
    fiscal year."""
    quarters = c.tables["quarterly"]
    out = []
    for y in c.tables["fiscal_years"].itertuples(index=False):
        part = quarters[quarters["fiscal_year"] == y.fiscal_year]
        qs = {
            int(q.quarter.rsplit("Q", 1)[1]): (
                float(q.total_cost_usd),
                float(q.total_cost_usd_p90),
                q.quarter,
                q.first_month,
            )
            for q in part.itertuples(index=False)
        }
        out.append((y.fiscal_year, qs, (float(y.total_cost_usd), float(y.total_cost_usd_p90))))
    return out  # fmt: skip


#: The Monthly sheet's rows (its Unscheduled row among them), one workbook name per column,
#: for the Summary's period formulas: column -> name.
MONTHLY_RANGES = {"month": "monthly_month", "total_cost_usd": "monthly_p50",
                  "total_cost_usd_p90": "monthly_p90"}  # fmt: skip
_LEVELS = {"p50": "total_cost_usd", "p90": "total_cost_usd_p90"}


def _quarter_formula(level, first):
    """A fiscal quarter's P50 or P90: the Monthly rows from its first month for three months."""
    n = first.month + 2  # three months on: the first month after the quarter
    after = first.replace(year=first.year + n // 12, month=n % 12 + 1)
    months, money = MONTHLY_RANGES["month"], MONTHLY_RANGES[_LEVELS[level]]
    return (f'=SUMIFS({money},{months},">="&DATE({first.year},{first.month},1),'
            f'{months},"<"&DATE({after.year},{after.month},1))')  # fmt: skip


def _period_cell(ws, row, col, formula, value):
    """A period's figure: ``formula`` over the Monthly rows, its value saved (a plain value
    when the Monthly sheet has no rows)."""
    if formula:
        return put_formula(ws.cell(row=row, column=col), formula, value, USD)
    return put(ws, row, col, value, USD)


def _periods(ws, c, t, row):
    """The budget by fiscal year (rows) and quarter (columns), P50 then P90, each figure a
    named cell: a quarter's a SUMIFS of the Monthly rows, a year's the sum of its quarters;
    an Unscheduled row when a run has no start date; a SUBTOTAL total per block. Returns the
    last row written."""
    years = _period_rows(c)
    if not years and not c.unscheduled:
        return put(ws, row, 1, _unscheduled_text(c)).row
    heads = ["Fiscal year", "Q1", "Q2", "Q3", "Q4", "Year"]
    for j, text in enumerate(heads, start=1):
        cell = put(ws, row, j, text)
        cell.font, cell.fill, cell.alignment = (
            STYLES["header_font"], STYLES["header_fill"], STYLES["header_align"])  # fmt: skip
    last = with_unscheduled(c, "fiscal_years").iloc[-1]  # the Unscheduled row, if any
    unscheduled = (float(last["total_cost_usd"]), float(last["total_cost_usd_p90"]))
    linked = len(with_unscheduled(c, "monthly")) > 0  # the Monthly rows are named
    for k, level in enumerate(("p50", "p90")):
        block = row + 1
        for fy, qs, year in years:
            row += 1
            put(ws, row, 1, f"{fy}, {level.upper()}")
            for q in range(1, 5):
                if q in qs:
                    formula = _quarter_formula(level, qs[q][3]) if linked else None
                    _period_cell(ws, row, 1 + q, formula, qs[q][k])
                    _name(ws, period_name(qs[q][2], level), row, 1 + q)
            put_formula(ws.cell(row=row, column=6), f"=SUM(B{row}:E{row})", year[k], USD)
            _name(ws, period_name(fy, level), row, 6)
        if c.unscheduled:
            row += 1
            put(ws, row, 1, f"Unscheduled, {level.upper()}")
            months, money = MONTHLY_RANGES["month"], MONTHLY_RANGES[_LEVELS[level]]
            _period_cell(ws, row, 6, f'=SUMIF({months},"{UNSCHEDULED}",{money})',
                         unscheduled[k])  # fmt: skip
            _name(ws, period_name("unscheduled", level), row, 6)
        figures = [year[k] for _, _, year in years] + ([unscheduled[k]] if c.unscheduled else [])
        row += 1
        put(ws, row, 1, f"Total, {level.upper()}")
        put_sum(ws, row, 6, f"=SUBTOTAL(9,F{block}:F{row - 1})", "total_cost_usd", figures, USD)
        for j in range(1, 7):
            ws.cell(row=row, column=j).font = STYLES["bold"]
            ws.cell(row=row, column=j).border = STYLES["total_border"]
    return row


def _status_formulas(ws, c, head):
    """The Budget by status rows (under ``head``) as formulas over the Budget sheet's rows:
    COUNTIF of the status for the runs, SUMIF for each money column; the values saved."""
    status = BUDGET_RANGES["budget_status"]
    for i, r in enumerate(c.tables["status_totals"].itertuples(index=False), start=head + 1):
        criterion = f'"{r.budget_status}"'
        put_formula(ws.cell(row=i, column=2), f"=COUNTIF({status},{criterion})", int(r.runs))
        for j, column in enumerate(_MONEY, start=3):
            put_formula(ws.cell(row=i, column=j),
                        f"=SUMIF({status},{criterion},{BUDGET_RANGES[column]})",
                        float(getattr(r, column)))  # fmt: skip


def _management(ws, c, generated):
    t = c.tables["totals"].iloc[0]
    put(ws, 1, 1, "Compute Lab hand-off: training-run budget").font = STYLES["title"]
    fy = _MONTHS[c.fiscal_year_start - 1]
    row = lines(ws, 2, 1, f"Generated {generated:%Y-%m-%d %H:%M} UTC by compute-lab "
                f"{__version__}; US$; fiscal years start in {fy}.", _LINE_CHARS)  # fmt: skip
    if c.version or c.baseline is not None:
        row = lines(ws, row, 1, version_line(c), _BOLD_CHARS, font=STYLES["bold"])
    row = _headline(ws, c, t, row + 1)
    actuals = _actuals_text(c)
    if actuals is not None:
        row = lines(ws, row + 1, 1, actuals, _LINE_CHARS)
    row = _status_line(ws, row + 1, c) + 1
    row = _section(ws, row, "Budget by status")
    head = row
    row = write_table(ws, c.tables["status_totals"][["budget_status", "runs", *_MONEY]], row,
                      totals="Total in the budget", additive=("runs", *_MONEY))  # fmt: skip
    for j, text in enumerate(("P50", "P90", "Contingency"), start=3):  # short: one line
        put(ws, head, j, text)
    for (cell,) in ws.iter_rows(min_row=head + 1, max_row=row, max_col=1):
        if cell.value == APPROVAL_INCOMPLETE:  # the longest line's name: on two lines
            realign(cell, wrap_text=True)
    if len(c.tables["budget"]):
        _status_formulas(ws, c, head)
    first = _MONTHS[c.fiscal_year_start - 1]
    blocks = [(row + 2, 4)]  # the periods' title, header and first rows: never split
    row = _section(ws, row + 2, f"By fiscal year and quarter (Q1 starts in {first})")
    row = _periods(ws, c, t, row)
    if "forecast_status" in c.tables:
        blocks.append((row + 2, 4))
        row = forecast_block(ws, c, row + 2)
    row = _not_in_budget_line(ws, row + 2, c)
    words = row + 1
    glossary = " ".join(f"{word}: {meaning}" for word, meaning in GLOSSARY)  # one paragraph
    row = _section(ws, words, "Words", glossary)
    return blocks + [(words, row - words)]  # the five words together


def version_line(c):
    """Page 1's version line: the hand-off's version label and the baseline it is compared
    with (report --version, --baseline)."""
    parts = [f"Version: {c.version}"] if c.version else []
    b = c.baseline
    if b is not None:
        label = f"{b.version!r}" if b.version else "(no version label)"
        parts.append(f"compared with the baseline {label} of {b.as_of or 'an unknown date'} "
                     "(the Baseline sheet)")  # fmt: skip
    text = "; ".join(parts)
    return text[:1].upper() + text[1:] + "."


#: Page 1's plan-vs-actual columns: (table column, header).
FORECAST_HEADS = (("budget_usd", "Budget"), ("actual_to_date_usd", "Actual to date"),
                  ("eac_usd", "Forecast at completion"), ("variance_usd", "Variance"))  # fmt: skip
#: What page 1's plan-vs-actual block says about its figures.
FORECAST_NOTE = (
    "Forecast (P50) = actual to date + the hours left at the run's pace, pulled toward the "
    "plan's, at today's price + the plan's other costs left; not started: the budget. "
    "Variance = forecast - budget."
)


def forecast_block(ws, c, row):
    """Page 1's plan vs actual: Budget, Actual to date, Forecast at completion and Variance
    by budget status (a total row) and by fiscal year: the Excel Tables ``forecast_status``
    and ``forecast_years``, named like their CSV files. Returns the last row written."""
    money = [k for k, _ in FORECAST_HEADS]
    row = _section(ws, row, "Plan vs actual: forecast at completion", FORECAST_NOTE)
    for table, first, extra in (("forecast_status", "budget_status", ["runs"]),
                                ("forecast_years", "fiscal_year", [])):  # fmt: skip
        head = row
        frame = c.tables[table][[first, *extra, *money]]
        row = write_table(ws, frame, row, totals="Total", additive=(*extra, *money))
        for j, (_, text) in enumerate(FORECAST_HEADS, start=2 + len(extra)):
            put(ws, head, j, text)
        if first == "fiscal_year":
            put(ws, head, 1, "Fiscal year")
        if len(frame):  # an Excel Table named like its CSV file, its total row under it
            add_table(ws, table, head, head + len(frame), len(frame.columns))
        row += 1
    return row - 1


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip


def _unscheduled_text(c):
    if not c.budget_runs:
        return "Nothing is in the budget: no period to show."
    return "No budget run has a start date: nothing to schedule by period."


#: The budget by run as the Budget sheet shows it (compute and electricity: on Costs).
_BY_RUN = ["scenario", "run_code", "budget_status", "approval", "start_month", "end_month",
           "end_month_p90", "total_cost_usd", "total_cost_usd_p90", "contingency_usd"]  # fmt: skip
_BUDGET_WIDE = {"scenario": 20, "run_code": 17, "approval": 14, "budget_status": 10,
                "start_month": 10, "end_month": 10, "end_month_p90": 10}  # fmt: skip
_BUDGET_CHARS = 120


def _budget_view(ws, c, row):
    """The Budget sheet's tables; returns (last row, [(first row, rows to keep together)])."""
    tables, blocks = c.tables, []
    blocks.append((row, 5))
    row = _section(ws, row, "Budget by run",
                   "Approved and Proposed runs (a blank status counts as Proposed), with a "
                   "subtotal each; a run typed Approved without its reference, date, approver "
                   "or approved amount counts as Proposed, on a line of its own; P90 and "
                   "contingency from the calibrated ranges; compute and electricity on the "
                   "Costs sheet.", _BUDGET_CHARS)  # fmt: skip
    budget = tables["budget"][_BY_RUN]
    if len(budget):
        first = row + 1
        row, runs = _runs_table(ws, budget, row)
        if len(runs) > 1:  # one run's P90 is its own: nothing to work out
            independent = float(tables["totals"].iloc[0]["total_cost_usd_p90_independent"])
            runs = tables["budget"].loc[runs.index]  # with each run's expected cost
            blocks.append((row + 2, 6))
            row = _independent_block(ws, runs, first, row + 2, independent)
    else:
        row = put(ws, row, 1, "No scenario is in the budget.").row
    blocks.append((row + 2, 4))
    row = _section(ws, row + 2, "Not in the budget",
                   "Reference and Excluded scenarios: listed for information, never summed.",
                   _BUDGET_CHARS)  # fmt: skip
    others = once(
        tables["not_in_budget"][
            ["scenario", "file", "budget_status", "owner", "accelerator_hours", "total_cost_usd"]
        ]
    )
    header_row = row
    if not len(others):
        return put(ws, row, 1, "None.").row, blocks, header_row
    last = write_table(ws, others, row)
    add_table(ws, "not_in_budget", row, last, len(others.columns))
    return last, blocks, header_row


def _runs_table(ws, budget, head):
    """Budget by run from ``head``: an Excel Table ``budget`` of the runs (grouped by status,
    in :data:`BUDGET_RANGES`' named columns), then a subtotal per status (``SUMIF`` over the
    Table's columns) and the total (``SUBTOTAL``, which follows a filter), each sum saved.
    Returns (the total's row, the runs in the Table's order)."""
    groups = list(budget.groupby("budget_status", sort=False))
    runs = pd.concat([part for _, part in groups])
    last = write_table(ws, runs, head)
    add_table(ws, "budget", head, last, len(_BY_RUN))
    for column, name in BUDGET_RANGES.items():  # the Table's columns, for every formula
        letter = get_column_letter(_BY_RUN.index(column) + 1)
        ws.parent.defined_names[name] = DefinedName(
            name, attr_text=f"Budget!${letter}${head + 1}:${letter}${last}"
        )
    status, row = BUDGET_RANGES["budget_status"], last
    for key, part in groups:
        row += 1
        formulas = {c: f'=SUMIF({status},"{key}",{BUDGET_RANGES[c]})' for c in _MONEY}
        total_row(ws, row, part, _BY_RUN, f"Subtotal: {key}", formulas, subtotal=True)
    row += 1
    formulas = {c: f"=SUBTOTAL(9,{BUDGET_RANGES[c]})" for c in _MONEY}
    total_row(ws, row, runs, _BY_RUN, "Total in the budget", formulas)
    return row, runs


#: Where the Budget sheet's P90 if the runs were independent puts each run's figures: the
#: columns of the Table's P50 and P90 (each run's expected cost and standard deviation).
_MEAN_AT, _SD_AT = _BY_RUN.index("total_cost_usd") + 1, _BY_RUN.index("total_cost_usd_p90") + 1
_Z = "_xlfn.NORM.S.INV(0.9)"


def _independent_formulas(a, b):
    """A run's expected cost and standard deviation (the cost lognormal with median its P50
    in ``a``, P90 in ``b``; :func:`udfs.ranges.lognormal_mean` and
    :func:`udfs.ranges.lognormal_sd`): two Excel formulas, 0 for a run of P50 0."""
    s2 = f"(LN({b}/{a})/{_Z})^2"
    return (f"=IF({a}=0,0,ROUND({a}*EXP({s2}/2),2))",
            f"=IF({a}=0,0,{a}*EXP(3*{s2}/4)*SQRT(2*SINH({s2}/2)))")  # fmt: skip


def _independent_block(ws, runs, first, row, p90):
    """The P90 if the runs were independent, from ``row``: a title and a note; per run (in
    the Budget Table's order, its first row ``first``) its expected cost and standard
    deviation, formulas over the Table's row; then the total's mean (``SUM``), standard
    deviation (``SQRT(SUMSQ(...))``) and P90 (``p90``, the engine's, as
    :func:`udfs.ranges.independent_sum_p90` computes it: the lognormal of that mean and
    standard deviation, held between the total P50 plus the largest contingency and the sum
    of the P90s), named ``budget_independent_mean``, ``_sd`` and ``_p90``. Values saved.
    Returns the last row."""
    row = _section(ws, row, "P90 if the runs were independent",
                   "Each run's cost lognormal (median its P50, P90 its P90): mean P50 x "
                   "EXP(s^2 / 2), s = LN(P90 / P50) / NORM.S.INV(0.9); the total lognormal "
                   "with the summed mean and variance (Fenton-Wilkinson), its P90 between the "
                   "total P50 plus the largest contingency and the total P90.",
                   _BUDGET_CHARS)  # fmt: skip
    p50_col, p90_col = get_column_letter(_MEAN_AT), get_column_letter(_SD_AT)
    for j, text in ((1, "Run code"), (_MEAN_AT, "Mean (US$)"),
                    (_SD_AT, "Std. deviation (US$)")):  # fmt: skip
        put(ws, row, j, text)
    header_cells(ws, row, range(1, len(_BY_RUN) + 1))
    head, sds = row, []
    for i, r in enumerate(runs.itertuples(index=False)):
        row, table_row = row + 1, first + i
        mean = float(r.expected_cost_usd)
        sds.append(ranges.lognormal_sd(float(r.total_cost_usd), float(r.total_cost_usd_p90)))
        put(ws, row, 1, r.run_code).alignment = Alignment(wrap_text=False)  # runs on over B
        formulas = _independent_formulas(f"{p50_col}{table_row}", f"{p90_col}{table_row}")
        for col, formula, value in ((_MEAN_AT, formulas[0], mean), (_SD_AT, formulas[1], sds[-1])):
            put_formula(ws.cell(row=row, column=col), formula, value, USD)
    means = f"{p50_col}{head + 1}:{p50_col}{row}"  # the runs' expected costs
    sd = f"{p90_col}{head + 1}:{p90_col}{row}"  # and standard deviations
    names = {"mean": "budget_independent_mean", "sd": "budget_independent_sd"}
    q = f"({names['sd']}/{names['mean']})^2"
    t2 = f"2*ASINH({q}/(2*SQRT(1+{q})))"  # LN(1+q) without losing a small q
    table = BUDGET_RANGES
    totals = (
        ("mean", "Mean of the total", _MEAN_AT, f"=SUM({means})",
         schedule.usd(sum(schedule.to_cents(float(v)) for v in runs["expected_cost_usd"]))),
        ("sd", "Standard deviation of the total", _SD_AT, f"=SQRT(SUMSQ({sd}))",
         math.sqrt(math.fsum(x * x for x in sds))),
        ("p90", "P90 of the total", _SD_AT,
         f"=IF({names['mean']}=0,SUM({table['total_cost_usd_p90']}),ROUND(MIN(MAX("
         f"{names['mean']}*EXP({_Z}*SQRT({t2})-{t2}/2),SUM({table['total_cost_usd']})+MAX("
         f"{table['contingency_usd']})),SUM({table['total_cost_usd_p90']})),2))", p90),
    )  # fmt: skip
    for key, label, col, formula, value in totals:
        row += 1
        label_cell = put(ws, row, 1, label)
        label_cell.font, label_cell.alignment = STYLES["bold"], Alignment(wrap_text=False)
        cell = put_formula(ws.cell(row=row, column=col), formula, value, USD)
        cell.font = STYLES["bold"]
        name = f"budget_independent_{key}"
        ws.parent.defined_names[name] = DefinedName(
            name, attr_text=f"Budget!${cell.column_letter}${cell.row}"
        )
    return row


def once(others):
    """The "Not in the budget" rows with a run repeated in several files (the planner's
    preset references, in every team's file) shown once, its files listed together by name
    (the Sources sheet has their paths)."""
    key = ["scenario", "budget_status", "owner", "accelerator_hours", "total_cost_usd"]
    if not len(others):
        return others
    grouped = others.fillna({"owner": ""}).groupby(key, sort=False, dropna=False)
    merged = (
        grouped["file"]
        .agg(lambda files: ", ".join(dict.fromkeys(os.path.basename(f) or f for f in files)))
        .reset_index()
    )
    return merged[list(others.columns)]


def _top_aligned(ws, first_row=1):
    for row in ws.iter_rows(min_row=first_row):  # a row grown by wrapped text reads from the top
        for cell in row:
            if cell.value is not None and not is_header(cell):
                realign(cell, vertical="top")


def write_summary(ws, c, generated, paper=None):
    """Fill ``ws`` (the first sheet) with the one-page management summary."""
    ws.title = "Summary"
    blocks = _management(ws, c, generated)
    for letter, width in _SUMMARY_WIDTHS.items():
        ws.column_dimensions[letter].width = width
    _top_aligned(ws, 2)
    fit_rows(ws, 1)
    for r in range(1, ws.max_row + 1):  # the same height in Excel and LibreOffice: one page
        if not ws.row_dimensions[r].height:
            spacer = empty_row(ws, r)
            ws.row_dimensions[r].height = TITLE_PT if r == 1 else SPACER_PT if spacer else ROW_PT
    setup_print(ws, "Summary", generated, pages_wide=1, portrait=True, paper=paper)
    ws.print_area = f"A1:F{ws.max_row}"
    keep_together(ws, blocks)  # a long page 1 goes on whole tables, never a lone header


def write_budget(ws, c, generated, paper=None):
    """Fill ``ws`` with the budget by run and what is not in it."""
    ws.title = "Budget"
    last, blocks, others_header = _budget_view(ws, c, 1)
    fit_columns(ws, _BY_RUN, 1, last, wide=_BUDGET_WIDE)
    for j, name in enumerate(_BY_RUN, start=1):  # the money columns hold the bold totals
        if name.endswith("_usd") or name.endswith("_p90") and name.startswith("total"):
            letter = ws.cell(row=1, column=j).column_letter
            ws.column_dimensions[letter].width = max(ws.column_dimensions[letter].width or 0, 13)
    for (cell,) in ws.iter_rows(min_row=1, max_row=last, max_col=1):
        if cell.value == UNSCHEDULED:
            realign(cell, wrap_text=True)
    _top_aligned(ws)
    fit_rows(ws, 1)
    fit_header_rows(ws)
    # a continuation page repeats the header of the table it continues ("Not in the budget":
    # the long one, below the short budget table)
    setup_print(ws, "Budget", generated, pages_wide=1, paper=paper,
                header_rows=f"{others_header}:{others_header}")  # fmt: skip
    keep_together(ws, blocks)
