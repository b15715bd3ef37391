"""This hand-off against a baseline (report --baseline): the Baseline table and its checks,
added to the tables :func:`.tables.build_tables` made (:func:`add_baseline`).

Runs are matched by run code. Per run, one row per month of either hand-off (the baseline's P50
and this one's, in whole cents, summed over the accounts of ``fpa``), then a "run total" row.
The month rows add up to the run total, and every change compares like with like: this P50
against the baseline's P50. An Approved run of the baseline shows its approved amount on its
run total row, in a column of its own (``baseline_approved_usd``), never as a change; a plan
changed since is never re-priced silently, it is a WARN naming the run, what changed and the
approved amount (:func:`baseline_checks`).
"""

from __future__ import annotations

import datetime as _dt
import math

import pandas as pd

from udfs import schedule

from .checks import COLUMNS, Rows
from .consolidate import NOT_THE_PLAN, Q
from .tables import budget_sorted, run_cents

__all__ = ["BASELINE_COLUMNS", "add_baseline", "baseline_table", "baseline_checks",
           "changed_inputs"]  # fmt: skip

BASELINE_COLUMNS = ["run_code", "scenario", "budget_status", "baseline_status", "line", "month",
                    "baseline_p50_usd", "p50_usd", "change_usd", "baseline_approved_usd",
                    "change", "baseline_version", "baseline_as_of"]  # fmt: skip
#: Relative difference under which two figures of an input are the same (the CSV's 15 digits).
_SAME = 1e-12


def _now_text(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime().date()
    if isinstance(value, _dt.datetime):
        value = value.date()
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value).strip()


def _same(before, now):
    now_text = _now_text(now)
    if before == now_text:
        return True
    try:
        a, b = float(before), float(now_text)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=_SAME, abs_tol=0.0)


def _shown(text):
    if text == "":
        return "(blank)"
    try:
        return f"{float(text):,.6g}"
    except ValueError:
        return repr(text)


def changed_inputs(before, now_row):
    """[(label, before, now)] of the plan's inputs that differ: ``before`` as the baseline's
    runs.csv wrote them, ``now_row`` this hand-off's runs table row."""
    out = []
    for name, was in before.items():
        if name in NOT_THE_PLAN or name not in now_row:
            continue
        if not _same(was, now_row[name]):
            label = Q[name].label if name in Q else name
            out.append((label, _shown(was), _shown(_now_text(now_row[name]))))
    return out


def _change_text(changes):
    return "; ".join(f"{label} {was} -> {now}" for label, was, now in changes)


def _now_months(r):
    months = {}
    for m in run_cents(r).months:
        months[m.month] = months.get(m.month, 0) + sum(m.p50[a] for a in schedule.ACCOUNTS)
    return months


def _comparisons(c):
    """[(code, run or None)] in the runs table's order, then the baseline's runs not here."""
    b, seen, out = c.baseline, set(), []
    for r in budget_sorted(c):
        if r.run_code not in seen:
            seen.add(r.run_code)
            out.append((r.run_code, r))
    out += [(code, None) for code in b.statuses if code not in seen]
    return out


def _runs_rows(c):
    runs = c.tables["runs"]
    return {row["run_code"]: row for row in reversed(runs.to_dict("records"))}


def add_baseline(c):
    """Add the Baseline table and the Checks' "Baseline" rows to ``c.tables`` (built by
    :func:`.tables.build_tables`), when ``c`` has a baseline (report --baseline)."""
    if getattr(c, "baseline", None) is None:
        return
    c.tables["baseline"] = baseline_table(c)
    rows = Rows()
    baseline_checks(rows, c)
    checks = c.tables["checks"]
    c.tables["checks"] = pd.concat([checks, pd.DataFrame(rows, columns=COLUMNS)],
                                   ignore_index=True)  # fmt: skip


def baseline_table(c):
    """The Baseline table: per run code and month, the baseline's P50 and this hand-off's;
    the run total row of a run Approved in the baseline also has its approved amount."""
    b, rows = c.baseline, []
    now_rows = _runs_rows(c)
    for code, r in _comparisons(c):
        now = _now_months(r) if r is not None else {}
        was_months = {m: v for (k, m), v in b.months.items() if k == code}
        in_base = code in b.statuses
        common = {"run_code": code,
                  "scenario": r.scenario.name if r is not None else b.scenarios.get(code),
                  "budget_status": r.status if r is not None else None,
                  "baseline_status": b.statuses.get(code),
                  "baseline_version": b.version, "baseline_as_of": b.as_of}  # fmt: skip
        months = sorted(set(now) | set(was_months), key=lambda m: (m is None, m))
        for m in months:
            was, is_ = was_months.get(m, 0), now.get(m, 0)
            rows.append({**common, "line": "month" if m is not None else "unscheduled",
                         "month": m, "baseline_p50_usd": schedule.usd(was),
                         "p50_usd": schedule.usd(is_), "change_usd": schedule.usd(is_ - was),
                         "baseline_approved_usd": None, "change": None})  # fmt: skip
        was = b.totals.get(code, 0) if in_base else 0
        approved = b.approved.get(code) if in_base else None
        is_ = sum(now.values())
        if r is None:
            change = "not in this hand-off"
        elif not in_base:
            change = "new run"
        else:
            change = _change_text(changed_inputs(b.inputs.get(code, {}), now_rows[code])) or None
        rows.append({**common, "line": "run total", "month": None,
                     "baseline_p50_usd": schedule.usd(was), "p50_usd": schedule.usd(is_),
                     "change_usd": schedule.usd(is_ - was),
                     "baseline_approved_usd": None if approved is None else schedule.usd(approved),
                     "change": change})  # fmt: skip
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def _money(cents):
    return f"US$ {schedule.usd(cents):,.2f}"


def _against(now, approved):
    """Where a P50 (cents) stands against an approved amount, in words."""
    if now == approved:
        return "at the approved amount"
    side = "over" if now > approved else "under"
    return f"{_money(abs(now - approved))} {side} the approved amount"


def baseline_checks(rows, c):
    """The Checks table's "Baseline" rows: INFO of what was compared, a WARN per Approved run
    of the baseline whose plan or P50 changed, or that this hand-off no longer has."""
    b = c.baseline
    if b is None:
        return
    now_rows, label = _runs_rows(c), repr(b.version) if b.version else str(b.path)
    pairs = _comparisons(c)
    both = sum(1 for code, r in pairs if r is not None and code in b.statuses)
    new = sum(1 for code, r in pairs if r is not None and code not in b.statuses)
    gone = sum(1 for _, r in pairs if r is None)
    rows.add("Baseline", "INFO",
             f"compared with the baseline {label} ({b.path}, as of {b.as_of or 'unknown'}): "
             f"{both} run(s) in both, {new} new, {gone} not in this hand-off")  # fmt: skip
    for code, r in pairs:
        if b.statuses.get(code) != "Approved":
            continue
        approved = b.approved.get(code, 0)
        if r is None:
            rows.add("Baseline", "WARN",
                     f"run {code!r} ({b.scenarios.get(code)!r}) was Approved at "
                     f"{_money(approved)} in the baseline {label} and is not in this hand-off "
                     "(or not in its budget)")  # fmt: skip
            continue
        now = sum(_now_months(r).values())
        changes = changed_inputs(b.inputs.get(code, {}), now_rows[code])
        if not changes and now == b.totals.get(code, 0):  # the same plan, the same P50
            continue
        what = (f"its plan changed: {_change_text(changes)}" if changes
                else "its inputs are the same but its P50 moved (a default, the calibration or "
                "--own-runs changed)")  # fmt: skip
        rows.add("Baseline", "WARN",
                 f"run {code!r} (scenario {r.scenario.name!r}) was Approved at "
                 f"{_money(approved)} in the baseline {label} (its P50 then "
                 f"{_money(b.totals.get(code, 0))}); {what}; its P50 is now {_money(now)} "
                 f"({_against(now, approved)}): the approval stands at its amount, re-approve "
                 "the change or revert it", r.scenario.path)  # fmt: skip
