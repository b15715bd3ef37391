"""The Summary sheet: the selected scenario (the active-scenario switch)."""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from udfs import model
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, RANGE_OUTPUTS, RANGE_QUANTITIES

from ..sheetkit import Book, bold, number_format, put_text, state_colours
from .layout import FIRST_COL, LAST_COL, SIZE_FORMAT, single, wrap_units

_OVERRIDE = "ISNUMBER({sel.effective_tflops_input_used})"
_RESOLVED = (
    ("budget_status_used", "Budget status", ""),
    ("owner_used", "Owner", ""),
    ("total_params_used", "Total parameters", "parameters"),
    ("active_params_used", "Active parameters per token", "parameters"),
    ("training_tokens_used", "Training tokens", "tokens"),
    ("accelerators_used", "Accelerators", "accelerators"),
    ("accelerator_name", "Accelerator", ""),
    ("peak_tflops_used", "Peak TFLOP/s per accelerator", "TFLOP/s"),
    ("mfu_used", "MFU", "fraction"),
    ("goodput_used", "Goodput", "fraction"),
    ("throughput_source", "Throughput source", ""),
    ("usd_per_accelerator_hour_used", "Price per accelerator-hour", "US$/accelerator-hour"),
    ("pricing_basis_used", "Pricing basis", ""),
    ("usd_per_kwh_used", "Electricity price (0: in the price)", "US$/kWh"),
    ("other_costs_usd_used", "Other costs of the run", "US$"),
    ("start_date_used", "Run start date", "date"),
    ("scenario_ready", "Scenario complete", "TRUE/FALSE"),
)


#: Index of the example column (the switch's fallback when no custom column is filled).
EXAMPLE_INDEX = 3
#: Row of the selected scenario's header (the switch below it), under the scenario list.
SWITCH_ROW = 20


def _switch(book, ws, n, top):
    """The active-scenario switch (C of row ``top + 1``, blank = automatic), the scenario
    shown (``active_scenario``), its name and checks."""
    sw = f"C{top + 1}"
    book.label_cells(ws, top + 1, "Active scenario (switch)", f"1 to {n}", "")
    switch = book.input_cell(ws[sw], None, "index")
    book.place_cell("active_scenario_switch", ws, sw, named=True)
    prompt = (f"Scenario number, 1 to {n} (the list above). Blank: your first filled "
              f"custom column, else the example ({EXAMPLE_INDEX}).")  # fmt: skip
    error = f"Type a whole number from 1 to {n}, or leave it blank."
    book.validation(ws, sw, "whole", "1", str(n), "between", prompt=prompt, error=error,
                    title="Active scenario")  # fmt: skip
    bold(switch)
    note = put_text(ws.cell(top + 1, 4), "Blank: your first filled custom column, else the "
                    f"example ({EXAMPLE_INDEX})")  # fmt: skip
    note.style = "Note"
    note.alignment = Alignment(vertical="center", wrap_text=True)
    title, row, _, _ = book.rows["scenario_ready"]
    custom = (f"'{title}'!${get_column_letter(FIRST_COL + EXAMPLE_INDEX)}${row}:"
              f"${get_column_letter(LAST_COL)}${row}")  # fmt: skip
    single(book, ws, top + 2, "active_scenario", "Scenario shown", "index",
           "=IF(ISNUMBER({active_scenario_switch}),{active_scenario_switch},"
           f"IFERROR(MATCH(TRUE,{custom},0)+{EXAMPLE_INDEX},{EXAMPLE_INDEX}))", "Calc")  # fmt: skip
    book.name("active_scenario", book.ref("active_scenario"))
    ws.cell(top + 2, 3).alignment = Alignment(horizontal="left")
    single(book, ws, top + 3, "sel.scenario_name", "Selected scenario", "",
           "=INDEX(scenario_name,1,{active_scenario})")  # fmt: skip
    single(book, ws, top + 4, "sel.checks", "Checks", "",
           '=IF(master_status="OK","OK",IF(master_status="WARN","WARN: have a look at Checks",'
           '"ERROR: "&master_cause&" (Checks)"))', "Calc")  # fmt: skip
    state_colours(ws, f"C{top + 4}")
    book.header(ws, top, ["", "", "", ""])
    put_text(ws.cell(top, 1), "Selected scenario").style = "Header"


#: Short names of the inputs a blank leaves to a default, as the list on Summary says them
#: ("" where the default's unit names it: "700 W", "481 gCO2/kWh").
_SHORT = {
    "budget_status": "status", "owner": "owner", "start_date": "start date", "mfu": "MFU",
    "goodput": "goodput", "usd_per_accelerator_hour": "price", "price_range_pct":
    "price range", "watts_per_accelerator": "", "server_overhead": "overhead", "pue":
    "PUE", "usd_per_kwh": "electricity", "other_costs_usd": "other costs",
    "grams_co2_per_kwh": "", "checkpoint_bytes_per_param": "checkpoint",
}  # fmt: skip


def _default_words():
    """(input, words) of each input a blank leaves to a default, with the default, in few
    words (a row of the list holds them all in four lines): the figures are those of
    :data:`udfs.quantities.PLAN_INPUTS` ("price $2.00/h", "other costs $0", "700 W")."""
    words = [("budget_status", "Proposed"), ("owner", "owner none"),
             ("start_date", "start date none"),
             ("mfu", "MFU calibrated")]  # fmt: skip
    for q in PLAN_INPUTS:
        if q.default is None or q.name not in _SHORT:
            continue
        if q.unit == "fraction":
            shown = f"{q.default:.0%}"
        elif q.unit == "US$":  # an amount: whole dollars
            shown = f"${q.default:,.0f}"
        elif q.unit.startswith("US$"):
            per = q.unit[3:].replace("/accelerator-hour", "/h")
            shown = f"${q.default:,.2f}{per}"
        elif q.unit == "ratio":
            shown = f"{q.default:g}"
        else:
            shown = f"{q.default:g} {q.unit}"
        words.append((q.name, f"{_SHORT[q.name]} {shown}".strip()))
    return tuple(words)


DEFAULT_WORDS = _default_words()
#: Height of a reference's row of the scenario list: two lines of 15 points (its name).
_LIST_ROW_PT = 30.0
#: Width of column D, the scenario list's defaults: as wide as A:G printing one page wide at
#: 70% on Letter allows (column C, the figures, 18 wide: parameters and tokens as 405.0B and
#: 15.6T), so that every default a row may list takes four lines, not five.
_LIST_WIDTH = 47
#: Characters of a line of the scenario list's defaults (46 in a column 42 wide).
_LIST_LINE_CHARS = 46 * _LIST_WIDTH // 42
#: Height of any other row: every default it may list, whole, in column D.
_LIST_DEFAULTS_PT = 15.0 * -(-len("; ".join(w for _, w in DEFAULT_WORDS)) // _LIST_LINE_CHARS)
#: The scenario list under the headline box: key -> (column, header, width or None to keep
#: the column's width). One page wide at the readable print scale (A to G).
LIST_COLUMNS = {
    "name": (1, "No. and scenario", None),
    "status": (2, "Status", None),
    "p50": (3, "Total P50 (US$)", None),
    "defaults": (4, "Inputs left to a default", None),
    "p90": (5, "Total P90 (US$)", 13),
    "first": (6, "First month", 9),
    "last": (7, "Last month", 9),
}
#: Row of the scenario list's header (the eight scenarios below it).
LIST_ROW = 10


def _scenario_list(book, ws, scen, top):
    """One row per scenario: its status, and when in the budget (a complete Approved or
    Proposed column) its P50, P90, first and last month; and the inputs it leaves to a
    default. The headline box sums these rows."""
    n = len(scen)
    col = {k: v[0] for k, v in LIST_COLUMNS.items()}
    for c, head, width in LIST_COLUMNS.values():
        put_text(ws.cell(top, c), head).style = "Header"
        if width:
            ws.column_dimensions[get_column_letter(c)].width = width
    ws.row_dimensions[top].height = 30
    for i in range(1, n + 1):
        r = top + i
        at = f",1,{i})"
        ready = f"INDEX(scenario_ready{at}"
        status = f"INDEX(budget_status_used{at}"
        inb = f'AND({ready},OR({status}="Approved",{status}="Proposed"))'
        fm = f"{get_column_letter(col['first'])}{r}"  # the first month
        name = ws.cell(r, col["name"], f'="{i}. "&INDEX(scenario_name{at}')
        name.style = "Link"
        ws.cell(r, col["status"], f"={status}").style = "Link"
        for key, q in (("p50", "total_cost_usd"), ("p90", "total_cost_usd_p90")):
            cell = ws.cell(r, col[key], f'=IF({inb},INDEX({q}{at},"")')
            cell.style, cell.number_format = "Calc", number_format("US$")
        start = f"INDEX(start_date_used{at}"
        first = ws.cell(r, col["first"], f'=IF(AND({inb},ISNUMBER({start})),{start},"")')
        # the run occupies [start, start + days): its last month holds the instant before
        last = ws.cell(r, col["last"], f'=IF(ISNUMBER({fm}),{fm}+MAX(0,'
                       f'INDEX(wall_clock_days{at}-1E-9),"")')  # fmt: skip
        for cell in (first, last):
            cell.style, cell.number_format = "Calc", "mmm yyyy"
        used = "&".join(f'IF(LEN(INDEX({q}{at})=0,"{words}; ","")'
                        for q, words in DEFAULT_WORDS)  # fmt: skip
        # a complete scenario of the team's (the preset references keep their own figures);
        # the last "; " dropped
        full = f'SUBSTITUTE(SUBSTITUTE({used}&"|","; |",""),"|","")'
        text = ws.cell(
            r, col["defaults"], f'=IF(AND({ready},{status}<>INDEX(budget_statuses,1,1)),{full},"")'
        )
        text.style = "Calc"
        for c in range(1, 8):
            ws.cell(r, c).alignment = Alignment(wrap_text=c in (1, 4), vertical="top")
        reference = scen[i - 1]["kind"].endswith("reference")  # keeps its own figures
        ws.row_dimensions[r].height = _LIST_ROW_PT if reference else _LIST_DEFAULTS_PT
    last = top + n
    return {key: f"${get_column_letter(c)}${top + 1}:${get_column_letter(c)}${last}"
            for key, c in col.items()}  # fmt: skip


def _headline(book, ws, span):
    """The box atop Summary: the planner's budget (its complete Approved and Proposed
    columns): total P50, P90, contingency, the months covered, and the defaults in use."""
    book.header(ws, 3, ["Budget of this planner (Approved and Proposed scenarios)", "", "", ""])
    p50, p90, first, last, used = (span[k] for k in ("p50", "p90", "first", "last", "defaults"))
    rows = (
        ("headline_budget_p50", "Total, P50", "US$", f"=SUM({p50})",
         f'=COUNT({p50})&" scenario(s) in the budget: the estimate"'),
        ("headline_budget_p90", "Total, P90", "US$", f"=SUM({p90})",
         '="One run in ten exceeds it; the runs\' P90s summed (all late together)"'),
        ("headline_budget_contingency", "Contingency (P90 - P50)", "US$",
         "=C5-C4", '="Held back above the estimate"'),
        ("headline_period", "Period covered (P50 schedule)", "months",
         f'=IF(COUNT({first})=0,"no run in the budget has a start date",'
         f'TEXT(MIN({first}),"mmm yyyy")&" - "&TEXT(MAX({last}),"mmm yyyy"))',
         f'=IF(COUNT({p50})>COUNT({first}),(COUNT({p50})-COUNT({first}))&'
         '" scenario(s) without a start date: in the totals, in no month","First and last '
         'month of the runs in the budget")'),
        ("headline_defaults", "Inputs left to a default", "scenarios",
         f'=COUNTIFS({used},"?*",{p50},">=0")',  # listed, and a P50: in the budget
         '="Scenario(s) in the budget with an input left blank: the list below"'),
    )  # fmt: skip
    for i, (name, label, unit, formula, note) in enumerate(rows):
        r = 4 + i
        book.label_cells(ws, r, label, unit if unit != "months" else "", "")
        cell = ws.cell(r, 3, formula)
        cell.style = "Calc"
        bold(cell)
        cell.number_format = number_format(unit) if unit not in ("months", "scenarios") else "0"
        if unit == "months":
            cell.alignment = Alignment(horizontal="right")
        book.place_cell(name, ws, cell.coordinate, named=True)
        ws.cell(r, 4, note).style = "Note"
        ws.cell(r, 4).alignment = Alignment(wrap_text=False)


def _grey_defaults(book, ws):
    """An "as used" cell of the selected scenario whose input is blank shows its default (a
    constant, the calibrated MFU, the catalogue's peak, the total parameters for a dense
    model) in grey italics, as on Calculations and the hand-off's Runs sheet."""
    from openpyxl.formatting.rule import FormulaRule
    from openpyxl.styles import Font

    from ..sheetkit import DEFAULT_GREY

    inputs = {q.name for q in PLAN_INPUTS}
    for used, _, _ in _RESOLVED:  # every input whose blank leaves a default (or catalogue) figure
        name = used.removesuffix("_used")
        key = f"sel.{used}"
        if name not in inputs or key not in book.cells:
            continue
        coord = book.cells[key][1]
        ws.conditional_formatting.add(coord, FormulaRule(
            formula=[f"LEN(INDEX({name},1,active_scenario))=0"],
            font=Font(color=DEFAULT_GREY, italic=True)))  # fmt: skip


def _mfu_row(book, ws, r, label, unit):
    """MFU, or with an override the MFU it implies (the override is used as is)."""
    implied = model.excel(
        "implied_mfu",
        {"implied_effective_tflops": "{sel.effective_tflops_input_used}",
         "peak_tflops": "{sel.peak_tflops_used}"},
    )  # fmt: skip
    single(book, ws, r, "sel.mfu_used", label, unit,
           f'=IF({_OVERRIDE},IF(N({{sel.peak_tflops_used}})>0,{implied},""),'
           "INDEX(mfu_used,1,{active_scenario}))")  # fmt: skip
    ws.cell(r, 1, book.formula(
        f'=IF({_OVERRIDE},"MFU implied by the override (override / peak)","MFU")',
        ws.title))  # fmt: skip
    ws.cell(r, 4, book.formula(
        f'=IF({_OVERRIDE},"Not typed here: the override is used as is",'
        '"Typed, or the calibrated default (see Throughput source)")', ws.title)
    ).style = "Note"  # fmt: skip


def _override_row(book, ws, r):
    """The effective TFLOP/s override under the peak, with notes on which one is used."""
    single(book, ws, r, "sel.effective_tflops_input_used",
           "Effective TFLOP/s (override)", "TFLOP/s",
           "=INDEX(effective_tflops_input_used,1,{active_scenario})")  # fmt: skip
    ws.cell(r - 1, 4, book.formula(
        f'=IF({_OVERRIDE},"For reference: the override below is used",'
        '"Typed, or the catalogue peak")', ws.title)).style = "Note"  # fmt: skip
    ws.cell(r, 4, book.formula(
        f'=IF({_OVERRIDE},"OVERRIDE IN USE: time and cost use this figure",'
        '"none: peak x MFU x goodput")', ws.title)).style = "Note"  # fmt: skip


def _inputs_as_used(book, ws, r):
    ws.cell(r, 1, "Inputs as used").style = "Section"
    for name, label, unit in _RESOLVED:
        r += 1
        if name == "mfu_used":
            _mfu_row(book, ws, r, label, unit)
        elif name == "goodput_used":
            single(book, ws, r, "sel.goodput_used", label, unit,
                   f'=IF({_OVERRIDE},"not used (override)",'
                   "INDEX(goodput_used,1,{active_scenario}))")  # fmt: skip
            ws.cell(r, 3).alignment = Alignment(horizontal="right")
        else:
            single(book, ws, r, f"sel.{name}", label, unit, f"=INDEX({name},1,{{active_scenario}})")
        if name == "peak_tflops_used":
            r += 1
            _override_row(book, ws, r)
    return r


def _ranges(book, ws, r):
    """P10 / P50 / P90 of each range quantity, and the spreads used."""
    ws.cell(r, 1, "Ranges: P10 / P50 / P90 (P50 = the figure above)").style = "Section"
    labels = {q.name: q for q in PLAN_OUTPUTS + RANGE_OUTPUTS}
    for name in ("throughput_range_pct_used", "price_range_pct_used"):
        r += 1
        label = {"throughput_range_pct_used": "Throughput uncertainty (P90 / P50 - 1)",
                 "price_range_pct_used": "Price uncertainty (P90 / P50 - 1)"}[name]  # fmt: skip
        single(book, ws, r, f"sel.{name}", label, "fraction",
               f"=INDEX({name},1,{{active_scenario}})")  # fmt: skip
    for q in RANGE_QUANTITIES:
        for key in ("p10", "p50", "p90"):
            r += 1
            name = q if key == "p50" else f"{q}_{key}"
            out = labels[q]
            single(book, ws, r, f"sel.{q}_{key}", f"{out.label}, {key.upper()}", out.unit,
                   f"=INDEX({name},1,{{active_scenario}})", "Link",
                   labels[name].note if key != "p50" else "The point estimate")  # fmt: skip
    r += 1
    single(book, ws, r, "sel.contingency_usd", "Contingency (total cost P90 - P50)", "US$",
           '=IF(AND(ISNUMBER({sel.total_cost_usd_p90}),ISNUMBER({sel.total_cost_usd_p50})),'
           '{sel.total_cost_usd_p90}-{sel.total_cost_usd_p50},"")', "Calc",
           "Held back above the estimate: covers nine runs in ten")  # fmt: skip
    return r


#: The Summary's headline figures: defined name -> the cell's quantity (each its own number
#: cell, read by name; the selected scenario's).
HEADLINES = {
    "headline_total_cost_p10": "sel.total_cost_usd_p10",
    "headline_total_cost_p50": "sel.total_cost_usd_p50",
    "headline_total_cost_p90": "sel.total_cost_usd_p90",
    "headline_contingency_usd": "sel.contingency_usd",
    "headline_compute_cost_usd": "sel.compute_cost_usd",
    "headline_accelerator_hours": "sel.accelerator_hours_p50",
    "headline_wall_clock_days": "sel.wall_clock_days_p50",
}


def summary_sheet(book, scen):
    """The Summary sheet: INDEX(row,1,active_scenario) of every input as used and output."""
    ws = book.sheet("Summary", {"A": 34, "B": 16, "C": 18, "D": _LIST_WIDTH})  # A:G: a page
    book.title(ws, "Summary: the budget, then the selected scenario",
               "Change the yellow switch to pick the scenario shown.")  # fmt: skip
    span = _scenario_list(book, ws, scen, LIST_ROW)
    _headline(book, ws, span)
    _switch(book, ws, len(scen), SWITCH_ROW)
    r = _inputs_as_used(book, ws, SWITCH_ROW + 6)
    r += 2
    ws.cell(r, 1, "Outputs").style = "Section"
    for q in PLAN_OUTPUTS:
        r += 1
        single(book, ws, r, f"sel.{q.name}", q.label, q.unit,
               f"=INDEX({q.name},1,{{active_scenario}})", "Link")  # fmt: skip
    r = _ranges(book, ws, r + 2)
    for name, key in HEADLINES.items():
        book.name(name, book.ref(key))
    r += 2
    for i, text in enumerate((  # two unwrapped lines, no merged cells (FAST)
        "Every figure is copied from the Calculations sheet, from the column of the scenario "
        "shown (C5).",
        "A blank figure means the scenario's required inputs are not typed yet.",
    )):  # fmt: skip
        put_text(ws.cell(r + i, 1), text).style = "Note"
        ws.cell(r + i, 1).alignment = Alignment(wrap_text=False)
    _grey_defaults(book, ws)
    for row in range(SWITCH_ROW, r):  # parameters and tokens as on Inputs: 405.0B, 15.6T
        if ws.cell(row, 2).value in ("parameters", "tokens"):
            ws.cell(row, 3).number_format = SIZE_FORMAT
    wrap_units(ws, SWITCH_ROW, r, 16)
    for row in ws.iter_rows(min_row=SWITCH_ROW, max_row=r, min_col=4, max_col=4):
        for cell in row:  # a note longer than column D wraps in it (E-G print beside it)
            if isinstance(cell.value, str) and cell.value.startswith("=") and cell.style == "Note":
                cell.alignment = Alignment(wrap_text=True, vertical="top")
                ws.row_dimensions[cell.row].height = max(
                    ws.row_dimensions[cell.row].height or 15, 30
                )
    Book.finish(ws, freeze="A3", paged=True)  # A:G at 70%, its pages broken at headings
    return ws
