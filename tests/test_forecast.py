"""Plan vs actual, forward: the re-forecast of a running run, and finished runs as own runs.

The maths (udfs/forecast.py): P10 <= P50 <= P90, narrowing as a run progresses, the actuals
at completion, the observed hours per token pooled with the plan's as own runs are. The
hand-off (workbook_templates/report/forecast.py): past months equal to the actuals to the
cent, forecast months adding up to EAC - actual to date to the cent, page 1's block, a
completed run written as an own run that ``estimate --own-runs`` reads, failed runs listed
and never written.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import re

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_fixtures import PLAN_A, PLAN_B, PLAN_C, PLANNER, fill

from compute_lab.cli import main as cli
from compute_lab.numbers import parse_number
from udfs import calibration, forecast, own_runs, schedule
from udfs.validation import CommandError
from workbook_templates import report
from workbook_templates.actuals import ActualMonth, Actuals
from workbook_templates.report import csv_files
from workbook_templates.report.forecast import (
    FORECAST_TABLES,
    add_forecast,
    own_run_rows,
    own_runs_text,
)
from workbook_templates.report.output import write_outputs
from workbook_templates.report.tables import UNSCHEDULED, run_cents
from workbook_templates.report.variance_tables import variance_tables

PLAN = {"plan_tokens": 1e12, "plan_hours": 1e6, "sigma": 0.3, "usd_per_hour": 2.0}


def at(done, slow=1.0, status="running"):
    """The forecast of a run ``done`` (fraction) through at ``slow`` x the plan's rate."""
    tokens = done * PLAN["plan_tokens"]
    hours = tokens * 1e-6 * slow
    return forecast.forecast_run(**PLAN, tokens_done=tokens, hours_done=hours,
                                 actual_usd=2.0 * hours, status=status)  # fmt: skip


@pytest.mark.parametrize("slow", [0.7, 1.0, 1.6])
def test_the_range_is_ordered_and_narrows_as_the_run_progresses(slow):
    widths, spreads = [], []
    for done in (0.0, 0.1, 0.3, 0.5, 0.8, 0.95, 1.0):
        f = at(done, slow)
        assert f.eac["p10"] <= f.eac["p50"] <= f.eac["p90"]
        widths.append(f.eac["p90"] - f.eac["p10"])
        spreads.append(f.sigma_remaining)
    assert widths == sorted(widths, reverse=True) and widths[-1] == 0 < widths[0]
    assert spreads == sorted(spreads, reverse=True)


@settings(max_examples=300, deadline=None)
@given(slow=st.floats(0.5, 2.0), sigma=st.floats(0.0, 0.8), a=st.floats(0.0, 1.0),
       b=st.floats(0.0, 1.0))  # fmt: skip
def test_at_a_given_pace_the_range_narrows_as_the_run_progresses(slow, sigma, a, b):
    """Between half and twice the plan's pace, with the stored own_runs_k (a run seen 3x
    slower can widen for its first few percent, as its forecast rises: docs/plan-vs-actual.md)."""
    k = forecast.default_k()
    first, later = sorted((a, b))

    def run(done):
        tokens = done * 1e12
        return forecast.forecast_run(1e12, 1e6, sigma, tokens, tokens * 1e-6 * slow,
                                     2e-6 * slow * tokens, 2.0, k=k)  # fmt: skip

    f, g = run(first), run(later)
    for r in (f, g):
        assert r.eac["p10"] <= r.eac["p50"] <= r.eac["p90"]
    assert g.sigma_remaining <= f.sigma_remaining + 1e-12
    width = lambda r: r.eac["p90"] - r.eac["p10"]  # noqa: E731
    assert width(g) <= width(f) * (1 + 1e-9) + 1e-6


@pytest.mark.parametrize("status", ["completed", "failed"])
def test_a_finished_run_is_its_actuals_at_every_quantile(status):
    f = at(0.6, 1.3, status)
    assert f.remaining_tokens == 0 and f.fraction_done == 1.0
    assert f.eac == dict.fromkeys(forecast.QUANTILES, f.actual_usd)


def test_the_observed_rate_is_pooled_with_the_plans_as_own_runs_are():
    """pull = f / (f + own_runs_k) (calibration.own_runs_pull with one run of the plan's size
    weighing the fraction done), ln(pooled) = ln(prior) + pull x ln(observed / prior)."""
    k = calibration.fitted()["own_runs_k"]
    f = at(0.4, 1.5)
    assert f.pull == pytest.approx(0.4 / (0.4 + k))
    assert f.pooled_hours_per_token == pytest.approx(1e-6 * 1.5**f.pull)
    assert f.remaining_hours == pytest.approx(0.6e12 * f.pooled_hours_per_token)
    assert f.sigma_remaining == pytest.approx(0.3 * (1 - f.pull) ** 0.5)
    # a slower run forecasts more; a run at the plan's rate, the plan's
    assert at(0.4, 1.5).eac["p50"] > at(0.4, 1.0).eac["p50"] == pytest.approx(2e6)


def test_forecast_months_add_up_to_each_quantile_to_the_cent():
    hours = {"p10": 700.3, "p50": 1000.0, "p90": 1500.7}
    cents = {"p10": 123_457, "p50": 200_001, "p90": 299_999}
    rows = forecast.forecast_months(dt.date(2026, 1, 30), 24.0, hours, cents)
    for q in cents:
        assert sum(c[q] for _, c in rows) == cents[q]
    assert len(rows) == 4  # 62.5 days from 30 January: the P90 run lasts into April
    assert rows[-1][1]["p10"] == 0 < rows[-1][1]["p90"]


@pytest.mark.parametrize("slow", [0.7, 1.0, 1.3])
def test_other_costs_left_are_a_fixed_sum_whatever_the_pace_and_quantile(slow):
    """Compute and electricity follow the remaining hours (the compute with the price
    spread too); the other costs left are the sum given, at P10, P50 and P90 alike."""
    f = forecast.forecast_run(**PLAN, tokens_done=5e11, hours_done=5e5 * slow,
                              actual_usd=1e6 * slow, price_sigma=0.1,
                              electricity_usd_per_hour=0.25, other_usd=300_000.0)  # fmt: skip
    for q in forecast.QUANTILES:
        part = f.remaining_parts[q]
        assert part["other"] == 300_000.0
        assert part["electricity"] == pytest.approx(f.remaining_hours_q[q] * 0.25)
        assert f.remaining_usd[q] == pytest.approx(sum(part.values()))
    assert f.remaining_parts["p50"]["compute"] == pytest.approx(f.remaining_hours * 2.0)
    assert f.eac["p10"] < f.eac["p50"] < f.eac["p90"]
    done = forecast.forecast_run(
        **PLAN,
        tokens_done=1e12,
        hours_done=1e6 * slow,
        actual_usd=2e6,
        status="completed",
        other_usd=300_000.0,
    )
    assert done.eac == dict.fromkeys(forecast.QUANTILES, 2e6)  # nothing left, other costs too


# ---- the hand-off -------------------------------------------------------------------------

TEAM = "Team A"
CODES = {"running": "TEAM-A-DENSE-70B", "completed": "TEAM-A-BASE-DEEPSEEK-V3-LIKE",
         "failed": "TEAM-A-SMALL-DEFAULTS"}  # fmt: skip


def _month(code, day, hours, cents, tokens=None, status=None):
    return ActualMonth(code, day, hours, cents, tokens, status, source="test")


def actuals():
    """Team A's actuals: Dense 70B running (a third done in February, slower than planned),
    the DeepSeek-V3-like run completed in two months, the small one failed."""
    r, c, f = CODES["running"], CODES["completed"], CODES["failed"]
    return Actuals(months=[
        _month(r, dt.date(2026, 2, 1), 250_000.0, 62_500_037, 0.6e12, "running"),
        _month(c, dt.date(2026, 1, 1), 900_000.0, 180_000_011, 5e12, "running"),
        _month(c, dt.date(2026, 2, 1), 1_500_000.0, 300_123_455, 9.8e12, "completed"),
        _month(f, dt.date(2026, 3, 1), 10_000.0, 2_000_000, None, "failed"),
    ])  # fmt: skip


@pytest.fixture(scope="module")
def team_plan(generated_templates, tmp_path_factory):
    small = {**PLAN_C, "start_date": dt.date(2026, 3, 2)}
    plans = [None] * 3 + [{**p, "owner": TEAM, "budget_status": "Approved"}
                          for p in (PLAN_B, PLAN_A, small)]  # fmt: skip
    return fill(generated_templates[PLANNER], tmp_path_factory.mktemp("fc") / "team.xlsx", plans)


@pytest.fixture(scope="module")
def handoff(team_plan):
    c = report.consolidate([team_plan])
    assert "forecast" not in c.tables  # without actuals: nothing added
    c.actuals = actuals()
    c.tables.update(variance_tables(c))  # as report --actuals joins them
    return add_forecast(c)


def cents(x):
    return schedule.to_cents(x)


def test_every_budget_run_has_its_code_and_state(handoff):
    runs = handoff.tables["forecast_runs"].set_index("run_code")
    assert {s: runs.loc[c, "run_status"] for s, c in CODES.items()} == {s: s for s in CODES}


def test_past_months_equal_the_actuals_to_the_cent(handoff):
    rows = handoff.tables["forecast"]
    locked = rows[rows["fpa_scenario"] == "actual"]
    got = {(r.run_code, r.month): (cents(r.p10_usd), cents(r.p50_usd), cents(r.p90_usd))
           for r in locked.itertuples()}  # fmt: skip
    want = {(m.run_code, m.month): (m.cost_cents,) * 3 for m in handoff.actuals.months}
    assert got == want


def test_forecast_months_add_up_to_eac_less_actual_to_date_to_the_cent(handoff):
    rows, runs = handoff.tables["forecast"], handoff.tables["forecast_runs"]
    for r in runs.itertuples():
        mine = rows[rows["run_code"] == r.run_code]
        ahead = mine[mine["fpa_scenario"] == "forecast"]
        actual = sum(cents(v) for v in mine[mine["fpa_scenario"] == "actual"]["p50_usd"])
        assert actual == cents(r.actual_to_date_usd)
        for q, eac in (("p10", r.eac_usd_p10), ("p50", r.eac_usd), ("p90", r.eac_usd_p90)):
            assert sum(cents(v) for v in ahead[f"{q}_usd"]) == cents(eac) - actual, (r, q)
        assert r.eac_usd_p10 <= r.eac_usd <= r.eac_usd_p90
    running = runs.set_index("run_code").loc[CODES["running"]]
    assert running.eac_usd_p10 < running.eac_usd < running.eac_usd_p90
    assert 0 < running.fraction_done < 1 and running.observed_hours_per_token > (
        running.plan_hours_per_token)  # fmt: skip
    ahead = rows[(rows["run_code"] == CODES["running"]) & (rows["fpa_scenario"] == "forecast")]
    assert min(ahead["month"]) == dt.date(2026, 3, 1)  # after the last actual month


def test_finished_runs_forecast_their_actuals(handoff):
    runs = handoff.tables["forecast_runs"].set_index("run_code")
    for state in ("completed", "failed"):
        r = runs.loc[CODES[state]]
        assert r.eac_usd_p10 == r.eac_usd == r.eac_usd_p90 == r.actual_to_date_usd


def test_page_one_block_ties_by_status_and_by_fiscal_year(handoff):
    runs = handoff.tables["forecast_runs"]
    for table in ("forecast_status", "forecast_years"):
        t = handoff.tables[table]
        for col in ("budget_usd", "actual_to_date_usd", "eac_usd", "variance_usd"):
            assert sum(cents(v) for v in t[col]) == sum(cents(v) for v in runs[col]), (table, col)
    budget = handoff.tables["budget"]
    assert sum(cents(v) for v in runs["budget_usd"]) == sum(
        cents(v) for v in budget["total_cost_usd"])  # fmt: skip
    wb = report.build_workbook(handoff, dt.datetime(2026, 3, 15))
    text = [c.value for row in wb["Summary"].iter_rows() for c in row if c.value is not None]
    assert "Plan vs actual: forecast at completion" in text
    assert {"Budget", "Actual to date", "Forecast at completion", "Variance"} <= set(text)
    tables = wb["Summary"].tables  # each block an Excel Table named like its CSV file
    assert {"forecast_status", "forecast_years"} <= set(tables)
    first, last = tables["forecast_status"].ref.split(":")
    rows = int(last.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ")) - int(first.lstrip("ABCDEFGHIJ"))
    assert rows == len(handoff.tables["forecast_status"])  # header and rows, not the total
    eac = float(handoff.tables["forecast_status"]["eac_usd"].sum())
    assert any(isinstance(v, float) and abs(v - eac) < 0.005 for v in text) or any(
        isinstance(v, str) and v.startswith("=SUBTOTAL") for v in text)  # fmt: skip


def test_failed_runs_are_listed_on_the_checks_and_never_own_runs(handoff):
    checks = handoff.tables["checks"]
    ours = checks[checks["check"] == "Runs in the actuals"]
    failed = ours[ours["detail"].str.contains(CODES["failed"])]
    assert list(failed["status"]) == ["WARN"] and "never used" in failed["detail"].iloc[0]
    rows, skipped = own_run_rows(handoff)
    assert [r["name"] for r in rows] == [CODES["completed"]] and not skipped
    assert CODES["failed"] not in own_runs_text(handoff)
    assert CODES["running"] not in own_runs_text(handoff)


def test_a_completed_run_becomes_an_own_run_that_estimate_reads(handoff, tmp_path, capsys):
    path = tmp_path / "runs.csv"
    write_outputs(handoff, own_runs=(path, own_runs_text(handoff)))
    runs = own_runs.read(path, parse_number)
    (run,) = runs.records()
    assert run["name"] == CODES["completed"] and run["organisation"] == TEAM
    assert run["accelerator"] == "H100 SXM" and run["tokens"] == 14.8e12
    assert run["accelerator_hours"] == 2_400_000.0 and run["accelerators"] == 2048
    assert (run["active_params"], run["total_params"]) == (37e9, 671e9)

    def hours(*more):
        flags = ["--accelerator", "H100", "--total-params", "37B", "--tokens", "2T",
                 "--accelerators", "1024"]  # fmt: skip
        assert cli(["estimate", *flags, *more]) == 0
        out = capsys.readouterr().out
        return float(re.search(r"Accelerator-hours: ([\d,]+)", out).group(1).replace(",", ""))

    plain, pulled = hours(), hours("--own-runs", str(path))
    mfu = runs["implied_mfu"][0]
    default = calibration.predicted_mfu("H100", 37e9)
    # the run's MFU differs from the default, so the estimate moves toward it
    assert (pulled < plain) == (mfu > default) and pulled != plain
    assert float(runs.mfu("H100", 37e9)) == pytest.approx(plain / pulled * default, rel=1e-3)


def test_the_own_runs_file_is_never_overwritten_without_force(handoff, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("keep\n")
    with pytest.raises(CommandError, match="exist"):
        write_outputs(handoff, own_runs=(path, own_runs_text(handoff)))
    assert path.read_text() == "keep\n"
    write_outputs(handoff, force=True, own_runs=(path, own_runs_text(handoff)))
    assert CODES["completed"] in path.read_text()


def test_earlier_own_runs_are_kept_first_and_not_repeated(handoff, tmp_path):
    first = tmp_path / "first.csv"
    first.write_text(own_runs_text(handoff))
    earlier = own_runs.read(first, parse_number)
    again = own_runs_text(handoff, earlier)
    assert again.count(CODES["completed"]) == 1
    assert own_runs.read_given(argparse.Namespace(own_runs=first), parse_number).count == 1


def test_the_report_flag_needs_actuals(team_plan, tmp_path, capsys):
    assert cli(["report", str(team_plan), "--write-own-runs", str(tmp_path / "r.csv")]) == 2
    assert "--write-own-runs needs --actuals" in capsys.readouterr().err


def test_the_forecast_csv_files_and_their_data_dictionary(handoff, tmp_path):
    write_outputs(handoff, csv_dir=tmp_path)
    with open(tmp_path / "forecast_runs.csv", encoding="utf-8") as fh:
        runs = list(csv.DictReader(fh))
    with open(tmp_path / "forecast.csv", encoding="utf-8") as fh:
        months = list(csv.DictReader(fh))
    for r in runs:
        mine = [m for m in months if m["run_code"] == r["run_code"]]
        assert sum(cents(float(m["p90_usd"])) for m in mine) == cents(float(r["eac_usd_p90"]))
    assert {m["fpa_scenario"] for m in months} == {"actual", "forecast"}
    frames = csv_files.csv_frames(handoff, dt.date(2026, 3, 15))
    assert set(csv_files.FORECAST_FILES) <= set(frames)
    assert csv_files.FORECAST_FILES == FORECAST_TABLES
    text = csv_files.readme_text(frames)
    for name in csv_files.FORECAST_FILES:
        assert f"{name}.csv: with actuals" in text
    for col in ("run_code", "fpa_scenario", "eac_usd", "variance_usd", "pull"):
        assert f"  {col}: {csv_files.COLUMN_NOTES[col]}" in text


def test_by_fiscal_year_past_months_are_actuals_and_the_budget_is_the_schedules(team_plan):
    """Fiscal years from March: January and February in FY2025/26, March on in FY2026/27."""
    c = report.consolidate([team_plan], fiscal_year_start=3)
    c.actuals = actuals()
    add_forecast(c)
    years = c.tables["forecast_years"].set_index("fiscal_year")
    assert list(years.index) == ["FY2025/26", "FY2026/27"]
    rows = c.tables["forecast"]
    for fy, y in years.iterrows():
        mine = rows[rows["fiscal_year"] == fy]
        locked = mine[mine["fpa_scenario"] == "actual"]
        assert cents(y.actual_to_date_usd) == sum(
            m.cost_cents for m in c.actuals.months if (m.month.month >= 3) == fy.endswith("27")
        )  # fmt: skip
        assert cents(y.actual_to_date_usd) == sum(cents(v) for v in locked["p50_usd"])
        assert cents(y.eac_usd) == sum(cents(v) for v in mine["p50_usd"])
        budget = c.tables["fiscal_years"].set_index("fiscal_year").loc[fy, "total_cost_usd"]
        assert cents(y.budget_usd) == cents(budget)
        assert cents(y.variance_usd) == cents(y.eac_usd) - cents(y.budget_usd)


def test_a_run_not_started_is_its_budget_and_one_without_a_date_is_unscheduled(
    generated_templates, tmp_path
):
    plans = [None] * 3 + [{**PLAN_B, "owner": "Team A"}, {**PLAN_C, "owner": "Team B"},
                          {**PLAN_A, "owner": "Team B"}]  # fmt: skip
    c = report.consolidate([fill(generated_templates[PLANNER], tmp_path / "two.xlsx", plans)])
    done = "TEAM-B-BASE-DEEPSEEK-V3-LIKE"
    c.actuals = Actuals(months=[_month(done, dt.date(2026, 2, 1), 2.4e6, 480_000_000,
                                       None, "completed")])  # fmt: skip
    add_forecast(c)
    runs = c.tables["forecast_runs"].set_index("run_code")
    budget = c.tables["monthly_by_run"]
    for code in ("TEAM-A-DENSE-70B", "TEAM-B-SMALL-DEFAULTS"):
        r = runs.loc[code]
        assert r.run_status == "not started" and r.eac_usd == r.budget_usd
        assert r.variance_usd == 0 and r.eac_usd_p10 < r.eac_usd < r.eac_usd_p90
    rows = c.tables["forecast"]
    dense = rows[rows["run_code"] == "TEAM-A-DENSE-70B"].set_index("month")["p50_usd"]
    planned = budget[budget["scenario"] == "Dense 70B"].set_index("month")["total_cost_usd"]
    assert {m: cents(v) for m, v in dense.items()} == {m: cents(v) for m, v in planned.items()}
    small = rows[rows["run_code"] == "TEAM-B-SMALL-DEFAULTS"]
    assert list(small["month"]) == [None] and list(small["fiscal_year"]) == [UNSCHEDULED]
    years = c.tables["forecast_years"]
    assert years["fiscal_year"].iloc[-1] == UNSCHEDULED
    # the completed run is Team B's, alone: written; with Team A's own runs first: refused
    assert own_runs_text(c).count("\n") == 2
    other = tmp_path / "a.csv"
    other.write_text(own_runs_text(c).replace("Team B", "Team A").replace(done, "EARLIER"))
    with pytest.raises(CommandError, match=r"belong to 2 teams \('Team A', 'Team B'\)"):
        own_runs_text(c, own_runs.read(other, parse_number))


def test_templates_own_runs_reads_the_written_file_into_our_runs(handoff, tmp_path):
    from helpers import run_cli

    from workbook_templates.planner import own_runs as sheet

    path = tmp_path / "runs.csv"
    write_outputs(handoff, own_runs=(path, own_runs_text(handoff)))
    code, _, err, _ = run_cli(["templates", "--out", tmp_path / "t", "--own-runs", path])
    assert code == 0, err
    ws = openpyxl.load_workbook(tmp_path / "t" / PLANNER)[sheet.TITLE]
    assert ws.cell(sheet._TOP + 1, 1).value == CODES["completed"]


def test_report_actuals_writes_the_forecast_and_the_own_runs_end_to_end(team_plan, tmp_path):
    """report --actuals (a plain actuals CSV) --csv --out --write-own-runs: the forecast files,
    page 1's block, the own-runs file; the failed run a warning line; run again without
    --force, the existing files refuse it."""
    from helpers import run_cli

    lines = ["run_code,month,accelerator_hours,cost_usd,tokens_processed,status"]
    for m in actuals().months:
        tokens = "" if m.tokens_processed is None else f"{m.tokens_processed:.0f}"
        lines.append(f"{m.run_code},{m.month:%Y-%m},{m.accelerator_hours:.0f},"
                     f"{m.cost_cents / 100:.2f},{tokens},{m.status}")  # fmt: skip
    (tmp_path / "actuals.csv").write_text("\n".join(lines) + "\n")
    argv = ["report", team_plan, "--actuals", tmp_path / "actuals.csv", "--csv", tmp_path / "csv",
            "--out", tmp_path / "h.xlsx", "--write-own-runs", tmp_path / "runs.csv"]  # fmt: skip
    code, out, err, _ = run_cli(argv)
    assert code == 0, err
    assert "Wrote 1 own run(s) to" in out and CODES["failed"] in err
    runs = own_runs.read(tmp_path / "runs.csv", parse_number)
    assert list(runs["name"]) == [CODES["completed"]]
    with open(tmp_path / "csv" / "forecast_runs.csv", encoding="utf-8") as fh:
        got = {r["run_code"]: r for r in csv.DictReader(fh)}
    assert got[CODES["completed"]]["eac_usd"] == got[CODES["completed"]]["actual_to_date_usd"]
    assert float(got[CODES["running"]]["eac_usd_p90"]) > float(got[CODES["running"]]["eac_usd"])
    with open(tmp_path / "csv" / "forecast.csv", encoding="utf-8") as fh:
        p50 = {(r["run_code"], r["month"]): r["p50_usd"] for r in csv.DictReader(fh)}
    with open(tmp_path / "csv" / "variance.csv", encoding="utf-8") as fh:
        ahead = {(r["run_code"], r["month"]): r["amount_usd"] for r in csv.DictReader(fh)
                 if r["scenario"] == "forecast"}  # fmt: skip
    assert ahead == p50  # variance.csv's forecast rows are the re-forecast's P50 months
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Summary"]
    assert "Plan vs actual: forecast at completion" in [c.value for c in ws["A"]]
    code, _, err, _ = run_cli(argv)
    assert code == 2 and "already exist" in err and "--force" in err


def test_a_run_not_started_forecasts_its_budget_range_to_the_cent(generated_templates, tmp_path):
    """With a price range (price risk in the budget's P90): P10, P50 and P90 at completion
    are the plan's, to the cent, and its P50 and P90 months are the budget's months."""
    plans = [None] * 3 + [
        {**PLAN_B, "owner": "Team A", "price_range_pct": 0.2},
        {**PLAN_C, "owner": "Team A", "start_date": dt.date(2026, 5, 3)},
    ]
    c = report.consolidate([fill(generated_templates[PLANNER], tmp_path / "p.xlsx", plans)])
    c.actuals = Actuals(months=[])
    add_forecast(c)
    runs = c.tables["forecast_runs"].set_index("run_code")
    budget = c.tables["budget"].set_index("run_code")
    ranges = c.tables["ranges"].set_index("run_code")
    months = c.tables["forecast"]
    planned = c.tables["monthly_by_run"]
    for code in ("TEAM-A-DENSE-70B", "TEAM-A-SMALL-DEFAULTS"):
        r, b = runs.loc[code], budget.loc[code]
        assert r.run_status == "not started"
        assert cents(r.eac_usd) == cents(b.total_cost_usd)
        assert cents(r.eac_usd_p90) == cents(b.total_cost_usd_p90), code
        assert cents(r.eac_usd_p10) == cents(ranges.loc[code, "total_cost_usd_p10"]), code
        mine = months[months["run_code"] == code].set_index("month")
        plan = planned[planned["run_code"] == code].set_index("month")
        for q, col in (("p50", "total_cost_usd"), ("p90", "total_cost_usd_p90")):
            assert {m: cents(v) for m, v in mine[f"{q}_usd"].items()} == {
                m: cents(v) for m, v in plan[col].items()}, (code, q)  # fmt: skip
        assert sum(cents(v) for v in mine["p10_usd"]) == cents(r.eac_usd_p10)
    assert ranges.loc["TEAM-A-DENSE-70B", "price_sigma"] > 0


def test_price_risk_widens_the_remaining_part_as_the_plan_does():
    """Nothing done, all rental: the remaining P10 / P90 are the plan's compute-cost range
    (throughput and price spreads combined); the price spread stays as the run progresses,
    so a run just started is near its plan's P90, and a finished run is its actuals."""
    from udfs import ranges

    sigma, price = 0.3, 0.15
    low, high = (2e6 * ranges.quantile_factor(p, (sigma**2 + price**2) ** 0.5)
                 for p in (0.1, 0.9))  # fmt: skip
    f = forecast.forecast_run(**PLAN, tokens_done=None, hours_done=0.0, actual_usd=0.0,
                              price_sigma=price)  # fmt: skip
    assert f.eac["p50"] == pytest.approx(2e6)
    assert (f.eac["p10"], f.eac["p90"]) == (pytest.approx(low), pytest.approx(high))
    started = at(0.01)
    with_price = forecast.forecast_run(**PLAN, tokens_done=1e10, hours_done=1e4,
                                       actual_usd=2e4, price_sigma=price)  # fmt: skip
    assert with_price.eac["p50"] == pytest.approx(started.eac["p50"])
    assert with_price.eac["p90"] > started.eac["p90"]
    assert with_price.eac["p90"] == pytest.approx(high, rel=0.02)
    # the part the price moves is the compute: the electricity keeps the throughput's spread
    half = forecast.forecast_run(**{**PLAN, "usd_per_hour": 1.0}, tokens_done=1e10,
                                 hours_done=1e4, actual_usd=2e4, price_sigma=price,
                                 electricity_usd_per_hour=1.0)  # fmt: skip
    assert started.eac["p90"] < half.eac["p90"] < with_price.eac["p90"]
    done = forecast.forecast_run(**PLAN, tokens_done=1e12, hours_done=1e6, actual_usd=2e6,
                                 status="completed", price_sigma=price)  # fmt: skip
    assert done.eac == dict.fromkeys(forecast.QUANTILES, 2e6)


@pytest.mark.parametrize("power_given", [False, True])
def test_a_slow_runs_other_costs_stay_the_plans(generated_templates, tmp_path, power_given):
    """A run half done, 30% slower than planned, with other costs typed: the forecast's other
    costs are the plan's (its months to date and the months after), never scaled by the
    pace; the hours left are priced at the compute price (the month's spend less its power
    and the plan's other costs of the month) and the electricity per hour, the actuals' own
    where they give it, else the plan's (kWh per hour x US$ per kWh)."""
    other = 3_000_000.0
    plans = [None] * 3 + [{**PLAN_B, "owner": TEAM, "budget_status": "Approved",
                           "accelerators": 256, "other_costs_usd": other}]  # fmt: skip
    c = report.consolidate([fill(generated_templates[PLANNER], tmp_path / "o.xlsx", plans)])
    (r,) = c.budget_runs
    planned = run_cents(r)
    hours, tokens = float(r.outputs["accelerator_hours"]), 2e12
    compute = 2.5
    power = 0.4 if power_given else float(r.outputs["electricity_cost_usd"]) / hours
    # the months the plan's first 65% of hours fill: half the tokens at 1.3 x its hours
    upto = [sum(m.share for m in planned.months[: i + 1]) for i in range(len(planned.months))]
    first = planned.months[: 1 + min(range(len(upto)), key=lambda i: abs(upto[i] - 0.65))]
    share = sum(m.share for m in first)
    months = []
    for m in first:
        h = 0.65 * hours * m.share / share
        cost = cents(h * (compute + power)) + m.p50["other"]
        months.append(
            ActualMonth(
                r.run_code,
                m.month,
                h,
                cost,
                tokens / 2 * m.share / share,
                "running",
                cents(h * power) if power_given else None,
            )
        )
    c.actuals = Actuals(months=months)
    add_forecast(c)
    run = c.tables["forecast_runs"].set_index("run_code").loc[r.run_code]
    assert run.fraction_done == pytest.approx(0.5)
    assert run.observed_hours_per_token == pytest.approx(1.3 * run.plan_hours_per_token)
    assert run.usd_per_accelerator_hour_today == pytest.approx(compute + power, rel=1e-6)
    spent_other = sum(m.p50["other"] for m in first)
    left_other = planned.p50["other"] - spent_other
    assert spent_other + left_other == cents(other) and 0 < left_other < cents(other)
    # EAC = actual to date + the hours left at compute + power + the other costs left
    left_hours = tokens / 2 * run.pooled_hours_per_token
    hourly = cents(run.eac_usd) - cents(run.actual_to_date_usd) - left_other
    assert hourly == pytest.approx(left_hours * (compute + power) * 100, abs=2)
    # the other costs left are on the plan's months; the months add up to EAC to the cent
    rows = c.tables["forecast"]
    ahead = rows[rows["fpa_scenario"] == "forecast"]
    assert sum(cents(v) for v in ahead["p10_usd"]) == cents(run.eac_usd_p10) - cents(
        run.actual_to_date_usd)  # fmt: skip
    assert sum(cents(v) for v in ahead["p50_usd"]) == hourly + left_other
    assert run.eac_usd_p10 < run.eac_usd < run.eac_usd_p90
