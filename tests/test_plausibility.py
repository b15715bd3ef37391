"""One plausibility rule for parameters and tokens on every face.

A count below its floor (``udfs.quantities.MIN_PLAUSIBLE``: 1e6 parameters, 1e9 tokens) was
typed in the wrong unit (70 for 70 billion). The engine's estimate, the command line, the
Excel functions, the planner's Checks (recalculated by LibreOffice) and the hand-off refuse
it with the same advice (:func:`udfs.validation.implausible_rule`); exactly at the floor, all
of them accept it.
"""

from __future__ import annotations

import json

import numpy as np
import openpyxl
import pytest
from helpers import is_true, run_cli
from test_report_fixtures import PLAN_B, PLANNER, fill

from compute_lab.cli import main
from udfs import engine
from udfs import excel as x
from udfs._cells import CellError
from udfs.quantities import MIN_PLAUSIBLE
from udfs.validation import InputError, implausible_rule, plausibility_advice

ISSUE = ["estimate", "--total-params", "70", "--tokens", "2T", "--accelerators", "1024",
         "--accelerator", "H100"]  # fmt: skip
FLOOR_PARAMS, FLOOR_TOKENS = MIN_PLAUSIBLE["total_params"], MIN_PLAUSIBLE["training_tokens"]
JUST_BELOW_PARAMS = np.nextafter(FLOOR_PARAMS, 0)


def test_the_advice_names_the_likely_slip():
    assert implausible_rule("total_params", 70) == (
        "is below 1e6, too few for a run planned on a cluster: was it typed in billions? "
        "(70 billion is 7e+10; type the full number, e.g. 70E9)"
    )
    tokens = implausible_rule("training_tokens", 2)
    assert "typed in billions or trillions?" in tokens
    assert "(2 billion is 2e+09, 2 trillion is 2e+12;" in tokens
    # a reading past any plan's figures (1e15) is not offered
    assert "trillion is" not in implausible_rule("training_tokens", 2000)


# -- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_the_issues_command_is_refused_naming_the_flag(json_flag):
    rc, out, err, caught = run_cli([*ISSUE, *json_flag])
    assert rc == 2 and out == "" and not caught
    assert err.splitlines() == [
        f"compute-lab estimate: error: --total-params {implausible_rule('total_params', 70)} "
        "(got 70)"
    ]


@pytest.mark.parametrize(
    ("flags", "flag", "quantity", "value"),
    [
        (["--total-params", "70B", "--active-params", "37"], "--active-params", "active_params",
         37),
        (["--total-params", "70B", "--tokens", "2000"], "--tokens", "training_tokens", 2000),
        (["--total-params", "70B", "--training-tokens", "15.6"], "--training-tokens",
         "training_tokens", 15.6),
        (["--preset", "llama-3.1-405b", "--total-params", "405"], "--total-params",
         "total_params", 405),
        (["--total-params", repr(float(JUST_BELOW_PARAMS))], "--total-params", "total_params",
         JUST_BELOW_PARAMS),
    ],
)  # fmt: skip
def test_each_count_below_its_floor_is_refused(flags, flag, quantity, value):
    rc, out, err, _ = run_cli(["estimate", *flags, "--accelerators", "1024",
                               "--accelerator", "H100"])  # fmt: skip
    (line,) = err.splitlines()
    assert rc == 2 and out == ""
    assert line.startswith(f"compute-lab estimate: error: {flag} is below 1e")
    assert implausible_rule(quantity, value) in line


def test_zero_and_negatives_keep_their_own_rule():
    rc, _, err, _ = run_cli(["estimate", "--total-params", "0", "--tokens", "2T"])
    assert rc == 2 and "--total-params must be greater than 0 (got 0)" in err


def test_exactly_at_the_floors_a_plan_is_estimated_and_printed_without_a_misleading_zero():
    argv = ["estimate", "--total-params", "1e6", "--tokens", "1e9", "--accelerators", "1024",
            "--accelerator", "H100"]  # fmt: skip
    rc, out, err, _ = run_cli(argv)
    assert rc == 0 and "error" not in err
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["Accelerator-hours"] == "0.017" and lines["Total cost"] == "$0.035"
    assert not any(v in ("0", "$0", "0.0 GB") for v in lines.values()), lines
    rc, out, _, _ = run_cli([*argv, "--json"])
    assert rc == 0 and json.loads(out)["accelerator_hours"] > 0


# -- the engine ----------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [None, 3, 50])  # one plan; a few (one by one); an array
def test_the_engine_refuses_it_on_every_path(n):
    bad = 70.0 if n is None else np.full(n, 70e9)
    if n is not None:
        bad[-1] = 70.0
    with pytest.raises(InputError) as info:
        engine.estimate(bad, 2e12, 1024, effective_tflops=400.0)
    err = info.value
    assert err.argument == "total_params" and err.value == 70.0
    assert err.rule == implausible_rule("total_params", 70.0)
    assert err.position == (None if n is None else (n - 1,))
    engine.estimate(FLOOR_PARAMS, FLOOR_TOKENS, 8, effective_tflops=400.0)  # at the floors


# -- the Excel functions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "argument", "quantity"),
    [
        (lambda: x.TRAIN_DAYS(70, 2e12, 1024, 400), "active_params", "active_params"),
        (lambda: x.TRAIN_FLOPS(37e9, 70), "tokens", "training_tokens"),
        (lambda: x.TRAIN_ACCEL_HOURS(70, 2e12, 400), "active_params", "active_params"),
        (lambda: x.TRAIN_COST(70, 2e12, 400, 2), "active_params", "active_params"),
        (lambda: x.TRAIN_KWH(37e9, 70, 400), "tokens", "training_tokens"),
        (lambda: x.CHECKPOINT_GB(70), "total_params", "total_params"),
        (lambda: x.MIN_ACCELS_FOR_MEMORY(70, 80), "total_params", "total_params"),
        (lambda: x.CHINCHILLA_TOKENS(70), "params", "total_params"),
        (lambda: x.TRAIN_PLAN(70, 70, 2e12, 1024, 400, 2), "total_params", "total_params"),
        (lambda: x.TRAIN_PLAN(70e9, 70e9, 70, 1024, 400, 2), "tokens", "training_tokens"),
        (lambda: x.TRAIN_QUANTILE("total_cost_usd", 0.9, 70, 70, 2e12, 1024, "H100"),
         "total_params", "total_params"),
        (lambda: x.TRAIN_PLAN_RANGE(70e9, 70, 2e12, 1024, "H100"), "active_params",
         "active_params"),
    ],
)  # fmt: skip
def test_every_excel_function_gives_an_error_naming_the_argument(call, argument, quantity):
    with pytest.raises(CellError) as info:
        call()
    message = str(info.value)
    assert f": {argument} {implausible_rule(quantity, 70)} (got 70)" in message, message


def test_one_bad_cell_in_a_range_is_named_by_its_row():
    column = [[37e9], [70e9], [70], [8e9]]
    with pytest.raises(CellError) as info:
        x.TRAIN_DAYS(column, 2e12, 1024, 400)
    assert "TRAIN_DAYS: active_params at row 3, column 1 is below 1e6" in str(info.value)
    with pytest.raises(CellError) as info:
        x.TRAIN_QUANTILE("total_cost_usd", 0.9, 70e9, 70e9, [[2e12], [15.6]], 1024, "H100")
    assert "TRAIN_QUANTILE: tokens at row 2, column 1 is below 1e9" in str(info.value)


def test_excel_functions_take_the_floors_themselves():
    assert x.TRAIN_DAYS(FLOOR_PARAMS, FLOOR_TOKENS, 1, 400) > 0
    assert x.TRAIN_PLAN(FLOOR_PARAMS, FLOOR_PARAMS, FLOOR_TOKENS, 8, 400, 2)[3][1] > 0
    with pytest.raises(CellError, match="below 1e6"):
        x.CHECKPOINT_GB(float(JUST_BELOW_PARAMS))


# -- the planner's Checks and the hand-off --------------------------------------------------------


@pytest.fixture(scope="module")
def floors(generated_templates, tmp_path_factory):
    """Two planners, one plan each: exactly at the floors, and one parameter below; their
    LibreOffice recalculations."""
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    folder = tmp_path_factory.mktemp("floors")
    at = {**PLAN_B, "scenario_name": "At the floors", "total_params": FLOOR_PARAMS,
          "training_tokens": FLOOR_TOKENS}  # fmt: skip
    below = {**at, "scenario_name": "Below", "total_params": FLOOR_PARAMS - 1}
    made = [fill(generated_templates[PLANNER], folder / "at.xlsx", [at]),
            fill(generated_templates[PLANNER], folder / "below.xlsx", [below])]  # fmt: skip
    done = {p.name: p for p in recalculate(made, folder / "lo")}
    return {p.name: (p, done[p.name]) for p in made}


def _floor_check(path):
    """The planner's own verdict (LibreOffice's values) on the parameters' floor: the check's
    value in scenario column 1, and the master cause."""
    wb = openpyxl.load_workbook(path, data_only=True)
    ws = wb["Checks"]
    start = "Total and active parameters >= 1E6"
    (row,) = [r for r in range(1, ws.max_row + 1) if str(ws.cell(r, 1).value).startswith(start)]
    label = ws.cell(row, 1).value
    ((sheet, ref),) = wb.defined_names["master_cause"].destinations
    return ws.cell(row, 4).value, label, wb[sheet][ref].value


@pytest.mark.libreoffice
def test_the_planner_and_the_hand_off_agree_with_the_engine(floors, tmp_path, capsys):
    typed, recalculated = floors["at.xlsx"]
    check, label, _ = _floor_check(recalculated)
    assert is_true(check)
    assert f"below, {plausibility_advice('total_params')} Type the full number, e.g. 70E9" in label
    assert main(["report", str(typed), "--out", str(tmp_path / "at.xlsx")]) == 0
    capsys.readouterr()

    typed, recalculated = floors["below.xlsx"]
    check, _, cause = _floor_check(recalculated)
    assert not is_true(check) and cause.startswith("Total and active parameters >= 1E6"), cause
    assert main(["report", str(typed), "--out", str(tmp_path / "below.xlsx")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert implausible_rule("total_params", FLOOR_PARAMS - 1) in line, line
    assert not (tmp_path / "below.xlsx").exists()
    with pytest.raises(InputError):  # the engine's verdict on the same plan
        engine.estimate(FLOOR_PARAMS - 1, FLOOR_TOKENS, 1024, effective_tflops=400.0)


def test_the_hand_off_gives_the_engines_words_for_every_slip(generated_templates, tmp_path, capsys):
    slip = {**PLAN_B, "total_params": 70, "training_tokens": 2000}
    path = fill(generated_templates[PLANNER], tmp_path / "slip.xlsx", [slip])
    assert main(["report", str(path), "--out", str(tmp_path / "h.xlsx")]) == 2
    err = capsys.readouterr().err
    assert f"total_params (Total parameters) {implausible_rule('total_params', 70)}" in err
    assert f"training_tokens (Training tokens) {implausible_rule('training_tokens', 2000)}" in err
