"""Calibrated ranges (P10 / P50 / P90) around the engine's point estimates.

Every range is lognormal around the point estimate: the p-quantile of a quantity is
``point x exp(z_p x sigma)`` with ``z_p = NORM.S.INV(p)``, so P50 equals the point estimate and a
workbook computes the same numbers with ``EXP``, ``LN``, ``SQRT`` and ``NORM.S.INV`` (Excel
2010, LibreOffice). How the spreads combine (see ``docs/methodology-calibration.md``):

- ``throughput_sigma`` (ln units) drives accelerator-hours, wall-clock days, electricity (kWh)
  and electricity cost, fully correlated: they all scale with 1 / throughput. It is
  :func:`udfs.calibration.throughput_sigma` with the calibrated default throughput and with a
  typed throughput or MFU alike (a typed number is an estimate too), unless the user gives a
  range: a low/high (read as P10/P90, converted by :func:`sigma_from_p10_p90`) or a
  ``throughput_range_pct`` (0 for a throughput that is known).
- ``price_sigma`` (the price per accelerator-hour, from a user low/high) is independent of the
  throughput error: rental cost has ``sigma = SQRT(throughput_sigma^2 + price_sigma^2)``.
- Total cost = rental + electricity cost + other costs is taken comonotone: its p-quantile is
  the sum of the parts' p-quantiles (other costs fixed). Both parts scale with the same hours,
  so this is exact when ``price_sigma`` is 0 and slightly wide (conservative) otherwise.

All functions are vectorised numpy and broadcast their arguments.
"""

from __future__ import annotations

import numpy as np

from . import model
from .engine import unpriced_as_zero
from .formula import norm_s_inv
from .quantities import RANGE_FORMULAS, RANGE_QUANTITIES

__all__ = [
    "QUANTITIES",
    "DEFAULT_PS",
    "z_score",
    "quantile_factor",
    "range_of",
    "sigma_from_p10_p90",
    "combine_sigmas",
    "estimate_ranges",
    "price_share",
    "lognormal_mean",
    "lognormal_sd",
    "independent_sum_p90",
]

#: The quantities that get a range (``quantities.RANGE_QUANTITIES``), and which spread drives each.
QUANTITIES = {
    "accelerator_hours": "throughput",
    "wall_clock_days": "throughput",
    "compute_cost_usd": "throughput and price (independent, in log space)",
    "electricity_kwh": "throughput",
    "electricity_cost_usd": "throughput",
    "total_cost_usd": "sum of the rental and electricity quantiles, plus other costs",
}

#: The quantiles given by default: P10, P50, P90.
DEFAULT_PS = (0.1, 0.5, 0.9)


def z_score(p):
    """NORM.S.INV(p) for probabilities strictly between 0 and 1; vectorised.

    :func:`udfs.formula.norm_s_inv` (the spec's function), refusing any other ``p``.

    Examples
    --------
    >>> round(z_score(0.9), 6)
    1.281552
    """
    arr = np.asarray(p, dtype=float)
    if not np.all((arr > 0) & (arr < 1)):
        raise ValueError("p must be a probability strictly between 0 and 1")
    return norm_s_inv(arr)


def quantile_factor(p, sigma):
    """exp(z_p x sigma): the p-quantile of a lognormal over its median. 1 at p = 0.5.

    Examples
    --------
    >>> round(quantile_factor(0.9, 0.272), 4)
    1.4171
    """
    s = np.asarray(sigma, dtype=float)
    if np.any(~(s >= 0)):
        raise ValueError("sigma must be a non-negative number")
    out = np.exp(np.asarray(z_score(p)) * s)
    return float(out) if out.ndim == 0 else out


def range_of(point, p, sigma):
    """The p-quantile of a quantity whose median is ``point``: point x exp(z_p x sigma)."""
    out = np.asarray(point, dtype=float) * quantile_factor(p, sigma)
    return float(out) if np.ndim(out) == 0 else out


def sigma_from_p10_p90(low, high):
    """The sigma that puts ``low`` at P10 and ``high`` at P90: LN(high/low) / (2 x z_0.9).

    ``low`` and ``high`` are positive with low <= high (e.g. a throughput or a price range).
    Only their ratio matters: the point estimate stays the P50.

    Examples
    --------
    >>> round(sigma_from_p10_p90(300, 450), 4)
    0.1582
    """
    lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if np.any(~(lo > 0)) or np.any(~(hi >= lo)):
        raise ValueError("a range needs 0 < low <= high")
    out = np.log(hi / lo) / (2.0 * z_score(0.9))
    return float(out) if out.ndim == 0 else out


def combine_sigmas(*sigmas):
    """Spread of a product of independent lognormal factors: SQRT(sum of sigma^2)."""
    out = np.sqrt(sum(np.square(np.asarray(s, dtype=float)) for s in sigmas))
    return float(out) if np.ndim(out) == 0 else out


def estimate_ranges(point, throughput_sigma, price_sigma=0.0, ps=DEFAULT_PS):
    """Quantiles of hours, days, energy and costs around a point estimate.

    Parameters
    ----------
    point : mapping
        The point estimate, e.g. :func:`udfs.engine.estimate`'s result: arrays (or numbers)
        under ``accelerator_hours``, ``wall_clock_days``, ``compute_cost_usd``,
        ``electricity_kwh``, ``electricity_cost_usd`` and ``total_cost_usd``. A missing key or
        NaN (e.g. no price given) gives NaN quantiles for that quantity.
    throughput_sigma : float or array
        Spread (ln units) of the throughput, e.g. :func:`udfs.calibration.throughput_sigma`
        for the calibrated default, or :func:`sigma_from_p10_p90` of a user range, or 0.
    price_sigma : float or array
        Spread (ln units) of the price per accelerator-hour, independent of the throughput.
    ps : sequence of float
        Probabilities; the keys of each result are ``"p10"``, ``"p50"``, ``"p90"`` (the
        probability x 100, formatted ``p{:g}``).

    Returns
    -------
    dict
        ``{quantity: {"p10": array, "p50": array, "p90": array}}`` for the quantities of
        :data:`QUANTITIES`. P50 equals the point estimate.

    Notes
    -----
    The spec's formulas (``quantities.RANGE_FORMULAS``, the formulas of the planner's
    ``{q}_p10`` and ``{q}_p90`` rows) at each probability of ``ps``, with the same
    operations in numpy and the parts shared by every probability (the rental cost's
    spread, the point's priced electricity) computed once: :func:`_spec_ranges`, which
    evaluates the formula texts, gives the same numbers (``tests/test_ranges_fast.py``).
    """
    tp, price, point = _checked(point, throughput_sigma, price_sigma, ps)
    rental_sigma = np.sqrt(tp**2 + price**2)  # the rental cost's spread, as in the spec
    elec = point["electricity_cost_usd"]
    elec_priced = unpriced_as_zero(elec)
    out = {q: {} for q in RANGE_QUANTITIES}
    for p in ps:
        k = f"p{100 * p:g}"  # the result's key; "p12.5" is no name a formula can use
        z = norm_s_inv(float(p))
        factor = np.exp(z * tp)  # q * exp(norm_s_inv(p) * throughput_sigma)
        for q in ("accelerator_hours", "wall_clock_days", "electricity_kwh"):
            out[q][k] = point[q] * factor
        elec_k = out["electricity_cost_usd"][k] = elec * factor
        rental_k = out["compute_cost_usd"][k] = point["compute_cost_usd"] * np.exp(z * rental_sigma)
        # the total: point total plus the parts' moves; an unpriced electricity moves nothing
        total = _add_into(rental_k - point["compute_cost_usd"], point["total_cost_usd"])
        out["total_cost_usd"][k] = _add_into(total, unpriced_as_zero(elec_k) - elec_priced)
    return out


def price_share(throughput_sigma, price_sigma):
    """The price's share of a rental cost's contingency (P90 - P50), by variance:
    ``price_sigma^2 / (throughput_sigma^2 + price_sigma^2)``; 0 when both spreads are 0. The
    throughput's share is 1 minus it. The rental's log-spread is SQRT(throughput_sigma^2 +
    price_sigma^2) and each independent factor's share of its variance is its share of the
    contingency; an electricity cost moves with the throughput only (all of its contingency
    is the throughput's).

    Examples
    --------
    >>> round(price_share(0.3, 0.1), 4)
    0.1
    >>> price_share(0.2, 0.0)
    0.0
    """
    tp, price = float(throughput_sigma), float(price_sigma)
    if not (tp >= 0 and price >= 0):
        raise ValueError("sigma must be a non-negative number")
    total = tp * tp + price * price
    return price * price / total if total > 0 else 0.0


def lognormal_mean(p50, p90):
    """The mean of a cost taken lognormal with median ``p50`` and 90th percentile ``p90``.

    ``P50 x EXP(sigma^2 / 2)`` with ``sigma = LN(P90 / P50) / NORM.S.INV(0.9)``: the cost
    expected on average, above the P50 when the range is wide. 0 where the P50 is 0.
    Broadcasts like the engine's functions.

    Examples
    --------
    >>> round(lognormal_mean(100.0, 150.0), 4)
    105.1324
    >>> lognormal_mean([0.0, 100.0], [0.0, 100.0]).tolist()
    [0.0, 100.0]
    """
    a, on, s2 = _lognormal_spread(p50, p90)
    out = np.where(on, a * np.exp(s2 / 2), 0.0)
    return float(out) if out.ndim == 0 else out


def lognormal_sd(p50, p90):
    """The standard deviation of a cost taken lognormal with median ``p50`` and 90th
    percentile ``p90``: ``P50 x EXP(3 s^2 / 4) x SQRT(2 SINH(s^2 / 2))`` with
    ``s = LN(P90 / P50) / NORM.S.INV(0.9)`` (the lognormal's ``P50 x SQRT(EXP(s^2) x
    (EXP(s^2) - 1))`` written without a difference of nearly equal numbers, so a narrow
    range on a large P50 keeps its digits). 0 where the P50 is 0 or the P90 is the P50.

    Examples
    --------
    >>> round(lognormal_sd(100.0, 150.0), 4)
    34.1124
    >>> lognormal_sd([0.0, 100.0], [0.0, 100.0]).tolist()
    [0.0, 0.0]
    """
    a, on, s2 = _lognormal_spread(p50, p90)
    out = np.where(on, a * np.exp(0.75 * s2) * np.sqrt(2 * np.sinh(s2 / 2)), 0.0)
    return float(out) if out.ndim == 0 else out


def _lognormal_spread(p50, p90):
    """(P50 as a float array, where it is above 0, ``s^2``) of costs taken lognormal with
    median ``p50`` and 90th percentile ``p90``, ``s = LN(P90 / P50) / NORM.S.INV(0.9)`` (0
    where the P50 is 0), once each run has 0 <= P50 <= P90."""
    a, b = np.asarray(p50, dtype=float), np.asarray(p90, dtype=float)
    if np.any(~(a >= 0)) or np.any(~(b >= a)):
        raise ValueError("each run needs 0 <= P50 <= P90")
    on = a > 0
    ratio = np.divide(b, a, out=np.ones_like(a * b), where=on)
    return a, on, np.square(np.log(ratio) / float(norm_s_inv(0.9)))


def independent_sum_p90(p50s, p90s, means=None):
    """The P90 of a sum of runs whose costs are independent (Fenton-Wilkinson).

    Each run's cost is taken lognormal with median its P50 and P90 its P90; its mean is
    :func:`lognormal_mean` (or ``means``, the same rounded to the cent) and its standard
    deviation :func:`lognormal_sd`. The sum is approximated by the lognormal with the summed
    mean ``M`` and variance ``V``: with ``t = LN(1 + V / M^2)`` (computed as ``log1p``, so a
    small spread beside a large mean is not lost), its P90 is ``M x EXP(z SQRT(t) - t / 2)``,
    ``z = NORM.S.INV(0.9)``, held between two bounds that hold for the sum: at least the
    total P50 plus the largest run's contingency (P90 - P50), at most the sum of the P90s
    (every run late together). One run gives its own P90; runs with a P50 of 0 add nothing.

    Examples
    --------
    >>> round(independent_sum_p90([100.0], [150.0]), 6)
    150.0
    >>> round(independent_sum_p90([100.0, 100.0], [150.0, 150.0]), 2)
    273.96
    """
    p50, p90 = np.asarray(p50s, dtype=float), np.asarray(p90s, dtype=float)
    if p50.shape != p90.shape or np.any(~(p50 >= 0)) or np.any(~(p90 >= p50)):
        raise ValueError("each run needs 0 <= P50 <= P90")
    m = lognormal_mean(p50, p90) if means is None else np.asarray(means, dtype=float)
    on = p50 > 0
    if not on.any():
        return float(p90.sum())
    scale = p90.max()  # the sum in units of the largest P90: no overflow on the way
    mean = (m[on] / scale).sum()
    variance = np.square(lognormal_sd(p50[on], p90[on]) / scale).sum()
    t = np.log1p(variance / mean**2)
    z = float(norm_s_inv(0.9))
    fitted = float(mean * np.exp(z * np.sqrt(t) - t / 2)) * float(scale)
    low = float(p50.sum() + (p90 - p50).max())
    return min(max(fitted, low), float(p90.sum()))


def _add_into(a, b):
    """a + b (the same number as b + a), into ``a`` when it is an array of the result's shape."""
    if type(a) is np.ndarray and a.ndim and np.shape(b) in ((), a.shape):
        return np.add(a, b, out=a)
    return a + b


def _checked(point, throughput_sigma, price_sigma, ps):
    """The spreads and the point's quantities as float arrays, once the spreads and ``ps``
    pass their rules."""
    tp = np.asarray(throughput_sigma, dtype=float)
    price = np.asarray(price_sigma, dtype=float)
    for s in (tp, price):
        if np.any(~(s >= 0)):
            raise ValueError("sigma must be a non-negative number")
    z_score(np.asarray(ps))  # refuses anything but probabilities
    return tp, price, {q: np.asarray(point.get(q, np.nan), dtype=float) for q in RANGE_QUANTITIES}


def _spec_ranges(point, throughput_sigma, price_sigma=0.0, ps=DEFAULT_PS):
    """:func:`estimate_ranges` by evaluating the spec's formula texts (``RANGE_FORMULAS``)
    with :func:`udfs.model.evaluate`: the reference the numpy path is tested against."""
    tp, price, point = _checked(point, throughput_sigma, price_sigma, ps)
    values = {**point, "throughput_sigma": tp, "price_sigma": price}
    out = {q: {} for q in RANGE_QUANTITIES}
    for i, p in enumerate(ps):
        k = f"p{100 * p:g}"  # the result's key; "p12.5" is no name a formula can use
        ident = f"q{i}"
        formulas = {
            f"{q}_{ident}": RANGE_FORMULAS[q].format(p=repr(float(p)), k=ident)
            for q in RANGE_QUANTITIES
            if q != "total_cost_usd"
        }
        parts = model.evaluate(values, list(formulas), formulas)
        # the total: point total plus the parts' moves; an unpriced electricity moves nothing
        elec = f"electricity_cost_usd_{ident}"
        priced = {
            "electricity_cost_usd": unpriced_as_zero(point["electricity_cost_usd"]),
            elec: unpriced_as_zero(parts[elec]),
        }
        total_name = f"total_cost_usd_{ident}"
        total = model.evaluate(
            {**values, **parts, **priced},
            [total_name],
            {total_name: RANGE_FORMULAS["total_cost_usd"].format(p=p, k=ident)},
        )
        for q in RANGE_QUANTITIES:
            out[q][k] = {**parts, **total}[f"{q}_{ident}"]
    return out
