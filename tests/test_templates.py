"""The generated workbooks, recalculated by headless LibreOffice, against the engine.

One LibreOffice call for every file (session fixtures in conftest.py). Values are compared
with ``udfs.plan.estimate_scenario`` for the same inputs, read back from the recalculated
file, to a relative 1e-9.
"""

from __future__ import annotations

import math

import openpyxl
import pytest
from helpers import (
    A100_PLAN,
    BAD_PLANS,
    CUSTOM_PLAN,
    PLANNER,
    TYPED_PLAN,
    planner_cell,
    random_plans,
    require_soffice,
    row_values,
)

from udfs import calibration, catalogue, engine
from udfs.plan import estimate_scenario
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS
from workbook_templates import planner, sheetkit

REL = 1e-9
ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "Err:")
SEED = {
    "training_flops": "3.286e+24",
    "accelerator_hours": "2,281,667",
    "wall_clock_days": "46.4",
    "checkpoint_gb": "1342.0",
    "compute_cost_usd": "4,563,333",
    "electricity_kwh": "1,597,167",
}


def values(path):
    return openpyxl.load_workbook(path, data_only=True)


def scenario_inputs(wb, k):
    return {q.name: row_values(wb, q.name)[k] for q in PLAN_INPUTS}


def close(a, b):
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=REL, abs_tol=0)


def assert_matches_engine(wb, k):
    inputs = scenario_inputs(wb, k)
    expected = estimate_scenario(inputs)
    for q in PLAN_OUTPUTS:
        got = row_values(wb, q.name)[k]
        want = expected[q.name]
        if math.isnan(want):
            assert got in (None, ""), (q.name, got)
        else:
            assert close(got, want), (inputs["scenario_name"], q.name, got, want)
    return expected


@pytest.fixture(scope="module")
def planner_values(recalculated_templates):
    return values(recalculated_templates[PLANNER])


# -- no error anywhere -------------------------------------------------------------------------


def test_every_template_and_variant_recalculates_without_error_values(
    recalculated_templates, recalculated_variants
):
    for path in [*recalculated_templates.values(), *recalculated_variants.values()]:
        wb = values(path)
        bad = [
            f"{ws.title}!{c.coordinate}={c.value}"
            for ws in wb
            for row in ws.iter_rows()
            for c in row
            if isinstance(c.value, str) and c.value.startswith(ERRORS)
        ]
        assert not bad, (path.name, bad[:10])


def test_master_checks_pass(recalculated_templates, recalculated_variants):
    for path in [*recalculated_templates.values(), *recalculated_variants.values()]:
        if path.name != "planner-bad.xlsx":
            assert row_values(values(path), "master_check") == [True], path.name


def _failed(value):
    """A failed check as LibreOffice saves it: FALSE, or 0 (a check cell has a number format
    that prints TRUE/FALSE, so LibreOffice stores the result as a number)."""
    if isinstance(value, bool):
        return value is False
    return isinstance(value, (int, float)) and value == 0


def test_checks_catch_inputs_that_slip_past_validation(recalculated_variants):
    wb = values(recalculated_variants["planner-bad.xlsx"])
    assert row_values(wb, "master_check") == [False]
    ws = wb["Checks"]
    failed = {}
    for r in range(5, 40):
        label = ws.cell(r, 1).value
        if str(label).startswith("Warnings"):
            break  # failures only: the warnings below make WARN, not ERROR
        for k in range(len(planner.SCENARIO_COLUMNS)):
            if _failed(ws.cell(r, 4 + k).value):
                failed.setdefault(k, []).append(label)
    assert set(failed) == set(BAD_PLANS)
    assert any("numbers" in label for label in failed[3])
    assert any("Active parameters" in label for label in failed[4])
    assert any("MFU" in label for label in failed[5])
    assert any("catalogue" in label for label in failed[6])
    assert failed[7] == ["Accelerators is a whole number"]
    for k in (0, 1, 2):  # the other columns are untouched
        assert k not in failed


# -- planner: every output equals the engine ---------------------------------------------------


def test_planner_has_every_contract_name_over_the_same_columns(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    spans = set()
    input_sheets = set()
    for q in PLAN_INPUTS + PLAN_OUTPUTS:
        assert q.name in wb.defined_names, q.name
        ((sheet, ref),) = wb.defined_names[q.name].destinations
        a, b = ref.replace("$", "").split(":")
        spans.add((openpyxl.utils.cell.coordinate_from_string(a)[0],
                   openpyxl.utils.cell.coordinate_from_string(b)[0]))  # fmt: skip
        if q in PLAN_INPUTS:
            input_sheets.add(sheet)
    assert len(spans) == 1 and input_sheets == {"Inputs"}
    first, last = spans.pop()
    width = openpyxl.utils.column_index_from_string(last) - openpyxl.utils.column_index_from_string(
        first
    )
    assert width + 1 == len(planner.SCENARIO_COLUMNS)
    for name in ("active_scenario", "template_version", "master_check"):
        assert name in wb.defined_names
    # every name is workbook-scoped
    for ws in wb:
        assert not ws.defined_names


def test_reference_and_seed_columns_equal_the_engine(planner_values):
    names = row_values(planner_values, "scenario_name")
    for k in range(3):
        assert_matches_engine(planner_values, k)
    assert names[0].startswith("Llama 3.1 405B") and names[1].startswith("DeepSeek-V3")


def test_reference_columns_reproduce_disclosed_accelerator_hours(planner_values):
    hours = row_values(planner_values, "accelerator_hours")
    for k, run in enumerate(("Llama 3.1 405B", "DeepSeek-V3")):
        assert close(hours[k], catalogue.run(run)["accelerator_hours"])


def test_seed_column_prints_the_seed_figures(planner_values):
    k = 2
    got = {q: row_values(planner_values, q)[k] for q in SEED}
    assert f"{got['training_flops']:.3e}" == SEED["training_flops"]
    assert f"{got['accelerator_hours']:,.0f}" == SEED["accelerator_hours"]
    assert f"{got['wall_clock_days']:,.1f}" == SEED["wall_clock_days"]
    assert f"{got['checkpoint_gb']:.1f}" == SEED["checkpoint_gb"]
    assert f"{got['compute_cost_usd']:,.0f}" == SEED["compute_cost_usd"]
    assert f"{got['electricity_kwh']:,.0f}" == SEED["electricity_kwh"]
    assert row_values(planner_values, "effective_tflops_input")[k] == 400


def test_blank_custom_columns_show_defaults_as_used_and_no_figures(planner_values):
    names = row_values(planner_values, "scenario_name")
    for k in range(3, len(names)):
        inputs = scenario_inputs(planner_values, k)
        assert inputs["total_params"] is None and inputs["accelerators"] is None
        assert inputs["accelerator_name"] == "H100 SXM"
        assert inputs["mfu"] is None  # the calibrated default, once the column is filled
        assert inputs["budget_status"] is None and inputs["owner"] is None
        assert row_values(planner_values, "mfu_used")[k] in (None, "")
        assert row_values(planner_values, "budget_status_used")[k] in (None, "")
        # every other input blank (issue 18): the defaults show as used, on Calculations
        assert inputs["goodput"] is None and inputs["usd_per_accelerator_hour"] is None
        assert row_values(planner_values, "goodput_used")[k] == 1
        assert row_values(planner_values, "usd_per_accelerator_hour_used")[k] == 2
        # power blank: it follows the accelerator (the H100's 700 W TDP), shown as used
        assert inputs["watts_per_accelerator"] is None
        assert row_values(planner_values, "watts_per_accelerator_used")[k] == 700
        assert inputs["start_date"] is None
        for q in PLAN_OUTPUTS:
            assert row_values(planner_values, q.name)[k] in (None, "")


def test_custom_column_with_only_required_inputs_equals_the_engine(recalculated_variants):
    wb = values(recalculated_variants["planner-custom.xlsx"])
    got = assert_matches_engine(wb, 3)
    assert row_values(wb, "scenario_name")[3] == CUSTOM_PLAN["scenario_name"]
    # nothing else typed: the calibrated MFU (H100, 12B active) and the H100's catalogue peak
    mfu = calibration.predicted_mfu("H100 SXM", 12e9)
    assert close(got["effective_tflops"], 989.4 * mfu)
    assert close(row_values(wb, "mfu_used")[3], mfu)


def test_blank_power_takes_the_accelerators_tdp(recalculated_variants):
    wb = values(recalculated_variants["planner-custom.xlsx"])
    k = 4
    assert scenario_inputs(wb, k)["watts_per_accelerator"] is None
    assert scenario_inputs(wb, k)["accelerator_name"] == A100_PLAN["accelerator_name"]
    assert row_values(wb, "watts_per_accelerator_used")[k] == 400  # the A100's TDP
    got = assert_matches_engine(wb, k)
    assert close(got["electricity_kwh"], got["accelerator_hours"] * 400 / 1000)
    assert close(got["effective_tflops"], 312 * calibration.predicted_mfu("A100 SXM 80GB", 12e9))


def test_references_keep_their_power_and_say_where_it_comes_from(planner_values):
    watts = row_values(planner_values, "watts_per_accelerator")
    assert watts[:3] == [700, 700, 700]  # Llama (H100 TDP), DeepSeek-V3 (assumed), seed
    notes = [c.value for row in planner_values["Inputs"].iter_rows() for c in row]
    (ds,) = [n for n in notes if isinstance(n, str) and n.startswith("DeepSeek-V3: ")]
    assert "700 W assumed: the H800's TDP is not published" in ds
    # the TDP lookup: blank TDP (H800) -> 700 W, as udfs.plan
    assert row_values(planner_values, "watts_per_accelerator_used")[:3] == [700, 700, 700]


def test_summary_and_sensitivity_say_when_an_override_is_in_use(recalculated_variants):
    wb = values(recalculated_variants["planner-custom.xlsx"])  # switch on the example column
    summary = wb["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 60)}
    notes = {summary.cell(r, 1).value: summary.cell(r, 4).value for r in range(1, 60)}
    assert shown["Selected scenario"].startswith("Example: DeepSeek-V3-like")
    assert shown["Throughput source"] == "typed throughput"
    assert shown["Effective TFLOP/s (override)"] == 400
    assert "OVERRIDE IN USE" in notes["Effective TFLOP/s (override)"]
    peak = shown["Peak TFLOP/s per accelerator"]
    assert close(shown["MFU implied by the override (override / peak)"], 400 / peak)
    assert "MFU" not in shown and shown["Goodput"] == "not used (override)"
    assert "For reference" in notes["Peak TFLOP/s per accelerator"]
    warning = wb["Sensitivity"]["B4"].value
    assert "override" in warning and "do NOT apply" in warning
    # without an override (the typed variant: a typed MFU) nothing of the kind shows
    wb = values(recalculated_variants["planner-typed.xlsx"])
    summary = wb["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 60)}
    assert close(shown["MFU"], TYPED_PLAN["mfu"]) and shown["Throughput source"] == "typed MFU"
    assert shown["Effective TFLOP/s (override)"] in (None, "")
    assert wb["Sensitivity"]["B4"].value in (None, "")


def test_fully_typed_custom_column_and_switch(recalculated_variants):
    wb = values(recalculated_variants["planner-typed.xlsx"])
    expected = assert_matches_engine(wb, 4)
    assert row_values(wb, "scenario_name")[4] == TYPED_PLAN["scenario_name"]  # stayed text
    summary = wb["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 60)}
    for q in PLAN_OUTPUTS:
        assert close(shown[q.label], expected[q.name]), q.name
    assert shown["Selected scenario"] == TYPED_PLAN["scenario_name"]


def test_random_plans_in_every_custom_column_equal_the_engine(recalculated_variants):
    wb = values(recalculated_variants["planner-random.xlsx"])
    for i, plan in enumerate(random_plans()):
        k = 3 + i
        got = scenario_inputs(wb, k)
        for name, value in plan.items():  # what was typed is what the workbook holds
            if value is None:
                assert got[name] is None, (k, name)
            elif isinstance(value, float):  # LibreOffice saves 15 significant digits
                assert math.isclose(got[name], value, rel_tol=1e-14), (k, name)
            else:
                assert got[name] == value, (k, name)
        assert_matches_engine(wb, k)
    assert row_values(wb, "master_check") == [True]


def test_monthly_schedule_equals_engine_month_shares(recalculated_variants):
    wb = values(recalculated_variants["planner-typed.xlsx"])
    k = 4
    days = row_values(wb, "wall_clock_days")[k]
    hours = row_values(wb, "accelerator_hours")[k]
    cost = row_values(wb, "total_cost_usd")[k]
    want = engine.month_shares(TYPED_PLAN["start_date"].date(), days)
    months = row_values(wb, "monthly_month")
    shares = row_values(wb, "monthly_share")
    for i, (month, share) in enumerate(want):
        assert months[i].date() == month
        assert math.isclose(shares[i], share, rel_tol=REL, abs_tol=1e-15)
    assert all(s == 0 for s in shares[len(want) :])
    assert math.isclose(sum(row_values(wb, "monthly_accelerator_hours")), hours, rel_tol=REL)
    assert math.isclose(sum(row_values(wb, "monthly_total_cost_usd")), cost, rel_tol=REL)


def test_summary_follows_the_default_switch(planner_values):
    k = row_values(planner_values, "active_scenario")[0] - 1
    summary = planner_values["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 60)}
    for q in PLAN_OUTPUTS:
        assert close(shown[q.label], row_values(planner_values, q.name)[k])


def _grid(ws, title):
    """(row axis, column axis, values) of the Sensitivity grid whose title starts so."""
    top = next(r for r in range(1, 80) if str(ws.cell(r, 1).value).startswith(title))
    cols = [ws.cell(top + 1, c).value for c in range(3, 10)]
    rows, cells = [], []
    r = top + 2
    while isinstance(ws.cell(r, 2).value, (int, float)):
        rows.append(ws.cell(r, 2).value)
        cells.append([ws.cell(r, c).value for c in range(3, 10)])
        r += 1
    return rows, cols, cells


def test_sensitivity_grids_equal_the_engine(planner_values):
    ws = planner_values["Sensitivity"]
    k = row_values(planner_values, "active_scenario")[0] - 1
    inputs = scenario_inputs(planner_values, k)
    flops = row_values(planner_values, "training_flops")[k]
    peak = catalogue.accelerator(inputs["accelerator_name"])["bf16_tflops"]
    good = inputs["goodput"] or 1.0

    def hours(mfu):
        return engine.accelerator_hours(flops, engine.effective_tflops(peak, mfu, good))

    accels, mfus, days = _grid(ws, "Wall-clock days")
    own_n = row_values(planner_values, "accelerators_used")[k]
    override = inputs["effective_tflops_input"]
    # With a typed throughput the axis is built around the MFU it implies (Summary's MFU row).
    own_mfu = override / peak if override else row_values(planner_values, "mfu_used")[k]
    assert accels == [max(1, round(own_n * m)) for m in planner.SENS_ACCELERATORS]
    assert mfus == pytest.approx([min(1, own_mfu * m) for m in planner.SENS_MFU], rel=REL)
    assert (accels[3], mfus[3]) == (own_n, pytest.approx(own_mfu, rel=REL))
    for n, row in zip(accels, days, strict=True):
        for mfu, got in zip(mfus, row, strict=True):
            assert close(got, engine.wall_clock_days(hours(mfu), n))
    _, _, iters = _grid(ws, "Research iterations")
    for n, row in zip(accels, iters, strict=True):
        for mfu, got in zip(mfus, row, strict=True):
            assert close(got, engine.iterations_per_year(engine.wall_clock_days(hours(mfu), n)))
    mfus2, prices, costs = _grid(ws, "Compute cost")
    for mfu, row in zip(mfus2, costs, strict=True):
        for price, got in zip(prices, row, strict=True):
            assert close(got, engine.compute_cost_usd(hours(mfu), price))
    accels2, prices2, burn = _grid(ws, "Spend per month")
    for n, row in zip(accels2, burn, strict=True):
        for price, got in zip(prices2, row, strict=True):
            assert close(got, n * price * 24 * 365 / 12)


def test_reference_runs_sheet_equals_calibration(planner_values):
    ref = calibration.reference_table()
    names = row_values(planner_values, "ref_run_names")
    tflops = row_values(planner_values, "ref_implied_tflops")
    mfus = row_values(planner_values, "ref_implied_mfu")
    for name, t, m in zip(names, tflops, mfus, strict=True):
        want_t, want_m = ref.loc[name, "implied_effective_tflops"], ref.loc[name, "implied_mfu"]
        assert (t in (None, "")) if math.isnan(want_t) else close(t, want_t), name
        assert (m in (None, "")) if math.isnan(want_m) else close(m, want_m), name
    assert close(row_values(planner_values, "ref_median_mfu")[0], calibration.default_mfu())


# -- the input cells ---------------------------------------------------------------------------


def test_inputs_are_unlocked_inputs_and_formulas_are_locked(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    for q in PLAN_INPUTS:
        for k in range(len(planner.SCENARIO_COLUMNS)):
            ws, coord = planner_cell(wb, q.name, k)
            cell = ws[coord]
            if k < 3:  # the two references and the example (D:F): grey and locked, every row
                assert (cell.style, cell.protection.locked) == ("Constant", True), (q.name, k)
                assert cell.fill.fgColor.rgb.endswith(sheetkit.CONSTANT_FILL), (q.name, k)
                if q.name == "budget_status":
                    assert cell.value == "Reference"
                continue
            assert cell.protection.locked is False, (q.name, k)
            assert cell.style == "Input"
            assert cell.fill.fgColor.rgb.endswith(sheetkit.INPUT_FILL), (q.name, k)
    for ws in wb:
        assert ws.protection.sheet, ws.title
        assert ws.page_setup.orientation == "landscape", ws.title
        assert (ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.fitToWidth in (1, 2)
                ) or ws.page_setup.scale == sheetkit.MIN_PRINT_SCALE_PCT, ws.title  # fmt: skip
        for row in ws.iter_rows():
            for c in row:
                if c.data_type == "f":
                    assert c.protection.locked, (ws.title, c.coordinate)


def test_input_rows_have_validation_with_messages(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws = wb["Inputs"]
    covered = {}
    for dv in ws.data_validations.dataValidation:
        assert dv.showInputMessage and dv.showErrorMessage and dv.prompt and dv.error
        for rng in dv.sqref.ranges:
            covered[rng.min_row] = dv
    for q in PLAN_INPUTS:
        _, coord = planner_cell(wb, q.name, 0)
        row = openpyxl.utils.cell.coordinate_from_string(coord)[1]
        assert row in covered, q.name
    _, coord = planner_cell(wb, "accelerator_name", 0)
    dv = covered[openpyxl.utils.cell.coordinate_from_string(coord)[1]]
    assert dv.type == "list" and dv.formula1 == "accel_names"
    _, coord = planner_cell(wb, "accelerators", 0)
    dv = covered[openpyxl.utils.cell.coordinate_from_string(coord)[1]]
    assert (dv.type, dv.operator, dv.formula1) == ("whole", "greaterThan", "0")
    assert "whole number" in dv.error and "whole number" in dv.prompt
    names = row_values(wb, "accel_names")
    assert names == list(catalogue.accelerators()["name"])


# -- cluster sizing ----------------------------------------------------------------------------


def test_cluster_sizing_equals_the_engine(recalculated_templates):
    wb = values(recalculated_templates["cluster-sizing.xlsx"])
    hours = row_values(wb, "accelerator_hours")[0]
    assert hours == 30e6  # the seed's example
    for days, n, whole in zip(
        row_values(wb, "target_days"),
        row_values(wb, "accelerators_for_days"),
        row_values(wb, "accelerators_rounded_up"),
        strict=True,
    ):
        assert close(n, engine.accelerators_for_days(hours, days))
        assert whole == math.ceil(engine.accelerators_for_days(hours, days))
    for n, days, iters in zip(
        row_values(wb, "accelerators"),
        row_values(wb, "wall_clock_days"),
        row_values(wb, "iterations_per_year"),
        strict=True,
    ):
        assert close(days, engine.wall_clock_days(hours, n))
        assert close(iters, engine.iterations_per_year(engine.wall_clock_days(hours, n)))


def test_cluster_sizing_shows_the_seed_iteration_example(recalculated_templates):
    wb = values(recalculated_templates["cluster-sizing.xlsx"])
    assert row_values(wb, "seed_example_accelerators") == [15000, 150000]
    days = row_values(wb, "seed_example_days")
    iters = row_values(wb, "seed_example_iterations")
    assert [round(d, 1) for d in days] == [83.3, 8.3]
    assert [round(i, 2) for i in iters] == [4.38, 43.8]


# -- dense versus MoE --------------------------------------------------------------------------


def test_dense_vs_moe_equals_the_engine(recalculated_templates):
    wb = values(recalculated_templates["dense-vs-moe.xlsx"])
    shared = {
        n: row_values(wb, n)[0]
        for n in ("effective_tflops", "usd_per_accelerator_hour", "accelerators",
                  "watts_per_accelerator")
    }  # fmt: skip
    results = []
    for k in range(3):
        r = engine.estimate(
            row_values(wb, "total_params")[k],
            row_values(wb, "training_tokens")[k],
            shared["accelerators"],
            active_params=row_values(wb, "active_params")[k],
            effective_tflops=shared["effective_tflops"],
            usd_per_accelerator_hour=shared["usd_per_accelerator_hour"],
            watts_per_accelerator=shared["watts_per_accelerator"],
        )
        for name in ("training_flops", "accelerator_hours", "wall_clock_days",
                     "compute_cost_usd", "electricity_kwh", "iterations_per_year"):  # fmt: skip
            assert close(row_values(wb, name)[k], r[name]), (k, name)
        results.append(r)
    moe, dense = results[0], results[1]
    ratio = row_values(wb, "activation_ratio")[0]
    assert close(ratio, 37e9 / 671e9) and round(ratio * 100, 1) == 5.5
    savings = {
        "flops_saved": "training_flops",
        "accelerator_hours_saved": "accelerator_hours",
        "rental_cost_saved_usd": "compute_cost_usd",
    }
    for name, key in savings.items():
        assert close(row_values(wb, name)[0], dense[key] - moe[key]), name
    assert close(row_values(wb, "flops_saved_share")[0], 1 - ratio)
    # where the savings go: the dense budget buys 1/ratio times the tokens, or as many runs
    assert close(row_values(wb, "tokens_affordable")[0], 14.8e12 * 671 / 37)
    assert close(row_values(wb, "experiments_affordable")[0], 671 / 37)
    hours = [catalogue.run(n)["accelerator_hours"] for n in ("DeepSeek-V3", "Llama 3.1 405B")]
    assert close(row_values(wb, "disclosed_hours_ratio")[0], hours[0] / hours[1])
    assert row_values(wb, "disclosed_hours_ratio")[0] < 0.1  # "under a tenth"
    ref = calibration.reference_table()
    implied = row_values(wb, "implied_effective_tflops")
    assert close(implied[0], ref.loc["DeepSeek-V3", "implied_effective_tflops"])
    assert close(implied[2], ref.loc["Llama 3.1 405B", "implied_effective_tflops"])


# -- print layout ------------------------------------------------------------------------------


def test_sensitivity_legends_are_true_per_grid_and_grids_print_whole(generated_templates):
    ws = openpyxl.load_workbook(generated_templates[PLANNER])["Sensitivity"]
    titles = {
        ws.cell(r, 1).value: r
        for r in range(5, 60)
        if isinstance(ws.cell(r, 1).value, str) and ":" in ws.cell(r, 1).value
    }
    assert len(titles) == 4
    assert "Green = low" not in ws["A2"].value
    rules = {rng.sqref: rule for rng in ws.conditional_formatting for rule in rng.rules}
    for title, top in titles.items():
        (rule,) = [r for sq, r in rules.items() if str(sq).startswith(f"C{top + 2}:")]
        low = rule.colorScale.color[0].rgb[-6:]
        if "iterations" in title:  # more runs a year is better: green at the top
            assert "(red = lowest, green = highest)" in title and low == "F8696B"
        else:
            assert "(green = lowest, red = highest)" in title and low == "63BE7B"
    # each grid prints whole: a page break only above a grid's title; a readable scale
    for brk in (b.id for b in ws.row_breaks.brk):
        below = next(ws.cell(r, 1).value for r in range(brk + 1, brk + 4) if ws.cell(r, 1).value)
        assert below in titles, (brk, below)
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 1) or (
        ws.page_setup.scale == sheetkit.MIN_PRINT_SCALE_PCT)  # fmt: skip


def test_reference_runs_rows_align_at_the_top(generated_templates):
    ws = openpyxl.load_workbook(generated_templates[PLANNER])["Reference runs"]
    for row in ws.iter_rows(min_row=5, max_row=8, max_col=16):
        assert {c.alignment.vertical for c in row} == {"top"}
    assert ws["B4"].value == "Dense / MoE" and ws.column_dimensions["B"].width >= len("Dense /")
    assert ws.print_title_cols == "$A:$A"  # the run beside its source, on the second page
    assert ws.page_setup.fitToWidth == 1 or ws.page_setup.scale == sheetkit.MIN_PRINT_SCALE_PCT


#: The issue's plan (70B dense, 2T tokens, 1,024 x H100), every other input left blank.
ISSUE_PLAN = {
    "scenario_name": "70B on 1,024 H100",
    "total_params": 70e9,
    "training_tokens": 2e12,
    "accelerators": 1024.0,
    "accelerator_name": "H100 SXM",
}


@pytest.mark.libreoffice
def test_a_blank_plan_totals_the_same_in_the_planner_and_the_engine(generated_templates, tmp_path):
    """Blank inputs resolve by udfs.plan.RULES in both: electricity priced at US$0.08/kWh."""
    from workbook_templates.recalc import recalculate

    require_soffice()
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    k = 3  # Custom 1
    for q in PLAN_INPUTS:
        ws, coord = planner_cell(wb, q.name, k)
        ws[coord].value = ISSUE_PLAN.get(q.name)
    wb.save(tmp_path / "issue.xlsx")
    (done,) = recalculate([tmp_path / "issue.xlsx"], tmp_path / "out")
    got = values(done)
    want = estimate_scenario(ISSUE_PLAN)
    # US$1,596,470.42 with the former constant MFU (30.4%), US$1,918,932.31 with the
    # leave-one-out generation+size default, US$2,196,263.78 with the pooled H100 default on
    # 46 runs, US$1,603,750.95 with the linear pooled slope on 51; with the saturating
    # small-model size effect (issue 17, round 3) the H100 default is its intercept from 5B up
    # (US$2,056,132.99 on the 51 runs of round 3; on the 57 of round 4):
    assert round(want["total_cost_usd"], 2) == 2_056_109.24
    for q in PLAN_OUTPUTS:
        assert close(row_values(got, q.name)[k], want[q.name]), q.name
    assert row_values(got, "usd_per_kwh_used")[k] == 0.08


# -- ranges, budget rows and the three-state master check (issues 10 and 11) ----------------


@pytest.fixture(scope="module")
def state_variants(generated_templates, tmp_path_factory):
    """The variants of tests/helpers_planner.py, recalculated in one LibreOffice call."""
    from helpers_planner import make_variants

    from workbook_templates.recalc import recalculate

    require_soffice()
    made = make_variants(generated_templates[PLANNER], tmp_path_factory.mktemp("states"))
    done = recalculate(list(made.values()), tmp_path_factory.mktemp("states-out"))
    return {p.name: values(p) for p in done}


def test_ranges_default_mfu_and_budget_rows_equal_the_engine(planner_values,
                                                             recalculated_variants,
                                                             state_variants):  # fmt: skip
    """P10 / P90, the default MFU and the budget rows of every filled column = the engine."""
    from helpers_planner import assert_ranges_match_engine, filled_columns

    books = {"preloaded": planner_values, "ranges": state_variants["planner-ranges.xlsx"]}
    for name in ("planner-custom.xlsx", "planner-typed.xlsx", "planner-random.xlsx"):
        books[name] = values(recalculated_variants[name])
    sources = set()
    checked = 0
    for label, wb in books.items():
        columns = filled_columns(wb)
        assert columns[:3] == [0, 1, 2], label
        for k in columns:
            sources.add(assert_ranges_match_engine(wb, k).throughput_source)
            checked += 1
    assert sources == {"typed throughput", "typed MFU", "calibrated default"}
    assert checked >= 20
    # the references are disclosed runs, typed exact (0%): P10 = P50 = P90; the example's
    # typed throughput is an estimate and keeps the calibrated spread (issue 17)
    for k in range(3):
        assert row_values(planner_values, "budget_status_used")[k] == "Reference"
    assert row_values(planner_values, "throughput_sigma")[:2] == [0, 0]
    assert close(row_values(planner_values, "throughput_sigma")[2], calibration.throughput_sigma())


def test_a_calibrated_column_spreads_by_the_calibration(recalculated_variants):
    wb = values(recalculated_variants["planner-custom.xlsx"])
    k = 3  # required inputs only: calibrated MFU, blank uncertainty
    assert row_values(wb, "throughput_source")[k] == "calibrated default"
    assert close(row_values(wb, "throughput_range_pct_used")[k], calibration.default_range_pct())
    assert close(row_values(wb, "throughput_sigma")[k], calibration.throughput_sigma())
    hours = row_values(wb, "accelerator_hours")[k]
    assert close(row_values(wb, "accelerator_hours_p90")[k] / hours,
                 1 + calibration.default_range_pct())  # fmt: skip
    assert row_values(wb, "budget_status_used")[k] == "Proposed"  # blank counts as Proposed


def test_a_small_model_on_an_uncalibrated_accelerator_gets_the_widest_spread(state_variants):
    """Natively computed: the small-model and 'other'-accelerator spreads add in quadrature,
    with a typed MFU too (issue 17); equal to the engine's."""
    wb = state_variants["planner-ranges.xlsx"]
    k = 5  # 3B dense on an MI300X, typed MFU, blank throughput uncertainty
    assert row_values(wb, "throughput_source")[k] == "typed MFU"
    want = calibration.throughput_sigma_for("MI300X", 3e9)
    assert close(row_values(wb, "throughput_sigma")[k], want)
    assert want > calibration.throughput_sigma_for("H100 SXM", 70e9)
    assert close(row_values(wb, "throughput_range_pct_used")[k],
                 calibration.default_range_pct("MI300X", 3e9))  # fmt: skip


def test_accelerators_sheet_holds_each_intercept(planner_values):
    names = row_values(planner_values, "accel_names")
    got = row_values(planner_values, "accel_mfu_intercept")
    for name, value in zip(names, got, strict=True):
        assert value == pytest.approx(calibration.mfu_intercept(name), rel=1e-14), name
    extra = row_values(planner_values, "accel_sigma_extra")
    for name, value in zip(names, extra, strict=True):
        assert value == pytest.approx(calibration.accelerator_extra_sigma(name), abs=1e-15), name
    assert close(row_values(planner_values, "calibrated_range_pct")[0],
                 calibration.default_range_pct())  # fmt: skip


def _warnings_failed(wb):
    """Warning label -> columns (0-based) whose warning cell is FALSE."""
    ws = wb["Checks"]
    out, inside = {}, False
    for r in range(5, 60):
        label = ws.cell(r, 1).value
        if isinstance(label, str) and label.startswith("Warnings"):
            inside = True
            continue
        if inside and isinstance(label, str) and label.startswith("No check fails"):
            break
        if inside and label:
            cols = [k for k in range(len(planner.SCENARIO_COLUMNS))
                    if _failed(ws.cell(r, 4 + k).value)]  # fmt: skip
            if cols:
                out[label] = cols
    return out


def test_master_check_states(planner_values, recalculated_variants, state_variants):
    """OK, WARN or ERROR, for the reason each variant was built for."""
    from helpers_planner import STATE_VARIANTS

    assert row_values(planner_values, "master_status") == ["OK"]  # untouched: references only
    assert _warnings_failed(planner_values) == {}
    bad = values(recalculated_variants["planner-bad.xlsx"])
    assert row_values(bad, "master_status") == ["ERROR"]
    custom = values(recalculated_variants["planner-custom.xlsx"])  # blank status, calibrated
    assert row_values(custom, "master_status") == ["WARN"]
    assert row_values(custom, "master_check") == [True]
    for name, (_, state, warned) in STATE_VARIANTS.items():
        wb = state_variants[name]
        assert row_values(wb, "master_status") == [state], name
        assert row_values(wb, "master_check") == [state != "ERROR"], name
        failed = _warnings_failed(wb)
        for start, cols in warned.items():
            (label,) = [lab for lab in failed if lab.startswith(start)]
            assert failed.pop(label) == cols, (name, label)
        assert failed == {} or state == "ERROR", (name, failed)
    summary = state_variants["state-warn-status.xlsx"]["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 40)}
    assert shown["Checks"].startswith("WARN")


def test_the_summary_switch_starts_on_the_first_filled_custom_column(planner_values,
                                                                      state_variants):  # fmt: skip
    assert row_values(planner_values, "active_scenario_switch") == [None]
    assert row_values(planner_values, "active_scenario") == [3]  # the example column
    wb = state_variants["planner-ranges.xlsx"]  # Custom 1 empty, Custom 2 filled
    assert row_values(wb, "active_scenario") == [5]
    summary = wb["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 90)}
    assert shown["Selected scenario"] == "Calibrated, price range"
    for q in ("accelerator_hours", "total_cost_usd"):
        for key in ("p10", "p90"):
            label = next(o.label for o in PLAN_OUTPUTS if o.name == q)
            assert close(shown[f"{label}, {key.upper()}"], row_values(wb, f"{q}_{key}")[4])


def test_check_colours_flag_only_real_failures(generated_templates):
    """No rule colours a blank cell: each tests the value's type first."""
    for name in (PLANNER, "cluster-sizing.xlsx", "dense-vs-moe.xlsx"):
        ws = openpyxl.load_workbook(generated_templates[name])["Checks"]
        formulas = [f for rng in ws.conditional_formatting for rule in rng.rules
                    for f in rule.formula]  # fmt: skip
        assert formulas, name
        for f in formulas:
            assert f.startswith(("ISERROR(", "AND(ISLOGICAL(", "AND(ISTEXT(")), (name, f)


def test_inputs_print_on_two_pages_and_the_cover_on_one(generated_templates):
    """Inputs and the Cover, too wide or too long for one page at 7-point type, print at the
    smallest readable scale (tests/test_print.py counts their pages on A4 and Letter); a page
    break before the Inputs' constants."""
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    for title in ("Inputs", "Cover"):
        assert wb[title].page_setup.scale == sheetkit.MIN_PRINT_SCALE_PCT, title
        assert not wb[title].sheet_properties.pageSetUpPr.fitToPage, title
    ws = wb["Inputs"]
    after = [ws.cell(b.id + 1, 1).value for b in ws.row_breaks.brk]
    assert "Model constants (fixed)" in after, after


def test_users_never_read_seed(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    for ws in wb:
        if ws.title == "Change log":  # sheetkit's change-log text, not the planner's
            continue
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and not c.value.startswith("="):
                    text = c.value.lower()
                    assert "seed" not in text, (ws.title, c.coordinate, c.value)
                    assert "source project" not in text, (ws.title, c.coordinate)
