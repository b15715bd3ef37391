"""The vectorised paths against their references (same numbers, same refusals).

- ``engine.estimate`` of arrays of plans: the caller's arrays unchanged, the outputs read-only;
- TRAIN_QUANTILE and TRAIN_PLAN_RANGE resolving their plans on arrays
  (``plan.resolve_many``, one engine call) against each distinct plan resolved alone
  (``plan.resolve``: ``_quantile_cells.plan_quantiles(..., reference=True)``), over single cells,
  ranges and mixed rows, good and bad.

Equal means within 1e-12 relative (NaN where the other is NaN); a refusal is the same error
with the same message.
"""

from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from udfs import _quantile_cells, catalogue, engine, excel, plan
from udfs._cells import CellError
from udfs.validation import InputError


def _same(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape, (a.shape, b.shape)
    both_nan = np.isnan(a) & np.isnan(b)
    close = np.abs(a - b) <= 1e-12 * np.abs(b)
    assert np.all(both_nan | close), (a, b)


def _outcome(call):
    """The result of ``call()``, or ("refused", type, message)."""
    try:
        return call()
    except (InputError, CellError, ValueError) as err:
        return ("refused", type(err).__name__, str(err))


def _assert_same_outcome(new, old):
    if isinstance(old, tuple) or isinstance(new, tuple):
        assert new == old
    elif isinstance(old, dict):
        assert list(new) == list(old)
        for key in old:
            _same(new[key], old[key])
    else:
        _same(new, old)


# -- engine.estimate: arrays of plans ------------------------------------------------------


def test_estimate_leaves_inputs_unchanged_and_read_only_where_shared():
    tflops = np.array([400.0, 300.0])
    out = engine.estimate(671e9, 14.8e12, 2048, active_params=37e9, effective_tflops=tflops)
    assert tflops.flags.writeable  # the caller's array stays writable
    assert not out["effective_tflops"].flags.writeable  # a view of it is not
    assert not out["goodput"].flags.writeable  # a shared NaN array
    _same(out["effective_tflops"], tflops)


# -- TRAIN_QUANTILE: plans resolved on arrays against each plan resolved alone --------------

_NAMES = ["H100", "a100", "MI300X", "TPU v4", "B200", "H800", "H200", "Gaudi 3", "V100"]


@st.composite
def quantile_calls(draw):
    """TRAIN_QUANTILE's arguments: single cells, ranges (a column of n) and both mixed; a few
    cells bad (0, a fraction of an accelerator, an MFU over 1, a PUE below 1)."""
    n = draw(st.sampled_from([1, 2, 5]))
    bad = draw(st.integers(0, 4)) == 0

    def cell(lo, hi, worst=None):
        def one():
            if bad and worst is not None and draw(st.integers(0, 3)) == 0:
                return worst
            return draw(st.floats(lo, hi))

        return one() if draw(st.booleans()) else [[one()] for _ in range(n)]

    def optional(lo, hi, worst=None):
        return None if draw(st.booleans()) else cell(lo, hi, worst)

    args = {
        "quantity": draw(st.sampled_from(["days", "cost", "kwh", [["hours", "electricity_cost",
                                                                    "compute_cost"]]])),
        "p": draw(st.sampled_from([0.1, 0.5, 0.9, [[0.1, 0.5, 0.9]], [[0.25]] * n])),
        "total_params": cell(5e9, 2e12, 0.0),
        "active_params": optional(1e8, 5e9),
        "tokens": cell(1e10, 3e13),
        "accelerators": draw(st.sampled_from([2048.0, [[float(8 + i)] for i in range(n)],
                                              [[2.5]] * n if bad else 64.0])),
        "accelerator_name": draw(st.sampled_from([*_NAMES, [[_NAMES[i % 9]] for i in range(n)],
                                                  [[f" {_NAMES[(4 * i) % 9].lower()}"]
                                                   for i in range(n)]])),
        "mfu": optional(0.05, 0.9, 1.5),
        "usd_per_accelerator_hour": optional(0.0, 10.0),
        "throughput_range_pct": optional(0.0, 0.5),
        "price_range_pct": optional(0.0, 0.5),
        "watts_per_accelerator": optional(100.0, 1500.0),
        "pue": optional(1.0, 1.8, 0.9),
        "usd_per_kwh": optional(0.0, 0.3),
        "effective_tflops": optional(50.0, 2000.0) if draw(st.integers(0, 2)) == 0 else None,
    }  # fmt: skip
    return args


def _quantiles(args, reference):
    values = {k: v for k, v in args.items() if k not in ("quantity", "p")}
    return _quantile_cells.plan_quantiles(
        "TRAIN_QUANTILE", args["quantity"], args["p"], values, reference=reference
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(quantile_calls())
def test_train_quantile_on_arrays_equals_each_plan_resolved_alone(args):
    old = _outcome(lambda: _quantiles(args, True))
    _assert_same_outcome(_outcome(lambda: _quantiles(args, False)), old)


def test_train_quantile_names_the_first_bad_plan_of_a_long_range():
    """A range of 3,000 plans with bad ones at rows 2,001 and 2,900: the first is named, as
    resolving plan by plan names it (found on arrays by halving)."""
    counts = [[float(1024 + i)] for i in range(3000)]
    counts[2000] = [1.5]
    counts[2899] = [0.5]
    args = ("days", 0.9, 671e9, 37e9, 14.8e12, counts, "H100")
    with pytest.raises(CellError) as new:
        excel.TRAIN_QUANTILE(*args)
    assert "row 2001" in str(new.value)
    values = dict(zip(["total_params", "active_params", "tokens", "accelerators",
                       "accelerator_name"], args[2:], strict=True))  # fmt: skip
    values.update(dict.fromkeys(["mfu", "usd_per_accelerator_hour", "throughput_range_pct",
                                 "price_range_pct", "watts_per_accelerator", "pue",
                                 "usd_per_kwh", "effective_tflops"]))  # fmt: skip
    with pytest.raises(CellError) as old:
        _quantile_cells.plan_quantiles("TRAIN_QUANTILE", "days", 0.9, values, reference=True)
    assert str(new.value) == str(old.value)


def _accelerators():
    from udfs import catalogue

    rows, _ = catalogue._load("accelerator")
    return [catalogue.accelerator_record(r["name"]) for r in rows]


def test_resolve_many_equals_resolve_plan_by_plan():
    """resolve_many's engine fields and spreads, plan by plan, are resolve's."""
    names = np.array([r["name"] for r in _accelerators() if not np.isnan(r["bf16_tflops"])],
                     dtype=object)  # fmt: skip
    m = names.size
    active = np.geomspace(1e8, 1e12, m)
    inputs = {"total_params": active * 2, "active_params": active, "training_tokens": 1e12,
              "accelerators": 512.0}  # fmt: skip
    many = plan.resolve_many(inputs, names)
    for i, name in enumerate(names):
        one = plan.resolve({"total_params": float(active[i] * 2), "active_params": float(active[i]),
                            "training_tokens": 1e12, "accelerators": 512.0,
                            "accelerator_name": name})  # fmt: skip
        for field, value in one.arguments.items():
            got = many.fields[field]
            _same(got if np.ndim(got) == 0 else got[i], value)
        assert bool(np.broadcast_to(many.hbm_known, (m,))[i]) == ("hbm_gb" in one.arguments)
        _same(np.broadcast_to(many.throughput_sigma, (m,))[i], one.throughput_sigma)
        _same(np.broadcast_to(many.price_sigma, (m,))[i], one.price_sigma)


@pytest.mark.parametrize("tflops", [None, 400.0])
def test_train_plan_range_equals_the_reference_path(monkeypatch, tflops):
    args = (671e9, 37e9, 14.8e12, 2048, "H100", None, 2, 0.15, 0.1, None, None, None, tflops)
    new = excel.TRAIN_PLAN_RANGE(*args)
    monkeypatch.setattr(
        _quantile_cells, "_array_points", lambda *a: _quantile_cells._reference_points(*a[:4])
    )
    old = excel.TRAIN_PLAN_RANGE(*args)
    assert [row[0] for row in new] == [row[0] for row in old]
    _same([row[1:] for row in new[1:]], [row[1:] for row in old[1:]])


# -- ACCEL_SPEC / REF_RUN: a column of names against the broadcast look-up -----------------


def _lookup_cells(kind):
    names = [r["name"] for r in catalogue._load(kind)[0]][:6]
    spellings = [*names, *(f"  {n.lower()} " for n in names), *(n.upper() for n in names)]
    bad = [None, "", "  ", "#N/A", " #value! ", 3.0, True, "no such name", ["x"]]
    good = st.sampled_from(spellings)
    return st.one_of(good, good, good, st.sampled_from(bad))


@st.composite
def lookup_calls(draw):
    function, kind, field = draw(
        st.sampled_from(
            [
                (excel.ACCEL_SPEC, "accelerator", "tdp_watts"),
                (excel.ACCEL_SPEC, "accelerator", "hbm_gb"),
                (excel.ACCEL_SPEC, "accelerator", "name"),
                (excel.REF_RUN, "run", "training_tokens"),
                (excel.REF_RUN, "run", "accelerator"),
            ]
        )
    )
    cell = _lookup_cells(kind)
    rows = draw(st.lists(st.lists(cell, min_size=1, max_size=draw(st.sampled_from([1, 1, 2]))),
                         min_size=1, max_size=12))  # fmt: skip
    field = draw(st.sampled_from([field, f" {field.upper()} ", [[field]], [field], None, "",
                                  "#N/A", "no_such_field", 2.0, [[field, field]]]))  # fmt: skip
    return function, draw(st.sampled_from([rows, tuple(rows), [c[0] for c in rows]])), field


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lookup_calls())
def test_lookup_column_equals_the_broadcast_lookup(call):
    """The one-column path of ACCEL_SPEC and REF_RUN (``excel._lookup_column``: each distinct
    cell checked and looked up once, the column built from a dict) gives the broadcast
    look-up's figures and refusals."""
    function, names, field = call
    new = _outcome(lambda: function(names, field))
    with mock.patch.object(excel, "_lookup_column", lambda *args: None):
        old = _outcome(lambda: function(names, field))
    assert new == old
    assert type(new) is type(old)


def test_lookup_column_is_taken_for_a_column_of_names():
    names = [["H100"], [" mi300x "], ["H100"]]
    with mock.patch.object(excel, "check_call_size", side_effect=AssertionError("slow path")):
        assert excel.ACCEL_SPEC(names, [["tdp_watts"]]) == [[700.0], [750.0], [700.0]]


# -- the cells read in one pass: a column by unpacking its rows, names coded by a dict ------


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 4).flatmap(
        lambda w: st.lists(
            st.lists(st.floats() | st.text(max_size=3), min_size=w, max_size=w),
            min_size=0,
            max_size=20,
        )  # fmt: skip
    ),
    st.booleans(),
    st.sampled_from([None, [], [1.0, 2.0], (3.0,), "x", {0: 1.0}, {1.0}, b"a", range(1)]),
)
def test_row_cells_equal_chaining_the_rows_of_a_rectangular_range(rows, as_tuples, odd_row):
    """``_cells._row_cells`` (a column's cells by unpacking each row) is the rows chained
    when they are lists or tuples of one width (at least one cell), None otherwise: a row of
    another width or another type (a dict, a set, bytes, a range unpack too) is seen."""
    import itertools

    from udfs import _cells

    rows = [tuple(r) for r in rows] if as_tuples else rows
    if odd_row is not None and rows:
        rows = [*rows[:-1], odd_row]
    regular = (
        bool(rows)
        and all(type(r) in (list, tuple) for r in rows)
        and len({len(r) for r in rows}) == 1
        and len(rows[0]) > 0
    )
    want = list(itertools.chain.from_iterable(rows)) if regular else None
    assert _cells._row_cells(rows) == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["H100", "A100", "H200", "TPU v4", "B200", "MI300X"]),
                min_size=2, max_size=40))  # fmt: skip
def test_accelerator_columns_equal_each_name_alone(names):
    """The figures spread back by index (codes from a dict of the distinct names, in order of
    first appearance) are each name's own figures."""
    got = plan._accelerator_columns(np.array(names, dtype=object))
    for i, name in enumerate(names):
        alone = plan._accelerator_columns(name)
        for key, value in alone.items():
            _same(got[key][i], value)


def _cell_values():
    """Cells of every kind a range may hold: numbers, text (padded, in mixed case), blanks,
    Excel errors, booleans, numpy scalars, nested lists, odd objects."""
    return st.one_of(
        st.floats(allow_nan=False, allow_infinity=False),
        st.integers(-(2**70), 2**70),
        st.sampled_from(["H100", " h100 ", "H100 ", "A100", "mi300x", "  ", "", "#N/A",
                         " #value! ", None, True, False, np.float64(2.5), np.str_("H100"),
                         [1.0], ("x",), {0: 1.0}, 1e400]),
    )  # fmt: skip


@st.composite
def cell_ranges(draw, cells=None):
    """A value as an Excel face receives it: one cell, a list of rows (lists or tuples, now
    and then ragged), a flat list, or a 1 x 1 range."""
    cell = _cell_values() if cells is None else cells
    kind = draw(st.sampled_from(["rows", "rows", "tuples", "ragged", "flat", "one", "1x1"]))
    if kind == "one":
        return draw(cell)
    if kind == "1x1":
        return [[draw(cell)]]
    if kind == "flat":
        return draw(st.lists(cell, min_size=0, max_size=8))
    width = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1,
                         max_size=8))  # fmt: skip
    if kind == "ragged":
        rows[draw(st.integers(0, len(rows) - 1))].append(draw(cell))
    return [tuple(r) for r in rows] if kind == "tuples" else rows


def _text_cells():
    names = st.sampled_from(["H100", " h100 ", "H100 ", "A100", "a100", "MI300X", np.str_("B200")])
    return st.one_of(names, names, names, _cell_values())


class _Refused(str):
    """The message of a refusal."""


def _converted(convert):
    try:
        return convert()
    except CellError as err:
        return _Refused(err)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cell_ranges(_text_cells()))
def test_coded_text_equals_the_cell_by_cell_reading(value):
    """``to_coded_text``'s one-pass reading (each distinct cell checked and stripped once,
    codes by a dict) gives the cell-by-cell reading's texts and refusals; its distinct texts
    and codes give the cells back."""
    from udfs import _cells

    new = _converted(lambda: _cells.to_coded_text("F", "name", value))
    with mock.patch.object(_cells, "_fast_text", lambda rows, flat=None: None):
        old = _converted(lambda: _cells.to_coded_text("F", "name", value))
    if isinstance(old, _Refused):
        assert isinstance(new, _Refused) and new == old
        return
    (cells, distinct, codes), (old_cells, _, _) = new, old
    assert cells.dtype == object and cells.shape == old_cells.shape
    assert cells.tolist() == old_cells.tolist()
    assert all(type(t) is str for t in cells.ravel().tolist())
    assert len(set(distinct)) == len(distinct) and codes.shape == cells.shape
    assert np.asarray(np.array(distinct, dtype=object)[codes]).tolist() == cells.tolist()
    assert _cells.to_text("F", "name", value).tolist() == cells.tolist()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cell_ranges())
def test_numbers_read_once_equal_the_cell_by_cell_reading(value):
    """A range's cells kept by ``check_call_size`` (``flats``) and converted from there give
    the figures and refusals of a reading that looks again, and of the cell-by-cell one."""
    from udfs import _cells

    flats = {}
    _cells.check_call_size("F", {"x": value}, flats=flats)
    if "x" in flats:
        assert flats["x"] == _cells._row_cells(value)
    new = _converted(lambda: _cells.to_array("F", "x", value, flat=flats.get("x")))
    again = _converted(lambda: _cells.to_array("F", "x", value))
    with mock.patch.object(_cells, "_fast_numbers", lambda rows, flat=None: None):
        old = _converted(lambda: _cells.to_array("F", "x", value))
    for got in (new, again):
        if isinstance(old, _Refused):
            assert isinstance(got, _Refused) and got == old
        else:
            assert got.shape == old.shape and got.dtype == old.dtype
            assert np.array_equal(got, old, equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(1.0, 1e12), min_size=6, max_size=6),
    st.floats(0.0, 1.0),
    st.floats(0.0, 1.0),
    st.lists(st.floats(0.001, 0.999), min_size=1, max_size=4),
    st.sets(st.sampled_from(excel.QUANTILE_QUANTITIES), min_size=1),
)
def test_quantiles_of_some_quantities_are_those_of_all(point, tp, price, ps, wanted):
    """Only the quantities asked are computed: each is, bit for bit, as when all are."""
    point = {q: np.full(len(ps), v) for q, v in zip(excel.QUANTILE_QUANTITIES, point, strict=True)}
    ps = np.array(ps)
    with np.errstate(all="ignore"):
        every = _quantile_cells._quantiles(point, tp, price, ps)
        some = _quantile_cells._quantiles(point, tp, price, ps, [q for q in every if q in wanted])
    assert set(some) == wanted
    for q in wanted:
        assert np.array_equal(some[q], every[q], equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["H100", "A100", "TPU v4", "B200", "MI300X", "Gaudi 3"]),
            st.floats(1e8, 1e11),
        ),
        min_size=2,
        max_size=30,
    )  # fmt: skip
)
def test_throughput_sigma_by_name_equals_plan_by_plan(plans):
    """The calibrated spread worked out once per (name, small model or not) and spread back
    by index equals the spec's formulas evaluated plan by plan."""
    names = np.array([n for n, _ in plans], dtype=object)
    active = np.array([a for _, a in plans])
    accel = plan._accelerator_columns(names)
    by_name = plan._throughput_sigma(accel, active, None)
    row_by_row = {k: v for k, v in accel.items() if k not in ("codes", "by_name")}
    _same(by_name, plan._throughput_sigma(row_by_row, active, None))
