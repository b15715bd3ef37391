"""The hand-off's tables (pandas DataFrames) from the recomputed runs; no file is written here.

Only runs in the budget (status Approved or Proposed, or an older planner's "status unknown")
reach the runs, costs, ranges, budget, period and totals tables; Reference and Excluded runs
are in ``not_in_budget`` only, never summed. P50 is the point estimate; P90 and the
contingency (P90 - P50) come from :func:`udfs.ranges.estimate_ranges` per run and are spread
over months like the point estimate (the P90 of a sum is taken as the sum of the P90s: every
run's error is assumed fully correlated, the cautious reading).
"""

from __future__ import annotations

import math

import pandas as pd

from udfs import engine, plan
from udfs.quantities import PLAN_INPUTS, RANGE_QUANTITIES

from ..reader import DEFAULT_MAX_BYTES
from .checks import checks_table
from .consolidate import (
    DEFAULT_TOLERANCE,
    INPUT_NAMES,
    OUTPUT_NAMES,
    UNKNOWN_STATUS,
    Q,
    consolidate_files,
    shown,
)
from .sources import sources_table

__all__ = [
    "consolidate",
    "build_tables",
    "with_unscheduled",
    "TABLE_COLUMNS",
    "STATUS_ORDER",
    "MONEY",
    "UNSCHEDULED",
]

#: The order budget runs are listed in (and subtotalled by).
STATUS_ORDER = ("Approved", "Proposed", UNKNOWN_STATUS)
MONEY = ("compute_cost_usd", "electricity_cost_usd", "other_costs_usd", "total_cost_usd")
#: The label of the period tables' row for the budget runs without a start date.
UNSCHEDULED = "Unscheduled (no start date)"
_KEY = ["file", "column", "scenario", "run_id"]
#: The accounts of the long-format export (``fpa``): where each dollar goes.
ACCOUNTS = (("compute", "compute_cost_usd"), ("electricity", "electricity_cost_usd"),
            ("other", "other_costs_usd"))  # fmt: skip
#: The label of a run approved without a reference and a date.
NO_REFERENCE = "Approved (no reference)"

TABLE_COLUMNS = {
    "runs": [*_KEY, "budget_status",
             *[n for n in INPUT_NAMES if n not in ("scenario_name", "budget_status")],
             *OUTPUT_NAMES, "throughput_source", "defaults_used", "scheduled"],
    "costs": [*_KEY, "budget_status", "accelerator_hours", "usd_per_accelerator_hour",
              "compute_cost_usd", "electricity_kwh", "usd_per_kwh", "electricity_cost_usd",
              "other_costs_usd", "total_cost_usd", "compute_cost_share",
              "electricity_cost_share", "other_costs_share", "co2_tonnes"],
    "ranges": [*_KEY, "budget_status", "throughput_source", "throughput_sigma", "price_sigma",
               *[f"{q}{k}" for q in RANGE_QUANTITIES for k in ("_p10", "", "_p90")],
               "contingency_usd"],
    "budget": [*_KEY, "budget_status", "approval", "owner", "start_month", "end_month",
               "accelerator_hours", "compute_cost_usd", "electricity_cost_usd",
               "total_cost_usd", "total_cost_usd_p90", "contingency_usd"],
    "status_totals": ["budget_status", "runs", "accelerator_hours", "compute_cost_usd",
                      "electricity_cost_usd", "total_cost_usd", "total_cost_usd_p90",
                      "contingency_usd"],
    "assumptions": [*_KEY, "budget_status", "usd_per_accelerator_hour", "throughput_source",
                    "effective_tflops", "mfu", "pue", "usd_per_kwh"],
    "not_in_budget": [*_KEY, "budget_status", "owner", "accelerator_hours", "total_cost_usd"],
    "blank_inputs": [*_KEY, "input_label", "input", "value_used", "unit", "why"],
    "monthly_by_run": [*_KEY, "budget_status", "month", "share", *MONEY,
                       "total_cost_usd_p90", "contingency_usd"],
    "monthly": ["month", *MONEY, "cumulative_total_cost_usd", "total_cost_usd_p90",
                "contingency_usd", "runs"],
    "quarterly": ["fiscal_year", "quarter", "first_month", "total_cost_usd",
                  "cumulative_total_cost_usd", "total_cost_usd_p90", "contingency_usd"],
    "fiscal_years": ["fiscal_year", "first_month", "total_cost_usd",
                     "cumulative_total_cost_usd", "total_cost_usd_p90", "contingency_usd"],
    "fpa": ["run_id", "month", "fiscal_year", "quarter", "status", "account", "p50_usd",
            "p90_usd"],
    "mismatches": ["file", "sheet", "cell", "name", "scenario", "cached_value", "engine_value",
                   "relative_difference", "cell_holds"],
    "files": ["file", "size_bytes", "sha256", "planner_template_version", "scenarios_read",
              "budget_status_row", "cached_values"],
}  # fmt: skip


def num(value):
    """A float, or None for NaN (a blank figure)."""
    value = float(value)
    return None if math.isnan(value) else value


def run_id(r):
    """A stable id of a run: from its name, owner and inputs, not its file path or column
    letter (the same plan in another file or column keeps it): ``R-`` and 10 hex digits."""
    import hashlib

    sc = r.scenario
    text = repr(sorted((k, repr(v)) for k, v in sc.inputs.items()))
    return "R-" + hashlib.sha256(f"{sc.name}|{text}".encode()).hexdigest()[:10]


def _key(r):
    sc = r.scenario
    return {"run_id": run_id(r), "file": str(sc.path), "column": sc.column, "scenario": sc.name}


def approval(r):
    """The approval as the hand-off shows it: the reference and date, else "Approved (no
    reference)"; blank for a run that is not Approved."""
    if r.status != "Approved":
        return None
    ref, day = r.scenario.inputs.get("approval_ref"), r.scenario.inputs.get("approval_date")
    if ref in (None, "") or day in (None, ""):
        return NO_REFERENCE
    day = day.date() if hasattr(day, "date") else day
    return f"{ref} ({day:%Y-%m-%d})" if hasattr(day, "strftime") else f"{ref} ({day})"


def _budget_sorted(c):
    order = {s: i for i, s in enumerate(STATUS_ORDER)}
    return sorted(c.budget_runs, key=lambda r: order[r.status])


def _run_row(r):
    sc, out, kw = r.scenario, r.outputs, r.arguments
    row = {**_key(r), "budget_status": r.status}
    for q in PLAN_INPUTS:
        if q.name not in ("scenario_name", "budget_status"):
            row[q.name] = sc.inputs.get(q.name)
    # The figures the engine used where the planner cell was blank.
    row["active_params"] = kw.get("active_params", kw["total_params"])
    for name in ("peak_tflops", "mfu", "goodput", *plan.PASS_THROUGH):
        if name in kw:
            row[name] = kw[name]
    for n in r.notes:  # every other blank input: the value used (throughput uncertainty...)
        if n.name in row and row[n.name] is None:
            row[n.name] = n.value
    for name in OUTPUT_NAMES:
        row[name] = num(out[name])
    row["throughput_source"] = r.resolved.throughput_source
    row["defaults_used"] = "; ".join(n.text() for n in r.notes)
    row["scheduled"] = "yes" if r.start else "no: no start date"
    return row


def _cost_row(r):
    out, kw = r.outputs, r.arguments
    compute, power, total = (
        out["compute_cost_usd"],
        out["electricity_cost_usd"],
        out["total_cost_usd"],
    )
    other = float(kw.get("other_costs_usd", 0.0))
    return {
        **_key(r), "budget_status": r.status,
        "accelerator_hours": out["accelerator_hours"],
        "usd_per_accelerator_hour": kw["usd_per_accelerator_hour"],
        "compute_cost_usd": compute, "electricity_kwh": out["electricity_kwh"],
        "usd_per_kwh": kw["usd_per_kwh"], "electricity_cost_usd": power,
        "other_costs_usd": other, "total_cost_usd": total,
        "compute_cost_share": compute / total if total else None,
        "electricity_cost_share": power / total if total else None,
        "other_costs_share": other / total if total else None,
        "co2_tonnes": out["co2_tonnes"],
    }  # fmt: skip


def _range_row(r):
    row = {**_key(r), "budget_status": r.status,
           "throughput_source": r.resolved.throughput_source,
           "throughput_sigma": r.resolved.throughput_sigma,
           "price_sigma": r.resolved.price_sigma}  # fmt: skip
    for q in RANGE_QUANTITIES:
        row[f"{q}_p10"], row[f"{q}_p90"] = (num(v) for v in r.ranges[q])
        row[q] = num(r.outputs[q])
    row["contingency_usd"] = contingency(r)
    return row


def contingency(r):
    """P90 - P50 of a run's total cost."""
    return r.ranges["total_cost_usd"][1] - float(r.outputs["total_cost_usd"])


def end_date(r):
    """The last day of a scheduled run (it occupies [start, start + days))."""
    days = float(r.outputs["wall_clock_days"])
    return engine.month_shares(r.start, days)[-1][0] if r.start else None


def _budget_row(r):
    out = r.outputs
    return {
        **_key(r), "budget_status": r.status, "approval": approval(r),
        "owner": r.scenario.inputs.get("owner"),
        "start_month": r.start.replace(day=1) if r.start else None, "end_month": end_date(r),
        "accelerator_hours": out["accelerator_hours"],
        "compute_cost_usd": out["compute_cost_usd"],
        "electricity_cost_usd": out["electricity_cost_usd"],
        "total_cost_usd": out["total_cost_usd"],
        "total_cost_usd_p90": r.ranges["total_cost_usd"][1], "contingency_usd": contingency(r),
    }  # fmt: skip


def _assumption_row(r):
    kw = r.arguments
    typed = r.resolved.throughput_source == plan.THROUGHPUT_SOURCES[0]
    return {
        **_key(r), "budget_status": r.status,
        "usd_per_accelerator_hour": kw["usd_per_accelerator_hour"],
        "throughput_source": r.resolved.throughput_source,
        "effective_tflops": num(r.outputs["effective_tflops"]),
        "mfu": None if typed else kw.get("mfu"), "pue": kw["pue"], "usd_per_kwh": kw["usd_per_kwh"],
    }  # fmt: skip


def _month_rows(r):
    out = r.outputs
    other = float(r.arguments.get("other_costs_usd", 0.0))
    p90, extra = r.ranges["total_cost_usd"][1], contingency(r)
    rows = []
    for month, share in engine.month_shares(r.start, out["wall_clock_days"]):
        rows.append({
            **_key(r), "budget_status": r.status, "month": month, "share": share,
            "compute_cost_usd": out["compute_cost_usd"] * share,
            "electricity_cost_usd": out["electricity_cost_usd"] * share,
            "other_costs_usd": other * share, "total_cost_usd": out["total_cost_usd"] * share,
            "total_cost_usd_p90": p90 * share, "contingency_usd": extra * share,
        })  # fmt: skip
    return rows


def _frame(name, rows):
    return pd.DataFrame(rows, columns=TABLE_COLUMNS[name])


def _status_totals(budget):
    rows = []
    sums = ["accelerator_hours", "compute_cost_usd", "electricity_cost_usd", "total_cost_usd",
            "total_cost_usd_p90", "contingency_usd"]  # fmt: skip
    for status in STATUS_ORDER:
        part = budget[budget["budget_status"] == status]
        if len(part) or status != UNKNOWN_STATUS:
            rows.append({"budget_status": status, "runs": len(part),
                         **{k: float(part[k].sum()) for k in sums}})  # fmt: skip
    # no total row: a plain sum of the column is the total (the workbook adds it as a formula)
    return _frame("status_totals", rows)


def fiscal_year_of(month, start):
    """(label, first month) of the fiscal year holding ``month`` when years start in
    month ``start`` (1-12): "FY2026" for calendar years, else "FY2026/27" (the year it
    starts in, then the year it ends in)."""
    year = month.year if month.month >= start else month.year - 1
    first = month.replace(year=year, month=start, day=1)
    name = f"FY{year}" if start == 1 else f"FY{year}/{(year + 1) % 100:02d}"
    return name, first


def _add_months(day, months):
    n = day.year * 12 + day.month - 1 + months
    return day.replace(year=n // 12, month=n % 12 + 1, day=1)


def _periods(monthly, start):
    """(quarterly, fiscal_years) from the monthly table, by fiscal quarter and year."""
    sums = ["total_cost_usd", "total_cost_usd_p90", "contingency_usd"]
    rows = []
    for m in monthly.itertuples(index=False):
        fy, first = fiscal_year_of(m.month, start)
        q = ((m.month.month - start) % 12) // 3 + 1
        rows.append({"fiscal_year": fy, "fy_first": first, "quarter": f"{fy} Q{q}",
                     "first_month": _add_months(first, 3 * (q - 1)),
                     **{k: getattr(m, k) for k in sums}})  # fmt: skip
    # every quarter of each fiscal year touched, 0 where nothing is spent (whole years)
    for fy, first in dict.fromkeys((r["fiscal_year"], r["fy_first"]) for r in list(rows)):
        for q in range(1, 5):
            rows.append({"fiscal_year": fy, "fy_first": first, "quarter": f"{fy} Q{q}",
                         "first_month": _add_months(first, 3 * (q - 1)),
                         **dict.fromkeys(sums, 0.0)})  # fmt: skip
    frame = pd.DataFrame(rows, columns=["fiscal_year", "fy_first", "quarter", "first_month", *sums])
    frame = frame.sort_values("first_month", kind="stable")
    quarterly = frame.groupby(["fiscal_year", "quarter", "first_month"], sort=False)[sums].sum()
    quarterly = quarterly.reset_index()
    years = frame.groupby(["fiscal_year", "fy_first"], sort=False)[sums].sum().reset_index()
    years = years.rename(columns={"fy_first": "first_month"})
    for t in (quarterly, years):
        t["cumulative_total_cost_usd"] = t["total_cost_usd"].cumsum()
    return _frame("quarterly", quarterly.to_dict("records")), _frame(
        "fiscal_years", years.to_dict("records")
    )


def _monthly(by_run):
    """Every month from the first to the last, 0 where nothing is spent (continuous)."""
    if not len(by_run):
        return _frame("monthly", [])
    sums = [*MONEY, "total_cost_usd_p90", "contingency_usd"]
    monthly = by_run.groupby("month", sort=True)[sums].sum()
    monthly["runs"] = by_run.groupby("month", sort=True)["scenario"].size()
    first, last = min(monthly.index), max(monthly.index)
    months, m = [], first
    while m <= last:
        months.append(m)
        m = _add_months(m, 1)
    monthly = monthly.reindex(months, fill_value=0)
    monthly.index.name = "month"
    monthly = monthly.reset_index()
    monthly["cumulative_total_cost_usd"] = monthly["total_cost_usd"].cumsum()
    return _frame("monthly", monthly.to_dict("records"))


def _totals(c, costs, budget):
    is_scheduled = [r.start is not None for r in _budget_sorted(c)]
    scheduled = budget[is_scheduled] if len(budget) else budget
    unscheduled = budget[[not s for s in is_scheduled]] if len(budget) else budget
    by_status = {s: budget[budget["budget_status"] == s] for s in STATUS_ORDER}
    return pd.DataFrame([{
        "files": len(c.planners), "runs": len(c.budget_runs),
        "not_in_budget_runs": len(c.other_runs),
        "accelerator_hours": costs["accelerator_hours"].sum(),
        "compute_cost_usd": costs["compute_cost_usd"].sum(),
        "electricity_kwh": costs["electricity_kwh"].sum(),
        "electricity_cost_usd": costs["electricity_cost_usd"].sum(),
        "other_costs_usd": costs["other_costs_usd"].sum(),
        "total_cost_usd": costs["total_cost_usd"].sum(),
        "approved_total_cost_usd": by_status["Approved"]["total_cost_usd"].sum(),
        "proposed_total_cost_usd": by_status["Proposed"]["total_cost_usd"].sum(),
        "status_unknown_total_cost_usd": by_status[UNKNOWN_STATUS]["total_cost_usd"].sum(),
        "total_cost_usd_p90": budget["total_cost_usd_p90"].sum(),
        "contingency_usd": budget["contingency_usd"].sum(),
        "co2_tonnes": costs["co2_tonnes"].sum(),
        "scheduled_total_cost_usd": scheduled["total_cost_usd"].sum(),
        "unscheduled_total_cost_usd": unscheduled["total_cost_usd"].sum(),
    }])  # fmt: skip


def with_unscheduled(c, name):
    """The period table ``name`` (monthly, quarterly or fiscal_years) with a last row,
    :data:`UNSCHEDULED`, for the budget runs without a start date, so that the table adds
    up to the budget total (its cumulative column ends at it). The table itself (and its
    CSV file) holds scheduled months only; ``totals`` has the unscheduled total."""
    df = c.tables[name]
    runs = c.unscheduled
    if not runs:
        return df
    label_columns = {"monthly": ("month",), "quarterly": ("fiscal_year", "quarter"),
                     "fiscal_years": ("fiscal_year",)}[name]  # fmt: skip
    row = dict.fromkeys(df.columns)
    row.update(dict.fromkeys(label_columns, UNSCHEDULED))
    sums = {
        "compute_cost_usd": sum(float(r.outputs["compute_cost_usd"]) for r in runs),
        "electricity_cost_usd": sum(float(r.outputs["electricity_cost_usd"]) for r in runs),
        "other_costs_usd": sum(float(r.arguments.get("other_costs_usd", 0.0)) for r in runs),
        "total_cost_usd": sum(float(r.outputs["total_cost_usd"]) for r in runs),
        "total_cost_usd_p90": sum(r.ranges["total_cost_usd"][1] for r in runs),
        "contingency_usd": sum(contingency(r) for r in runs),
        "runs": len(runs),
    }
    row.update({k: v for k, v in sums.items() if k in df.columns})
    before = float(df["cumulative_total_cost_usd"].iloc[-1]) if len(df) else 0.0
    row["cumulative_total_cost_usd"] = before + sums["total_cost_usd"]
    return pd.DataFrame([*df.to_dict("records"), row], columns=df.columns)


def _files(c):
    rows = []
    for p in c.planners:
        status_row = "no (an older planner): status unknown" if (
            "budget_status" in p.missing_optional) else "yes"  # fmt: skip
        rows.append({
            "file": str(p.path), "size_bytes": p.size_bytes, "sha256": p.sha256,
            "planner_template_version": (None if p.template_version is None
                                         else shown(p.template_version)),  # fmt: skip
            "scenarios_read": len(p.scenarios), "budget_status_row": status_row,
            "cached_values": "yes" if p.has_cached_values else "no (never recalculated)",
        })  # fmt: skip
    return _frame("files", rows)


def build_tables(c):
    """Every table of the hand-off, by name (the CSV files' and the sheets' contents)."""
    runs = _budget_sorted(c)
    by_run = _frame("monthly_by_run", [row for r in runs if r.start for row in _month_rows(r)])
    budget = _frame("budget", [_budget_row(r) for r in runs])
    costs = _frame("costs", [_cost_row(r) for r in runs])
    monthly = _monthly(by_run)
    quarterly, years = _periods(monthly, c.fiscal_year_start)
    mismatches = _frame("mismatches", c.mismatch_rows)
    tables = {
        "runs": _frame("runs", [_run_row(r) for r in runs]),
        "costs": costs,
        "ranges": _frame("ranges", [_range_row(r) for r in runs]),
        "budget": budget,
        "status_totals": _status_totals(budget),
        "assumptions": _frame("assumptions", [_assumption_row(r) for r in runs]),
        "not_in_budget": _frame("not_in_budget", [
            {**_key(r), "budget_status": r.status, "owner": r.scenario.inputs.get("owner"),
             "accelerator_hours": r.outputs["accelerator_hours"],
             "total_cost_usd": r.outputs["total_cost_usd"]} for r in c.other_runs]),
        "blank_inputs": _frame("blank_inputs", [
            {**_key(r), "input_label": Q[n.name].label if n.name in Q else n.name,
             "input": n.name, "value_used": n.value,
             "unit": Q[n.name].unit if n.name in Q else "", "why": n.why}
            for r in runs for n in r.notes]),
        "totals": _totals(c, costs, budget),
        "monthly": monthly,
        "quarterly": quarterly,
        "fiscal_years": years,
        "monthly_by_run": by_run,
        "fpa": fpa_table(runs, c.fiscal_year_start),
        "mismatches": mismatches,
        "files": _files(c),
        "sources": sources_table(c),
    }  # fmt: skip
    tables["checks"] = checks_table(c, mismatches)
    return tables


def _cents(amounts, total):
    """``amounts`` rounded to cents so that they add up to ``total`` rounded to cents
    (largest remainders): a long-format export sums to the hand-off's figure to the cent."""
    want = round(total * 100)
    raw = [a * 100 for a in amounts]
    cents = [math.floor(x) for x in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - cents[i], reverse=True)
    for i in order[: max(0, want - sum(cents))]:
        cents[i] += 1
    return [c / 100 for c in cents]


def _fpa_lines(r, start):
    """(month, fiscal year, quarter, account, p50, p90) of one run, before rounding."""
    out, moves = r.outputs, {}
    other = float(r.arguments.get("other_costs_usd", 0.0))
    p50 = {"compute_cost_usd": float(out["compute_cost_usd"]),
           "electricity_cost_usd": float(unpriced(out["electricity_cost_usd"])),
           "other_costs_usd": other}  # fmt: skip
    p90 = {"compute_cost_usd": float(r.ranges["compute_cost_usd"][1]),
           "electricity_cost_usd": float(unpriced(r.ranges["electricity_cost_usd"][1])),
           "other_costs_usd": other}  # fmt: skip
    moves = engine.month_shares(r.start, out["wall_clock_days"]) if r.start else [(None, 1.0)]
    lines = []
    for month, share in moves:
        fy, first = fiscal_year_of(month, start) if month else ("unscheduled", None)
        q = f"{fy} Q{((month.month - start) % 12) // 3 + 1}" if month else "unscheduled"
        for account, name in ACCOUNTS:
            lines.append((month, fy, q, account, p50[name] * share, p90[name] * share))
    return lines


def unpriced(value):
    """An unpriced (NaN) figure as 0."""
    value = float(value)
    return 0.0 if math.isnan(value) else value


def fpa_table(runs, start):
    """The long-format export: one row per run, month and account (compute, electricity,
    other) with P50 and P90 in US$ to the cent; the rows add up to the hand-off's total and
    P90 to the cent (each run's to its own, within a cent). A run without a start date has
    one row per account with the month blank and the fiscal year and quarter "unscheduled"."""
    per_run = [(r, _fpa_lines(r, start)) for r in runs]
    out = []
    for key in (4, 5):  # p50, then p90
        totals = [sum(line[key] for line in lines) for _, lines in per_run]
        run_cents = _cents(totals, sum(totals))
        for (r, lines), run_total in zip(per_run, run_cents, strict=True):
            for line, value in zip(lines, _cents([x[key] for x in lines], run_total),
                                   strict=True):  # fmt: skip
                out.append((r, line, key, value))
    rows = {}
    for r, line, key, value in out:
        month, fy, q, account, _, _ = line
        row = rows.setdefault((id(r), month, account), {
            "run_id": run_id(r), "month": month, "fiscal_year": fy, "quarter": q,
            "status": r.status, "account": account})  # fmt: skip
        row["p50_usd" if key == 4 else "p90_usd"] = value
    return _frame("fpa", list(rows.values()))


def consolidate(
    paths,
    *,
    max_bytes=DEFAULT_MAX_BYTES,
    tolerance=DEFAULT_TOLERANCE,
    fiscal_year_start=1,
    own_runs=None,
    **reading,
):
    """Read, recompute, check and tabulate ``paths``: the report's pipeline up to the writing.

    :func:`~workbook_templates.report.consolidate.consolidate_files` reads and recomputes
    every file (a bad file is in ``.bad``, the caller decides whether that stops the run);
    :func:`build_tables` adds the checks and the tables. ``fiscal_year_start`` (1-12) is the
    first month of the fiscal year of the period tables; ``own_runs`` (report --own-runs)
    pulls the blank MFUs of planners without "Our runs" rows of their own; ``reading``
    (``jobs``, ``progress``) goes to ``consolidate_files``.
    """
    result = consolidate_files(
        paths,
        max_bytes=max_bytes,
        tolerance=tolerance,
        fiscal_year_start=fiscal_year_start,
        own_runs=own_runs,
        **reading,
    )
    result.tables = build_tables(result)
    return result
