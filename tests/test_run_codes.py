"""Run codes, versions and a baseline: the key a user owns for each run survives every edit
of the plan; a hand-off carries its version label; an earlier hand-off is compared per run and
month, an Approved run keeping its approved amount."""

from __future__ import annotations

import datetime as dt
import shutil

import openpyxl
import pytest
from test_finance_handoff import EARLY, LATE
from test_handoff_budget import read_csv, run, with_references
from test_report_fixtures import PLANNER

from compute_lab.cli import main
from workbook_templates import report
from workbook_templates.baseline import BaselineError, read_baseline
from workbook_templates.run_codes import derive_run_code


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


def _cents(text):
    return round(float(text or 0) * 100)


def _codes(folder):
    return {r["scenario"]: r["run_code"] for r in read_csv(folder, "budget")}


def _checks(folder, check):
    return [c for c in read_csv(folder, "checks") if c["check"] == check]


def test_a_run_code_survives_approval_a_slipped_start_and_a_new_price(template, tmp_path):
    proposed = {**LATE, "run_code": "LATE-2027"}
    p = with_references(template, tmp_path / "before.xlsx", [EARLY, proposed])
    assert run(p, "--csv", tmp_path / "before") == 0
    edited = [{**EARLY, "budget_status": "Proposed", "usd_per_accelerator_hour": 3.1},
              {**proposed, "budget_status": "Approved", "approval_ref": "CFO-7",
               "approval_date": dt.datetime(2027, 2, 1), "start_date": dt.datetime(2028, 1, 1),
               "usd_per_accelerator_hour": 2.6, "training_tokens": 16e12}]  # fmt: skip
    q = with_references(template, tmp_path / "after.xlsx", edited)
    assert run(q, "--csv", tmp_path / "after") == 0
    before, after = _codes(tmp_path / "before"), _codes(tmp_path / "after")
    assert before == after == {"Early": derive_run_code("Team E", "Early"), "Late": "LATE-2027"}
    assert before["Early"] == "TEAM-E-EARLY"  # from the owner and the name, never the inputs
    fingerprints = [{r["run_code"]: r["plan_fingerprint"] for r in read_csv(tmp_path / d, "runs")}
                    for d in ("before", "after")]  # fmt: skip
    assert fingerprints[0]["LATE-2027"] != fingerprints[1]["LATE-2027"]  # the plan did change
    assert {r["run_code"] for r in read_csv(tmp_path / "after", "fpa")} == set(after.values())


def test_a_derived_run_code_is_a_warn_naming_the_cell(template, tmp_path):
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, {**LATE, "run_code": "L-1"}])
    assert run(p, "--csv", tmp_path / "csv") == 0
    warns = [c for c in _checks(tmp_path / "csv", "Run codes") if c["status"] == "WARN"]
    assert len(warns) == 1
    detail = warns[0]["detail"]
    assert "'Early'" in detail and "Inputs!G5" in detail and "'TEAM-E-EARLY'" in detail
    runs = {r["run_code"]: r["run_code_derived"] for r in read_csv(tmp_path / "csv", "runs")}
    assert runs == {"TEAM-E-EARLY": "yes", "L-1": "no"}


def test_a_typed_run_code_breaking_the_rule_is_refused_at_its_cell(template, tmp_path, capsys):
    p = with_references(template, tmp_path / "team.xlsx", [{**EARLY, "run_code": "bad code!"}])
    assert run(p, "--csv", tmp_path / "csv") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "Inputs!G5" in err and "run_code (Run code)" in err and "'bad code!'" in err


def test_one_run_code_in_two_files_is_an_error_naming_both_files_and_columns(template, tmp_path,
                                                                            capsys):  # fmt: skip
    a = with_references(template, tmp_path / "a.xlsx", [{**EARLY, "run_code": "SHARED-1"}])
    b = with_references(template, tmp_path / "b.xlsx",
                        [{**LATE, "run_code": "SHARED-1"}, {**LATE, "scenario_name": "Other",
                                                           "run_code": "OTHER-1"}])  # fmt: skip
    assert run(a, b, "--csv", tmp_path / "csv") == 0
    errors = [c for c in _checks(tmp_path / "csv", "Run codes") if c["status"] == "ERROR"]
    assert len(errors) == 1
    detail = errors[0]["detail"]
    assert f"{a} column G (scenario 'Early')" in detail
    assert f"{b} column G (scenario 'Late')" in detail and "'SHARED-1'" in detail
    assert "error: Run codes: run code 'SHARED-1'" in capsys.readouterr().err
    totals = read_csv(tmp_path / "csv", "checks")
    assert any(c["status"] == "ERROR" for c in totals)


def test_the_version_is_in_every_csv_row_the_dictionary_and_page_1(template, tmp_path):
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, LATE])
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx",
               "--version", "  Budget FY2027 ") == 0  # fmt: skip
    for name in report.CSV_FILES:
        rows = read_csv(tmp_path / "csv", name)
        assert all(r["version"] == "Budget FY2027" for r in rows), name
    assert "Version: Budget FY2027" in (tmp_path / "csv" / "README.txt").read_text()
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Summary"]
    texts = [c.value for row in ws.iter_rows(max_row=6) for c in row if isinstance(c.value, str)]
    assert "Version: Budget FY2027." in texts


@pytest.mark.parametrize("label", ["", " ", "x" * 61, "Budget\nFY2027"])
def test_a_bad_version_label_is_refused_in_one_line(template, tmp_path, capsys, label):
    assert main(["report", str(template), "--csv", str(tmp_path / "csv"), "--version", label]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--version must be a label" in err
    assert not (tmp_path / "csv").exists()


@pytest.fixture(scope="module")
def baseline(template, tmp_path_factory):
    """A baseline hand-off: Early Approved, Late Proposed, "Gone" Proposed."""
    d = tmp_path_factory.mktemp("baseline")
    gone = {**LATE, "scenario_name": "Gone", "start_date": dt.datetime(2027, 5, 1)}
    p = with_references(template, d / "team.xlsx", [EARLY, LATE, gone])
    assert run(p, "--csv", d / "csv", "--version", "Budget FY2027") == 0
    return d / "csv"


def test_the_baseline_comparison_ties_to_the_cent(template, baseline, tmp_path):
    new = {**LATE, "scenario_name": "New", "start_date": dt.datetime(2027, 9, 1)}
    later = {**LATE, "start_date": dt.datetime(2027, 12, 1), "usd_per_accelerator_hour": 2.25}
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, later, new])
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx", "--baseline", baseline,
               "--version", "Forecast 2027-Q2") == 0  # fmt: skip
    rows = read_csv(tmp_path / "csv", "baseline")
    assert {r["version"] for r in rows} == {"Forecast 2027-Q2"}
    assert {r["baseline_version"] for r in rows} == {"Budget FY2027"}
    base_fpa, now_fpa = read_csv(baseline, "fpa"), read_csv(tmp_path / "csv", "fpa")
    base_runs = read_csv(baseline, "runs")
    for code in {r["run_code"] for r in rows}:
        mine = [r for r in rows if r["run_code"] == code]
        months = [r for r in mine if r["line"] != "run total"]
        (total,) = [r for r in mine if r["line"] == "run total"]
        for r in months:  # per month: the baseline's fpa rows and this hand-off's, to the cent
            was = sum(_cents(x["p50_usd"]) for x in base_fpa
                      if x["run_code"] == code and x["month"] == r["month"])  # fmt: skip
            now = sum(_cents(x["p50_usd"]) for x in now_fpa
                      if x["run_code"] == code and x["month"] == r["month"])  # fmt: skip
            assert (_cents(r["baseline_p50_usd"]), _cents(r["p50_usd"])) == (was, now)
            assert _cents(r["change_usd"]) == now - was
        approved = [x.get("approved_amount_usd") for x in base_runs
                    if x["run_code"] == code and x.get("budget_status") == "Approved"]  # fmt: skip
        # an Approved run keeps its approved amount, in a column of its own
        assert _cents(total["baseline_approved_usd"]) == _cents(approved[0] if approved else 0)
        assert total["baseline_approved_usd"] or not approved
        assert not any(r["baseline_approved_usd"] for r in months)
        assert _cents(total["baseline_p50_usd"]) == sum(
            _cents(x["p50_usd"]) for x in base_fpa if x["run_code"] == code)  # fmt: skip
        assert _cents(total["p50_usd"]) == sum(_cents(r["p50_usd"]) for r in months)
        assert _cents(total["change_usd"]) == _cents(total["p50_usd"]) - _cents(
            total["baseline_p50_usd"])  # fmt: skip
    totals = {r["run_code"]: r for r in rows if r["line"] == "run total"}
    assert totals["TEAM-L-NEW"]["change"] == "new run"
    assert totals["TEAM-L-GONE"]["change"] == "not in this hand-off"
    assert totals["TEAM-L-LATE"]["change"] == (
        "Price per accelerator-hour 2 -> 2.25; Run start date '2027-11-01' -> '2027-12-01'"
    )
    assert not totals["TEAM-E-EARLY"]["change"]
    assert "Baseline" in openpyxl.load_workbook(tmp_path / "h.xlsx").sheetnames


def test_a_changed_plan_of_an_approved_run_is_a_warn_never_a_silent_repricing(template, baseline,
                                                                             tmp_path):  # fmt: skip
    repriced = {**EARLY, "usd_per_accelerator_hour": 2.75}
    p = with_references(template, tmp_path / "team.xlsx", [repriced, LATE])
    assert run(p, "--csv", tmp_path / "csv", "--baseline", baseline) == 0
    was = round(EARLY["approved_amount_usd"] * 100)  # the planner's approved amount
    (total,) = [r for r in read_csv(tmp_path / "csv", "baseline")
                if r["run_code"] == "TEAM-E-EARLY" and r["line"] == "run total"]  # fmt: skip
    assert _cents(total["baseline_approved_usd"]) == was  # the approved amount stays
    base = sum(_cents(x["p50_usd"]) for x in read_csv(baseline, "fpa")
               if x["run_code"] == "TEAM-E-EARLY")  # fmt: skip
    assert _cents(total["baseline_p50_usd"]) == base  # the change: P50 against P50
    now_p50 = _cents(total["p50_usd"])
    assert _cents(total["change_usd"]) == now_p50 - base > 0
    warns = [c["detail"] for c in _checks(tmp_path / "csv", "Baseline") if c["status"] == "WARN"]
    (early,) = [w for w in warns if "'TEAM-E-EARLY'" in w]
    assert "was Approved at US$" in early and "Price per accelerator-hour" in early
    assert f"{was / 100:,.2f}" in early and f"its P50 then US$ {base / 100:,.2f}" in early
    assert f"US$ {(was - now_p50) / 100:,.2f} under the approved amount" in early
    assert not [w for w in warns if "TEAM-L-LATE" in w]  # Proposed: compared, not warned


def test_an_unchanged_approved_run_is_not_warned(template, baseline, tmp_path):
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, LATE])
    assert run(p, "--csv", tmp_path / "csv", "--baseline", baseline) == 0
    warns = [c for c in _checks(tmp_path / "csv", "Baseline") if c["status"] == "WARN"]
    assert [w["detail"][:22] for w in warns] == []


def test_an_unchanged_approved_run_has_no_change_and_shows_its_approved_amount_apart(
        template, baseline, tmp_path):  # fmt: skip
    """Every row of an unchanged run, its run total too, compares P50 with P50 ($0); the
    approved amount is a column of its own, on the run total row, on the sheet and in the
    CSV."""
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, LATE])
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx",
               "--baseline", baseline) == 0  # fmt: skip
    rows = [r for r in read_csv(tmp_path / "csv", "baseline") if r["run_code"] == "TEAM-E-EARLY"]
    assert rows and {_cents(r["change_usd"]) for r in rows} == {0}
    (total,) = [r for r in rows if r["line"] == "run total"]
    assert not total["change"]
    assert _cents(total["baseline_p50_usd"]) == _cents(total["p50_usd"]) > 0
    assert _cents(total["baseline_approved_usd"]) == round(EARLY["approved_amount_usd"] * 100)
    assert _cents(total["baseline_approved_usd"]) != _cents(total["p50_usd"])
    readme = (tmp_path / "csv" / "README.txt").read_text()
    assert "  baseline_approved_usd: US$, on the run total row of a run Approved" in readme
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Baseline"]
    table = ws.tables["baseline"]
    grid = [[c.value for c in row] for row in ws[table.ref]]
    head = grid[0]
    assert "Approved in the baseline (US$)" in head
    early = [dict(zip(head, row, strict=True)) for row in grid[1:] if row[0] == "TEAM-E-EARLY"]
    assert early and [r["Change in P50 (US$)"] for r in early] == [0] * len(early)
    (sheet_total,) = [r for r in early if r["Line"] == "run total"]
    assert sheet_total["Approved in the baseline (US$)"] == EARLY["approved_amount_usd"]


@pytest.mark.parametrize(("file", "column", "value", "says"), [
    ("fpa.csv", "month", "2027-13-01", "is not the first day of a month"),
    ("fpa.csv", "p50_usd", "12.345", "is not US$ to the cent"),
    ("fpa.csv", "p50_usd", "1e+20", "is not US$ to the cent"),
    ("fpa.csv", "run_code", "=HYPERLINK()", "is not a run code"),
    ("runs.csv", "budget_status", "ok\x07", "control character"),
])  # fmt: skip
def test_a_bad_baseline_is_refused_in_one_line_naming_file_row_and_column(
        template, baseline, tmp_path, capsys, file, column, value, says):  # fmt: skip
    bad = tmp_path / "bad"
    shutil.copytree(baseline, bad)
    import csv

    with open(bad / file, encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[2][rows[0].index(column)] = value
    with open(bad / file, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    with pytest.raises(BaselineError) as err:
        read_baseline(bad)
    assert str(err.value).startswith(f"{bad / file}: row 3, column {column}: ")
    assert says in str(err.value)
    assert (
        main(["report", str(template), "--csv", str(tmp_path / "csv"), "--baseline", str(bad)]) == 2
    )
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1 and f"--baseline: {bad / file}: row 3" in line
    assert not (tmp_path / "csv").exists()


def test_a_baseline_that_is_not_a_handoff_folder_is_refused(tmp_path):
    (tmp_path / "fpa.csv").write_text("run_id,month\nR-1,2027-01-01\n", encoding="utf-8")
    with pytest.raises(BaselineError, match=r"row 1: no column run_code, account, p50_usd"):
        read_baseline(tmp_path)
    with pytest.raises(BaselineError, match="no such folder"):
        read_baseline(tmp_path / "missing")
    with pytest.raises(BaselineError, match="no such file"):
        read_baseline(tmp_path / "handoff.xlsx")


def test_an_older_planner_without_the_run_code_row_still_reads(template, tmp_path):
    p = with_references(template, tmp_path / "team.xlsx", [EARLY])
    wb = openpyxl.load_workbook(p)
    del wb.defined_names["run_code"]
    wb.save(p)
    c = report.consolidate([p])
    assert not c.bad and "run_code" in c.planners[0].missing_optional
    (early,) = c.budget_runs
    assert (early.run_code, early.run_code_derived) == ("TEAM-E-EARLY", True)
    (warn,) = [x for x in c.tables["checks"].to_dict("records") if x["check"] == "Run codes"]
    assert "no Run code row (an older planner)" in warn["detail"]


def test_estimate_carries_a_run_code_and_refuses_a_bad_one(capsys):
    import json

    assert main(["estimate", "--run-code", "TEAM-A-70B-2027", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["plan_inputs"]["run_code"] == "TEAM-A-70B-2027"
    assert main(["estimate", "--run-code", "TEAM-A-70B-2027"]) == 0
    assert capsys.readouterr().out.rstrip("\n").splitlines()[-1] == "Run code: TEAM-A-70B-2027"
    assert main(["estimate", "--run-code", "team a"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--run-code must be a run code" in err


def test_a_derived_code_never_reads_the_plan():
    assert derive_run_code("Team A", "Team A: 70B dense") == "TEAM-A-70B-DENSE"
    assert derive_run_code("Research", "Llama 3.1 405B-like") == "RESEARCH-LLAMA-3-1-405B-LIKE"
    assert derive_run_code(None, "") == "RUN"
    assert len(derive_run_code("x" * 100, "y" * 100)) == 40
