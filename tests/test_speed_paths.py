"""One plan of plain numbers against the same plan as arrays (a few plans, many, 0-d).

The engine computes one plan and arrays of plans on the same path; the figures agree (to
1e-12 relative) and a bad input is refused with the same message either way.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import engine
from udfs.validation import InputError

MANY = 5_000  # a column of plans

_positive = st.floats(1e-3, 1e6, allow_nan=False)


@st.composite
def plans(draw):
    """A plan's inputs as plain numbers: sustained or derived throughput, rented or owned."""
    total = draw(st.floats(1e8, 2e12))
    kw = {
        "total_params": total,
        "training_tokens": draw(st.floats(1e9, 5e13)),
        "accelerators": draw(st.integers(1, 200_000)),
        "active_params": total * draw(st.floats(0.02, 1.0)),
        "watts_per_accelerator": draw(st.floats(100, 2000)),
        "pue": draw(st.floats(1.0, 2.0)),
        "usd_per_kwh": draw(st.floats(0.0, 0.5)),
        "grams_co2_per_kwh": draw(st.floats(0.0, 900)),
    }
    if draw(st.booleans()):
        kw["effective_tflops"] = draw(st.floats(10, 2000))
        kw["usd_per_accelerator_hour"] = draw(st.floats(0.0, 10))
    else:
        kw["peak_tflops"] = draw(st.floats(100, 2500))
        kw["mfu"] = draw(st.floats(0.05, 0.6))
        kw["failures_per_accelerator_day"] = draw(st.floats(1e-6, 1e-3))
        if draw(st.booleans()):
            kw["global_batch_tokens"] = draw(st.floats(1e6, 1e8))
            kw["hbm_gb"] = draw(st.floats(16, 192))
        kw["purchase_usd_per_accelerator"] = draw(st.floats(5_000, 50_000))
    return kw


def _same(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    both_nan = np.isnan(a) & np.isnan(b)
    close = np.abs(a - b) <= 1e-12 * np.abs(b)
    assert np.all(both_nan | close), (a, b)


@settings(max_examples=60, deadline=None)
@given(plans())
def test_one_plan_of_plain_numbers_equals_the_array_path(kw):
    try:
        scalar = engine.estimate(**kw)
    except InputError as err:  # a plan out of bounds (the batch cannot feed it): same refusal
        with pytest.raises(InputError) as zero_d:
            engine.estimate(**{k: np.asarray(v, float) for k, v in kw.items()})
        assert str(zero_d.value) == str(err)
        return
    few = engine.estimate(**{k: np.full(3, v) for k, v in kw.items()})
    many = engine.estimate(**{k: np.full(MANY, v) for k, v in kw.items()})
    zero_d = engine.estimate(**{k: np.asarray(v, float) for k, v in kw.items()})
    for key, value in scalar.items():
        assert isinstance(value, float)
        _same(value, few[key][0])
        _same(value, many[key][-1])
        _same(value, zero_d[key])


@settings(max_examples=25, deadline=None)
@given(st.lists(plans(), min_size=2, max_size=6))
def test_mixed_rows_equal_one_plan_at_a_time(rows):
    """Rows of different plans (the same optional inputs given) against each row alone."""
    keys = set(rows[0])
    rows = [r for r in rows if set(r) == keys]
    arrays = {k: np.array([r[k] for r in rows]) for k in keys}
    try:
        together = engine.estimate(**arrays)
    except InputError:
        return  # one row is out of bounds (test_bad_... covers refusals)
    for i, row in enumerate(rows):
        alone = engine.estimate(**row)
        for key, value in alone.items():
            _same(value, together[key][i])


_BAD = [
    ("total_params", 0.0),
    ("total_params", -1.0),
    ("total_params", float("nan")),
    ("total_params", float("inf")),
    ("total_params", 1e-310),
    ("accelerators", 2.5),
    ("accelerators", 0),
    ("pue", 0.5),
    ("mfu", 1.5),
    ("comm_overlap", 1.0),
    ("tensor_parallel", 0.5),
    ("tensor_parallel", 2.5),
    ("usd_per_kwh", -0.01),
    ("training_tokens", 10**400),
    ("active_params", 1e13),
]


@pytest.mark.parametrize(("name", "bad"), _BAD)
def test_bad_plain_number_is_refused_as_on_the_array_path(name, bad):
    kw = {"total_params": 671e9, "training_tokens": 14.8e12, "accelerators": 2048,
          "peak_tflops": 989.0, "mfu": 0.4, "usd_per_accelerator_hour": 2.0}  # fmt: skip
    if name == "comm_overlap":
        kw["global_batch_tokens"] = 6e7
    with pytest.raises((InputError, OverflowError)) as plain:
        engine.estimate(**{**kw, name: bad})
    try:
        as_array = np.asarray(bad, float)
    except OverflowError:
        return  # an int beyond a float: the array path cannot even be built
    with pytest.raises(InputError) as zero_d:
        engine.estimate(**{**kw, name: as_array})
    assert str(plain.value) == str(zero_d.value)


# -- TRAIN_QUANTILE: the engine once over the plans against one plan at a time ------------------

_ACCELERATORS = ("H100", "A100", "TPU v4", "B200", "MI300X")
_MAYBE = {
    "mfu": st.floats(0.05, 0.6),
    "usd_per_accelerator_hour": st.floats(0.5, 8.0),
    "throughput_range_pct": st.floats(0.0, 0.8, allow_subnormal=False),
    "watts_per_accelerator": st.floats(300, 1500),
    "usd_per_kwh": st.floats(0.0, 0.4, allow_subnormal=False),
}


@st.composite
def quantile_rows(draw):
    """Rows of TRAIN_QUANTILE's plan arguments; each optional argument blank (left out) for
    the whole call or typed on every row (a blank cell inside a range is refused)."""
    n = draw(st.integers(2, 12))
    typed = [name for name in _MAYBE if draw(st.booleans())]
    rows = []
    for _ in range(n):
        total = draw(st.floats(1e9, 2e12))
        row = {
            "total_params": total,
            "active_params": total * draw(st.floats(0.02, 1.0)),
            "tokens": draw(st.floats(1e10, 3e13)),
            "accelerators": draw(st.integers(8, 50_000)),
            "accelerator_name": draw(st.sampled_from(_ACCELERATORS)),
        }
        row.update({name: draw(_MAYBE[name]) for name in typed})
        rows.append(row)
    return rows


def _one_plan_at_a_time(quantity, p, row):
    """The quantile of one plan as TRAIN_QUANTILE computed it before issue 19: resolve, then
    the engine on the plan's plain numbers."""
    from udfs import _quantile_cells, excel, plan

    inputs = {_quantile_cells._PLAN_INPUT_OF[k]: v for k, v in row.items()}
    resolved = plan.resolve(inputs)
    point = engine.estimate(resolved.plan)
    got = _quantile_cells._quantiles(
        {q: np.array([point[q]]) for q in excel.QUANTILE_QUANTITIES},
        np.array([resolved.throughput_sigma]),
        np.array([resolved.price_sigma]),
        np.array([p]),
    )
    return float(got[quantity][0])


@settings(max_examples=30, deadline=None)
@given(quantile_rows(), st.sampled_from(["hours", "days", "kwh", "cost"]), st.floats(0.05, 0.95))
def test_train_quantile_over_a_range_equals_each_plan_alone(rows, quantity, p):
    from udfs import excel

    arguments = {k: [[row[k]] for row in rows] for k in rows[0]}
    got = excel.TRAIN_QUANTILE(quantity, p, **arguments)
    key = {"hours": "accelerator_hours", "days": "wall_clock_days", "kwh": "electricity_kwh",
           "cost": "total_cost_usd"}[quantity]  # fmt: skip
    for i, row in enumerate(rows):
        _same(got[i][0], _one_plan_at_a_time(key, p, row))
