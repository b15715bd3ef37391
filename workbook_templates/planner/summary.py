"""The Summary sheet: the selected scenario (the active-scenario switch)."""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from udfs import model
from udfs.quantities import PLAN_OUTPUTS, RANGE_OUTPUTS, RANGE_QUANTITIES

from ..sheetkit import Book, bold, put_text, state_colours
from .layout import FIRST_COL, LAST_COL, single

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


def _switch(book, ws, n):
    """The active-scenario switch (C4, blank = automatic), the scenario shown (C5,
    ``active_scenario``), its name and checks, and the scenario list."""
    book.label_cells(ws, 4, "Active scenario (switch)", f"1 to {n}", "")
    switch = book.input_cell(ws["C4"], None, "index")
    book.place_cell("active_scenario_switch", ws, "C4", named=True)
    prompt = (f"Scenario number, 1 to {n} (the list on the right). Blank: your first filled "
              f"custom column, else the example ({EXAMPLE_INDEX}).")  # fmt: skip
    error = f"Type a whole number from 1 to {n}, or leave it blank."
    book.validation(ws, "C4", "whole", "1", str(n), "between", prompt=prompt, error=error,
                    title="Active scenario")  # fmt: skip
    bold(switch)
    note = put_text(ws["D4"], "Blank: your first filled custom column, else the example "
                    f"({EXAMPLE_INDEX})")  # fmt: skip
    note.style = "Note"
    note.alignment = Alignment(vertical="center", wrap_text=True)
    title, row, _, _ = book.rows["scenario_ready"]
    custom = (f"'{title}'!${get_column_letter(FIRST_COL + EXAMPLE_INDEX)}${row}:"
              f"${get_column_letter(LAST_COL)}${row}")  # fmt: skip
    single(book, ws, 5, "active_scenario", "Scenario shown", "index",
           "=IF(ISNUMBER({active_scenario_switch}),{active_scenario_switch},"
           f"IFERROR(MATCH(TRUE,{custom},0)+{EXAMPLE_INDEX},{EXAMPLE_INDEX}))", "Calc")  # fmt: skip
    book.name("active_scenario", book.ref("active_scenario"))
    ws["C5"].alignment = Alignment(horizontal="left")
    single(book, ws, 6, "sel.scenario_name", "Selected scenario", "",
           "=INDEX(scenario_name,1,{active_scenario})")  # fmt: skip
    single(book, ws, 7, "sel.checks", "Checks", "",
           '=IF(master_status="OK","OK",IF(master_status="WARN","WARN: have a look at Checks",'
           '"ERROR: "&master_cause&" (Checks)"))', "Calc")  # fmt: skip
    state_colours(ws, "C7")
    book.header(ws, 3, ["", "", "", ""])
    put_text(ws["A3"], "Selected scenario").style = "Header"
    book.header(ws, 3, ["No.", "Scenario"], first_col=6)
    for i in range(n):
        ws.cell(4 + i, 6, i + 1)
        ws.cell(4 + i, 7, f"=INDEX(scenario_name,1,{i + 1})").style = "Link"


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
    ws = book.sheet("Summary", {"A": 38, "B": 20, "C": 22, "D": 50, "F": 6, "G": 36})
    book.title(ws, "Summary of the selected scenario", "Change the yellow switch to pick one.")
    _switch(book, ws, len(scen))
    r = _inputs_as_used(book, ws, 9)
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
    Book.finish(ws, freeze="A4", pages_tall=1)  # one page: the selected scenario at a glance
    return ws
