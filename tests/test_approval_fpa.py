"""Approval that means something, and the FP&A dimensions, on the hand-off side.

A run typed Approved needs its reference, date, approver and approved amount: without one it
counts as Proposed, on a budget line of its own, with a WARN naming the run, what is missing
and where; an Approved run whose P50 is over its approved amount is a WARN with the
difference. fpa.csv carries each run's cost centre, GL account, expense class (capex for
owned compute), the currency, the month's accelerator-hours and the rate, still to the cent.
"""

from __future__ import annotations

import datetime as dt
import math

import openpyxl
import pytest
from test_handoff_budget import read_csv, run, with_references
from test_report_fixtures import APPROVAL, PLAN_A, PLAN_B, PLANNER

from udfs.schedule import short_usd

#: Approved with everything, priced as owned capacity, with a cost centre and a GL account.
COMPLETE = {**PLAN_B, **APPROVAL, "scenario_name": "Complete", "owner": "Team C",
            "budget_status": "Approved", "pricing_basis": "owned", "cost_centre": "CC-4100",
            "gl_account": "6420 Compute", "start_date": dt.datetime(2027, 2, 20)}  # fmt: skip
#: Typed Approved with a reference and a date, but no approver and no approved amount.
HALF = {**PLAN_A, "scenario_name": "Half approved", "owner": "Team H",
        "budget_status": "Approved", "approval_ref": "CFO-9",
        "approval_date": dt.datetime(2027, 1, 4), "cost_centre": "CC-4200",
        "start_date": dt.datetime(2027, 3, 1)}  # fmt: skip
#: Approved for US$1,000,000, which its P50 (about US$1.69M) is over; no start date.
OVER = {**PLAN_B, **APPROVAL, "scenario_name": "Over", "owner": "Team O",
        "budget_status": "Approved", "approved_amount_usd": 1_000_000,
        "start_date": None}  # fmt: skip
INCOMPLETE = "Proposed (approval incomplete)"


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def handoff(template, tmp_path_factory):
    d = tmp_path_factory.mktemp("approval")
    p = with_references(template, d / "team.xlsx", [COMPLETE, HALF, OVER])
    assert run(p, "--csv", d / "csv", "--out", d / "h.xlsx") == 0
    return d


def _by_scenario(folder, name):
    return {r["scenario"]: r for r in read_csv(folder, name)}


def _cents(text):
    return round(float(text) * 100)


def test_an_incomplete_approval_counts_as_proposed_on_a_line_of_its_own(handoff):
    folder = handoff / "csv"
    runs = _by_scenario(folder, "runs")
    assert runs["Half approved"]["budget_status"] == "Proposed"
    assert runs["Complete"]["budget_status"] == runs["Over"]["budget_status"] == "Approved"
    budget = _by_scenario(folder, "budget")
    assert budget["Half approved"]["budget_status"] == INCOMPLETE
    assert budget["Half approved"]["approval"] == "missing: approver, amount"
    assert budget["Complete"]["approval"] == "CFO-2027-01 (2027-01-04), CFO, $1.0B"
    assert budget["Complete"]["approver"] == "CFO"
    assert float(budget["Complete"]["approved_amount_usd"]) == 1e9
    lines = {r["budget_status"]: r for r in read_csv(folder, "status_totals")}
    assert list(lines) == ["Approved", "Proposed", INCOMPLETE]
    assert [lines[k]["runs"] for k in lines] == ["2", "0", "1"]
    half = _cents(budget["Half approved"]["total_cost_usd"])
    assert _cents(lines[INCOMPLETE]["total_cost_usd"]) == half
    totals = read_csv(folder, "totals")[0]
    assert _cents(totals["proposed_total_cost_usd"]) == half  # counted as Proposed
    approved = sum(_cents(budget[k]["total_cost_usd"]) for k in ("Complete", "Over"))
    assert _cents(totals["approved_total_cost_usd"]) == approved
    assert {r["status"] for r in read_csv(folder, "fpa") if r["cost_centre"] == "CC-4200"} == {
        "Proposed"
    }
    (warn,) = [c for c in read_csv(folder, "checks") if c["check"] == "Approval"]
    assert warn["status"] == "WARN" and "'Half approved'" in warn["detail"]
    assert "without its approver, amount (Inputs!" in warn["detail"], warn["detail"]
    assert f"counted as {INCOMPLETE}" in warn["detail"]


def test_the_budget_sheet_subtotals_the_incomplete_approvals_apart(handoff):
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    texts = [c.value for row in wb["Budget"].iter_rows() for c in row if c.value is not None]
    assert texts.index("Subtotal: Approved") < texts.index(f"Subtotal: {INCOMPLETE}")
    assert "missing: approver, amount" in texts
    summary = [c.value for row in wb["Summary"].iter_rows() for c in row if c.value is not None]
    assert INCOMPLETE in summary  # page 1's budget by status has the line


def test_a_p50_over_the_approved_amount_is_a_warn_with_the_difference(handoff):
    folder = handoff / "csv"
    budget = _by_scenario(folder, "budget")
    over = [c for c in read_csv(folder, "checks") if c["check"] == "Within the approved amount"]
    (warn,) = over  # Complete is within its amount: no line
    assert warn["status"] == "WARN" and "'Over'" in warn["detail"]
    difference = _cents(budget["Over"]["total_cost_usd"]) - 100_000_000
    assert difference > 0
    assert f"by US$ {difference / 100:,.2f}" in warn["detail"], warn["detail"]
    assert "approved amount US$ 1,000,000.00" in warn["detail"]
    # the difference and the run lead: page 1 shows the line's first words
    assert warn["detail"].startswith(f"{short_usd(difference)} over in 'Over' (")


def test_page_one_leads_with_the_run_over_its_approved_amount_and_by_how_much(handoff):
    """Page 1's line for the check shows the difference and the run within its width, and
    comes first among the checks that need a look; the Approved figure's note says how much
    of it is over the approved amounts."""
    from workbook_templates.report.summary import _LOOK_CHARS

    budget = _by_scenario(handoff / "csv", "budget")
    difference = _cents(budget["Over"]["total_cost_usd"]) - 100_000_000
    ws = openpyxl.load_workbook(handoff / "h.xlsx")["Summary"]
    look = [r for r in ws.iter_rows(values_only=True) if r[1] in ("WARN", "ERROR") and r[2]]
    first = look[1][2]  # after the master check's own line
    assert first.startswith(f"Within the approved amount: {short_usd(difference)} over in "
                            "'Over'"), first  # fmt: skip
    assert len(first) <= _LOOK_CHARS
    approved = next(r for r in ws.iter_rows(values_only=True) if r[0] == "Approved")
    assert approved[2] == (f"P50, Approved runs; {short_usd(difference)} of it over the "
                           "approved amounts")  # fmt: skip


def test_the_budget_sheet_says_the_approver_the_amount_and_the_p50_over_it(handoff):
    budget = _by_scenario(handoff / "csv", "budget")
    difference = _cents(budget["Over"]["total_cost_usd"]) - 100_000_000
    over = f"CFO-2027-01 (2027-01-04), CFO, $1.0M; P50 {short_usd(difference)} over"
    assert budget["Over"]["approval"] == over
    ws = openpyxl.load_workbook(handoff / "h.xlsx")["Budget"]
    texts = {c.value for row in ws.iter_rows() for c in row}
    assert over in texts and "CFO-2027-01 (2027-01-04), CFO, $1.0B" in texts


def test_within_the_amount_and_complete_is_ok(template, tmp_path):
    p = with_references(template, tmp_path / "ok.xlsx", [COMPLETE])
    assert run(p, "--csv", tmp_path / "csv") == 0
    approval = [c for c in read_csv(tmp_path / "csv", "checks") if "pprov" in c["check"]]
    assert [(c["check"], c["status"]) for c in approval] == [("Approval", "OK")]


@pytest.mark.parametrize("amount", [0, -5, "lots"])
def test_an_approved_amount_not_above_zero_is_refused_at_its_cell(template, tmp_path, capsys,
                                                                  amount):  # fmt: skip
    p = with_references(template, tmp_path / "bad.xlsx",
                        [{**COMPLETE, "approved_amount_usd": amount}])  # fmt: skip
    assert run(p, "--csv", tmp_path / "csv") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Inputs!" in err and not (tmp_path / "csv").exists()
    assert "approved_amount_usd" in err or "Approved amount" in err, err


def test_fpa_carries_cost_centre_gl_account_expense_class_hours_and_rate(handoff):
    folder = handoff / "csv"
    rows = read_csv(folder, "fpa")
    runs = {r["run_code"]: r for r in read_csv(folder, "runs")}
    assert {r["currency"] for r in rows} == {"USD"}
    for run_code, r in runs.items():
        mine = [x for x in rows if x["run_code"] == run_code]
        owned = r["scenario"] == "Complete"
        for x in mine:
            assert x["cost_centre"] == (r["cost_centre"] or "")
            coded = owned and x["account"] == "compute"  # the GL account is compute's
            assert x["gl_account"] == ("6420 Compute" if coded else "")
            want = "capex" if owned and x["account"] == "compute" else "opex"
            assert x["expense_class"] == want, (r["scenario"], x["account"])
        compute = [x for x in mine if x["account"] == "compute"]
        assert all(x["accelerator_hours"] == x["rate"] == "" for x in mine
                   if x["account"] != "compute")  # fmt: skip
        hours = sum(float(x["accelerator_hours"]) for x in compute)
        assert math.isclose(hours, float(r["accelerator_hours"]), rel_tol=1e-12)
        price = float(r["usd_per_accelerator_hour"])
        for x in compute:  # hours x rate is the month's compute to the cent
            assert float(x["rate"]) == price
            assert abs(float(x["accelerator_hours"]) * price - float(x["p50_usd"])) <= 0.0101
    totals = read_csv(folder, "totals")[0]
    assert sum(_cents(x["p50_usd"]) for x in rows) == _cents(totals["total_cost_usd"])
    assert sum(_cents(x["p90_usd"]) for x in rows) == _cents(totals["total_cost_usd_p90"])
    months = [x for x in rows if x["cost_centre"] == "CC-4200" and x["account"] == "compute"]
    assert len(months) > 1 and all(x["month"] for x in months)  # split over the schedule


def test_the_gl_account_typed_is_the_compute_account_only(handoff):
    """An owned run's electricity is opex: it never carries the compute account ("6420
    Compute", capex); electricity and other rows are left blank for FP&A to code."""
    rows = [x for x in read_csv(handoff / "csv", "fpa") if x["cost_centre"] == "CC-4100"]
    by_account = {}
    for x in rows:
        by_account.setdefault(x["account"], set()).add((x["gl_account"], x["expense_class"]))
    assert by_account == {"compute": {("6420 Compute", "capex")},
                          "electricity": {("", "opex")}, "other": {("", "opex")}}  # fmt: skip


def test_a_budget_run_without_its_fpa_codes_is_a_warn_naming_the_cells(handoff):
    checks = [c for c in read_csv(handoff / "csv", "checks") if c["check"] == "FP&A codes"]
    (check,) = checks  # one line for the file, each run's cells in it
    assert check["status"] == "WARN"
    details = {part.split("'")[1]: part for part in check["detail"].split("; ")}
    assert set(details) == {"Half approved", "Over"}  # Complete has both codes
    assert "no GL account (Inputs!" in details["Half approved"]
    assert "Cost centre" not in details["Half approved"]
    assert "no Cost centre (Inputs!" in details["Over"] and "GL account (Inputs!" in details["Over"]


def test_with_both_codes_the_fpa_check_is_ok(template, tmp_path):
    p = with_references(template, tmp_path / "ok.xlsx", [COMPLETE])
    assert run(p, "--csv", tmp_path / "csv") == 0
    checks = [c for c in read_csv(tmp_path / "csv", "checks") if c["check"] == "FP&A codes"]
    assert [c["status"] for c in checks] == ["OK"]


def test_the_p90_run_has_its_hours_in_every_month_it_spends(handoff):
    """A month where only the P90 run spends (after the P50 run ended) has accelerator_hours
    0 and its P90 hours in accelerator_hours_p90, which add up to the run's P90 hours."""
    folder = handoff / "csv"
    ranges = {r["run_code"]: r for r in read_csv(folder, "ranges")}
    compute = [x for x in read_csv(folder, "fpa") if x["account"] == "compute"]
    tail = 0
    for code, r in ranges.items():
        mine = [x for x in compute if x["run_code"] == code]
        p90 = sum(float(x["accelerator_hours_p90"]) for x in mine)
        assert math.isclose(p90, float(r["accelerator_hours_p90"]), rel_tol=1e-12), code
        for x in mine:
            assert (float(x["accelerator_hours_p90"]) > 0) == (float(x["p90_usd"]) > 0)
            tail += float(x["accelerator_hours"]) == 0 and float(x["p90_usd"]) > 0
    assert tail  # some month is the P90 run's only
    others = [x for x in read_csv(folder, "fpa") if x["account"] != "compute"]
    assert {x["accelerator_hours_p90"] for x in others} == {""}


def test_the_data_dictionary_explains_each_new_column(handoff):
    readme = (handoff / "csv" / "README.txt").read_text(encoding="utf-8")
    fpa = readme.split("fpa.csv: ")[1].split("\n\n")[0]
    for col, words in (("cost_centre", "cost centre"), ("gl_account", "general-ledger"),
                       ("expense_class", "capex"), ("currency", "USD"),
                       ("accelerator_hours", "P50 accelerator-hours in the month"),
                       ("rate", "US$ per accelerator-hour")):  # fmt: skip
        (line,) = [x for x in fpa.splitlines() if x.startswith(f"  {col}: ")]
        assert words in line, line
    budget = readme.split("budget.csv: ")[1].split("\n\n")[0]
    for col in ("approver", "approved_amount_usd", "cost_centre"):
        assert f"\n  {col}: " in budget, col


def test_an_older_planner_without_the_new_rows_reads_and_keeps_its_run_codes(template, tmp_path):
    plans = [{**HALF, "cost_centre": None}, {**PLAN_B, "budget_status": "Proposed"}]
    new = with_references(template, tmp_path / "new.xlsx", plans)
    old = with_references(template, tmp_path / "old.xlsx", plans)
    wb = openpyxl.load_workbook(old)
    for name in ("approver", "approved_amount_usd", "cost_centre", "gl_account"):
        del wb.defined_names[name]
    wb.save(old)
    assert run(old, "--csv", tmp_path / "old") == 0
    assert run(new, "--csv", tmp_path / "new") == 0
    ids = {r["scenario"]: r["run_code"] for r in read_csv(tmp_path / "old", "budget")}
    again = {r["scenario"]: r["run_code"] for r in read_csv(tmp_path / "new", "budget")}
    assert ids[PLAN_B["scenario_name"]] == again[PLAN_B["scenario_name"]]
    (warn,) = [c for c in read_csv(tmp_path / "old", "checks") if c["check"] == "Approval"]
    assert "an older planner, without these rows" in warn["detail"], warn["detail"]
    budget = _by_scenario(tmp_path / "old", "budget")
    assert budget["Half approved"]["budget_status"] == INCOMPLETE


def test_an_approved_amount_past_what_a_baseline_reads_is_refused(template, tmp_path, capsys):
    """An approved amount of US$1e13, which a hand-off read by ``report --baseline`` could not
    hold to the cent, is refused at its cell, nothing written; the largest amount under the
    bound makes a hand-off that serves as a baseline."""
    from compute_lab.cli import main

    huge = {**COMPLETE, "approved_amount_usd": 1e13}
    p = with_references(template, tmp_path / "huge.xlsx", [huge])
    assert main(["report", str(p), "--csv", str(tmp_path / "c"),
                 "--out", str(tmp_path / "h.xlsx")]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Inputs!" in err and "Approved amount" in err, err
    assert "(got 10,000,000,000,000.00)" in err, err
    assert not (tmp_path / "c").exists() and not (tmp_path / "h.xlsx").exists()
    top = {**COMPLETE, "approved_amount_usd": 9_999_999_999_999.99}
    p = with_references(template, tmp_path / "top.xlsx", [top])
    assert run(p, "--csv", tmp_path / "c", "--out", tmp_path / "h.xlsx") == 0
    assert run(p, "--csv", tmp_path / "c2", "--out", tmp_path / "h2.xlsx",
               "--baseline", tmp_path / "h.xlsx") == 0  # fmt: skip
