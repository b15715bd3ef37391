"""The planner's "Our runs" sheet (issue 17 item 6): filled by ``templates --own-runs``, typed
by hand, feeding the default MFU and its spread with native formulas equal to the engine's
(udfs.own_runs) after LibreOffice and Gnumeric; ``report`` reads the block and uses it."""

from __future__ import annotations

import math

import openpyxl
import pytest
from helpers import CUSTOM_PLAN, require_soffice, require_ssconvert, row_values, run_cli, type_plan
from helpers_portable import lint_workbook

from compute_lab.cli import parse_number
from udfs import calibration, own_runs
from udfs.plan import resolve
from udfs.quantities import PLAN_INPUTS
from workbook_templates.planner import own_runs as sheet
from workbook_templates.recalc import recalculate, recalculate_gnumeric

HEADER = "name,organisation,active_params,total_params,tokens,accelerator,accelerators,"
HEADER += "accelerator_hours\n"
#: Two H100 runs, one A100 run: an H100 plan is pulled by two, an A100 plan by one, a TPU plan
#: by none.
RUNS = HEADER + (
    "Ours 7B,Acme,7B,7B,2T,H100,512,120000\n"
    "Ours 13B,Acme,13B,13B,2T,H100 SXM,512,250000\n"
    "Ours A100 1B,Acme,1.2B,1.2B,500B,A100 SXM 80GB,64,15000\n"
)
#: Scenario column -> plan: blank MFU on each generation, a small model, a typed MFU.
PLANS = {
    3: {**CUSTOM_PLAN, "scenario_name": "H100 70B", "accelerator_name": "H100 SXM"},
    4: {**CUSTOM_PLAN, "scenario_name": "A100 3B", "accelerator_name": "A100 SXM 80GB",
        "total_params": 3e9, "active_params": None},
    5: {**CUSTOM_PLAN, "scenario_name": "TPU", "accelerator_name": "TPU v5p"},
    6: {**CUSTOM_PLAN, "scenario_name": "typed", "accelerator_name": "H800 SXM", "mfu": 0.3},
}  # fmt: skip
REL = 1e-9


def _hours(accelerator, mfu, active=7e9, tokens=2e12):
    from udfs import catalogue, engine

    peak = float(catalogue.accelerator(accelerator)["bf16_tflops"])
    return engine.accelerator_hours(engine.training_flops(active, tokens), peak * mfu)


#: Runs outside the calibrated generations: three MI300X runs at 20% MFU, six Gaudi 3 runs at
#: 98% (they pull a Gaudi 3 plan past the highest default MFU), one H100 run.
RUNS_OTHER = HEADER + "".join(
    [f"MI {i},Acme,7B,7B,2T,MI300X,512,{_hours('MI300X', 0.20):.4f}\n" for i in range(3)]
    + [f"G {i},,7B,7B,2T,Gaudi 3,512,{_hours('Gaudi 3', 0.98):.4f}\n" for i in range(6)]
    + ["H,acme,7B,7B,2T,H100 SXM,512,120000\n"]
)
#: Scenario column -> plan: on an uncalibrated accelerator with runs, one without (B200: not
#: pulled by the MI300X runs), one pulled past the bound, a calibrated generation.
PLANS_OTHER = {
    3: {**CUSTOM_PLAN, "scenario_name": "MI300X", "accelerator_name": "MI300X"},
    4: {**CUSTOM_PLAN, "scenario_name": "B200", "accelerator_name": "B200 (HGX)"},
    5: {**CUSTOM_PLAN, "scenario_name": "Gaudi", "accelerator_name": "Gaudi 3"},
    6: {**CUSTOM_PLAN, "scenario_name": "MI325X 3B", "accelerator_name": "MI325X",
        "total_params": 3e9, "active_params": None},
    7: {**CUSTOM_PLAN, "scenario_name": "H100", "accelerator_name": "H100 SXM"},
}  # fmt: skip


def _fill(folder, text, plans):
    csv = folder / "runs.csv"
    csv.write_text(text, encoding="utf-8")
    out = folder / "templates"
    code, _, err, _ = run_cli(["templates", "--out", out, "--own-runs", csv])
    assert code == 0, err
    wb = openpyxl.load_workbook(out / "training-run-planner.xlsx")
    for k, plan in plans.items():
        type_plan(wb, k, plan)
    path = folder / "planner.xlsx"
    wb.save(path)
    return folder, path, own_runs.read(csv, parse_number)


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """(templates folder, the filled planner with the plans typed, the own runs)."""
    return _fill(tmp_path_factory.mktemp("own"), RUNS, PLANS)


@pytest.fixture(scope="module")
def filled_other(tmp_path_factory):
    """As ``filled``, with runs and plans on accelerators outside the calibrated generations."""
    return _fill(tmp_path_factory.mktemp("own-other"), RUNS_OTHER, PLANS_OTHER)


def test_the_sheet_holds_the_file_and_its_formulas_are_portable(filled):
    _, path, runs = filled
    wb = openpyxl.load_workbook(path)
    ws = wb[sheet.TITLE]
    names = [c.value for c in ws["A"][sheet._TOP : sheet._TOP + 3]]
    assert names == ["Ours 7B", "Ours 13B", "Ours A100 1B"]
    assert ws.cell(sheet._TOP + 1, 3).value == 7e9
    assert not [line for line in lint_workbook(wb) if line.startswith(sheet.TITLE)]
    assert not [line for line in lint_workbook(wb) if "own_runs" in line]
    # the generations are told apart by their intercepts: distinct numbers
    icpt = calibration.default_mfu_model().intercepts
    assert len(set(icpt.values())) == len(icpt)
    assert runs.count == 3


def _check_against_engine(wb, runs, plans=PLANS):
    for k, plan in plans.items():
        inputs = {q.name: row_values(wb, q.name)[k] for q in PLAN_INPUTS}
        with_runs, without = resolve(inputs, own_runs=runs), resolve(inputs)
        got_mfu = row_values(wb, "mfu_used")[k]
        assert math.isclose(got_mfu, with_runs.arguments["mfu"], rel_tol=REL), plan
        got_sigma = row_values(wb, "throughput_sigma")[k]
        assert math.isclose(got_sigma, with_runs.throughput_sigma, rel_tol=REL), plan
        accel = plan["accelerator_name"]
        if plan.get("mfu") is None and runs.count_for(accel):
            assert got_mfu != pytest.approx(without.arguments["mfu"], rel=1e-6)
            assert with_runs.throughput_sigma < without.throughput_sigma
    # the block's own columns: each run's implied and default MFU, as the engine's
    residual = row_values(wb, "own_runs_residual")
    for i, want in enumerate(runs.table["residual"]):
        assert math.isclose(residual[i], want, rel_tol=REL, abs_tol=1e-12)
    assert all(v in (None, "") for v in residual[runs.count :])


def _check_other(wb, runs):
    """The planner pulls as the engine on uncalibrated accelerators: only by runs on the same
    accelerator, the extra spread narrowed, the Gaudi 3 plan kept at the highest MFU."""
    _check_against_engine(wb, runs, PLANS_OTHER)
    mfu, sigma = row_values(wb, "mfu_used"), row_values(wb, "throughput_sigma")
    for k in (4, 6):  # B200, MI325X: no run of theirs
        plain = resolve({q.name: row_values(wb, q.name)[k] for q in PLAN_INPUTS})
        assert math.isclose(mfu[k], plain.arguments["mfu"], rel_tol=REL)
        assert math.isclose(sigma[k], plain.throughput_sigma, rel_tol=REL)
    assert mfu[3] < row_values(wb, "calibrated_mfu")[3] - 0.02  # MI300X: pulled down
    assert mfu[5] == pytest.approx(calibration.MFU_MAX, rel=1e-12)  # Gaudi 3: at the bound
    assert float(runs.moved_mfu("Gaudi 3", 12e9)) > calibration.MFU_MAX


#: the two spreadsheet engines the pull is recalculated with: (what it needs, how it runs)
ENGINES = {
    "libreoffice": (require_soffice, recalculate),
    "gnumeric": (require_ssconvert, recalculate_gnumeric),
}


def _recalculated(engine, path, tmp_path):
    require, recalc = ENGINES[engine]
    require()
    (done,) = recalc([path], tmp_path)
    return openpyxl.load_workbook(done, data_only=True)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_spreadsheet_pulls_uncalibrated_accelerators_as_the_engine(
    engine, filled_other, tmp_path
):
    _, path, runs = filled_other
    _check_other(_recalculated(engine, path, tmp_path), runs)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_spreadsheet_recalculates_the_pull_as_the_engine(engine, filled, tmp_path):
    _, path, runs = filled
    _check_against_engine(_recalculated(engine, path, tmp_path), runs)


#: Twenty H100 runs: their pull would narrow the spread at 5B active below the narrowest the
#: small-model ramp allows (the spec's own_runs_narrowest_sigma), so P90 hours fell as a plan
#: grew from 4.9B to 5B (by 0.06%); plans around that knee, dense, all else the same.
RUNS_MANY = HEADER + "".join(f"R {i},Acme,7B,7B,2T,H100 SXM,512,120000\n" for i in range(20))
KNEE_SIZES = (4.5e9, 4.9e9, 4.99e9, 5e9, 5.1e9)
PLANS_KNEE = {
    3 + i: {**CUSTOM_PLAN, "scenario_name": f"{a / 1e9:g}B", "accelerator_name": "H100 SXM",
            "total_params": a, "active_params": None}
    for i, a in enumerate(KNEE_SIZES)
}  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
def test_with_many_runs_p90_hours_never_fall_as_the_model_grows(engine, tmp_path):
    """The planner narrows the spread as the engine (never below the narrowest the ramp
    allows at 5B), and its P90 hours rise with the model's size across the 5B knee."""
    _, path, runs = _fill(tmp_path, RUNS_MANY, PLANS_KNEE)
    wb = _recalculated(engine, path, tmp_path / "done")
    _check_against_engine(wb, runs, PLANS_KNEE)
    p90 = [row_values(wb, "accelerator_hours_p90")[k] for k in PLANS_KNEE]
    assert p90 == sorted(p90), p90


def test_an_empty_block_leaves_the_calibrated_default(tmp_path):
    """Without rows the formulas give the calibrated default exactly (no pull, no narrowing):
    the planner's other tests check those against the engine."""
    from workbook_templates.planner import build

    wb = build()
    assert all(v is None for v in row_values(wb, "own_run_name"))
    assert wb.defined_names["own_runs_k"] is not None


def test_report_reads_the_block_and_a_file_fills_in_where_there_is_none(filled, tmp_path):
    require_soffice()
    folder, path, runs = filled
    (done,) = recalculate([path], tmp_path)
    code, out, err, _ = run_cli(["report", done, "--csv", tmp_path / "csv"])
    assert code == 0, err
    assert "saved" not in err  # no saved value differs from the engine: the block was used
    # a planner without rows, given the file (report --own-runs): the same pull
    from workbook_templates.planner import build
    from workbook_templates.report.consolidate import consolidate_files

    plain = build()
    type_plan(plain, 3, PLANS[3])
    plain.save(tmp_path / "plain.xlsx")
    for given, want in ((None, calibration.predicted_mfu("H100 SXM", 12e9)),
                        (runs, runs.mfu("H100 SXM", 12e9))):  # fmt: skip
        got = consolidate_files([tmp_path / "plain.xlsx"], own_runs=given)
        run = next(r for r in got.runs if r.scenario.name == "H100 70B")
        assert run.resolved.arguments["mfu"] == pytest.approx(float(want), rel=1e-12)
    assert float(runs.mfu("H100 SXM", 12e9)) != pytest.approx(
        float(calibration.predicted_mfu("H100 SXM", 12e9)), rel=1e-6
    )


def test_a_bad_row_in_the_block_is_one_line_naming_the_sheet_row_and_column(filled, tmp_path):
    _, path, _ = filled
    wb = openpyxl.load_workbook(path)
    wb[sheet.TITLE].cell(sheet._TOP + 2, 6).value = "H900"
    bad = tmp_path / "bad.xlsx"
    wb.save(bad)
    code, _, err, _ = run_cli(["report", bad, "--csv", tmp_path / "csv"])
    assert code == 2
    assert "Our runs" in err and "row 8, column F (accelerator)" in err and "H900" in err
    assert len(err.strip().splitlines()) == 1


def test_templates_refuses_more_runs_than_the_block_holds(tmp_path):
    rows = "".join(f"r{i},Acme,7B,7B,2T,H100,512,120000\n" for i in range(sheet.MAX_ROWS + 1))
    csv = tmp_path / "many.csv"
    csv.write_text(HEADER + rows, encoding="utf-8")
    code, _, err, _ = run_cli(["templates", "--out", tmp_path / "t", "--own-runs", csv])
    assert code == 2 and "MAX_ROWS" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "t" / "training-run-planner.xlsx").exists()
