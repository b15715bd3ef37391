"""The P90 schedule is the P90 run, and every hand-off file ties to the cent.

The P90 of a month is the P90 run's spend in it: the P90 accelerator-hours at the run's
capacity (accelerators x hours in the month), so a slower run ends later; only price risk
raises the monthly rate. No month's P90 compute spend exceeds the month's capacity x the P90
price (checked on every month of every run, over random plans, start dates and fiscal-year
starts, and on a real hand-off of 4,096 H200s across two fiscal years). Money is rounded once
(run x month x account, whole cents): every CSV total, every table and every named cell of
the hand-off workbook is a sum of those rows, checked in integer cents for several hand-offs.
"""

from __future__ import annotations

import calendar
import datetime as dt
import math
from decimal import Decimal

import openpyxl
import pytest
from helpers_report import named_cells
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_handoff_budget import read_csv, run, with_references
from test_report_fixtures import PLAN_A, PLAN_B, PLAN_C, PLANNER

from udfs import engine, schedule
from udfs.formula import norm_s_inv
from workbook_templates.reader import Scenario
from workbook_templates.report import tables
from workbook_templates.report.consolidate import recompute

#: The issue's kind of plan: a dense 405B model on 4,096 H200s, priced with a price range,
#: starting in October so that its P90 run crosses into the next fiscal year (April starts).
BETA = {"scenario_name": "Beta", "total_params": 405e9, "training_tokens": 15.6e12,
        "accelerators": 4096, "accelerator_name": "H200", "usd_per_accelerator_hour": 3.3,
        "price_range_pct": 0.15, "budget_status": "Proposed", "owner": "Team B",
        "start_date": dt.datetime(2027, 10, 1)}  # fmt: skip
APPROVED = {**PLAN_B, "budget_status": "Approved", "owner": "Team A",
            "approval_ref": "CFO-2027-02", "approval_date": dt.datetime(2027, 1, 20),
            "approver": "CFO", "approved_amount_usd": 1e9,
            "start_date": dt.datetime(2027, 2, 20)}  # fmt: skip
LATER = {**PLAN_A, "budget_status": "Proposed", "owner": "Team C",
         "start_date": dt.datetime(2028, 1, 17)}  # fmt: skip
EXCLUDED = {**PLAN_C, "budget_status": "Excluded", "start_date": dt.datetime(2027, 3, 1)}
UNSCHEDULED = {**PLAN_C, "scenario_name": "No date yet", "budget_status": "Proposed",
               "owner": "Team D", "start_date": None}  # fmt: skip


def _cents(text):
    """A CSV amount (US$ to the cent) as whole cents."""
    value = Decimal(text or "0") * 100
    assert value == value.to_integral_value(), text  # written to the cent
    return int(value)


def _capacity_cents(r, month):
    """Whole cents the run's accelerators can bill in ``month`` at the P90 price."""
    days = calendar.monthrange(month.year, month.month)[1]
    price = float(r.arguments["usd_per_accelerator_hour"])
    p90_price = price * math.exp(norm_s_inv(0.9) * r.resolved.price_sigma)
    capacity_hours = float(r.arguments["accelerators"]) * 24 * days
    return math.ceil(capacity_hours * p90_price * 100 * (1 + 1e-12))  # to the cent, up


def _run(inputs):
    from workbook_templates.reader import CellRef

    cells = {"scenario_name": CellRef("Inputs", "G4"), "start_date": CellRef("Inputs", "G29")}
    scenario = Scenario("plan.xlsx", 1, "G", inputs["scenario_name"], inputs, cells)
    return recompute(scenario)


def _number(lo, hi):
    """A float in [lo, hi], never a subnormal (the engine refuses those at their input)."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


_PLANS = st.fixed_dictionaries({
    "scenario_name": st.just("Random"),
    "total_params": _number(1e9, 2e12),
    "training_tokens": _number(1e11, 3e13),
    "accelerators": st.integers(8, 32_768).map(float),
    "accelerator_name": st.sampled_from(["H100 SXM", "H200", "B200", "A100 SXM 80GB"]),
    "usd_per_accelerator_hour": _number(0.5, 12),
    "price_range_pct": st.none() | _number(0, 0.6),
    "throughput_range_pct": st.none() | _number(0, 1.5),
    "usd_per_kwh": _number(0, 0.3),
    "start_date": st.dates(dt.date(2025, 1, 1), dt.date(2040, 12, 31)),
})  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans=st.lists(_PLANS, min_size=1, max_size=3), fy_start=st.integers(1, 12))
def test_no_month_bills_more_than_the_accelerators_can_at_the_p90_price(plans, fy_start):
    from hypothesis import reject

    from workbook_templates.reader import PlannerError

    try:
        runs = [_run({**p, "scenario_name": f"Random {k}"}) for k, p in enumerate(plans)]
    except PlannerError:  # a run (or its P90 run) past the year 9999: refused, no schedule
        reject()
    rows = tables.fpa_table(runs, fy_start)
    for r in runs:
        rid = r.run_code
        mine = [x for x in rows.to_dict("records") if x["run_code"] == rid]
        compute = [x for x in mine if x["account"] == "compute"]
        for x in compute:  # every month of every run
            p90 = round(x["p90_usd"] * 100)
            assert p90 <= _capacity_cents(r, x["month"]), (x["month"], x["p90_usd"])
            fy, _ = tables.fiscal_year_of(x["month"], fy_start)
            assert x["fiscal_year"] == fy and x["quarter"].startswith(fy + " Q")
        for x in mine:  # the P90 run bills every day the P50 run does, or more: every row
            assert round(x["p90_usd"] * 100) >= round(x["p50_usd"] * 100), x
        # the P90 run ends later: its last month is the month of start + P90 days
        days_p90 = r.ranges["wall_clock_days"][1]
        last = engine.month_shares(r.start, days_p90)[-1][0]
        assert compute[-1]["month"] == last
        # each account adds up to the run's figure to the cent, at P50 and at P90
        p50 = {"compute": r.outputs["compute_cost_usd"],
               "electricity": r.outputs["electricity_cost_usd"]}  # fmt: skip
        p90 = {"compute": r.ranges["compute_cost_usd"][1],
               "electricity": r.ranges["electricity_cost_usd"][1]}  # fmt: skip
        for account in p50:
            part = [x for x in mine if x["account"] == account]
            got50 = sum(round(x["p50_usd"] * 100) for x in part)
            got90 = sum(round(x["p90_usd"] * 100) for x in part)
            assert got50 == schedule.to_cents(p50[account]), account
            assert got90 == schedule.to_cents(p90[account]), account


def test_the_p90_month_rate_is_the_capacity_at_the_price_times_the_price_risk():
    """A full month of the P90 run bills accelerators x 24 x days x price x the price-risk
    factor EXP(z (SQRT(st^2 + sp^2) - st)): 1 without price risk."""
    r = _run({**BETA, "price_range_pct": 0.0, "start_date": dt.date(2027, 10, 1)})
    months = tables.run_cents(r).months
    full = [m for m in months[1:-1]]  # whole months of the P90 run
    assert len(full) >= 3
    for m in full:
        days = calendar.monthrange(m.month.year, m.month.month)[1]
        want = 4096 * 24 * days * 3.3
        assert abs(m.p90["compute"] - want * 100) <= 1, m.month
    r = _run({**BETA, "start_date": dt.date(2027, 10, 1)})  # 15% price range
    st_, sp = r.resolved.throughput_sigma, r.resolved.price_sigma
    factor = math.exp(norm_s_inv(0.9) * (math.hypot(st_, sp) - st_))
    assert 1 < factor < 1.15
    for m in tables.run_cents(r).months[1:-1]:
        days = calendar.monthrange(m.month.year, m.month.month)[1]
        assert abs(m.p90["compute"] - 4096 * 24 * days * 3.3 * factor * 100) <= 1, m.month


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


def _handoff(template, folder, plans, fy_start):
    folder.mkdir()
    p = with_references(template, folder / "team.xlsx", plans)
    assert run(p, "--csv", folder / "csv", "--out", folder / "h.xlsx",
               "--fiscal-year-start", fy_start) == 0  # fmt: skip
    return folder


HANDOFFS = {
    "one run": ([BETA], 4),
    "three runs across two fiscal years, an excluded alternative": (
        [BETA, APPROVED, EXCLUDED, LATER], 4),
    "calendar years, a run without a start date": ([APPROVED, LATER, UNSCHEDULED, BETA], 1),
}  # fmt: skip


@pytest.fixture(scope="module", params=list(HANDOFFS))
def handoff(request, template, tmp_path_factory):
    plans, fy_start = HANDOFFS[request.param]
    folder = tmp_path_factory.mktemp("h32") / "h"
    return _handoff(template, folder, plans, fy_start)


def test_the_beta_plan_p90_stays_within_capacity_and_spends_later(handoff):
    """On the hand-off (fpa.csv, every month of every run): no month's compute P90 exceeds
    the accelerators' capacity x the P90 price, and the P90 spend goes on after the P50 run."""
    runs = {r["run_code"]: r for r in read_csv(handoff / "csv", "runs")}
    fpa = read_csv(handoff / "csv", "fpa")
    assert fpa
    for x in fpa:
        if x["account"] != "compute" or not x["month"]:
            continue
        r = runs[x["run_code"]]
        month = dt.date.fromisoformat(x["month"])
        days = calendar.monthrange(month.year, month.month)[1]
        price = float(r["usd_per_accelerator_hour"]) * (1 + float(r["price_range_pct"] or 0))
        cap = float(r["accelerators"]) * 24 * days * price
        assert _cents(x["p90_usd"]) <= math.ceil(cap * 100 * (1 + 1e-12)), (r["scenario"], x)
    beta = [x for x in fpa if runs[x["run_code"]]["scenario"] == "Beta"]
    after = [x for x in beta if _cents(x["p50_usd"]) == 0 and _cents(x["p90_usd"]) > 0]
    assert after  # months of the P90 run after the P50 run's last
    years = read_csv(handoff / "csv", "fiscal_years")
    assert all(_cents(y["total_cost_usd_p90"]) >= _cents(y["total_cost_usd"]) for y in years)


def test_every_file_and_named_cell_ties_to_the_cent(handoff):
    """Every CSV's money columns and the workbook's named cells, summed in whole cents, give
    the same total P50, P90, contingency and compute cost everywhere."""
    from workbook_templates.report.summary import period_name

    csv = {n: read_csv(handoff / "csv", n) for n in (
        "totals", "monthly", "quarterly", "fiscal_years", "status_totals", "budget", "costs",
        "ranges", "runs", "fpa", "monthly_by_run")}  # fmt: skip
    (totals,) = csv["totals"]
    unscheduled = _cents(totals["unscheduled_total_cost_usd"])
    late = [r for r in csv["budget"] if not r["start_month"]]  # runs without a start date
    late_p90 = sum(_cents(r["total_cost_usd_p90"]) for r in late)
    late_compute = sum(_cents(r["compute_cost_usd"]) for r in late)
    assert (unscheduled > 0) == bool(late)

    def total(name, column, rows=None):
        return sum(_cents(r[column]) for r in (rows if rows is not None else csv[name]))

    want = {"total_cost_usd": _cents(totals["total_cost_usd"]),
            "total_cost_usd_p90": _cents(totals["total_cost_usd_p90"]),
            "contingency_usd": _cents(totals["contingency_usd"]),
            "compute_cost_usd": _cents(totals["compute_cost_usd"])}  # fmt: skip
    assert want["contingency_usd"] == want["total_cost_usd_p90"] - want["total_cost_usd"]
    unsched = {"total_cost_usd": unscheduled, "total_cost_usd_p90": late_p90,
               "contingency_usd": late_p90 - unscheduled,
               "compute_cost_usd": late_compute}  # fmt: skip
    found = {}
    for column in want:
        for name in ("status_totals", "budget", "costs", "ranges", "runs"):
            if column in csv[name][0]:
                found[(name, column)] = total(name, column)
        for name in ("monthly", "quarterly", "fiscal_years", "monthly_by_run"):  # scheduled
            if column in csv[name][0]:
                found[(name, column)] = total(name, column) + unsched[column]
    found[("fpa", "total_cost_usd")] = total("fpa", "p50_usd")
    found[("fpa", "total_cost_usd_p90")] = total("fpa", "p90_usd")
    found[("fpa", "contingency_usd")] = total("fpa", "p90_usd") - total("fpa", "p50_usd")
    compute = [r for r in csv["fpa"] if r["account"] == "compute"]
    found[("fpa", "compute_cost_usd")] = total("fpa", "p50_usd", compute)
    # each run: budget.csv = the fpa rows = monthly_by_run = ranges = costs = runs
    by_run = {}
    for r in csv["fpa"]:
        c = by_run.setdefault(r["run_code"], [0, 0])
        c[0] += _cents(r["p50_usd"])
        c[1] += _cents(r["p90_usd"])
    for name in ("budget", "ranges"):
        for r in csv[name]:
            assert [_cents(r["total_cost_usd"]), _cents(r["total_cost_usd_p90"])] == by_run[
                r["run_code"]], (name, r["scenario"])  # fmt: skip
    for name in ("costs", "runs"):
        for r in csv[name]:
            assert _cents(r["total_cost_usd"]) == by_run[r["run_code"]][0], (name, r["scenario"])
    # the workbook's named cells: page 1's headline figures and every period's P50 and P90
    wb = openpyxl.load_workbook(handoff / "h.xlsx", data_only=True)
    named = named_cells(wb)
    for cell, column in (("handoff_total_p50", "total_cost_usd"),
                         ("handoff_total_p90", "total_cost_usd_p90"),
                         ("handoff_contingency", "contingency_usd")):  # fmt: skip
        found[(cell, column)] = round(named[cell] * 100)
        assert round(named[cell] * 100) / 100 == named[cell]  # a whole number of cents
    for level, column in (("p50", "total_cost_usd"), ("p90", "total_cost_usd_p90")):
        for period in ("fiscal_years", "quarterly"):
            key = "quarter" if period == "quarterly" else "fiscal_year"
            cells = [round(named[period_name(r[key], level)] * 100) for r in csv[period]]
            if late:
                cells.append(round(named[period_name("unscheduled", level)] * 100))
            found[(f"named {period} {level}", column)] = sum(cells)
    approved = _cents(totals["approved_total_cost_usd"]) + _cents(totals["proposed_total_cost_usd"])
    found[("totals approved + proposed", "total_cost_usd")] = approved + _cents(
        totals["status_unknown_total_cost_usd"])  # fmt: skip
    found[("totals scheduled + unscheduled", "total_cost_usd")] = (
        _cents(totals["scheduled_total_cost_usd"]) + unscheduled)  # fmt: skip
    broken = {k: v - want[k[1]] for k, v in found.items() if v != want[k[1]]}
    assert not broken, broken  # (file, column): cents off the totals.csv figure


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_planner_monthly_p90_is_the_p90_run_in_both_engines(template, tmp_path):
    """The planner's Monthly spend P90 column (native formulas from the spec), recalculated
    by LibreOffice and by Gnumeric, equals the engine's P90 schedule month by month, runs on
    after the P50 run, and stays within capacity x the P90 price plus the other costs."""
    from helpers import planner_cell, require_soffice, require_ssconvert, row_values

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    plan = {**BETA, "other_costs_usd": 250_000.0}
    path = with_references(template, tmp_path / "p.xlsx", [plan])
    wb = openpyxl.load_workbook(path)
    ws, coord = planner_cell(wb, "active_scenario", 0)
    ws[coord].value = 4  # the first custom column, after the three preset ones
    wb.save(path)
    r = _run({q: plan.get(q) for q in plan} | {"start_date": plan["start_date"].date()})
    p50, p90 = tables.run_accounts(r)
    months = schedule.spend_schedule(r.start, r.outputs["wall_clock_days"],
                                     r.ranges["wall_clock_days"][1], p50, p90)  # fmt: skip
    assert any(m.share == 0 for m in months)  # the P90 run ends later
    (lo,) = recalculate([path], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([path], tmp_path / "gn")
    for got in (lo, gn):
        values = openpyxl.load_workbook(got, data_only=True)
        shown = row_values(values, "monthly_month")
        column = row_values(values, "monthly_total_cost_usd_p90")
        for k, m in enumerate(months):
            assert shown[k].date() == m.month, (got, k)
            assert column[k] == pytest.approx(m.total_p90, rel=1e-9), (got, m.month)
            assert column[k] - m.p90["other"] <= _capacity_cents(r, m.month) / 100 + (
                p90["electricity"] * m.share_p90) + 0.01  # fmt: skip
        assert not any(isinstance(v, int | float) and v for v in column[len(months) :])
        assert sum(v for v in column if isinstance(v, int | float)) == pytest.approx(
            r.ranges["total_cost_usd"][1], rel=1e-9)  # fmt: skip
        status = row_values(values, "master_status")[0]
        assert status != "ERROR", row_values(values, "master_cause")


def test_a_p90_run_ending_after_the_year_9999_is_refused_at_the_start_date():
    """The P50 run fits before the year 9999, the P90 run (3 x longer) does not: refused at
    the start date cell, naming the P90 length, before any schedule is made."""
    from workbook_templates.reader import CellRef, PlannerError

    start = dt.date(9996, 1, 1)
    inputs = {**BETA, "start_date": start, "throughput_range_pct": 2.0,
              "accelerators": 4096.0, "training_tokens": 4e13}  # fmt: skip
    cells = {"start_date": CellRef("Inputs", "G29"), "scenario_name": CellRef("Inputs", "G4")}
    scenario = Scenario("plan.xlsx", 1, "G", "Beta", inputs, cells)
    days = recompute.__globals__["_estimate"](inputs)[1]["wall_clock_days"]
    assert start.toordinal() + days < dt.date.max.toordinal() < start.toordinal() + 3 * days
    with pytest.raises(PlannerError) as err:
        recompute(scenario)
    (problem,) = err.value.problems
    assert problem.cell == "G29" and "wall_clock_days_p90" in problem.message
    assert "after the year 9999" in problem.message
