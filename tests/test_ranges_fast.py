"""udfs.ranges.estimate_ranges (numpy, shared parts computed once) against the spec's formula
texts evaluated by udfs.model (ranges._spec_ranges): the same numbers, NaN for NaN."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import engine, ranges

POSITIVE = st.floats(1e-3, 1e9)
SIGMA = st.floats(0.0, 3.0)
PROBABILITY = st.floats(0.001, 0.999)


def _assert_same(got, want):
    assert got.keys() == want.keys()
    for q, by_p in want.items():
        assert got[q].keys() == by_p.keys(), q
        for k, w in by_p.items():
            g = np.asarray(got[q][k], dtype=float)
            w = np.asarray(w, dtype=float)
            assert g.shape == w.shape, (q, k)
            assert np.array_equal(np.isnan(g), np.isnan(w)), (q, k)
            ok = ~np.isnan(w)
            assert np.allclose(g[ok], w[ok], rtol=1e-12, atol=0.0), (q, k)


@st.composite
def points(draw):
    """A point estimate: arrays of n scenarios, some figures unpriced (NaN) or missing."""
    n = draw(st.integers(1, 6))
    vec = st.lists(POSITIVE, min_size=n, max_size=n).map(np.array)
    point = {q: draw(vec) for q in ranges.RANGE_QUANTITIES}
    for q in ("compute_cost_usd", "electricity_cost_usd"):
        if draw(st.booleans()):
            mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
            point[q] = np.where(mask, np.nan, point[q])
    if draw(st.booleans()):
        del point[draw(st.sampled_from(ranges.RANGE_QUANTITIES))]
    price = draw(st.one_of(SIGMA, st.lists(SIGMA, min_size=n, max_size=n).map(np.array)))
    return point, price


@settings(max_examples=150, deadline=None)
@given(
    points(),
    SIGMA,
    st.lists(PROBABILITY, min_size=1, max_size=4, unique=True).map(tuple)
    | st.just(ranges.DEFAULT_PS),
)
def test_numpy_ranges_match_the_spec_formulas(point_and_price, throughput_sigma, ps):
    point, price = point_and_price
    got = ranges.estimate_ranges(point, throughput_sigma, price, ps)
    _assert_same(got, ranges._spec_ranges(point, throughput_sigma, price, ps))


@settings(max_examples=60, deadline=None)
@given(POSITIVE, POSITIVE, st.integers(8, 100_000), SIGMA, SIGMA, st.booleans())
def test_one_plan_matches_the_spec_formulas(total, tokens, n, tp, price, priced):
    kwargs = {"usd_per_accelerator_hour": 2.0, "usd_per_kwh": 0.1} if priced else {}
    # parameters and tokens from their plausibility floors (1e6, 1e9) up
    point = engine.estimate(total * 1e9, tokens * 1e12, n, effective_tflops=400.0, **kwargs)
    got = ranges.estimate_ranges(point, tp, price)
    _assert_same(got, ranges._spec_ranges(point, tp, price))
    for q, by_p in got.items():  # P50 is the point estimate, to the digit
        assert np.array_equal(by_p["p50"], point[q], equal_nan=True), q


def test_refusals_are_unchanged():
    for args in ((-0.1, 0.0), (0.1, np.array([0.1, np.nan]))):
        for fn in (ranges.estimate_ranges, ranges._spec_ranges):
            try:
                fn({}, *args)
            except ValueError as e:
                assert str(e) == "sigma must be a non-negative number"
            else:
                raise AssertionError("no refusal")
    try:
        ranges.estimate_ranges({}, 0.1, 0.0, (0.1, 1.0))
    except ValueError as e:
        assert str(e) == "p must be a probability strictly between 0 and 1"
    else:
        raise AssertionError("no refusal")
