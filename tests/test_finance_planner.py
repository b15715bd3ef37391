"""Issue 18, the planner side: plausibility floors, defaults that look like defaults, approval
with a reference, the pricing basis and other costs, named figures in the formulas, one set of
states.

The variants below are the generated planner with plans typed as a user would; they are
recalculated together in one LibreOffice call (``finance_variants``).
"""

from __future__ import annotations

import datetime as dt

import openpyxl
import pytest
from helpers import PLANNER, is_true, planner_cell, row_values, type_plan

from udfs.plan import estimate_scenario
from udfs.quantities import PLAN_OUTPUTS

REL = 1e-9
START = dt.datetime(2027, 3, 10)

#: Parameters and tokens typed in billions (70 for 70 billion): a unit slip.
BILLIONS = {"scenario_name": "Billions slip", "total_params": 70, "training_tokens": 2000,
            "accelerators": 1024, "mfu": 0.35, "budget_status": "Proposed",
            "start_date": START}  # fmt: skip
#: A plausible run of seconds: its one month holds the whole run.
SHORT = {"scenario_name": "A run of seconds", "total_params": 2e7, "training_tokens": 1e9,
         "accelerators": 1024, "accelerator_name": "H100 SXM", "mfu": 0.35,
         "budget_status": "Proposed", "owner": "Team S",
         "start_date": START}  # fmt: skip

#: Variant file -> {scenario column k: plan}, and the switch (1-8) or None.
APPROVED = {**SHORT, "scenario_name": "Approved", "total_params": 7e10,
            "training_tokens": 2e12, "budget_status": "Approved"}  # fmt: skip
VARIANTS = {
    "fin-billions.xlsx": ({3: BILLIONS}, 4),
    "fin-short.xlsx": ({3: SHORT}, 4),
    "fin-approval.xlsx": (
        {
            3: APPROVED,
            4: {
                **APPROVED,
                "approval_ref": "FIN-2027-014",
                "approval_date": dt.datetime(2027, 1, 5),
            },
            5: {**APPROVED, "approval_ref": "FIN-2027-015"},
        },
        None,
    ),
}


def _values(path):
    return openpyxl.load_workbook(path, data_only=True)


@pytest.fixture(scope="module")
def finance_variants(generated_templates, tmp_path_factory):
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    folder = tmp_path_factory.mktemp("finance")
    made = []
    for name, (plans, switch) in VARIANTS.items():
        wb = openpyxl.load_workbook(generated_templates[PLANNER])
        for k, plan in plans.items():
            type_plan(wb, k, plan)
        if switch is not None:
            ws, coord = planner_cell(wb, "active_scenario_switch", 0)
            ws[coord].value = switch
        wb.save(folder / name)
        made.append(folder / name)
    done = recalculate(made, tmp_path_factory.mktemp("finance-out"))
    return {p.name: _values(p) for p in done}


def _checks(wb):
    """Check label -> (the "All" cell, the scenario cells) of the Checks sheet."""
    ws = wb["Checks"]
    out = {}
    for r in range(5, ws.max_row + 1):
        label = ws.cell(r, 1).value
        if isinstance(label, str):
            out[label] = (ws.cell(r, 3).value, [ws.cell(r, c).value for c in range(4, 12)])
    return out


def _check(wb, start):
    (hit,) = [v for label, v in _checks(wb).items() if label.startswith(start)]
    return hit


# -- 1. plausibility floors, the master check's cause, a run of seconds ----------------------


def test_parameters_typed_in_billions_are_an_error_naming_the_cells(finance_variants):
    wb = finance_variants["fin-billions.xlsx"]
    assert row_values(wb, "master_status") == ["ERROR"]
    cause = row_values(wb, "master_cause")[0]
    assert cause.startswith("Total and active parameters >= 1E6 (Inputs rows"), cause
    assert "70E9" in cause and "Billions slip" in cause
    params_all, params = _check(wb, "Total and active parameters >= 1E6")
    tokens_all, tokens = _check(wb, "Training tokens >= 1E9")
    assert not is_true(params_all) and not is_true(tokens_all)
    assert [is_true(v) for v in params] == [True] * 3 + [False] + [True] * 4
    assert [is_true(v) for v in tokens] == [True] * 3 + [False] + [True] * 4
    # the schedule is not blamed: the real cause is the unit slip
    assert is_true(_check(wb, "Monthly schedule holds the whole run")[0])
    summary = wb["Summary"]
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 12)}
    assert shown["Checks"].startswith("ERROR: Total and active parameters"), shown["Checks"]
    cover = [c.value for row in wb["Cover"].iter_rows() for c in row if isinstance(c.value, str)]
    assert any(v.startswith("ERROR: Total and active parameters") for v in cover)


def test_the_floors_are_named_cells_on_inputs(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    assert row_values(wb, "min_plausible_params") == [1e6]
    assert row_values(wb, "min_plausible_tokens") == [1e9]
    formulas = [c.value for row in wb["Checks"].iter_rows() for c in row
                if isinstance(c.value, str) and c.value.startswith("=")]  # fmt: skip
    assert any("min_plausible_params" in f for f in formulas)
    assert not any("1E6" in f or "1E9" in f.replace("1E-9", "") for f in formulas)


def test_a_run_of_seconds_has_its_month_and_passes(finance_variants):
    wb = finance_variants["fin-short.xlsx"]
    assert row_values(wb, "master_status")[0] != "ERROR", row_values(wb, "master_cause")
    want = estimate_scenario(SHORT)
    assert want["wall_clock_days"] < 1e-5  # seconds
    got = row_values(wb, "total_cost_usd")[3]
    assert got == pytest.approx(want["total_cost_usd"], rel=REL)
    shares = [v for v in row_values(wb, "monthly_share") if isinstance(v, (int, float))]
    assert shares[0] == pytest.approx(1.0, abs=1e-12) and sum(shares) == pytest.approx(1.0)
    month = row_values(wb, "monthly_month")[0]
    assert (month.year, month.month) == (2027, 3)
    assert row_values(wb, "monthly_total_cost_usd")[0] == pytest.approx(
        want["total_cost_usd"], rel=REL
    )
    for q in PLAN_OUTPUTS:
        if q.name != "min_accelerators_for_memory":
            assert row_values(wb, q.name)[3] == pytest.approx(want[q.name], rel=REL), q.name


# -- 2. defaults are visibly defaults; 3. approval with a reference ---------------------------


def test_custom_columns_start_blank_but_for_name_and_accelerator(generated_templates):
    from udfs.quantities import PLAN_INPUTS

    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    for k in range(3, 8):
        typed = {q.name: row_values(wb, q.name)[k] for q in PLAN_INPUTS}
        assert typed.pop("scenario_name") == f"Custom {k - 2}"
        assert typed.pop("accelerator_name") == "H100 SXM"
        assert all(v is None for v in typed.values()), typed  # no $2.00/h, no start date


def test_defaults_in_use_show_greyed_on_calculations(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws = wb["Calculations"]
    grey = {}
    for rng in ws.conditional_formatting:
        for rule in rng.rules:
            if rule.dxf and rule.dxf.font is not None and rule.dxf.font.i:
                grey[str(rng.sqref).split(":")[0]] = rule.formula[0]
    for name in ("usd_per_accelerator_hour", "pue", "usd_per_kwh", "goodput"):
        ((_, ref),) = wb.defined_names[f"{name}_used"].destinations
        first = ref.replace("$", "").split(":")[0]
        ((_, inp),) = wb.defined_names[name].destinations
        assert grey[first] == f"ISBLANK(Inputs!{inp.replace('$', '').split(':')[0]})", name


def test_approved_without_reference_and_date_is_a_warn(finance_variants):
    wb = finance_variants["fin-approval.xlsx"]
    assert row_values(wb, "master_status") == ["WARN"]
    _, cols = _check(wb, "Approved has an approval reference and date")
    # Custom 1: Approved without either; Custom 2: with both; Custom 3: the reference only
    assert [is_true(v) for v in cols[3:6]] == [False, True, False]
    assert row_values(wb, "approval_ref")[4] == "FIN-2027-014"
