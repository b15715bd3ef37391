"""The training-run planner workbook (``training-run-planner.xlsx``), described as data.

Scenario columns D..K hold, in order, the dense reference (Llama 3.1 405B), the MoE
reference (DeepSeek-V3), the seed's DeepSeek-V3-like configuration and blank custom columns.
Every input row on ``Inputs`` and every output row on ``Calculations`` has a workbook-scoped
defined name spanning those columns, named as in :data:`udfs.quantities.PLAN_INPUTS` and
``PLAN_OUTPUTS``; the formulas resolve blank inputs the way :func:`udfs.plan.engine_arguments`
does.
"""

from __future__ import annotations

import datetime as _dt
import math

from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.formatting.rule import ColorScaleRule, FormulaRule
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs import calibration, catalogue
from udfs.plan import PASS_THROUGH
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, SEED_PLAN

from .sheetkit import (
    CHECK_BAD_FILL,
    CHECK_OK_FILL,
    Book,
    Row,
    add_change_log,
    add_cover,
    bold,
    number_format,
    order_sheets,
    paragraph,
    put_text,
    set_properties,
)

__all__ = ["FILENAME", "SCENARIO_COLUMNS", "N_CUSTOM", "scenarios", "build"]

FILENAME = "training-run-planner.xlsx"
N_CUSTOM = 5
FIRST_COL = 4  # column D
DEFAULT_COL = 3  # column C: the value a blank input takes
INPUT_HEADER_ROW = 4  # the scenario_name row
MONTHS = 60
#: Watts per accelerator when the input is blank and the catalogue has no TDP (udfs.plan).
WATTS_FALLBACK = float(next(q.default for q in PLAN_INPUTS if q.name == "watts_per_accelerator"))
SHEETS = (
    ("Cover", "Purpose, how to use, colour legend, version, sources"),
    ("Inputs", "Every input, one row each, one column per scenario: type in the yellow cells"),
    ("Calculations", "Inputs as used (blanks resolved) and every output, per scenario"),
    ("Summary", "The selected scenario (active-scenario switch)"),
    ("Sensitivity", "Two-way grids for the selected scenario, with heat maps"),
    ("Monthly spend", "Accelerator-hours and cost per calendar month from the start date"),
    ("Charts", "Scenario comparison; wall-clock days against accelerators"),
    ("Reference runs", "Disclosed training runs with sources, implied TFLOP/s and MFU"),
    ("Accelerators", "The accelerator catalogue (the dropdown's source)"),
    ("Checks", "Input and consistency checks, and the master check"),
    ("Change log", "Versions of this template"),
)


def _start_default(generated):
    """First day of the month after ``generated``: the default run start date."""
    year, month = generated.year + generated.month // 12, generated.month % 12 + 1
    return _dt.datetime(year, month, 1)


def _blank_if_nan(value):
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def scenarios(generated):
    """The planner's scenario columns: a list of dicts (kind, values, source note)."""
    ref = calibration.reference_table()
    defaults = {q.name: q.default for q in PLAN_INPUTS if q.default is not None}
    defaults["mfu"] = calibration.default_mfu()
    defaults["start_date"] = _start_default(generated)
    # Blank power: the accelerator's catalogue TDP (else 700 W), so that changing the
    # accelerator changes the power, as in udfs.plan.
    defaults.pop("watts_per_accelerator")
    out = []
    for run_name, kind, arch in (
        ("Llama 3.1 405B", "Dense reference", "dense"),
        ("DeepSeek-V3", "MoE reference", "MoE"),
    ):
        r = catalogue.run(run_name)
        values = dict(defaults)
        values.update(
            scenario_name=f"{r['name']} ({arch} reference)",
            total_params=float(r["total_params"]),
            active_params=float(r["active_params"]),
            training_tokens=float(r["training_tokens"]),
            accelerators=float(r["accelerators"]),
            accelerator_name=r["accelerator"],
            mfu=float(ref.loc[r["name"], "implied_mfu"]),
        )
        for field in ("usd_per_accelerator_hour", "watts_per_accelerator"):
            if _blank_if_nan(r[field]) is not None:
                values[field] = float(r[field])
        # The references keep a typed power figure (what the sources say, or the 700 W the
        # engine assumes when the accelerator's TDP is unpublished).
        accel = catalogue.accelerator(r["accelerator"])
        tdp = _blank_if_nan(accel["tdp_watts"])
        if "watts_per_accelerator" not in values:
            values["watts_per_accelerator"] = float(tdp) if tdp is not None else WATTS_FALLBACK
        if tdp is None:
            power = (
                f"{values['watts_per_accelerator']:,.0f} W assumed: the "
                f"{r['accelerator'].split()[0]}'s TDP is not published."
            )
        else:
            watts = values["watts_per_accelerator"]
            power = f"Power {watts:,.0f} W, the {r['accelerator']}'s TDP."
        sources = dict.fromkeys(
            catalogue.source("run", r["name"], f)
            for f in ("total_params", "training_tokens", "accelerator", "accelerators")
        )
        note = (
            f"{r['name']}: parameters, tokens, accelerator and count from "
            f"{'; '.join(sources)}; MFU is the implied MFU "
            f"({values['mfu']:.4f}) that reproduces the disclosed "
            f"{r['accelerator_hours']:,.0f} accelerator-hours "
            f"({catalogue.source('run', r['name'], 'accelerator_hours')}). {power} Price, "
            "overhead, PUE, electricity price, grid intensity and start date are the planner's "
            "defaults unless the run disclosed them."
        )
        out.append({"kind": kind, "values": values, "note": note})
    seed = dict(defaults)
    for name in ("mfu", "goodput"):
        seed.pop(name)
    seed.update(
        scenario_name=SEED_PLAN["scenario_name"],
        total_params=SEED_PLAN["total_params"],
        active_params=SEED_PLAN["active_params"],
        training_tokens=SEED_PLAN["training_tokens"],
        accelerators=float(SEED_PLAN["accelerators"]),
        accelerator_name="H800 SXM",
        effective_tflops_input=SEED_PLAN["effective_tflops"],
        usd_per_accelerator_hour=SEED_PLAN["usd_per_accelerator_hour"],
        watts_per_accelerator=SEED_PLAN["watts_per_accelerator"],
        server_overhead=1.0,
        pue=1.0,
    )
    out.append(
        {
            "kind": "Seed",
            "values": seed,
            "note": "Seed: the DeepSeek-V3-like configuration of the source project's Compute "
            "Lab (400 sustained TFLOP/s typed as an override, $2.0/hour, 700 W, no server "
            "overhead, PUE 1): its outputs print 3.286e+24 FLOPs, 2,281,667 accelerator-hours, "
            "46.4 days, 1342.0 GB, $4,563,333 and 1,597,167 kWh. The accelerator only sets "
            "the HBM for the memory check.",
        }
    )
    for i in range(1, N_CUSTOM + 1):
        values = dict(defaults)
        values["scenario_name"] = f"Custom {i}"
        out.append(
            {
                "kind": "Custom",
                "values": values,
                "note": None,
            }
        )
    return out


#: Scenario columns (column numbers), in order.
SCENARIO_COLUMNS = tuple(range(FIRST_COL, FIRST_COL + 3 + N_CUSTOM))
LAST_COL = SCENARIO_COLUMNS[-1]
NOTE_COL = LAST_COL + 1
#: Last column of the first printed page of Inputs (notes merged up to it print whole).
PAGE1_LAST = FIRST_COL + 3
RULE_COL = LAST_COL + 2


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

#: Model constants (fixed, the engine's values), each a single named cell.
CONSTANTS = (
    ("flops_per_param_token", "FLOPs per active parameter per token", "", 6.0,
     "Forward + backward pass, the 6N heuristic (Kaplan et al. 2020; the seed)"),
    ("training_state_bytes_per_param", "Training state bytes per parameter", "bytes", 16.0,
     "Mixed-precision Adam, fully sharded (EleutherAI Transformer Math 101)"),
    ("days_per_year", "Days per year", "days", 365.0, "For research iterations per year"),
)  # fmt: skip


def _validation_for(book, ws, q, rng, first):
    """Data validation for one input row from its PLAN_INPUTS rule."""
    prompt = f"{q.label}" + (f" ({q.unit})" if q.unit else "") + f": {q.rule}."
    if q.note:
        prompt += " " + q.note
    cell = f"{get_column_letter(FIRST_COL)}{first}"
    total = (
        book.ref("total_params", ws.title, get_column_letter(FIRST_COL))
        if "total_params" in book.rows
        else None
    )
    rules = {
        "> 0": ("decimal", "0", None, "greaterThan"),
        ">= 0": ("decimal", "0", None, "greaterThanOrEqual"),
        ">= 1": ("decimal", "1", None, "greaterThanOrEqual"),
        "> 0 and <= 1": ("custom", f"AND(ISNUMBER({cell}),{cell}>0,{cell}<=1)", None, None),
        "> 0 and <= total parameters": (
            "custom",
            f"AND(ISNUMBER({cell}),{cell}>0,OR(ISBLANK({total}),{cell}<={total}))",
            None,
            None,
        ),
        "a catalogue name": ("list", "accel_names", None, None),
        "a date": ("date", "36526", None, "greaterThanOrEqual"),
        "text": ("textLength", "1", "60", "between"),
    }
    kind, f1, f2, op = rules[q.rule]
    error = f"{q.label} must be {q.rule}."
    if q.name == "accelerators":  # a count: whole accelerators only
        kind, f1, f2, op = "whole", "0", None, "greaterThan"
        prompt = prompt.replace(": > 0.", ": a whole number > 0.")
        error = f"{q.label} must be a whole number > 0."
    if q.rule == "a catalogue name":
        error = "Pick an accelerator from the list (the Accelerators sheet)."
    elif q.rule == "a date":
        error = "Type a date (for example 2026-01-15)."
    elif q.rule == "text":
        error = "Type a short name (1 to 60 characters)."
    book.validation(ws, rng, kind, f1, f2, op, prompt=prompt, error=error, title=q.label)


def _inputs_sheet(book, scen):
    widths = {"A": 34, "B": 20, "C": 13}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = 17
    widths[get_column_letter(NOTE_COL)] = 60
    widths[get_column_letter(RULE_COL)] = 22
    ws = book.sheet("Inputs", widths)
    book.title(
        ws,
        "Inputs",
        "One row per input, one column per scenario. Type in the yellow cells; a blank cell "
        "takes the value in column C.",
    )
    put_text(ws.cell(3, 1), "Column type").style = "Note"
    for c, s in zip(SCENARIO_COLUMNS, scen, strict=True):
        put_text(ws.cell(3, c), s["kind"]).style = "Note"
    book.header(
        ws,
        INPUT_HEADER_ROW,
        ["Scenario", "Unit", "Used when blank"],
    )
    note_letter = get_column_letter(NOTE_COL)
    put_text(ws[f"{note_letter}{INPUT_HEADER_ROW}"], "Notes and sources").style = "Header"
    put_text(ws.cell(INPUT_HEADER_ROW, RULE_COL), "Allowed values").style = "Header"
    ws.row_dimensions[INPUT_HEADER_ROW].height = 30

    r = INPUT_HEADER_ROW
    for q in PLAN_INPUTS:
        if q.name != "scenario_name":
            r += 1
            book.label_cells(ws, r, q.label, q.unit, q.note, note_col=NOTE_COL)
        book.place_row(q.name, ws, r, FIRST_COL, LAST_COL, named=True)
        for c, s in zip(SCENARIO_COLUMNS, scen, strict=True):
            value = s["values"].get(q.name)
            cell = book.input_cell(ws.cell(r, c), value, q.unit)
            if q.name == "scenario_name":
                bold(cell)
                cell.alignment = Alignment(wrap_text=True, vertical="center")
        if q.name != "scenario_name":
            put_text(ws.cell(r, RULE_COL), q.rule).style = "Note"
        default = _resolved_default(q)
        if default is not None:
            dc = ws.cell(r, DEFAULT_COL, default)
            dc.style = "Constant"
            dc.number_format = number_format(q.unit)
            if q.name == "watts_per_accelerator":  # the TDP first, then this figure
                dc.number_format = '"TDP, else "#,##0'
            book.place_cell(f"default.{q.name}", ws, dc.coordinate)
        elif q.name != "scenario_name":
            put_text(ws.cell(r, DEFAULT_COL), _blank_meaning(q.name)).style = "Note"
        rng = f"{get_column_letter(FIRST_COL)}{r}:{get_column_letter(LAST_COL)}{r}"
        _validation_for(book, ws, q, rng, r)

    r += 2
    ws.cell(r, 1, "Model constants (the engine's; fixed)").style = "Section"
    for name, label, unit, value, note in CONSTANTS:
        r += 1
        book.label_cells(ws, r, label, unit, note, note_col=NOTE_COL)
        cell = ws.cell(r, DEFAULT_COL, value)
        cell.style = "Constant"
        book.place_cell(name, ws, cell.coordinate, named=True)

    r += 2
    ws.cell(r, 1, "Where the preloaded columns come from").style = "Section"
    for s in scen:
        if s["note"]:
            r += 1
            put_text(ws.cell(r, 1), s["values"]["scenario_name"]).alignment = Alignment(
                vertical="top", wrap_text=True
            )
            put_text(ws.cell(r, 2), s["note"]).style = "Note"
            ws.merge_cells(start_row=r, start_column=2, end_row=r, end_column=PAGE1_LAST)
    r += 2
    put_text(
        ws.cell(r, 1),
        "Custom columns: type the total parameters, tokens and accelerator count (and the active "
        "parameters for an MoE model); every other input already holds a default you can change. "
        "The power is left blank so that it follows the accelerator (its catalogue TDP, else "
        "700 W); the figure used is on Calculations.",
    ).style = "Note"
    ws.merge_cells(start_row=r, start_column=1, end_row=r, end_column=PAGE1_LAST)
    Book.finish(ws, freeze=f"{get_column_letter(FIRST_COL)}{INPUT_HEADER_ROW + 1}",
                print_titles=f"{INPUT_HEADER_ROW}:{INPUT_HEADER_ROW}", pages_wide=2,
                title_cols="A:A")  # fmt: skip
    return ws


def _resolved_default(q):
    if q.name == "mfu":
        return calibration.default_mfu()
    if q.name == "goodput" or q.name in PASS_THROUGH:
        return float(q.default)
    return None


def _blank_meaning(name):
    return {
        "active_params": "= total (dense)",
        "accelerator_name": "none",
        "peak_tflops": "catalogue",
        "effective_tflops_input": "peak x MFU x goodput",
        "start_date": "no schedule",
    }.get(name, "required")


# ---------------------------------------------------------------------------------------------
# Calculations
# ---------------------------------------------------------------------------------------------


def _used(name, label, unit, note=""):
    return Row(
        f"{name}_used",
        label,
        unit,
        f"=IF(ISNUMBER({{{name}}}),{{{name}}},{{default.{name}}})",
        note or "Input, or column C of Inputs when blank",
        "Link",
        True,
    )


def _calc_rows():
    labels = {q.name: (q.label, q.unit) for q in PLAN_INPUTS + PLAN_OUTPUTS}
    ready = "=IF({scenario_ready},"
    rows = [
        "Inputs as used (blanks resolved as in udfs.plan)",
        Row("total_params_used", "Total parameters", "parameters",
            '=IF(ISNUMBER({total_params}),{total_params},"")', "Required", "Link", True),
        Row("active_params_used", "Active parameters per token", "parameters",
            "=IF(ISNUMBER({active_params}),{active_params},{total_params_used})",
            "Blank: dense, = total parameters", "Link", True),
        Row("training_tokens_used", "Training tokens", "tokens",
            '=IF(ISNUMBER({training_tokens}),{training_tokens},"")', "Required", "Link", True),
        Row("accelerators_used", "Accelerators", "accelerators",
            '=IF(ISNUMBER({accelerators}),{accelerators},"")', "Required", "Link", True),
        Row("catalogue_row", "Accelerator's row in the catalogue", "index",
            "=IF(ISBLANK({accelerator_name}),0,"
            "IFERROR(MATCH({accelerator_name},accel_names,0),0))",
            "0: no accelerator, or not in the catalogue", "Link", True),
        Row("peak_tflops_used", "Peak TFLOP/s per accelerator", "TFLOP/s",
            "=IF(ISNUMBER({peak_tflops}),{peak_tflops},"
            'IF({catalogue_row}>0,INDEX(accel_bf16_tflops,{catalogue_row}),""))',
            "Typed, or the catalogue's dense BF16 peak", "Link", True),
        Row("hbm_gb_used", "HBM per accelerator", "GB",
            '=IF({catalogue_row}>0,INDEX(accel_hbm_gb,{catalogue_row}),"")',
            "From the catalogue (memory check)", "Link", True),
        _used("mfu", "Model FLOPs utilisation (MFU)", "fraction",
              "Typed, or the default MFU (median implied MFU of the reference runs)"),
        _used("goodput", "Goodput", "fraction"),
        Row("effective_tflops_input_used", "Effective TFLOP/s (override)", "TFLOP/s",
            '=IF(ISNUMBER({effective_tflops_input}),{effective_tflops_input},"")',
            "When typed, used as is", "Link", True),
    ]  # fmt: skip
    for name in PASS_THROUGH:
        label, unit = labels[name]
        if name == "watts_per_accelerator":
            # Blank: the accelerator's catalogue TDP where published, else column C (700 W).
            tdp = "INDEX(accel_tdp_watts,{catalogue_row})"
            rows.append(
                Row(
                    "watts_per_accelerator_used",
                    label,
                    unit,
                    "=IF(ISNUMBER({watts_per_accelerator}),{watts_per_accelerator},"
                    f"IF({{catalogue_row}}>0,IF(ISNUMBER({tdp}),{tdp},"
                    "{default.watts_per_accelerator}),{default.watts_per_accelerator}))",
                    "Typed, or the accelerator's TDP (Accelerators sheet), else 700 W",
                    "Link",
                    True,
                )
            )
            continue
        rows.append(_used(name, label, unit))
    rows.append(
        Row(
            "scenario_ready",
            "Scenario complete",
            "TRUE/FALSE",
            "=AND(ISNUMBER({total_params_used}),ISNUMBER({training_tokens_used}),"
            "ISNUMBER({accelerators_used}),"
            "OR(N({effective_tflops_input_used})>0,N({peak_tflops_used})>0))",
            "Outputs show only for complete columns",
            "Calc",
            True,
        )
    )
    formulas = {
        "effective_tflops": ready + "IF(ISNUMBER({effective_tflops_input_used}),"
        '{effective_tflops_input_used},{peak_tflops_used}*{mfu_used}*{goodput_used}),"")',
        "training_flops": ready
        + '{flops_per_param_token}*{active_params_used}*{training_tokens_used},"")',
        "accelerator_hours": ready + '{training_flops}/({effective_tflops}*1E+12)/3600,"")',
        "wall_clock_days": ready + '{accelerator_hours}/{accelerators_used}/24,"")',
        "checkpoint_gb": ready + '{total_params_used}*{checkpoint_bytes_per_param_used}/1E+9,"")',
        "rental_cost_usd": ready + '{accelerator_hours}*{usd_per_accelerator_hour_used},"")',
        "electricity_kwh": ready + "{accelerator_hours}*{watts_per_accelerator_used}"
        '*{server_overhead_used}*{pue_used}/1000,"")',
        "electricity_cost_usd": ready + '{electricity_kwh}*{usd_per_kwh_used},"")',
        "co2_tonnes": ready + '{electricity_kwh}*{grams_co2_per_kwh_used}/1E+6,"")',
        "total_cost_usd": ready + '{rental_cost_usd}+{electricity_cost_usd},"")',
        "min_accelerators_for_memory": "=IF(AND({scenario_ready},N({hbm_gb_used})>0),"
        "ROUNDUP(ROUND({total_params_used}*{training_state_bytes_per_param}"
        '/({hbm_gb_used}*1E+9),9),0),"")',
        "iterations_per_year": ready + '{days_per_year}/{wall_clock_days},"")',
    }
    notes = {
        "effective_tflops": "Override if typed, else peak x MFU x goodput",
        "training_flops": "6 x active parameters x tokens",
        "accelerator_hours": "FLOPs / (effective TFLOP/s x 1e12) / 3600",
        "wall_clock_days": "Accelerator-hours / accelerators / 24 (linear scaling)",
        "checkpoint_gb": "Total parameters x checkpoint bytes per parameter / 1e9",
        "rental_cost_usd": "Accelerator-hours x price per accelerator-hour",
        "electricity_kwh": "Accelerator-hours x W x server overhead x PUE / 1000",
        "electricity_cost_usd": "kWh x price per kWh",
        "co2_tonnes": "kWh x gCO2/kWh / 1e6",
        "total_cost_usd": "Compute cost + electricity cost",
        "min_accelerators_for_memory": "Total parameters x 16 bytes / HBM, rounded up (ZeRO-3)",
        "iterations_per_year": "365 / wall-clock days",
    }
    rows.append("Outputs")
    for q in PLAN_OUTPUTS:
        rows.append(Row(q.name, q.label, q.unit, formulas[q.name], notes[q.name], "Calc", True))
    return rows


def _calculations_sheet(book, scen):
    widths = {"A": 38, "B": 20, "C": 4}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = 17
    widths[get_column_letter(NOTE_COL)] = 60
    ws = book.sheet("Calculations", widths)
    book.title(ws, "Calculations", "Same formula across each row; nothing to type here.")
    _checks_flag(ws, "A3")
    book.header(ws, 4, ["Quantity", "Unit", ""])
    for c in SCENARIO_COLUMNS:
        cell = ws.cell(4, c, book.formula("={scenario_name}", ws.title, get_column_letter(c)))
        cell.style = "Header"
    put_text(ws.cell(4, NOTE_COL), "Formula").style = "Header"
    ws.row_dimensions[4].height = 30
    book.write_rows(ws, 5, _calc_rows(), SCENARIO_COLUMNS, note_col=NOTE_COL)
    Book.finish(ws, freeze=f"{get_column_letter(FIRST_COL)}5", print_titles="4:4",
                pages_wide=2, title_cols="A:A")  # fmt: skip
    return ws


# ---------------------------------------------------------------------------------------------
# Summary (switch), sensitivity, monthly schedule, charts
# ---------------------------------------------------------------------------------------------


def _checks_flag(ws, coordinate):
    """The master check's verdict in one cell, so every output sheet shows it."""
    cell = ws[coordinate]
    cell.value = '=IF(master_check,"Checks: OK","Checks: ERROR, see the Checks sheet")'
    cell.style = "Link"
    return cell


def _single(book, ws, r, name, label, unit, formula, style="Link", note=""):
    """One labelled single-cell quantity in column C of ``ws``."""
    book.label_cells(ws, r, label, unit, note, note_col=4)
    cell = ws.cell(r, 3, book.formula(formula, ws.title))
    cell.style = style
    cell.number_format = number_format(unit)
    book.place_cell(name, ws, cell.coordinate)
    return cell


def _summary_sheet(book, scen):
    n = len(scen)
    ws = book.sheet("Summary", {"A": 38, "B": 20, "C": 22, "D": 50, "F": 6, "G": 36})
    book.title(ws, "Summary of the selected scenario", "Change the yellow switch to pick one.")
    book.label_cells(ws, 4, "Active scenario (switch)", f"1 to {n}", "")
    switch = book.input_cell(ws["C4"], 1, "index")
    book.place_cell("active_scenario", ws, "C4", named=True)
    book.validation(
        ws,
        "C4",
        "whole",
        "1",
        str(n),
        "between",
        prompt=f"Scenario number, 1 to {n} (the list on the right).",
        error=f"Type a whole number from 1 to {n}.",
        title="Active scenario",
    )
    bold(switch)
    _single(book, ws, 5, "sel.scenario_name", "Selected scenario", "",
            "=INDEX(scenario_name,{active_scenario})")  # fmt: skip
    _single(book, ws, 6, "sel.checks", "Checks", "",
            '=IF(master_check,"OK","ERROR: see Checks")', "Calc")  # fmt: skip
    book.header(ws, 3, ["", "", "", ""])
    put_text(ws["A3"], "Selected scenario").style = "Header"
    book.header(ws, 3, ["No.", "Scenario"], first_col=6)
    for i in range(n):
        ws.cell(4 + i, 6, i + 1)
        ws.cell(4 + i, 7, f"=INDEX(scenario_name,{i + 1})").style = "Link"

    r = 8
    ws.cell(r, 1, "Inputs as used").style = "Section"
    resolved = (
        ("total_params_used", "Total parameters", "parameters"),
        ("active_params_used", "Active parameters per token", "parameters"),
        ("training_tokens_used", "Training tokens", "tokens"),
        ("accelerators_used", "Accelerators", "accelerators"),
        ("accelerator_name", "Accelerator", ""),
        ("peak_tflops_used", "Peak TFLOP/s per accelerator", "TFLOP/s"),
        ("mfu_used", "MFU", "fraction"),
        ("goodput_used", "Goodput", "fraction"),
        ("usd_per_accelerator_hour_used", "Price per accelerator-hour", "US$/accelerator-hour"),
        ("start_date", "Run start date", "date"),
        ("scenario_ready", "Scenario complete", "TRUE/FALSE"),
    )
    override = "ISNUMBER({sel.effective_tflops_input_used})"
    for name, label, unit in resolved:
        r += 1
        if name == "mfu_used":  # with an override, the MFU it implies (it is used as is)
            _single(book, ws, r, "sel.mfu_used", label, unit,
                    f"=IF({override},IF(N({{sel.peak_tflops_used}})>0,"
                    '{sel.effective_tflops_input_used}/{sel.peak_tflops_used},""),'
                    "INDEX(mfu_used,{active_scenario}))")  # fmt: skip
            ws.cell(r, 1, book.formula(
                f'=IF({override},"MFU implied by the override (override / peak)","MFU")',
                ws.title))  # fmt: skip
            ws.cell(r, 4, book.formula(
                f'=IF({override},"Not typed here: the override is used as is",'
                '"Typed, or the default MFU")', ws.title)).style = "Note"  # fmt: skip
            continue
        if name == "goodput_used":
            _single(book, ws, r, "sel.goodput_used", label, unit,
                    f'=IF({override},"not used (override)",'
                    "INDEX(goodput_used,{active_scenario}))")  # fmt: skip
            ws.cell(r, 3).alignment = Alignment(horizontal="right")
            continue
        _single(book, ws, r, f"sel.{name}", label, unit, f"=INDEX({name},{{active_scenario}})")
        if name == "peak_tflops_used":
            r += 1
            _single(book, ws, r, "sel.effective_tflops_input_used",
                    "Effective TFLOP/s (override)", "TFLOP/s",
                    "=INDEX(effective_tflops_input_used,{active_scenario})")  # fmt: skip
            ws.cell(r - 1, 4, book.formula(
                f'=IF({override},"For reference: the override below is used",'
                '"Typed, or the catalogue peak")', ws.title)).style = "Note"  # fmt: skip
            ws.cell(r, 4, book.formula(
                f'=IF({override},"OVERRIDE IN USE: time and cost use this figure",'
                '"none: peak x MFU x goodput")', ws.title)).style = "Note"  # fmt: skip
    r += 2
    ws.cell(r, 1, "Outputs").style = "Section"
    for q in PLAN_OUTPUTS:
        r += 1
        _single(book, ws, r, f"sel.{q.name}", q.label, q.unit,
                f"=INDEX({q.name},{{active_scenario}})", "Link")  # fmt: skip
    r += 2
    paragraph(
        ws,
        r,
        1,
        "Every figure is INDEX(row, active_scenario) into the Calculations sheet. A blank "
        "figure means the scenario's required inputs are not typed yet.",
        4,
    )
    Book.finish(ws, freeze="A4")
    return ws


def _grid(book, ws, top, title, row_axis, col_axis, cell_formula, unit, row_unit, col_unit,
          corner_text, high_is_good=False):  # fmt: skip
    """A two-way grid: typed axes (inputs) and one formula template for every cell.

    ``<row>`` and ``<col>`` in ``cell_formula`` are the cell's row and column axis values.
    The heat map runs green (good) to red (bad); ``high_is_good`` flips it.
    """
    low, high = ("red", "green") if high_is_good else ("green", "red")
    ws.cell(top, 1, f"{title} ({low} = lowest, {high} = highest)").style = "Section"
    corner = ws.cell(top + 1, 2, corner_text)
    corner.style = "Header"
    for j, v in enumerate(col_axis):
        book.input_cell(ws.cell(top + 1, 3 + j), v, col_unit)
    for i, v in enumerate(row_axis):
        book.input_cell(ws.cell(top + 2 + i, 2), v, row_unit)
        for j in range(len(col_axis)):
            row_ref = f"$B{top + 2 + i}"
            col_ref = f"{get_column_letter(3 + j)}${top + 1}"
            text = cell_formula.replace("<row>", row_ref).replace("<col>", col_ref)
            cell = ws.cell(top + 2 + i, 3 + j, book.formula(text, ws.title))
            cell.number_format = number_format(unit)
    first = f"C{top + 2}"
    last = f"{get_column_letter(2 + len(col_axis))}{top + 1 + len(row_axis)}"
    ws.conditional_formatting.add(
        f"{first}:{last}",
        ColorScaleRule(
            start_type="min",
            start_color="F8696B" if high_is_good else "63BE7B",
            mid_type="percentile",
            mid_value=50,
            mid_color="FFEB84",
            end_type="max",
            end_color="63BE7B" if high_is_good else "F8696B",
        ),
    )
    return top + 3 + len(row_axis), f"{first}:{last}"


SENS_ACCELERATORS = (1024, 2048, 4096, 8192, 16384, 32768, 65536)
SENS_MFU = (0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50)
SENS_PRICE = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)


def _sensitivity_sheet(book):
    ws = book.sheet("Sensitivity", {"A": 4, "B": 22, **{get_column_letter(c): 14 for c in
                                                           range(3, 10)}})  # fmt: skip
    book.title(
        ws,
        "Sensitivity of the selected scenario",
        "Axes are inputs (yellow); each cell is a plain formula on the selected scenario's "
        "training FLOPs, peak TFLOP/s and goodput (Summary). Each grid's colours are in its title.",
    )
    ws["B3"] = "Scenario"
    ws["C3"] = book.formula("={sel.scenario_name}", ws.title)
    ws["C3"].style = "Link"
    ws["F3"] = "Checks"
    ws["G3"] = book.formula("={sel.checks}", ws.title)
    ws["G3"].style = "Link"
    ws["H3"] = "Goodput"
    ws["I3"] = book.formula("=INDEX(goodput_used,{active_scenario})", ws.title)
    ws["I3"].style = "Link"
    ws["I3"].number_format = number_format("fraction")
    book.place_cell("sens.goodput", ws, "I3")
    warn = ws.cell(4, 2, book.formula(
        '=IF(ISNUMBER({sel.effective_tflops_input_used}),"This scenario uses a typed effective '
        'TFLOP/s override ("&TEXT({sel.effective_tflops_input_used},"#,##0.0")&"). The days, '
        "cost and iterations grids vary peak x MFU x goodput, so they do NOT apply to it: "
        'its own figures are on Summary.","")', ws.title))  # fmt: skip
    warn.font = Font(bold=True, color="C00000")
    warn.alignment = Alignment(wrap_text=True, vertical="top")
    ws.merge_cells("B4:I4")
    ws.row_dimensions[4].height = 30
    ok = "IF(AND({sel.scenario_ready},N({sel.peak_tflops_used})>0),"
    days = "{sel.training_flops}/({sel.peak_tflops_used}*<col>*{sens.goodput}*1E+12)/3600/<row>/24"
    nxt, grid1 = _grid(
        book, ws, 5, "Wall-clock days: accelerators (rows) x MFU (columns)",
        SENS_ACCELERATORS, SENS_MFU, "=" + ok + days + ',"")', "days", "accelerators", "fraction",
        "Accelerators \\ MFU",
    )  # fmt: skip
    book.place_cell("sens.days_first", ws, grid1.split(":")[0])
    cost = "{sel.training_flops}/({sel.peak_tflops_used}*<row>*{sens.goodput}*1E+12)/3600*<col>"
    nxt, _ = _grid(
        book, ws, nxt + 1, "Compute cost (US$): MFU (rows) x price per accelerator-hour (columns)",
        SENS_MFU, SENS_PRICE, "=" + ok + cost + ',"")', "US$", "fraction", "US$/accelerator-hour",
        "MFU \\ US$ per hour",
    )  # fmt: skip
    iters = "{days_per_year}/(" + days + ")"
    ws.row_breaks.append(Break(id=nxt))  # two grids per printed page, never one split
    nxt, _ = _grid(
        book, ws, nxt + 1, "Research iterations per year: accelerators (rows) x MFU (columns)",
        SENS_ACCELERATORS, SENS_MFU, "=" + ok + iters + ',"")', "runs/year", "accelerators",
        "fraction", "Accelerators \\ MFU", high_is_good=True,
    )  # fmt: skip
    burn = "<row>*<col>*24*{days_per_year}/12"
    nxt, _ = _grid(
        book, ws, nxt + 1,
        "Spend per month while the run lasts (US$): accelerators (rows) x price (columns)",
        SENS_ACCELERATORS, SENS_PRICE, "=" + burn, "US$", "accelerators",
        "US$/accelerator-hour", "Accelerators \\ US$ per hour",
    )  # fmt: skip
    paragraph(
        ws,
        nxt + 1,
        2,
        "Under the linear model the compute cost of a run does not depend on the number of "
        "accelerators (more accelerators finish sooner; the accelerator-hours stay the same), "
        "so total cost varies with MFU and price, while the cluster size sets the time and the "
        "monthly spend (accelerators x price x 24 x 365 / 12) for as long as the run lasts. "
        "Real scaling is sub-linear at large counts.",
        9,
    )
    Book.finish(ws, freeze="A5")
    return ws


def _monthly_sheet(book):
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

    head = r + 5
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
            (g + f'MAX(0,MIN({{mon.t1}},B{row})-MAX({{mon.t0}},A{row})),"")', "#,##0.00"),
            (g + f'C{row}/{{mon.days}},"")', "0.00%"),
            (g + f'D{row}*{{mon.hours}},"")', number_format("accelerator-hours")),
            (g + f'D{row}*{{mon.compute}},"")', number_format("US$")),
            (g + f'D{row}*{{mon.electricity}},"")', number_format("US$")),
            (g + f'F{row}+G{row},"")', number_format("US$")),
            (g + f'SUM(H${first}:H{row}),"")', number_format("US$")),
        ]
        for j, (formula, fmt) in enumerate(cells):
            cell = ws.cell(row, 1 + j, book.formula(formula, ws.title))
            cell.number_format = fmt
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
    Book.finish(ws, freeze=f"A{first}", print_titles=f"{head}:{head}")
    return ws


def _show_axes(chart):
    """openpyxl 3.1 marks axes deleted unless told: show both."""
    chart.x_axis.delete = False
    chart.y_axis.delete = False


def _charts_sheet(book):
    ws = book.sheet("Charts", {"A": 16, "B": 16})
    book.title(ws, "Charts", "Scenario comparison, and wall-clock days against accelerators.")
    _checks_flag(ws, "A3")
    put_text(ws["A4"], "Accelerators").style = "Header"
    put_text(ws["B4"], "Wall-clock days").style = "Header"
    days_first = book.cells["sens.days_first"][1]  # C7: first MFU column, first row
    first_row = int("".join(ch for ch in days_first if ch.isdigit()))
    for i in range(len(SENS_ACCELERATORS)):
        r = 5 + i
        ws.cell(r, 1, f"=Sensitivity!$B${first_row + i}").style = "Link"
        ws.cell(r, 1).number_format = number_format("accelerators")
        ws.cell(r, 2, book.formula(
            '=IF(AND({sel.scenario_ready},N(A' + str(r) + ')>0),'
            "{sel.accelerator_hours}/A" + str(r) + '/24,"")', ws.title))  # fmt: skip
        ws.cell(r, 2).number_format = number_format("days")
    last = 4 + len(SENS_ACCELERATORS)
    paragraph(ws, last + 1, 1, "Selected scenario at its own TFLOP/s (Summary).", 6)

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
    _show_axes(sc)
    sc.width, sc.height = 17, 9
    ws.add_chart(sc, "D4")

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
        _show_axes(chart)
        chart.width, chart.height = 24, 9.5
        ws.add_chart(chart, anchor)
        ws.row_breaks.append(Break(id=int(anchor[1:]) - 1))  # one chart per printed page
    Book.finish(ws)
    return ws


# ---------------------------------------------------------------------------------------------
# Catalogue sheets and checks
# ---------------------------------------------------------------------------------------------


def _constant(ws, r, c, value, unit=""):
    value = _blank_if_nan(value)
    cell = ws.cell(r, c)
    if isinstance(value, str):
        put_text(cell, value)
    else:
        cell.value = value
    cell.style = "Constant"
    cell.number_format = number_format(unit)
    return cell


def _accelerators_sheet(book):
    df = catalogue.accelerators()
    ws = book.sheet("Accelerators", {"A": 20, "B": 12, "C": 12, "D": 10, "E": 10, "F": 12,
                                     "G": 10, "H": 80})  # fmt: skip
    book.title(ws, "Accelerator catalogue", "Dense peak figures (vendor 'with sparsity' = 2x).")
    cols = (
        ("name", "Accelerator", ""),
        ("bf16_tflops", "BF16 TFLOP/s", "TFLOP/s"),
        ("fp8_tflops", "FP8 TFLOP/s", "TFLOP/s"),
        ("hbm_gb", "HBM GB", "GB"),
        ("hbm_tb_per_s", "HBM TB/s", "ratio"),
        ("scale_up_gb_per_s", "Scale-up GB/s", "W"),
        ("tdp_watts", "TDP W", "W"),
    )
    book.header(ws, 4, [c[1] for c in cols] + ["Source"])
    for i, (_, row) in enumerate(df.iterrows()):
        r = 5 + i
        for j, (field, _, unit) in enumerate(cols):
            _constant(ws, r, 1 + j, row[field], unit)
        put_text(ws.cell(r, len(cols) + 1), row["source"]).style = "Note"
    last = 4 + len(df)
    for field, letter in (("names", "A"), ("bf16_tflops", "B"), ("hbm_gb", "D"),
                          ("tdp_watts", "G")):  # fmt: skip
        book.name(f"accel_{field}", f"Accelerators!${letter}$5:${letter}${last}")
    Book.finish(ws, freeze="B5")
    return ws


def _reference_sheet(book):
    df = catalogue.runs()
    ws = book.sheet("Reference runs", {"A": 18, "B": 14, "C": 17, "D": 17, "E": 21, "F": 16,
                                       "G": 12, "H": 15, "I": 12, "J": 10, "K": 12, "L": 10,
                                       "M": 10, "N": 10, "O": 45, "P": 45})  # fmt: skip
    book.title(
        ws,
        "Reference training runs (public disclosures)",
        "Implied TFLOP/s = 6 x active x tokens / disclosed accelerator-hours; implied MFU = "
        "that / the accelerator's dense peak.",
    )
    cols = (
        ("name", "Run", ""),
        ("architecture", "Architecture", ""),
        ("total_params", "Total parameters", "parameters"),
        ("active_params", "Active parameters", "parameters"),
        ("training_tokens", "Training tokens", "tokens"),
        ("accelerator", "Accelerator", ""),
        ("accelerators", "Accelerators", "accelerators"),
        ("accelerator_hours", "Disclosed accelerator-hours", "accelerator-hours"),
    )
    heads = [c[1] for c in cols] + [
        "Model FLOPs (6ND)",
        "Peak TFLOP/s",
        "Implied TFLOP/s",
        "Implied MFU",
        "Disclosed MFU",
        "Active / total",
        "Source",
        "Source of the accelerator-hours",
    ]
    book.header(ws, 4, heads)
    ws.row_dimensions[4].height = 45
    for i, (name, row) in enumerate(df.iterrows()):
        r = 5 + i
        for j, (field, _, unit) in enumerate(cols):
            _constant(ws, r, 1 + j, row[field], unit)
        f = {
            9: (f'=IF(COUNT(D{r},E{r})=2,flops_per_param_token*D{r}*E{r},"")', "FLOPs"),
            10: (f'=IF(F{r}="","",IFERROR(INDEX(accel_bf16_tflops,MATCH(F{r},accel_names,0)),""))',
                 "TFLOP/s"),
            11: (f'=IF(AND(ISNUMBER(I{r}),ISNUMBER(H{r})),I{r}/(H{r}*3600)/1E+12,"")', "TFLOP/s"),
            12: (f'=IF(AND(ISNUMBER(K{r}),N(J{r})>0),K{r}/J{r},"")', "fraction"),
        }  # fmt: skip
        for c, (formula, unit) in f.items():
            ws.cell(r, c, formula).number_format = number_format(unit)
        _constant(ws, r, 13, row["disclosed_mfu"], "fraction")
        ws.cell(r, 14, f'=IF(COUNT(C{r},D{r})=2,D{r}/C{r},"")').number_format = "0.0%"
        put_text(ws.cell(r, 15), catalogue.source("run", name)).style = "Note"
        put_text(ws.cell(r, 16), catalogue.source("run", name, "accelerator_hours")).style = "Note"
    last = 4 + len(df)
    for row in ws.iter_rows(min_row=5, max_row=last, max_col=len(heads)):
        for cell in row:  # a long source wraps downward from the top, beside its own row
            cell.alignment = Alignment(
                vertical="top", wrap_text=cell.column >= 15, horizontal=cell.alignment.horizontal
            )
    book.name("ref_run_names", f"'Reference runs'!$A$5:$A${last}")
    book.name("ref_implied_tflops", f"'Reference runs'!$K$5:$K${last}")
    book.name("ref_implied_mfu", f"'Reference runs'!$L$5:$L${last}")
    r = last + 2
    put_text(ws.cell(r, 1), "Median implied MFU")
    cell = ws.cell(r, 12, f"=MEDIAN(L5:L{last})")
    cell.number_format = "0.0%"
    book.place_cell("ref.median_mfu", ws, cell.coordinate, named=False)
    book.name("ref_median_mfu", f"'Reference runs'!$L${r}")
    paragraph(
        ws,
        r + 1,
        1,
        "The planner's default MFU (Inputs, column C) is this median. Disclosed hours may "
        "include failures, restarts, evaluation and other phases, so implied MFU can sit below "
        "a paper's MFU.",
        8,  # within the first printed page
    )
    Book.finish(ws, freeze="B5", print_titles="4:4", pages_wide=2, title_cols="A:A")
    return ws


def _checks_sheet(book, scen):
    widths = {"A": 58, "B": 4, "C": 10}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = 15
    ws = book.sheet("Checks", widths)
    book.title(ws, "Checks", "TRUE = passes. The master check must be TRUE.")
    book.header(ws, 4, ["Check", "", "All"])
    for c in SCENARIO_COLUMNS:
        cell = ws.cell(4, c, book.formula("={scenario_name}", ws.title, get_column_letter(c)))
        cell.style = "Header"
    ws.row_dimensions[4].height = 30
    per_scenario = (
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
         "=AND({mfu_used}>0,{mfu_used}<=1,{goodput_used}>0,{goodput_used}<=1)"),
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
    first = 5
    r = first
    numeric = [q.name for q in PLAN_INPUTS if q.kind != "text"]
    top, bottom = book.rows[numeric[0]][1], book.rows[numeric[-1]][1]
    text_rows = [book.rows[q.name][1] for q in PLAN_INPUTS if q.kind == "text"]
    assert all(not top < t < bottom for t in text_rows if t != book.rows["accelerator_name"][1])
    for label, formula in per_scenario:
        put_text(ws.cell(r, 1), label)
        for c in SCENARIO_COLUMNS:
            letter = get_column_letter(c)
            span = f"Inputs!{letter}{top}:{letter}{bottom}"
            text = formula.replace("{numeric_inputs}", span)
            ws.cell(r, c, book.formula(text, ws.title, letter))
        a, b = get_column_letter(FIRST_COL), get_column_letter(LAST_COL)
        ws.cell(r, 3, f"=AND({a}{r}:{b}{r})")
        r += 1
    n = len(scen)
    single = (
        ("Active-scenario switch is a whole number 1..N and that scenario is complete",
         f"=IF(AND(ISNUMBER(active_scenario),active_scenario>=1,active_scenario<={n}),"
         "AND(INT(active_scenario)=active_scenario,INDEX(scenario_ready,active_scenario)),"
         "FALSE)"),
        ("Monthly schedule holds the whole run (shares add up to 100%)",
         "=OR(NOT({mon.ok}),ABS({mon.share_total}-1)<1E-9)"),
        ("Default MFU = median implied MFU of the reference runs",
         "=ABS({default.mfu}-ref_median_mfu)<1E-12"),
        ("Summary total cost = Calculations total cost of the selected scenario",
         "=OR(NOT({sel.scenario_ready}),"
         "{sel.total_cost_usd}=INDEX(total_cost_usd,active_scenario))"),
    )  # fmt: skip
    for label, formula in single:
        put_text(ws.cell(r, 1), label)
        ws.cell(r, 3, book.formula(formula, ws.title))
        r += 1
    r += 1
    put_text(ws.cell(r, 1), "Master check (every check above)").style = "Section"
    cell = ws.cell(r, 3, f"=AND(C{first}:C{r - 2})")
    bold(cell)
    book.place_cell("master_check", ws, cell.coordinate, named=True)
    rng = f"C{first}:{get_column_letter(LAST_COL)}{r}"
    ws.conditional_formatting.add(
        rng,
        FormulaRule(formula=[f"C{first}=TRUE"], fill=PatternFill("solid", fgColor=CHECK_OK_FILL)),
    )
    ws.conditional_formatting.add(
        rng,
        FormulaRule(formula=[f"C{first}=FALSE"], fill=PatternFill("solid", fgColor=CHECK_BAD_FILL)),
    )
    Book.finish(ws, freeze="D5")
    return ws


# ---------------------------------------------------------------------------------------------
# The workbook
# ---------------------------------------------------------------------------------------------


def build(generated=None):
    """The planner as an openpyxl Workbook (not saved)."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    scen = scenarios(generated)
    book = Book()
    _accelerators_sheet(book)
    _inputs_sheet(book, scen)
    _calculations_sheet(book, scen)
    _summary_sheet(book, scen)
    _sensitivity_sheet(book)
    _monthly_sheet(book)
    _reference_sheet(book)
    _checks_sheet(book, scen)
    _charts_sheet(book)
    add_change_log(book, generated)
    llama, ds = catalogue.run("Llama 3.1 405B"), catalogue.run("DeepSeek-V3")
    add_cover(
        book,
        "Training-run planner",
        "Plan a large-model training run: from parameters, tokens and accelerators to training "
        "FLOPs, accelerator-hours, wall-clock days, checkpoint size, cost, electricity and CO2, "
        "side by side for several scenarios, with plain Excel formulas (no macros, no add-in).",
        [
            "Inputs: the first three columns hold the dense reference (Llama 3.1 405B), the MoE "
            "reference (DeepSeek-V3) and the seed's DeepSeek-V3-like configuration.",
            "For your own plan, use a Custom column: type the total parameters, training tokens "
            "and accelerator count (and active parameters for an MoE model). Every other input "
            "already holds a visible default you can change; a blank input takes column C (a "
            "blank power takes the accelerator's TDP from the catalogue, else 700 W).",
            "Summary: set the active-scenario switch (1-8) to see one scenario; Sensitivity, "
            "Monthly spend and Charts follow it.",
            "Checks: the master check must read TRUE (also shown here and on the Summary).",
            "Figures are planning estimates from a linear model (6 x active parameters x tokens, "
            "perfect scaling); see the notes on each sheet.",
        ],
        SHEETS[1:],
        [
            f"Llama 3.1 405B: {catalogue.source('run', llama['name'])}; "
            f"{catalogue.source('run', llama['name'], 'accelerators')}",
            f"DeepSeek-V3: {catalogue.source('run', ds['name'])}; "
            f"{catalogue.source('run', ds['name'], 'accelerator_hours')}",
            "Seed: the source project's Compute Lab (DeepSeek-V3-like configuration, 400 "
            "effective TFLOP/s, $2.0/hour, 700 W)",
            "Accelerators and further runs: the Accelerators and Reference runs sheets, a source "
            "beside every figure",
            "Defaults: world-average grid intensity 481 gCO2/kWh (Ember 2023); MFU default = "
            "median implied MFU of the reference runs",
        ],
        generated,
    )
    order_sheets(book, [s for s, _ in SHEETS])
    set_properties(book, "Training-run planner", "Compute Lab planning template", generated)
    return book.wb
