"""engine.estimate's small-call path per kind of call (engine._fast_estimate: one generated
function per form of call, fields named and type of each value, that checks, computes and
shapes in one pass). Law: every call, the first of its kind or a later one, good or bad, in
every form (a Plan, the keyword form with 0 to 3 positional inputs, defaults given again or
left out, None for an input not given), with plain numbers (float, int, numpy float), arrays
(float or whole-number, 1-D or 2-D, of one size or broadcasting, 0-d, float32) or a mix,
gives the numbers of the step-by-step estimate (engine._estimate) within 1e-12 relative, or
its refusal word for word; and the common kinds do take the path."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udfs import engine
from udfs.validation import InputError

#: field -> (low, high) of good values, and edge values that break a rule or sit on it.
GOOD = {
    "total_params": (1e9, 2e12),
    "training_tokens": (1e11, 3e13),
    "active_params": (1e7, 1e9),
    "effective_tflops": (100.0, 1500.0),
    "peak_tflops": (100.0, 2500.0),
    "mfu": (0.05, 1.0),
    "goodput": (0.5, 1.0),
    "usd_per_accelerator_hour": (0.0, 5.0),
    "watts_per_accelerator": (100.0, 2000.0),
    "server_overhead": (1.0, 2.0),
    "pue": (1.0, 2.0),
    "usd_per_kwh": (0.0, 0.5),
    "grams_co2_per_kwh": (0.0, 800.0),
    "checkpoint_bytes_per_param": (1.0, 16.0),
    "checkpoint_write_minutes": (0.5, 10.0),
    "restart_minutes": (0.0, 30.0),
    "interconnect_gb_per_s": (10.0, 900.0),
    "comm_overlap": (0.0, 0.99),
    "hbm_gb": (16.0, 192.0),
    "training_state_bytes_per_param": (2.0, 20.0),
    "amortisation_years": (1.0, 6.0),
    "utilisation": (0.3, 1.0),
    "other_costs_usd": (0.0, 1e6),
}
WHOLE = {"accelerators": (1, 200_000), "tensor_parallel": (1, 8), "pipeline_parallel": (1, 16),
         "sequence_tokens": (512, 32768), "pipeline_interleave": (1, 4)}  # fmt: skip
EDGE = (0.0, -0.0, -1.0, 0.5, 1.0, 1.5, 1e-320, 1e308, np.nan, np.inf)
OPTIONAL = [k for k in (*GOOD, *WHOLE) if k not in engine._REQUIRED]


def _outcome(call):
    try:
        return call()
    except InputError as err:
        return ("refused", str(err))


def _same(got, want):
    if isinstance(want, tuple) or isinstance(got, tuple):
        assert got == want
        return
    assert list(got) == list(want)
    for key, w in want.items():
        g = got[key]
        assert type(g) is type(w), key
        assert np.shape(g) == np.shape(w), key
        assert np.array_equal(np.isnan(g), np.isnan(w)), key
        ok = ~np.isnan(w)
        assert np.allclose(np.asarray(g)[ok], np.asarray(w)[ok], rtol=1e-12, atol=0.0), key


@st.composite
def values(draw, name, shape, bad):
    """A value of the field ``name``: a plain number (float, int, numpy float) or an array of
    ``shape`` (float or whole numbers; sometimes 0-d or float32), sometimes with an edge
    value in it when ``bad``."""
    whole = name in WHOLE
    lo, hi = WHOLE[name] if whole else GOOD[name]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    plain = ["float", "int", "float64"]
    arrays = ["array", "array", "whole array", "0-d", "float32"]
    form = draw(st.sampled_from(plain + arrays if shape else plain))
    array = rng.integers(lo, hi + 1, shape) if whole else rng.uniform(lo, hi, shape)
    if form == "whole array" or (whole and form == "array" and draw(st.booleans())):
        array = np.maximum(np.round(array), max(lo, 1)).astype(np.int64)
    elif whole or form == "array":
        array = np.asarray(array, dtype=float)
        if name in engine._MAY_HOLD_ZERO and draw(st.integers(0, 3)) == 0:
            array = np.zeros(shape)  # an input that may be 0, all 0 (the way defaults come)
    if bad and form != "whole array" and draw(st.booleans()):
        array = np.array(array, dtype=float, ndmin=1)
        array.flat[draw(st.integers(0, array.size - 1))] = draw(st.sampled_from(EDGE))
        array = array.reshape(shape) if shape else array
    first = np.asarray(array, dtype=float).flat[0]
    if form == "float":
        return float(first)
    if form == "int":
        return int(first) if np.isfinite(first) and float(first).is_integer() else float(first)
    if form == "float64":
        return np.float64(first)
    if form == "0-d":
        return np.array(first)
    if form == "float32":
        with np.errstate(over="ignore"):  # 1e308 overflows float32: a bad value still
            return np.asarray(array, dtype=np.float32)
    return array


@st.composite
def calls(draw):
    """(args, kwargs, fields) of one estimate call in a random form, and its fields."""
    shape = draw(st.sampled_from([(), (), (1,), (2,), (3,), (4,), (5,), (12,), (2, 2), (2, 3)]))
    bad = draw(st.integers(0, 2)) == 0
    other = draw(st.sampled_from([shape, shape, (1,), ()]))  # sometimes arrays broadcast
    names = ["total_params", "training_tokens", "accelerators"]
    names += sorted(draw(st.sets(st.sampled_from(OPTIONAL), max_size=8)))
    if "effective_tflops" not in names and draw(st.integers(0, 4)):
        names += [n for n in ("peak_tflops", "mfu") if n not in names]
    fields = {}
    for name in names:
        here = other if draw(st.integers(0, 5)) == 0 else shape
        fields[name] = draw(values(name, here, bad))
    for name in draw(st.sets(st.sampled_from(sorted(engine._PLAN_DEFAULTS)), max_size=3)):
        if name not in engine._REQUIRED:  # given again as its default, or None
            fields[name] = engine._PLAN_DEFAULTS[name]
    if draw(st.integers(0, 9)) == 0:
        fields["failures_per_accelerator_day"] = 1e-5  # a field the path leaves elsewhere
    form = draw(st.integers(-1, 3))
    if form < 0:
        return (engine.Plan(**fields),), {}, fields
    args = tuple(fields[n] for n in engine._REQUIRED[:form])
    kwargs = {k: v for k, v in fields.items() if k not in engine._REQUIRED[:form]}
    order = draw(st.permutations(list(kwargs)))
    return args, {k: kwargs[k] for k in order}, fields


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls(), calls())
def test_every_kind_of_call_equals_the_step_by_step_estimate(first, second):
    # a kind's first call builds its function, the next takes it; then another kind
    for args, kwargs, fields in (first, first, second, first, second):
        want = _outcome(lambda f=fields: engine._estimate(engine.Plan(**f)))
        _same(_outcome(lambda a=args, k=kwargs: engine.estimate(*a, **k)), want)


EXAMPLE = {"total_params": 671e9, "training_tokens": 14.8e12, "accelerators": 2048,
           "active_params": 37e9, "effective_tflops": 400.0,
           "usd_per_accelerator_hour": 2.0}  # fmt: skip


def _arrays(n, whole_accelerators=True):
    out = {k: np.full(n, float(v)) for k, v in EXAMPLE.items()}
    if whole_accelerators:
        out["accelerators"] = np.full(n, 2048)
    return out


def _every_field(n):
    """A Plan of n plans with every field an array (defaults too, zeros among them: the way
    TRAIN_QUANTILE groups plans), throughput derived."""
    given = {**EXAMPLE, "active_params": None, "effective_tflops": None, "peak_tflops": 989.0,
             "mfu": 0.4, "usd_per_kwh": 0.1, "hbm_gb": 80.0}  # fmt: skip
    fields = {**engine._PLAN_DEFAULTS, **given}
    return engine.Plan(
        **{k: None if v is None else np.full(n, float(v)) for k, v in fields.items()}
    )


@pytest.mark.parametrize(
    "args, kwargs",
    [
        ((), EXAMPLE),
        ((671e9, 14.8e12, 2048), {k: v for k, v in EXAMPLE.items() if k not in engine._REQUIRED}),
        ((engine.Plan(**EXAMPLE),), {}),
        ((), _arrays(10)),
        ((), _arrays(100, whole_accelerators=False)),
        ((engine.Plan(**_arrays(7)),), {}),
        ((), {**EXAMPLE, "effective_tflops": None, "peak_tflops": np.full(4, 989.0),
              "mfu": 0.4, "pue": np.full(4, 1.2), "hbm_gb": 80.0, "usd_per_kwh": 0.1}),
        ((engine.Plan(671e9, 14.8e12, 2048, peak_tflops=989.0, mfu=0.4),), {}),
        ((_every_field(3),), {}),
        ((_every_field(40),), {}),
    ],
)  # fmt: skip
def test_the_common_kinds_take_the_path(args, kwargs):
    for _ in range(2):  # the kind's first call and a later one
        got = engine._fast_estimate(args, kwargs)
        assert got is not None
        plan = args[0] if len(args) == 1 else engine.Plan(*args, **kwargs)
        _same(got, engine._estimate(plan))


def test_a_field_left_elsewhere_or_a_bad_value_leaves_the_path():
    kw = dict(EXAMPLE, failures_per_accelerator_day=1e-5, effective_tflops=None,
              peak_tflops=989.0, mfu=0.4)  # fmt: skip
    assert engine._fast_estimate((), kw) is None
    bad = _arrays(10)
    bad["usd_per_accelerator_hour"][3] = -1.0
    assert engine._fast_estimate((), bad) is None
    assert _outcome(lambda: engine.estimate(**bad)) == _outcome(
        lambda: engine._estimate(engine.Plan(**bad))
    )


@pytest.mark.parametrize("n", range(1, engine._FAST_ROWS + 3))
def test_a_few_plans_are_computed_one_by_one_and_more_on_arrays(n):
    """Up to _FAST_ROWS plans the kind's function computes each plan on floats (its outputs
    share one base array); above it, on arrays: the same numbers either side."""
    kw = _arrays(n)
    kw["training_tokens"] = np.linspace(1e12, 2e13, n)
    got = engine._fast_estimate((), kw)
    _same(got, engine._estimate(engine.Plan(**kw)))
    shared = got["training_flops"].base is not None
    assert shared == (n <= engine._FAST_ROWS)
    assert not shared or got["wall_clock_days"].base is got["training_flops"].base
    assert not got["effective_tflops"].flags.writeable and kw["effective_tflops"].flags.writeable


def test_many_plans_with_every_field_an_array_take_the_lean_path():
    """Above the kind's size bound, arrays of defaults that are 0 (all of them 0) still take
    the lean path (it used to leave them to the step-by-step one), with the same numbers."""
    plan = _every_field(3000)
    assert engine._fast_estimate((plan,), {}) is None  # beyond the one-pass bound
    got = engine._lean_estimate(plan.__dict__)
    assert got is not None
    _same(got, engine._estimate(plan))
    zeroed = engine.Plan(**{**plan.__dict__, "usd_per_kwh": np.zeros(3000)})
    assert engine._lean_estimate(zeroed.__dict__) is None  # a 0 output: the step-by-step path
    _same(engine.estimate(zeroed), engine._estimate(zeroed))
