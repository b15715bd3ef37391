"""The accelerator-name lookups over a range (issue 19): each distinct name looked up once.

``udfs.calibration.generation_of``, ``predicted_mfu``, ``accelerator_extra_sigma`` and
``MfuModel.intercept`` map each distinct value of an array once (a dict over the values, no
sort of the whole array). Laws: the answer over an array equals the one-name answer for each
element and the former ``np.unique`` lookup (kept here as the reference), for catalogue
names, aliases, mixed case, padded and unknown names; an unknown generation is refused with
the same message.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import calibration, catalogue
from udfs.validation import is_blank


def _old_lookup(values, fn, dtype):
    """The lookup as it was: fn over ``np.unique``'s values, spread back by its inverse."""
    arr = np.asarray(values)
    if arr.size == 0:
        return arr.astype(dtype)
    uniq, inverse = np.unique(arr, return_inverse=True)
    mapped = np.array([fn(u) for u in uniq.tolist()], dtype=dtype)
    return mapped[inverse].reshape(arr.shape)


def _old_generation_of(names):
    return _old_lookup(np.asarray(names).astype(str), calibration.generation_of, object)


def _old_predicted_mfu(names, active):
    m = calibration.default_mfu_model()
    gen = np.asarray(_old_generation_of(names), dtype=object)

    def one(g):
        if g not in m.intercepts:
            raise ValueError(f"unknown generation {g!r}; known: {', '.join(m.intercepts)}")
        return m.intercepts[g]

    return m.predict_from_intercept(_old_lookup(gen, one, float), active)


_ROWS = catalogue._load("accelerator")[0]
_KNOWN = sorted({n for r in _ROWS for n in [r["name"], *r.get("aliases", [])]})
_UNKNOWN = ["", " ", "H1000", "Unknown X", "tpu", "None", "nan", "A100-ish"]


@st.composite
def names(draw):
    base = draw(st.sampled_from(_KNOWN + _UNKNOWN) | st.text(max_size=6))
    case = draw(st.sampled_from([str, str.lower, str.upper, str.swapcase]))
    pad = draw(st.sampled_from(["", " ", "  ", "\t"]))
    return pad + case(base) + draw(st.sampled_from(["", " ", "  "]))


name_arrays = st.lists(names(), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(name_arrays, st.data())
def test_the_lookup_over_an_array_equals_each_names_own_and_the_old_one(listed, data):
    arr = np.array(listed)
    shape = data.draw(st.sampled_from([arr.shape, (1, arr.size)]))
    arr = arr.reshape(shape)
    gen = calibration.generation_of(arr)
    assert gen.shape == arr.shape and gen.dtype == object
    assert gen.ravel().tolist() == [calibration.generation_of(n) for n in arr.ravel().tolist()]
    assert gen.tolist() == _old_generation_of(arr).tolist()
    active = data.draw(st.lists(st.floats(1e6, 1e13), min_size=arr.size, max_size=arr.size))
    active = np.array(active).reshape(arr.shape)
    new = calibration.predicted_mfu(arr, active)
    old = _old_predicted_mfu(arr, active)
    np.testing.assert_allclose(new, old, rtol=1e-12, atol=0)
    one_by_one = [
        calibration.predicted_mfu(n, a) for n, a in zip(arr.ravel(), active.ravel(), strict=True)
    ]
    np.testing.assert_allclose(new.ravel(), one_by_one, rtol=1e-12, atol=0)
    extra = calibration.accelerator_extra_sigma(arr)
    assert extra.tolist() == np.where(_old_generation_of(arr) == "other",
                                      calibration.fitted()["other_accelerator_sigma"],
                                      0.0).tolist()  # fmt: skip
    for n, e in zip(arr.ravel().tolist(), extra.ravel().tolist(), strict=True):
        assert calibration.accelerator_extra_sigma(n) == e


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["A100", "H100", "TPU", "other", "B200", "h100", " TPU", ""]),
                min_size=1, max_size=20))  # fmt: skip
def test_an_unknown_generation_is_refused_with_the_same_message(labels):
    m = calibration.default_mfu_model()
    gen = np.array(labels, dtype=object)

    def one(g):
        if g not in m.intercepts:
            raise ValueError(f"unknown generation {g!r}; known: {', '.join(m.intercepts)}")
        return m.intercepts[g]

    try:
        expected = _old_lookup(gen, one, float)
    except ValueError as err:
        with pytest.raises(ValueError) as got:
            m.intercept(gen)
        assert str(got.value) == str(err)
    else:
        assert m.intercept(gen).tolist() == expected.tolist()


def test_not_text_names_are_other_as_before():
    odd = np.array([None, 3, 2.5, b"H100", "H100"], dtype=object)
    assert calibration.generation_of(odd).tolist() == _old_generation_of(odd).tolist()
    assert calibration.generation_of(np.array([], dtype=str)).shape == (0,)
    assert calibration.predicted_mfu(np.array([], dtype=str), np.array([])).shape == (0,)


def test_a_zero_dimensional_array_keeps_its_shape():
    """(The np.unique lookup failed on a 0-d array: its inverse was 0-d too.)"""
    name = np.array("H100")
    gen = calibration.generation_of(name)
    assert gen.shape == () and gen.item() == calibration.generation_of("H100")
    got = calibration.predicted_mfu(name, np.array(70e9))
    assert np.shape(got) == () and float(got) == calibration.predicted_mfu("H100", 70e9)


def test_a_runs_implied_mfu_and_record_equal_the_reference_tables():
    """--preset reads one run without pandas: the same figures as the tables."""
    table = calibration.reference_table()
    runs = catalogue.runs()
    for name in table.index:
        want, got = table.loc[name, "implied_mfu"], calibration.implied_mfu_of(name)
        assert (np.isnan(want) and np.isnan(got)) or got == want, name
        record = catalogue.run_record(name.upper())
        for field, value in record.items():
            old = runs.loc[name, field]
            assert (is_blank(value) and is_blank(old)) or value == old, (name, field)


def test_an_unknown_preset_is_refused_as_before():
    with pytest.raises(catalogue.InputError) as new:
        catalogue.run_record("no-such-run", argument="--preset")
    with pytest.raises(catalogue.InputError) as old:
        catalogue.run("no-such-run", argument="--preset")
    assert str(new.value) == str(old.value)
