"""TRAIN_QUANTILE's and TRAIN_PLAN_RANGE's cells to plans to quantiles.

The Excel functions themselves are in :mod:`udfs.excel`; this module holds the work behind
them (:func:`plan_quantiles`): the quantity and p cells read, the plan inputs' cells
broadcast and bounded (:data:`MAX_PLANS_PER_CALL`), the plans resolved together on arrays
(:func:`udfs.plan.resolve_many`) and estimated in one engine call, the quantiles computed by
:mod:`udfs.ranges`' formulas, and a refused plan named by its cell.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import catalogue, engine, model, plan, quantities, ranges
from ._cells import (
    CellError,
    broadcast_shape,
    check_call_size,
    input_error,
    rule_of,
    to_cells,
    to_coded_text,
    to_numbers,
    to_text,
)
from .validation import (
    InputError,
    OutOfRangeError,
    check_bound,
    check_finite,
    check_positive,
    check_result,
)

__all__ = ["QUANTILE_QUANTITIES", "MAX_PLANS_PER_CALL", "QUANTITY_ALIASES", "plan_quantiles"]

#: The quantities TRAIN_QUANTILE returns: those with a range (:data:`udfs.ranges.QUANTITIES`).
QUANTILE_QUANTITIES = tuple(ranges.QUANTITIES)

#: The most plans one call of TRAIN_QUANTILE may compute: the cells of its broadcast plan
#: inputs (every argument but quantity and p), counted from their shapes before any cell is
#: read. The plans are resolved together on arrays (udfs.plan.resolve_many) and estimated in
#: one engine call, a few microseconds a plan (resolving each plan on its own takes 0.1 to
#: 2 ms: 50,000 plans would hold the server for about 37 s). 131,072 plans (a column of
#: 100,000 rows fits) take about 0.2 s in one column of accelerator counts and about 0.6 s
#: with every plan input and the accelerator name different per row, at about 200 MB
#: (benchmarks/bench_vector.py, benchmarks/bench_server.py). Ranges of p and quantity only
#: repeat the plans; they are bounded by MAX_CELLS_PER_CALL like every result.
MAX_PLANS_PER_CALL = 2**17

#: Short names TRAIN_QUANTILE accepts for its quantities (any case; spaces or hyphens for "_").
QUANTITY_ALIASES = {
    "hours": "accelerator_hours",
    "accelerator_hour": "accelerator_hours",
    "gpu_hours": "accelerator_hours",
    "days": "wall_clock_days",
    "wall_clock": "wall_clock_days",
    "cost": "total_cost_usd",
    "total_cost": "total_cost_usd",
    "rental_cost": "compute_cost_usd",
    "rental_cost_usd": "compute_cost_usd",  # the rental-equivalent compute cost
    "compute_cost": "compute_cost_usd",
    "kwh": "electricity_kwh",
    "electricity": "electricity_kwh",
    "electricity_cost": "electricity_cost_usd",
}
assert all(q in QUANTILE_QUANTITIES for q in QUANTITY_ALIASES.values())  # noqa: S101

_COSTS = frozenset(q for q in QUANTILE_QUANTITIES if q.endswith("_usd"))

#: Excel argument -> the plan input (``udfs.quantities.PLAN_INPUTS``) it is.
_PLAN_INPUT_OF = {
    "total_params": "total_params",
    "active_params": "active_params",
    "tokens": "training_tokens",
    "accelerators": "accelerators",
    "accelerator_name": "accelerator_name",
    "mfu": "mfu",
    "usd_per_accelerator_hour": "usd_per_accelerator_hour",
    "throughput_range_pct": "throughput_range_pct",
    "price_range_pct": "price_range_pct",
    "watts_per_accelerator": "watts_per_accelerator",
    "pue": "pue",
    "usd_per_kwh": "usd_per_kwh",
    "effective_tflops": "effective_tflops_input",
}

#: Plan input or engine argument -> the Excel argument an error names.
_RANGE_LABELS = {v: k for k, v in _PLAN_INPUT_OF.items()} | {
    "effective_tflops": "effective_tflops",
    "peak_tflops": "accelerator_name",  # a blank peak comes from the named accelerator
}

#: Input name -> its bound (the range its checks keep).
_BOUND = {q.name: q.bound for q in quantities.PLAN_INPUTS if q.bound is not None}

_P_RULE = "must be a probability strictly between 0 and 1 (0.1 for P10, 0.9 for P90)"


def _quantity_names(function, value):
    """The quantity cells as names of :data:`QUANTILE_QUANTITIES` (aliases resolved)."""
    cells = to_text(function, "quantity", value)
    out = np.empty(cells.shape, dtype=object)
    for index, cell in np.ndenumerate(cells):
        key = "_".join(cell.lower().replace("-", " ").split())
        name = QUANTITY_ALIASES.get(key, key)
        if name not in ranges.QUANTITIES:
            known = ", ".join(QUANTILE_QUANTITIES)
            rule = f"is not a quantity with a range; known: {known} (or hours, days, cost)"
            raise CellError(function, "quantity", f"{rule} (got {cell!r})", index or None)
        out[index] = name
    return out


def _accelerator_names(function, value, flat=None):
    """The accelerator cells as text, each checked against the catalogue in its own cell:
    (cells, distinct names, codes) as :func:`udfs._cells.to_coded_text` gives them."""
    coded = to_coded_text(function, "accelerator_name", value, flat=flat)
    cells = coded[0]
    try:  # each distinct name once; a bad one is then named at its first cell
        for name in coded[1]:
            catalogue.accelerator_record(name, argument="accelerator_name")
    except InputError:
        pass
    else:
        return coded
    known = set()
    for index, cell in np.ndenumerate(cells):
        if cell in known:
            continue
        try:
            catalogue.accelerator_record(cell, argument="accelerator_name")
        except InputError as err:
            raise CellError(function, "accelerator_name", rule_of(err), index or None) from None
        known.add(cell)
    return coded


def _first(mask):
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else None


def _check_range_inputs(arrays):
    """The checks the core does not make on every cell: finite numbers (the core reads NaN as
    a blank); p; a typed MFU that a typed throughput overrides; the uncertainties (>= 0, not
    denormal)."""
    for name, arr in arrays.items():
        if arr is not None:
            check_finite(name, arr)
    p = arrays["p"]
    bad = ~((p > 0) & (p < 1))
    if bad.any():
        pos = _first(bad)
        raise InputError("p", _P_RULE, pos, float(p[pos] if pos else p))
    check_positive("p", p)  # a denormal probability
    for name in ("mfu", "throughput_range_pct", "price_range_pct"):
        if arrays.get(name) is not None:
            check_bound(name, arrays[name], _BOUND[name])


def _own_position(index, shape):
    """The cell of an argument of ``shape`` that feeds the broadcast cell ``index``."""
    if not shape:
        return None
    return tuple(int(i) if d > 1 else 0 for i, d in zip(index[-len(shape) :], shape, strict=True))


def _plan_error(function, err, cells, shape, flat_index):
    """A core error about one plan (the one at ``flat_index``) as a CellError for its cell."""
    index = tuple(int(i) for i in np.unravel_index(flat_index, shape)) if shape else ()
    if isinstance(err, OutOfRangeError):
        # the cell whose plan overflowed, when the plans differ from cell to cell
        ranged = any(np.ndim(cells.get(a)) for a in _PLAN_INPUT_OF if cells.get(a) is not None)
        err.position = (index or None) if ranged else None
    else:
        label = _RANGE_LABELS.get(err.argument, err.argument)
        err.position = _own_position(index, np.shape(cells.get(label)))
    return input_error(function, err, _RANGE_LABELS)


def _plan_points(keys, fail):
    """(points (plans x QUANTILE_QUANTITIES), throughput sigmas, price sigmas) of the distinct
    plans ``keys`` (tuples of the _PLAN_INPUT_OF cells).

    The reference path (:func:`_reference_points`) and the error of one refused plan: each
    plan is resolved on its own (:func:`udfs.plan.resolve`), then the engine runs once over
    the resolved plans as arrays (one call per pattern of inputs given), which gives the
    figures of one plan at a time (``tests/test_speed_paths.py``). A bad plan raises
    ``fail(err, k)`` for the first plan ``k`` that fails, as one plan at a time did: the
    engine's error is found again plan by plan, in order.
    """
    names = tuple(_PLAN_INPUT_OF.values())
    resolved, error = [], None
    for k, key in enumerate(keys):
        try:
            resolved.append(plan.resolve(dict(zip(names, key, strict=True))))
        except InputError as err:
            error = (err, k)
            break
    plans = [r.plan for r in resolved]
    points = _estimate_together(plans)
    if points is None:  # a plan the engine refuses: the first such, one plan at a time
        for k, one in enumerate(plans):
            try:
                with np.errstate(all="ignore"):  # every output is checked by the engine
                    engine.estimate(one)
            except InputError as err:
                raise fail(err, k) from None
    if error is not None:
        raise fail(*error) from None
    tp = np.array([r.throughput_sigma for r in resolved], dtype=float)
    price = np.array([r.price_sigma for r in resolved], dtype=float)
    return points, tp, price


_PLAN_FIELDS = tuple(f.name for f in dataclasses.fields(engine.Plan))


def _estimate_together(plans):
    """``QUANTILE_QUANTITIES`` of each plan (rows), the engine run once per pattern of inputs
    given (None or not); None when the engine refuses one of them."""
    out = np.empty((len(plans), len(QUANTILE_QUANTITIES)))
    groups = {}
    for k, one in enumerate(plans):
        pattern = tuple(getattr(one, f) is None for f in _PLAN_FIELDS)
        groups.setdefault(pattern, []).append(k)
    for pattern, rows in groups.items():
        fields = {
            f: None if none else np.array([getattr(plans[k], f) for k in rows], dtype=float)
            for f, none in zip(_PLAN_FIELDS, pattern, strict=True)
        }
        together = plans[rows[0]] if len(rows) == 1 else engine.Plan(**fields)  # one: as is
        try:
            with np.errstate(all="ignore"):  # every output is checked by the engine
                got = engine.estimate(together)
        except (InputError, TypeError, ValueError):
            return None
        for j, q in enumerate(QUANTILE_QUANTITIES):
            out[rows, j] = got[q]
    return out


def _quantiles(point, throughput_sigma, price_sigma, p, wanted=QUANTILE_QUANTITIES):
    """:func:`udfs.ranges.estimate_ranges` with an array of probabilities ``p``.

    The spec's quantile formulas (``quantities.RANGE_FORMULAS``, the ones estimate_ranges
    and the planner's P10 / P90 rows evaluate) with p as an input rather than a constant, so
    that any p (0.125, 0.001), and one per cell, is one vectorised evaluation; only the
    ``wanted`` quantities (and what they need) are computed.
    """
    values = {
        **point,
        "throughput_sigma": throughput_sigma,
        "price_sigma": price_sigma,
        "quantile_p": p,
    }
    out = model.evaluate(values, [f"{q}_at_p" for q in wanted], _AT_P_FORMULAS)
    return {q: out[f"{q}_at_p"] for q in wanted}


#: The quantile formula of each quantity, at an input probability ``quantile_p``.
_AT_P_FORMULAS = {
    f"{q}_at_p": quantities.RANGE_FORMULAS[q].format(p="quantile_p", k="at_p")
    for q in QUANTILE_QUANTITIES
}


def _first_cell(i, plan_shape, shape):
    """The flat index in the result ``shape`` of the first cell of plan cell ``i``."""
    index = np.unravel_index(i, plan_shape) if plan_shape else ()
    padded = (0,) * (len(shape) - len(index)) + tuple(int(k) for k in index)
    return int(np.ravel_multi_index(padded, shape)) if shape else 0


def plan_quantiles(function, quantity, p, values, reference=False):
    """The p-quantiles of the quantities of the plans in ``values`` (Excel cells), broadcast.

    The plans are resolved together on arrays (:func:`udfs.plan.resolve_many`: the planner's
    blank rules, the calibrated MFU and spreads) and estimated in one engine call
    (:func:`udfs.engine.estimate`); the quantiles are those of
    :func:`udfs.ranges.estimate_ranges` (see :func:`_quantiles`). A call with a bad plan
    names the first one, as resolving each plan on its own (:func:`udfs.plan.resolve`) does:
    that path, ``reference=True``, is kept for the tests that compare the two.
    """
    memo, flats = {}, {}
    check_call_size(function, {"quantity": quantity, "p": p, **values}, memo=memo, flats=flats)
    check_call_size(
        function,
        {name: values[name] for name in _PLAN_INPUT_OF},
        limit=MAX_PLANS_PER_CALL,
        what="plans",
        bound="MAX_PLANS_PER_CALL",
        memo=memo,
    )
    names = _quantity_names(function, quantity)
    values = dict(values)
    coded = _accelerator_names(
        function, values.pop("accelerator_name"), flats.get("accelerator_name")
    )
    accel = coded[0]
    arrays = to_numbers(function, {"p": p, **values}, flats)
    try:
        _check_range_inputs(arrays)
    except InputError as err:
        raise input_error(function, err, {k: k for k in arrays}) from None
    cells = {"quantity": names, "accelerator_name": accel, **arrays}
    shape = tuple(broadcast_shape(function, cells))
    n = int(np.prod(shape, dtype=np.int64))

    # The plans: one per cell of the plan inputs' own shape (at most MAX_PLANS_PER_CALL cells;
    # p and quantity only repeat the plans).
    plan_shape = np.broadcast_shapes(*(np.shape(cells[a]) for a in _PLAN_INPUT_OF))
    if reference:
        point, tp, price = _reference_points(function, cells, shape, plan_shape)
    else:
        point, tp, price = _array_points(function, cells, shape, plan_shape, coded)

    # The quantiles.
    result, is_cost = _wanted_quantiles(names, arrays["p"], shape, n, (point, tp, price))
    drivers = {k: v for k, v in arrays.items() if k != "p"}
    try:
        check_result("result", result, drivers, allow_zero=True, result_label="the result")
        check_result("result", np.where(is_cost, 1.0, result), drivers, result_label="the result")
    except InputError as err:
        raise input_error(function, err, {k: k for k in drivers}) from None
    return to_cells(function, result)


def _wanted_quantiles(names, p, shape, n, points):
    """(the result, of ``shape``: each cell's quantity at its p, True where it is a cost) of
    ``points`` (per-result-cell points, throughput and price sigmas)."""
    ps = p if np.ndim(p) == 0 else np.broadcast_to(p, shape).ravel()
    wanted = (names.item(),) if names.ndim == 0 else tuple(dict.fromkeys(names.ravel().tolist()))
    with np.errstate(all="ignore"):  # out-of-range results are caught by the caller
        got = _quantiles(*points, ps, [q for q in QUANTILE_QUANTITIES if q in wanted])
    if names.ndim == 0:
        return np.broadcast_to(got[names.item()], (n,)).reshape(shape), names.item() in _COSTS
    wanted = np.broadcast_to(names, shape).ravel()
    out = np.empty(n)
    for q in got:
        rows = wanted == q
        out[rows] = np.broadcast_to(got[q], (n,))[rows]
    return out.reshape(shape), np.isin(wanted, list(_COSTS)).reshape(shape)


def _spread(values, plan_shape, shape):
    """Per-plan ``values`` (one per plan cell, or one for all) as one per result cell; a dict
    of them (quantity -> per-plan values) likewise."""
    if isinstance(values, dict):
        return {q: _spread(v, plan_shape, shape) for q, v in values.items()}
    if np.ndim(values) == 0 or tuple(plan_shape) == tuple(shape):
        return values
    arr = np.asarray(values)
    return np.broadcast_to(arr.reshape(plan_shape), shape).reshape(-1)


def _array_points(function, cells, shape, plan_shape, coded):
    """(points (QUANTILE_QUANTITIES -> one per result cell), throughput sigmas, price sigmas)
    of the plans in ``cells``, resolved and estimated on arrays (:func:`_plan_arrays`).

    A plan that :func:`udfs.plan.resolve` or the engine refuses is found on arrays (the
    first one, in cell order); its error is then made by resolving and estimating that plan
    alone, so the message is the one plan-by-plan resolution gives.
    """
    m = math.prod(plan_shape)
    got = _plan_arrays(cells, plan_shape, m, coded)
    if isinstance(got, tuple):
        points, tp, price = got
        return (
            _spread(points, plan_shape, shape),
            _spread(tp, plan_shape, shape),
            _spread(price, plan_shape, shape),
        )
    # got: the first plan cell refused; its error, as one plan alone gives it
    key = tuple(
        None if cells[a] is None else _item(cells[a], plan_shape, got) for a in _PLAN_INPUT_OF
    )

    def fail(err, k):
        return _plan_error(function, err, cells, shape, _first_cell(got, plan_shape, shape))

    _plan_points([key], fail)  # raises
    return _reference_points(function, cells, shape, plan_shape)  # not refused alone after all


def _item(arr, plan_shape, i):
    """The plan cell ``i``'s value of a plan input ``arr`` (a Python float or str)."""
    value = np.broadcast_to(arr, plan_shape).flat[i] if np.ndim(arr) else arr[()]
    return value.item() if isinstance(value, np.generic) else value


def _flat_input(arr, plan_shape):
    """A plan input's cells as a float (one for every plan) or a 1-D array over the plans."""
    if arr is None:
        return None
    if arr.ndim == 0:
        return arr[()] if arr.dtype == object else float(arr)
    if arr.shape != tuple(plan_shape):
        return np.broadcast_to(arr, plan_shape).ravel()
    flat = arr.ravel()  # a view, read-only as a broadcast one is
    flat.flags.writeable = False
    return flat


def _plan_arrays(cells, plan_shape, m, coded):
    """Points and spreads of the ``m`` plans of ``cells`` (see :func:`_array_points`), or the
    flat index of the first plan refused. ``coded``: the accelerator names as
    :func:`_accelerator_names` gives them (distinct names and codes)."""
    inputs = {
        _PLAN_INPUT_OF[a]: _flat_input(cells[a], plan_shape)
        for a in _PLAN_INPUT_OF
        if a != "accelerator_name"
    }
    _, distinct, codes = coded
    names = distinct[int(codes)] if codes.ndim == 0 else (distinct, _flat_input(codes, plan_shape))
    resolved = plan.resolve_many(inputs, names)
    if not plan_shape:  # one plan (a single-cell formula): no masks
        return _one_plan_points(resolved)
    unresolved = np.broadcast_to(resolved.unresolved, (m,))
    first_bad = int(np.argmax(unresolved)) if unresolved.any() else m
    points = {}
    hbm = np.broadcast_to(resolved.hbm_known, (m,))
    for known in (True, False):
        rows = np.flatnonzero((hbm == known) & ~unresolved)
        if rows.size == 0:
            continue
        fields = {k: _rows_of(v, rows, m) for k, v in resolved.fields.items()}
        if not known:
            fields["hbm_gb"] = None
        bad = _first_refused(fields, rows, points, m)
        if bad is not None:
            first_bad = min(first_bad, bad)
    if first_bad < m:
        return first_bad
    return points, resolved.throughput_sigma, resolved.price_sigma


def _one_plan_points(resolved):
    """:func:`_plan_arrays` of one plan: its points and spreads, or 0 when it is refused."""
    if resolved.unresolved:
        return 0
    fields = dict(resolved.fields)
    if not resolved.hbm_known:
        fields["hbm_gb"] = None
    try:
        with np.errstate(all="ignore"):  # every output is checked by the engine
            got = engine.estimate(engine.Plan(**fields))
    except (InputError, TypeError, ValueError):
        return 0
    points = {q: np.array([got[q]]) for q in QUANTILE_QUANTITIES}
    return points, resolved.throughput_sigma, resolved.price_sigma


def _rows_of(value, rows, m):
    """``value`` (a number or one per plan) for the plans ``rows`` (all: as it is)."""
    if value is None or np.ndim(value) == 0 or rows.size == m:
        return value
    return value[rows]


def _first_refused(fields, rows, points, m):
    """Estimate the plans ``rows`` (``fields``) of the ``m`` into ``points`` (quantity -> one
    per plan); the first refused, or None.

    The engine's checks are cell by cell, so a set of plans is refused when one of them is:
    the first is found by halving (a few more engine calls, on arrays)."""

    def refused(part):
        sub = {
            k: _rows_of(v, part, rows.size) if part.size < rows.size else v
            for k, v in fields.items()
        }
        try:
            with np.errstate(all="ignore"):  # every output is checked by the engine
                got = engine.estimate(engine.Plan(**sub))
        except (InputError, TypeError, ValueError):
            return None
        return got

    got = refused(np.arange(rows.size))
    if got is not None:
        for q in QUANTILE_QUANTITIES:
            if rows.size == m:  # every plan: the engine's figures as they are
                points[q] = np.broadcast_to(got[q], (m,))
            else:
                points.setdefault(q, np.empty(m))[rows] = got[q]
        return None
    lo, hi = 0, rows.size
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if refused(np.arange(lo, mid)) is None:
            hi = mid
        else:
            lo = mid
    return int(rows[lo])


def _reference_points(function, cells, shape, plan_shape):
    """:func:`_array_points` plan by plan: each distinct plan resolved on its own
    (:func:`udfs.plan.resolve`), then estimated together; the path the array one replaced,
    kept as the tests' reference."""
    m = math.prod(plan_shape)
    columns = []
    for name in _PLAN_INPUT_OF:
        arr = cells[name]
        columns.append(
            [None] * m if arr is None else np.broadcast_to(arr, plan_shape).ravel().tolist()
        )
    plans, first, plan_of_cell = {}, [], np.empty(m, dtype=np.intp)
    for i, key in enumerate(zip(*columns, strict=True)):
        j = plans.setdefault(key, len(plans))
        if j == len(first):
            first.append(i)
        plan_of_cell[i] = j
    plan_index = np.broadcast_to(plan_of_cell.reshape(plan_shape), shape).ravel()

    def fail(err, k):  # the error of distinct plan k, named at its first cell
        return _plan_error(function, err, cells, shape, _first_cell(first[k], plan_shape, shape))

    points, throughput_sigma, price_sigma = _plan_points(list(plans), fail)
    points = {q: points[plan_index, k] for k, q in enumerate(QUANTILE_QUANTITIES)}
    return points, throughput_sigma[plan_index], price_sigma[plan_index]
