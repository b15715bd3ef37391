"""Plan against actual, per run and month: the variance and its five parts, exact to the cent.

Pure: no files, no workbook. The plan side is a list of :class:`PlanMonth` (the months of the
run's plan, every one of them, from whichever plan is the baseline: this hand-off's P50
schedule or an earlier hand-off's); the actual side a list of :class:`ActualPoint`. Money is
in whole cents (ints), hours and tokens are floats.

The parts of a month's variance ``V = actual cost - plan cost`` (all in cents) are, with
``price`` the plan's cost per accelerator-hour in the month (its planned cost / its planned
hours; in a month the plan has no hours, the run's planned cost / its planned hours) and
``hpt`` the plan's accelerator-hours per token (its planned hours / its planned tokens):

- **rate** = actual cost - actual hours x price: the price difference on the hours used;
- **efficiency** = (actual hours - actual tokens x hpt) x price: hours beyond (or below) what
  the plan's throughput needed for the tokens processed (0 when no tokens are reported);
- **scope** = the change, in the month, of the tokens processed beyond the plan's tokens,
  x hpt x price (a finished run, status completed or failed, that processed fewer tokens than
  planned has a negative scope: the tokens never processed);
- **volume** = the same as scope for a month without tokens reported: the change of the hours
  used beyond the plan's hours, x price;
- **timing** = the rest of the hours difference: work the plan put in another month, done
  earlier or later (over a finished run it sums to 0).

The work done in a month, in plan hours, is ``tokens x hpt`` when the month has tokens, else
its hours; ``beyond`` is the work done to date beyond the plan's hours (never below 0 while
the run goes on; once finished, its work to date minus the plan's hours). Then
``efficiency + scope + volume + timing = (actual hours - plan hours) x price`` and
``rate + that = actual cost - plan hours x price = V``. The five parts are rounded together
to whole cents adding up to ``V`` exactly (:func:`udfs.schedule.split_cents`), so each
month's parts, each run's to date and every total of them add up to the variance to the cent.
(A month whose parts would pass 1e15 cents, beyond a float's whole cents, or a plan month of
a cent over a vanishing number of hours, has its variance as rate only.)

Worked example: a run planned for 1,000 accelerator-hours at $2 (200,000 cents) and 1e9 tokens
in one month; it used 1,100 hours, was billed $2,420 (242,000 cents), processed 1.05e9
tokens and completed.

>>> import datetime as dt
>>> plan = [PlanMonth(dt.date(2027, 1, 1), 1000.0, 200_000, 1e9)]
>>> act = [ActualPoint(dt.date(2027, 1, 1), 1100.0, 242_000, 1.05e9, "completed")]
>>> [(v.variance_cents, v.parts) for v in run_variance(plan, act, dt.date(2027, 1, 1))]
[(42000, {'volume': 0, 'rate': 22000, 'efficiency': 10000, 'scope': 10000, 'timing': 0})]

Rate: 1,100 h x ($2.20 - $2) = $220; efficiency: (1,100 - 1,050) h x $2 = $100; scope: 5e7
more tokens = 50 h x $2 = $100; the parts add up to the $420 the run cost over its plan.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass

from .schedule import split_cents

#: The largest part (cents) split as a float: beyond it a month's variance is all rate.
_LARGEST_CENTS = 1e15

__all__ = ["PARTS", "FINISHED", "PlanMonth", "ActualPoint", "VarianceMonth", "run_variance"]

#: The parts of a variance, in the order every table shows them.
PARTS = ("volume", "rate", "efficiency", "scope", "timing")
#: The statuses after which a run uses no more: its scope is what it processed.
FINISHED = ("completed", "failed")


@dataclass(frozen=True)
class PlanMonth:
    """One month of a run's plan: accelerator-hours, cost in whole cents and tokens (None or
    0 when the plan has no tokens)."""

    month: _dt.date
    hours: float
    cost_cents: int
    tokens: float | None = None


@dataclass(frozen=True)
class ActualPoint:
    """One month of a run's actuals: hours, cost in whole cents, tokens processed (None: not
    reported) and the status as of the month (None: not given)."""

    month: _dt.date
    hours: float
    cost_cents: int
    tokens: float | None = None
    status: str | None = None


@dataclass(frozen=True)
class VarianceMonth:
    """One month of a run, plan against actual. ``parts`` maps each of :data:`PARTS` to whole
    cents; they add up to ``variance_cents`` (actual - plan) exactly."""

    month: _dt.date
    plan_hours: float
    actual_hours: float
    plan_cents: int
    actual_cents: int
    plan_tokens: float | None
    actual_tokens: float | None
    parts: dict

    @property
    def variance_cents(self):
        return self.actual_cents - self.plan_cents


def _rates(plan):
    hours = sum(p.hours for p in plan)
    cents = sum(p.cost_cents for p in plan)
    tokens = sum(p.tokens or 0.0 for p in plan)
    price = cents / hours if hours > 0 else 0.0
    hpt = hours / tokens if tokens > 0 else None
    return hours, price, hpt


def run_variance(plan, actuals, as_of):
    """Plan against actual for one run, month by month up to ``as_of`` (a month: the first of
    it), as :class:`VarianceMonth` in month order.

    Parameters
    ----------
    plan : list of PlanMonth
        Every month of the run's plan (also those after ``as_of``: the plan's totals give its
        price per accelerator-hour and hours per token).
    actuals : list of ActualPoint
        The run's months with actuals, each month at most once.
    as_of : datetime.date
        The last month with actuals (of any run): the months up to it are compared, a
        planned month without actuals counting as nothing used; later months are left out.

    Returns
    -------
    list of VarianceMonth
        One per month of the plan or with actuals, up to ``as_of``; the parts of each add up
        to its variance to the cent.
    """
    plan_hours, price, hpt = _rates(plan)
    planned = {p.month: p for p in plan}
    actual = {a.month: a for a in actuals}
    months = sorted(m for m in planned.keys() | actual.keys() if m <= as_of)
    out, work, beyond, finished = [], 0.0, 0.0, False
    for m in months:
        p = planned.get(m) or PlanMonth(m, 0.0, 0, 0.0)
        a = actual.get(m) or ActualPoint(m, 0.0, 0, None, None)
        has_tokens = a.tokens is not None and hpt is not None
        done = a.tokens * hpt if has_tokens else a.hours
        work += done
        finished = finished or a.status in FINISHED
        now = work - plan_hours if finished else max(work - plan_hours, 0.0)
        grown, beyond = now - beyond, now
        rate_m = p.cost_cents / p.hours if p.hours > 0 else price
        efficiency = (a.hours - done) * rate_m
        timing = (done - p.hours - grown) * rate_m
        rate = a.cost_cents - a.hours * rate_m
        grown_usd = grown * rate_m
        amounts = {
            "volume": 0.0 if has_tokens else grown_usd,
            "rate": rate,
            "efficiency": efficiency,
            "scope": grown_usd if has_tokens else 0.0,
            "timing": timing,
        }
        total = a.cost_cents - p.cost_cents
        if not all(math.isfinite(x) and abs(x) < _LARGEST_CENTS for x in amounts.values()):
            amounts = {**dict.fromkeys(PARTS, 0.0), "rate": float(total)}  # beyond a float
        cents = split_cents([amounts[k] / 100.0 for k in PARTS], total)
        cents[PARTS.index("rate")] += total - sum(cents)  # 0 but for a float's last digits
        out.append(
            VarianceMonth(
                month=m,
                plan_hours=p.hours,
                actual_hours=a.hours,
                plan_cents=p.cost_cents,
                actual_cents=a.cost_cents,
                plan_tokens=p.tokens,
                actual_tokens=a.tokens,
                parts=dict(zip(PARTS, cents, strict=True)),
            )
        )
    return out
