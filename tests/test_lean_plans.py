"""engine.estimate's small-call path makes one function per kind of call (engine._fast_kind);
a later call of the same kind takes that function (see also test_fast_kinds.py). Law:
every call, first or later, good or bad, gives the numbers (within 1e-12) or the refusal of
the step-by-step estimate (engine._estimate); an input array comes back as a read-only view."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import engine
from udfs.validation import InputError

GOOD = {
    "total_params": (1e9, 2e12),
    "training_tokens": (1e11, 3e13),
    "effective_tflops": (100.0, 1500.0),
    "usd_per_accelerator_hour": (0.5, 5.0),
    "usd_per_kwh": (0.01, 0.5),
    "grams_co2_per_kwh": (0.0, 800.0),
    "hbm_gb": (40.0, 192.0),
    "other_costs_usd": (0.0, 1e6),
}
BAD = (0.0, -1.0, np.nan, np.inf, 1e-320, 1e308)


def _outcome(call):
    try:
        return call()
    except InputError as e:
        return str(e)


@st.composite
def plans(draw):
    n = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    optional = [k for k in GOOD if k not in ("total_params", "training_tokens")]
    names = ["total_params", "training_tokens", *draw(st.sets(st.sampled_from(optional)))]
    kw = {}
    for name in names:
        lo, hi = GOOD[name]
        kw[name] = rng.uniform(lo, hi, n) if draw(st.booleans()) else float(rng.uniform(lo, hi))
    kw["accelerators"] = rng.integers(8, 200_000, n)
    if draw(st.booleans()):
        kw["active_params"] = kw["total_params"] * rng.uniform(0.03, 1.0, n)
    if "effective_tflops" not in kw:
        kw["peak_tflops"], kw["mfu"] = rng.uniform(100, 2000, n), rng.uniform(0.1, 0.6, n)
    bad = None
    arrays = sorted(k for k, v in kw.items() if type(v) is np.ndarray and v.dtype == float)
    if arrays and draw(st.booleans()):  # one bad element in one array
        name = draw(st.sampled_from(arrays))
        kw[name] = kw[name].copy()
        kw[name][draw(st.integers(0, n - 1))] = bad = draw(st.sampled_from(BAD))
    return kw, bad


@settings(max_examples=200, deadline=None)
@given(plans(), plans())
def test_every_call_equals_the_step_by_step_estimate(first, second):
    # the same kinds of inputs twice over (the second call takes the plan), then others
    for kw, _ in (first, first, second, second, first):
        got = _outcome(lambda kw=kw: engine.estimate(**kw))
        want = _outcome(lambda kw=kw: engine._estimate(engine.Plan(**kw)))
        if isinstance(want, str) or isinstance(got, str):
            assert got == want
            continue
        assert got.keys() == want.keys()
        for key, w in want.items():
            g = got[key]
            assert np.shape(g) == np.shape(w), key
            assert np.array_equal(np.isnan(g), np.isnan(w)), key
            ok = ~np.isnan(w)
            assert np.allclose(g[ok], w[ok], rtol=1e-12, atol=0.0), key


def test_an_input_array_comes_back_read_only_and_unchanged():
    tflops = np.array([400.0, 500.0, 600.0])
    for _ in range(3):  # first call, then the remembered plan
        r = engine.estimate(671e9, 14.8e12, 2048, effective_tflops=tflops)
        assert np.array_equal(r["effective_tflops"], tflops)
        assert not r["effective_tflops"].flags.writeable and tflops.flags.writeable
        assert np.isnan(r["co2_tonnes"]).all() and r["co2_tonnes"].shape == (3,)


def test_a_bad_input_after_a_good_call_of_its_kind_is_refused():
    """Bad inputs whose outputs look usable: only the inputs' rules catch them."""
    good = {"other_costs_usd": np.array([1e5, 2e5]), "mfu": np.array([0.4, 0.5])}
    for name, bad in (("other_costs_usd", -1.0), ("mfu", 1.5)):
        kw = dict(good, peak_tflops=989.0, usd_per_accelerator_hour=2.0)
        engine.estimate(671e9, 14.8e12, 2048, **kw)  # remembers the plan for these kinds
        kw[name] = good[name].copy()
        kw[name][1] = bad
        want = _outcome(lambda kw=kw: engine._estimate(engine.Plan(671e9, 14.8e12, 2048, **kw)))
        assert isinstance(want, str) and name in want
        assert _outcome(lambda kw=kw: engine.estimate(671e9, 14.8e12, 2048, **kw)) == want
