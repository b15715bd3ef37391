"""The Checks sheet: input and consistency checks, warnings, and the three-state master check.

Every check cell is TRUE (passes) or FALSE. A failed check is an ERROR (a number would be
wrong); a failed warning is a WARN (something needs a human look: a typed MFU above the
calibrated P90 MFU or a throughput override in a column counted in the budget, a filled
column without a budget status). ``master_check`` is TRUE when nothing fails (OK or WARN);
``master_status`` reads "OK", "WARN" or "ERROR"; only FALSE and error cells are coloured
as failures.
"""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from udfs.plan import CALIBRATED_MFU_EXCEL, CALIBRATED_RANGE_EXCEL, THROUGHPUT_SOURCES
from udfs.quantities import BUDGET_STATUSES, PLAN_INPUTS

from ..sheetkit import CHECK_WARN_FILL, Book, bold, check_colours, put_text
from .layout import FIRST_COL, LAST_COL, SCENARIO_COLUMNS

_PER_SCENARIO = (
    ("Required inputs typed (or the column is unused)",
     "=OR({scenario_ready},COUNT({total_params},{active_params},{training_tokens},"
     "{accelerators})=0)"),
    ("Number inputs hold numbers (no text such as '405B')",
     "=COUNTA({numeric_inputs})-COUNTA({accelerator_name})=COUNT({numeric_inputs})"),
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
     "=OR(LEN({budget_status})=0,ISNUMBER(MATCH({budget_status},{"
     + ",".join(f'"{s}"' for s in BUDGET_STATUSES) + "},0)))"),
    ("Uncertainties >= 0",
     "=AND(N({throughput_range_pct_used})>=0,N({price_range_pct_used})>=0)"),
    ("Accelerator is in the catalogue (or blank)",
     "=OR(ISBLANK({accelerator_name}),{catalogue_row}>0)"),
    ("Prices >= 0, power > 0, overhead and PUE >= 1, bytes > 0",
     "=AND({usd_per_accelerator_hour_used}>=0,{watts_per_accelerator_used}>0,"
     "{server_overhead_used}>=1,{pue_used}>=1,{usd_per_kwh_used}>=0,"
     "{grams_co2_per_kwh_used}>=0,{checkpoint_bytes_per_param_used}>0)"),
    ("Complete scenarios give numbers",
     "=OR(NOT({scenario_ready}),AND(ISNUMBER({total_cost_usd}),"
     "ISNUMBER({wall_clock_days}),ISNUMBER({iterations_per_year})))"),
)  # fmt: skip


_IN_BUDGET = (
    'AND({scenario_ready},OR({budget_status_used}="Proposed",{budget_status_used}="Approved"))'
)
#: Warnings per scenario (TRUE = nothing to look at): a FALSE makes the master check WARN.
_WARNINGS = (
    ("In the budget: a typed MFU is not above the calibrated P90 MFU (one run in ten)",
     f'=IF(AND({_IN_BUDGET},{{throughput_source}}="{THROUGHPUT_SOURCES[1]}",'
     f"ISNUMBER({{active_params_used}}),ISNUMBER({{mfu_used}})),"
     f"{{mfu_used}}<=({CALIBRATED_MFU_EXCEL})*(1+{CALIBRATED_RANGE_EXCEL}),TRUE)"),
    ("In the budget: no effective TFLOP/s override",
     f"=OR(NOT({_IN_BUDGET}),NOT(ISNUMBER({{effective_tflops_input}})))"),
    ("Filled column has a budget status (a blank counts as Proposed)",
     "=OR(NOT({scenario_ready}),LEN({budget_status})>0)"),
)  # fmt: skip


def _single_checks(n):
    """Checks of the whole workbook (one cell each): switch, schedule, default MFU, Summary."""
    return (
        ("Active-scenario switch is a whole number 1..N and that scenario is complete",
         f"=IF(AND(ISNUMBER(active_scenario),active_scenario>=1,active_scenario<={n}),"
         "AND(INT(active_scenario)=active_scenario,INDEX(scenario_ready,1,active_scenario)),"
         "FALSE)"),
        ("Monthly schedule holds the whole run (shares add up to 100%)",
         "=OR(NOT({mon.ok}),ABS({mon.share_total}-1)<1E-9)"),
        ("Calibrated default MFU: every accelerator has its intercept (Accelerators)",
         "=AND(ISNUMBER({mfu_ln_slope}),COUNT(accel_mfu_intercept)=ROWS(accel_mfu_intercept))"),
        ("Summary total cost = Calculations total cost of the selected scenario",
         "=OR(NOT({sel.scenario_ready}),"
         "{sel.total_cost_usd}=INDEX(total_cost_usd,1,active_scenario))"),
    )  # fmt: skip


def _numeric_span(book):
    """First and last Inputs row of the number inputs (only the accelerator name between)."""
    numeric = [q.name for q in PLAN_INPUTS if q.kind != "text"]
    top, bottom = book.rows[numeric[0]][1], book.rows[numeric[-1]][1]
    text_rows = [book.rows[q.name][1] for q in PLAN_INPUTS if q.kind == "text"]
    assert all(not top < t < bottom for t in text_rows if t != book.rows["accelerator_name"][1])
    return top, bottom


def _per_scenario_rows(book, ws, r, table=_PER_SCENARIO):
    top, bottom = _numeric_span(book)
    a, b = get_column_letter(FIRST_COL), get_column_letter(LAST_COL)
    for label, formula in table:
        put_text(ws.cell(r, 1), label)
        for c in SCENARIO_COLUMNS:
            letter = get_column_letter(c)
            text = formula.replace("{numeric_inputs}", f"Inputs!{letter}{top}:{letter}{bottom}")
            ws.cell(r, c, book.formula(text, ws.title, letter))
        ws.cell(r, 3, f"=AND({a}{r}:{b}{r})")
        r += 1
    return r


def checks_sheet(book, scen):
    """The Checks sheet: per-scenario checks (with an "All" column), workbook checks,
    warnings and the master check (three states)."""
    widths = {"A": 62, "B": 2, "C": 10}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = 16
    ws = book.sheet("Checks", widths)
    book.title(ws, "Checks", "TRUE = passes. Master check: OK, WARN (have a look) or ERROR.")
    book.header(ws, 4, ["Check", "", "All"])
    for c in SCENARIO_COLUMNS:
        cell = ws.cell(4, c, book.formula("={scenario_name}", ws.title, get_column_letter(c)))
        cell.style = "Header"
    ws.row_dimensions[4].height = 45
    first = 5
    r = _per_scenario_rows(book, ws, first)
    for label, formula in _single_checks(len(scen)):
        put_text(ws.cell(r, 1), label)
        ws.cell(r, 3, book.formula(formula, ws.title))
        r += 1
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
    last = get_column_letter(LAST_COL)
    check_colours(ws, f"C{first}:{last}{last_check}")
    check_colours(ws, f"C{warn_first}:{last}{warn_last}", bad_fill=CHECK_WARN_FILL)
    check_colours(ws, f"C{r - 1}:C{r}")
    for row in ws.iter_rows(min_row=first, max_row=r, min_col=3, max_col=LAST_COL):
        for c in row:
            c.alignment = Alignment(horizontal="center")
    Book.finish(ws, freeze="D5")
    return ws
