"""The engine against hand-computed values, the seed's printed output, and its laws."""

import datetime as dt
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import engine as e
from udfs.quantities import MIN_PLAUSIBLE, SEED_OUTPUT_LINES
from udfs.validation import InputError

# The seed's DeepSeek-V3-like configuration and its executed output (shared/seeds/003).
SEED = dict(total=671e9, active=37e9, tokens=14.8e12, n=2048, tflops=400.0, usd=2.0)
SEED_LINES = list(SEED_OUTPUT_LINES)


def test_seed_figures_to_the_digit():
    flops = e.training_flops(SEED["active"], SEED["tokens"])
    hours = e.accelerator_hours(flops, SEED["tflops"])
    days = e.wall_clock_days(hours, SEED["n"])
    lines = [
        f"Training FLOPs: {flops:.3e}",
        f"Accelerator-hours: {hours:,.0f}",
        f"Wall-clock at {SEED['n']} accelerators: {days:,.1f} days",
        f"BF16 checkpoint: {e.checkpoint_bytes(SEED['total']) / 1e9:.1f} GB",
        f"Rental-equivalent cost: ${e.compute_cost_usd(hours, SEED['usd']):,.0f}",
        f"Accelerator electricity: {e.electricity_kwh(hours):,.0f} kWh",
    ]
    assert lines == SEED_LINES


def test_hand_computed_values():
    # 6 x 37e9 x 14.8e12 = 3.2856e24 exactly
    assert e.training_flops(37e9, 14.8e12) == pytest.approx(3.2856e24, rel=1e-15)
    # 3.2856e24 / 400e12 / 3600 = 2,281,666.67 hours
    assert e.accelerator_hours(3.2856e24, 400) == pytest.approx(2281666.6667, rel=1e-9)
    assert e.wall_clock_days(2_281_666.6667, 2048) == pytest.approx(46.4202, rel=1e-5)
    assert e.checkpoint_gb(671e9) == 1342.0
    assert e.checkpoint_gb(176e9, 13) == pytest.approx(2288.0)
    assert e.compute_cost_usd(1000, 2.5) == 2500.0
    assert e.electricity_kwh(1000, 700, 1.82, 1.1) == pytest.approx(1401.4)
    assert e.electricity_cost_usd(2000, 0.1) == pytest.approx(200.0)
    assert e.co2_tonnes(2_000_000, 481) == pytest.approx(962.0)
    assert e.effective_tflops(1000, 0.4, 0.9) == pytest.approx(360.0)
    assert e.min_accelerators_for_memory(70e9, 80) == 14.0  # 1120 GB / 80 GB
    assert e.min_accelerators_for_memory(70e9, 80, 20) == 18.0  # 1400 / 80 = 17.5 -> 18
    assert e.ownership_usd_per_accelerator_hour(35_040, 4, 1.0) == pytest.approx(1.0)
    assert e.ownership_usd_per_accelerator_hour(35_040, 4, 0.5, 0.25) == pytest.approx(2.25)
    assert e.accelerators_for_days(24_000, 10) == 100.0
    assert e.iterations_per_year(36.5) == pytest.approx(10.0)
    assert e.chinchilla_tokens(1e9) == 2e10
    # Hoffmann fit at N = D = 1e10: 1.69 + 406.4 / 1e10**0.34 + 410.7 / 1e10**0.28
    expected = 1.69 + 406.4 / 1e10**0.34 + 410.7 / 1e10**0.28
    assert e.chinchilla_loss(1e10, 1e10) == pytest.approx(expected)
    assert e.implied_effective_tflops(3.6e18, 10) == pytest.approx(100.0)
    assert e.implied_mfu(3.6e18, 10, 400) == pytest.approx(0.25)


def test_seed_iteration_time_example():
    # 30M accelerator-hours: ~83 days on 15,000, ~8 days on 150,000 at linear scaling.
    assert round(e.wall_clock_days(30e6, 15_000)) == 83
    assert round(e.wall_clock_days(30e6, 150_000)) == 8
    assert e.accelerators_for_days(30e6, e.wall_clock_days(30e6, 15_000)) == pytest.approx(15_000)


def test_llama3_interruptions_give_goodput():
    rate = e.failure_rate_per_accelerator_day(419, 54, 16_384)
    mtbf = e.cluster_mtbf_hours(16_384, rate)
    assert mtbf == pytest.approx(54 * 24 / 419)  # ~3.09 h
    # 1-minute checkpoint stalls, 10-minute restarts: hand-computed Daly interval and waste.
    d, m, r = 1 / 60, mtbf, 10 / 60
    x = d / (2 * m)
    tau = math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d
    assert e.checkpoint_interval_hours(d, m) == pytest.approx(tau)
    assert e.goodput(m, d, r) == pytest.approx(1 - (d / tau + (tau / 2 + r) / m))
    assert 0.8 < e.goodput(m, d, r) < 0.9


def test_goodput_without_time_to_train_is_an_error_and_interval_caps_at_mtbf():
    with pytest.raises(InputError, match="mtbf_hours is too short"):
        e.goodput(0.1, 1.0, 1.0)
    with pytest.raises(InputError) as info:
        e.goodput([3.0, 0.1], 1 / 60, 0.5)
    assert info.value.position == (1,)
    assert e.checkpoint_interval_hours(5.0, 2.0) == 2.0  # d >= 2M: tau = M
    with pytest.raises(InputError, match="failures_per_accelerator_day is so high"):
        e.estimate(1e9, 1e12, 100_000, peak_tflops=989, mfu=0.4, failures_per_accelerator_day=1)


def test_implied_mfu_above_one_is_an_error():
    with pytest.raises(InputError, match="accelerator_hours is too few"):
        e.implied_mfu(3.79e25, 1, 989.4)


def test_accelerator_counts_are_whole_numbers():
    with pytest.raises(InputError, match="accelerators must be a whole number"):
        e.wall_clock_days(1000, 2.5)
    with pytest.raises(InputError) as info:
        e.estimate(1e9, 1e12, [8, 16.5], effective_tflops=400)
    assert info.value.position == (1,)
    assert e.wall_clock_days(1000, 8.0) == pytest.approx(1000 / 8 / 24)


def test_one_price_at_a_time():
    with pytest.raises(InputError, match="give one price"):
        e.estimate(
            1e9,
            1e12,
            8,
            effective_tflops=400,
            usd_per_accelerator_hour=2,
            purchase_usd_per_accelerator=30_000,
        )


def test_scaling_matches_llama31_sublinear_point():
    args = dict(
        active_params=405e9,
        total_params=405e9,
        global_batch_tokens=16 * 2**20,
        tflops_per_accelerator=465.5,
        tensor_parallel=8,
        pipeline_parallel=16,
        sequence_tokens=8192,
        pipeline_interleave=8,
    )
    t8k = 465.5 * e.scaling_efficiency(8192, **args)
    t16k = 465.5 * e.scaling_efficiency(16_384, **args)
    assert t8k == pytest.approx(430, abs=1)
    assert t16k == pytest.approx(400, abs=1)
    # More than the batch can feed (2048 sequences x 128 accelerators per replica) is an error.
    with pytest.raises(InputError, match="accelerators"):
        e.scaling_efficiency(2048 * 128 * 2, **args)


def test_month_shares_add_up_and_split_by_calendar():
    shares = e.month_shares(dt.date(2025, 1, 17), 46.4)
    assert [d for d, _ in shares] == [dt.date(2025, 1, 1), dt.date(2025, 2, 1), dt.date(2025, 3, 1)]
    assert shares[0][1] == pytest.approx(15 / 46.4)  # Jan 17..31
    assert shares[1][1] == pytest.approx(28 / 46.4)
    assert sum(s for _, s in shares) == pytest.approx(1.0)
    # A run inside one month, and one over a year end.
    assert e.month_shares(dt.date(2025, 5, 2), 3) == [(dt.date(2025, 5, 1), 1.0)]
    assert [d.month for d, _ in e.month_shares(dt.date(2025, 12, 20), 20)] == [12, 1]


def test_estimate_derives_throughput_and_costs():
    r = e.estimate(
        405e9,
        15.6e12,
        16_384,
        peak_tflops=989.4,
        mfu=0.4,
        goodput=0.9,
        usd_per_accelerator_hour=2.0,
        usd_per_kwh=0.1,
        grams_co2_per_kwh=400,
        hbm_gb=80,
        other_costs_usd=1000,
    )
    eff = 989.4 * 0.4 * 0.9
    hours = 6 * 405e9 * 15.6e12 / (eff * 1e12) / 3600
    assert r["effective_tflops"] == pytest.approx(eff)
    assert r["accelerator_hours"] == pytest.approx(hours)
    kwh = hours * 0.7
    assert r["electricity_cost_usd"] == pytest.approx(kwh * 0.1)
    assert r["co2_tonnes"] == pytest.approx(kwh * 400 / 1e6)
    assert r["total_cost_usd"] == pytest.approx(hours * 2 + kwh * 0.1 + 1000)
    assert r["min_accelerators_for_memory"] == 81.0


def test_estimate_with_failures_and_ownership():
    r = e.estimate(
        70e9,
        2e12,
        4096,
        peak_tflops=989.4,
        mfu=0.4,
        failures_per_accelerator_day=419 / 54 / 16_384,
        purchase_usd_per_accelerator=35_040,
        amortisation_years=4,
    )
    g = e.goodput(e.cluster_mtbf_hours(4096, 419 / 54 / 16_384), 1 / 60, 10 / 60)
    assert r["goodput"] == pytest.approx(g)
    assert r["effective_tflops"] == pytest.approx(989.4 * 0.4 * g)
    assert r["usd_per_accelerator_hour"] == pytest.approx(1.0)
    assert r["compute_cost_usd"] == pytest.approx(r["accelerator_hours"])
    assert math.isnan(r["electricity_cost_usd"])  # no price given: not a made-up number


def test_estimate_broadcasts_arrays():
    n = np.array([1024, 2048, 4096])
    r = e.estimate(671e9, 14.8e12, n, active_params=37e9, effective_tflops=400)
    assert r["wall_clock_days"].shape == (3,)
    assert r["wall_clock_days"][1] == pytest.approx(46.4202, rel=1e-5)
    assert r["training_flops"].shape == (3,)  # scalars broadcast to the plan's shape


@pytest.mark.parametrize(
    ("call", "argument", "rule"),
    [
        (lambda: e.training_flops(-1, 1e12), "active_params", "greater than 0"),
        (lambda: e.training_flops(1e9, 0), "tokens", "greater than 0"),
        (lambda: e.training_flops("37B", 1e12), "active_params", "not text"),
        (lambda: e.training_flops(True, 1e12), "active_params", "TRUE/FALSE"),
        (lambda: e.training_flops(None, 1e12), "active_params", "required"),
        (lambda: e.training_flops(float("nan"), 1e12), "active_params", "finite"),
        (lambda: e.training_flops(1e9, [1e12, math.inf]), "tokens", "finite"),
        (lambda: e.effective_tflops(989, 1.5), "mfu", "at most 1"),
        (lambda: e.effective_tflops(989, 0), "mfu", "greater than 0"),
        (lambda: e.electricity_kwh(10, 700, pue=0.9), "pue", "at least 1"),
        (
            lambda: e.estimate(37e9, 1e12, 8, active_params=671e9, effective_tflops=400),
            "active_params",
            "must not exceed total_params",
        ),
        (lambda: e.estimate(1e9, 1e12, 8), "effective_tflops", "required"),
        (lambda: e.estimate(1e9, 1e12, 8, effective_tflops=400, mfu=0.4), "mfu", "cannot"),
        (lambda: e.chinchilla_loss(1e9, 1e12, fit="kaplan"), "fit", "one of"),
        (lambda: e.month_shares("2025-01-01", 3), "start_date", "date"),
    ],
)
def test_bad_input_names_argument_and_rule(call, argument, rule):
    with pytest.raises(InputError) as info:
        call()
    assert info.value.argument == argument
    assert rule in str(info.value)


def test_bad_array_element_position_is_reported():
    with pytest.raises(InputError) as info:
        e.wall_clock_days([[100, 200], [300, -4]], 8)
    assert info.value.argument == "accelerator_hours"
    assert info.value.position == (1, 1)
    assert "position 1,1" in str(info.value)


def test_mismatched_shapes_are_an_error():
    with pytest.raises(ValueError):
        e.training_flops([1e9, 2e9, 3e9], [1e12, 2e12])


def test_scalar_in_float_out_array_in_array_out():
    assert type(e.training_flops(1e9, 1e12)) is float
    assert isinstance(e.training_flops([1e9], 1e12), np.ndarray)


# ---------------------------------------------------------------------------------------------
# Laws (hypothesis)
# ---------------------------------------------------------------------------------------------

pos = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
count = st.integers(min_value=1, max_value=1_000_000)
# Plans a cluster runs: parameters and tokens from their plausibility floors up.
params = st.floats(min_value=MIN_PLAUSIBLE["total_params"], max_value=1e13)
tokens = st.floats(min_value=MIN_PLAUSIBLE["training_tokens"], max_value=1e15)
tflops = st.floats(min_value=1.0, max_value=1e4)
fraction = st.floats(min_value=1e-3, max_value=1.0)


@given(params, tokens, tflops, count, count)
def test_more_accelerators_never_lengthen_a_linear_run(n_act, d, t, a, b):
    hours = e.accelerator_hours(e.training_flops(n_act, d), t)
    lo, hi = sorted((a, b))
    assert e.wall_clock_days(hours, hi) <= e.wall_clock_days(hours, lo)


@given(params, tokens, st.floats(min_value=0.01, max_value=100))
def test_flops_linear_in_tokens_and_active_params(n_act, d, k):
    base = e.training_flops(n_act, d)
    assert e.training_flops(n_act * k, d) == pytest.approx(k * base, rel=1e-12)
    assert e.training_flops(n_act, d * k) == pytest.approx(k * base, rel=1e-12)


@given(
    params,
    tokens,
    tflops,
    count,
    st.floats(0, 100, allow_subnormal=False),
    st.floats(1, 2000),
    st.floats(1, 3),
)
def test_costs_and_energy_are_non_negative(n_act, d, t, n, usd, watts, pue):
    r = e.estimate(
        n_act * 2,
        d,
        n,
        active_params=n_act,
        effective_tflops=t,
        usd_per_accelerator_hour=usd,
        watts_per_accelerator=watts,
        pue=pue,
        usd_per_kwh=0.1,
        grams_co2_per_kwh=400,
    )
    for key in (
        "compute_cost_usd",
        "electricity_kwh",
        "electricity_cost_usd",
        "co2_tonnes",
        "total_cost_usd",
    ):
        assert r[key] >= 0


@given(pos, st.floats(min_value=0.01, max_value=10_000))
def test_accelerators_for_days_round_trip(hours, days):
    n = e.accelerators_for_days(hours, days)
    # The exact (fractional) solution gives back the target ...
    assert n * 24 * days == pytest.approx(hours, rel=1e-12)
    # ... and the whole count it rounds up to finishes in time, one fewer would not.
    whole = max(1, math.ceil(n))
    assert e.wall_clock_days(hours, whole) <= days * (1 + 1e-12)
    if whole > 1:
        assert e.wall_clock_days(hours, whole - 1) > days * (1 - 1e-12)


@given(st.floats(1e-3, 0.1), st.floats(10, 1e4), st.floats(0, 1, allow_subnormal=False))
def test_optimal_interval_beats_its_neighbours(d, m, r):
    # Daly's interval is near-optimal for the first-order waste: no worse than 0.5x or 2x it.
    tau = e.checkpoint_interval_hours(d, m)
    best = e.goodput(m, d, r, tau)
    assert best >= e.goodput(m, d, r, tau * 2) - 1e-9
    assert best >= e.goodput(m, d, r, tau / 2) - 1e-9


@given(count, st.integers(2, 64), fraction)
def test_scaling_efficiency_falls_as_the_cluster_grows(n, k, overlap):
    args = dict(
        active_params=70e9,
        total_params=70e9,
        global_batch_tokens=1e12,
        tflops_per_accelerator=400,
        tensor_parallel=1,
        pipeline_parallel=1,
        comm_overlap=min(overlap, 0.99),
    )
    small, large = e.scaling_efficiency(n, **args), e.scaling_efficiency(n * k, **args)
    assert 0 < large <= small <= 1


@settings(max_examples=50)
@given(st.lists(st.tuples(params, tokens), min_size=1, max_size=20))
def test_vectorised_equals_elementwise(rows):
    n, d = np.array(rows).T
    vec = e.training_flops(n, d)
    assert list(vec) == [e.training_flops(a, b) for a, b in rows]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -1.0, 0.0])
def test_large_arrays_are_checked_to_the_last_element(bad):
    # Large inputs take the chunked fast path; a bad value in the last chunk is still found.
    tokens = np.full(200_001, 1e12)
    tokens[-1] = bad
    with pytest.raises(InputError) as info:
        e.training_flops(1e9, tokens)
    assert info.value.position == (200_000,)


def test_integer_counts_pass_through_and_fractions_do_not():
    n = np.array([8, 16, 2048])
    assert list(e.wall_clock_days(2048 * 24, n)) == [256.0, 128.0, 1.0]
    with pytest.raises(InputError, match="whole number"):
        e.wall_clock_days(100, np.array([8.0, 8.5]))


# ---------------------------------------------------------------------------------------------
# Issue 8: outputs finite or refused, denormals refused, every argument checked, no warnings
# ---------------------------------------------------------------------------------------------

_PLAN = dict(
    total_params=671e9,
    training_tokens=14.8e12,
    accelerators=2048,
    active_params=37e9,
    effective_tflops=400.0,
    usd_per_accelerator_hour=2.0,
)


def test_overflowed_output_names_the_input_that_drove_it():
    from udfs.validation import OutOfRangeError

    with pytest.raises(OutOfRangeError) as info:
        e.estimate(**{**_PLAN, "usd_per_accelerator_hour": 1e305})
    err = info.value
    assert err.result == "compute_cost_usd" and err.bound == "above 1.8e308"
    assert err.argument == "usd_per_accelerator_hour" and err.drivers[0][1] == 1e305
    assert err.describe() == (
        "compute cost is out of range (above 1.8e308): lower usd_per_accelerator_hour (1e+305)"
    )
    assert err.describe(label_of=str.upper).endswith("lower USD_PER_ACCELERATOR_HOUR (1e+305)")
    with pytest.raises(OutOfRangeError, match="electricity cost .* lower watts_per_accelerator"):
        e.estimate(**_PLAN, watts_per_accelerator=1e300, usd_per_kwh=1e300)


def test_an_intermediate_out_of_range_names_the_inputs_not_itself():
    from udfs.validation import OutOfRangeError

    # 6 x 1e300 x 1e300 FLOPs: the inner check on training_flops is reported as the inputs.
    with pytest.raises(OutOfRangeError) as info:
        e.estimate(**{**_PLAN, "active_params": 1e300, "total_params": 1e301})
    assert info.value.result == "training_flops"
    assert info.value.drivers == [("active_params", 1e300)]  # FLOPs use active, not total
    # Underflow: an absurd throughput makes accelerator-hours denormal.
    with pytest.raises(OutOfRangeError, match=r"\(below 2.2e-308\): lower effective_tflops"):
        e.estimate(1e6, 1e9, 8, effective_tflops=1e300)
    # A derived throughput of nearly 0 names the peak, not --effective-tflops.
    with pytest.raises(OutOfRangeError, match="raise peak_tflops"):
        e.estimate(671e9, 14.8e12, 2048, peak_tflops=1e-300, mfu=0.5)


def test_array_outputs_report_the_position():
    from udfs.validation import OutOfRangeError

    with pytest.raises(OutOfRangeError) as info:
        e.estimate(**{**_PLAN, "training_tokens": np.array([14.8e12, 1e300])})
    assert info.value.position == (1,)
    assert "at position 1" in info.value.describe()


@pytest.mark.parametrize("value", [5e-324, 1e-320, 2e-308, -1e-310])
def test_denormal_inputs_are_refused_by_name(value):
    with pytest.raises(InputError) as info:
        e.training_flops(37e9, value)
    assert info.value.argument == "tokens"
    with pytest.raises(InputError, match="usd_per_kwh is too close to 0"):
        e.estimate(**_PLAN, usd_per_kwh=abs(value))
    with pytest.raises(InputError, match="position 1"):
        e.training_flops(37e9, np.array([1e12, abs(value)]))


def test_zero_still_passes_where_the_rule_allows_it():
    r = e.estimate(**_PLAN, usd_per_kwh=0.0, grams_co2_per_kwh=0.0)
    assert r["electricity_cost_usd"] == 0.0 and r["co2_tonnes"] == 0.0
    assert e.estimate(**{**_PLAN, "usd_per_accelerator_hour": 0.0})["total_cost_usd"] == 0.0


@pytest.mark.parametrize(
    ("argument", "value", "rule"),
    [
        ("comm_overlap", 5, "must be between 0 and 1"),
        ("comm_overlap", 1, "must be less than 1"),
        ("tensor_parallel", -5, "must be at least 1"),
        ("pipeline_parallel", 0, "must be at least 1"),
        ("sequence_tokens", -1, "must be at least 1"),
        ("restart_minutes", -1, "must be 0 or more"),
        ("checkpoint_write_minutes", -1, "must be greater than 0"),
        ("training_state_bytes_per_param", -1, "must be greater than 0"),
        ("checkpoint_bytes_per_param", 0, "must be greater than 0"),
        ("amortisation_years", 0, "must be greater than 0"),
        ("utilisation", 1.5, "must be greater than 0 and at most 1"),
        ("interconnect_gb_per_s", 0, "must be greater than 0"),
        ("pipeline_interleave", 0.5, "must be at least 1"),
    ],
)
def test_arguments_that_do_not_apply_are_still_checked(argument, value, rule):
    with pytest.raises(InputError) as info:
        e.estimate(**_PLAN, **{argument: value})
    assert info.value.argument == argument and rule in str(info.value)


@pytest.mark.parametrize(
    "argument", ["tensor_parallel", "pipeline_parallel", "pipeline_interleave", "sequence_tokens"]
)
@pytest.mark.parametrize("value", [2.5, 1.5, 100.5])
def test_parallel_degrees_and_sequence_length_are_whole_numbers(argument, value):
    """A fractional degree or sequence length is refused like a fractional accelerator count,
    whether or not the scaling model applies (issue 8)."""
    for extra in ({}, {"global_batch_tokens": 4e6, "peak_tflops": 989, "mfu": 0.4}):
        plan = {**_PLAN, **extra}
        if extra:
            plan.pop("effective_tflops", None)
        with pytest.raises(InputError) as info:
            e.estimate(**plan, **{argument: value})
        assert info.value.argument == argument
        assert str(info.value) == f"{argument} must be a whole number (got {value:g})"
    with pytest.raises(InputError, match="tensor_parallel must be a whole number"):
        e.scaling_efficiency(256, 70e9, 70e9, 4e6, 400, tensor_parallel=2.5)


def test_accelerators_per_node_is_a_whole_number_of_at_least_one():
    for value, rule in ((7.5, "must be a whole number"), (0.5, "must be at least 1")):
        with pytest.raises(InputError) as info:
            e.failure_rate_from_node_days(2, value)
        assert info.value.argument == "accelerators_per_node" and rule in str(info.value)
    assert e.failure_rate_from_node_days(2, 8) == pytest.approx(2 / 1000 / 8)


def test_no_numpy_warning_escapes_estimate():
    import warnings

    from udfs.validation import OutOfRangeError

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for extra in (
            {"usd_per_accelerator_hour": 1e305},
            {"watts_per_accelerator": 1e300, "usd_per_kwh": 1e300},
            {"training_tokens": 1e300},
            {"effective_tflops": 1e-300},
        ):
            with pytest.raises(OutOfRangeError):
                e.estimate(**{**_PLAN, **extra})


def test_daly_interval_does_not_underflow_for_tiny_but_normal_inputs():
    tau = e.checkpoint_interval_hours(1e-300, 1e-290)
    assert tau > 0 and math.isfinite(tau)
    assert 0 < e.goodput(1e-290, 1e-300, 0) <= 1


def test_drivers_rank_inputs_by_orders_of_magnitude():
    from udfs.validation import check_result, drivers_of

    assert drivers_of({"a": 1e300, "b": 2.0, "c": None}) == [("a", 1e300)]
    assert drivers_of({"a": 1e200, "b": 1e-150, "c": 10.0}) == [("a", 1e200), ("b", 1e-150)]
    assert drivers_of({"a": np.array([1.0, 1e300])}, (2,), (1,)) == [("a", 1e300)]
    assert check_result("x", np.array([1.0, 2.0]), {}) is not None
    with pytest.raises(InputError, match="not a number"):
        check_result("x", np.array([1.0, np.nan]), {"a": 1e300})


# ---------------------------------------------------------------------------------------------
# One definition per quantity (issue 9): the engine computes the spec's formulas
# ---------------------------------------------------------------------------------------------

#: Engine function -> the spec'd quantity it computes through ``engine._spec`` after its checks.
THROUGH_THE_SPEC = {
    e.training_flops: "training_flops",
    e.accelerator_hours: "accelerator_hours",
    e.wall_clock_days: "wall_clock_days",
    e.checkpoint_gb: "checkpoint_gb",
    e.compute_cost_usd: "compute_cost_usd",
    e.electricity_kwh: "electricity_kwh",
    e.electricity_cost_usd: "electricity_cost_usd",
    e.co2_tonnes: "co2_tonnes",
    e.effective_tflops: "effective_tflops",
    e.min_accelerators_for_memory: "min_accelerators_for_memory",
    e.accelerators_for_days: "accelerators_for_days",
    e.iterations_per_year: "iterations_per_year",
    e.implied_effective_tflops: "implied_effective_tflops",
    e.implied_mfu: "implied_mfu",
}


def test_spec_d_engine_functions_call_the_spec():
    import inspect

    for function, name in THROUGH_THE_SPEC.items():
        assert f'_spec(\n        "{name}"' in inspect.getsource(function) or (
            f'_spec("{name}"' in inspect.getsource(function)
        ), function.__name__
    body = inspect.getsource(e._energy_and_costs) + inspect.getsource(e._throughput)
    for name in ("compute_cost_usd", "electricity_cost_usd", "co2_tonnes", "total_cost_usd",
                 "effective_tflops"):  # fmt: skip
        assert f'_spec("{name}"' in body, name


_SPEC_VALUE = st.floats(1e-3, 1e6, allow_nan=False, allow_subnormal=False)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 5), whole=st.booleans())
def test_the_engine_evaluates_the_spec_to_the_bit(data, n, whole):
    """engine._spec = udfs.model.function (the spec's numpy rendering), bit for bit, for
    scalars and arrays, whole-number arrays included."""
    from udfs import model

    names = sorted({*THROUGH_THE_SPEC.values(), "total_cost_usd", "calibrated_mfu"})
    name = data.draw(st.sampled_from(names))
    values = {}
    for arg in model.inputs_of(name):
        if arg in model.CONSTANTS and data.draw(st.booleans(), label=f"{arg} from CONSTANTS"):
            continue
        if n == 0:
            values[arg] = data.draw(_SPEC_VALUE, label=arg)
        elif whole and arg == "accelerators":
            values[arg] = np.array(data.draw(st.lists(st.integers(1, 10**6), min_size=n,
                                                      max_size=n)))  # fmt: skip
        else:
            values[arg] = np.array(data.draw(st.lists(_SPEC_VALUE, min_size=n, max_size=n)))
    before = {a: np.copy(v) for a, v in values.items()}
    with np.errstate(all="ignore"):  # exp() of a large drawn intercept: inf on both sides
        ours = e._spec(name, **values)
        theirs = model.function(name)(*(values.get(a, model.CONSTANTS.get(a))
                                        for a in model.inputs_of(name)))  # fmt: skip
    assert type(ours) is type(theirs)
    np.testing.assert_array_equal(ours, theirs)
    for a, v in before.items():  # the inputs are left as they were: only temporaries are reused
        np.testing.assert_array_equal(values[a], v)


def test_estimate_is_split_into_named_steps():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(e))
    lengths = {
        node.name: node.end_lineno - node.lineno + 1
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
    }
    # 31 keyword parameters (one a line) and a worked example; the body is a few steps
    assert lengths["estimate"] <= 100
    assert max(v for k, v in lengths.items() if k != "estimate") <= 80, lengths
