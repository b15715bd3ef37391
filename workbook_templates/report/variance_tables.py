"""The plan-vs-actual tables of a hand-off given actuals (``report --actuals``).

Each budget run's plan months (its P50 schedule, to the cent: :func:`.tables.run_cents`,
hours and tokens spread by the same month shares) against its actual months
(:class:`workbook_templates.actuals.Actuals`), month by month up to the as-of month (the
budget runs' last month with actuals; unplanned spend never moves it), through
:func:`udfs.variance.run_variance`: the variance and its five parts in whole cents, adding
up exactly. ``variance`` (variance.csv) is the long format an FP&A tool
imports; ``variance_by_month`` the Variance sheet's table.
"""

from __future__ import annotations

import pandas as pd

from udfs import schedule
from udfs.validation import CommandError
from udfs.variance import PARTS, ActualPoint, PlanMonth, run_variance

from .forecast import forecasts
from .tables import run_cents

__all__ = ["VARIANCE_COLUMNS", "TO_DATE_COLUMNS", "BY_MONTH_COLUMNS", "UNPLANNED_COLUMNS",
           "MONTHS_COLUMNS", "plan_months", "codes_of", "run_spans", "variance_tables",
           "UNALLOCATED", "actuals_sentence"]  # fmt: skip

#: variance.csv: one amount per run, month, scenario and account.
VARIANCE_COLUMNS = ["run_code", "month", "scenario", "account", "amount_usd"]
#: The Variance sheet's table: one row per run and month up to the as-of month.
BY_MONTH_COLUMNS = ["run_code", "scenario", "month", "plan_accelerator_hours",
                    "actual_accelerator_hours", "budget_usd", "actual_usd", "variance_usd",
                    *(f"{p}_usd" for p in PARTS)]  # fmt: skip
#: The Variance sheet's first table: one row per run, to date.
TO_DATE_COLUMNS = ["run_code", "scenario", "plan_accelerator_hours", "actual_accelerator_hours",
                   "budget_usd", "actual_usd", "variance_usd",
                   *(f"{p}_usd" for p in PARTS)]  # fmt: skip
#: The Variance sheet's unplanned spend: rows of run codes no plan in the budget has.
UNPLANNED_COLUMNS = ["run_code", "month", "actual_accelerator_hours", "actual_usd", "source"]
#: The Variance sheet's chart table: every budget run together, by month.
MONTHS_COLUMNS = ["month", "budget_usd", "actual_usd", "forecast_usd"]
#: The run code variance.csv gives spend no run tag claims.
UNALLOCATED = "(unallocated)"


def plan_months(r):
    """The plan side of run ``r``: its P50 schedule's months as :class:`PlanMonth` (hours and
    tokens spread by the month's share, cost the month's P50 in whole cents)."""
    hours, tokens = float(r.outputs["accelerator_hours"]), float(r.arguments["training_tokens"])
    return [PlanMonth(m.month, hours * m.share, m.total_p50, tokens * m.share)
            for m in run_cents(r).months if m.month is not None]  # fmt: skip


def codes_of(runs):
    """{run code: run} of the budget runs; two runs with one code are refused."""
    out = {}
    for r in runs:
        code, derived = r.run_code, r.run_code_derived
        if code in out:
            other = out[code].scenario
            how = " (derived from the team and scenario name; type a Run code)" if derived else ""
            raise CommandError(
                f"--actuals: run code {code} is the code of two budget runs ({other.path} column "
                f"{other.column} and {r.scenario.path} column {r.scenario.column}){how}"
            )
        out[code] = r
    return out


def run_spans(runs_by_code):
    """{run code: (first month, last month)} of the P90 schedule, (None, None) unscheduled."""
    out = {}
    for code, r in runs_by_code.items():
        months = [m.month for m in run_cents(r).months if m.month is not None]
        out[code] = (min(months), max(months)) if months else (None, None)
    return out


def _usd(cents):
    return schedule.usd(int(cents))


def _long_rows(code, plan, actual, variance, ahead):
    """variance.csv's rows of one run; ``ahead`` its re-forecast's months (:mod:`.forecast`:
    the actual months, then the rest of the run at its own pace, P50)."""
    rows = [{"run_code": code, "month": p.month, "scenario": "budget", "account": "total",
             "amount_usd": p.cost_cents} for p in plan]  # fmt: skip
    by_month = {a.month: a.cost_cents for a in actual}
    rows += [{"run_code": code, "month": m, "scenario": "actual", "account": "total",
              "amount_usd": c} for m, c in sorted(by_month.items())]  # fmt: skip
    rows += [{"run_code": code, "month": m, "scenario": "forecast", "account": "total",
              "amount_usd": cents["p50"]}
             for m, _, cents in ahead.months if m is not None]  # fmt: skip
    rows += [{"run_code": code, "month": v.month, "scenario": "variance", "account": part,
              "amount_usd": v.parts[part]} for v in variance for part in PARTS]  # fmt: skip
    return rows


def _months(long, as_of):
    """The chart's table: budget (the P50 plan), actual and forecast (P50) of every budget
    run together, by month (whole cents, from variance.csv's rows of the budget runs); the
    actual is blank after the as-of month (the budget runs' last month with actuals)."""
    sums = {}
    for row in long:
        if row["account"] == "total" and row["month"] is not None:
            month = sums.setdefault(row["month"], dict.fromkeys(MONTHS_COLUMNS[1:], 0))
            month[f"{row['scenario']}_usd"] += row["amount_usd"]
    return [{"month": m, **v, "actual_usd": v["actual_usd"] if m <= as_of else None}
            for m, v in sorted(sums.items())]  # fmt: skip


def variance_tables(c, plans=None):
    """{name: DataFrame} of the plan-vs-actual tables of ``c`` (``c.actuals`` set), and
    ``c.variance_totals`` (whole cents). ``plans``: run code -> list of PlanMonth, the
    baseline (default: this hand-off's own P50 plan, :func:`plan_months`)."""
    a = c.actuals
    runs = codes_of(c.budget_runs)
    plans = plans or {code: plan_months(r) for code, r in runs.items()}
    by_run, ahead = a.by_run(), forecasts(c)
    # the as-of month: the budget runs' latest; unplanned spend never moves it
    as_of = max((m.month for m in a.months), default=None)
    wide, long, to_date = [], [], []
    totals = dict.fromkeys(("budget", "actual", "variance", *PARTS), 0)
    for code, r in runs.items():
        if as_of is None:
            break
        actual = [ActualPoint(m.month, m.accelerator_hours, m.cost_cents, m.tokens_processed,
                              m.status) for m in by_run.get(code, [])]  # fmt: skip
        variance = run_variance(plans[code], actual, as_of)
        long += _long_rows(code, plans[code], actual, variance, ahead[code])
        run = {"run_code": code, "scenario": r.scenario.name,
               **dict.fromkeys(TO_DATE_COLUMNS[2:], 0)}  # fmt: skip
        to_date.append(run)
        for v in variance:
            run["plan_accelerator_hours"] += v.plan_hours
            run["actual_accelerator_hours"] += v.actual_hours
            run["budget_usd"] += v.plan_cents
            run["actual_usd"] += v.actual_cents
            run["variance_usd"] += v.variance_cents
            for p in PARTS:
                run[f"{p}_usd"] += v.parts[p]
            wide.append({"run_code": code, "scenario": r.scenario.name, "month": v.month,
                         "plan_accelerator_hours": v.plan_hours,
                         "actual_accelerator_hours": v.actual_hours, "budget_usd": v.plan_cents,
                         "actual_usd": v.actual_cents, "variance_usd": v.variance_cents,
                         **{f"{p}_usd": v.parts[p] for p in PARTS}})  # fmt: skip
    for key in totals:  # the runs' sums: budget, actual, variance and the parts
        totals[key] = sum(run[f"{key}_usd"] for run in to_date)
    months_rows = _months(long, as_of) if as_of is not None else []
    unplanned = [{"run_code": m.run_code, "month": m.month,
                  "actual_accelerator_hours": m.accelerator_hours, "actual_usd": m.cost_cents,
                  "source": m.source}
                 for m in sorted(a.unplanned, key=lambda m: (m.run_code, m.month))]  # fmt: skip
    long += [{"run_code": u["run_code"], "month": u["month"], "scenario": "actual",
              "account": "unplanned", "amount_usd": u["actual_usd"]}
             for u in unplanned]  # fmt: skip
    if a.unallocated_cents:
        long.append({"run_code": UNALLOCATED, "month": as_of or a.unallocated_month,
                     "scenario": "actual",
                     "account": "unallocated", "amount_usd": a.unallocated_cents})  # fmt: skip
    totals["unplanned"] = sum(u["actual_usd"] for u in unplanned)
    totals["unallocated"] = a.unallocated_cents
    if a.unallocated_cents:  # the sheet lists it below the unplanned run codes
        unplanned.append({"run_code": UNALLOCATED, "month": None, "actual_accelerator_hours": 0.0,
                          "actual_usd": a.unallocated_cents,
                          "source": "FOCUS rows without a run tag (unused commitments, credits, "
                                    "tax, untagged resources)"})  # fmt: skip
    totals["as_of"] = as_of
    c.variance_totals = totals
    return {"variance_months": _dollars(pd.DataFrame(months_rows, columns=MONTHS_COLUMNS),
                                        MONTHS_COLUMNS[1:]),
            "variance": _dollars(pd.DataFrame(long, columns=VARIANCE_COLUMNS), ["amount_usd"]),
            "variance_to_date": _dollars(pd.DataFrame(to_date, columns=TO_DATE_COLUMNS),
                                         TO_DATE_COLUMNS[4:]),
            "variance_by_month": _dollars(pd.DataFrame(wide, columns=BY_MONTH_COLUMNS),
                                          BY_MONTH_COLUMNS[5:]),
            "unplanned": _dollars(pd.DataFrame(unplanned, columns=UNPLANNED_COLUMNS),
                                  ["actual_usd"])}  # fmt: skip


def actuals_sentence(t, money, tail=""):
    """The one sentence on the actuals, the terminal's line and page one's: spend to date
    against the plan, the variance's parts, the unplanned and the unallocated spend.

    ``t``: the variance totals (``c.variance_totals``, whole cents); ``money``: how the face
    writes US$ (a float to text); ``tail``: what follows a sentence that names a figure (page
    one: where to look).

    >>> t = dict(as_of=None, actual=0, budget=0, variance=0, unplanned=0, unallocated=-500,
    ...          **dict.fromkeys(PARTS, 0))
    >>> actuals_sentence(t, "${:,.0f}".format)
    "Actuals: no budget run's month of spend in the files given; unallocated $-5 (no run tag)."
    """

    def m(key):
        return money(schedule.usd(t[key]))

    if t["as_of"] is None:  # unplanned spend keeps its own months: no budget run's
        said = [
            f"unplanned spend {m('unplanned')} on run codes no budget run has"
            if t["unplanned"]
            else "",
            f"unallocated {m('unallocated')} (no run tag)" if t["unallocated"] else "",
        ]
        said = "; ".join(s for s in said if s)  # fmt: skip
        head = "Actuals: no budget run's month of spend in the files given"
        return f"{head}; {said}.{tail}" if said else f"{head}."
    parts = ", ".join(f"{p} {m(p)}" for p in PARTS)
    return (
        f"Actuals to {t['as_of']:%b %Y}: {m('actual')} spent against {m('budget')} planned to "
        f"date, variance {m('variance')} ({parts}); unplanned spend {m('unplanned')} on run "
        f"codes no budget run has; unallocated {m('unallocated')} (no run tag).{tail}"
    )


def _dollars(frame, columns):
    for col in columns:
        frame[col] = pd.Series(
            [None if v is None or v != v else _usd(v) for v in frame[col]],
            index=frame.index,
            dtype=float,
        )
    return frame
