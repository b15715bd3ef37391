"""A run's monthly spend at P50 and at P90, per account, and its rounding to whole cents.

The P50 schedule spreads each account (compute, electricity, other costs) evenly over the
run's wall-clock time from its start date (:func:`udfs.engine.month_shares`). The P90
schedule is the P90 *run*: the P90 accelerator-hours at the run's capacity, so the run lasts
``wall_clock_days_p90`` days from the same start, and its compute and electricity P90 are
spread evenly over those days. Per day the P90 run bills ``accelerators x 24`` accelerator-
hours (the capacity; goodput is inside the accelerator-hours), at the price times
``compute_cost_usd_p90 / (accelerator_hours_p90 x price)`` = ``EXP(NORM.S.INV(0.9) x
(SQRT(throughput_sigma^2 + price_sigma^2) - throughput_sigma))``: 1 without price risk, and
never above the P90 price (``price x EXP(NORM.S.INV(0.9) x price_sigma)``). So no month's P90
compute spend exceeds the month's capacity x the P90 price, a slower run spends later (into
later months, quarters and fiscal years), and only price risk raises the monthly rate. Other
costs are fixed sums, the same at P90: they stay on the P50 schedule. Every month of the P50
run is a month of the P90 run (same start, at least as long), and no month's P90 is below
its P50.

The spec (:mod:`udfs.quantities`: ``run_days_in_month``, ``month_share``,
``month_share_p90``, ``month_total_cost_usd_p90``) holds the same formulas, which the
planner's Monthly spend sheet renders to Excel.

Rounding happens once, here: :func:`schedule_cents` rounds every run x month x account
figure to whole cents (integers), each account's months adding up to that account's run
total rounded to the cent (largest remainders), and no month's P90 below its P50. Every
total of a hand-off is a sum of these integers, so every file ties to the cent.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

from .engine import month_shares

__all__ = [
    "ACCOUNTS",
    "MonthSpend",
    "spend_schedule",
    "split_cents",
    "split_cents_at_least",
    "to_cents",
    "usd",
    "short_usd",
    "schedule_cents",
    "is_money",
]

#: The accounts of a schedule: name -> the run's output (US$) it spreads.
ACCOUNTS = {
    "compute": "compute_cost_usd",
    "electricity": "electricity_cost_usd",
    "other": "other_costs_usd",
}
#: The accounts spread over the P90 run's days at P90; the others keep their P50 schedule.
P90_RUN_ACCOUNTS = ("compute", "electricity")


@dataclass(frozen=True)
class MonthSpend:
    """One calendar month of a run (``month`` None: a run without a start date, all of it).

    ``share`` and ``share_p90`` are the month's shares of the P50 and of the P90 run;
    ``p50`` and ``p90`` map each account to US$ (floats), or to cents (ints) after
    :func:`schedule_cents`.
    """

    month: _dt.date | None
    share: float
    share_p90: float
    p50: dict
    p90: dict

    @property
    def total_p50(self):
        return sum(self.p50.values())

    @property
    def total_p90(self):
        return sum(self.p90.values())


def _finite(value):
    value = float(value)
    return 0.0 if math.isnan(value) else value


def spend_schedule(start_date, wall_clock_days, wall_clock_days_p90, p50, p90):
    """The run's months, each a :class:`MonthSpend`, in order.

    ``p50`` and ``p90`` map each account of :data:`ACCOUNTS` to the run's total (US$; NaN, an
    unpriced figure, counts as 0). A run without a start date (``start_date`` None) is one
    MonthSpend with month None and its totals. The months are those of the P90 run (every
    month of the P50 run is one of them); the P50 of a month after the P50 run is 0.
    """
    p50 = {a: _finite(p50.get(a, 0.0)) for a in ACCOUNTS}
    p90 = {a: _finite(p90.get(a, 0.0)) for a in ACCOUNTS}
    if start_date is None:
        return [MonthSpend(None, 1.0, 1.0, p50, p90)]
    days, days_p90 = float(wall_clock_days), float(wall_clock_days_p90)
    shares = dict(month_shares(start_date, days))
    shares_p90 = dict(month_shares(start_date, max(days, days_p90)))
    months = sorted(shares.keys() | shares_p90.keys())
    out = []
    for m in months:
        s, s90 = shares.get(m, 0.0), shares_p90.get(m, 0.0)
        at_p90 = {a: p90[a] * (s90 if a in P90_RUN_ACCOUNTS else s) for a in ACCOUNTS}
        out.append(MonthSpend(m, s, s90, {a: p50[a] * s for a in ACCOUNTS}, at_p90))
    return out


def split_cents(amounts, total_cents):
    """``amounts`` (US$) as whole cents adding up to ``total_cents`` (largest remainders:
    each is its amount in cents rounded down or up, the ones with the largest remainders
    up). A negative amount (none in a schedule) is rounded the same way."""
    raw = [a * 100.0 for a in amounts]
    cents = [math.floor(x) for x in raw]
    short = total_cents - sum(cents)
    order = sorted(range(len(raw)), key=lambda i: raw[i] - cents[i], reverse=True)
    for i in order[: max(0, short)]:
        cents[i] += 1
    for i in order[::-1][: max(0, -short)]:
        cents[i] -= 1
    return cents


def is_money(column):
    """A column of US$ amounts by its name (``*_usd``, ``p50_usd``, ``total_cost_usd_p90``):
    whole cents in every hand-off table."""
    return column.endswith("_usd") or "_usd_" in column


def to_cents(usd):
    """US$ rounded to whole cents (half away from zero), as an int."""
    x = float(usd) * 100.0
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def usd(cents):
    """Whole cents (an int) as US$ (a float; infinite past the largest float, which the
    caller's range check refuses)."""
    try:
        return cents / 100
    except OverflowError:
        return math.inf if cents > 0 else -math.inf


def split_cents_at_least(amounts, total_cents, least):
    """``amounts`` (US$) as whole cents adding up to ``total_cents``, each at least its
    ``least`` (whole cents; their sum at most ``total_cents``). Each is its amount in cents
    rounded down or up (largest remainders up), or its ``least`` when that is more; where
    those do not add up, the cells with the largest remainders take a cent more and those
    with the smallest a cent less, never below their ``least``."""
    raw = [a * 100.0 for a in amounts]
    low = [math.floor(x) for x in raw]
    cents = [max(lo, f) for lo, f in zip(low, least, strict=True)]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - low[i], reverse=True)
    short = total_cents - sum(cents)
    if short > 0:  # rounded up, largest remainders first, then a cent each in turn
        up = [i for i in order if cents[i] < math.ceil(raw[i])][:short]
        for i in up:
            cents[i] += 1
        short -= len(up)
        if short > 0 and order:
            each, more = divmod(short, len(order))
            for k, i in enumerate(order):
                cents[i] += each + (k < more)
    while short < 0:  # a cent less, smallest remainders first, down to the floor
        down = [i for i in order[::-1] if cents[i] > least[i]]
        down = [i for i in down if cents[i] > low[i]] + [i for i in down if cents[i] <= low[i]]
        if not down:
            raise ValueError("the least amounts add up to more than the total")
        for i in down[:-short]:
            cents[i] -= 1
        short += min(len(down), -short)
    return cents


#: The units of :func:`short_usd`, largest first: (cents in one, suffix).
_SHORT_UNITS = ((100 * 10**9, "B"), (100 * 10**6, "M"), (100 * 10**3, "K"))


def short_usd(cents, exact=False):
    """Whole cents as a line of text reads them: ``$31.5M``, ``$692.8K``, ``$1.2B`` (one
    decimal; under $1,000 to the cent). With ``exact``, the short form only when it is the
    amount to the cent (with up to three decimals), else the amount in full.

    >>> short_usd(3_154_387_012), short_usd(69_275_805), short_usd(-50)
    ('$31.5M', '$692.8K', '-$0.50')
    >>> short_usd(12_000_000_000, exact=True), short_usd(12_045_000_000, exact=True)
    ('$120.0M', '$120.45M')
    >>> short_usd(12_345_678_912, exact=True), short_usd(99_995_000)
    ('$123,456,789.12', '$1.0M')
    """
    sign, cents = ("-" if cents < 0 else ""), abs(int(cents))
    for i, (unit, suffix) in enumerate(_SHORT_UNITS):
        if round(cents / unit, 1) < 1:
            continue
        if i and round(cents / unit, 1) >= 1000:  # $999.95K is $1.0M
            unit, suffix = _SHORT_UNITS[i - 1]
        for decimals in (1, 2, 3) if exact else (1,):
            text = f"{cents / unit:,.{decimals}f}"
            if not exact or round(float(text.replace(",", "")) * unit) == cents:
                return f"{sign}${text}{suffix}"
        break
    whole = cents % 100 == 0 and cents >= 100_000
    return f"{sign}${cents // 100:,}" if whole else f"{sign}${cents / 100:,.2f}"


def schedule_cents(months, p50=None, p90=None):
    """The schedule ``months`` (from :func:`spend_schedule`) in whole cents: each account's
    months add up to its run total rounded to the cent (``p50`` / ``p90``: the run's totals
    by account, as given to :func:`spend_schedule`; without them, the sum of the months),
    and no month's P90 is below its P50.

    The P50 months are rounded first (:func:`split_cents`); the P90 months then, each its
    amount rounded down or up, never below the month's P50 in cents
    (:func:`split_cents_at_least`). An account whose run total is lower at P90 than at P50
    (none in a schedule) has its P90 months rounded on their own."""
    out = [MonthSpend(m.month, m.share, m.share_p90, {}, {}) for m in months]
    for a in ACCOUNTS:
        cents = {}
        for level, totals in (("p50", p50), ("p90", p90)):
            amounts = [getattr(m, level)[a] for m in months]
            total = sum(amounts) if totals is None else _finite(totals.get(a, 0.0))
            cents[level] = (amounts, to_cents(total))
        (at50, total50), (at90, total90) = cents["p50"], cents["p90"]
        rows50 = split_cents(at50, total50)
        if total90 >= total50:
            rows90 = split_cents_at_least(at90, total90, rows50)
        else:
            rows90 = split_cents(at90, total90)
        for row, c50, c90 in zip(out, rows50, rows90, strict=True):
            row.p50[a], row.p90[a] = c50, c90
    return out
