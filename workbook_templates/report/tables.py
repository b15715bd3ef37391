"""The hand-off's tables (pandas DataFrames) from the recomputed runs; no file is written here.

Only runs in the budget (status Approved or Proposed, or an older planner's "status unknown")
reach the runs, costs, ranges, budget, period and totals tables; Reference and Excluded runs
are in ``not_in_budget`` only, never summed. P50 is the point estimate; P90 and the
contingency (P90 - P50) come from :func:`udfs.ranges.estimate_ranges` per run; the P90 is
spread over months as the P90 run (:func:`udfs.schedule.spend_schedule`: the P90 hours at the
run's capacity, so a slower run ends later), and the P90 of a sum is taken as the sum of the
P90s (every run's error is assumed fully correlated, the cautious reading); ``totals`` also
has the P90 if the runs were independent (:func:`independent_p90`), and each run's
contingency is split into a throughput and a price part (:func:`contingency_parts`).

Money is rounded once: every run x month x account figure to whole cents
(:func:`udfs.schedule.schedule_cents`), and every other money figure of every table (a run's
costs, P90 and contingency, a month's, quarter's or fiscal year's, a status's and the totals)
is a sum of those integers, so that every table ties to every other to the cent.
"""

from __future__ import annotations

import math

import pandas as pd

from udfs import engine, plan, ranges, schedule
from udfs.quantities import PLAN_INPUTS, PRICING_BASES, RANGE_QUANTITIES

from ..reader import DEFAULT_MAX_BYTES
from .checks import checks_table
from .consolidate import (
    APPROVAL_INCOMPLETE,
    APPROVAL_WORDS,
    DEFAULT_TOLERANCE,
    INPUT_NAMES,
    NOT_THE_PLAN,
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
    "over_approved_cents",
    "TABLE_COLUMNS",
    "STATUS_ORDER",
    "LINE_ORDER",
    "MONEY",
    "UNSCHEDULED",
]

#: The budget statuses, in order.
STATUS_ORDER = ("Approved", "Proposed", UNKNOWN_STATUS)
#: The order budget runs are listed in (and subtotalled by): a run typed Approved whose
#: approval is incomplete counts as Proposed, on a line of its own.
LINE_ORDER = ("Approved", "Proposed", APPROVAL_INCOMPLETE, UNKNOWN_STATUS)
MONEY = ("compute_cost_usd", "electricity_cost_usd", "other_costs_usd", "total_cost_usd")
#: The label of the period tables' row for the budget runs without a start date.
UNSCHEDULED = "Unscheduled (no start date)"
_KEY = ["file", "column", "scenario", "run_code"]
#: The currency of every amount of the hand-off (fpa.csv's currency column).
CURRENCY = "USD"
#: A run's contingency in two parts that add up to it to the cent (:func:`contingency_parts`).
CONTINGENCY_PARTS = ("contingency_throughput_usd", "contingency_price_usd")

TABLE_COLUMNS = {
    "runs": [*_KEY, "budget_status",
             *[n for n in INPUT_NAMES if n not in ("scenario_name", "budget_status", "run_code")],
             *OUTPUT_NAMES, "throughput_source", "defaults_used", "scheduled",
             "run_code_derived", "plan_fingerprint"],
    "costs": [*_KEY, "budget_status", "accelerator_hours", "usd_per_accelerator_hour",
              "compute_cost_usd", "electricity_kwh", "usd_per_kwh", "electricity_cost_usd",
              "other_costs_usd", "total_cost_usd", "compute_cost_share",
              "electricity_cost_share", "other_costs_share", "co2_tonnes"],
    "ranges": [*_KEY, "budget_status", "throughput_source", "throughput_sigma", "price_sigma",
               *[f"{q}{k}" for q in RANGE_QUANTITIES for k in ("_p10", "", "_p90")],
               "contingency_usd", *CONTINGENCY_PARTS],
    "budget": [*_KEY, "budget_status", "approval", "approver", "approved_amount_usd", "owner",
               "cost_centre", "start_month", "end_month", "end_month_p90",
               "accelerator_hours", "compute_cost_usd", "electricity_cost_usd",
               "total_cost_usd", "total_cost_usd_p90", "contingency_usd",
               *CONTINGENCY_PARTS, "expected_cost_usd"],
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
    "fpa": ["run_code", "month", "fiscal_year", "quarter", "status", "account", "cost_centre",
            "gl_account", "expense_class", "currency", "accelerator_hours",
            "accelerator_hours_p90", "rate", "p50_usd", "p90_usd"],
    "mismatches": ["file", "sheet", "cell", "name", "scenario", "cached_value", "engine_value",
                   "relative_difference", "cell_holds"],
    "files": ["file", "size_bytes", "sha256", "planner_template_version", "scenarios_read",
              "budget_status_row", "cached_values"],
}  # fmt: skip


def num(value):
    """A float, or None for NaN (a blank figure)."""
    value = float(value)
    return None if math.isnan(value) else value


def plan_fingerprint(r):
    """What the plan is, in 10 hex digits (``P-`` first): a hash of every input that prices the
    run (not its name, run code, status, owner or approval). It changes when the plan changes;
    the run's key is its run code (:attr:`Run.run_code`), which does not."""
    import hashlib

    inputs = r.scenario.inputs
    text = repr(sorted((k, repr(v)) for k, v in inputs.items() if k not in NOT_THE_PLAN))
    return "P-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def _key(r):
    sc = r.scenario
    return {"run_code": r.run_code, "file": str(sc.path), "column": sc.column, "scenario": sc.name}


def approval(r):
    """The approval as the hand-off shows it: the reference, date, approver and approved
    amount ("CFO-2027-01 (2027-01-04), CFO, $120.0M"), and by how much the P50 is over
    that amount when it is ("; P50 $31.5M over"); for a run typed Approved whose approval is
    incomplete, what is missing ("missing: approver, amount"); blank for a run not typed
    Approved."""
    if r.approval_missing:
        return "missing: " + ", ".join(APPROVAL_WORDS[n] for n in r.approval_missing)
    if r.status != "Approved":
        return None
    inputs = r.scenario.inputs
    ref, day = inputs.get("approval_ref"), inputs.get("approval_date")
    day = day.date() if hasattr(day, "date") else day
    text = f"{ref} ({day:%Y-%m-%d})" if hasattr(day, "strftime") else f"{ref} ({day})"
    limit = schedule.to_cents(inputs["approved_amount_usd"])
    text += f", {inputs['approver']}, {schedule.short_usd(limit, exact=True)}"
    over = over_approved_cents(r)
    return text + (f"; P50 {schedule.short_usd(over)} over" if over > 0 else "")


def over_approved_cents(r):
    """Cents of run ``r``'s P50 over its approved amount: counted in the Approved total
    though nobody approved them (0 for a run within its amount or not Approved)."""
    if r.status != "Approved" or r.approval_missing:
        return 0
    limit = schedule.to_cents(r.scenario.inputs["approved_amount_usd"])
    return max(0, run_cents(r).total_p50 - limit)


def budget_sorted(c):
    """The budget runs in the order of their budget lines (:data:`LINE_ORDER`), Approved first."""
    order = {s: i for i, s in enumerate(LINE_ORDER)}
    return sorted(c.budget_runs, key=lambda r: order[r.budget_line])


def _run_row(r):
    sc, out, kw = r.scenario, r.outputs, r.arguments
    row = {**_key(r), "budget_status": r.status}
    for q in PLAN_INPUTS:
        if q.name not in ("scenario_name", "budget_status", "run_code"):
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
    cents = run_cents(r)  # the money figures as every table has them: to the cent
    for name in ("compute_cost_usd", "total_cost_usd"):
        row[name] = cents.usd(name)
    if row["electricity_cost_usd"] is not None:
        row["electricity_cost_usd"] = cents.usd("electricity_cost_usd")
    row["throughput_source"] = r.resolved.throughput_source
    row["defaults_used"] = "; ".join(n.text() for n in r.notes)
    row["scheduled"] = "yes" if r.start else "no: no start date"
    row["run_code_derived"] = "yes" if r.run_code_derived else "no"
    row["plan_fingerprint"] = plan_fingerprint(r)
    return row


def _cost_row(r):
    out, kw, cents = r.outputs, r.arguments, run_cents(r)
    compute, total = cents.usd("compute_cost_usd"), cents.usd("total_cost_usd")
    power = cents.usd("electricity_cost_usd")
    if math.isnan(float(out["electricity_cost_usd"])):
        power = float("nan")  # unpriced: shown blank, counted as 0
    other = cents.usd("other_costs_usd")
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
    cents = run_cents(r)
    for q in RANGE_QUANTITIES:
        row[f"{q}_p10"], row[f"{q}_p90"] = (num(v) for v in r.ranges[q])
        row[q] = num(r.outputs[q])
        if q.endswith("_usd") and row[q] is not None:  # to the cent, as in every table
            row[q], row[f"{q}_p90"] = cents.usd(q), cents.usd(q, "p90")
            row[f"{q}_p10"] = schedule.usd(schedule.to_cents(row[f"{q}_p10"]))
    row["contingency_usd"] = contingency(r)
    row.update(zip(CONTINGENCY_PARTS, map(schedule.usd, contingency_parts(r)), strict=True))
    return row


def contingency_parts(r):
    """(throughput, price) parts of a run's contingency, whole cents adding up to it: the
    electricity's contingency is the throughput's; the compute cost's is split by variance
    (:func:`udfs.ranges.price_share` of the run's spreads), in whole cents
    (:func:`udfs.schedule.split_cents`)."""
    cents = run_cents(r)
    rental = cents.p90["compute"] - cents.p50["compute"]
    rest = (cents.total_p90 - cents.total_p50) - rental
    share = ranges.price_share(r.resolved.throughput_sigma, r.resolved.price_sigma)
    throughput, price = schedule.split_cents(
        [rental * (1 - share) / 100, rental * share / 100], rental)  # fmt: skip
    return rest + throughput, price


def independent_p90(runs):
    """The budget's P90 if its runs' costs were independent, US$ to the cent
    (:func:`udfs.ranges.independent_sum_p90` of the runs' rounded P50, P90 and expected
    cost, as the Budget sheet's formulas compute it), held between the total P50 plus the
    largest run's contingency and the sum of the P90s."""
    if not runs:
        return 0.0
    cents = [run_cents(r) for r in runs]
    p50, p90 = [c.total_p50 for c in cents], [c.total_p90 for c in cents]
    means = [schedule.to_cents(expected_cost(r)) for r in runs]
    low, high = sum(p50) + max(b - a for a, b in zip(p50, p90, strict=True)), sum(p90)
    try:
        fitted = ranges.independent_sum_p90(p50, p90, means)
    except OverflowError:  # past the largest float: the range check refuses the totals
        fitted = math.inf
    got = schedule.to_cents(fitted / 100) if math.isfinite(fitted) else high
    return schedule.usd(min(max(got, low), high))


def contingency(r):
    """P90 - P50 of a run's total cost (US$, from its rounded schedule)."""
    cents = run_cents(r)
    return schedule.usd(cents.total_p90 - cents.total_p50)


class RunCents:
    """A run's schedule in whole cents (:func:`udfs.schedule.schedule_cents`) and its totals
    (ints, cents): ``p50[account]``, ``p90[account]``, ``total_p50``, ``total_p90``."""

    def __init__(self, months):
        self.months = months
        self.p50 = {a: sum(m.p50[a] for m in months) for a in schedule.ACCOUNTS}
        self.p90 = {a: sum(m.p90[a] for m in months) for a in schedule.ACCOUNTS}
        self.total_p50 = sum(self.p50.values())
        self.total_p90 = sum(self.p90.values())

    def usd(self, name, level="p50"):
        """A total in US$ by output name (``compute_cost_usd``... or ``total_cost_usd``)."""
        by = self.p50 if level == "p50" else self.p90
        if name == "total_cost_usd":
            return schedule.usd(self.total_p50 if level == "p50" else self.total_p90)
        return schedule.usd(by[_ACCOUNT_OF[name]])


_ACCOUNT_OF = {v: k for k, v in schedule.ACCOUNTS.items()}


def run_accounts(r):
    """(P50, P90) of a run by account (US$, unrounded): compute, electricity, other."""
    out = r.outputs
    other = float(r.arguments.get("other_costs_usd", 0.0))
    p50 = {"compute": out["compute_cost_usd"], "electricity": out["electricity_cost_usd"],
           "other": other}  # fmt: skip
    p90 = {"compute": r.ranges["compute_cost_usd"][1],
           "electricity": r.ranges["electricity_cost_usd"][1], "other": other}  # fmt: skip
    return p50, p90


def run_cents(r):
    """A run's monthly schedule at P50 and P90, rounded once to whole cents (:class:`RunCents`;
    remembered on the run)."""
    found = getattr(r, "_cents", None)
    if found is None:
        p50, p90 = run_accounts(r)
        days_p90 = r.ranges["wall_clock_days"][1]
        months = schedule.spend_schedule(r.start, r.outputs["wall_clock_days"], days_p90,
                                         p50, p90)  # fmt: skip
        found = RunCents(schedule.schedule_cents(months, p50, p90))
        r._cents = found
    return found


def end_date(r, level="p50"):
    """The last month of a scheduled run (it occupies [start, start + days)), of its P50 run
    or (``level`` "p90") of its P90 run."""
    days = float(r.outputs["wall_clock_days"] if level == "p50" else r.ranges["wall_clock_days"][1])
    return engine.month_shares(r.start, days)[-1][0] if r.start else None


def _budget_row(r):
    out, cents = r.outputs, run_cents(r)
    return {
        **_key(r), "budget_status": r.budget_line, "approval": approval(r),
        **{n: r.scenario.inputs.get(n) for n in ("approver", "approved_amount_usd", "owner",
                                                 "cost_centre")},
        "start_month": r.start.replace(day=1) if r.start else None, "end_month": end_date(r),
        "end_month_p90": end_date(r, "p90"),
        "accelerator_hours": out["accelerator_hours"],
        "compute_cost_usd": cents.usd("compute_cost_usd"),
        "electricity_cost_usd": cents.usd("electricity_cost_usd"),
        "total_cost_usd": cents.usd("total_cost_usd"),
        "total_cost_usd_p90": cents.usd("total_cost_usd", "p90"),
        "contingency_usd": contingency(r),
        **dict(zip(CONTINGENCY_PARTS, map(schedule.usd, contingency_parts(r)), strict=True)),
        "expected_cost_usd": expected_cost(r),
    }  # fmt: skip


def expected_cost(r):
    """The run's expected (mean) total cost, US$ to the cent: :func:`udfs.ranges.lognormal_mean`
    of its rounded P50 and P90."""
    cents = run_cents(r)
    p50, p90 = schedule.usd(cents.total_p50), schedule.usd(cents.total_p90)
    return schedule.usd(schedule.to_cents(ranges.lognormal_mean(p50, p90)))


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
    """One row per month of the run's P90 schedule, money in whole cents (ints)."""
    rows = []
    for m in run_cents(r).months:
        p50, p90 = m.total_p50, m.total_p90
        rows.append({
            **_key(r), "budget_status": r.status, "month": m.month, "share": m.share,
            **{name: m.p50[a] for a, name in schedule.ACCOUNTS.items()},
            "total_cost_usd": p50, "total_cost_usd_p90": p90, "contingency_usd": p90 - p50,
        })  # fmt: skip
    return rows


_CENT_COLUMNS = (*MONEY, "total_cost_usd_p90", "contingency_usd", "cumulative_total_cost_usd")


def _exact(frame):
    """``frame`` with its whole-cent money columns as Python ints (object dtype): sums that
    never wrap around, whatever their size."""
    for col in _CENT_COLUMNS:
        if col in frame.columns:
            frame[col] = pd.Series([int(v) for v in frame[col]], index=frame.index, dtype=object)
    return frame


def _in_dollars(frame):
    """``frame`` with its whole-cent money columns (ints) in US$."""
    for col in _CENT_COLUMNS:
        if col in frame.columns:
            frame[col] = pd.Series(
                [schedule.usd(int(v)) for v in frame[col]], index=frame.index, dtype=float
            )
    return frame


def _frame(name, rows):
    return pd.DataFrame(rows, columns=TABLE_COLUMNS[name])


def _cent_sums(runs):
    """{column: US$} of ``runs``' money totals, summed in whole cents."""
    cents = [run_cents(r) for r in runs]
    sums = {name: sum(c.p50[a] for c in cents) for a, name in schedule.ACCOUNTS.items()}
    sums["total_cost_usd"] = sum(c.total_p50 for c in cents)
    sums["total_cost_usd_p90"] = sum(c.total_p90 for c in cents)
    sums["contingency_usd"] = sums["total_cost_usd_p90"] - sums["total_cost_usd"]
    return {k: schedule.usd(v) for k, v in sums.items()}


def _status_totals(runs):
    rows = []
    for status in LINE_ORDER:  # a line of the budget: Approved, Proposed... (no total row)
        part = [r for r in runs if r.budget_line == status]
        if len(part) or status in STATUS_ORDER[:2]:
            money = _cent_sums(part)
            rows.append(
                {
                    "budget_status": status,
                    "runs": len(part),
                    "accelerator_hours": float(
                        sum(float(r.outputs["accelerator_hours"]) for r in part)
                    ),
                    **{k: money[k] for k in TABLE_COLUMNS["status_totals"] if k in money},
                }
            )
            # fmt: skip
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
    sums = ["total_cost_usd", "total_cost_usd_p90", "contingency_usd"]  # whole cents (ints)
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
                         **dict.fromkeys(sums, 0)})  # fmt: skip
    frame = pd.DataFrame(rows, columns=["fiscal_year", "fy_first", "quarter", "first_month", *sums])
    frame = _exact(frame.sort_values("first_month", kind="stable"))
    quarterly = frame.groupby(["fiscal_year", "quarter", "first_month"], sort=False)[sums].sum()
    quarterly = quarterly.reset_index()
    years = frame.groupby(["fiscal_year", "fy_first"], sort=False)[sums].sum().reset_index()
    years = years.rename(columns={"fy_first": "first_month"})
    for t in (quarterly, years):
        t["cumulative_total_cost_usd"] = t["total_cost_usd"].cumsum()
    return (_in_dollars(_frame("quarterly", quarterly.to_dict("records"))),
            _in_dollars(_frame("fiscal_years", years.to_dict("records"))))  # fmt: skip


def _monthly(by_run):
    """Every month from the first to the last, 0 where nothing is spent (continuous); money
    in whole cents, as ``by_run`` has it."""
    if not len(by_run):
        return _frame("monthly", [])
    sums = [*MONEY, "total_cost_usd_p90", "contingency_usd"]
    monthly = _exact(by_run.copy()).groupby("month", sort=True)[sums].sum()
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


def _totals(c, costs):
    runs = c.budget_runs
    money = _cent_sums(runs)
    total = lambda part: _cent_sums(part)["total_cost_usd"]  # noqa: E731
    return pd.DataFrame([{
        "files": len(c.planners), "runs": len(runs),
        "not_in_budget_runs": len(c.other_runs),
        "accelerator_hours": costs["accelerator_hours"].sum(),
        "compute_cost_usd": money["compute_cost_usd"],
        "electricity_kwh": costs["electricity_kwh"].sum(),
        "electricity_cost_usd": money["electricity_cost_usd"],
        "other_costs_usd": money["other_costs_usd"],
        "total_cost_usd": money["total_cost_usd"],
        "approved_total_cost_usd": total([r for r in runs if r.status == "Approved"]),
        "proposed_total_cost_usd": total([r for r in runs if r.status == "Proposed"]),
        "status_unknown_total_cost_usd": total([r for r in runs if r.status == UNKNOWN_STATUS]),
        "total_cost_usd_p90": money["total_cost_usd_p90"],
        "contingency_usd": money["contingency_usd"],
        "total_cost_usd_p90_independent": independent_p90(runs),
        **{name: schedule.usd(sum(contingency_parts(r)[k] for r in runs))
           for k, name in enumerate(CONTINGENCY_PARTS)},
        "co2_tonnes": costs["co2_tonnes"].sum(),
        "scheduled_total_cost_usd": total([r for r in runs if r.start is not None]),
        "unscheduled_total_cost_usd": total([r for r in runs if r.start is None]),
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
    sums = {**_cent_sums(runs), "runs": len(runs)}
    row.update({k: v for k, v in sums.items() if k in df.columns})
    row["cumulative_total_cost_usd"] = _cent_sums(c.budget_runs)["total_cost_usd"]
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
    runs = budget_sorted(c)
    by_run = _frame("monthly_by_run", [row for r in runs if r.start for row in _month_rows(r)])
    budget = _frame("budget", [_budget_row(r) for r in runs])
    costs = _frame("costs", [_cost_row(r) for r in runs])
    monthly = _monthly(by_run)  # whole cents until the periods are summed
    quarterly, years = _periods(monthly, c.fiscal_year_start)
    by_run, monthly = _in_dollars(by_run), _in_dollars(monthly)
    mismatches = _frame("mismatches", c.mismatch_rows)
    tables = {
        "runs": _frame("runs", [_run_row(r) for r in runs]),
        "costs": costs,
        "ranges": _frame("ranges", [_range_row(r) for r in runs]),
        "budget": budget,
        "status_totals": _status_totals(runs),
        "assumptions": _frame("assumptions", [_assumption_row(r) for r in runs]),
        "not_in_budget": _frame("not_in_budget", [
            {**_key(r), "budget_status": r.status, "owner": r.scenario.inputs.get("owner"),
             "accelerator_hours": r.outputs["accelerator_hours"],
             "total_cost_usd": schedule.usd(schedule.to_cents(r.outputs["total_cost_usd"]))}
            for r in c.other_runs]),
        "blank_inputs": _frame("blank_inputs", [
            {**_key(r), "input_label": Q[n.name].label if n.name in Q else n.name,
             "input": n.name, "value_used": n.value,
             "unit": Q[n.name].unit if n.name in Q else "", "why": n.why}
            for r in runs for n in r.notes]),
        "totals": _totals(c, costs),
        "monthly": monthly,
        "quarterly": quarterly,
        "fiscal_years": years,
        "monthly_by_run": by_run,
        "fpa": fpa_table(runs, c.fiscal_year_start),
        "mismatches": mismatches,
        "files": _files(c),
        "sources": sources_table(c),
    }  # fmt: skip
    tables["checks"] = checks_table(c, mismatches, lambda r: run_cents(r).total_p50)
    return tables


def expense_class(r, account):
    """The expense class of a run's account: capex for the compute of a run priced as owned
    (the ownership equivalent: the depreciation of owned capacity), else opex (rented
    compute, electricity, other costs)."""
    basis = r.scenario.inputs.get("pricing_basis")
    owned = isinstance(basis, str) and basis.strip().lower() == PRICING_BASES[2]
    return "capex" if owned and account == "compute" else "opex"


def month_hours(r, level="p50"):
    """The run's accelerator-hours by month of its schedule (:func:`run_cents`): at ``level``
    "p50" the P50 accelerator-hours in the P50 shares (0 in a month of the P90 run after the
    P50 run), at "p90" the P90 accelerator-hours in the P90 run's shares; the last month with
    a share takes what the others leave, so that the months add up to the run's hours."""
    months = run_cents(r).months
    if level == "p50":
        total, shares = float(r.outputs["accelerator_hours"]), [m.share for m in months]
    else:
        total = float(r.ranges["accelerator_hours"][1])
        shares = [m.share_p90 for m in months]
    hours = [total * s for s in shares]
    last = max(k for k, s in enumerate(shares) if s > 0)
    hours[last] = total - sum(h for k, h in enumerate(hours) if k != last)
    return hours


def fpa_table(runs, start):
    """The long-format export: one row per run, month and account (compute, electricity,
    other) with P50 and P90 in US$ to the cent, the rounded rows every other table sums
    (:func:`run_cents`). A month of the P90 run after the P50 run's end has a P50 of 0. A run
    without a start date has one row per account with the month blank and the fiscal year
    and quarter "unscheduled". Each row carries the run's cost centre, its expense class
    (:func:`expense_class`) and the currency; a compute row the run's GL account (the
    planner's GL account is the compute account: electricity and other rows leave it blank,
    for FP&A to code), its P50 and P90 accelerator-hours of the month (:func:`month_hours`)
    and the price per accelerator-hour."""
    rows = []
    for r in runs:
        inputs, price = r.scenario.inputs, float(r.arguments["usd_per_accelerator_hour"])
        hours = zip(month_hours(r), month_hours(r, "p90"), strict=True)
        for m, (p50_hours, p90_hours) in zip(run_cents(r).months, hours, strict=True):
            month = m.month
            fy = fiscal_year_of(month, start)[0] if month else "unscheduled"
            q = f"{fy} Q{((month.month - start) % 12) // 3 + 1}" if month else "unscheduled"
            for account in schedule.ACCOUNTS:
                compute = account == "compute"
                rows.append({"run_code": r.run_code, "month": month, "fiscal_year": fy,
                             "quarter": q, "status": r.status, "account": account,
                             "cost_centre": inputs.get("cost_centre"),
                             "gl_account": inputs.get("gl_account") if compute else None,
                             "expense_class": expense_class(r, account), "currency": CURRENCY,
                             "accelerator_hours": p50_hours if compute else None,
                             "accelerator_hours_p90": p90_hours if compute else None,
                             "rate": price if compute else None,
                             "p50_usd": schedule.usd(m.p50[account]),
                             "p90_usd": schedule.usd(m.p90[account])})  # fmt: skip
    return _frame("fpa", rows)


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
