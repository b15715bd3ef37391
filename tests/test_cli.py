"""The compute-lab command: the seed's lines, flags, presets, JSON, and bad input."""

import argparse
import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from compute_lab.cli import main, parse_number
from udfs.quantities import SEED_OUTPUT_LINES, SEED_PLAN


def run(*argv):
    """The real command in a subprocess: (exit status, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "compute_lab.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_estimate_without_arguments_prints_the_seed_lines():
    code, out, err = run("estimate")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:6] == list(SEED_OUTPUT_LINES)


def test_estimate_json_has_the_keys(capsys):
    assert main(["estimate", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in (
        "training_flops",
        "accelerator_hours",
        "wall_clock_days",
        "checkpoint_gb",
        "compute_cost_usd",
        "electricity_kwh",
    ):
        assert key in data
    assert f"{data['accelerator_hours']:,.0f}" == "2,281,667"
    assert data["checkpoint_gb"] == 1342.0


def test_suffixed_numbers_equal_exponent_form(capsys):
    main(
        [
            "estimate",
            "--json",
            "--total-params",
            "671B",
            "--active-params",
            "37e9",
            "--tokens",
            "14.8T",
            "--accelerators",
            "2,048",
        ]
    )
    a = json.loads(capsys.readouterr().out)
    main(["estimate", "--json"])
    b = json.loads(capsys.readouterr().out)
    assert a["wall_clock_days"] == b["wall_clock_days"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("671e9", 671e9),
        ("671B", 671e9),
        ("14.8T", 14.8e12),
        ("2k", 2000.0),
        ("40%", 0.4),
        ("1_000", 1000.0),
    ],
)
def test_parse_number(text, value):
    assert parse_number(text) == value


def test_preset_reproduces_disclosed_hours(capsys):
    assert main(["estimate", "--preset", "llama-3.1-405b", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["accelerator_hours"] == pytest.approx(30.84e6)
    assert data["inputs"]["accelerators"] == 16384


def test_accelerator_without_throughput_uses_peak_and_calibrated_mfu(capsys):
    from udfs.calibration import predicted_mfu

    main(["estimate", "--accelerator", "H100", "--json"])
    data = json.loads(capsys.readouterr().out)
    mfu = predicted_mfu("H100 SXM", 37e9)  # the example plan's active parameters
    assert data["effective_tflops"] == pytest.approx(989.4 * mfu)
    assert data["throughput_source"] == "calibrated default"
    main(["estimate", "--accelerator", "H100", "--precision", "fp8", "--json"])
    assert json.loads(capsys.readouterr().out)["effective_tflops"] == pytest.approx(1978.9 * mfu)


def test_target_days_and_extended_inputs(capsys):
    main(
        [
            "estimate",
            "--json",
            "--target-days",
            "30",
            "--usd-per-kwh",
            "0.1",
            "--grams-co2-per-kwh",
            "400",
            "--pue",
            "1.2",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert d["accelerators_for_target_days"] == pytest.approx(2_281_666.667 / 720, rel=1e-6)
    assert d["electricity_kwh"] == pytest.approx(1_597_166.667 * 1.2, rel=1e-6)
    assert d["co2_tonnes"] == pytest.approx(d["electricity_kwh"] * 400 / 1e6)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--accelerators", "0"], "--accelerators must be greater than 0"),
        (["--accelerators", "-8"], "--accelerators must be greater than 0"),
        (["--total-params", "lots"], "argument --total-params: must be a number"),
        (
            [
                "--total-params",
                "10B",
                "--active-params",
                "37B",
                "--tokens",
                "1T",
                "--accelerators",
                "8",
            ],
            "--active-params must not exceed --total-params",
        ),
        (["--total-params", "10B"], "needs --tokens, --accelerators too"),
        (["--accelerators", "2.5"], "--accelerators must be a whole number"),
        (["--accelerators", "2,04,8"], "must group thousands by three digits"),
        (["--global-batch-tokens", "16M"], "--global-batch-tokens needs a peak throughput"),
        (
            ["--failures-per-accelerator-day", "-1", "--accelerator", "H100"],
            "--failures-per-accelerator-day must be greater than 0",
        ),
        (["--usd-per-hour", "2", "--purchase-usd-per-accelerator", "30000"], "not both"),
        (["--utilisation", "0.8"], "--utilisation goes with --purchase-usd-per-accelerator"),
        (["--preset", ""], "--preset must name a reference run"),
        (["--accelerator", " "], "--accelerator must name an accelerator"),
        (["--accelerator", "H100", "--mfu", "1.5"], "--mfu must be greater than 0 and at most 1"),
        (["--accelerator", "H100", "--mfu", "0"], "--mfu must be greater than 0"),
        (["--preset", "gpt-7"], "--preset is not a known run; did you mean GPT-J 6B, GPT-3 175B"),
        (["--accelerator", "H1000"], "--accelerator is not a known accelerator"),
        (["--effective-tflops", "400", "--mfu", "0.4"], "leave out --mfu"),
        (["--tokens", "inf"], "argument --tokens: must be a"),
        (["--pue", "0.5"], "--pue must be at least 1"),
    ],
)
def test_bad_input_exits_2_with_one_line(argv, needle):
    code, out, err = run("estimate", *argv)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_runs_table_shows_disclosed_beside_model():
    code, out, err = run("runs")
    assert code == 0, err
    assert "Llama 3.1 405B" in out and "30,840,000" in out and "34.5%" in out
    code, out, _ = run("runs", "--json")
    rows = {r["run"]: r for r in json.loads(out)}
    assert rows["DeepSeek-V3"]["disclosed_accelerator_hours"] == 2.788e6


def test_accelerators_table():
    code, out, _ = run("accelerators", "--csv")
    assert code == 0
    assert "H100 SXM,989.4,1978.9" in out
    assert "source" in out.splitlines()[0]


def test_no_command_prints_help_and_exits_2():
    code, out, _ = run()
    assert code == 2 and "estimate" in out


def test_node_day_failure_rate_equals_accelerator_rate(capsys):
    base = ["estimate", "--json", "--accelerator", "H100", "--accelerators", "16384"]
    main([*base, "--failures-per-1000-node-days", "6.5"])
    a = json.loads(capsys.readouterr().out)
    main([*base, "--failures-per-accelerator-day", str(6.5 / 1000 / 8)])
    b = json.loads(capsys.readouterr().out)
    assert a["goodput"] == pytest.approx(b["goodput"]) and a["goodput"] < 1
    assert a["cluster_mtbf_hours"] == pytest.approx(24 / (16384 * 6.5 / 8000))


def test_own_model_starts_empty_and_dense(capsys):
    main(
        [
            "estimate",
            "--json",
            "--accelerator",
            "H100",
            "--total-params",
            "405B",
            "--tokens",
            "15.6T",
            "--accelerators",
            "16384",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert d["plan_inputs"]["total_params"] == 405e9 and "active_params" not in d["plan_inputs"]
    assert d["inputs"]["active_params"] == 405e9  # dense, by the rule for a blank input
    assert {"name": "active_params", "value": 405e9, "why": "blank: dense, = total parameters",
            "flag": "--active-params"} in d["notes"]  # fmt: skip
    assert d["training_flops"] == pytest.approx(6 * 405e9 * 15.6e12)


def test_seed_defaults_behind_a_partial_plan_are_named(capsys):
    assert main(["estimate", "--accelerators", "4096"]) == 0
    out = capsys.readouterr().out
    assert "Wall-clock at 4096 accelerators: 23.2 days" in out
    assert "note: model: the DeepSeek-V3-like example plan" in out
    assert "note: --effective-tflops 400: not given: the example plan's sustained" in out
    assert "note: --usd-per-hour 2: not given: the default 2 US$/accelerator-hour" in out


def test_the_example_plan_as_is_names_the_defaults_resolve_applied(capsys):
    from udfs.plan import resolve

    assert main(["estimate"]) == 0
    out = capsys.readouterr().out
    notes = [line.strip() for line in out.splitlines() if line.startswith("  note: ")]
    example = {k: SEED_PLAN[k] for k in ("total_params", "active_params", "training_tokens",
                                         "accelerators")}  # fmt: skip
    example["effective_tflops_input"] = SEED_PLAN["effective_tflops"]
    applied = [n for n in resolve(example).notes if n.name != "budget_status"]
    assert len(notes) == 1 + len(applied)  # the example's throughput, then resolve's
    for line, note in zip(notes[1:], applied, strict=True):
        if note.name == "watts_per_accelerator":  # the example plan's own 700 W, not a TDP
            assert line == (
                "note: --watts 700: not given: the example plan's 700 W "
                "(give --watts or --accelerator)"
            )
            assert "H100" not in line  # the example plan's accelerator is an H800 SXM
            continue
        if note.name == "throughput_range_pct":  # the example's throughput: nobody typed it
            assert line.endswith("kept with the example plan's throughput (an estimate too)")
            continue
        assert line.endswith(note.why.replace("blank", "not given", 1)), (line, note)
    assert "model:" not in out  # the example itself: its model is not a fallback


def test_ownership_price_replaces_the_rental_price(capsys):
    main(
        [
            "estimate",
            "--json",
            "--purchase-usd-per-accelerator",
            "30000",
            "--amortisation-years",
            "4",
            "--utilisation",
            "0.8",
        ]
    )
    d = json.loads(capsys.readouterr().out)
    assert d["usd_per_accelerator_hour"] == pytest.approx(30000 / (4 * 8760 * 0.8))
    assert d["compute_cost_usd"] == pytest.approx(d["accelerator_hours"] * 30000 / 28032)


def test_unpublished_tdp_is_said(capsys):
    main(["estimate", "--preset", "deepseek-v3"])
    out = capsys.readouterr().out
    assert "--watts 700: not given: 700 W assumed (the H800 SXM's TDP is not published)" in out
    assert "Rental-equivalent cost: $5,576,000" in out


def test_electricity_is_priced_at_the_default_when_not_given(capsys):
    from udfs.plan import RULES

    main(["estimate", "--json"])
    d = json.loads(capsys.readouterr().out)
    price = RULES["usd_per_kwh"].default
    assert d["inputs"]["usd_per_kwh"] == price == 0.08
    assert d["electricity_cost_usd"] == pytest.approx(d["electricity_kwh"] * price, rel=1e-12)
    assert d["total_cost_usd"] == pytest.approx(
        d["compute_cost_usd"] + d["electricity_cost_usd"], rel=1e-12
    )
    main(["estimate"])
    assert "note: --usd-per-kwh 0.08: not given: electricity priced at the default US$0.08/kWh" in (
        capsys.readouterr().out
    )
    main(["estimate", "--usd-per-kwh", "0.1", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert d["inputs"]["usd_per_kwh"] == 0.1
    assert "usd_per_kwh" not in {n["name"] for n in d["notes"]}


def test_table_formats_are_exclusive():
    code, _, err = run("runs", "--csv", "--json")
    assert code == 2 and "not allowed with" in err


# ---------------------------------------------------------------------------------------------
# Regressions: issue 8 (hardening) and issue 13 (command-line polish)
# ---------------------------------------------------------------------------------------------


def _refusal(capsys, *argv):
    """In-process: exit status 2 and the single stderr line."""
    code = main(["estimate", *argv])
    captured = capsys.readouterr()
    assert code == 2, captured
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_issue8_2_overflowed_figures_are_refused_naming_the_flags(capsys):
    line = _refusal(capsys, "--usd-per-hour", "1e305")
    assert line == (
        "compute-lab estimate: error: compute cost is out of range (above 1.8e308): "
        "lower --usd-per-hour (1e+305)"
    )
    line = _refusal(capsys, "--watts", "1e300", "--usd-per-kwh", "1e300", "--json")
    assert "electricity cost is out of range" in line
    assert "lower --watts (1e+300) or --usd-per-kwh (1e+300)" in line


def test_issue8_2_json_is_strict_and_finite(capsys):
    def refuse(constant):
        raise AssertionError(constant)

    for argv in (
        [],
        ["--usd-per-hour", "1e300"],
        ["--usd-per-kwh", "0", "--grams-co2-per-kwh", "0"],
        ["--accelerator", "H100", "--failures-per-accelerator-day", "1e-300"],
    ):
        assert main(["estimate", "--json", *argv]) == 0
        data = json.loads(capsys.readouterr().out, parse_constant=refuse)
        numbers = [v for v in data.values() if isinstance(v, float)]
        assert numbers and all(math.isfinite(v) for v in numbers)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--comm-overlap", "5"], "--comm-overlap must be between 0 and 1 (got 5)"),
        (["--tensor-parallel", "-5"], "--tensor-parallel must be at least 1 (got -5)"),
        (["--pipeline-parallel", "0"], "--pipeline-parallel must be at least 1 (got 0)"),
        (["--sequence-tokens", "-1"], "--sequence-tokens must be at least 1 (got -1)"),
        (["--restart-minutes", "-1"], "--restart-minutes must be 0 or more (got -1)"),
        (
            ["--checkpoint-write-minutes", "-1"],
            "--checkpoint-write-minutes must be greater than 0 (got -1)",
        ),
        (
            ["--training-state-bytes-per-param", "-1"],
            "--training-state-bytes-per-param must be greater than 0 (got -1)",
        ),
        (["--total-params", "-1"], "--total-params must be greater than 0 (got -1)"),
        (["--mfu", "2"], "--mfu must be greater than 0 and at most 1 (got 2)"),
    ],
)
def test_issue8_7_flags_that_do_not_apply_are_still_validated(capsys, argv, needle):
    assert needle in _refusal(capsys, *argv)


def test_issue8_7_a_valid_flag_that_does_not_apply_says_so(capsys):
    main(["estimate", "--tensor-parallel", "8", "--comm-overlap", "0.5", "--restart-minutes", "5"])
    out = capsys.readouterr().out
    assert (
        "note: --tensor-parallel, --comm-overlap do not affect the result without "
        "--global-batch-tokens" in out
    )
    assert "note: --restart-minutes does not affect the result without" in out
    main(["estimate", "--training-state-bytes-per-param", "20"])
    assert "--training-state-bytes-per-param does not affect the result" in capsys.readouterr().out


def test_the_scaling_and_failure_models_inputs_are_listed_once(capsys):
    """SCALING_INPUTS are the engine's scaling_efficiency arguments after the throughput, in
    order; the command line's note and the result check's inputs name every one of them, and
    every one of FAILURE_INPUTS."""
    import inspect
    from types import SimpleNamespace

    from udfs import engine, result_checks
    from udfs.quantities import ENGINE_INPUTS, ESTIMATE_FLAGS
    from udfs.result_checks import FAILURE_INPUTS, SCALING_INPUTS

    params = list(inspect.signature(engine.scaling_efficiency).parameters)
    after = params[params.index("tflops_per_accelerator") + 1 :]
    assert SCALING_INPUTS == tuple(n for n in after if n in engine.Plan.__dataclass_fields__)
    flag = {f.quantity: f.flag for f in ESTIMATE_FLAGS}
    default = {q.name: q.default for q in ENGINE_INPUTS}
    for names, without in ((SCALING_INPUTS, "--global-batch-tokens"),
                           (FAILURE_INPUTS, "--failures-per-accelerator-day")):  # fmt: skip
        main(["estimate", *(a for n in names for a in (flag[n], str(default[n])))])
        flags = ", ".join(flag[n] for n in names)
        assert f"note: {flags} do not affect the result without {without}" in (
            capsys.readouterr().out
        )
    p = SimpleNamespace(
        active_params=None,
        effective_tflops=None,
        global_batch_tokens=1e6,
        failures_per_accelerator_day=1e-5,
        usd_per_accelerator_hour=2.0,
    )
    inputs = result_checks._result_inputs(p)
    assert inputs["scaling_efficiency"][-len(SCALING_INPUTS) :] == SCALING_INPUTS
    assert inputs["goodput"][-len(FAILURE_INPUTS) :] == FAILURE_INPUTS
    main(["estimate", "--accelerator", "H100", "--training-state-bytes-per-param", "20"])
    assert "does not affect" not in capsys.readouterr().out  # H100's HBM is published


@pytest.mark.parametrize(
    ("flag", "text"),
    [
        ("--target-days", "5e-324"),
        ("--target-days", "1e-320"),
        ("--checkpoint-write-minutes", "5e-324"),
        ("--total-params", "5e-324"),
        ("--usd-per-kwh", "1e-320"),
        ("--tokens", "1e-400"),  # underflows to 0 when read
    ],
)
def test_issue8_8_denormals_are_refused_by_the_flag_typed(capsys, flag, text):
    line = _refusal(capsys, flag, text)
    assert line == (
        f"compute-lab estimate: error: argument {flag}: is too close to 0 to compute with "
        f"(below 2.2e-308; got '{text}')"
    )


def test_issue8_8_tiny_target_days_is_not_an_internal_error(capsys):
    line = _refusal(capsys, "--target-days", "1e-307", "--effective-tflops", "1e-5")
    assert "is out of range (above 1.8e308)" in line and "--target-days (1e-307)" in line


def _known_flags():
    from compute_lab.cli import build_parser

    parser, _ = build_parser("estimate")
    return set(parser.commands["estimate"].known_flags())


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--checkpoint-bytes-per-param", "0"], "--checkpoint-bytes-per-param must be"),
        (
            [
                "--accelerator",
                "H100",
                "--failures-per-accelerator-day",
                "1e-3",
                "--checkpoint-write-minutes",
                "1e-306",
            ],  # fmt: skip
            "raise --checkpoint-write-minutes (1e-306)",
        ),
        (
            ["--total-params", "1e-300", "--tokens", "1T", "--accelerators", "8"],
            "--total-params is below 1e6",
        ),
        (["--tokens", "1e300", "--total-params", "1e10", "--accelerators", "8"], "--tokens"),
        (
            ["--training-tokens", "1e300", "--total-params", "1e10", "--accelerators", "8"],
            "lower --training-tokens (1e+300)",
        ),  # fmt: skip
        (
            [
                "--accelerator",
                "H100",
                "--global-batch-tokens",
                "16M",
                "--tensor-parallel",
                "8",
                "--pipeline-parallel",
                "16",
                "--accelerators",
                "16",
            ],  # fmt: skip
            "--tensor-parallel x --pipeline-parallel must not exceed --accelerators",
        ),
        (
            ["--accelerator", "H100", "--failures-per-1000-node-days", "1e300"],
            "--failures-per-1000-node-days is so high",
        ),
        (["--effective-tflops", "400", "--peak-tflops", "900"], "leave out --peak-tflops"),
    ],
)
def test_issue8_9_messages_name_flags_that_exist(capsys, argv, needle):
    line = _refusal(capsys, *argv)
    assert needle in line
    for flag in re.findall(r"--[a-z0-9][a-z0-9-]*", line):
        assert flag in _known_flags(), (flag, line)
    for internal in ("--bytes-per-param", "--checkpoint-write-hours", "--accelerator-hours",
                     "--training-flops", "--mtbf-hours"):  # fmt: skip
        assert internal + " " not in line + " ", line


def test_issue8_10_no_warning_reaches_stderr_even_as_errors(tmp_path):
    for argv in (
        ["estimate", "--usd-per-hour", "1e305"],
        ["estimate", "--target-days", "1e-300"],
        ["estimate", "--watts", "1e300", "--usd-per-kwh", "1e300"],
        ["estimate", "--accelerator", "H100", "--peak-tflops", "1e-300"],
    ):
        proc = subprocess.run(
            [sys.executable, "-W", "error", "-m", "compute_lab.cli", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert proc.returncode in (0, 2), proc.stderr
        assert "Warning" not in proc.stderr and "Traceback" not in proc.stderr
        assert len(proc.stderr.splitlines()) <= 1


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--tokens", "1T", "--training-tokens", "2T"],
            "compute-lab estimate: error: --training-tokens and --tokens set the same thing; "
            "give one of them",
        ),
        (
            ["--accelerators", "8", "--accelerators", "16"],
            "compute-lab estimate: error: --accelerators is given twice; give it once",
        ),
        (
            ["--total", "70B", "--tok", "2T"],
            "compute-lab estimate: error: unknown flag --total; did you mean --total-params?",
        ),
        (
            ["--tok", "2T"],
            "compute-lab estimate: error: unknown flag --tok; did you mean --tokens?",
        ),
    ],
)
def test_issue8_11_repeats_aliases_and_abbreviations_are_refused(capsys, argv, line):
    assert _refusal(capsys, *argv) == line


@pytest.mark.parametrize("text", ["٣", "１２３", "1٣", "1__0", "1_0", "_1", "1,00", "١e3", "1e5e5"])
def test_issue8_12_only_ascii_digits_in_the_documented_forms(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_number(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [("16k", 16e3), ("2,048", 2048.0), ("1_000_000", 1e6), ("-2.5k", -2500.0), (".5", 0.5)],
)
def test_issue8_12_documented_forms_still_parse(text, value):
    assert parse_number(text) == value


def test_issue13_runs_table_fits_100_columns():
    code, out, err = run("runs")
    assert code == 0, err
    assert max(map(len, out.splitlines())) <= 100
    from udfs import calibration

    error = calibration.grouped_validation().loc["Llama 3.1 405B", "error_pct"]
    assert "Llama 3.1 405B" in out and "30,840,000" in out and f"{error:+.0f}%" in out


def test_issue13_accelerators_flag_is_told_it_wants_a_count(capsys):
    line = _refusal(capsys, "--accelerators", "H100")
    assert "a number such as 671e9" not in line
    assert "must be a whole number of accelerators, e.g. 2048 or 16k" in line
    assert "--accelerator" in line.split("e.g.")[1]


def test_issue13_grammar(capsys):
    assert "--mfu needs a peak throughput" in _refusal(capsys, "--mfu", "0.4")
    assert "--mfu, --goodput need a peak" in _refusal(capsys, "--mfu", "0.4", "--goodput", "1")
    assert main(["estimate", "--accelerators", "1", "--target-days", "1"]) == 0
    out = capsys.readouterr().out
    assert "Wall-clock at 1 accelerator: " in out
    assert "Accelerators for 1 day: " in out


# ---------------------------------------------------------------------------------------------
# docs/command-line.md is true: its examples run as shown, every flag is documented
# ---------------------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "command-line.md"


def _console_blocks():
    """(command, expected lines) of each ```console block; "..." skips lines."""
    blocks = re.findall(r"```console\n\$ (.*?)\n(.*?)```", DOC.read_text(), re.S)
    return [(command, text.rstrip("\n").split("\n")) for command, text in blocks]


@pytest.mark.parametrize(("command", "expected"), _console_blocks())
def test_command_line_doc_examples_print_what_they_show(capsys, command, expected):
    argv = shlex.split(command)
    assert argv[0] == "compute-lab"
    assert main(argv[1:]) == 0
    got = capsys.readouterr().out.rstrip("\n").split("\n")
    i = 0
    skipping = False
    for line in expected:
        if line == "...":
            skipping = True
            continue
        if skipping:
            while i < len(got) and got[i] != line:
                i += 1
            skipping = False
        assert i < len(got) and got[i] == line, (command, line, got[i] if i < len(got) else None)
        i += 1
    assert i == len(got), got[i:]


def test_command_line_doc_names_every_flag_and_no_seed(capsys):
    from compute_lab.cli import build_parser
    from udfs.plan import RULES

    text = DOC.read_text()
    assert "seed" not in text.lower()
    parser, _ = build_parser("estimate")
    for action in parser.commands["estimate"]._actions:
        if action.help != argparse.SUPPRESS and action.option_strings[-1] != "--help":
            assert f"`{action.option_strings[-1]}" in text, action.option_strings
    assert f"US${RULES['usd_per_kwh'].default:g}/kWh" in text
    assert f"US${RULES['usd_per_accelerator_hour'].default:g} per accelerator-hour" in text
    assert f"else {RULES['watts_per_accelerator'].default:g} W" in text
    assert f"{RULES['grams_co2_per_kwh'].default:g} g/kWh" in text


# ---------------------------------------------------------------------------------------------
# Issue 8, the hostile review of estimate: fractions, bounds, messages, case, aliases, notes
# ---------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
_SCALING_PLAN = ("--global-batch-tokens", "4M", "--accelerator", "H100", "--total-params", "70B",
                 "--tokens", "2T", "--accelerators", "256")  # fmt: skip


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--tensor-parallel", "2.5"),
        ("--pipeline-parallel", "2.5"),
        ("--pipeline-interleave", "1.5"),
        ("--sequence-tokens", "100.5"),
    ],
)
@pytest.mark.parametrize("plan", [_SCALING_PLAN, ()], ids=["scaling", "example"])
def test_review_fractional_degrees_and_sequence_length_are_refused(capsys, flag, value, plan):
    line = _refusal(capsys, *plan, flag, value)
    assert line == f"compute-lab estimate: error: {flag} must be a whole number (got {value})"


def test_review_fractional_accelerators_per_node_is_refused(capsys):
    argv = ("--failures-per-1000-node-days", "2", "--accelerator", "H100")
    line = _refusal(capsys, "--accelerators-per-node", "7.5", *argv)
    assert line == (
        "compute-lab estimate: error: --accelerators-per-node must be a whole number (got 7.5)"
    )
    # alone, its range comes first: the rule, not "goes with --failures-per-1000-node-days"
    line = _refusal(capsys, "--accelerators-per-node", "0.5")
    assert (
        line == "compute-lab estimate: error: --accelerators-per-node must be at least 1 (got 0.5)"
    )
    assert main(["estimate", "--accelerators-per-node", "8", *argv]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--accelerators", "1e305"], "--accelerators must be at most 1e9 (got 1e+305)"),
        (["--accelerators", "2e9"], "--accelerators must be at most 1e9 (got 2e+09)"),
        (["--tensor-parallel", "1e12"], "--tensor-parallel must be at most 1e9 (got 1e+12)"),
        (
            ["--other-costs-usd", "1e305"],
            "--other-costs-usd must be at most US$1e15 (got 1e+305)",
        ),
        (
            ["--purchase-usd-per-accelerator", "1e305"],
            "--purchase-usd-per-accelerator must be at most US$1e9 per accelerator (got 1e+305)",
        ),
        (
            ["--purchase-usd-per-accelerator", "30000", "--amortisation-years", "5e-300"],
            "--amortisation-years must be from 1/365 (one day) to 100 years (got 5e-300)",
        ),
        (
            ["--purchase-usd-per-accelerator", "30000", "--amortisation-years", "1000"],
            "--amortisation-years must be from 1/365 (one day) to 100 years (got 1000)",
        ),
        (
            ["--utilisation", "5e-300"],
            "--utilisation must be at least 0.01 (1%) and at most 1 (got 5e-300)",
        ),
        (
            ["--effective-tflops", "1e305"],
            "--effective-tflops must be at most 1e6 TFLOP/s per accelerator (got 1e+305)",
        ),
        (
            ["--accelerator", "H100", "--peak-tflops", "2e6"],
            "--peak-tflops must be at most 1e6 TFLOP/s per accelerator (got 2e+06)",
        ),
        (
            ["--global-batch-tokens", "1e305", "--accelerator", "H100"],
            "--global-batch-tokens must not exceed --tokens (14.8T): one step cannot take more "
            "than the whole run (got 1e+305)",
        ),
        (
            [*_SCALING_PLAN[2:], "--global-batch-tokens", "3T"],
            "--global-batch-tokens must not exceed --tokens (2T): one step cannot take more "
            "than the whole run (got 3e+12)",
        ),
        (
            [
                "--training-tokens",
                "1T",
                "--total-params",
                "7B",
                "--accelerators",
                "8",
                "--accelerator",
                "H100",
                "--global-batch-tokens",
                "2T",
            ],
            "--global-batch-tokens must not exceed --training-tokens (1T)",
        ),  # fmt: skip
    ],
)
def test_review_absurd_values_are_refused_by_a_documented_bound(capsys, argv, message):
    line = _refusal(capsys, *argv)
    assert line.startswith(f"compute-lab estimate: error: {message}"), line
    assert "out of range" not in line and "not a number" not in line


def test_review_the_bounds_are_documented():
    text = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    refused = (ROOT / "docs" / "refused.md").read_text(encoding="utf-8")
    for needle in ("from 1 to 1e9", "1e6 TFLOP/s", "US$1e9", "US$1e15", "1/365", "0.01 (1%)",
                   "at most the run's training tokens", "scientific notation"):  # fmt: skip
        assert needle in text, needle
    for needle in ("1e305", "whole number", "scientific notation"):
        assert needle in refused, needle


def test_review_values_at_the_bounds_print_no_huge_number_and_no_zero_days(capsys):
    """At the bounds (and for inputs with no bound of their own) no printed figure is a number
    of hundreds of digits, and a fraction of a day is not "0.0 days"."""
    cases = [
        ["--accelerators", "1e9"],
        ["--effective-tflops", "1e6", "--accelerators", "1e9"],
        ["--other-costs-usd", "1e15"],
        ["--purchase-usd-per-accelerator", "1e9", "--amortisation-years", "0.00274",
         "--utilisation", "0.01"],
        ["--total-params", "1e9", "--training-tokens", "1e200", "--accelerators", "8",
         "--accelerator", "H100", "--global-batch-tokens", "1e200"],
        ["--usd-per-hour", "1e200", "--target-days", "1e-200"],
    ]  # fmt: skip
    for argv in cases:
        assert main(["estimate", *argv]) == 0, argv
        out = capsys.readouterr().out
        assert not re.search(r"\d[\d,]{20}", out), (argv, out)
        assert " 0.0 days" not in out and "runs per year: 0.0\n" not in out, (argv, out)
    assert main(["estimate", "--effective-tflops", "1e6", "--accelerators", "1e9"]) == 0
    out = capsys.readouterr().out
    assert "Wall-clock at 1000000000 accelerators: 3.8e-08 days" in out
    assert main(["estimate", "--usd-per-hour", "1e200"]) == 0
    out = capsys.readouterr().out
    assert "Rental-equivalent cost: $2.282e+206" in out
    assert main(["estimate"]) == 0  # below the bounds, the example plan's digits unchanged
    assert capsys.readouterr().out.splitlines()[:6] == list(SEED_OUTPUT_LINES)


def test_review_precision_takes_any_case(capsys):
    outs = []
    for precision in ("fp8", "FP8", "Fp8"):
        assert main(["estimate", "--accelerator", "H100", "--precision", precision, "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] == outs[2]
    assert outs[0]["inputs"]["peak_tflops"] == pytest.approx(1978.9)
    line = _refusal(capsys, "--accelerator", "H100", "--precision", "fp9")
    assert "--precision" in line and "'fp9'" in line


def test_review_json_with_a_value_is_one_line_naming_json(capsys):
    line = _refusal(capsys, "--json=1")
    assert (
        line
        == "compute-lab estimate: error: --json takes no value (got --json=1): give --json alone"
    )


def test_review_aliases_are_listed_in_help_and_doc(capsys):
    assert main(["estimate", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--training-tokens N the same as --tokens" in out
    assert "--usd-per-accelerator-hour N the same as --usd-per-hour" in out
    doc = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    assert "alias `--training-tokens N`" in doc and "alias `--usd-per-accelerator-hour N`" in doc
    # both names of one setting: still refused
    line = _refusal(capsys, "--usd-per-hour", "2", "--usd-per-accelerator-hour", "3")
    assert "set the same thing" in line
    # a typo of an alias suggests the alias itself
    line = _refusal(capsys, "--training-token", "1T")
    assert line.endswith("did you mean --training-tokens?"), line


def test_review_example_plan_watts_note_names_no_other_accelerator(capsys):
    assert main(["estimate"]) == 0
    out = capsys.readouterr().out
    assert "H100" not in out  # the example plan's accelerator is an H800 SXM
    assert "note: --watts 700: not given: the example plan's 700 W" in out
    assert main(["estimate", "--accelerators", "4096"]) == 0  # still the example plan's model
    assert "the example plan's 700 W" in capsys.readouterr().out
    main(["estimate", "--total-params", "7B", "--tokens", "1T", "--accelerators", "8"])
    assert "note: --watts 700: not given: 700 W, the H100 SXM's TDP" in capsys.readouterr().out


def test_the_example_plans_throughput_is_not_called_typed(capsys):
    """Nobody typed the example plan's 400 TFLOP/s: the spread's note says whose it is."""
    for argv in (
        ["estimate"],
        ["estimate", "--total-params", "7B", "--tokens", "1T", "--accelerators", "8"],
    ):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "the example plan's sustained throughput" in out
        assert "typed" not in out, argv
        assert "kept with the example plan's throughput (an estimate too)" in out
    assert main(["estimate", "--effective-tflops", "400", "--json"]) == 0
    notes = {n["name"]: n["why"] for n in json.loads(capsys.readouterr().out)["notes"]}
    assert "kept with a typed throughput" in notes["throughput_range_pct"]
