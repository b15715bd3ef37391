"""The Checks sheet: input and consistency checks, warnings, and the three-state master check.

Every check cell is TRUE (passes) or FALSE. A failed check is an ERROR (a number would be
wrong); a failed warning is a WARN (something needs a human look: a typed MFU above the
calibrated P90 MFU or a throughput override in a column counted in the budget, a filled
column without a budget status, an Approved column without its reference, date, approver or
approved amount, or whose total cost is over the approved amount). ``master_check`` is TRUE
when nothing fails (OK or WARN); ``master_status`` reads "OK", "WARN" or "ERROR"; only FALSE
and error cells are coloured as failures.
"""

from __future__ import annotations

import re

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from udfs.numbers import SIZE_EXAMPLES
from udfs.own_runs import ADVICE
from udfs.plan import CALIBRATED_RANGE_EXCEL, THROUGHPUT_SOURCES
from udfs.quantities import BUDGET_STATUSES, PLAN_INPUTS, PLAUSIBLE_SLIPS
from udfs.validation import plausibility_advice

from ..sheetkit import CHECK_WARN_FILL, Book, bold, check_colours, put_text
from .layout import FIRST_COL, LAST_COL, SCENARIO_COLUMNS, repeat_labels
from .own_runs import FIRST_ROW, FLAGS
from .sizes import SIZE_INPUTS

#: Column of each per-scenario check's first failing scenario (1-8), for the master cause.
CAUSE_COL = LAST_COL + 1

_PER_SCENARIO = (  # the first failing check is the cause an ERROR names
    ("Parameters and tokens typed as text read as numbers (Inputs rows {row:total_params}, "
     "{row:active_params} and {row:training_tokens}): " + SIZE_EXAMPLES,
     "=AND(" + ",".join(f"OR(NOT(ISTEXT({{{n}}})),ISNUMBER({{{n}_used}}))"
                        for n in SIZE_INPUTS) + ")"),
    ("Required inputs typed (or the column is unused)",
     "=OR({scenario_ready},COUNT({total_params},{active_params},{training_tokens},"
     "{accelerators})=0)"),
    ("Number inputs hold numbers (parameters and tokens may be text such as 70B)",
     "=COUNTA({numeric_inputs})-{text_inputs}-{size_texts}=COUNT({numeric_inputs})"),
    ("Active parameters <= total parameters",
     "=OR(NOT({scenario_ready}),{active_params_used}<={total_params_used})"),
    ("Accelerators is a whole number",
     "=OR(NOT(ISNUMBER({accelerators})),INT({accelerators})={accelerators})"),
    ("Required inputs > 0",
     "=OR(NOT({scenario_ready}),AND({total_params_used}>0,{active_params_used}>0,"
     "{training_tokens_used}>0,{accelerators_used}>0))"),
    ("MFU and goodput in (0, 1]",
     "=OR(NOT({scenario_ready}),AND({mfu_used}>0,{mfu_used}<=1,{goodput_used}>0,"
     "{goodput_used}<=1))"),
    ("Budget status is " + ", ".join(BUDGET_STATUSES[:-1]) + " or " + BUDGET_STATUSES[-1]
     + " (or blank)",
     "=OR(LEN({budget_status})=0,ISNUMBER(MATCH({budget_status},budget_statuses,0)))"),
    ("Uncertainties >= 0",
     "=AND(N({throughput_range_pct_used})>=0,N({price_range_pct_used})>=0)"),
    ("Accelerator is in the catalogue (or blank)",
     "=OR(ISBLANK({accelerator_name}),{catalogue_row}>0)"),
    ("Prices and other costs >= 0, power > 0, overhead and PUE >= 1, bytes > 0",
     "=AND({usd_per_accelerator_hour_used}>=0,{watts_per_accelerator_used}>0,"
     "{server_overhead_used}>=1,{pue_used}>=1,{usd_per_kwh_used}>=0,"
     "{grams_co2_per_kwh_used}>=0,{checkpoint_bytes_per_param_used}>0,"
     "{other_costs_usd_used}>=0)"),
    ("Approved amount > 0 (or blank)",
     "=IF(ISNUMBER({approved_amount_usd}),{approved_amount_usd}>0,"
     "LEN({approved_amount_usd})=0)"),
    ("Pricing basis is rental all-in, rental plus power or owned (or blank)",
     "=OR(LEN({pricing_basis})=0,ISNUMBER(MATCH({pricing_basis},pricing_bases,0)))"),
    ("Total and active parameters >= 1E6 (Inputs rows {row:total_params} and "
     "{row:active_params}); below, " + plausibility_advice("total_params") + " Type the full "
     "number, e.g. " + PLAUSIBLE_SLIPS["total_params"][1],
     "=OR(NOT({scenario_ready}),AND({total_params_used}>=min_plausible_params,"
     "{active_params_used}>=min_plausible_params))"),
    ("Training tokens >= 1E9 (Inputs row {row:training_tokens}); below, "
     + plausibility_advice("training_tokens") + " Type the full number, e.g. "
     + PLAUSIBLE_SLIPS["training_tokens"][1],
     "=OR(NOT({scenario_ready}),{training_tokens_used}>=min_plausible_tokens)"),
    ("Complete scenarios give numbers",
     "=OR(NOT({scenario_ready}),AND(ISNUMBER({total_cost_usd}),"
     "ISNUMBER({wall_clock_days}),ISNUMBER({iterations_per_year})))"),
)  # fmt: skip


_IN_BUDGET = (
    'AND({scenario_ready},OR({budget_status_used}="Proposed",{budget_status_used}="Approved"))'
)
#: Inputs a budget run must not leave to a default: a figure nobody chose reaches the budget.
#: One rule for the planner's warning (:data:`TYPED_NOT_DEFAULTS_EXCEL`) and the hand-off's
#: "Typed, not defaults" check (``report.checks``).
NEVER_DEFAULT = ("scenario_name", "owner", "usd_per_accelerator_hour", "start_date")
#: The scenario name a custom column starts with ("Custom 4"): never typed.
PLACEHOLDER_NAME = re.compile(r"^Custom \d+$")
#: The rule in native formulas, per scenario column: TRUE unless a column in the budget leaves
#: one of :data:`NEVER_DEFAULT` blank (its name still the placeholder "Custom n").
TYPED_NOT_DEFAULTS_EXCEL = (
    f"=OR(NOT({_IN_BUDGET}),AND("
    'LEN(TRIM({scenario_name}))>0,NOT(AND(LEFT(TRIM({scenario_name}),7)="Custom ",'
    "ISNUMBER(-MID(TRIM({scenario_name}),8,99)),"
    'ISERROR(FIND(".",{scenario_name})),ISERROR(FIND("E",UPPER({scenario_name}))))),'
    + ",".join(f"LEN({{{n}}})>0" for n in NEVER_DEFAULT[1:])
    + "))"
)
#: Warnings per scenario (TRUE = nothing to look at): a FALSE makes the master check WARN.
_WARNINGS = (
    ("In the budget: a typed MFU is not above the calibrated P90 MFU (one run in ten)",
     f'=IF(AND({_IN_BUDGET},{{throughput_source}}="{THROUGHPUT_SOURCES[1]}",'
     f"ISNUMBER({{active_params_used}}),ISNUMBER({{mfu_used}})),"
     f"{{mfu_used}}<={{calibrated_mfu}}*(1+{CALIBRATED_RANGE_EXCEL}),TRUE)"),
    ("In the budget: no effective TFLOP/s override",
     f"=OR(NOT({_IN_BUDGET}),NOT(ISNUMBER({{effective_tflops_input}})))"),
    ("Filled column has a budget status (a blank counts as Proposed)",
     "=OR(NOT({scenario_ready}),LEN({budget_status})>0)"),
    ("In the budget: name, owner, price and start date typed, not left to a default",
     TYPED_NOT_DEFAULTS_EXCEL),
    ("Approved has its reference, date, approver and approved amount (else the hand-off "
     "counts it as Proposed)",
     '=OR({budget_status_used}<>"Approved",AND(LEN({approval_ref})>0,'
     "ISNUMBER({approval_date}),LEN({approver})>0,ISNUMBER({approved_amount_usd})))"),
    ("Approved: the total cost (P50) is within the approved amount",
     '=IF(AND({budget_status_used}="Approved",ISNUMBER({approved_amount_usd}),'
     "ISNUMBER({total_cost_usd})),ROUND({total_cost_usd},2)<=ROUND({approved_amount_usd},2),"
     "TRUE)"),
)  # fmt: skip


def _single_checks(n):
    """Checks of the whole workbook (one cell each): switch, schedule, default MFU, Summary."""
    return (
        ("Active-scenario switch is a whole number 1..N and that scenario is complete",
         f"=IF(AND(ISNUMBER(active_scenario),active_scenario>=1,active_scenario<={n}),"
         "AND(INT(active_scenario)=active_scenario,INDEX(scenario_ready,1,active_scenario)),"
         "FALSE)"),
        ("Monthly schedule holds the whole run, P50 and P90 (shares sum to 100%)",
         "=OR(NOT({mon.ok}),NOT(INDEX(plausible,1,active_scenario)),"
         "AND(ABS({mon.share_total}-1)<1E-9,OR(NOT(ISNUMBER({mon.total_p90})),"
         "ABS({mon.p90_sum}-{mon.total_p90})<=1E-9*ABS({mon.total_p90}))))"),
        ("Calibrated default MFU: every accelerator has its intercept (Accelerators)",
         "=AND(ISNUMBER({mfu_ln_slope}),COUNT(accel_mfu_intercept)=ROWS(accel_mfu_intercept))"),
        ("Summary total cost = Calculations total cost of the selected scenario",
         "=OR(NOT({sel.scenario_ready}),"
         "{sel.total_cost_usd}=INDEX(total_cost_usd,1,active_scenario))"),
    )  # fmt: skip


#: The "Our runs" row checks as Checks rows: ``udfs.own_runs.ADVICE`` key -> the rule. A
#: failing one says in column D how many rows fail, the first, and what to do (the advice).
OWN_RUNS_LABELS = {
    "complete": "Our runs: each typed row is complete (every column but Organisation)",
    "figures": "Our runs: figures are numbers > 0, within bounds (text such as 70B reads as a "
    "number)",
    "accelerator": "Our runs: each accelerator is in the catalogue",
    "unique": "Our runs: run names are unique",
    "organisation": "Our runs: one organisation's runs (Organisation the same or blank)",
}


def _own_runs_rows(ws, r):
    """One Checks row per "Our runs" row check (:data:`.own_runs.FLAGS`): TRUE when no typed
    row fails it; else column D (D to the cause column, merged) counts the failing rows, names
    the first and says what to do (the row counts for nothing in the default MFU, and
    ``compute-lab report`` refuses the planner)."""
    for name, _, key in FLAGS:
        put_text(ws.cell(r, 1), OWN_RUNS_LABELS[key])
        bad = f"COUNTIF({name},FALSE)"  # SUM gives an error value when a row check does
        ws.cell(r, 3, f"=AND({bad}=0,NOT(ISERROR(SUM({name}))))")
        ws.cell(r, 4, f'=IF(C{r},"",IF({bad}=0,"a row of Our runs gives an error value",'
                f'{bad}&IF({bad}=1," row fails"," rows fail")&"; the first is Our runs row "'
                f'&(MATCH(FALSE,{name},0)+{FIRST_ROW - 1})&": {ADVICE[key]}"))')  # fmt: skip
        ws.merge_cells(start_row=r, start_column=4, end_row=r, end_column=CAUSE_COL)
        r += 1
    return r


def _numeric_span(book):
    """First and last Inputs row of the number inputs, and the text inputs between them."""
    numeric = [q.name for q in PLAN_INPUTS if q.kind != "text"]
    top, bottom = book.rows[numeric[0]][1], book.rows[numeric[-1]][1]
    inside = [
        q.name for q in PLAN_INPUTS if q.kind == "text" and top < book.rows[q.name][1] < bottom
    ]
    return top, bottom, inside


def _per_scenario_rows(book, ws, r, table=_PER_SCENARIO):
    top, bottom, inside = _numeric_span(book)
    texts = "(" + "+".join(f"COUNTA({{{n}}})" for n in inside) + ")"
    sizes = "(" + "+".join(f"ISTEXT({{{n}}})" for n in SIZE_INPUTS) + ")"
    a, b = get_column_letter(FIRST_COL), get_column_letter(LAST_COL)
    for label, formula in table:
        for name in ("total_params", "active_params", "training_tokens"):
            label = label.replace(f"{{row:{name}}}", str(book.rows[name][1]))
        put_text(ws.cell(r, 1), label).alignment = Alignment(wrap_text=True, vertical="top")
        for c in SCENARIO_COLUMNS:
            letter = get_column_letter(c)
            text = formula.replace("{numeric_inputs}", f"Inputs!{letter}{top}:{letter}{bottom}")
            text = text.replace("{text_inputs}", texts).replace("{size_texts}", sizes)
            ws.cell(r, c, book.formula(text, ws.title, letter))
        ws.cell(r, 3, f"=AND({a}{r}:{b}{r})")
        first_bad = ws.cell(r, CAUSE_COL, f'=IFERROR(MATCH(FALSE,{a}{r}:{b}{r},0),"")')
        first_bad.style = "Calc"
        r += 1
    return r


def checks_sheet(book, scen):
    """The Checks sheet: per-scenario checks (with an "All" column), workbook checks,
    warnings and the master check (three states)."""
    widths = {"A": 62, "B": 2, "C": 10}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = 16
    widths[get_column_letter(CAUSE_COL)] = 12
    ws = book.sheet("Checks", widths)
    book.title(ws, "Checks", "TRUE = passes. Master check: OK, WARN (have a look) or ERROR.")
    book.header(ws, 4, ["Check", "", "All"])
    for c in SCENARIO_COLUMNS:
        cell = ws.cell(4, c, book.formula('={scenario_name}&""', ws.title, get_column_letter(c)))
        cell.style = "Header"
    put_text(ws.cell(4, CAUSE_COL), "First failing column (1-8)").style = "Header"
    ws.row_dimensions[4].height = 45
    first = 5
    r = _per_scenario_rows(book, ws, first)
    for label, formula in _single_checks(len(scen)):
        put_text(ws.cell(r, 1), label)
        ws.cell(r, 3, book.formula(formula, ws.title))
        r += 1
    own_first, r = r, _own_runs_rows(ws, r)
    last_check = r - 1
    r += 1
    put_text(ws.cell(r, 1), "Warnings: TRUE = nothing to look at; FALSE = WARN").style = "Section"
    warn_first = r + 1
    r = _per_scenario_rows(book, ws, warn_first, _WARNINGS)
    warn_last = r - 1
    r += 1
    put_text(ws.cell(r, 1), "No check fails (TRUE with OK or WARN)").style = "Section"
    cell = ws.cell(r, 3, f"=IFERROR(AND(C{first}:C{last_check}),FALSE)")
    book.place_cell("master_check", ws, cell.coordinate, named=True)
    r += 1
    put_text(ws.cell(r, 1), "Master check: OK, WARN or ERROR").style = "Section"
    cell = ws.cell(
        r, 3,
        f'=IFERROR(IF(NOT(C{r - 1}),"ERROR",IF(AND(C{warn_first}:C{warn_last}),"OK","WARN")),'
        '"ERROR")',
    )  # fmt: skip
    bold(cell)
    book.place_cell("master_status", ws, cell.coordinate, named=True)
    r = _master_cause(book, ws, r + 1, first, last_check)
    last = get_column_letter(LAST_COL)
    check_colours(ws, f"C{first}:{last}{last_check}")
    check_colours(ws, f"C{warn_first}:{last}{warn_last}", bad_fill=CHECK_WARN_FILL)
    check_colours(ws, f"C{r - 3}:C{r - 2}")
    for row in ws.iter_rows(min_row=first, max_row=r, min_col=3, max_col=LAST_COL):
        for c in row:
            c.alignment = Alignment(horizontal="center", vertical="top")  # level a wrapped label
    ws.cell(r, 3).alignment = Alignment(horizontal="left")  # the cause reads to the right
    for k in range(own_first, last_check + 1):  # which rows, and what to do
        ws.cell(k, 1).alignment = Alignment(wrap_text=True, vertical="top")
        ws.cell(k, 4).alignment = Alignment(horizontal="left", vertical="top", wrap_text=True)
    from ..sheetkit import fit_wrapped_rows

    fit_wrapped_rows(ws)
    for k in range(own_first, last_check + 1):  # room for two lines of rows and advice
        ws.row_dimensions[k].height = max(ws.row_dimensions[k].height or 0, 30)
    # pages counted with the rows' heights; the header row and the checks (column A) on each
    Book.finish(ws, freeze="D5", print_titles="4:4")
    repeat_labels(ws)
    return ws


def _master_cause(book, ws, r, first, last):
    """``master_cause``: the first failing check and its scenario, the reason of an ERROR."""
    put_text(ws.cell(r, 1), "Row of the first failing check (0: an error value)")
    cell = ws.cell(r, 3, f"=IFERROR(MATCH(FALSE,C{first}:C{last},0),0)")
    book.place_cell("checks.cause_row", ws, cell.coordinate)
    ws.row_dimensions[r].hidden = True  # a helper: the cause below says it in words
    k = get_column_letter(CAUSE_COL)
    labels, columns = f"$A${first}:$A${last}", f"${k}${first}:${k}${last}"
    rows = f"$D${first}:$D${last}"  # which rows of "Our runs" fail (a text there, else none)
    letters = "".join(get_column_letter(c) for c in SCENARIO_COLUMNS)
    put_text(ws.cell(r + 1, 1), "Cause of an ERROR: the first failing check").style = "Section"
    cell = ws.cell(r + 1, 3, book.formula(
        '=IF(master_status<>"ERROR","",IF({checks.cause_row}=0,'
        '"a check gives an error value (see Checks)",'
        f"INDEX({labels},{{checks.cause_row}},1)"
        f"&IF(ISNUMBER(INDEX({columns},{{checks.cause_row}},1)),"
        f'" (column "&MID("{letters}",INDEX({columns},{{checks.cause_row}},1),1)&": "'
        f'&INDEX(scenario_name,1,INDEX({columns},{{checks.cause_row}},1))&")","")'
        # an Our runs row check: how many rows fail and the first, its advice left on the row
        f'&IF(ISTEXT(INDEX({rows},{{checks.cause_row}},1)),'
        f'" ("&IFERROR(LEFT(INDEX({rows},{{checks.cause_row}},1),'
        f'FIND(":",INDEX({rows},{{checks.cause_row}},1))-1),'
        f'INDEX({rows},{{checks.cause_row}},1))&")","")))',
        ws.title,
    ))  # fmt: skip
    book.place_cell("master_cause", ws, cell.coordinate, named=True)
    return r + 1
