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
PRICED = {**APPROVED, "budget_status": "Proposed", "usd_per_kwh": 0.12, "pue": 1.3}
PRICING = {
    3: {**PRICED, "scenario_name": "All-in", "pricing_basis": "rental all-in",
        "other_costs_usd": 250_000},
    4: {**PRICED, "scenario_name": "Owned", "pricing_basis": "owned"},
    5: {**PRICED, "scenario_name": "Plus power", "pricing_basis": "rental plus power",
        "other_costs_usd": 1e6},
    6: {**PRICED, "scenario_name": "Basis blank"},
}  # fmt: skip
#: Everything an approval needs; the amount is far above the plan's cost.
COMPLETE_APPROVAL = {"approval_ref": "FIN-2027-016", "approval_date": dt.datetime(2027, 1, 6),
                     "approver": "CFO", "approved_amount_usd": 5e8}  # fmt: skip
VARIANTS = {
    "fin-pricing.xlsx": (PRICING, 4),
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
            6: {**APPROVED, **COMPLETE_APPROVAL},
            7: {**APPROVED, **COMPLETE_APPROVAL, "approved_amount_usd": 1000},
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
    made = make_variants(generated_templates[PLANNER], tmp_path_factory.mktemp("finance"))
    done = recalculate(made, tmp_path_factory.mktemp("finance-out"))
    return {p.name: _values(p) for p in done}


def make_variants(src, folder):
    """Every variant of :data:`VARIANTS`, typed into copies of the planner ``src``: paths."""
    made = []
    for name, (plans, switch) in VARIANTS.items():
        wb = openpyxl.load_workbook(src)
        for k, plan in plans.items():
            type_plan(wb, k, plan)
        if switch is not None:
            ws, coord = planner_cell(wb, "active_scenario_switch", 0)
            ws[coord].value = switch
        wb.save(folder / name)
        made.append(folder / name)
    return made


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_the_finance_variants_compute_the_same_in_gnumeric(generated_templates, tmp_path):
    """The billions slip, a run of seconds, the approvals and the pricing bases: every formula
    cell equals LibreOffice's in Gnumeric (tests/test_engines.py's comparison)."""
    from helpers import require_soffice, require_ssconvert
    from test_engines import compare

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    made = make_variants(generated_templates[PLANNER], tmp_path)
    lo = {p.name: p for p in recalculate(made, tmp_path / "lo")}
    gn = {p.name: p for p in recalculate_gnumeric(made, tmp_path / "gn")}
    for path in made:
        n, differ = compare(path, lo[path.name], gn[path.name])
        assert n > 50 and not differ, (path.name, len(differ), differ[:6])


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
    shown = {summary.cell(r, 1).value: summary.cell(r, 3).value for r in range(1, 40)}
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


def test_approved_without_its_whole_approval_is_a_warn(finance_variants):
    wb = finance_variants["fin-approval.xlsx"]
    assert row_values(wb, "master_status") == ["WARN"]
    _, cols = _check(wb, "Approved has its reference, date, approver and approved amount")
    # Custom 1: nothing; Custom 2: reference and date; Custom 3: the reference only; Custom 4
    # and 5: all four (the hand-off counts the first three as Proposed)
    assert [is_true(v) for v in cols[3:8]] == [False, False, False, True, True]
    assert row_values(wb, "approval_ref")[4] == "FIN-2027-014"


def test_approved_over_its_amount_is_a_warn(finance_variants):
    wb = finance_variants["fin-approval.xlsx"]
    _, cols = _check(wb, "Approved: the total cost (P50) is within the approved amount")
    assert [is_true(v) for v in cols[3:8]] == [True, True, True, True, False]
    assert row_values(wb, "total_cost_usd")[7] > 1000  # Custom 5: approved for US$1,000
    all_cell, cols = _check(wb, "Approved amount > 0 (or blank)")
    assert is_true(all_cell)


def test_planner_and_handoff_agree_on_the_approvals(generated_templates, tmp_path):
    """The hand-off counts as Proposed exactly the columns the planner warns about."""
    from workbook_templates import report

    made = make_variants(generated_templates[PLANNER], tmp_path)
    (path,) = [p for p in made if p.name == "fin-approval.xlsx"]
    runs = sorted(report.consolidate([path]).budget_runs, key=lambda r: r.scenario.index)
    assert [r.status for r in runs] == ["Proposed"] * 3 + ["Approved"] * 2
    assert [bool(r.approval_missing) for r in runs] == [True] * 3 + [False] * 2


# -- 9. no hard-coded figures in the planner's formulas ----------------------------------------


def _formulas(wb):
    return [(ws.title, c.coordinate, c.value) for ws in wb.worksheets for row in ws.iter_rows()
            for c in row if isinstance(c.value, str) and c.value.startswith("=")]  # fmt: skip


def test_percentiles_statuses_and_steps_are_named_cells(generated_templates):
    import re

    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    formulas = _formulas(wb)
    for sheet, where, f in formulas:
        assert not re.search(r"NORM\.S\.INV\(0\.\d", f), (sheet, where, f)
        assert '"Reference"' not in f and "Proposed,Approved" not in f, (sheet, where, f)
    assert sum("NORM.S.INV(p90_level)" in f for _, _, f in formulas) >= 8
    assert sum("NORM.S.INV(p10_level)" in f for _, _, f in formulas) >= 8
    assert row_values(wb, "p10_level") == [0.1] and row_values(wb, "p90_level") == [0.9]
    assert row_values(wb, "budget_statuses") == ["Reference", "Proposed", "Approved", "Excluded"]
    (dv,) = [d for d in wb["Inputs"].data_validations.dataValidation if d.type == "list"
             and d.formula1 == "budget_statuses"]  # fmt: skip
    assert dv
    from workbook_templates.planner import SENS_ACCELERATORS, SENS_MFU, SENS_PRICE

    named = {"sens_steps_accelerators": SENS_ACCELERATORS, "sens_steps_mfu": SENS_MFU,
             "sens_steps_price": SENS_PRICE}  # fmt: skip
    for name, steps in named.items():
        assert tuple(row_values(wb, name)) == steps
    axes = [f for s, _, f in formulas if s == "Sensitivity" and "INDEX(sens_steps_" in f]
    assert len(axes) == 4 * 14
    assert not any(re.search(r"\*(0\.\d+|1\.\d+|2|4|8)\b", f) for s, _, f in formulas
                   if s == "Sensitivity" and "sens_steps" in f)  # fmt: skip


def test_the_default_mfu_is_three_rows_over_named_constants(generated_templates):
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws, coord = planner_cell(wb, "calibrated_mfu", 0)
    assert ws[coord].value.startswith("=IF(ISNUMBER(") and "MIN(mfu_max,MAX(mfu_min," in (
        ws[coord].value
    )
    ws, coord = planner_cell(wb, "calibrated_mfu_raw", 0)
    assert "mfu_ln_slope*LN(" in ws[coord].value
    ws, coord = planner_cell(wb, "mfu_ln_intercept_used", 0)
    assert "mfu_ln_intercept_other" in ws[coord].value
    ws, coord = planner_cell(wb, "mfu_used", 0)
    assert len(ws[coord].value) < 80, ws[coord].value  # typed, else the calibrated_mfu row


# -- 4. cost scope: the pricing basis and other costs ------------------------------------------


def test_the_pricing_basis_and_other_costs_equal_the_engine(finance_variants):
    wb = finance_variants["fin-pricing.xlsx"]
    assert row_values(wb, "master_status")[0] != "ERROR", row_values(wb, "master_cause")
    for k, plan in PRICING.items():
        want = estimate_scenario(plan)
        for q in PLAN_OUTPUTS:
            if q.name != "min_accelerators_for_memory":
                got = row_values(wb, q.name)[k]
                assert got == pytest.approx(want[q.name], rel=REL, abs=1e-9), (k, q.name)
        kwh_cost = row_values(wb, "electricity_cost_usd")[k]
        other = plan.get("other_costs_usd", 0)
        compute = row_values(wb, "compute_cost_usd")[k]
        assert row_values(wb, "total_cost_usd")[k] == pytest.approx(compute + kwh_cost + other)
        if plan.get("pricing_basis") == "rental all-in":  # the power is in the price
            assert kwh_cost == 0 and row_values(wb, "usd_per_kwh_used")[k] == 0
            assert row_values(wb, "electricity_kwh")[k] > 0  # still used, and its CO2
        else:
            assert kwh_cost == pytest.approx(row_values(wb, "electricity_kwh")[k] * 0.12)
    assert row_values(wb, "pricing_basis_used")[6] == "rental plus power"  # blank
    # P90 of the total: the point total (other costs included) plus the parts' moves
    from udfs import ranges
    from udfs.plan import resolve

    r = resolve(PRICING[5])
    point = estimate_scenario(PRICING[5])
    want = ranges.estimate_ranges(point, r.throughput_sigma, r.price_sigma)
    assert row_values(wb, "total_cost_usd_p90")[5] == pytest.approx(
        float(want["total_cost_usd"]["p90"]), rel=REL
    )


def test_an_unknown_pricing_basis_is_refused_and_an_error():
    from udfs.plan import resolve
    from udfs.validation import InputError

    with pytest.raises(InputError, match="pricing_basis must be one of rental all-in"):
        resolve({**PRICED, "pricing_basis": "leased"})
    with pytest.raises(InputError, match="other_costs_usd must be a number >= 0"):
        resolve({**PRICED, "other_costs_usd": -5})


def test_price_pue_overhead_and_kwh_defaults_say_their_source_or_bound():
    from udfs.quantities import PLAN_INPUTS

    notes = {q.name: q.note for q in PLAN_INPUTS}
    assert "arXiv 2412.19437, Dec 2024" in notes["usd_per_accelerator_hour"]
    assert "a lower bound" in notes["pue"] and "1.56 (2024)" in notes["pue"]
    assert "a lower bound" in notes["server_overhead"] and "1.82" in notes["server_overhead"]
    assert "without a source" in notes["usd_per_kwh"]


# -- 11. one set of states, colours and units ---------------------------------------------------


@pytest.mark.parametrize("name", [PLANNER, "cluster-sizing.xlsx", "dense-vs-moe.xlsx"])
def test_units_match_the_format_and_states_are_coloured(generated_templates, name):
    wb = openpyxl.load_workbook(generated_templates[name])
    for ws in wb.worksheets:
        for row in ws.iter_rows(max_col=2):
            for c in row:
                assert c.value != "fraction", (ws.title, c.coordinate)  # shown as %
    # every cell that shows the master check in words turns amber on WARN and red on ERROR
    shown = [(ws, c.coordinate) for ws in wb.worksheets if ws.title != "Checks"
             for row in ws.iter_rows() for c in row
             if isinstance(c.value, str) and ("master_status" in c.value or
                                              '"Checks: "&' in c.value)]  # fmt: skip
    assert shown, name
    for ws, coord in shown:
        rules = [r.formula[0] for rng in ws.conditional_formatting for r in rng.rules
                 if coord in str(rng.sqref)]  # fmt: skip
        assert any('SEARCH("WARN"' in f for f in rules), (ws.title, coord)
        assert any('SEARCH("ERROR"' in f for f in rules), (ws.title, coord)
    assert "master_status" in wb.defined_names
    cover = [c.value for row in wb["Cover"].iter_rows(max_col=1) for c in row]
    for word in ("MFU", "TFLOP/s", "Goodput", "P50 / P90", "Contingency"):
        assert word in cover, (name, word)


# -- 10. printing: the paper from a setting -----------------------------------------------------


def test_the_paper_follows_the_setting_then_the_locale():
    from workbook_templates.sheetkit import PAPER_ENV, paper_size

    assert paper_size({}) == "a4"
    assert paper_size({"LANG": "en_US.UTF-8"}) == "letter"
    assert paper_size({"LANG": "en_GB.UTF-8"}) == "a4"
    assert paper_size({"LC_PAPER": "fr_CA.UTF-8", "LANG": "de_DE.UTF-8"}) == "letter"
    assert paper_size({PAPER_ENV: "A4", "LANG": "en_US.UTF-8"}) == "a4"
    assert paper_size({PAPER_ENV: "letter"}) == "letter"


def test_templates_print_on_letter_when_asked(tmp_path, monkeypatch):
    from helpers import run_cli

    monkeypatch.setenv("COMPUTE_LAB_PAPER", "letter")
    code, _, err, _ = run_cli(["templates", "--out", str(tmp_path / "t")])
    assert code == 0, err
    wb = openpyxl.load_workbook(tmp_path / "t" / PLANNER)
    assert {int(ws.page_setup.paperSize) for ws in wb.worksheets} == {1}  # Letter
    monkeypatch.setenv("COMPUTE_LAB_PAPER", "legal")
    code, _, err, _ = run_cli(["templates", "--out", str(tmp_path / "u")])
    assert code == 2 and err.count("\n") == 1 and "COMPUTE_LAB_PAPER must be a4 or letter" in err
    assert not (tmp_path / "u").exists()


# -- 6. the Summary: no merged cells, headline figures in named number cells --------------------


def test_the_summary_has_no_merged_cells_and_named_headline_cells(generated_templates):
    from workbook_templates.planner.summary import HEADLINES

    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws = wb["Summary"]
    assert not ws.merged_cells.ranges, [str(m) for m in ws.merged_cells.ranges]
    assert set(HEADLINES) >= {"headline_total_cost_p50", "headline_total_cost_p90",
                              "headline_contingency_usd"}  # fmt: skip
    for name in HEADLINES:
        ((sheet, ref),) = wb.defined_names[name].destinations
        assert sheet == "Summary" and ":" not in ref, (name, ref)  # one cell
        cell = ws[ref.replace("$", "")]
        assert cell.data_type == "f" and cell.number_format.startswith(('"$"', "#,##0")), name


@pytest.mark.libreoffice
def test_the_headline_cells_hold_the_selected_scenarios_figures(recalculated_variants):
    wb = openpyxl.load_workbook(recalculated_variants["planner-typed.xlsx"], data_only=True)
    k = row_values(wb, "active_scenario")[0] - 1
    p50, p90 = row_values(wb, "total_cost_usd")[k], row_values(wb, "total_cost_usd_p90")[k]
    assert row_values(wb, "headline_total_cost_p50") == [pytest.approx(p50, rel=REL)]
    assert row_values(wb, "headline_total_cost_p90") == [pytest.approx(p90, rel=REL)]
    assert row_values(wb, "headline_contingency_usd") == [pytest.approx(p90 - p50, rel=REL)]
    hours = row_values(wb, "accelerator_hours")[k]
    assert row_values(wb, "headline_accelerator_hours") == [pytest.approx(hours, rel=REL)]


@pytest.mark.parametrize("name", [PLANNER, "cluster-sizing.xlsx", "dense-vs-moe.xlsx"])
def test_every_figure_shows_the_format_of_its_unit(generated_templates, name):
    """A number beside a unit in column B shows that unit's format (365 days reads 365.0 in all
    three workbooks; a fraction as %); parameters and tokens may show as 405.0B / 15.6T."""
    from workbook_templates.planner.layout import SIZE_FORMAT
    from workbook_templates.sheetkit import DISPLAY_UNITS, NUMBER_FORMATS

    shown = {v: k for k, v in DISPLAY_UNITS.items()}
    wb = openpyxl.load_workbook(generated_templates[name])
    for ws in wb.worksheets:
        for r in range(1, ws.max_row + 1):
            unit = shown.get(ws.cell(r, 2).value, ws.cell(r, 2).value)
            if unit not in NUMBER_FORMATS:
                continue
            for c in range(3, 12):
                cell = ws.cell(r, c)
                if cell.value is None and c > 4:
                    break  # the row's figures end (a list to the right is another table)
                if isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool):
                    assert cell.number_format.endswith(NUMBER_FORMATS[unit]) or (
                        cell.number_format == SIZE_FORMAT), (
                        name, ws.title, cell.coordinate, unit, cell.number_format)  # fmt: skip
