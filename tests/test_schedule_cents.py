"""A run's schedule in whole cents: every month's P90 at least its P50, every total to the cent.

:func:`udfs.schedule.schedule_cents` rounds the P50 months first, then the P90 months, each
never below its month's P50: a month the P90 run spends the same as the P50 run (a whole
month of electricity, the other costs) is the same in cents at both, and each account's
months still add up to its run totals rounded once.
"""

from __future__ import annotations

import datetime as dt
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import schedule


def _check(months, p50, p90):
    rows = schedule.schedule_cents(months, p50, p90)
    for a in schedule.ACCOUNTS:
        assert sum(r.p50[a] for r in rows) == schedule.to_cents(p50[a]), a
        assert sum(r.p90[a] for r in rows) == schedule.to_cents(p90[a]), a
        for m, r in zip(months, rows, strict=True):
            assert r.p90[a] >= r.p50[a], (a, r.month, r.p50[a], r.p90[a])
            # each is its amount rounded down or up (the P90 at most up to the P50's cents)
            raw50, raw90 = m.p50[a] * 100, m.p90[a] * 100
            assert math.floor(raw50) <= r.p50[a] <= math.ceil(raw50), (a, r.month)
            assert math.floor(raw90) <= r.p90[a] <= max(math.ceil(raw90), r.p50[a]), (a, r.month)
    return rows


def test_a_whole_month_of_electricity_is_the_same_at_p50_and_p90():
    """The audit's case: a P50 month rounded up, its P90 (the same amount) rounded down."""
    p50 = {"compute": 77052543.45994022, "electricity": 539663.4867049338, "other": 0.0}
    p90 = {"compute": 124181720.8926133, "electricity": 804658.9379176853, "other": 0.0}
    months = schedule.spend_schedule(dt.date(2027, 3, 28), 201.39318481495974,
                                     300.28495569808587, p50, p90)  # fmt: skip
    june = next(m for m in months if m.month == dt.date(2027, 6, 1))
    assert june.p90["electricity"] == pytest.approx(june.p50["electricity"], rel=1e-12)
    rows = _check(months, p50, p90)
    got = next(r for r in rows if r.month == dt.date(2027, 6, 1))
    assert got.p50["electricity"] == got.p90["electricity"]


_MONEY = st.floats(0, 1e9, allow_nan=False, allow_subnormal=False)


@settings(max_examples=400, deadline=None)
@given(start=st.dates(dt.date(2025, 1, 1), dt.date(2040, 12, 31)),
       days=st.floats(0.01, 2000, allow_subnormal=False), longer=st.floats(1, 3),
       compute=_MONEY, electricity=_MONEY, other=_MONEY,
       price_risk=st.floats(1, 1.5), dated=st.booleans())  # fmt: skip
def test_every_month_p90_at_least_p50_and_every_account_ties(
    start, days, longer, compute, electricity, other, price_risk, dated
):
    """Random runs: the P90 run lasts ``longer`` x the P50 run's days at the same daily
    rate (times ``price_risk`` for compute), as :func:`udfs.schedule.spend_schedule` spreads
    them; other costs are the same at P90."""
    p50 = {"compute": compute, "electricity": electricity, "other": other}
    p90 = {"compute": compute * longer * price_risk, "electricity": electricity * longer,
           "other": other}  # fmt: skip
    months = schedule.spend_schedule(start if dated else None, days, days * longer, p50, p90)
    _check(months, p50, p90)


@settings(max_examples=300, deadline=None)
@given(
    amounts=st.lists(st.floats(0, 1e7, allow_subnormal=False), min_size=1, max_size=40),
    extra=st.lists(st.floats(0, 1e4, allow_subnormal=False), min_size=40, max_size=40),
)
def test_split_cents_at_least_keeps_each_floor_and_the_total(amounts, extra):
    least = schedule.split_cents(amounts, schedule.to_cents(sum(amounts)))
    higher = [a + e for a, e in zip(amounts, extra, strict=False)]
    total = schedule.to_cents(sum(higher))
    got = schedule.split_cents_at_least(higher, total, least)
    assert sum(got) == total
    assert all(g >= f for g, f in zip(got, least, strict=True))
    assert all(math.floor(h * 100) <= g <= max(math.ceil(h * 100), f)
               for h, g, f in zip(higher, got, least, strict=True))  # fmt: skip
