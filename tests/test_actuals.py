"""Plan against actual: the actuals readers (plain CSV, FOCUS export), the variance and its
parts to the cent, and ``report --actuals`` (the Variance sheet, variance.csv, refusals).

The sample files are in tests/data/actuals/: ``focus-1.2-team-a.csv``, a FOCUS 1.2 export of
the example plan's run (Tags JSON, a commitment-covered row with its purchase and unused part,
a row across two months, a credit, tax, untagged storage, another team's run), and
``plain-team-a.csv``, the same spend as a plain actuals file.
"""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_handoff_budget import read_csv, run

from udfs import schedule
from udfs.variance import PARTS, ActualPoint, PlanMonth, run_variance
from workbook_templates import actuals as act
from workbook_templates.report import tables

DATA = Path(__file__).parent / "data" / "actuals"
FOCUS = DATA / "focus-1.2-team-a.csv"
PLAIN = DATA / "plain-team-a.csv"
#: The example plan's run code (derived from its team and scenario name).
CODE = "TEAM-A-70B-2027"
PLAIN_HEADER = "run_code,month,accelerator_hours,cost_usd,tokens_processed"


def _month(i):
    return dt.date(2027 + i // 12, i % 12 + 1, 1)


# --- the variance, pure --------------------------------------------------------------------

_hours = st.one_of(st.just(0.0), st.floats(1e-3, 1e7))
_plan_months = st.lists(
    st.tuples(_hours, st.integers(0, 10**12), st.one_of(st.none(), st.floats(0, 1e13))),
    min_size=1, max_size=8,
)  # fmt: skip
_actual_months = st.lists(
    st.tuples(st.integers(0, 10), _hours, st.integers(-(10**10), 10**12),
              st.one_of(st.none(), st.floats(0, 1e13)),
              st.sampled_from([None, "running", "completed", "failed"])),
    max_size=8, unique_by=lambda t: t[0],
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_plan_months, _actual_months, st.integers(0, 10))
def test_the_parts_add_up_to_the_variance_to_the_cent(plan, actual, as_of):
    """Any plan, any actuals: each month's five parts are whole cents adding up to its
    variance exactly, and over the months to the variance to date."""
    plan = [PlanMonth(_month(i), h, c, t) for i, (h, c, t) in enumerate(plan)]
    actual = [ActualPoint(_month(i), h, c, t, s) for i, h, c, t, s in actual]
    out = run_variance(plan, actual, _month(as_of))
    for v in out:
        assert set(v.parts) == set(PARTS)
        assert all(isinstance(c, int) for c in v.parts.values())
        assert sum(v.parts.values()) == v.variance_cents == v.actual_cents - v.plan_cents
    to_date = sum(p.cost_cents for p in plan if p.month <= _month(as_of))
    spent = sum(a.cost_cents for a in actual if a.month <= _month(as_of))
    assert sum(sum(v.parts.values()) for v in out) == spent - to_date
    months = {p.month for p in plan} | {a.month for a in actual}
    assert {v.month for v in out} == {m for m in months if m <= _month(as_of)}


def test_a_run_done_on_plan_but_late_is_all_timing():
    """The planned work at the planned price, one month late: each month's variance is
    timing only, and over the finished run it is 0."""
    plan = [PlanMonth(_month(0), 100.0, 20_000, 1e6), PlanMonth(_month(1), 100.0, 20_000, 1e6)]
    actual = [ActualPoint(_month(1), 100.0, 20_000, 1e6, "running"),
              ActualPoint(_month(2), 100.0, 20_000, 1e6, "completed")]  # fmt: skip
    out = run_variance(plan, actual, _month(2))
    assert [v.parts["timing"] for v in out] == [-20_000, 0, 20_000]
    assert all(v.parts[p] == 0 for v in out for p in PARTS if p != "timing")


def test_a_failed_run_short_of_its_tokens_has_a_negative_scope():
    plan = [PlanMonth(_month(0), 100.0, 20_000, 1e6), PlanMonth(_month(1), 100.0, 20_000, 1e6)]
    actual = [ActualPoint(_month(0), 100.0, 20_000, 1e6, "failed")]
    out = run_variance(plan, actual, _month(1))
    assert sum(v.parts["scope"] for v in out) == -20_000
    assert sum(v.parts["timing"] for v in out) == 0


# --- the readers and the report ------------------------------------------------------------


@pytest.fixture(scope="module")
def example(example_plan):
    """The example plan consolidated once (its one budget run: the run the samples bill)."""
    return tables.consolidate([example_plan])


def _joined(c, paths):
    from workbook_templates.report.variance_tables import codes_of, run_spans, variance_tables

    c.actuals = act.join_actuals(act.read_actuals(paths), run_spans(codes_of(c.budget_runs)))
    return variance_tables(c)


_rows = st.lists(
    st.tuples(st.integers(0, 1), st.integers(0, 10**8), st.integers(-(10**8), 10**10),
              st.one_of(st.none(), st.integers(0, 10**13)),
              st.sampled_from(["", "running", "completed", "failed"])),
    min_size=1, max_size=3, unique_by=lambda t: t[0],
)  # fmt: skip


_SLOW_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW_OK)
@given(_rows)
def test_the_variance_of_generated_actuals_files_adds_up_to_the_cent(example, tmp_path, rows):
    """Plain actuals files of any hours, cents, tokens and statuses for the example run:
    every month's parts add up to its variance, the run's to-date row to the sum of its
    months, and variance.csv's variance rows to actual - budget, all to the cent."""
    path = tmp_path / "actuals.csv"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(PLAIN_HEADER + ",status\n")
        for i, hours, cents, tokens, status in rows:
            fh.write(f"{CODE},2027-{3 + i:02d},{hours / 100},{Decimal(cents) / 100},"
                     f"{'' if tokens is None else tokens},{status}\n")  # fmt: skip
    t = _joined(example, [path])
    by_month, to_date, long = t["variance_by_month"], t["variance_to_date"], t["variance"]
    cents = lambda x: round(float(x) * 100)  # noqa: E731
    for r in by_month.itertuples(index=False):
        parts = sum(cents(getattr(r, f"{p}_usd")) for p in PARTS)
        assert parts == cents(r.variance_usd) == cents(r.actual_usd) - cents(r.budget_usd)
    (run_row,) = to_date.itertuples(index=False)
    for col in ("budget_usd", "actual_usd", "variance_usd", *(f"{p}_usd" for p in PARTS)):
        assert cents(getattr(run_row, col)) == sum(cents(x) for x in by_month[col])
    variance = sum(cents(x) for x in long[long["scenario"] == "variance"]["amount_usd"])
    assert variance == cents(run_row.actual_usd) - cents(run_row.budget_usd)
    assert cents(run_row.actual_usd) == sum(c for _, _, c, _, _ in rows)


def test_the_focus_sample_and_the_plain_file_give_the_same_variance(example):
    """The FOCUS export (on-demand and commitment-covered GPU instances x GpuCount, GPU-hours
    prorated across the month's end, a credit) and the plain file of the same spend give
    the same variance, month by month; the FOCUS file's untagged spend (the unused
    commitment, tax, storage) is unallocated and the commitment's purchase is not counted."""
    plain, focus = _joined(example, [PLAIN]), _joined(example, [FOCUS])
    for name in ("variance_by_month", "variance_to_date"):
        assert focus[name].to_dict("records") == plain[name].to_dict("records")
    march = focus["variance_by_month"].iloc[0]
    assert march["actual_accelerator_hours"] == 50_000 * 8 + 45_000 * 8 + 2_000
    assert march["actual_usd"] == 1_452_000.01
    assert example.actuals.unallocated_cents == 7_353_456  # 72,000 + 1,234.56 + 300
    unplanned = focus["unplanned"]
    assert list(unplanned["run_code"]) == ["TEAM-B-ABLATION-7", "(unallocated)"]
    assert list(unplanned["actual_usd"]) == [2400.0, 73534.56]


def test_the_totals_to_date_are_the_runs_sums_to_the_cent(example):
    """The totals behind the actuals sentence (``c.variance_totals``) are the sums of the
    Variance sheet's rows per run to date: budget, actual, variance and each part."""
    to_date = _joined(example, [FOCUS, PLAIN.parent / "plain-team-b.csv"])["variance_to_date"]
    t = example.variance_totals
    assert t["actual"] and t["rate"]
    for key in ("budget", "actual", "variance", *PARTS):
        assert t[key] == sum(schedule.to_cents(x) for x in to_date[f"{key}_usd"]), key


def test_report_with_actuals_writes_the_variance_sheet_and_csv(example_plan, tmp_path, capsys):
    out, csv_dir = tmp_path / "h.xlsx", tmp_path / "csv"
    assert run(example_plan, "--actuals", FOCUS, "--out", out, "--csv", csv_dir) == 0
    printed = capsys.readouterr()
    assert "Actuals to Apr 2027: $1,915,500 spent against $2,056,109 planned to date" in (
        printed.out
    )
    assert "TEAM-B-ABLATION-7 is in no budget run" in printed.err
    long = read_csv(csv_dir, "variance")
    assert {r["scenario"] for r in long} == {"budget", "actual", "forecast", "variance"}
    assert {r["account"] for r in long if r["scenario"] == "variance"} == set(PARTS)
    budget = sum(Decimal(r["amount_usd"]) for r in long if r["scenario"] == "budget")
    fpa = sum(Decimal(r["p50_usd"]) for r in read_csv(csv_dir, "fpa"))
    assert budget == fpa  # the budget rows are the plan every other file sums
    assert "variance.csv:" in (csv_dir / "README.txt").read_text()
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames.index("Variance") == wb.sheetnames.index("Monthly") + 1
    ws = wb["Variance"]
    assert set(ws.tables) == {
        "variance_to_date",
        "variance_by_month",
        "unplanned",
        "variance_months",
    }
    totals = [r for r in ws.iter_rows() if r[0].value == "Total to date"]
    assert len(totals) == 2 and all(c.value.startswith("=SUBTOTAL(9,") for c in totals[0][4:])
    page_one = " ".join(str(c.value) for row in wb["Summary"].iter_rows() for c in row if c.value)
    assert "unplanned spend $2,400" in page_one and "unallocated $73,535" in page_one
    (line,) = [t for t in printed.out.splitlines() if t.startswith("Actuals")]
    assert f"{line} See the Variance sheet." in page_one  # one sentence, on both faces


def test_a_report_without_actuals_has_no_variance(example_plan, tmp_path):
    assert run(example_plan, "--out", tmp_path / "h.xlsx", "--csv", tmp_path / "csv") == 0
    assert "Variance" not in openpyxl.load_workbook(tmp_path / "h.xlsx").sheetnames
    assert not (tmp_path / "csv" / "variance.csv").exists()


def _focus_rows():
    with open(FOCUS, encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _write_focus(path, rows, drop=()):
    cols = [c for c in rows[0] if c not in drop]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _focus_with(path, row, **changes):
    rows = _focus_rows()
    rows[row - 2] = {**rows[row - 2], **changes}
    _write_focus(path, rows)


def _focus_duplicate(path):
    rows = _focus_rows()
    _write_focus(path, [*rows, rows[4]])


def _focus_without(path, column):
    _write_focus(path, _focus_rows(), drop=(column,))


def _plain(path, *lines, header=PLAIN_HEADER):
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")


_OK = f"{CODE},2027-03,100,200.00,"
#: name -> (write the bad file to a path, what the one line says: file row and column)
BAD = {
    "negative hours": (lambda p: _plain(p, _OK, f"{CODE},2027-04,-5,10,"),
                       "row 3, column accelerator_hours: '-5' is negative"),
    "a month outside the run": (lambda p: _plain(p, f"{CODE},2026-01,100,200.00,"),
                                "row 2, column month: 2026-01 is outside run"),
    "a month that is no month": (lambda p: _plain(p, f"{CODE},2027-13,100,200.00,"),
                                 "row 2, column month: '2027-13' is not a month"),
    "another currency": (lambda p: _plain(p, f"{CODE},2027-03,100,200.00,,EUR",
                                          header=PLAIN_HEADER + ",currency"),
                         "row 2, column currency: 'EUR' is not the hand-off's currency, USD"),
    "the same run and month twice": (lambda p: _plain(p, _OK, _OK),
                                     "row 3, column month: " + CODE + " 2027-03 is given twice"),
    "a number with a thousands separator": (
        lambda p: _plain(p, f'{CODE},2027-03,100,"1,200.00",'),
        "row 2, column cost_usd: '1,200.00' is not a plain decimal number"),
    "a figure past the bound": (
        lambda p: _plain(p, f"{CODE},2027-03,100,1E16,"),
        "row 2, column cost_usd: '1E16' is not a plain decimal number of magnitude at most 1e15",
    ),
    "a status that is none": (lambda p: _plain(p, _OK + ",paused", header=PLAIN_HEADER + ",status"),
                              "row 2, column status: 'paused' is not one of"),
    "a formula for a run code": (lambda p: _plain(p, "=HYPERLINK(\"x\"),2027-03,1,1,"),
                                 "row 2, column run_code: '=HYPERLINK(\"x\")' is not a run code"),
    "an unknown column": (lambda p: _plain(p, _OK + ",1", header=PLAIN_HEADER + ",gpu_hours"),
                          "row 1: unknown column(s) 'gpu_hours'"),
    "a field over the bound": (lambda p: _plain(p, f"{CODE},2027-03,100,200.00,"
                                                + "9" * (act.MAX_FIELD_CHARS + 1)),
                               f"row 2: field 5 is over {act.MAX_FIELD_CHARS:,} characters"),
    "FOCUS: another currency": (lambda p: _focus_with(p, 3, BillingCurrency="EUR"),
                                "row 3, column BillingCurrency: 'EUR' is not the hand-off's"),
    "FOCUS: a negative quantity": (lambda p: _focus_with(p, 2, ConsumedQuantity="-3"),
                                   "row 2, column ConsumedQuantity: -3 is negative"),
    "FOCUS: Tags that are not JSON": (lambda p: _focus_with(p, 6, Tags="{compute-lab-run: x}"),
                                      "row 6, column Tags: is not JSON"),
    "FOCUS: a run tag that is no run code": (
        lambda p: _focus_with(p, 6, Tags='{"compute-lab-run": "=1+1"}'),
        "row 6, column Tags: tag compute-lab-run is '=1+1', not a run code"),
    "FOCUS: a time that is not UTC": (
        lambda p: _focus_with(p, 9, ChargePeriodStart="2027-04-02T00:00:00+02:00"),
        "row 9, column ChargePeriodStart: '2027-04-02T00:00:00+02:00' is not a UTC time"),
    "FOCUS: a duplicate row": (_focus_duplicate, "row 12: is the same as row 6"),
    "FOCUS: no EffectiveCost column": (lambda p: _focus_without(p, "EffectiveCost"),
                                       "row 1: a FOCUS export without the column(s) "
                                       "EffectiveCost"),
    "FOCUS: a month outside the run": (
        lambda p: _focus_with(p, 9, ChargePeriodStart="2027-08-02T00:00:00Z",
                              ChargePeriodEnd="2027-08-03T00:00:00Z"),
        "row 9, column ChargePeriodStart: 2027-08 is outside run " + CODE),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_every_bad_actuals_row_is_one_line_and_nothing_is_written(example_plan, tmp_path,
                                                                  capsys, case):  # fmt: skip
    """Each bad file or row is refused in one line naming the file, the row and the column
    and the rule; no hand-off is written (exit 2)."""
    make, says = BAD[case]
    bad = tmp_path / "actuals.csv"
    make(bad)
    out, csv_dir = tmp_path / "h.xlsx", tmp_path / "csv"
    assert run(example_plan, "--actuals", bad, "--out", out, "--csv", csv_dir) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"{bad}: {says}" in err[0], err[0]
    assert err[0].endswith("nothing written")
    assert not out.exists() and not csv_dir.exists()


def test_several_bad_rows_are_one_line_each(example_plan, tmp_path, capsys):
    bad = tmp_path / "actuals.csv"
    _plain(bad, f"{CODE},2027-03,-1,1,", f"{CODE},2027-04,1,x,", _OK)
    assert run(example_plan, "--actuals", bad, "--out", tmp_path / "h.xlsx") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [("row 2, column accelerator_hours" in e, "row 3, column cost_usd" in e)
            for e in err[:2]] == [(True, False), (False, True)]  # fmt: skip
    assert len(err) == 3 and not (tmp_path / "h.xlsx").exists()


def test_an_actuals_file_over_the_bounds_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    big = tmp_path / "big.csv"
    _plain(big, *[_OK] * 20)
    monkeypatch.setattr(act, "MAX_ACTUALS_ROWS", 10)
    with pytest.raises(act.ActualsError, match="over the 10-row bound"):
        act.read_actuals([big])
    monkeypatch.setattr(act, "MAX_ACTUALS_BYTES", 100)
    with pytest.raises(act.ActualsError, match="over the 100-byte bound"):
        act.read_actuals([big])


def test_file_text_on_the_variance_sheet_is_never_a_formula(example_plan, tmp_path):
    """A file named like a formula: its name reaches the sheet (the unplanned spend's
    source) as text with the quote prefix, never as a formula."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(PLAIN, folder / "=1+1.csv")
    out = tmp_path / "h.xlsx"
    import os

    cwd = os.getcwd()
    os.chdir(folder)
    try:
        assert run(example_plan, "--actuals", "=1+1.csv", "--out", out) == 0
    finally:
        os.chdir(cwd)
    ws = openpyxl.load_workbook(out)["Variance"]
    cells = [c for row in ws.iter_rows() for c in row if str(c.value or "").startswith("=1+1")]
    assert cells and all(c.data_type == "s" and c.quotePrefix for c in cells)


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_variance_totals_recalculated_equal_the_engine(example_plan, tmp_path):
    """The Variance sheet's SUBTOTAL totals, recalculated by LibreOffice and by Gnumeric,
    equal the engine's sums to the cent (variance.csv's rows)."""
    from helpers import require_soffice, require_ssconvert

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    out, csv_dir = tmp_path / "h.xlsx", tmp_path / "csv"
    assert run(example_plan, "--actuals", FOCUS, PLAIN.parent / "plain-team-b.csv", "--out", out,
               "--csv", csv_dir) == 0  # fmt: skip
    long = read_csv(csv_dir, "variance")
    as_of = max(r["month"] for r in long if r["scenario"] == "actual")

    def engine(scenario, account="total"):
        return sum(Decimal(r["amount_usd"]) for r in long if r["scenario"] == scenario
                   and r["account"] == account and r["month"] <= as_of
                   and r["run_code"] == CODE)  # fmt: skip

    want = {"Budget (US$)": engine("budget"), "Actual (US$)": engine("actual"),
            "Variance (US$)": engine("actual") - engine("budget"),
            **{f"{p.capitalize()} (US$)": engine("variance", p) for p in PARTS}}  # fmt: skip
    assert want["Timing (US$)"] and want["Rate (US$)"]
    unplanned = sum(Decimal(r["amount_usd"]) for r in long
                    if r["account"] in ("unplanned", "unallocated"))  # fmt: skip
    (lo,) = recalculate([out], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([out], tmp_path / "gn")
    for path in (lo, gn):
        ws = openpyxl.load_workbook(path, data_only=True)["Variance"]
        rows = [[c.value for c in r] for r in ws.iter_rows()]
        heads = [r for r in rows if r[0] == "Run code"]
        totals = [r for r in rows if r[0] in ("Total to date", "Total")]
        assert len(totals) == 4, path
        for head, total in zip(heads[:2], totals[:2], strict=True):
            for name, value in want.items():
                got = total[head.index(name)]
                assert round(Decimal(str(got)), 2) == value, (path, name, got, value)
        assert round(Decimal(str(totals[2][heads[2].index("Actual (US$)")])), 2) == unplanned
        month_head = next(r for r in rows if r[0] == "Month")  # the chart's table
        budget = sum(Decimal(r["amount_usd"]) for r in long if r["scenario"] == "budget")
        assert round(Decimal(str(totals[3][month_head.index("Budget (US$)")])), 2) == budget
