"""Actuals of several files joined to the plan's runs: FOCUS exports of different billing
periods (a correction billed a period later) are summed into the month they charge, two
exports of one billing period are refused, and a run code no plan has never moves the month
the actuals run to (a mistyped future month of it is refused)."""

from __future__ import annotations

import datetime as dt
import json

import openpyxl
import pytest
from test_handoff_budget import read_csv, run

from workbook_templates import actuals as act

HEADER = ("BillingCurrency,BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,"
          "ChargeClass,BilledCost,EffectiveCost,PricingQuantity,PricingUnit,Tags")  # fmt: skip
PLAIN_HEADER = "run_code,month,accelerator_hours,cost_usd,tokens_processed"
#: The example plan's run code and its first month (its P90 run: March to April 2027).
CODE = "TEAM-A-70B-2027"
MARCH, APRIL = dt.date(2027, 3, 1), dt.date(2027, 4, 1)
RUNS = {CODE: (MARCH, APRIL)}


def _row(billing, day, cost, hours, category="Usage", cls="", code=CODE):
    """A FOCUS row of one day's charge for ``code``, billed in the period starting
    ``billing`` (YYYY-MM)."""
    tags = '"' + json.dumps({"compute-lab-run": code}).replace('"', '""') + '"'
    end = dt.date.fromisoformat(day) + dt.timedelta(days=1)
    return (f"USD,{billing}-01T00:00:00Z,{day}T00:00:00Z,{end}T00:00:00Z,{category},{cls},"
            f"{cost},{cost},{hours},Hours,{tags}")  # fmt: skip


def _write(path, *rows, header=HEADER):
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def _join(paths, runs=RUNS, today=MARCH):
    return act.join_actuals(act.read_actuals(paths), runs, today=today)


def _refused(paths, runs=RUNS, today=MARCH):
    with pytest.raises(act.ActualsError) as err:
        _join(paths, runs, today)
    return err.value.lines


def _exports(tmp_path):
    """March's export (March usage) and April's (April usage and a correction of March)."""
    march = _write(tmp_path / "focus-2027-03.csv", _row("2027-03", "2027-03-10", "1000", "10"),
                   _row("2027-03", "2027-03-11", "500.50", "5"))  # fmt: skip
    april = _write(tmp_path / "focus-2027-04.csv", _row("2027-04", "2027-04-02", "700", "7"),
                   _row("2027-04", "2027-03-10", "-100.25", "-1", "Adjustment",
                        "Correction"))  # fmt: skip
    return march, april


def test_a_correction_billed_a_month_later_lands_in_the_month_it_corrects(tmp_path):
    """The April export's correction of March adds to March: exports of two billing periods
    are summed, not refused as the month given twice."""
    march, april = _exports(tmp_path)
    a = _join([march, april])
    by_month = {m.month: m for m in a.months}
    assert by_month[MARCH].cost_cents == 100_000 + 50_050 - 10_025
    assert by_month[MARCH].accelerator_hours == 15  # an Adjustment row adds no hours
    assert by_month[APRIL].cost_cents == 70_000
    assert f"{march} row 2 and 1 more" in by_month[MARCH].source
    assert f"{april} row 3" in by_month[MARCH].source
    # the order the files are given in changes nothing
    b = {m.month: m.cost_cents for m in _join([april, march]).months}
    assert b == {m: x.cost_cents for m, x in by_month.items()}


def test_a_correction_may_take_back_hours_of_another_export_but_never_below_zero(tmp_path):
    march = _write(tmp_path / "m.csv", _row("2027-03", "2027-03-10", "1000", "10"))
    april = _write(tmp_path / "a.csv", _row("2027-04", "2027-03-10", "-1000", "-10",
                                            "Usage", "Correction"))  # fmt: skip
    (m,) = _join([march, april]).months
    assert (m.cost_cents, m.accelerator_hours) == (0, 0)
    more = _write(tmp_path / "b.csv", _row("2027-04", "2027-03-10", "-1000", "-12",
                                           "Usage", "Correction"))  # fmt: skip
    (line,) = _refused([march, more])
    assert line == (
        f"{march}: row 2, column PricingQuantity: run {CODE}'s hours in 2027-03 come "
        "to -2, below 0 (its corrections take back more than its usage rows give)"
    )


def test_two_exports_of_one_billing_period_are_refused_naming_both_files_and_rows(tmp_path):
    """The same month's export given twice with different bytes (a re-export) would count
    its spend twice."""
    march, _ = _exports(tmp_path)
    again = _write(tmp_path / "focus-2027-03-again.csv",
                   _row("2027-03", "2027-03-12", "1", "0"),
                   _row("2027-03", "2027-03-10", "1000", "10"))  # fmt: skip
    (line,) = _refused([march, again])
    assert line == (
        f"{again}: row 2, column BillingPeriodStart: {CODE} 2027-03 is given by two "
        "FOCUS exports of the billing period starting 2027-03-01 (first in "
        f"{march} row 2): the same export given twice? each billing period's "
        "export once"
    )


def test_exports_without_a_billing_period_and_a_plain_file_with_an_export_are_refused(
    tmp_path,
):
    header = HEADER.replace("BillingPeriodStart,", "")
    strip = lambda r: r.replace("USD,2027-03-01T00:00:00Z,", "USD,", 1)  # noqa: E731
    a = _write(tmp_path / "a.csv", strip(_row("2027-03", "2027-03-10", "1", "1")), header=header)
    b = _write(tmp_path / "b.csv", strip(_row("2027-03", "2027-03-11", "2", "1")), header=header)
    (line,) = _refused([a, b])
    assert line.startswith(f"{b}: row 2, column ChargePeriodStart: {CODE} 2027-03 is given by "
                           f"two FOCUS exports (first in {a} row 2) and one has no "
                           "BillingPeriodStart column")  # fmt: skip
    march, _ = _exports(tmp_path)
    plain = _write(tmp_path / "p.csv", f"{CODE},2027-03,10,1000,", header=PLAIN_HEADER)
    (line,) = _refused([march, plain])
    assert line == (
        f"{plain}: row 2, column month: {CODE} 2027-03 is given twice (first in "
        f"{march} row 2): each run's month once"
    )


def test_a_zero_purchase_row_gives_its_run_no_month(tmp_path):
    """A commitment's purchase tagged with the run (EffectiveCost 0) gives the run no actual
    month: its term's months are neither locked at nothing spent nor refused as outside
    the run."""
    purchase = _row("2027-03", "2027-03-01", "0", "0", "Purchase").replace(
        "2027-03-02T00:00:00Z", "2028-03-01T00:00:00Z")  # fmt: skip
    f = _write(tmp_path / "f.csv", _row("2027-03", "2027-03-10", "1000", "10"), purchase)
    assert [m.month for m in _join([f]).months] == [MARCH]


def test_a_mistyped_future_month_of_an_unplanned_run_is_refused(tmp_path):
    """TEAM-X 2031-01 in a file of 2027 months is refused, naming file, row and column: it
    never makes the actuals run to Jan 2031 for every run."""
    f = _write(tmp_path / "p.csv", f"{CODE},2027-03,10,1000,", "TEAM-X,2031-01,1,5,",
               header=PLAIN_HEADER)  # fmt: skip
    (line,) = _refused([f], today=dt.date(2026, 12, 7))
    assert line == (
        f"{f}: row 3, column month: 2031-01 is after this month (2026-12) and every "
        "budget run's last month (2027-04), and run code TEAM-X is in no budget "
        "run: a mistyped month? (actuals are for months that have begun)"
    )
    (u,) = _join([f], today=dt.date(2031, 1, 15)).unplanned  # in January 2031 it may be
    assert u.month == dt.date(2031, 1, 1)


def test_unplanned_spend_never_moves_the_month_the_actuals_run_to(example_plan, tmp_path,
                                                                   capsys):  # fmt: skip
    """Another team's April spend leaves the example run's actuals at March: its April is not
    counted as nothing spent."""
    f = _write(tmp_path / "p.csv", f"{CODE},2027-03,700000,1435000.00,", "TEAM-X,2027-04,1,5,",
               header=PLAIN_HEADER)  # fmt: skip
    out = tmp_path / "csv"
    assert run(example_plan, "--actuals", f, "--csv", out) == 0
    printed = capsys.readouterr()
    assert "Actuals to Mar 2027: $1,435,000 spent" in printed.out
    assert "unplanned spend $5 on run codes" in printed.out
    assert "TEAM-X is in no budget run" in printed.err
    variance = read_csv(out, "variance")
    assert {r["month"] for r in variance if r["scenario"] == "variance"} == {"2027-03-01"}


def test_only_unplanned_spend_is_said_as_such(example_plan, tmp_path, capsys):
    f = _write(tmp_path / "p.csv", "TEAM-X,2027-04,1,5,", header=PLAIN_HEADER)
    out = tmp_path / "h.xlsx"
    assert run(example_plan, "--actuals", f, "--out", out) == 0
    said = ("Actuals: no budget run's month of spend in the files given; unplanned spend $5 "
            "on run codes no budget run has.")  # fmt: skip
    assert said in capsys.readouterr().out
    ws = openpyxl.load_workbook(out)["Summary"]
    page_one = " ".join(str(c.value) for row in ws.iter_rows() for c in row if c.value)
    assert f"{said} See the Variance sheet." in " ".join(page_one.split())


def test_exports_of_two_billing_periods_through_the_report(example_plan, tmp_path, capsys):
    march, april = _exports(tmp_path)
    assert run(example_plan, "--actuals", march, april, "--csv", tmp_path / "csv") == 0
    assert "Actuals to Apr 2027: $2,100 spent" in capsys.readouterr().out


def test_a_month_of_corrections_alone_is_a_warning_naming_the_file_row_and_column(
    example_plan, tmp_path, capsys
):
    """April's export alone gives the run a March of its correction only ($-100.25): a warning
    names the file, row and column and says the March export is not given."""
    _, april = _exports(tmp_path)
    a = _join([april])
    (m,) = [m for m in a.months if m.month == MARCH]
    assert m.cost_cents == -10_025
    want = (f"row 3, column ChargeClass: run {CODE}'s 2027-03 is only Correction rows "
            "($-100.25): the export of the billing period they correct is not given, so the "
            "month is the correction alone; give that export too")  # fmt: skip
    assert a.warnings == [(str(april), want)]
    march, _ = _exports(tmp_path)
    assert _join([march, april]).warnings == []
    assert run(example_plan, "--actuals", april, "--csv", tmp_path / "csv") == 0
    assert f"warning: {april}: Actuals: {want}" in capsys.readouterr().err
    checks = read_csv(tmp_path / "csv", "checks")
    assert [r["status"] for r in checks if r["check"] == "Actuals"] == ["WARN"]


def test_months_filled_ahead_with_zeros_are_a_warning(example_plan, tmp_path, capsys):
    """A plain file filled ahead with zero rows (April: 0 hours, $0) makes the actuals run to
    April with a warning naming the file and row."""
    f = _write(tmp_path / "p.csv", f"{CODE},2027-03,700000,1435000.00,", f"{CODE},2027-04,0,0,",
               header=PLAIN_HEADER)  # fmt: skip
    want = (f"row 3, column cost_usd: run {CODE}'s 2027-04 to 2027-04 (1 month(s)) give 0 hours, "
            "$0, no tokens and no status after its last month with any (2027-03): placeholders? "
            "they count as months with nothing used and make the actuals run to Apr 2027; leave "
            "a month out until it is spent")  # fmt: skip
    assert _join([f]).warnings == [(str(f), want)]
    assert run(example_plan, "--actuals", f, "--csv", tmp_path / "csv") == 0
    assert f"warning: {f}: Actuals: {want}" in capsys.readouterr().err
    said = _write(tmp_path / "q.csv", f"{CODE},2027-03,700000,1435000.00,,running",
                  f"{CODE},2027-04,0,0,,completed", header=PLAIN_HEADER + ",status")  # fmt: skip
    assert _join([said]).warnings == []


@pytest.mark.parametrize("column", ["BillingPeriodStart", "ChargePeriodStart"])
def test_a_blank_focus_time_is_refused_as_blank(tmp_path, column):
    """A blank BillingPeriodStart (or ChargePeriodStart) is refused as blank, not as a value
    the file does not hold."""
    fields = HEADER.split(",")
    row = _row("2027-03", "2027-03-10", "1000", "10").split(",")
    row[fields.index(column)] = ""
    f = _write(tmp_path / "f.csv", ",".join(row))
    lines = _refused([f])
    assert lines[0] == (f"{f}: row 2, column {column}: is blank, not a UTC time "
                        "(YYYY-MM-DDTHH:mm:ssZ, 1970 to 2199)")  # fmt: skip
    assert not [line for line in lines if "None" in line]
