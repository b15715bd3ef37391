"""Re-forecast of a running run: estimate at completion from its actuals to date.

A run that has started has spent its actuals to date and processed part of its tokens. What
is left is forecast from what the run shows, pooled with what its plan said, the same way a
team's completed runs are pooled with the calibrated default (:mod:`udfs.own_runs`):

1. **Progress.** ``fraction_done = tokens processed / plan tokens`` (at most 1). Without a
   token count, ``accelerator-hours to date / plan accelerator-hours`` (the run is taken to
   go at its plan's rate: nothing is observed).
2. **Hours per token, pooled.** The plan's accelerator-hours per token is the prior; the run's
   own (hours to date / tokens to date) the observation. The observation weighs
   ``fraction_done``, as an own run of the plan's size weighs 1, against the stored
   ``own_runs_k`` (``udfs/data/calibration.toml``):
   ``pull = fraction_done / (fraction_done + k)`` and
   ``LN(pooled) = LN(prior) + pull x LN(observed / prior)``. A run half done moves
   ``0.5 / 0.75`` = two thirds of the way to what it shows (k = 0.25); a finished one 80%.
3. **Remaining.** ``remaining tokens = plan tokens - tokens processed`` (0 when done),
   ``remaining hours = remaining tokens x pooled hours per token``. Each account follows
   its own rule: the **compute** is the remaining hours at today's compute price per
   accelerator-hour; the **electricity** the remaining hours at the power's price per
   accelerator-hour (energy scales with the hours); the **other costs** are the fixed sum
   not yet spent, the same whatever the run's pace (the caller says what those prices and
   that sum are: :mod:`workbook_templates.report.forecast` reads them from the actuals and
   the plan).
4. **The spread shrinks with the fraction done.** The plan's throughput spread (sigma of ln
   hours, the plan's P10..P90) is the prior's; read as a normal prior on ln(hours per token)
   and an observation whose variance is ``sigma^2 x k / fraction_done``, the pooled estimate
   has ``sigma_remaining = sigma x SQRT(1 - pull)`` (the conjugate update that gives the pull
   above). P10 / P90 apply to the *remaining* part only: the actuals to date are known, so
   ``EAC_p = actual to date + remaining hourly cost x EXP(NORM.S.INV(p) x
   sigma_remaining) + other costs left``. As a
   run progresses both its remaining cost and its spread shrink, so P10..P90 narrows to the
   actuals at completion (monotonically at any pace between half and twice the plan's; a
   run seen three times slower can widen for its first few percent as its forecast rises).
   **Price risk** combines with it as in the plan (:mod:`udfs.ranges`): the remaining
   compute has the spread ``SQRT(sigma_remaining^2 + price_sigma^2)``, the electricity
   ``sigma_remaining``, the other costs none (a fixed sum, as in the plan's P90):
   ``remaining_p = remaining hours x (compute price x EXP(z_p x SQRT(sigma_remaining^2 +
   price_sigma^2)) + electricity per hour x EXP(z_p x sigma_remaining)) + other costs
   left``. The price's spread does not shrink with progress: the hours still to run are
   all still to be paid at a price not yet known.
5. **Completed and failed runs** have nothing left: EAC = actual to date at every quantile.

Money is whole cents, as in :mod:`udfs.schedule`: the remaining part is rounded once per
quantile, and its months (:func:`forecast_months`) add up to it to the cent, so that the
actual months plus the forecast months are the EAC exactly.

Examples
--------
A run planned at 1T tokens and 1,000,000 accelerator-hours (1e-6 hours per token), with a
spread of 0.3, is 40% done: 400B tokens in 500,000 hours (1.25e-6 hours per token, 25% slow),
for $1,000,000 so far, the latest month at $2 an hour:

>>> f = forecast_run(plan_tokens=1e12, plan_hours=1e6, sigma=0.3, tokens_done=4e11,
...                  hours_done=5e5, actual_usd=1e6, usd_per_hour=2.0)
>>> round(f.pull, 4), round(f.pooled_hours_per_token * 1e6, 4)
(0.6154, 1.1472)
>>> round(f.remaining_hours), round(f.eac["p50"])
(688317, 2376633)
>>> round(f.sigma_remaining, 4), f.eac["p10"] < f.eac["p50"] < f.eac["p90"]
(0.1861, True)
"""

from __future__ import annotations

import datetime as _dt  # noqa: F401 - the examples use it
import math
from dataclasses import dataclass, field

from .engine import month_shares
from .formula import norm_s_inv
from .schedule import split_cents, to_cents

__all__ = [
    "QUANTILES",
    "RUN_STATUSES",
    "RunForecast",
    "pooled_hours_per_token",
    "remaining_sigma",
    "forecast_run",
    "forecast_months",
    "default_k",
    "eac_cents",
]

#: The quantiles of a forecast: key -> probability.
QUANTILES = {"p10": 0.1, "p50": 0.5, "p90": 0.9}
#: A run's state as the forecast sees it: not started (no actuals), running, completed, failed.
RUN_STATUSES = ("not started", "running", "completed", "failed")
#: States with nothing left to spend: the estimate at completion is the actuals to date.
FINISHED = ("completed", "failed")


def default_k():
    """The stored ``own_runs_k``: the weight, in runs of the plan's size, of the prior."""
    from . import calibration

    return float(calibration.fitted()["own_runs_k"])


def pooled_hours_per_token(prior, observed, fraction_done, k):
    """(pooled hours per token, pull): the observed rate pulled toward the plan's prior.

    Parameters
    ----------
    prior : float
        The plan's accelerator-hours per token (> 0).
    observed : float or None
        The run's own accelerator-hours per token to date (> 0), or None (nothing observed:
        the prior, pull 0).
    fraction_done : float
        Tokens processed / plan tokens, 0 to 1: the observation's weight.
    k : float
        The prior's weight (``own_runs_k``, > 0).

    Returns
    -------
    tuple of float
        ``prior x EXP(pull x LN(observed / prior))`` and ``pull = f / (f + k)``.

    Examples
    --------
    >>> rate, pull = pooled_hours_per_token(1.0, 2.0, 1.0, 0.25)
    >>> round(rate, 4), pull
    (1.7411, 0.8)
    """
    if observed is None or not fraction_done > 0:
        return float(prior), 0.0
    pull = fraction_done / (fraction_done + k)
    return float(prior * math.exp(pull * math.log(observed / prior))), pull


def remaining_sigma(sigma, pull):
    """The spread (sigma of ln hours) of the remaining part: ``sigma x SQRT(1 - pull)``.

    >>> round(remaining_sigma(0.3, 0.75), 4)
    0.15
    """
    return float(sigma) * math.sqrt(max(0.0, 1.0 - pull))


@dataclass(frozen=True)
class RunForecast:
    """One run's estimate at completion (EAC) and how it was reached.

    Token and hour figures are plain counts (accelerator-hours); money in US$ (floats):
    ``eac`` and ``remaining_usd`` map ``p10`` / ``p50`` / ``p90`` to US$;
    ``remaining_hours_q`` the remaining accelerator-hours at each quantile;
    ``remaining_parts`` each quantile's remaining US$ by account (``compute``,
    ``electricity``, ``other``); ``usd_per_hour`` today's compute price per
    accelerator-hour, ``electricity_usd_per_hour`` the power's, ``other_usd`` the other
    costs not yet spent.
    """

    status: str
    fraction_done: float
    prior_hours_per_token: float
    observed_hours_per_token: float | None
    pooled_hours_per_token: float
    pull: float
    sigma_remaining: float
    remaining_tokens: float
    remaining_hours: float
    usd_per_hour: float
    actual_usd: float
    remaining_usd: dict = field(default_factory=dict)
    remaining_hours_q: dict = field(default_factory=dict)
    eac: dict = field(default_factory=dict)
    price_sigma: float = 0.0
    electricity_usd_per_hour: float = 0.0
    other_usd: float = 0.0
    remaining_parts: dict = field(default_factory=dict)


def _progress(plan_tokens, plan_hours, tokens_done, hours_done):
    """(fraction done, observed hours per token or None, tokens done as counted)."""
    if tokens_done is not None and tokens_done > 0:
        observed = hours_done / tokens_done if hours_done > 0 else None
        return min(1.0, tokens_done / plan_tokens), observed, tokens_done
    if hours_done > 0 and plan_hours > 0:  # no token count: at the plan's rate
        done = min(1.0, hours_done / plan_hours)
        return done, None, done * plan_tokens
    return 0.0, None, 0.0


def forecast_run(
    plan_tokens,
    plan_hours,
    sigma,
    tokens_done,
    hours_done,
    actual_usd,
    usd_per_hour,
    status="running",
    k=None,
    price_sigma=0.0,
    electricity_usd_per_hour=0.0,
    other_usd=0.0,
):
    """A run's estimate at completion (:class:`RunForecast`).

    Parameters
    ----------
    plan_tokens : float
        The plan's training tokens (> 0).
    plan_hours : float
        The plan's accelerator-hours (> 0, P50).
    sigma : float
        The plan's throughput spread (sigma of ln hours, >= 0).
    tokens_done : float or None
        Tokens processed to date (None: not reported).
    hours_done : float
        Accelerator-hours to date (>= 0).
    actual_usd : float
        Spend to date (US$).
    usd_per_hour : float
        Today's compute price per accelerator-hour (US$): the rental (or ownership) part,
        without power or other costs.
    status : str
        One of :data:`RUN_STATUSES`; a completed or failed run has nothing left.
    k : float, optional
        The prior's weight; default :func:`default_k`.
    price_sigma : float, optional
        The plan's price spread (sigma of ln price, >= 0; 0: no price risk): the compute
        part's.
    electricity_usd_per_hour : float, optional
        Power per accelerator-hour (US$, >= 0): energy scales with the hours.
    other_usd : float, optional
        The other costs not yet spent (US$): a fixed sum, the same at every quantile and
        whatever the run's pace.

    Returns
    -------
    RunForecast
        ``eac[p] = actual_usd + remaining_usd[p]``, ``remaining_usd[p] = remaining hours x
        (usd_per_hour x EXP(NORM.S.INV(p) x SQRT(sigma_remaining^2 + price_sigma^2)) +
        electricity_usd_per_hour x EXP(NORM.S.INV(p) x sigma_remaining)) + other_usd``;
        ``remaining_hours_q[p] = remaining hours x EXP(NORM.S.INV(p) x sigma_remaining)``;
        ``remaining_parts[p]`` the three parts (``compute``, ``electricity``, ``other``).
    """
    k = default_k() if k is None else k
    prior = plan_hours / plan_tokens
    done, observed, counted = _progress(plan_tokens, plan_hours, tokens_done, hours_done)
    pooled, pull = pooled_hours_per_token(prior, observed, done, k)
    finished = status in FINISHED
    left = 0.0 if finished else max(0.0, plan_tokens - counted)
    hours = left * pooled
    s = 0.0 if finished else remaining_sigma(sigma, pull)
    price_sigma = float(price_sigma)
    power, other = float(electricity_usd_per_hour), 0.0 if finished else float(other_usd)
    rental_s = math.sqrt(s * s + price_sigma * price_sigma)
    hours_q, remaining, parts = {}, {}, {}
    for q, p in QUANTILES.items():
        z = norm_s_inv(p)
        hours_q[q] = hours if q == "p50" else hours * math.exp(z * s)
        compute = hours * usd_per_hour * (1.0 if q == "p50" else math.exp(z * rental_s))
        parts[q] = {"compute": compute, "electricity": hours_q[q] * power, "other": other}
        remaining[q] = compute + hours_q[q] * power + other
    return RunForecast(
        status=status,
        fraction_done=1.0 if finished else done,
        prior_hours_per_token=prior,
        observed_hours_per_token=observed,
        pooled_hours_per_token=pooled,
        pull=pull,
        sigma_remaining=s,
        remaining_tokens=left,
        remaining_hours=hours,
        usd_per_hour=usd_per_hour,
        actual_usd=actual_usd,
        remaining_usd=remaining,
        remaining_hours_q=hours_q,
        eac={q: actual_usd + v for q, v in remaining.items()},
        price_sigma=price_sigma,
        electricity_usd_per_hour=power,
        other_usd=other,
        remaining_parts=parts,
    )


def forecast_months(start, hours_per_day, remaining_hours_q, remaining_cents_q):
    """The remaining part of a run by calendar month, whole cents per quantile.

    Parameters
    ----------
    start : datetime.date or None
        The first day the remaining part runs (the day after the last actual month; the
        plan's start date for a run not started). None: a run without a start date, all of
        it in one row whose month is None.
    hours_per_day : float
        Accelerator-hours the run uses per day (the plan's hours / its wall-clock days).
    remaining_hours_q, remaining_cents_q : dict
        The remaining accelerator-hours and whole cents at each quantile (``p10``, ``p50``,
        ``p90``). Each quantile's run lasts its own hours / ``hours_per_day`` days from
        ``start`` (a slower run spends later, as the P90 schedule does).

    Returns
    -------
    list of (datetime.date or None, dict)
        Each month and its cents by quantile (0 after that quantile's run ends); each
        quantile's months add up to its ``remaining_cents_q`` exactly.

    Examples
    --------
    >>> rows = forecast_months(_dt.date(2026, 3, 1), 24.0, {"p10": 24.0, "p50": 48.0,
    ...                        "p90": 96.0}, {"p10": 100, "p50": 200, "p90": 400})
    >>> [(m.isoformat(), c["p50"]) for m, c in rows]
    [('2026-03-01', 200)]
    """
    quantiles = list(remaining_cents_q)
    if not any(remaining_cents_q.values()):
        return []
    if start is None or not hours_per_day > 0:
        return [(None, dict(remaining_cents_q))]
    by_month = {}
    for q in quantiles:
        days, cents = remaining_hours_q[q] / hours_per_day, remaining_cents_q[q]
        if not cents:
            continue
        shares = month_shares(start, days) if days > 0 else [(start.replace(day=1), 1.0)]
        split = split_cents([s * cents / 100 for _, s in shares], cents)
        for (m, _), c in zip(shares, split, strict=True):
            by_month.setdefault(m, dict.fromkeys(quantiles, 0))[q] += c
    return sorted(by_month.items())


def eac_cents(actual_cents, remaining_usd):
    """{quantile: EAC in whole cents}: the actual cents plus each remaining part rounded
    once (:func:`udfs.schedule.to_cents`)."""
    return {q: actual_cents + to_cents(v) for q, v in remaining_usd.items()}
