"""Actuals: what a run really used and cost, month by month, read from files.

This module holds the shapes every plan-vs-actual step shares. The readers of the two file
formats (a plain CSV and a FinOps FOCUS cost-and-usage export) fill them; the variance, the
re-forecast and the own-runs feedback read them.

Money is held in whole cents (ints), as in :mod:`udfs.schedule`, so variance parts add up to
the cent. A month is the first day of a calendar month (UTC).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

__all__ = ["ACTUAL_STATUSES", "ActualMonth", "Actuals", "ActualsError"]

#: The ``status`` a plain actuals row may carry (blank: the run's status is unknown).
ACTUAL_STATUSES = ("running", "completed", "failed")


class ActualsError(Exception):
    """A bad actuals file or row: one line naming the file, the row and the column."""


@dataclass(frozen=True)
class ActualMonth:
    """One run's actual use and spend in one calendar month.

    ``cost_cents`` is the spend (whole cents, the hand-off's currency); ``electricity_cents``
    the part of it (or, for a rental-plus-power run, the addition to it) paid for power, None
    when not given; ``status`` the run's status as of this month (one of
    :data:`ACTUAL_STATUSES`, or None); ``source`` the file and row(s) it came from, for the
    audit trail.
    """

    run_code: str
    month: _dt.date
    accelerator_hours: float
    cost_cents: int
    tokens_processed: float | None = None
    status: str | None = None
    electricity_cents: int | None = None
    source: str = ""


@dataclass
class Actuals:
    """Every actuals file of one hand-off, read and checked.

    ``months`` are the rows whose run code a plan knows, one per (run code, month);
    ``unplanned`` the rows whose run code no plan knows (shown as unplanned spend, never
    dropped); ``unallocated_cents`` the spend of a FOCUS export that carries no run tag
    (commitments unused, credits, tax); ``files`` the files read, with their SHA-256.
    """

    months: list = field(default_factory=list)  # ActualMonth
    unplanned: list = field(default_factory=list)  # ActualMonth
    unallocated_cents: int = 0
    currency: str = "USD"
    files: list = field(default_factory=list)  # (path, sha256)

    def by_run(self):
        """run code -> its ActualMonths in month order."""
        out = {}
        for m in sorted(self.months, key=lambda m: (m.run_code, m.month)):
            out.setdefault(m.run_code, []).append(m)
        return out
