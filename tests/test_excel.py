"""The Excel functions called as plain Python with cell-like values (issue 3, sections 1-4)."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys

import numpy as np
import pytest
import xlwings as xw
from hypothesis import given, settings
from hypothesis import strategies as st

import udfs
from udfs import _quantile_cells, calibration, catalogue, engine, plan, quantities, ranges
from udfs import excel as x
from udfs._cells import CellError

SEED = dict(active_params=37e9, tokens=14.8e12, accelerators=2048, effective_tflops=400)


def raises(call, *fragments):
    """Call, expect an xw.XlwingsError, and check the message holds every fragment."""
    with pytest.raises(xw.XlwingsError) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert "Traceback" not in message
    return info.value


# ---------------------------------------------------------------------------------------------
# Values: each function is its engine expression
# ---------------------------------------------------------------------------------------------


def test_linear_model_matches_engine_and_seed():
    flops = engine.training_flops(37e9, 14.8e12)
    hours = engine.accelerator_hours(flops, 400)
    assert x.TRAIN_FLOPS(37e9, 14.8e12) == flops
    assert x.TRAIN_ACCEL_HOURS(37e9, 14.8e12, 400) == hours
    assert x.TRAIN_DAYS(**SEED) == engine.wall_clock_days(hours, 2048)
    assert round(x.TRAIN_DAYS(**SEED), 1) == 46.4
    assert round(x.TRAIN_ACCEL_HOURS(37e9, 14.8e12, 400)) == 2_281_667
    assert x.TRAIN_COST(37e9, 14.8e12, 400, 2) == engine.compute_cost_usd(hours, 2)
    assert x.TRAIN_KWH(37e9, 14.8e12, 400) == engine.electricity_kwh(hours, 700)
    assert x.TRAIN_KWH(37e9, 14.8e12, 400, 500, 1.2) == engine.electricity_kwh(hours, 500, pue=1.2)


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda: x.CHECKPOINT_GB(671e9), 1342.0),
        (lambda: x.CHECKPOINT_GB(671e9, 13), 671 * 13.0),
        (lambda: x.EFFECTIVE_TFLOPS(989.4, 0.4), engine.effective_tflops(989.4, 0.4)),
        (lambda: x.EFFECTIVE_TFLOPS(1000, 0.5, 0.9), 450.0),
        (lambda: x.TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60), engine.goodput(3.09, 1 / 60, 5 / 60)),
        (
            lambda: x.TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60, 0.5),
            engine.goodput(3.09, 1 / 60, 5 / 60, 0.5),
        ),
        (lambda: x.ACCELS_FOR_DAYS(2_400_000, 50), 2000.0),
        (lambda: x.IMPLIED_MFU(1e24, 1e6, 1000), engine.implied_mfu(1e24, 1e6, 1000)),
        (lambda: x.MIN_ACCELS_FOR_MEMORY(405e9, 80), 81.0),
        (
            lambda: x.MIN_ACCELS_FOR_MEMORY(405e9, 80, 20, 0.5),
            engine.min_accelerators_for_memory(405e9, 80, 20, 0.5),
        ),
        (lambda: x.CHINCHILLA_TOKENS(70e9), 1.4e12),
        (lambda: x.CHINCHILLA_TOKENS(70e9, 10), 7e11),
        (lambda: x.TRAIN_CO2_T(1e6, 481), 481.0),
    ],
)
def test_extended_model_matches_engine(call, expected):
    got = call()
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-15)


def test_scalar_inputs_give_a_float_and_ints_are_numbers():
    assert type(x.TRAIN_DAYS(37_000_000_000, 14_800_000_000_000, 2048, 400)) is float


# ---------------------------------------------------------------------------------------------
# Ranges
# ---------------------------------------------------------------------------------------------


def test_column_range_spills_a_column():
    got = x.TRAIN_DAYS(37e9, 14.8e12, [[1024], [2048], [4096]], 400)
    assert np.shape(got) == (3, 1)
    assert got == [[x.TRAIN_DAYS(37e9, 14.8e12, n, 400)] for n in (1024, 2048, 4096)]


def test_row_range_spills_a_row_and_one_by_one_is_a_cell():
    assert np.shape(x.TRAIN_FLOPS([[1e9, 2e9, 3e9]], 1e12)) == (1, 3)
    assert x.TRAIN_FLOPS([[1e9]], [[1e12]]) == 6e21


def test_column_against_row_gives_a_table_like_excel():
    got = x.TRAIN_FLOPS([[1e9], [2e9]], [[1e12, 2e12, 3e12]])
    assert np.array(got).shape == (2, 3)
    assert got[1][2] == engine.training_flops(2e9, 3e12)


def test_flat_list_is_a_column():
    assert x.TRAIN_FLOPS([1e9, 2e9], 1e12) == [[6e21], [1.2e22]]


def test_numpy_arrays_are_accepted():
    got = x.TRAIN_FLOPS(np.array([[1e9], [2e9]]), np.float64(1e12))
    assert got == [[6e21], [1.2e22]]


def test_ten_thousand_rows_is_one_call():
    params = [[float(p)] for p in np.linspace(1e9, 1e12, 10_000)]
    got = x.TRAIN_DAYS(params, 1e12, 1024, 400)
    assert len(got) == 10_000 and all(len(r) == 1 for r in got)
    expected = engine.wall_clock_days(
        engine.accelerator_hours(engine.training_flops(np.array(params), 1e12), 400), 1024
    )
    np.testing.assert_array_equal(np.array(got), expected)


def test_mismatched_ranges_are_a_clear_error():
    err = raises(
        lambda: x.TRAIN_DAYS([[1e9], [2e9]], [[1e12], [2e12], [3e12]], 8, 400),
        "TRAIN_DAYS",
        "active_params is 2 rows x 1 column",
        "tokens is 3 rows x 1 column",
    )
    assert isinstance(err, CellError)


def test_ragged_range_is_an_error():
    raises(lambda: x.TRAIN_FLOPS([[1e9, 2e9], [3e9]], 1e12), "active_params", "rectangular")


#: Parameters and tokens from their plausibility floors up (quantities.MIN_PLAUSIBLE).
params_ = st.floats(min_value=quantities.MIN_PLAUSIBLE["active_params"], max_value=1e13)
tokens_ = st.floats(min_value=quantities.MIN_PLAUSIBLE["training_tokens"], max_value=1e13)


@settings(max_examples=60, deadline=None)
@given(
    params=st.lists(params_, min_size=1, max_size=12),
    tokens=tokens_,
    accelerators=st.integers(min_value=1, max_value=100_000),
    tflops=st.floats(min_value=1, max_value=5000),
)
def test_range_call_equals_single_calls(params, tokens, accelerators, tflops):
    column = [[p] for p in params]
    got = x.TRAIN_DAYS(column, tokens, accelerators, tflops)
    single = [x.TRAIN_DAYS(p, tokens, accelerators, tflops) for p in params]
    if len(params) == 1:
        assert got == single[0]
    else:
        assert [r[0] for r in got] == single


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            params_,
            tokens_,
            st.floats(min_value=1, max_value=5000),
            st.floats(0, 10, allow_subnormal=False),
        ),
        min_size=2,
        max_size=8,
    )
)
def test_cost_over_ranges_equals_single_calls(rows):
    cols = [[[r[i]] for r in rows] for i in range(4)]
    got = x.TRAIN_COST(*cols)
    assert [g[0] for g in got] == [x.TRAIN_COST(*r) for r in rows]


# ---------------------------------------------------------------------------------------------
# Optional arguments
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("blank", [None, "", [[None]], [[""]], [None]])
def test_blank_optional_argument_takes_its_default(blank):
    assert x.TRAIN_KWH(37e9, 14.8e12, 400, blank, blank) == x.TRAIN_KWH(37e9, 14.8e12, 400)
    assert x.CHECKPOINT_GB(671e9, blank) == 1342.0
    assert x.EFFECTIVE_TFLOPS(1000, 0.5, blank) == 500.0
    assert x.TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60, blank) == x.TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60)


def test_optional_argument_can_be_a_range():
    got = x.TRAIN_KWH(37e9, 14.8e12, 400, [[700], [1000]], 1.1)
    assert [r[0] for r in got] == [x.TRAIN_KWH(37e9, 14.8e12, 400, w, 1.1) for w in (700, 1000)]


def test_blank_cell_inside_an_optional_range_is_an_error_not_a_default():
    raises(
        lambda: x.TRAIN_KWH(37e9, 14.8e12, 400, [[700], [None]]),
        "watts_per_accelerator at row 2, column 1 is blank",
    )


# ---------------------------------------------------------------------------------------------
# Bad input: the function, the argument, the cell and the rule; never a silent number
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("blank", [None, "", [[None]], [[""]]])
def test_blank_required_argument(blank):
    raises(lambda: x.TRAIN_DAYS(blank, 1e12, 8, 400), "TRAIN_DAYS: active_params", "blank")


@pytest.mark.parametrize(
    "value, rule",
    [
        ("abc", "must be a number, not text ('abc')"),
        ("1e9", "must be a number, not text"),
        (True, "not TRUE/FALSE"),
        (False, "not TRUE/FALSE"),
        (0, "must be greater than 0 (got 0)"),
        (-5, "must be greater than 0 (got -5)"),
        (math.nan, "must be a finite number"),
        (math.inf, "must be a finite number"),
        ("#N/A", "is an Excel error (#N/A)"),
        ("#VALUE!", "is an Excel error (#VALUE!)"),
        ("#DIV/0!", "is an Excel error (#DIV/0!)"),
        ("#NUM!", "is an Excel error (#NUM!)"),
        ("#REF!", "is an Excel error (#REF!)"),
        ("#NAME?", "is an Excel error (#NAME?)"),
        ({"type": "Double"}, "must be a number (got dict)"),
    ],
)
def test_bad_single_cell(value, rule):
    raises(lambda: x.TRAIN_DAYS(37e9, 14.8e12, value, 400), "TRAIN_DAYS: accelerators ", rule)


@pytest.mark.parametrize(
    "bad, rule",
    [
        ("text", "must be a number, not text"),
        (None, "is blank"),
        (True, "not TRUE/FALSE"),
        (-1.0, "must be greater than 0 (got -1)"),
        (math.nan, "must be a finite number"),
        ("#N/A", "is an Excel error (#N/A)"),
    ],
)
def test_bad_cell_in_a_range_is_located(bad, rule):
    column = [[1e9], [2e9], [bad], [4e9]]
    raises(
        lambda: x.TRAIN_FLOPS(column, 1e12), "TRAIN_FLOPS: active_params at row 3, column 1 ", rule
    )


def test_bad_cell_in_a_row_range_names_its_column():
    raises(
        lambda: x.EFFECTIVE_TFLOPS(989, [[0.3, 0.4, 1.5]]), "mfu at row 1, column 3", "at most 1"
    )


@pytest.mark.parametrize("mfu", [0, -0.1, 1.0001, 40])
def test_mfu_outside_zero_one(mfu):
    raises(lambda: x.EFFECTIVE_TFLOPS(989.4, mfu), "EFFECTIVE_TFLOPS: mfu", "at most 1")


def test_mfu_of_one_is_allowed():
    assert x.EFFECTIVE_TFLOPS(989.4, 1) == 989.4


def test_error_value_in_an_optional_argument_is_not_a_blank():
    raises(lambda: x.TRAIN_KWH(37e9, 14.8e12, 400, "#N/A"), "watts_per_accelerator", "#N/A")


def test_pue_below_one():
    raises(lambda: x.TRAIN_KWH(37e9, 14.8e12, 400, 700, 0.9), "TRAIN_KWH: pue", "at least 1")


def test_overflow_is_an_error_not_infinity():
    raises(
        lambda: x.TRAIN_FLOPS(1e200, 1e200),
        "TRAIN_FLOPS: the result is out of range (above 1.8e308): lower active_params (1e+200) "
        "or tokens (1e+200)",
    )
    # An intermediate (training_flops) overflowing names the cells' arguments, not itself.
    raises(
        lambda: x.TRAIN_DAYS(1e200, 1e200, 1, 1),
        "TRAIN_DAYS: the result is out of range (above 1.8e308)",
        "lower active_params (1e+200) or tokens (1e+200)",
    )


def test_errors_are_xlwings_errors_and_value_errors():
    with pytest.raises(ValueError):
        x.TRAIN_FLOPS(-1, 1)
    with pytest.raises(xw.XlwingsError):
        x.TRAIN_FLOPS(-1, 1)


# ---------------------------------------------------------------------------------------------
# Catalogue look-ups
# ---------------------------------------------------------------------------------------------


def test_accel_spec_values_and_aliases():
    assert x.ACCEL_SPEC("h100", "bf16_tflops") == 989.4
    assert x.ACCEL_SPEC("H100 SXM5", "BF16_TFLOPS") == 989.4
    assert x.ACCEL_SPEC("H100", "name") == "H100 SXM"
    assert x.ACCEL_SPEC("a100", "source") == catalogue.accelerator_field("a100", "source")


def test_accel_spec_unpublished_figure_is_na():
    assert catalogue.accelerator_field("H800", "tdp_watts") is None
    assert x.ACCEL_SPEC("H800", "tdp_watts") == "#N/A"


def test_accel_spec_broadcasts_names_against_fields():
    got = x.ACCEL_SPEC([["H100"], ["MI300X"]], [["hbm_gb", "tdp_watts"]])
    assert got == [[80.0, 700.0], [192.0, 750.0]]


def test_unknown_accelerator_lists_the_known_ones():
    err = raises(
        lambda: x.ACCEL_SPEC("H1000", "bf16_tflops"), "ACCEL_SPEC: accelerator_name", "'H1000'"
    )
    for known in catalogue.accelerators()["name"]:
        assert known in str(err)


def test_unknown_name_in_a_range_is_located():
    raises(
        lambda: x.ACCEL_SPEC([["H100"], ["nope"]], "hbm_gb"), "accelerator_name at row 2, column 1"
    )


def test_unknown_field_lists_the_fields():
    err = raises(lambda: x.ACCEL_SPEC("H100", "speed"), "ACCEL_SPEC: field", "'speed'")
    for field in catalogue.ACCELERATOR_FIELDS:
        assert field in str(err)


@pytest.mark.parametrize("bad, rule", [(None, "blank"), (3.0, "must be text"), ("#N/A", "#N/A")])
def test_bad_name_cells(bad, rule):
    raises(lambda: x.REF_RUN(bad, "total_params"), "REF_RUN: run_name", rule)


def test_ref_run():
    assert x.REF_RUN("deepseek-v3", "active_params") == 37e9
    assert x.REF_RUN("DEEPSEEK-V3", "training_tokens") == 14.8e12
    assert x.REF_RUN("llama-3.1-405b", "accelerator") == "H100 SXM"
    assert x.REF_RUN("mixtral", "training_tokens") == "#N/A"
    closest = "did you mean DeepSeek-V3, DeepSeek-V2 or DeepSeek LLM 67B?"
    err = raises(lambda: x.REF_RUN("deepsek v3", "total_params"), "REF_RUN: run_name", closest,
                 "(60 runs in all: `compute-lab runs`")  # fmt: skip
    assert "Llama 2 7B" not in str(err)  # the three closest, not the 60 runs on one line


# ---------------------------------------------------------------------------------------------
# TRAIN_PLAN
# ---------------------------------------------------------------------------------------------


def test_train_plan_is_a_labelled_table_of_every_output():
    plan = x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2, 700, 1.1, 0.08, 481, 80)
    est = engine.estimate(
        671e9,
        14.8e12,
        2048,
        active_params=37e9,
        effective_tflops=400,
        usd_per_accelerator_hour=2,
        watts_per_accelerator=700,
        pue=1.1,
        usd_per_kwh=0.08,
        grams_co2_per_kwh=481,
        hbm_gb=80,
    )
    assert len(plan) == len(quantities.PLAN_OUTPUTS)
    for row, q in zip(plan, quantities.PLAN_OUTPUTS, strict=True):
        assert row[0] == f"{q.label} ({q.unit})"
        assert row[1] == est[q.name]


def test_train_plan_blank_electricity_takes_the_planners_defaults():
    """Issue 9: a blank price and grid intensity are the planner's defaults, not #N/A rows."""
    table = dict(x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2))
    typed = dict(
        x.TRAIN_PLAN(
            671e9,
            37e9,
            14.8e12,
            2048,
            400,
            2,
            None,
            None,
            plan.RULES["usd_per_kwh"].default,
            plan.RULES["grams_co2_per_kwh"].default,
        )
    )
    assert table == typed
    assert table["Electricity cost (US$)"] == pytest.approx(127_773.33, abs=0.01)
    assert table["Operational emissions (tCO2)"] == pytest.approx(768.23, abs=0.01)
    assert round(table["Wall-clock time (days)"], 1) == 46.4
    assert table["Total cost (US$)"] == pytest.approx(4_691_106.67, abs=0.01)
    # Only a row whose input has no default stays #N/A: memory without hbm_gb.
    assert table["Min. accelerators for training state (accelerators)"] == "#N/A"


@settings(max_examples=40, deadline=None)
@given(
    tflops=st.floats(min_value=50, max_value=2000),
    usd_per_kwh=st.none() | st.floats(min_value=0, max_value=1, allow_subnormal=False),
    grams=st.none() | st.floats(min_value=0, max_value=1000, allow_subnormal=False),
    pue=st.none() | st.floats(min_value=1, max_value=2),
)
def test_train_plan_total_equals_the_planners_estimate(tflops, usd_per_kwh, grams, pue):
    """TRAIN_PLAN's total cost is udfs.plan.estimate_scenario's for the same plan (to 1e-9)."""
    table = dict(x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, tflops, 2, 700, pue, usd_per_kwh, grams))
    inputs = {
        "total_params": 671e9,
        "active_params": 37e9,
        "training_tokens": 14.8e12,
        "accelerators": 2048,
        "effective_tflops_input": tflops,
        "usd_per_accelerator_hour": 2.0,
        "watts_per_accelerator": 700.0,
        "pue": pue,
        "usd_per_kwh": usd_per_kwh,
        "grams_co2_per_kwh": grams,
    }
    want = plan.estimate_scenario(inputs)
    assert table["Total cost (US$)"] == pytest.approx(want["total_cost_usd"], rel=1e-9)
    assert table["Electricity cost (US$)"] == pytest.approx(want["electricity_cost_usd"], rel=1e-9)
    assert table["Operational emissions (tCO2)"] == pytest.approx(want["co2_tonnes"], rel=1e-9)


def test_blank_electricity_price_is_priced_alike_by_train_plan_and_the_ranges():
    """TRAIN_PLAN, TRAIN_PLAN_RANGE's P50 and TRAIN_QUANTILE(0.5) price a blank US$/kWh alike."""
    args = (671e9, 37e9, 14.8e12, 2048, "H100", None, 2, None, None, 700, None, None, 400)
    point = dict(x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2))
    table = {row[0]: row[2] for row in x.TRAIN_PLAN_RANGE(*args)[1:]}
    for label in ("Electricity cost (US$)", "Total cost (US$)"):
        assert table[label] == pytest.approx(point[label], rel=1e-12)
    assert x.TRAIN_QUANTILE("cost", 0.5, *args) == pytest.approx(
        point["Total cost (US$)"], rel=1e-12
    )


def test_train_plan_active_above_total():
    raises(
        lambda: x.TRAIN_PLAN(37e9, 671e9, 14.8e12, 2048, 400, 2),
        "TRAIN_PLAN: active_params",
        "must not exceed total_params",
    )


def test_train_plan_wants_single_cells():
    raises(lambda: x.TRAIN_PLAN(671e9, 37e9, [[1e12], [2e12]], 2048, 400, 2), "tokens", "single")


def test_train_plan_names_tokens_as_excel_does():
    raises(lambda: x.TRAIN_PLAN(671e9, 37e9, -1, 2048, 400, 2), "TRAIN_PLAN: tokens ")


# ---------------------------------------------------------------------------------------------
# The module as Excel and Python see it
# ---------------------------------------------------------------------------------------------

ISSUE_NAMES = {
    "TRAIN_FLOPS",
    "TRAIN_ACCEL_HOURS",
    "TRAIN_DAYS",
    "TRAIN_COST",
    "TRAIN_KWH",
    "CHECKPOINT_GB",
    "EFFECTIVE_TFLOPS",
    "TRAIN_GOODPUT",
    "ACCELS_FOR_DAYS",
    "IMPLIED_MFU",
    "MIN_ACCELS_FOR_MEMORY",
    "CHINCHILLA_TOKENS",
    "TRAIN_CO2_T",
    "ACCEL_SPEC",
    "REF_RUN",
    "TRAIN_PLAN",
    "TRAIN_QUANTILE",
    "TRAIN_PLAN_RANGE",
}


def test_every_issue_function_is_exported_and_reachable_from_udfs():
    assert set(x.__all__) == ISSUE_NAMES
    for name in ISSUE_NAMES:
        assert getattr(udfs, name) is getattr(x, name)
        assert name in dir(udfs)


def test_signatures_required_first_and_documented():
    for name in x.__all__:
        f = getattr(x, name)
        params = list(inspect.signature(f).parameters.values())
        seen_optional = False
        for p in params:
            if p.default is inspect.Parameter.empty:
                assert not seen_optional, f"{name}: required {p.name} after an optional one"
            else:
                seen_optional = True
            doc = x._FUNCTION_ARG_DOCS.get((name, p.name), x.ARG_DOCS[p.name])
            assert 10 < len(doc) <= 255
        summary = x._summary(f.__doc__)
        assert 20 < len(summary) <= 255
        assert "Examples" in f.__doc__
        assert f.__doc__.count("    Parameters\n") == 1


def test_documented_defaults_match_the_signatures():
    for (name, param), doc in [
        (("TRAIN_KWH", "watts_per_accelerator"), x.ARG_DOCS["watts_per_accelerator"]),
        (("CHECKPOINT_GB", "bytes_per_param"), x.ARG_DOCS["bytes_per_param"]),
        (
            ("MIN_ACCELS_FOR_MEMORY", "bytes_per_param"),
            x._FUNCTION_ARG_DOCS[("MIN_ACCELS_FOR_MEMORY", "bytes_per_param")],
        ),
        (("CHINCHILLA_TOKENS", "tokens_per_param"), x.ARG_DOCS["tokens_per_param"]),
    ]:
        default = inspect.signature(getattr(x, name)).parameters[param].default
        assert f"Blank: {default:g}" in doc


def test_import_udfs_needs_no_xlwings_until_a_function_is_used():
    code = (
        "import sys, udfs, udfs.engine\n"
        "assert 'xlwings' not in sys.modules\n"
        "print(round(udfs.TRAIN_DAYS(37e9, 14.8e12, 2048, 400), 1))\n"
        "assert 'xlwings' in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "46.4"


def test_one_by_one_range_reports_no_cell_position():
    err = raises(lambda: x.TRAIN_DAYS(37e9, 14.8e12, [["many"]], 400), "accelerators must be")
    assert err.position is None and "row" not in str(err)


def test_error_attributes_name_function_argument_and_cell():
    err = raises(lambda: x.TRAIN_FLOPS([[1e9], [0]], 1e12))
    assert (err.function, err.argument, err.position) == ("TRAIN_FLOPS", "active_params", (1, 0))
    assert err.rule == "must be greater than 0 (got 0)"


# Valid values of each numeric argument, for the range-equals-single-cells law.
_big = st.floats(min_value=1e6, max_value=1e13)
_ARG_VALUES = {
    "active_params": _big,
    "total_params": _big,
    "params": _big,
    "tokens": _big,
    "accelerators": st.integers(min_value=1, max_value=100_000),
    "effective_tflops": st.floats(min_value=1, max_value=5000),
    "peak_tflops": st.floats(min_value=1, max_value=5000),
    "usd_per_accelerator_hour": st.floats(min_value=0, max_value=20, allow_subnormal=False),
    "watts_per_accelerator": st.floats(min_value=1, max_value=2000),
    "pue": st.floats(min_value=1, max_value=3),
    "bytes_per_param": st.floats(min_value=0.5, max_value=32),
    "mfu": st.floats(min_value=0.01, max_value=1),
    "goodput": st.floats(min_value=0.01, max_value=1),
    "usable_fraction": st.floats(min_value=0.01, max_value=1),
    "mtbf_hours": st.floats(min_value=0.5, max_value=1000),
    "checkpoint_write_hours": st.floats(min_value=0.001, max_value=0.2),
    "restart_hours": st.floats(min_value=0, max_value=1, allow_subnormal=False),
    "interval_hours": st.floats(min_value=0.05, max_value=10),
    "accelerator_hours": st.floats(min_value=1, max_value=1e8),
    "target_days": st.floats(min_value=1, max_value=1000),
    "training_flops": st.floats(min_value=1e18, max_value=1e26),
    "hbm_gb": st.floats(min_value=8, max_value=300),
    "tokens_per_param": st.floats(min_value=1, max_value=100),
    "electricity_kwh": st.floats(min_value=0, max_value=1e9, allow_subnormal=False),
    "grams_co2_per_kwh": st.floats(min_value=0, max_value=1000, allow_subnormal=False),
}
#: Functions with text arguments or one-plan tables have tests of their own.
NUMERIC_FUNCTIONS = [
    n
    for n in x.__all__
    if n not in ("ACCEL_SPEC", "REF_RUN", "TRAIN_PLAN", "TRAIN_QUANTILE", "TRAIN_PLAN_RANGE")
]


@pytest.mark.parametrize("name", NUMERIC_FUNCTIONS)
@settings(max_examples=25, deadline=None)
@given(data=st.data(), rows=st.integers(min_value=2, max_value=6))
def test_every_function_over_ranges_equals_single_calls(name, data, rows):
    f = getattr(x, name)
    params = list(inspect.signature(f).parameters)
    # Each argument is a single cell or a column of `rows` cells, at random.
    args = []
    for p in params:
        if data.draw(st.booleans(), label=f"{p} is a range"):
            args.append(
                [[v] for v in data.draw(st.lists(_ARG_VALUES[p], min_size=rows, max_size=rows))]
            )
        else:
            args.append(data.draw(_ARG_VALUES[p], label=p))
    try:
        got = f(*args)
    except CellError as err:
        # Valid cells can still make an impossible row (goodput with no time left to train,
        # an implied MFU above 1): the single call of the row named fails the same way.
        row = err.position[0] if err.position else 0
        single = [a[row][0] if isinstance(a, list) else a for a in args]
        with pytest.raises(CellError) as one:
            f(*single)
        assert (one.value.argument, one.value.rule) == (err.argument, err.rule)
        return
    if not any(isinstance(a, list) for a in args):
        assert isinstance(got, float)
        return
    assert np.shape(got) == (rows, 1)
    for i in range(rows):
        single = [a[i][0] if isinstance(a, list) else a for a in args]
        assert got[i][0] == f(*single)


# ---------------------------------------------------------------------------------------------
# Impossible inputs the engine refuses: the cell error names the Excel argument and the cell
# ---------------------------------------------------------------------------------------------

_NO_TIME = "is too short: checkpoint writes, redone work and restarts leave no time to train"
_MFU_ABOVE_1 = "is too few for these FLOPs at this peak (the implied MFU is above 1)"


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: x.TRAIN_DAYS(37e9, 14.8e12, [[2048], [2.5]], 400),
            "TRAIN_DAYS: accelerators at row 2, column 1 must be a whole number (got 2.5)",
        ),
        (
            lambda: x.TRAIN_DAYS(37e9, 14.8e12, 2048.5, 400),
            "TRAIN_DAYS: accelerators must be a whole number (got 2048.5)",
        ),
        (
            lambda: x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 1000.5, 400, 2),
            "TRAIN_PLAN: accelerators must be a whole number (got 1000.5)",
        ),
        (lambda: x.TRAIN_GOODPUT(0.05, 1 / 60, 5 / 60), f"TRAIN_GOODPUT: mtbf_hours {_NO_TIME}"),
        (
            lambda: x.TRAIN_GOODPUT([[3.09], [0.05]], 1 / 60, 5 / 60),
            f"TRAIN_GOODPUT: mtbf_hours at row 2, column 1 {_NO_TIME}",
        ),
        (  # the interval (30 h) is the cause, not the MTBF (issue 22 row 18)
            lambda: x.TRAIN_GOODPUT(10, 1 / 60, 0, [[1], [30]]),
            "TRAIN_GOODPUT: interval_hours at row 2, column 1 is too long for an MTBF of 10 h: "
            "half an interval of work is redone after each failure, leaving no time to train "
            "(the optimum is about 0.577 h) (got 30)",
        ),
        (lambda: x.IMPLIED_MFU(1e24, 1, 1000), f"IMPLIED_MFU: accelerator_hours {_MFU_ABOVE_1}"),
        (
            lambda: x.IMPLIED_MFU(1e24, [[1e6], [1]], 1000),
            f"IMPLIED_MFU: accelerator_hours at row 2, column 1 {_MFU_ABOVE_1}",
        ),
    ],
)
def test_impossible_inputs_are_cell_errors(call, message):
    with pytest.raises(CellError) as err:
        call()
    assert str(err.value) == message


def test_whole_accelerators_written_as_decimals_are_fine():
    assert x.TRAIN_DAYS(37e9, 14.8e12, 2048.0, 400) == x.TRAIN_DAYS(37e9, 14.8e12, 2048, 400)


@pytest.mark.parametrize("value", [10**400, [[2048], [10**400]], [[10**400]]])
def test_an_integer_beyond_float_range_is_a_cell_error(value):
    with pytest.raises(CellError, match="accelerators .*is too large to be a number"):
        x.TRAIN_DAYS(37e9, 14.8e12, value, 400)


def test_not_available_is_documented_per_route():
    # Classic xlwings cannot return an error value: "#N/A" stays text there (ISNA() is FALSE).
    assert x.ACCEL_SPEC("H800", "tdp_watts") == x.NOT_AVAILABLE == "#N/A"
    for text in (x.__doc__, x.ACCEL_SPEC.__doc__):
        flat = " ".join(text.split())
        assert "classic" in flat and "ISNA() is FALSE" in flat and "ISNUMBER()" in flat


# ---------------------------------------------------------------------------------------------
# Issue 8: results finite or a cell error naming the arguments; denormals; no warnings
# ---------------------------------------------------------------------------------------------


def test_issue8_2_out_of_range_result_names_the_excel_argument():
    err = raises(
        lambda: x.TRAIN_COST(37e9, 14.8e12, 400, 1e305),
        "TRAIN_COST: the result is out of range (above 1.8e308): lower "
        "usd_per_accelerator_hour (1e+305)",
    )
    assert err.argument == "usd_per_accelerator_hour" and err.position is None
    err = raises(
        lambda: x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2, 1e300, None, 1e300),
        "TRAIN_PLAN: electricity cost is out of range (above 1.8e308)",
        "lower watts_per_accelerator (1e+300) or usd_per_kwh (1e+300)",
    )
    assert err.argument == "watts_per_accelerator"
    # The engine's training_tokens is TRAIN_PLAN's tokens.
    raises(
        lambda: x.TRAIN_PLAN(671e9, 37e9, 1e300, 2048, 400, 2),
        "TRAIN_PLAN: training compute (FLOPs) is out of range (above 1.8e308): lower tokens",
    )


def test_issue8_2_out_of_range_in_a_range_names_the_cell():
    err = raises(
        lambda: x.TRAIN_DAYS(37e9, [[14.8e12], [14.8e12], [1e300]], 2048, 400),
        "TRAIN_DAYS: the result at row 3, column 1 is out of range (above 1.8e308)",
        "lower tokens (1e+300)",
    )
    assert err.position == (2, 0) and err.argument == "tokens"


def test_issue8_2_underflow_is_refused_not_zero():
    raises(
        lambda: x.TRAIN_ACCEL_HOURS(1e6, 1e9, 1e300),
        "TRAIN_ACCEL_HOURS: the result is out of range (below 2.2e-308)",
        "lower effective_tflops (1e+300)",
    )
    # A cost may be 0, so one that underflows is 0 (Excel's smallest number is 2.2E-308).
    assert x.TRAIN_CO2_T(2.3e-308, 481) == 0.0
    assert x.TRAIN_COST(37e9, 14.8e12, 400, 0) == 0.0


@pytest.mark.parametrize("value", [5e-324, 1e-320])
def test_issue8_8_denormal_cells_are_refused_by_argument(value):
    raises(
        lambda: x.TRAIN_DAYS(37e9, 14.8e12, 2048, value),
        "TRAIN_DAYS: effective_tflops is too close to 0 to compute with",
    )
    raises(
        lambda: x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2, 700, 1, value),
        "TRAIN_PLAN: usd_per_kwh is too close to 0",
    )
    raises(
        lambda: x.TRAIN_COST(37e9, 14.8e12, 400, [[2.0], [value]]),
        "TRAIN_COST: usd_per_accelerator_hour at row 2, column 1 is too close to 0",
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 1e305),
        lambda: x.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 1e-300, 2, 1e300, None, 1e300, 1e300),
        lambda: x.TRAIN_COST(37e9, 1e300, 400, 1e300),
        lambda: x.TRAIN_DAYS(1e200, 1e200, 1, 1),
        lambda: x.MIN_ACCELS_FOR_MEMORY(1e300, 1e-300),
        lambda: x.TRAIN_GOODPUT(1e-300, 1e300, 0),
    ],
)
def test_issue8_10_no_warning_from_any_function(call):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the call instead
        with np.errstate(all="warn"):
            with pytest.raises(xw.XlwingsError) as info:
                call()
    assert "Warning" not in str(info.value) and "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# Issue 11: TRAIN_QUANTILE and TRAIN_PLAN_RANGE (calibrated ranges)
# ---------------------------------------------------------------------------------------------

#: The DeepSeek-V3-like example plan as TRAIN_QUANTILE's plan arguments (after quantity, p).
EXAMPLE = dict(
    total_params=671e9,
    active_params=37e9,
    tokens=14.8e12,
    accelerators=2048,
    accelerator_name="H100",
)
RANGE_QUANTITIES = x.QUANTILE_QUANTITIES


def quantile(quantity, p, **plan_args):
    return x.TRAIN_QUANTILE(quantity, p, **{**EXAMPLE, **plan_args})


def point_of(**plan_args):
    """The engine's point estimate of the plan as udfs.plan.resolve reads it."""
    a = {**EXAMPLE, **plan_args}
    inputs = {_quantile_cells._PLAN_INPUT_OF[k]: v for k, v in a.items()}
    resolved = plan.resolve(inputs)
    return engine.estimate(**resolved.arguments), resolved


def test_quantile_functions_are_exported_with_their_quantities():
    assert set(RANGE_QUANTITIES) == set(quantities.RANGE_QUANTITIES) == set(ranges.QUANTITIES)
    assert {"accelerator_hours", "wall_clock_days", "compute_cost_usd", "electricity_kwh"} <= set(
        RANGE_QUANTITIES
    ) and "total_cost_usd" in RANGE_QUANTITIES


def test_quantile_with_a_typed_throughput_keeps_the_calibrated_spread_unless_a_range_is_given():
    typed = dict(effective_tflops=400, usd_per_accelerator_hour=2, watts_per_accelerator=700)
    spread = calibration.default_range_pct()
    assert round(quantile("hours", 0.5, **typed)) == 2_281_667
    assert quantile("hours", 0.9, **typed) == pytest.approx(2_281_667 * (1 + spread), rel=1e-6)
    exact = dict(typed, throughput_range_pct=0)  # the team's own range: 0, exact
    for p in (0.01, 0.1, 0.5, 0.9, 0.99):
        assert round(quantile("hours", p, **exact)) == 2_281_667
        assert round(quantile("days", p, **exact), 1) == 46.4
    # 15% throughput uncertainty: P90 is 15% above P50 and P10 is P50 / 1.15.
    assert quantile("days", 0.9, throughput_range_pct=0.15, **typed) == pytest.approx(
        46.420627 * 1.15, rel=1e-7
    )
    assert quantile("days", 0.1, throughput_range_pct=0.15, **typed) == pytest.approx(
        46.420627 / 1.15, rel=1e-7
    )


def test_blank_mfu_takes_the_calibrated_default_and_its_spread():
    point, resolved = point_of()
    assert resolved.throughput_source == "calibrated default"
    assert resolved.throughput_sigma == pytest.approx(calibration.throughput_sigma(), rel=1e-12)
    assert resolved.throughput_sigma > 0
    spread = calibration.default_range_pct()
    for q in ("accelerator_hours", "wall_clock_days", "electricity_kwh", "compute_cost_usd"):
        assert quantile(q, 0.5) == point[q]
        assert quantile(q, 0.9) == pytest.approx(point[q] * (1 + spread), rel=1e-12)
        assert quantile(q, 0.1) == pytest.approx(point[q] / (1 + spread), rel=1e-12)
    # The calibrated MFU is the catalogue's peak times the calibration's prediction.
    mfu = calibration.predicted_mfu("H100 SXM", 37e9)
    typed = quantile("hours", 0.5, mfu=float(mfu))
    assert typed == pytest.approx(point["accelerator_hours"], rel=1e-12)
    # a typed MFU is an estimate too: it keeps the calibrated spread
    assert quantile("hours", 0.9, mfu=float(mfu)) == pytest.approx(typed * (1 + spread), rel=1e-12)


def test_price_range_widens_the_costs_only():
    kw = dict(effective_tflops=400, throughput_range_pct=0.15, price_range_pct=0.2)
    z = ranges.z_score(0.9)
    s_tp, s_price = np.log(1.15) / z, np.log(1.2) / z
    p50 = quantile("compute_cost_usd", 0.5, **kw)
    assert quantile("compute_cost_usd", 0.9, **kw) == pytest.approx(
        p50 * np.exp(z * np.hypot(s_tp, s_price)), rel=1e-12
    )
    assert quantile("hours", 0.9, **kw) == pytest.approx(quantile("hours", 0.5, **kw) * 1.15)
    # The total moves by the rental and electricity moves (comonotone).
    got = {k: quantile(q, 0.9, **kw) - quantile(q, 0.5, **kw) for k, q in
           (("total", "total_cost_usd"), ("rental", "compute_cost_usd"),
            ("elec", "electricity_cost_usd"))}  # fmt: skip
    assert got["total"] == pytest.approx(got["rental"] + got["elec"], rel=1e-12)


@pytest.mark.parametrize(
    "alias, name",
    [
        ("hours", "accelerator_hours"),
        ("GPU hours", "accelerator_hours"),
        ("Days", "wall_clock_days"),
        ("wall-clock days", "wall_clock_days"),
        ("cost", "total_cost_usd"),
        ("Total cost", "total_cost_usd"),
        ("compute cost", "compute_cost_usd"),
        ("kWh", "electricity_kwh"),
        (" electricity_cost_usd ", "electricity_cost_usd"),
    ],
)
def test_quantity_aliases(alias, name):
    assert quantile(alias, 0.9) == quantile(name, 0.9)


def test_a_column_of_p_spills_and_a_row_of_quantities_gives_a_table():
    ps = [[0.1], [0.5], [0.9]]
    table = quantile([list(RANGE_QUANTITIES)], ps)
    assert np.shape(table) == (3, len(RANGE_QUANTITIES))
    for i, (p,) in enumerate(ps):
        for j, q in enumerate(RANGE_QUANTITIES):
            assert table[i][j] == quantile(q, p)
    accels = quantile("days", 0.9, accelerator_name=[["H100"], ["A100"], ["TPU v4"]])
    assert np.shape(accels) == (3, 1) and accels[1][0] != accels[0][0]


_P = st.floats(min_value=0.001, max_value=0.999)
_PLAN = st.fixed_dictionaries(
    {
        "total_params": st.floats(min_value=1e8, max_value=2e12),
        "active_fraction": st.floats(min_value=0.01, max_value=1),
        "tokens": st.floats(min_value=1e9, max_value=1e14),
        "accelerators": st.integers(min_value=1, max_value=200_000),
        "accelerator_name": st.sampled_from(list(catalogue.accelerators().index) + ["h100"]),
        "mfu": st.one_of(st.none(), st.floats(min_value=0.05, max_value=0.8)),
        "usd_per_accelerator_hour": st.one_of(
            st.none(), st.floats(min_value=0, max_value=20, allow_subnormal=False)
        ),
        "throughput_range_pct": st.one_of(
            st.none(), st.floats(min_value=0, max_value=2, allow_subnormal=False)
        ),
        "price_range_pct": st.one_of(
            st.none(), st.floats(min_value=0, max_value=2, allow_subnormal=False)
        ),
        "watts_per_accelerator": st.one_of(st.none(), st.floats(min_value=100, max_value=2000)),
        "pue": st.one_of(st.none(), st.floats(min_value=1, max_value=2)),
        "usd_per_kwh": st.one_of(
            st.none(), st.floats(min_value=0, max_value=1, allow_subnormal=False)
        ),
        "effective_tflops": st.one_of(st.none(), st.floats(min_value=10, max_value=3000)),
    }
)


def _plan_args(d):
    d = dict(d)
    d["active_params"] = d["total_params"] * d.pop("active_fraction")
    return d


@settings(max_examples=60, deadline=None)
@given(plan_draw=_PLAN)
def test_p10_p50_p90_are_ordered_and_p50_is_the_point(plan_draw):
    args = _plan_args(plan_draw)
    table = x.TRAIN_PLAN_RANGE(**args)
    point, _ = point_of(**args)
    assert [row[0] for row in table[1:]] == [label for _, label in x.PLAN_RANGE_ROWS]
    for (q, _), (_, p10, p50, p90) in zip(x.PLAN_RANGE_ROWS, table[1:], strict=True):
        assert p10 <= p50 <= p90, (q, p10, p50, p90)
        assert p50 == point[q]
        assert p50 == x.TRAIN_QUANTILE(q, 0.5, **args)


@settings(max_examples=40, deadline=None)
@given(plan_draw=_PLAN, lo=_P, hi=_P)
def test_quantiles_grow_with_p(plan_draw, lo, hi):
    args = _plan_args(plan_draw)
    lo, hi = sorted((lo, hi))
    for q in RANGE_QUANTITIES:
        assert x.TRAIN_QUANTILE(q, lo, **args) <= x.TRAIN_QUANTILE(q, hi, **args)


@settings(max_examples=40, deadline=None)
@given(
    plan_draw=_PLAN,
    tflops=st.floats(min_value=10, max_value=3000),
    usd_per_kwh=st.floats(min_value=0, max_value=1, allow_subnormal=False),
    spread=st.floats(min_value=0, max_value=1, allow_subnormal=False),
)
def test_p50_equals_train_plan(plan_draw, tflops, usd_per_kwh, spread):
    args = _plan_args(plan_draw)
    args.update(effective_tflops=tflops, usd_per_kwh=usd_per_kwh, throughput_range_pct=spread)
    point, resolved = point_of(**args)
    plan_table = dict(
        x.TRAIN_PLAN(
            args["total_params"],
            args["active_params"],
            args["tokens"],
            args["accelerators"],
            tflops,
            resolved.arguments["usd_per_accelerator_hour"],
            resolved.arguments["watts_per_accelerator"],
            resolved.arguments["pue"],
            usd_per_kwh,
        )
    )
    for q, label in x.PLAN_RANGE_ROWS:
        assert x.TRAIN_QUANTILE(q, 0.5, **args) == plan_table[label]


_PLAN_ARG_CELLS = {
    "p": _P,
    "total_params": st.floats(min_value=700e9, max_value=2e12),
    "active_params": st.floats(min_value=1e9, max_value=700e9),
    "tokens": st.floats(min_value=1e11, max_value=1e14),
    "accelerators": st.integers(min_value=1, max_value=100_000),
    "accelerator_name": st.sampled_from(["H100", "A100 SXM 40GB", "TPU v4", "MI300X"]),
    "mfu": st.floats(min_value=0.05, max_value=0.8),
    "usd_per_accelerator_hour": st.floats(min_value=0, max_value=20, allow_subnormal=False),
    "throughput_range_pct": st.floats(min_value=0, max_value=1, allow_subnormal=False),
    "price_range_pct": st.floats(min_value=0, max_value=1, allow_subnormal=False),
    "effective_tflops": st.floats(min_value=10, max_value=3000),
}


@settings(max_examples=40, deadline=None)
@given(data=st.data(), rows=st.integers(min_value=2, max_value=5))
def test_quantile_over_ranges_equals_single_calls(data, rows):
    args = {"quantity": data.draw(st.sampled_from(RANGE_QUANTITIES + ("days", "cost")))}
    ranged = data.draw(st.sets(st.sampled_from(sorted(_PLAN_ARG_CELLS)), min_size=1))
    for name, cells in _PLAN_ARG_CELLS.items():
        if name in ranged:
            args[name] = [[v] for v in data.draw(st.lists(cells, min_size=rows, max_size=rows))]
        elif name in ("p", "total_params", "active_params", "tokens", "accelerators") or (
            name == "accelerator_name"
        ):
            args[name] = data.draw(cells, label=name)
        elif data.draw(st.booleans(), label=f"{name} typed"):
            args[name] = data.draw(cells, label=name)
    as_row = data.draw(st.booleans(), label="quantities as a row")
    if as_row:
        args["quantity"] = [list(RANGE_QUANTITIES)]
    got = x.TRAIN_QUANTILE(**args)
    width = len(RANGE_QUANTITIES) if as_row else 1
    assert np.shape(got) == (rows, width)
    for i in range(rows):
        for j in range(width):
            single = {k: (v[i][0] if k in ranged else v) for k, v in args.items()}
            if as_row:
                single["quantity"] = RANGE_QUANTITIES[j]
            assert got[i][j] == x.TRAIN_QUANTILE(**single)


def test_train_plan_range_is_a_labelled_table():
    table = x.TRAIN_PLAN_RANGE(**EXAMPLE, effective_tflops=400, throughput_range_pct=0.15)
    assert table[0] == ["Quantity (unit)", "P10", "P50", "P90"]
    assert [row[0] for row in table[1:]] == [
        "Accelerator-hours (accelerator-hours)",
        "Wall-clock time (days)",
        "Compute cost (US$)",
        "Electricity (kWh)",
        "Electricity cost (US$)",
        "Total cost (US$)",
    ]
    days = table[2]
    assert [round(v, 1) for v in days[1:]] == [40.4, 46.4, 53.4]
    for row in table[1:]:
        assert all(isinstance(v, float) for v in row[1:])


_QUANTILE_ERRORS = [
    (
        dict(quantity="weeks"),
        "TRAIN_QUANTILE: quantity is not a quantity with a range; known: accelerator_hours, "
        "wall_clock_days, compute_cost_usd, electricity_kwh, electricity_cost_usd, "
        "total_cost_usd (or hours, days, cost) (got 'weeks')",
    ),
    (
        dict(quantity=[["days"], ["fortnights"]]),
        "TRAIN_QUANTILE: quantity at row 2, column 1 is not a quantity with a range",
    ),
    (dict(quantity=None), "TRAIN_QUANTILE: quantity is required (the cell is blank)"),
    (dict(quantity=3.0), "TRAIN_QUANTILE: quantity must be text"),
    (
        dict(p=90),
        "TRAIN_QUANTILE: p must be a probability strictly between 0 and 1 (0.1 for P10, 0.9 "
        "for P90) (got 90)",
    ),
    (dict(p=1), "TRAIN_QUANTILE: p must be a probability strictly between 0 and 1"),
    (dict(p=[[0.1], [0.0]]), "TRAIN_QUANTILE: p at row 2, column 1 must be a probability"),
    (dict(p="P90"), "TRAIN_QUANTILE: p must be a number, not text ('P90')"),
    (dict(p=None), "TRAIN_QUANTILE: p is required (the cell is blank)"),
    (
        dict(accelerator_name=[["H100"], ["H1000"]]),
        "TRAIN_QUANTILE: accelerator_name at row 2, column 1 is not a known accelerator; known: ",
    ),
    (dict(accelerator_name=None), "TRAIN_QUANTILE: accelerator_name is required"),
    (dict(accelerators=[[2048], [2.5]]), "TRAIN_QUANTILE: accelerators at row 2, column 1 "),
    (dict(active_params=700e9), "TRAIN_QUANTILE: active_params must not exceed total_params"),
    (dict(tokens=-1), "TRAIN_QUANTILE: tokens must be greater than 0 (got -1)"),
    (dict(mfu=1.5), "TRAIN_QUANTILE: mfu must be greater than 0 and at most 1 (got 1.5)"),
    (
        dict(mfu=1.5, effective_tflops=400),
        "TRAIN_QUANTILE: mfu must be greater than 0 and at most 1",
    ),
    (dict(throughput_range_pct=-0.1), "TRAIN_QUANTILE: throughput_range_pct must be 0 or more"),
    (dict(price_range_pct="10%"), "TRAIN_QUANTILE: price_range_pct must be a number, not text"),
    (dict(effective_tflops=0), "TRAIN_QUANTILE: effective_tflops must be greater than 0"),
    (dict(pue=0.9), "TRAIN_QUANTILE: pue must be at least 1 (got 0.9)"),
    (
        dict(usd_per_accelerator_hour=1e305),
        "TRAIN_QUANTILE: compute cost is out of range (above 1.8e308): lower "
        "usd_per_accelerator_hour (1e+305)",
    ),
    (
        dict(p=[[0.5], [0.999999]], usd_per_accelerator_hour=1e301, throughput_range_pct=100),
        "TRAIN_QUANTILE: the result at row 2, column 1 is out of range (above 1.8e308)",
    ),
    (
        dict(usd_per_accelerator_hour=[[2], [1e305]]),
        "TRAIN_QUANTILE: compute cost at row 2, column 1 is out of range (above 1.8e308): lower "
        "usd_per_accelerator_hour (1e+305)",
    ),
    (
        dict(tokens=[[1e12], [2e12, 3e12]]),
        "TRAIN_QUANTILE: tokens is not a rectangular range",
    ),
    (
        dict(p=[[0.1], [0.9]], accelerators=[[1], [2], [3]]),
        "TRAIN_QUANTILE: ranges have sizes that do not match (p is 2 rows x 1 column, "
        "accelerators is 3 rows x 1 column)",
    ),
]


@pytest.mark.parametrize("change, message", _QUANTILE_ERRORS)
def test_quantile_bad_input_is_one_line_naming_argument_and_cell(change, message):
    args = {"quantity": "cost", "p": 0.9, **EXAMPLE, **change}
    err = raises(lambda: x.TRAIN_QUANTILE(**args), message)
    assert str(err).startswith(message) and "\n" not in str(err)


@pytest.mark.parametrize(
    "change, fragment",
    [
        (dict(accelerators=[[1024], [2048]]), "accelerators must be a single cell"),
        (dict(accelerator_name=[["H100", "A100"]]), "accelerator_name must be a single cell"),
        (dict(throughput_range_pct=[[0.1], [0.2]]), "throughput_range_pct must be a single"),
        (dict(accelerator_name="B300"), "accelerator_name is not a known accelerator"),
        (dict(total_params=None), "total_params is required"),
    ],
)
def test_train_plan_range_bad_input(change, fragment):
    raises(lambda: x.TRAIN_PLAN_RANGE(**{**EXAMPLE, **change}), f"TRAIN_PLAN_RANGE: {fragment}")


def test_range_functions_document_their_blanks_and_units():
    for name in ("TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"):
        f = getattr(x, name)
        docs = {
            p: x._FUNCTION_ARG_DOCS.get((name, p), x.ARG_DOCS[p])
            for p in inspect.signature(f).parameters
        }
        assert "calibrated default" in docs["mfu"]
        assert "US$2" in docs["usd_per_accelerator_hour"]
        assert "US$0.08" in docs["usd_per_kwh"] and "TDP" in docs["watts_per_accelerator"]
        assert "P90 / P50 - 1" in docs["throughput_range_pct"]
        assert "seed" not in (f.__doc__ + " ".join(docs.values())).lower()
    assert "0.9 for P90" in x.ARG_DOCS["p"]


@settings(max_examples=30, deadline=None)
@given(
    point=st.lists(st.floats(min_value=1, max_value=1e12), min_size=6, max_size=6),
    tp=st.floats(min_value=0, max_value=1, allow_subnormal=False),
    price=st.floats(min_value=0, max_value=1, allow_subnormal=False),
)
def test_quantiles_are_estimate_ranges_at_any_p(point, tp, price):
    values = dict(zip(RANGE_QUANTITIES, point, strict=True))
    values["total_cost_usd"] = values["compute_cost_usd"] + values["electricity_cost_usd"]
    expected = ranges.estimate_ranges(values, tp, price)
    ps = np.array(ranges.DEFAULT_PS)
    got = _quantile_cells._quantiles({q: np.full(3, v) for q, v in values.items()}, tp, price, ps)
    for q in RANGE_QUANTITIES:
        for i, p in enumerate(ps):
            assert got[q][i] == expected[q][f"p{100 * p:g}"]
