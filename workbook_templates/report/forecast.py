"""Plan vs actual, looking forward: each budget run's estimate at completion, and the finished
runs that teach the model.

With actuals (``Consolidation.actuals``, an :class:`workbook_templates.actuals.Actuals`), each
budget run is matched to its actual months by its run code
(:func:`workbook_templates.run_codes.run_code_of`) and re-forecast by
:func:`udfs.forecast.forecast_run`: its actual months are locked, the rest follows the
forecast (:func:`udfs.forecast.forecast_months`), P10 / P50 / P90 of the remaining part only.
What is left of a running run is priced account by account (:func:`_prices_today`,
:func:`_other_left`): the compute at the latest month's compute price per hour (its spend
less its electricity and the plan's other costs of that month), the electricity at the
actuals' own price per hour where a month gives ``electricity_usd``, else the plan's; the
other costs are the plan's other costs of the months after the last actual month, on those
months, whatever the run's pace. A run without actuals has not started: its forecast is its
budget (P50 and P90 months the budget's, to the cent; P10 the plan's). The tables (whole
cents until the last step, then US$):

- ``forecast``: one row per run and month, ``fpa_scenario`` ``actual`` (a locked month: P10 =
  P50 = P90 = the actual spend) or ``forecast``; a run's rows add up to its EAC at each
  quantile, to the cent;
- ``forecast_runs``: one row per budget run: progress, the hours per token (the plan's, the
  run's own, pooled), today's price, budget, actual to date, EAC P10 / P50 / P90, variance;
- ``forecast_status`` and ``forecast_years``: Budget, Actual to date, Forecast at completion
  (P50) and Variance (forecast - budget) by budget status and by fiscal year: page 1's block.

A completed run (its latest actual month's status) with its plan's parameters, accelerator
and count, the tokens it processed (the plan's when a month leaves them blank) and its actual
accelerator-hours is an own run of its team (:func:`own_run_rows`): ``report
--write-own-runs FILE`` writes them in the format ``--own-runs`` reads. A failed run is
listed on the Checks and never written.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math

import pandas as pd

from udfs import forecast, own_runs, schedule
from udfs.numbers import parse_number
from udfs.validation import CommandError

from ..actuals import MAX_LINES_SHOWN
from .tables import STATUS_ORDER, UNSCHEDULED, fiscal_year_of, run_cents

__all__ = ["FORECAST_TABLES", "TABLE_COLUMNS", "add_forecast", "own_run_rows", "own_runs_text"]

#: The tables (and CSV files) a hand-off with actuals adds.
FORECAST_TABLES = ("forecast", "forecast_runs", "forecast_status", "forecast_years")
_KEY = ["run_code", "scenario", "budget_status", "run_status"]
_BLOCK = ["budget_usd", "actual_to_date_usd", "eac_usd", "variance_usd"]
TABLE_COLUMNS = {
    "forecast": [*_KEY, "month", "fiscal_year", "fpa_scenario", "p10_usd", "p50_usd",
                 "p90_usd"],
    "forecast_runs": [*_KEY, "fraction_done", "tokens_processed", "accelerator_hours_to_date",
                      "plan_hours_per_token", "observed_hours_per_token",
                      "pooled_hours_per_token", "pull", "sigma_remaining",
                      "usd_per_accelerator_hour_today", "budget_usd", "actual_to_date_usd",
                      "eac_usd_p10", "eac_usd", "eac_usd_p90", "variance_usd"],
    "forecast_status": ["budget_status", "runs", *_BLOCK],
    "forecast_years": ["fiscal_year", *_BLOCK],
}  # fmt: skip


def run_status(months):
    """A run's state from its actual months: the latest status given, else running; "not
    started" without any month."""
    if not months:
        return "not started"
    given = [m.status for m in months if m.status]
    return given[-1] if given else "running"


def _plan_per_hour(r, output):
    """The plan's US$ per accelerator-hour of one output (``compute_cost_usd``,
    ``electricity_cost_usd``): 0 when it is unpriced (a rental price that includes the
    power has no electricity)."""
    value, hours = float(r.outputs[output]), float(r.outputs["accelerator_hours"])
    return value / hours if math.isfinite(value) and math.isfinite(hours) and hours > 0 else 0.0


def _prices_today(r, months):
    """(compute, electricity) US$ per accelerator-hour of the hours left to run.

    Electricity: the latest month with hours, its ``electricity_usd`` / its hours when the
    actuals give it (0 or more), else the plan's (kWh per accelerator-hour x US$ per kWh).
    Compute: that
    month's spend less its electricity and the plan's other costs of that month, per hour;
    the plan's price when no month has hours or that leaves nothing (a refund month)."""
    compute = _plan_per_hour(r, "compute_cost_usd")
    power = _plan_per_hour(r, "electricity_cost_usd")
    other = {m.month: m.p50["other"] for m in run_cents(r).months}
    for m in reversed(months):
        hours = m.accelerator_hours
        if hours > 0:
            if m.electricity_cents is not None and m.electricity_cents >= 0:
                power = m.electricity_cents / 100 / hours
            rest = (m.cost_cents - other.get(m.month, 0)) / 100 - power * hours
            if rest > 0:
                compute = rest / hours
            break
    return compute, power


def _other_left(r, months):
    """[(month, cents)] of the plan's other costs after the last actual month: the other
    costs not yet spent (all of them without actuals), on the plan's own months."""
    last = months[-1].month if months else None
    return [
        (m.month, m.p50["other"])
        for m in run_cents(r).months
        if m.p50["other"] and (last is None or (m.month is not None and m.month > last))
    ]


def _tokens_done(months):
    """Tokens processed to date: their sum when every month gives them, else None."""
    tokens = [m.tokens_processed for m in months]
    return None if not tokens or any(t is None for t in tokens) else float(sum(tokens))


def _next_month(day):
    return (day.replace(day=28) + _dt.timedelta(days=4)).replace(day=1)


class RunForecast:
    """One budget run's forecast in whole cents: ``months`` [(month, kind, {q: cents})],
    ``eac`` {q: cents}, ``actual`` and ``budget`` (cents) and the maths (``f``)."""

    def __init__(self, r, months):
        self.run, self.actual_months = r, months
        self.code = r.run_code
        self.status = run_status(months)
        self.budget = run_cents(r).total_p50
        self.actual = sum(m.cost_cents for m in months)
        out, kw = r.outputs, r.arguments
        compute, power = _prices_today(r, months)
        finished = self.status in forecast.FINISHED
        self.other_left = [] if finished else _other_left(r, months)
        self.f = forecast.forecast_run(
            plan_tokens=float(kw["training_tokens"]), plan_hours=float(out["accelerator_hours"]),
            sigma=float(r.resolved.throughput_sigma), tokens_done=_tokens_done(months),
            hours_done=float(sum(m.accelerator_hours for m in months)),
            actual_usd=schedule.usd(self.actual), usd_per_hour=compute,
            status=self.status if finished else "running",
            price_sigma=float(r.resolved.price_sigma), electricity_usd_per_hour=power,
            other_usd=schedule.usd(sum(c for _, c in self.other_left)))  # fmt: skip
        self.eac = forecast.eac_cents(self.actual, self.f.remaining_usd)
        self.months = [(m.month, "actual", dict.fromkeys(forecast.QUANTILES, m.cost_cents))
                       for m in months]  # fmt: skip
        self.months += self._forecast_months(r, out)

    def _forecast_months(self, r, out):
        other = sum(c for _, c in self.other_left)
        left = {q: self.eac[q] - self.actual - other for q in forecast.QUANTILES}
        per_day = float(out["accelerator_hours"]) / float(out["wall_clock_days"])
        if self.actual_months:
            # the hours' cost at the run's pace; the other costs left on the plan's months
            start = _next_month(self.actual_months[-1].month)
            rows = forecast.forecast_months(start, per_day, self.f.remaining_hours_q, left)
            by_month = dict(rows)
            for m, c in self.other_left:
                row = by_month.setdefault(m, dict.fromkeys(forecast.QUANTILES, 0))
                for q in forecast.QUANTILES:
                    row[q] += c
            return [(m, "forecast", by_month[m]) for m in sorted(by_month, key=_month_key)]
        # not started: the budget, to the cent: its P50 and P90 months, P10 the plan's
        planned = run_cents(r)
        self.eac["p50"], self.eac["p90"] = self.budget, planned.total_p90
        low = float(r.ranges["total_cost_usd"][0])
        if math.isfinite(low):
            self.eac["p10"] = schedule.to_cents(low)
        self.eac["p10"] = min(self.eac["p10"], self.budget)
        hours = {"p10": self.f.remaining_hours_q["p10"]}
        ahead = forecast.forecast_months(r.start, per_day, hours, {"p10": self.eac["p10"]})
        by_month = {m: {"p10": 0, "p50": 0, "p90": 0, **c} for m, c in ahead}
        for m in planned.months:
            row = by_month.setdefault(m.month, dict.fromkeys(forecast.QUANTILES, 0))
            row["p50"], row["p90"] = m.total_p50, m.total_p90
        return [(m, "forecast", by_month[m]) for m in sorted(by_month, key=_month_key)]


def _month_key(month):
    return _dt.date.min if month is None else month


def forecasts(c):
    """{run code: :class:`RunForecast`} of the budget runs (the first run of a code)."""
    actuals = getattr(c, "actuals", None)
    by_run = actuals.by_run() if actuals is not None else {}
    out = {}
    for r in sorted(c.budget_runs, key=lambda r: STATUS_ORDER.index(r.status)):
        code = r.run_code
        if code not in out:
            out[code] = RunForecast(r, by_run.get(code, []))
    return out


def _key(rf):
    r = rf.run
    return {"run_code": rf.code, "scenario": r.scenario.name,
            "budget_status": r.status, "run_status": rf.status}  # fmt: skip


def _usd(cents):
    return schedule.usd(int(cents))


def _run_row(rf):
    f, months = rf.f, rf.actual_months
    return {
        **_key(rf), "fraction_done": f.fraction_done,
        "tokens_processed": _tokens_done(months) if months else None,
        "accelerator_hours_to_date": float(sum(m.accelerator_hours for m in months)),
        "plan_hours_per_token": f.prior_hours_per_token,
        "observed_hours_per_token": f.observed_hours_per_token,
        "pooled_hours_per_token": f.pooled_hours_per_token, "pull": f.pull,
        "sigma_remaining": f.sigma_remaining,
        "usd_per_accelerator_hour_today": f.usd_per_hour + f.electricity_usd_per_hour,
        "budget_usd": _usd(rf.budget), "actual_to_date_usd": _usd(rf.actual),
        "eac_usd_p10": _usd(rf.eac["p10"]), "eac_usd": _usd(rf.eac["p50"]),
        "eac_usd_p90": _usd(rf.eac["p90"]), "variance_usd": _usd(rf.eac["p50"] - rf.budget),
    }  # fmt: skip


def _month_rows(rf, start):
    rows = []
    for month, kind, cents in rf.months:
        fy = fiscal_year_of(month, start)[0] if month else UNSCHEDULED
        rows.append({**_key(rf), "month": month, "fiscal_year": fy, "fpa_scenario": kind,
                     **{f"{q}_usd": _usd(cents[q]) for q in forecast.QUANTILES}})  # fmt: skip
    return rows


def _block(rows):
    """Budget, actual, EAC, variance (US$) of [(budget, actual, eac)] cents."""
    budget, actual, eac = (sum(x[i] for x in rows) for i in range(3))
    return {"budget_usd": _usd(budget), "actual_to_date_usd": _usd(actual),
            "eac_usd": _usd(eac), "variance_usd": _usd(eac - budget)}  # fmt: skip


def _by_status(fcs):
    rows = []
    for status in STATUS_ORDER:
        part = [rf for rf in fcs if rf.run.status == status]
        if part or status != STATUS_ORDER[-1]:
            rows.append(
                {
                    "budget_status": status,
                    "runs": len(part),
                    **_block([(rf.budget, rf.actual, rf.eac["p50"]) for rf in part]),
                }
            )
    return pd.DataFrame(rows, columns=TABLE_COLUMNS["forecast_status"])


def _by_year(fcs, start):
    """Budget (the P50 schedule), actual and EAC months (P50) by fiscal year; the runs
    without a start date and without actuals in a last Unscheduled row."""
    sums = {}

    def add(month, i, cents):
        fy = fiscal_year_of(month, start) if month else (UNSCHEDULED, _dt.date.max)
        sums.setdefault(fy, [0, 0, 0])[i] += cents

    for rf in fcs:
        for m in run_cents(rf.run).months:
            add(m.month, 0, m.total_p50)
        for month, kind, cents in rf.months:
            if kind == "actual":
                add(month, 1, cents["p50"])
            add(month, 2, cents["p50"])
    rows = [{"fiscal_year": fy[0], **_block([tuple(v)])} for fy, v in
            sorted(sums.items(), key=lambda kv: kv[0][1])]  # fmt: skip
    return pd.DataFrame(rows, columns=TABLE_COLUMNS["forecast_years"])


def forecast_tables(c):
    """The tables of :data:`FORECAST_TABLES` of a consolidation with actuals."""
    fcs = list(forecasts(c).values())
    start = c.fiscal_year_start
    return {
        "forecast": pd.DataFrame([row for rf in fcs for row in _month_rows(rf, start)],
                                 columns=TABLE_COLUMNS["forecast"]),
        "forecast_runs": pd.DataFrame([_run_row(rf) for rf in fcs],
                                      columns=TABLE_COLUMNS["forecast_runs"]),
        "forecast_status": _by_status(fcs),
        "forecast_years": _by_year(fcs, start),
    }  # fmt: skip


def _actual_status(c):
    """{run code: (Run, its actual months, status)} of every run with actuals."""
    by_run = c.actuals.by_run()
    out = {}
    for r in c.runs:
        code = r.run_code
        if code in by_run and code not in out:
            out[code] = (r, by_run[code], run_status(by_run[code]))
    return out


def own_run_rows(c):
    """(rows, skipped): the completed runs as own-runs rows ({column: text}, the columns of
    :data:`udfs.own_runs.COLUMNS`), each checked by the own-runs reader's rules, and
    [(run code, why)] of the completed runs whose figures the reader would refuse."""
    rows, skipped = [], []
    for code, (r, months, status) in _actual_status(c).items():
        if status != "completed":
            continue
        kw = r.arguments
        row = {"name": code, "organisation": str(r.scenario.inputs.get("owner") or "").strip(),
               "active_params": kw.get("active_params", kw["total_params"]),
               "total_params": kw["total_params"],
               "tokens": _tokens_done(months) or kw["training_tokens"],
               "accelerator": r.scenario.inputs.get("accelerator_name"),
               "accelerators": kw["accelerators"],
               "accelerator_hours": float(sum(m.accelerator_hours for m in months))}  # fmt: skip
        row = {k: v if isinstance(v, str) else repr(float(v)) if v is not None else ""
               for k, v in row.items()}  # fmt: skip
        try:
            own_runs.parse(_csv_text([row]), code, parse_number)
        except CommandError as err:
            skipped.append((code, str(err).split(": ", 1)[-1]))
            continue
        rows.append(row)
    return rows, skipped


def _csv_text(rows):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=own_runs.COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def own_runs_text(c, earlier=None):
    """The own-runs file ``report --write-own-runs`` writes: the runs of ``earlier`` (the
    :class:`udfs.own_runs.OwnRuns` of ``--own-runs``, kept first) and the completed runs
    not already in it by name; CommandError (one line) when they are not one team's."""
    rows, _ = own_run_rows(c)
    kept = []
    if earlier is not None:
        for rec in earlier.records():
            kept.append({k: rec[k] if isinstance(rec[k], str) else repr(float(rec[k]))
                         for k in own_runs.COLUMNS})  # fmt: skip
    names = {own_runs.name_key(k["name"]) for k in kept}
    rows = kept + [r for r in rows if own_runs.name_key(r["name"]) not in names]
    teams = list(dict.fromkeys(r["organisation"] for r in rows if r["organisation"]))
    if len(teams) > 1:
        raise CommandError(
            f"--write-own-runs: the completed runs belong to {len(teams)} teams "
            f"({', '.join(repr(t) for t in teams[:4])}): an own-runs file holds one "
            "organisation's runs; report one team's planners at a time; nothing written"
        )
    if not rows:
        raise CommandError("--write-own-runs: no completed run in the actuals (a run is "
                           "completed when its latest month's status is completed); "
                           "nothing written")  # fmt: skip
    return _csv_text(rows)


def _check_rows(c):
    """Checks rows about the runs in the actuals: failed runs (WARN: never used for
    calibration), completed runs (INFO: own runs), and completed runs whose figures the
    own-runs reader would refuse (WARN)."""
    rows = []
    _, skipped = own_run_rows(c)
    skipped = dict(skipped)
    for code, (r, months, status) in _actual_status(c).items():
        name = r.scenario.name
        if status == "failed":
            rows.append(("Runs in the actuals", "WARN",
                         f"run {code} (scenario {name!r}) failed: its actual spend "
                         f"${schedule.usd(sum(m.cost_cents for m in months)):,.2f} is in the "
                         "forecast; never used as an own run", r.scenario.path))  # fmt: skip
        elif status == "completed" and code in skipped:
            rows.append(("Runs in the actuals", "WARN",
                         f"run {code} (scenario {name!r}) completed but is not an own run: "
                         f"{skipped[code]}", r.scenario.path))  # fmt: skip
        elif status == "completed":
            rows.append(("Runs in the actuals", "INFO",
                         f"run {code} (scenario {name!r}) completed: an own run of "
                         f"{r.scenario.inputs.get('owner') or 'its team'!s} "
                         "(--write-own-runs)", r.scenario.path))  # fmt: skip
    for path, text in c.actuals.warnings[:MAX_LINES_SHOWN]:
        rows.append(("Actuals", "WARN", text, path))
    more = len(c.actuals.warnings) - MAX_LINES_SHOWN
    if more > 0:
        rows.append(("Actuals", "WARN", f"... and {more:,} more warning(s) on the actuals",
                     "--actuals"))  # fmt: skip
    return [{"check": a, "status": b, "file": str(f), "detail": d} for a, b, d, f in rows]


def add_forecast(c):
    """Add the forecast tables and the Checks rows about the runs in the actuals to ``c``
    (nothing without actuals: ``Consolidation.actuals`` None or absent)."""
    if getattr(c, "actuals", None) is None:
        return c
    c.tables.update(forecast_tables(c))
    extra = _check_rows(c)
    if extra:
        checks = c.tables["checks"]
        c.tables["checks"] = pd.concat([checks, pd.DataFrame(extra, columns=checks.columns)],
                                       ignore_index=True)  # fmt: skip
    return c
