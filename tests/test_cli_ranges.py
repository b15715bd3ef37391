"""The command line and the one plan resolution (issue 9), ranges and the runs table (issue 11).

- ``estimate`` resolves its plan with ``udfs.plan.resolve``: the same total cost as
  ``udfs.plan.estimate_scenario`` (and so as the planner, tests/test_templates.py) for the
  same planner inputs;
- P10-P90 lines and ``"ranges"`` equal ``udfs.ranges.estimate_ranges`` of the point estimate
  with resolve's spreads; P10 <= P50 <= P90 and P50 is the point estimate (hypothesis);
- ``runs`` prints the default MFU's grouped-validation table (each organisation left out in
  turn), and its figures are recomputed here from ``udfs.calibration.fit`` without the
  module's own validation code.
"""

import csv
import io
import json
import math
import re

import numpy as np
import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute_lab.cli import main
from compute_lab.figures import RANGE_LINES
from udfs import calibration
from udfs.plan import estimate_scenario, resolve
from udfs.ranges import estimate_ranges

#: The issue's plan (70B dense, 2T tokens, 1,024 x H100), every other input left out; the
#: planner side of it is tests/test_templates.py::test_a_blank_plan_totals_the_same_...
ISSUE_ARGV = ["--accelerator", "H100", "--total-params", "70B", "--tokens", "2T",
              "--accelerators", "1024"]  # fmt: skip
ISSUE_PLAN = {
    "total_params": 70e9,
    "training_tokens": 2e12,
    "accelerators": 1024.0,
    "accelerator_name": "H100 SXM",
}


def _refuse(constant):
    raise AssertionError(f"not strict JSON: {constant}")


def estimate_json(capsys, *argv):
    assert main(["estimate", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out, parse_constant=_refuse)


def estimate_text(capsys, *argv):
    assert main(["estimate", *argv]) == 0
    return capsys.readouterr().out


# -- one plan resolution ------------------------------------------------------------------------


def test_the_70b_plan_costs_the_same_as_the_planner_and_the_hand_off(capsys):
    d = estimate_json(capsys, *ISSUE_ARGV)
    assert d["plan_inputs"] == ISSUE_PLAN
    want = estimate_scenario(ISSUE_PLAN)  # what the planner computes after LibreOffice
    assert d["total_cost_usd"] == pytest.approx(want["total_cost_usd"], rel=1e-9, abs=0)
    for key in ("accelerator_hours", "compute_cost_usd", "electricity_cost_usd", "co2_tonnes"):
        assert d[key] == pytest.approx(want[key], rel=1e-9, abs=0), key
    assert d["inputs"]["usd_per_kwh"] == 0.08 and d["electricity_cost_usd"] > 0


def test_the_notes_are_resolves_notes(capsys):
    d = estimate_json(capsys, *ISSUE_ARGV)
    r = resolve(ISSUE_PLAN)
    want = [
        {"name": n.name, "value": n.value, "why": n.why}
        for n in r.notes
        if n.name != "budget_status"  # the command line has no budget view
    ]
    got = [{k: n[k] for k in ("name", "value", "why")} for n in d["notes"]]
    assert got == want
    assert all(n["flag"].startswith("--") for n in d["notes"])
    assert d["inputs"] == r.arguments
    assert d["throughput_source"] == r.throughput_source == "calibrated default"
    out = estimate_text(capsys, *ISSUE_ARGV)
    notes = [line for line in out.splitlines() if line.startswith("  note: ")]
    assert len(notes) == len(want)
    assert "  note: --usd-per-kwh 0.08: not given: electricity priced at the default" in out


def test_typed_flags_are_not_defaulted(capsys):
    d = estimate_json(capsys, *ISSUE_ARGV, "--mfu", "40%", "--watts", "650", "--usd-per-kwh", "0")
    assert d["inputs"]["mfu"] == 0.4 and d["inputs"]["watts_per_accelerator"] == 650
    assert {"mfu", "watts_per_accelerator", "usd_per_kwh"}.isdisjoint(n["name"] for n in d["notes"])
    assert d["total_cost_usd"] == pytest.approx(d["compute_cost_usd"], rel=1e-12)
    plan = {**ISSUE_PLAN, "mfu": 0.4, "watts_per_accelerator": 650.0, "usd_per_kwh": 0.0}
    assert d["total_cost_usd"] == pytest.approx(estimate_scenario(plan)["total_cost_usd"], 1e-12)


# -- ranges -------------------------------------------------------------------------------------


def _want_ranges(d):
    want = estimate_ranges(d, d["throughput_sigma"], d["price_sigma"])
    return {q: {k: float(v) for k, v in want[q].items()} for q in RANGE_LINES}


def test_the_calibrated_default_has_ranges(capsys):
    argv = ["--accelerator", "H100", "--total-params", "70B", "--tokens", "15T",
            "--accelerators", "8192"]  # fmt: skip
    d = estimate_json(capsys, *argv)
    assert d["throughput_source"] == "calibrated default"
    assert d["throughput_sigma"] == pytest.approx(calibration.throughput_sigma(), rel=1e-12)
    assert set(d["ranges"]) == {"accelerator_hours", "wall_clock_days", "compute_cost_usd",
                                "electricity_kwh", "total_cost_usd"}  # fmt: skip
    assert d["ranges"] == _want_ranges(d)
    for q, r in d["ranges"].items():
        assert r["p10"] < r["p50"] == d[q] < r["p90"], q
    out = estimate_text(capsys, *argv)
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if ", P10-P90: " in line)
    assert lines[:first][-1] == ""  # after the existing lines, set apart
    for q, (label, fmt) in RANGE_LINES.items():
        low, high = (fmt.format(d["ranges"][q][k]) for k in ("p10", "p90"))
        line = f"{label}, P10-P90: {low.removesuffix(' kWh')} to {high}"
        assert line in lines, line


def test_a_typed_throughput_keeps_the_calibrated_range_unless_one_is_given(capsys):
    d = estimate_json(capsys, *ISSUE_ARGV, "--mfu", "0.4")
    assert d["throughput_sigma"] == pytest.approx(calibration.throughput_sigma(), rel=1e-12)
    assert d["ranges"] == _want_ranges(d)
    assert d["ranges"]["total_cost_usd"]["p90"] > d["total_cost_usd"]  # never a silent $0
    assert ", P10-P90" in estimate_text(capsys, *ISSUE_ARGV, "--mfu", "0.4")
    d = estimate_json(capsys, *ISSUE_ARGV, "--mfu", "0.4", "--throughput-range", "0")
    assert d["throughput_sigma"] == 0 and d["price_sigma"] == 0 and "ranges" not in d
    d = estimate_json(capsys, *ISSUE_ARGV, "--mfu", "0.4", "--throughput-range", "15%")
    hours = d["ranges"]["accelerator_hours"]
    assert hours["p90"] / hours["p50"] == pytest.approx(1.15, rel=1e-12)
    assert hours["p50"] / hours["p10"] == pytest.approx(1.15, rel=1e-12)
    assert d["ranges"] == _want_ranges(d)


def test_the_price_range_widens_the_cost_only(capsys):
    d = estimate_json(capsys, "--effective-tflops", "400", "--price-range", "0.2",
                      "--throughput-range", "0")  # fmt: skip
    assert d["throughput_sigma"] == 0 and d["price_sigma"] > 0
    r = d["ranges"]
    assert r["accelerator_hours"]["p10"] == r["accelerator_hours"]["p90"]
    assert r["compute_cost_usd"]["p90"] / d["compute_cost_usd"] == pytest.approx(1.2, rel=1e-12)
    assert r == _want_ranges(d)


def test_the_example_plan_keeps_its_six_lines_and_its_typed_throughput_keeps_a_range(capsys):
    from udfs.quantities import SEED_OUTPUT_LINES

    out = estimate_text(capsys)
    assert out.splitlines()[:6] == list(SEED_OUTPUT_LINES)
    assert "Accelerator-hours, P10-P90: " in out  # the example's 400 TFLOP/s is an estimate
    out = estimate_text(capsys, "--throughput-range", "10%")
    assert out.splitlines()[:6] == list(SEED_OUTPUT_LINES)
    assert "Accelerator-hours, P10-P90: 2,074,242 to 2,509,833" in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--throughput-range", "-1"], "--throughput-range must be 0 or more (got -1)"),
        (["--price-range", "-5%"], "--price-range must be 0 or more (got -0.05)"),
        (["--throughput-range", "15"], "--throughput-range must be at most 10 (1000%)"),
        (["--price-range", "wide"], "argument --price-range: must be a fraction such as 0.15"),
        (["--throughput-range", "inf"], "argument --throughput-range: must be a fraction"),
    ],
)
def test_range_flags_are_validated(capsys, argv, needle):
    assert main(["estimate", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.splitlines()) == 1, err


def test_range_flags_are_documented(capsys):
    assert main(["estimate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--throughput-range PCT" in text and "--price-range PCT" in text
    assert "P90 / P50 - 1" in text


ACCELERATORS = ("H100", "A100 SXM 80GB", "TPU v4", "B200", "MI300X")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    total=st.floats(1e8, 2e12),
    tokens=st.floats(1e9, 5e13),
    accelerators=st.integers(1, 100_000),
    accelerator=st.sampled_from(ACCELERATORS),
    mfu=st.none() | st.floats(0.05, 0.7),
    throughput_range=st.none() | st.just(0.0) | st.floats(1e-6, 2),
    price_range=st.none() | st.just(0.0) | st.floats(1e-6, 2),
)
def test_ranges_are_ordered_around_the_point(
    capsys, total, tokens, accelerators, accelerator, mfu, throughput_range, price_range
):
    argv = ["--accelerator", accelerator, "--total-params", repr(total), "--tokens",
            repr(tokens), "--accelerators", str(accelerators)]  # fmt: skip
    for flag, value in (("--mfu", mfu), ("--throughput-range", throughput_range),
                        ("--price-range", price_range)):  # fmt: skip
        if value is not None:
            argv += [flag, repr(value)]
    d = estimate_json(capsys, *argv)
    applies = d["throughput_sigma"] > 0 or d["price_sigma"] > 0
    assert ("ranges" in d) == applies
    spread = True if throughput_range is None else throughput_range > 0  # typed MFU too
    assert applies == (spread or bool(price_range))
    if not applies:
        return
    assert d["ranges"] == _want_ranges(d)
    for q, r in d["ranges"].items():
        assert r["p50"] == d[q], q  # P50 is the point estimate, exactly
        assert r["p10"] <= r["p50"] <= r["p90"], q
        assert all(math.isfinite(v) for v in r.values())


# -- the runs table -----------------------------------------------------------------------------


def _recomputed_grouped():
    """Grouped validation of the chosen default, from calibration.fit and the 6N formula only."""
    t = calibration.calibration_set()
    model = calibration.chosen_model()
    rows = []
    for i in range(len(t)):
        run = t.iloc[i]
        m = calibration.fit(model, t[t["organisation"] != run["organisation"]])
        mfu = float(m.predict(run["generation"], run["active_params"]))
        hours = run["model_training_flops"] / (run["peak_tflops"] * mfu * 1e12) / 3600
        rows.append((run["run"], run["implied_mfu"], mfu, run["disclosed_accelerator_hours"],
                     hours, 100 * (hours / run["disclosed_accelerator_hours"] - 1)))  # fmt: skip
    return rows


def _sigma(log_errors):
    return float(np.quantile(np.abs(log_errors), 0.85)) / 1.2815515655446004


def _run_sigmas(log_errors):
    """Each run's spread: wider below 5B active (the extra ramping in over ln(active), all of
    it at 1B and below) and off the calibrated generations."""
    t = calibration.calibration_set()
    share = np.clip(np.log(5e9 / t["active_params"].to_numpy(float)) / math.log(5), 0, 1)
    small, known = share > 0, (t["generation"] != "other").to_numpy()
    base = _sigma(log_errors[~small & known])
    pick = small & known
    need = np.sqrt(
        np.maximum(0.0, (log_errors[pick] / 1.2815515655446004) ** 2 - base**2) / share[pick]
    )
    extra = float(np.quantile(need, 0.85))
    other = calibration.fitted()["other_accelerator_sigma"]
    return np.sqrt(base**2 + share * extra**2 + ~known * other**2)


def test_runs_prints_the_grouped_validation_table_recomputed(capsys):
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 100
    rows = _recomputed_grouped()
    errors = np.array([r[5] for r in rows])
    log_errors = np.log(np.array([r[3] / r[4] for r in rows]))
    inside = np.abs(log_errors) <= 1.2815515655446004 * _run_sigmas(log_errors)
    for (run, implied, mfu, disclosed, hours, error), ok in zip(rows, inside, strict=True):
        cells = (f"{implied:.1%}", f"{mfu:.1%}", f"{disclosed:,.0f}", f"{hours:,.0f}",
                 f"{error:+.0f}%", "yes" if ok else "no")  # fmt: skip
        pattern = re.escape(run) + r"\s+.*" + r"\s+".join(map(re.escape, cells)) + r"\s*$"
        assert re.search(pattern, out, re.M), (run, cells)
    text = " ".join(out.split())
    assert f"median |error| {np.median(np.abs(errors)):.1f}%" in text
    assert f"mean ln(disclosed / predicted) {np.mean(log_errors):+.3f}" in text
    assert f"inside P10..P90 for {np.mean(inside):.0%} of the {len(rows)} runs" in text
    orgs = calibration.calibration_set()["organisation"].nunique()
    assert f"of the {len(rows)} runs from {orgs} organisations" in text
    legacy = []
    t = calibration.calibration_set()
    for _, run in t.iterrows():
        hours = run["model_training_flops"] / (run["peak_tflops"] * 0.304 * 1e12) / 3600
        legacy.append(hours / run["disclosed_accelerator_hours"] - 1)
    legacy = np.array(legacy)
    legacy_log = -np.log(1 + legacy)
    legacy_inside = np.mean(np.abs(legacy_log) <= 1.2815515655446004 * _run_sigmas(legacy_log))
    assert (
        f"The former constant MFU 30.4%: median |error| {np.median(np.abs(legacy)) * 100:.1f}%, "
        f"inside P10..P90 {legacy_inside:.0%}" in text
    )
    loo = calibration.loo_summary()
    assert f"Leave-one-out (a run's organisation stays in the fit): median |error| " \
           f"{loo['median_abs_error_pct']:.1f}%" in text  # fmt: skip
    # the hindsight constant (labelled), the choice's stability, and own runs on the catalogue,
    # each recomputed (not read from the stored file)
    mfu, hind = calibration.hindsight_constant()
    assert f"the best fixed MFU is {mfu:.1%}: median |error| " \
           f"{hind['median_abs_error_pct']:.1f}%" in text  # fmt: skip
    stability = calibration.choice_stability()
    share = np.mean([v == calibration.chosen_model() for v in stability.values()])
    assert f"agrees {share:.0%} of the time" in text
    own = calibration.own_runs_validation()
    assert f"mean |ln error| {own['mean_abs_log_error_before']:.3f} -> " \
           f"{own['mean_abs_log_error_after']:.3f}" in text  # fmt: skip


def test_runs_json_and_csv_carry_the_same_columns(capsys):
    from compute_lab.tables import RUNS_COLUMNS

    assert main(["runs", "--json"]) == 0
    records = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert main(["runs", "--csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [list(r) for r in records] == [list(RUNS_COLUMNS)] * len(records)
    assert list(table[0]) == list(RUNS_COLUMNS) and len(table) == len(records)
    rows = {r[0]: r for r in _recomputed_grouped()}
    for rec in records:
        _, implied, mfu, disclosed, hours, error = rows[rec["run"]]
        assert rec["predicted_mfu"] == pytest.approx(mfu, rel=1e-9)
        assert rec["predicted_accelerator_hours"] == pytest.approx(hours, rel=1e-9)
        assert rec["error_pct"] == pytest.approx(error, rel=1e-9, abs=1e-9)
        assert rec["disclosed_accelerator_hours"] == disclosed


def _planner_cell(wb, name, k):
    """Worksheet and coordinate of scenario column ``k`` (0-based) of defined name ``name``."""
    ((sheet, ref),) = wb.defined_names[name].destinations
    first = ref.replace("$", "").split(":")[0]
    column, row = openpyxl.utils.cell.coordinate_from_string(first)
    column = openpyxl.utils.column_index_from_string(column) + k
    return wb[sheet], f"{openpyxl.utils.get_column_letter(column)}{row}"


@pytest.mark.libreoffice
def test_the_70b_plan_on_the_command_line_equals_the_planner_after_libreoffice(
    capsys, generated_templates, tmp_path
):
    """The CLI side of tests/test_templates.py's 70B plan: the same planner inputs typed into
    the planner's Custom 1 column, recalculated by LibreOffice, give the command line's total
    cost and P10 / P90 to 1e-9."""
    import os

    from udfs.quantities import PLAN_INPUTS
    from workbook_templates.recalc import find_soffice, recalculate

    if find_soffice() is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is required when CI is set")
        pytest.skip("LibreOffice (soffice) is not installed")
    d = estimate_json(capsys, *ISSUE_ARGV)
    wb = openpyxl.load_workbook(generated_templates["training-run-planner.xlsx"])
    k = 3  # Custom 1
    for q in PLAN_INPUTS:
        ws, coord = _planner_cell(wb, q.name, k)
        ws[coord].value = d["plan_inputs"].get(q.name)
    wb.save(tmp_path / "cli.xlsx")
    (done,) = recalculate([tmp_path / "cli.xlsx"], tmp_path / "out")
    got = openpyxl.load_workbook(done, data_only=True)

    def cell(name):
        ws, coord = _planner_cell(got, name, k)
        return ws[coord].value

    assert cell("total_cost_usd") == pytest.approx(d["total_cost_usd"], rel=1e-9, abs=0)
    for q, r in d["ranges"].items():
        for p in ("p10", "p90"):
            assert cell(f"{q}_{p}") == pytest.approx(r[p], rel=1e-9, abs=0), (q, p)
