"""A FinOps FOCUS cost-and-usage export read as actuals (FOCUS 1.0 to 1.2 columns).

The rules (docs/plan-vs-actual.md has them for the user):

- **Required columns** (:data:`FOCUS_REQUIRED`): a file without one is refused, naming it.
- **Run**: the value of the tag :data:`TAG_KEY` in ``Tags`` (a JSON object), a run code,
  also under a provider's or a tag scheme's prefix (``user:compute-lab-run``). A
  row without it is *unallocated* spend (unused commitments, credits, tax, anything
  untagged): summed and shown, never given to a run.
- **Spend**: ``EffectiveCost``, the amortised cost. A commitment-covered usage row carries
  its share of the commitment there (its ``BilledCost`` is 0), the purchase of the
  commitment has an ``EffectiveCost`` of 0 (its ``BilledCost`` the payment), so summing
  ``EffectiveCost`` counts each dollar once, in the month the hours ran: what a run's plan
  compares with. ``BilledCost`` (cash) is checked as a number but not summed.
- **Accelerator-hours**: on ``Usage`` rows only, ``ConsumedQuantity`` in ``ConsumedUnit``
  (else ``PricingQuantity`` in ``PricingUnit``). A unit of GPU-hours (``GPU-Hours``...)
  counts as it is; a unit of hours (``Hours``, ``Hour``, ``Hrs``, ``h``) is instance-hours,
  times ``GpuCount`` of ``SkuPriceDetails`` when given (else one accelerator an hour); any
  other unit adds spend but no hours. A negative quantity is refused, but on a
  ``ChargeClass`` ``Correction`` row (a correction takes back hours billed before); a run's
  month whose hours come to less than 0, all files together, is refused (by the join).
- **Months**: UTC calendar months of ``ChargePeriodStart``; a row whose charge period
  (start inclusive, end exclusive) spans months is prorated by the time in each. A row that
  adds neither spend nor hours (a commitment's purchase, its EffectiveCost 0) gives its run
  no month.
- **Billing periods**: each run's month keeps the ``BillingPeriodStart`` of its rows (when
  the column is given), so the join can sum a month across the exports of different billing
  periods (a correction billed a period later) and refuse two exports of one period; and
  whether every row of it is a ``Correction``, so the join can warn of a month of
  corrections alone.
- **Currency**: every row's ``BillingCurrency`` is the hand-off's; never mixed.
- **Duplicates**: a row identical to an earlier one, field for field, is refused.
"""

from __future__ import annotations

import collections
import datetime as _dt
import decimal as _decimal
import functools
import hashlib
import json
import re

from udfs.validation import echo

from .actuals import (
    FIRST_ACTUALS_YEAR,
    LAST_ACTUALS_YEAR,
    MAX_ACTUALS_ROWS,
    NUMBER_RULE,
    Entry,
    decimal_of,
    too_many_run_months,
)
from .run_codes import RUN_CODE_RULE, valid_run_code

__all__ = ["FOCUS_MARK", "FOCUS_REQUIRED", "MAX_CHARGE_PERIOD_DAYS", "TAG_KEY", "focus_entries"]

#: The tag key whose value is a row's run code.
TAG_KEY = "compute-lab-run"
#: The column that tells a FOCUS export from a plain actuals file.
FOCUS_MARK = "ChargePeriodStart"
#: The columns a FOCUS export must have to be read as actuals.
FOCUS_REQUIRED = ("ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "BilledCost",
                  "EffectiveCost", "BillingCurrency", "PricingQuantity", "PricingUnit",
                  "Tags")  # fmt: skip
#: The longest charge period a row may have (days): a commitment bought for five years, the
#: longest term sold; a row is split into each calendar month it spans.
MAX_CHARGE_PERIOD_DAYS = 5 * 366
#: ChargeCategory's values (FOCUS 1.0-1.2).
CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
_NULLS = ("", "null", "NULL", "Null")
_TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})"
                   r"(?:\.[0-9]{1,9})?)?(?:Z|\+00:?00)", re.ASCII)  # fmt: skip
_HOUR_UNITS = ("hour", "hours", "hr", "hrs", "h")
_GPU_HOUR_UNITS = ("gpu-hour", "gpu-hours", "gpu hour", "gpu hours", "gpuhours", "gpu-hrs")


@functools.lru_cache(maxsize=1 << 16)  # an export repeats its hours and days
def _time(text):
    m = _TIME.fullmatch(text)
    if not m:
        return None
    try:
        y, mo, d, h, mi, s = (int(g or 0) for g in m.groups())
        if not FIRST_ACTUALS_YEAR <= y <= LAST_ACTUALS_YEAR:
            return None
        return _dt.datetime(y, mo, d, h, mi, s)
    except ValueError:
        return None


def _next_month(day):
    return _dt.datetime(day.year + day.month // 12, day.month % 12 + 1, 1)


@functools.lru_cache(maxsize=1 << 12)  # up to 61 months each
def _spans(start, end):
    """[(month, fraction)] of the charge period [start, end) by UTC calendar month."""
    first = _dt.datetime(start.year, start.month, 1)
    if end <= _next_month(first):
        return ((first.date(), 1),)
    total = (end - start).total_seconds()
    out, at = [], start
    while at < end:
        stop = min(_next_month(_dt.datetime(at.year, at.month, 1)), end)
        out.append(
            (
                _dt.date(at.year, at.month, 1),
                _decimal.Decimal((stop - at).total_seconds()) / _decimal.Decimal(total),
            )
        )
        at = stop
    return tuple(out)


class _TwiceError(ValueError):
    """A JSON object with a key given twice (which value counts is not said)."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


def _unique(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _TwiceError(k)
        out[k] = v
    return out


#: The longest JSON text whose parsed value is kept for the rows that repeat it (a run's
#: tags); longer ones are parsed each time, so the cache holds at most a few tens of MB.
_CACHED_JSON_CHARS = 1024


@functools.lru_cache(maxsize=1 << 12)  # a run's tags repeat on its every row (never mutated)
def _json_cached(text):
    return json.loads(text, object_pairs_hook=_unique)


def _json(text):
    if len(text) <= _CACHED_JSON_CHARS:
        return _json_cached(text)
    return json.loads(text, object_pairs_hook=_unique)


class _Row:
    """One row's fields by column name, with the file and row number for messages."""

    def __init__(self, path, n, fields, at, problems):
        self.path, self.n, self.f, self.at, self.problems = path, n, fields, at, problems

    def text(self, column):
        i = self.at.get(column)
        if i is None:
            return None
        value = self.f[i].strip()
        return None if value in _NULLS else value

    def bad(self, column, rule):
        self.problems.add(self.path, self.n, column, rule)
        raise _Skip

    def number(self, column, required=True):
        text = self.text(column)
        if text is None:
            if required:
                self.bad(column, "is null (a FOCUS export gives it on every row)")
            return None
        value = decimal_of(text)
        if value is None:
            self.bad(column, f"{echo(text)} is not {NUMBER_RULE})")
        return value

    def json(self, column):
        text = self.text(column)
        if text is None:
            return {}
        try:
            value = _json(text)
        except _TwiceError as exc:
            self.bad(column, f"has the key {echo(exc.key)} twice (a JSON object's keys are unique)")
        except (ValueError, RecursionError):
            self.bad(column, "is not JSON (a FOCUS key-value column holds a JSON object)")
        if not isinstance(value, dict):
            self.bad(column, "is not a JSON object")
        return value


class _Skip(Exception):  # noqa: N818 - not an error: the row is skipped, its problem noted
    """The row's problem is noted: skip it."""


def _run_code(row):
    """The run code of a row's tags: the value of :data:`TAG_KEY`, or of the key that is
    :data:`TAG_KEY` after a provider's or a tag scheme's prefix (``user:compute-lab-run``);
    None without one. Keys that give two run codes are a problem."""
    tags = row.json("Tags")
    keys = [k for k in tags if k == TAG_KEY or k.rpartition(":")[2] == TAG_KEY
            or k.rpartition("/")[2] == TAG_KEY]  # fmt: skip
    if not keys:
        return None
    codes = {json.dumps(tags[k]) for k in keys}
    if len(codes) > 1:
        shown = ", ".join(echo(k) for k in keys[:3])
        row.bad("Tags", f"the keys {shown} give two run codes ({', '.join(sorted(codes)[:2])}): "
                        "which one counts is not said")  # fmt: skip
    key = keys[0]
    code = tags[key]
    if not isinstance(code, str) or not valid_run_code(code):
        shown = key if key == TAG_KEY else echo(key)
        row.bad("Tags", f"tag {shown} is {echo(code)}, not a run code ({RUN_CODE_RULE})")
    return code


def _hours(row):
    """Accelerator-hours of a Usage row (0 for another unit), and the column it came from."""
    column, unit_column = "ConsumedQuantity", "ConsumedUnit"
    qty = row.number(column, required=False) if column in row.at else None
    if qty is None:
        column, unit_column = "PricingQuantity", "PricingUnit"
        qty = row.number(column, required=False)
    if qty is None:
        return 0.0
    if qty < 0 and row.text("ChargeClass") != "Correction":
        row.bad(column, f"{qty} is negative (hours are never negative but on a ChargeClass "
                        "Correction row; a refund is a Credit row)")  # fmt: skip
    unit = (row.text(unit_column) or "").lower()
    if unit in _GPU_HOUR_UNITS:
        return float(qty)
    if unit not in _HOUR_UNITS:
        return 0.0
    gpus = row.json("SkuPriceDetails").get("GpuCount") if "SkuPriceDetails" in row.at else None
    if gpus is None:
        return float(qty)
    if isinstance(gpus, bool) or not isinstance(gpus, int | float) or not 0 < gpus <= 1e6:
        row.bad("SkuPriceDetails", f"GpuCount is {echo(gpus)}, not a positive number")
    return float(qty) * gpus


def _not_a_time(text):
    """What is wrong with a FOCUS time's ``text`` (None: a blank cell), for a message."""
    return f"{echo(text)} is not a UTC time" if text else "is blank, not a UTC time"


def _billing_period(row):
    """The ``BillingPeriodStart`` of a row (None when the file has no such column)."""
    if "BillingPeriodStart" not in row.at:
        return None
    start = _time(row.text("BillingPeriodStart") or "")
    if start is None:
        row.bad("BillingPeriodStart", f"{_not_a_time(row.text('BillingPeriodStart'))} "
                f"(YYYY-MM-DDTHH:mm:ssZ, {FIRST_ACTUALS_YEAR} to {LAST_ACTUALS_YEAR})")  # fmt: skip
    return start


def _one(row, currency):
    """(run code, [(month, cost, hours)], billing period start or None) of a row, or (None,
    (cost, month it starts), None) of a row without a run tag (its spend is not split by
    month), else _Skip."""
    start, end = (
        _time(row.text("ChargePeriodStart") or ""),
        _time(row.text("ChargePeriodEnd") or ""),
    )
    if start is None:
        row.bad("ChargePeriodStart", f"{_not_a_time(row.text('ChargePeriodStart'))} "
                f"(YYYY-MM-DDTHH:mm:ssZ, {FIRST_ACTUALS_YEAR} to {LAST_ACTUALS_YEAR})")  # fmt: skip
    if end is None or end <= start:
        row.bad("ChargePeriodEnd", f"{_not_a_time(row.text('ChargePeriodEnd'))} after "
                "ChargePeriodStart")  # fmt: skip
    if (end - start).days >= MAX_CHARGE_PERIOD_DAYS:
        row.bad("ChargePeriodEnd", f"the charge period is {(end - start).days:,} days, over the "
                f"{MAX_CHARGE_PERIOD_DAYS:,} days a row may span")  # fmt: skip
    category = row.text("ChargeCategory")
    if category not in CATEGORIES:
        row.bad("ChargeCategory", f"{echo(category)} is not one of {', '.join(CATEGORIES)}")
    cur = row.text("BillingCurrency")
    if cur != currency:
        row.bad("BillingCurrency", f"{echo(cur)} is not the hand-off's currency, {currency}")
    row.number("BilledCost")
    cost = row.number("EffectiveCost")
    period = _billing_period(row)
    code = _run_code(row)
    if code is None:
        return None, (cost, start.date().replace(day=1)), None
    hours = _hours(row) if category == "Usage" else 0.0
    if not cost and not hours:
        return code, [], period  # nothing to add: no month of actuals
    parts = [(m, cost * share, hours * float(share)) for m, share in _spans(start, end)]
    return code, parts, period


def focus_entries(path, header, rows, currency, problems, room):
    """(entries, unallocated Decimal US$, the last month an unallocated charge starts in, or
    None) of a FOCUS export: ``rows`` yields (row number, fields); bad rows go to
    ``problems``; at most ``room`` entries (then a problem)."""
    missing = [c for c in FOCUS_REQUIRED if c not in header]
    if missing:
        problems.file(path, f"row 1: a FOCUS export without the column(s) {', '.join(missing)} "
                            f"(required: {', '.join(FOCUS_REQUIRED)})")  # fmt: skip
        return [], _decimal.Decimal(0), None
    twice = sorted(c for c, k in collections.Counter(header).items() if c and k > 1)
    if twice:
        problems.file(path, f"row 1: the column(s) {', '.join(echo(c) for c in twice[:5])} are "
                            "given twice (which one counts is not said)")  # fmt: skip
        return [], _decimal.Decimal(0), None
    at = {c: i for i, c in enumerate(header)}
    quantity = "ConsumedQuantity" if "ConsumedQuantity" in at else "PricingQuantity"
    sums, seen, unallocated, splits, last = {}, {}, _decimal.Decimal(0), 0, None
    for n, fields in rows:
        # joined by NUL, which no field holds (the file is refused), so never ambiguous
        key = hashlib.blake2b("\0".join(fields).encode(), digest_size=16).digest()
        if key in seen:
            problems.add(path, n, None, f"is the same as row {seen[key]}, field for field (a "
                                        "duplicate row would count twice)")  # fmt: skip
            continue
        seen[key] = n
        row = _Row(path, n, fields, at, problems)
        try:
            code, parts, period = _one(row, currency)
        except _Skip:
            continue
        if code is None:
            unallocated += parts[0]
            if parts[0] and (last is None or parts[1] > last):
                last = parts[1]
            continue
        splits += len(parts)
        correction = row.text("ChargeClass") == "Correction"
        if splits > MAX_ACTUALS_ROWS:
            problems.file(
                path,
                f"row {n}: its rows split by month come to over "
                f"{MAX_ACTUALS_ROWS:,}, the bound on an actuals file's rows (a "
                "row counts once for each month it spans); not read further",
            )
            return list(sums.values()), unallocated, last
        for month, cost, hours in parts:
            e = sums.get((code, month))
            if e is None:
                e = sums[(code, month)] = Entry(code, month, hours, cost, None, None, None, path,
                                                n, 1, "Tags", "ChargePeriodStart", True,
                                                quantity, only_corrections=correction)  # fmt: skip
                if len(sums) > room:
                    too_many_run_months(path, problems)
                    return list(sums.values()), unallocated, last
            else:
                e.hours += hours
                e.cost += cost
                e.rows += 1
                e.only_corrections = e.only_corrections and correction
            e.periods.setdefault(period, n)
    return list(sums.values()), unallocated, last
