"""The Excel functions against hostile cells: every function x argument x bad cell, extremes.

Each case asserts what a spreadsheet user sees: a cell error (``xw.XlwingsError``) of one
line that starts with the function's name and names the argument (and, in a range, the
cell), or, for extreme but valid numbers, a finite result (never infinity, NaN or a
silently underflowed 0); and never a Python warning.
"""

from __future__ import annotations

import inspect
import math
import warnings

import numpy as np
import pytest
import xlwings as xw
from hypothesis import given, settings
from hypothesis import strategies as st

import udfs.excel as x

#: Valid arguments of each numeric function (the DeepSeek-V3-like example plan and friends).
BASE = {
    "TRAIN_FLOPS": (37e9, 14.8e12),
    "TRAIN_ACCEL_HOURS": (37e9, 14.8e12, 400),
    "TRAIN_DAYS": (37e9, 14.8e12, 2048, 400),
    "TRAIN_COST": (37e9, 14.8e12, 400, 2),
    "TRAIN_KWH": (37e9, 14.8e12, 400, 700, 1.1),
    "CHECKPOINT_GB": (671e9, 2),
    "EFFECTIVE_TFLOPS": (989.4, 0.4, 0.9),
    "TRAIN_GOODPUT": (3.09, 1 / 60, 5 / 60, 0.3),
    "ACCELS_FOR_DAYS": (2.4e6, 50),
    "IMPLIED_MFU": (6 * 405e9 * 15.6e12, 30.84e6, 989.4),
    "MIN_ACCELS_FOR_MEMORY": (405e9, 80, 16, 0.9),
    "CHINCHILLA_TOKENS": (70e9, 20),
    "TRAIN_CO2_T": (1e6, 481),
    "TRAIN_PLAN": (671e9, 37e9, 14.8e12, 2048, 400, 2, 700, 1.1, 0.1, 481, 80),
    # quantity, p, the plan, accelerator, MFU, price, uncertainties, W, PUE, US$/kWh, TFLOP/s
    "TRAIN_QUANTILE": (
        "cost",
        0.9,
        671e9,
        37e9,
        14.8e12,
        2048,
        "H100",
        0.4,
        2,
        0.15,
        0.1,
        700,
        1.1,
        0.1,
        400,
    ),
    "TRAIN_PLAN_RANGE": (671e9, 37e9, 14.8e12, 2048, "H100", 0.4, 2, 0.15, 0.1, 700, 1.1, 0.1, 400),
}

#: Text arguments (names), refused in their own test below.
TEXT_ARGUMENTS = {"quantity", "accelerator_name"}

#: Arguments where 0 is a valid value (a free price, no emissions, no restart time).
MAY_BE_ZERO = {
    "usd_per_accelerator_hour",
    "restart_hours",
    "electricity_kwh",
    "grams_co2_per_kwh",
    "usd_per_kwh",
    "throughput_range_pct",
    "price_range_pct",
}

#: Cells that are never a valid number, with a fragment of the rule they break.
BAD_CELLS = [
    ("abc", "not text"),
    ("١٢٣", "not text"),
    ("１２３", "not text"),
    ("1__0", "not text"),
    ("2,048", "not text"),
    (True, "TRUE/FALSE"),
    (False, "TRUE/FALSE"),
    ("#N/A", "Excel error (#N/A)"),
    ("#DIV/0!", "Excel error (#DIV/0!)"),
    ("#NUM!", "Excel error (#NUM!)"),
    (float("nan"), "finite"),
    (float("inf"), "finite"),
    (-float("inf"), "finite"),
    (10**400, "too large"),
    (5e-324, "too close to 0"),
    (1e-320, "too close to 0"),
    (-1e-310, ""),
    (-1.0, ""),
    ([[1.0], [2.0, 3.0]], "not a rectangular range"),
    ([], "empty range"),
    ([[[1.0]]], "nested list"),
    (object(), "must be a number"),
]


def _arguments(name):
    return list(inspect.signature(getattr(x, name)).parameters)


def _required(name):
    params = inspect.signature(getattr(x, name)).parameters
    return [p for p, v in params.items() if v.default is inspect.Parameter.empty]


def _call(name, args):
    """Call with every warning recorded: (result or the error raised, warnings)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            return getattr(x, name)(*args), caught
        except Exception as err:  # noqa: BLE001 - the test looks at what was raised
            return err, caught


def _one_line_error(err, caught, name, *needles):
    assert isinstance(err, xw.XlwingsError), repr(err)
    assert isinstance(err, ValueError)
    text = str(err)
    assert "\n" not in text, text
    assert text.startswith(f"{name}: "), text
    assert "Traceback" not in text
    assert not caught, [str(w.message) for w in caught]
    for needle in needles:
        assert needle in text, (needle, text)


def _finite(value):
    """Every number in a result is finite (text cells are "#N/A" or labels)."""
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, str):
        return True
    return isinstance(value, float) and math.isfinite(value)


def test_base_arguments_are_valid():
    for name, args in BASE.items():
        result, caught = _call(name, args)
        assert not isinstance(result, Exception), (name, result)
        assert _finite(result) and not caught


CASES = [
    (name, i, argument)
    for name, args in BASE.items()
    for i, argument in enumerate(_arguments(name))
    if argument not in TEXT_ARGUMENTS
]


@pytest.mark.parametrize(("name", "index", "argument"), CASES)
@pytest.mark.parametrize(("cell", "rule"), BAD_CELLS, ids=[repr(c)[:20] for c, _ in BAD_CELLS])
def test_every_argument_refuses_every_bad_cell(name, index, argument, cell, rule):
    args = list(BASE[name])
    args[index] = cell
    err, caught = _call(name, args)
    if argument == "pue" and rule == "too close to 0":
        rule = "must be at least 1"  # the rule of its own that a tiny PUE breaks first
    _one_line_error(err, caught, name, f"{name}: {argument}", rule)


@pytest.mark.parametrize(("name", "index", "argument"), CASES)
def test_zero_is_refused_where_the_rule_wants_more(name, index, argument):
    args = list(BASE[name])
    args[index] = 0.0
    result, caught = _call(name, args)
    if argument in MAY_BE_ZERO:
        assert not isinstance(result, Exception), result
        assert _finite(result) and not caught
    else:
        _one_line_error(result, caught, name, f"{name}: {argument}")


@pytest.mark.parametrize(("name", "index", "argument"), CASES)
def test_a_blank_required_cell_is_named(name, index, argument):
    args = list(BASE[name])
    args[index] = None
    result, caught = _call(name, args)
    if argument in _required(name):
        _one_line_error(result, caught, name, f"{name}: {argument}", "blank")
    else:  # an optional argument takes its default
        assert not isinstance(result, Exception), result
        assert _finite(result) and not caught


@pytest.mark.parametrize(
    ("name", "index", "argument"),
    [c for c in CASES if c[0] not in ("TRAIN_PLAN", "TRAIN_PLAN_RANGE")],
)
@pytest.mark.parametrize(("cell", "rule"), [("abc", "not text"), (5e-324, "too close to 0")])
def test_a_bad_cell_in_a_range_names_its_row(name, index, argument, cell, rule):
    args = list(BASE[name])
    good = args[index]
    args[index] = [[good], [good], [cell]]
    err, caught = _call(name, args)
    if argument == "pue" and rule == "too close to 0":
        rule = "must be at least 1"
    _one_line_error(err, caught, name, f"{name}: {argument} at row 3, column 1", rule)


@pytest.mark.parametrize(
    ("name", "args", "line"),
    [
        (
            "TRAIN_COST",
            (37e9, 14.8e12, 400, 1e305),
            "TRAIN_COST: the result is out of range (above 1.8e308): lower "
            "usd_per_accelerator_hour (1e+305)",
        ),
        (
            "TRAIN_ACCEL_HOURS",
            (1e6, 1e9, 1e300),
            "TRAIN_ACCEL_HOURS: the result is out of range (below 2.2e-308): lower "
            "effective_tflops (1e+300)",
        ),
        (
            "TRAIN_DAYS",
            (37e9, 14.8e12, 2048, 1e-300),
            "TRAIN_DAYS: the result is out of range (above 1.8e308): raise effective_tflops "
            "(1e-300)",
        ),
        (
            "TRAIN_COST",
            (37e9, [[14.8e12], [1e300]], 400, 2),
            "TRAIN_COST: the result at row 2, column 1 is out of range (above 1.8e308): lower "
            "tokens (1e+300)",
        ),
        (
            "TRAIN_PLAN",
            (671e9, 37e9, 14.8e12, 2048, 400, 1e305),
            "TRAIN_PLAN: compute cost is out of range (above 1.8e308): lower "
            "usd_per_accelerator_hour (1e+305)",
        ),
        (
            "TRAIN_PLAN",
            (671e9, 37e9, 14.8e12, 2048, 400, 2, 1e300, None, 1e300),
            "TRAIN_PLAN: electricity cost is out of range (above 1.8e308): lower "
            "watts_per_accelerator (1e+300) or usd_per_kwh (1e+300)",
        ),
        (
            "TRAIN_PLAN",
            (671e9, 37e9, 1e300, 2048, 400, 2),
            "TRAIN_PLAN: training compute (FLOPs) is out of range (above 1.8e308): lower tokens "
            "(1e+300)",
        ),
        (
            "ACCELS_FOR_DAYS",
            (1e10, 1e-300),
            "ACCELS_FOR_DAYS: the result is out of range (above 1.8e308): raise target_days "
            "(1e-300)",
        ),
        (
            "MIN_ACCELS_FOR_MEMORY",
            (1e300, 1e-300),
            "MIN_ACCELS_FOR_MEMORY: the result is out of range (above 1.8e308): lower "
            "total_params (1e+300) or raise hbm_gb (1e-300)",
        ),
    ],
)
def test_out_of_range_results_name_the_arguments_that_drove_them(name, args, line):
    err, caught = _call(name, args)
    _one_line_error(err, caught, name)
    assert str(err) == line


_extreme = st.one_of(
    st.floats(min_value=1e-310, max_value=1e308, allow_subnormal=True),
    st.builds(lambda m, e: m * 10.0**e, st.integers(1, 9), st.integers(-307, 300)),
    st.sampled_from([1e308, 1.7e308, 2.3e-308, 1e-307, 1e-300, 1e300, 1e200, 1e-200]),
)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(sorted(BASE)), data=st.data())
def test_extreme_numbers_give_a_finite_result_or_one_line(name, data):
    args = list(BASE[name])
    arguments = _arguments(name)
    numeric = [i for i, a in enumerate(arguments) if a not in TEXT_ARGUMENTS]
    changed = data.draw(st.lists(st.sampled_from(numeric), min_size=1, max_size=3, unique=True))
    for i in changed:
        args[i] = data.draw(_extreme)
    result, caught = _call(name, args)
    if isinstance(result, Exception):
        _one_line_error(result, caught, name)
        assert any(a in str(result) for a in arguments), str(result)
    else:
        assert not caught
        assert _finite(result), (name, args, result)
        for value in np.ravel(result):
            if isinstance(value, float) and value != 0:
                assert abs(value) >= 2.2e-308, (name, args, result)  # no denormal result


def test_text_functions_refuse_bad_cells_in_one_line():
    for name, args in (("ACCEL_SPEC", ["H100", "hbm_gb"]), ("REF_RUN", ["deepseek-v3", "source"])):
        for index, argument in enumerate(_arguments(name)):
            for cell in (None, "", 5.0, True, "#N/A", "no such thing", [[1.0], ["a", "b"]]):
                bad = list(args)
                bad[index] = cell
                err, caught = _call(name, bad)
                _one_line_error(err, caught, name, f"{name}: {argument}")


@pytest.mark.parametrize("name", ["TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"])
def test_range_functions_refuse_bad_names_in_one_line(name):
    for index, argument in enumerate(_arguments(name)):
        if argument not in TEXT_ARGUMENTS:
            continue
        for cell in (None, "", 5.0, True, "#N/A", "no such thing", [[1.0], ["a", "b"]], [[]]):
            bad = list(BASE[name])
            bad[index] = cell
            err, caught = _call(name, bad)
            _one_line_error(err, caught, name, f"{name}: {argument}")
        if name == "TRAIN_QUANTILE":  # a range of names: the bad cell is named
            bad = list(BASE[name])
            bad[index] = [[BASE[name][index]], ["#N/A"]]
            err, caught = _call(name, bad)
            _one_line_error(err, caught, name, f"{name}: {argument} at row 2, column 1")
