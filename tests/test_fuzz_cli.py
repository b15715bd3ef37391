"""The command line against hostile input: every flag x bad values, repeats, typos, extremes.

Each case asserts what a user sees: exit status 2, exactly one line on stderr naming the flag
(or the flags that drove a figure out of range), no traceback, no Python warning, nothing
on stdout, and no file left behind. Most run in-process through ``compute_lab.cli.main`` (fast); a
handful run the real command in a subprocess with ``python -W error``.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest
from helpers import run_cli as _run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compute_lab.flags import ESTIMATE_FLAGS

#: Every numeric flag of `estimate`, with the hidden aliases and --target-days.
NUMBER_FLAGS = [flag for flag, _, _ in ESTIMATE_FLAGS] + [
    "--training-tokens",
    "--usd-per-accelerator-hour",
    "--target-days",
]

#: Flags that only apply with others: what makes them apply (so the range check is reached).
CONTEXT = {
    "--peak-tflops": [],
    "--mfu": ["--accelerator", "H100"],
    "--goodput": ["--accelerator", "H100"],
    "--failures-per-accelerator-day": ["--accelerator", "H100"],
    "--failures-per-1000-node-days": ["--accelerator", "H100"],
    "--accelerators-per-node": ["--accelerator", "H100", "--failures-per-1000-node-days", "2"],
    "--global-batch-tokens": ["--accelerator", "H100"],
    "--amortisation-years": ["--purchase-usd-per-accelerator", "30000"],
    "--utilisation": ["--purchase-usd-per-accelerator", "30000"],
}

#: Texts that are not numbers in the documented forms (671e9, 671B, 14.8T, 16k, 2,048, 40%).
NOT_NUMBERS = [
    "",
    " ",
    "abc",
    "H100",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "1e308T",
    "٣",
    "١٢٣",
    "１２３",
    "1٣",
    "²",
    "½",
    "1__0",
    "1_0",
    "_1",
    "1_",
    "2,04,8",
    "1,,000",
    "1,000_000",
    "0x10",
    "1e",
    "e5",
    "1.2.3",
    "1 000",
    "10kk",
    "5%%",
    "1/2",
    "--",
    "1e5.5",
    "١e3",
    "12\u200b",
    "1\n2",
]

#: Numbers too close to 0 to compute with: denormals, and one that underflows to 0.
DENORMALS = ["5e-324", "1e-320", "2e-308", "-1e-315", "1e-400", "4.9e-324k"]


def _refused(code, out, err, caught, *needles):
    """Exit 2, one line on stderr holding every needle, nothing else anywhere."""
    assert code == 2, (code, out, err)
    assert out == "", out
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("compute-lab"), err
    assert "Traceback" not in err and "Warning" not in err and "internal error" not in err
    assert not caught, [str(w.message) for w in caught]
    for needle in needles:
        assert needle in err, (needle, err)
    if err.startswith("compute-lab estimate: error:") and "unknown flag" not in err:
        said = re.sub(r"\(got .*\)|'[^']*'|\"[^\"]*\"", "", err)  # not the value echoed
        for flag in re.findall(r"(?<![\w-])--[a-z0-9][a-z0-9-]*", said):
            assert flag in ESTIMATE_FLAGS_KNOWN, (flag, err)  # a flag the user can type


def _estimate_flags():
    from compute_lab.cli import build_parser

    parser, _ = build_parser("estimate")
    return frozenset(parser.commands["estimate"].known_flags())


ESTIMATE_FLAGS_KNOWN = _estimate_flags()


@pytest.fixture()
def empty_cwd(tmp_path, monkeypatch):
    """Run in an empty folder, and check that nothing is left in it."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# Each flag x each bad text
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", NUMBER_FLAGS)
@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_every_flag_refuses_every_non_number(flag, text, empty_cwd):
    code, out, err, caught = _run(["estimate", f"{flag}={text}"])
    _refused(code, out, err, caught, f"argument {flag}:", repr(text))


@pytest.mark.parametrize("flag", NUMBER_FLAGS)
@pytest.mark.parametrize("text", DENORMALS)
def test_every_flag_refuses_denormals_by_the_flag_typed(flag, text, empty_cwd):
    code, out, err, caught = _run(["estimate", flag, text])
    _refused(code, out, err, caught, f"argument {flag}:", "too close to 0")


@pytest.mark.parametrize("flag", NUMBER_FLAGS)
def test_every_flag_refuses_a_negative_value_by_name(flag, empty_cwd):
    code, out, err, caught = _run(["estimate", *CONTEXT.get(flag, []), flag, "-1"])
    _refused(code, out, err, caught, flag)


#: Values outside each range-limited flag's rule, beyond "negative".
OUT_OF_RULE = [
    ("--accelerators", "0", "--accelerators must be greater than 0"),
    ("--accelerators", "2.5", "--accelerators must be a whole number"),
    ("--mfu", "1.5", "--mfu must be greater than 0 and at most 1"),
    ("--goodput", "0", "--goodput must be greater than 0"),
    ("--utilisation", "2", "--utilisation must be greater than 0 and at most 1"),
    ("--pue", "0.9", "--pue must be at least 1"),
    ("--server-overhead", "0.5", "--server-overhead must be at least 1"),
    ("--comm-overlap", "5", "--comm-overlap must be between 0 and 1"),
    ("--comm-overlap", "1", "--comm-overlap must be less than 1"),
    ("--tensor-parallel", "0.5", "--tensor-parallel must be at least 1"),
    ("--pipeline-parallel", "0", "--pipeline-parallel must be at least 1"),
    ("--pipeline-interleave", "0", "--pipeline-interleave must be at least 1"),
    ("--sequence-tokens", "0", "--sequence-tokens must be at least 1"),
    ("--checkpoint-write-minutes", "0", "--checkpoint-write-minutes must be greater than 0"),
    ("--checkpoint-bytes-per-param", "0", "--checkpoint-bytes-per-param must be greater than 0"),
    ("--training-state-bytes-per-param", "0", "--training-state-bytes-per-param must be"),
    ("--interconnect-gb-per-s", "0", "--interconnect-gb-per-s must be greater than 0"),
    ("--target-days", "0", "--target-days must be greater than 0"),
    ("--effective-tflops", "0", "--effective-tflops must be greater than 0"),
    ("--watts", "0", "--watts must be greater than 0"),
    ("--hbm-gb", "0", "--hbm-gb must be greater than 0"),
    ("--amortisation-years", "0", "--amortisation-years must be greater than 0"),
    # whole counts (the engine's rule) and the command line's bounds (docs/command-line.md)
    ("--tensor-parallel", "2.5", "--tensor-parallel must be a whole number"),
    ("--pipeline-parallel", "2.5", "--pipeline-parallel must be a whole number"),
    ("--pipeline-interleave", "1.5", "--pipeline-interleave must be a whole number"),
    ("--sequence-tokens", "100.5", "--sequence-tokens must be a whole number"),
    ("--accelerators-per-node", "7.5", "--accelerators-per-node must be a whole number"),
    ("--accelerators-per-node", "0.5", "--accelerators-per-node must be at least 1"),
    ("--accelerators", "1e305", "--accelerators must be at most 1e9"),
    ("--pipeline-parallel", "1e10", "--pipeline-parallel must be at most 1e9"),
    ("--sequence-tokens", "1e300", "--sequence-tokens must be at most 1e9"),
    ("--effective-tflops", "1e305", "--effective-tflops must be at most 1e6"),
    ("--peak-tflops", "1e7", "--peak-tflops must be at most 1e6"),
    ("--global-batch-tokens", "1e305", "--global-batch-tokens must not exceed --tokens"),
    ("--purchase-usd-per-accelerator", "1e305", "--purchase-usd-per-accelerator must be at most"),
    ("--other-costs-usd", "1e305", "--other-costs-usd must be at most US$1e15"),
    ("--amortisation-years", "5e-300", "--amortisation-years must be from 1/365"),
    ("--amortisation-years", "101", "--amortisation-years must be from 1/365"),
    ("--utilisation", "5e-300", "--utilisation must be at least 0.01 (1%)"),
]


@pytest.mark.parametrize(("flag", "text", "needle"), OUT_OF_RULE)
def test_out_of_rule_values_name_the_flag_and_the_rule(flag, text, needle, empty_cwd):
    code, out, err, caught = _run(["estimate", *CONTEXT.get(flag, []), flag, text])
    _refused(code, out, err, caught, needle)


# ---------------------------------------------------------------------------------------------
# Repeats, aliases, abbreviations and typos
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", NUMBER_FLAGS)
def test_a_flag_given_twice_is_refused(flag, empty_cwd):
    code, out, err, caught = _run(["estimate", flag, "2", flag, "3"])
    _refused(code, out, err, caught, f"{flag} is given twice")


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("--tokens", "--training-tokens"),
        ("--training-tokens", "--tokens"),
        ("--usd-per-hour", "--usd-per-accelerator-hour"),
    ],
)
def test_two_names_of_one_setting_are_refused(first, second, empty_cwd):
    code, out, err, caught = _run(["estimate", first, "1T", second, "2T"])
    _refused(code, out, err, caught, f"{second} and {first} set the same thing")


def _prefixes():
    flags = NUMBER_FLAGS + ["--accelerator", "--preset", "--precision", "--json"]
    for flag in flags:
        for cut in (3, 5):
            prefix = flag[: len(flag) - cut]
            if len(prefix) > 3 and prefix not in flags:
                yield prefix


@pytest.mark.parametrize("prefix", sorted(set(_prefixes())))
def test_no_flag_is_abbreviated(prefix, empty_cwd):
    code, out, err, caught = _run(["estimate", prefix, "2"])
    _refused(code, out, err, caught, f"compute-lab estimate: error: unknown flag {prefix}")
    assert "did you mean --" in err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["estimate", "--tok", "2T"],
            "compute-lab estimate: error: unknown flag --tok; did you mean --tokens?",
        ),
        (
            ["estimate", "--total", "70B"],
            "compute-lab estimate: error: unknown flag --total; did you mean --total-params?",
        ),
        (
            ["estimate", "--tokns", "2T"],
            "compute-lab estimate: error: unknown flag --tokns; did you mean --tokens?",
        ),
        (
            ["runs", "--jsn"],
            "compute-lab runs: error: unknown flag --jsn; did you mean --json?",
        ),
        (["estimat"], "compute-lab: error: unknown command 'estimat'; did you mean estimate?"),
        (
            ["estimate", "5"],
            "compute-lab estimate: error: unexpected argument '5' (flags take one value each)",
        ),
    ],
)
def test_typos_get_one_line_with_a_suggestion(argv, line, empty_cwd):
    code, out, err, caught = _run(argv)
    _refused(code, out, err, caught)
    assert err.strip() == line


@pytest.mark.parametrize(
    "argv",
    [
        ["templates", "--out", "a", "--out", "b"],
        ["templates", "--forc"],
        ["report", "x.xlsx", "--force", "--force"],
        ["report", "x.xlsx", "--csv", "a", "--csv", "b"],
        ["report", "x.xlsx", "--tol", "0.1"],
        ["serve", "--port", "8001", "--port", "8002"],
        ["addin", "install", "--dry-run", "--dry-run"],
        ["addin", "install", "--dry"],
        ["lite-bundle", "--out", "a", "--out", "b"],
        ["runs", "--json", "--json"],
        ["accelerators", "--cs"],
    ],
)
def test_every_command_refuses_repeats_and_abbreviations(argv, empty_cwd):
    code, out, err, caught = _run(argv)
    _refused(code, out, err, caught)
    assert "given twice" in err or "unknown flag" in err


# ---------------------------------------------------------------------------------------------
# Figures out of range: refused, naming the flags that drove them there
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--usd-per-hour", "1e305"],
            "compute cost is out of range (above 1.8e308): lower --usd-per-hour (1e+305)",
        ),
        (
            ["--watts", "1e300", "--usd-per-kwh", "1e300"],
            "electricity cost is out of range (above 1.8e308): lower --watts (1e+300) or "
            "--usd-per-kwh (1e+300)",
        ),
        (
            ["--grams-co2-per-kwh", "1e305", "--watts", "1e10"],
            "emissions is out of range (above 1.8e308): lower --grams-co2-per-kwh (1e+305)",
        ),
        (
            ["--total-params", "1e300", "--tokens", "1e300", "--accelerators", "8"],
            "training compute (FLOPs) is out of range (above 1.8e308): lower --total-params "
            "(1e+300) or --tokens (1e+300)",
        ),
        (
            ["--training-tokens", "1e306", "--total-params", "70B", "--accelerators", "8"],
            "out of range (above 1.8e308): lower --training-tokens (1e+306)",
        ),
        (
            ["--effective-tflops", "1e-300"],
            "accelerator-hours is out of range (above 1.8e308): raise --effective-tflops (1e-300)",
        ),
        (
            ["--accelerator", "H100", "--peak-tflops", "1e-300"],
            "accelerator-hours is out of range (above 1.8e308): raise --peak-tflops (1e-300)",
        ),
        (
            [
                "--target-days",
                "1e-300",
                "--tokens",
                "1e20",
                "--total-params",
                "1e12",
                "--accelerators",
                "8",
            ],  # fmt: skip
            "accelerators for 1e-300 days is out of range (above 1.8e308): raise "
            "--target-days (1e-300)",
        ),
        (
            [
                "--accelerator",
                "H100",
                "--hbm-gb",
                "1e-300",
                "--total-params",
                "1e12",
                "--tokens",
                "1e12",
                "--accelerators",
                "8",
            ],  # fmt: skip
            "out of range (above 1.8e308): raise --hbm-gb (1e-300)",
        ),
    ],
)
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_out_of_range_figures_name_the_flags_that_drove_them(argv, line, json_flag, empty_cwd):
    code, out, err, caught = _run(["estimate", *json_flag, *argv])
    _refused(code, out, err, caught, "compute-lab estimate: error: ", line)


def _strict(text):
    """Strict JSON: Infinity, -Infinity and NaN are refused."""

    def refuse(constant):
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _all_finite(value):
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, float):
        return math.isfinite(value)
    return True


_magnitude = st.one_of(
    st.sampled_from(["1e300", "1e-300", "1e308", "1e-307", "1.7e308", "3e-308", "1e150"]),
    st.builds(
        lambda m, e: f"{m}e{e}",
        st.integers(1, 9),
        st.integers(-330, 330),
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    flags=st.dictionaries(
        st.sampled_from(
            [
                "--total-params",
                "--tokens",
                "--accelerators",
                "--effective-tflops",
                "--usd-per-hour",
                "--watts",
                "--pue",
                "--usd-per-kwh",
                "--grams-co2-per-kwh",
                "--other-costs-usd",
                "--checkpoint-bytes-per-param",
                "--target-days",
                "--hbm-gb",
                "--training-state-bytes-per-param",
            ]
        ),
        _magnitude,
        min_size=1,
        max_size=5,
    ),
    as_json=st.booleans(),
)
def test_extreme_values_give_finite_figures_or_one_line(flags, as_json, empty_cwd):
    if "--total-params" in flags or "--tokens" in flags:  # the user's own model, all of it
        flags = {"--total-params": "70B", "--tokens": "2T", "--accelerators": "1024"} | flags
    argv = ["estimate", *(["--json"] if as_json else [])]
    argv += [f"{flag}={text}" for flag, text in flags.items()]
    code, out, err, caught = _run(argv)
    if code == 0:
        assert err == "" and not caught
        if as_json:
            assert _all_finite(_strict(out))
        else:
            assert "inf" not in out.lower() and "nan" not in out.lower(), out
    else:
        _refused(code, out, err, caught, "compute-lab estimate: error: ")
        assert "--" in err  # names a flag


# ---------------------------------------------------------------------------------------------
# The same through the real command, with warnings turned into errors
# ---------------------------------------------------------------------------------------------


def _real(*argv, cwd):
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-m", "compute_lab.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--usd-per-hour", "1e305"], "lower --usd-per-hour (1e+305)"),
        (["--watts", "1e300", "--usd-per-kwh", "1e300", "--json"], "lower --watts (1e+300)"),
        (["--target-days", "5e-324"], "argument --target-days: is too close to 0"),
        (["--tokens", "1T", "--training-tokens", "2T"], "set the same thing"),
        (["--total", "70B", "--tok", "2T"], "unknown flag --total; did you mean --total-params?"),
        (["--tokens", "١٢٣"], "argument --tokens: must be a number"),
        (["--accelerators", "H100"], "a whole number of accelerators, e.g. 2048 or 16k"),
        (["--comm-overlap", "5"], "--comm-overlap must be between 0 and 1"),
    ],
)
def test_real_command_refuses_in_one_line_without_warnings(argv, needle, tmp_path):
    code, out, err = _real("estimate", *argv, cwd=tmp_path)
    assert code == 2, (out, err)
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert needle in err
    assert "Warning" not in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_real_command_prints_the_example_plan_with_warnings_as_errors(tmp_path):
    from udfs.quantities import SEED_OUTPUT_LINES

    code, out, err = _real("estimate", cwd=tmp_path)
    assert code == 0 and err == ""
    assert out.splitlines()[:6] == list(SEED_OUTPUT_LINES)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(flag=st.sampled_from(NUMBER_FLAGS), text=st.text(max_size=12))
def test_any_text_for_any_flag_is_a_number_or_one_line(flag, text, empty_cwd):
    code, out, err, caught = _run(["estimate", *CONTEXT.get(flag, []), f"{flag}={text}"])
    if code == 0:
        assert err == "" and not caught
        assert "inf" not in out.lower() and "nan" not in out.lower()
    else:
        _refused(code, out, err, caught, "compute-lab estimate: error: ")
        assert flag in err or "--" in err
