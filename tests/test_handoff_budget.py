"""The hand-off's budget view: statuses, duplicates, periods, ranges, and how it prints.

Issue 10 and the hand-off part of issue 11: only Approved and Proposed scenarios are summed;
Reference and Excluded ones are listed as not in the budget; the same scenario in two files
is a WARN; fiscal years follow --fiscal-year-start; P90 >= P50 and the contingencies add up;
the printed hand-off has no text printed over other text and its Runs sheet prints on one
page.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import re
import subprocess

import openpyxl
import pytest
from helpers_report import run_report
from test_report_fixtures import APPROVAL, PLAN_A, PLAN_B, PLAN_C, PLANNER, fill, set_cell

from udfs import calibration, plan
from udfs.quantities import PLAN_INPUTS
from workbook_templates import report
from workbook_templates.recalc import convert, find_soffice
from workbook_templates.report.layout import header

needs_soffice = pytest.mark.skipif(find_soffice() is None, reason="LibreOffice not installed")
#: The planner's preloaded columns: Llama 3.1 405B, DeepSeek-V3, the example plan.
PRESET = 3

#: CSV amounts in US$ are written to the cent (issue 18): a sum of n of them is within
#: n half-cents of the engine's figure.
CENTS = 0.1


def expected(p):
    return plan.estimate_scenario({q.name: p.get(q.name) for q in PLAN_INPUTS})


def read_csv(folder, name):
    with open(folder / f"{name}.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def run(*args):
    return report.run(_args(*args))


def _args(*args):
    import argparse

    parser = argparse.ArgumentParser()
    report.configure_parser(parser)
    return parser.parse_args([str(a) for a in args])


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


def with_references(template, target, plans, statuses=("Reference",) * PRESET):
    """A copy of the planner with ``plans`` typed into the custom columns (after the preset
    ones, which keep their figures) and the preset columns' statuses set to ``statuses``."""
    path = fill(template, target, [None] * PRESET + list(plans))
    wb = openpyxl.load_workbook(path)
    for k, status in enumerate(statuses):
        set_cell(wb, "budget_status", k, status)
    wb.save(path)
    return path


def test_the_untouched_planner_budgets_nothing(template, tmp_path):
    preset = [report.consolidate([template]).runs[k].status for k in range(PRESET)]
    assert set(preset) == {"Reference"}
    assert run(template, "--csv", tmp_path / "csv") == 0
    totals = read_csv(tmp_path / "csv", "totals")[0]
    assert float(totals["total_cost_usd"]) == 0
    others = read_csv(tmp_path / "csv", "not_in_budget")
    assert len(others) == 3
    assert {r["budget_status"] for r in others} == {"Reference"}
    assert any("Llama 3.1 405B" in r["scenario"] for r in others)
    assert any(r["scenario"].startswith("DeepSeek-V3") for r in others)


def test_a_filled_custom_column_is_the_whole_budget(template, tmp_path, capsys):
    p = with_references(template, tmp_path / "p.xlsx", [PLAN_B])  # status left blank
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx") == 0
    totals = read_csv(tmp_path / "csv", "totals")[0]
    want = expected(PLAN_B)
    for q in ("total_cost_usd", "electricity_cost_usd", "compute_cost_usd"):
        assert math.isclose(float(totals[q]), want[q], rel_tol=1e-9, abs_tol=CENTS)
    assert float(totals["proposed_total_cost_usd"]) == float(totals["total_cost_usd"])
    checks = read_csv(tmp_path / "csv", "checks")
    blank = [r for r in checks if r["check"] == "Budget status" and r["status"] == "WARN"]
    assert len(blank) == 1 and "counted as Proposed" in blank[0]["detail"]
    assert len(read_csv(tmp_path / "csv", "not_in_budget")) == PRESET
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    texts = [str(c.value) for row in wb["Summary"].iter_rows() for c in row if c.value]
    assert any(t.startswith("Budget status: scenario") for t in texts)  # one line a check
    assert "Checks" in texts and "WARN" in texts
    texts = [str(c.value) for row in wb["Checks"].iter_rows() for c in row if c.value]
    assert any("counted as Proposed" in t for t in texts)  # in full on Checks


def test_reference_and_excluded_never_reach_the_totals(template, tmp_path):
    plans = [dict(PLAN_A, **APPROVAL, budget_status="Approved", owner="LLM team"),
             dict(PLAN_B, budget_status="Excluded"),
             dict(PLAN_C, budget_status="Proposed", start_date=dt.date(2026, 3, 1))]  # fmt: skip
    p = with_references(template, tmp_path / "p.xlsx", plans)
    assert run(p, "--csv", tmp_path / "csv") == 0
    totals = read_csv(tmp_path / "csv", "totals")[0]
    a, c = expected(PLAN_A)["total_cost_usd"], expected(PLAN_C)["total_cost_usd"]
    assert math.isclose(float(totals["total_cost_usd"]), a + c, rel_tol=1e-9, abs_tol=CENTS)
    assert math.isclose(float(totals["approved_total_cost_usd"]), a, rel_tol=1e-9, abs_tol=CENTS)
    assert math.isclose(float(totals["proposed_total_cost_usd"]), c, rel_tol=1e-9, abs_tol=CENTS)
    status = {r["budget_status"]: r for r in read_csv(tmp_path / "csv", "status_totals")}
    assert math.isclose(float(status["Approved"]["total_cost_usd"]), a, rel_tol=1e-9, abs_tol=CENTS)
    # no total row (issue 18): a plain sum of the rows is the budget total
    assert "Total in the budget" not in status
    assert math.isclose(sum(float(r["total_cost_usd"]) for r in status.values()), a + c,
                        rel_tol=1e-9, abs_tol=CENTS)  # fmt: skip
    others = {
        r["scenario"]: r["budget_status"] for r in read_csv(tmp_path / "csv", "not_in_budget")
    }
    assert others[PLAN_B["scenario_name"]] == "Excluded"
    assert sorted(others.values()).count("Reference") == PRESET
    runs = read_csv(tmp_path / "csv", "runs")
    assert {r["scenario"] for r in runs} == {PLAN_A["scenario_name"], PLAN_C["scenario_name"]}
    monthly = read_csv(tmp_path / "csv", "monthly")
    assert math.isclose(
        sum(float(m["total_cost_usd"]) for m in monthly), a + c, rel_tol=1e-9, abs_tol=CENTS
    )
    budget = read_csv(tmp_path / "csv", "budget")
    assert [r["owner"] for r in budget if r["budget_status"] == "Approved"] == ["LLM team"]


def test_the_same_scenario_in_two_files_is_a_warning(template, tmp_path, capsys):
    a = with_references(template, tmp_path / "team-a.xlsx", [dict(PLAN_A, owner="A")])
    b = with_references(template, tmp_path / "team-b.xlsx", [PLAN_C, PLAN_A])
    assert run(a, b, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx") == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "same name and inputs" in line]
    assert len(lines) == 1 and "warning:" in lines[0] and "counted 2 times" in lines[0]
    assert "Llama" not in err  # the references are in both files but never summed
    checks = read_csv(tmp_path / "csv", "checks")
    dup = [r for r in checks if r["check"] == "Duplicate scenarios"]
    assert [r["status"] for r in dup if "Base" in r["detail"]] == ["WARN"]
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    texts = " ".join(str(c.value) for row in wb["Summary"].iter_rows() for c in row if c.value)
    assert "Duplicate scenarios: scenario" in texts  # one line a check on page 1
    texts = " ".join(str(c.value) for row in wb["Checks"].iter_rows() for c in row if c.value)
    assert "same name and inputs" in texts


def test_an_older_planner_is_read_with_status_unknown(template, tmp_path, capsys):
    p = fill(template, tmp_path / "old.xlsx", [None, None, None, PLAN_B])
    wb = openpyxl.load_workbook(p)
    for name in ("budget_status", "owner", "throughput_range_pct", "price_range_pct"):
        del wb.defined_names[name]
    wb.save(p)
    assert run(p, "--csv", tmp_path / "csv") == 0
    assert "no budget_status row" in capsys.readouterr().err
    runs = read_csv(tmp_path / "csv", "runs")
    assert {r["budget_status"] for r in runs} == {"status unknown"}
    assert len(runs) == 4  # every column read as before
    checks = read_csv(tmp_path / "csv", "checks")
    assert any(r["check"] == "Budget status" and r["status"] == "WARN" for r in checks)


def test_fiscal_years_start_in_the_month_given(template, tmp_path):
    late = dict(PLAN_A, **APPROVAL, budget_status="Approved", start_date=dt.date(2026, 3, 10))
    p = with_references(template, tmp_path / "p.xlsx", [late])
    assert run(p, "--csv", tmp_path / "csv", "--fiscal-year-start", "4") == 0
    monthly = read_csv(tmp_path / "csv", "monthly")
    years = read_csv(tmp_path / "csv", "fiscal_years")
    assert [y["fiscal_year"] for y in years] == ["FY2025/26", "FY2026/27"]
    march = sum(float(m["total_cost_usd"]) for m in monthly if m["month"] < "2026-04-01")
    assert math.isclose(float(years[0]["total_cost_usd"]), march, rel_tol=1e-12, abs_tol=CENTS)
    total = expected(PLAN_A)["total_cost_usd"]
    assert math.isclose(
        float(years[-1]["cumulative_total_cost_usd"]), total, rel_tol=1e-9, abs_tol=CENTS
    )
    quarters = read_csv(tmp_path / "csv", "quarterly")
    # every quarter of the fiscal years touched, 0 where nothing is spent (issue 18)
    assert [q["quarter"] for q in quarters] == [f"FY{y} Q{k}" for y in ("2025/26", "2026/27")
                                                for k in range(1, 5)]  # fmt: skip
    assert [q["first_month"] for q in quarters][3:5] == ["2026-01-01", "2026-04-01"]
    assert [float(q["total_cost_usd"]) for q in quarters][:3] == [0, 0, 0]


@pytest.mark.parametrize("month", ["0", "13", "April", "4.5", ""])
def test_a_bad_fiscal_year_start_is_one_line(template, tmp_path, capsys, month):
    from compute_lab.cli import main

    assert main(["report", str(template), "--csv", str(tmp_path / "c"),
                 "--fiscal-year-start", month]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--fiscal-year-start" in err and "1 to 12" in err
    assert not (tmp_path / "c").exists()


def test_p90_is_at_least_p50_and_contingencies_add_up(template, tmp_path):
    plans = [dict(PLAN_C, start_date=dt.date(2026, 5, 3)),  # calibrated default MFU: a range
             dict(PLAN_B, price_range_pct=0.2), PLAN_A]  # fmt: skip
    p = with_references(template, tmp_path / "p.xlsx", plans)
    assert run(p, "--csv", tmp_path / "csv") == 0
    ranges = read_csv(tmp_path / "csv", "ranges")
    for r in ranges:
        for q in ("accelerator_hours", "wall_clock_days", "compute_cost_usd", "total_cost_usd"):
            assert float(r[f"{q}_p10"]) <= float(r[q]) <= float(r[f"{q}_p90"])
        extra = float(r["total_cost_usd_p90"]) - float(r["total_cost_usd"])
        assert math.isclose(float(r["contingency_usd"]), extra, rel_tol=1e-9, abs_tol=CENTS)
    by_name = {r["scenario"]: r for r in ranges}
    assert float(by_name[PLAN_C["scenario_name"]]["contingency_usd"]) > 0  # default MFU
    assert float(by_name[PLAN_B["scenario_name"]]["contingency_usd"]) > 0  # price range
    # a typed throughput is an estimate too: never a silent $0 contingency (issue 17)
    assert float(by_name[PLAN_A["scenario_name"]]["contingency_usd"]) > 0
    totals = read_csv(tmp_path / "csv", "totals")[0]
    run_sum = sum(float(r["contingency_usd"]) for r in ranges)
    assert math.isclose(float(totals["contingency_usd"]), run_sum, rel_tol=1e-9, abs_tol=CENTS)
    monthly = read_csv(tmp_path / "csv", "monthly")
    month_sum = sum(float(m["contingency_usd"]) for m in monthly)
    assert math.isclose(month_sum, run_sum, rel_tol=1e-9, abs_tol=CENTS)  # every plan is scheduled
    years = read_csv(tmp_path / "csv", "fiscal_years")
    assert math.isclose(
        sum(float(y["contingency_usd"]) for y in years), run_sum, rel_tol=1e-9, abs_tol=CENTS
    )


def test_the_handoff_total_is_the_engine_total(template, tmp_path):
    plans = [PLAN_A, PLAN_B, PLAN_C]
    p = with_references(template, tmp_path / "p.xlsx", plans)
    assert run(p, "--csv", tmp_path / "csv") == 0
    totals = read_csv(tmp_path / "csv", "totals")[0]
    for q in ("total_cost_usd", "electricity_cost_usd", "electricity_kwh"):
        want = sum(expected(x)[q] for x in plans)
        assert math.isclose(float(totals[q]), want, rel_tol=1e-9,
                            abs_tol=CENTS if q.endswith("_usd") else 0)  # fmt: skip


def test_a_value_typed_over_an_output_of_an_unsaved_planner_is_a_warn(template, tmp_path):
    """Reviewer's case: never recalculated, one value typed over Calculations!G48 (custom
    column 1's total cost). The console, Mismatches and Checks all say one value differs."""
    p = with_references(template, tmp_path / "p.xlsx", [PLAN_B])
    wb = openpyxl.load_workbook(p)
    where = set_cell(wb, "total_cost_usd", PRESET, 12345)
    wb.save(p)
    assert where.startswith("Calculations!G")  # G48 since the "Default MFU with your runs" row
    code, out, err = run_report(p, "--csv", tmp_path / "csv")
    assert code == 0 and "1 saved value(s) differ" in out
    assert [m["cell"] for m in read_csv(tmp_path / "csv", "mismatches")] == [where.split("!")[1]]
    checks = read_csv(tmp_path / "csv", "checks")
    saved = [r for r in checks if r["check"] == "Saved values agree with the engine"]
    assert [r["status"] for r in saved] == ["WARN"]
    assert "1 saved value(s) differ" in saved[0]["detail"] and "Mismatches" in saved[0]["detail"]
    assert "checks WARN" in out


def test_each_warn_item_is_one_warning_line(template, tmp_path, capsys):
    """Every WARN of the Checks sheet (calibrated MFU, typed override, blank status, no start
    date, a value typed over a formula...) is one ``warning:`` line on stderr; exit 0."""
    plans = [dict(PLAN_A, budget_status="Approved"), PLAN_C]  # override; blank status, MFU
    p = with_references(template, tmp_path / "p.xlsx", plans)
    wb = openpyxl.load_workbook(p)
    set_cell(wb, "total_cost_usd", PRESET, 12345)
    wb.save(p)
    code, out, err = run_report(p, "--csv", tmp_path / "csv")
    assert code == 0
    warns = [r for r in read_csv(tmp_path / "csv", "checks") if r["status"] == "WARN"]
    checks = {r["check"] for r in warns}
    assert {
        "Throughput",
        "Budget status",
        "Run scheduled by month",
        "Saved values agree with the engine",
        "Output cells hold formulas",
    } <= checks
    lines = err.splitlines()
    assert all(line.startswith("compute-lab report: warning: ") for line in lines)
    for r in warns:
        (line,) = [x for x in lines if x.endswith(f"{r['check']}: {r['detail']}")]
        assert str(p) in line
    mismatch = [x for x in lines if "saved 12,345 but the engine gives" in x]
    assert len(mismatch) == 1 and len(lines) == len(warns) + 1
    assert "checks WARN" in out


def test_every_input_column_of_runs_shows_the_value_used(template, tmp_path):
    """A blank input (the throughput uncertainty, 41.7% with the calibrated MFU) shows the
    value the engine used on the Runs sheet and in runs.csv, as on Blank inputs."""
    p = with_references(template, tmp_path / "p.xlsx", [PLAN_C])
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx") == 0
    blanks = read_csv(tmp_path / "csv", "blank_inputs")
    names = {b["input"] for b in blanks}
    assert {"throughput_range_pct", "mfu", "peak_tflops", "watts_per_accelerator"} <= names
    (runs,) = read_csv(tmp_path / "csv", "runs")
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    ws = wb["Runs"]  # turned: a row per input, a column per run
    labels = [c.value for c in ws["A"]]
    for b in blanks:
        if b["input"] == "budget_status":
            continue
        assert runs[b["input"]] == b["value_used"], b["input"]
        (i,) = [i for i, h in enumerate(labels) if str(h).startswith(header(b["input"]))]
        assert ws.cell(row=i + 1, column=2).font.i  # a default: in grey italics
        cell = ws.cell(row=i + 1, column=2).value
        assert cell is not None, b["input"]
        assert math.isclose(float(cell), float(b["value_used"]), rel_tol=1e-12), b["input"]
    spread = float(runs["throughput_range_pct"])
    assert math.isclose(spread, calibration.default_range_pct(), rel_tol=1e-12)  # calibrated


def test_finance_reads_labels_not_code_names(template, tmp_path):
    """Blank inputs, Checks and Sources say what a finance reader knows: the inputs' labels,
    fractions as %, the methodology in words; the CSV keeps the input's name too."""
    p = with_references(template, tmp_path / "p.xlsx", [PLAN_C])
    wb = openpyxl.load_workbook(p)
    set_cell(wb, "total_cost_usd", PRESET, 12345)
    wb.save(p)
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx") == 0
    blanks = read_csv(tmp_path / "csv", "blank_inputs")
    label = {q.name: q.label for q in PLAN_INPUTS}
    assert all(b["input_label"] == label[b["input"]] for b in blanks)
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    sheets = {}
    for title in ("Blank inputs", "Checks", "Sources"):
        sheets[title] = [[c for c in row if c.value is not None] for row in wb[title].iter_rows()]
    names = {q.name for q in PLAN_INPUTS if "_" in q.name} | {"total_cost_usd"}  # code names
    code = re.compile(r"\b(udfs\.\w+|\w+\.md)\b")
    for title, rows in sheets.items():
        for row in rows:
            for c in row:
                if isinstance(c.value, str):
                    assert c.value not in names, (title, c.coordinate, c.value)
                    assert not re.search(r"\b(" + "|".join(names) + r")\b", c.value) or (
                        "budget_status row" in c.value
                    ), (title, c.coordinate, c.value)
                    assert not code.search(c.value), (title, c.coordinate, c.value)
    units = {row[0].row: row for row in sheets["Blank inputs"][1:] if row}
    spread = [r for r in units.values()
              if any(c.value == label["throughput_range_pct"] for c in r)]  # fmt: skip
    col = 1 + [c.value for c in wb["Blank inputs"][1]].index(header("value_used"))
    assert spread and all("%" in c.number_format for r in spread for c in r if c.column == col)
    assert all(c.value != "fraction" for row in sheets["Blank inputs"] + sheets["Sources"]
               for c in row)  # fmt: skip
    text = " ".join(str(c.value) for row in sheets["Checks"] for c in row)
    assert "Calculations!G48 (Total cost)" in text  # G47 before the own-runs MFU row
    sources = " ".join(str(c.value) for row in sheets["Sources"] for c in row)
    assert "the calibrated ranges, Compute Lab methodology" in sources


def test_text_after_a_figure_is_indented(template, tmp_path):
    """Text right after a right-aligned figure or date never touches it: "2027-03-01" then
    "calibrated default" on Runs, "4" then "yes" on Files, the value then its unit."""
    plans = [dict(PLAN_C, start_date=dt.date(2027, 3, 1)), PLAN_A]
    p = with_references(template, tmp_path / "p.xlsx", plans)
    assert run(p, "--out", tmp_path / "h.xlsx") == 0
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    pairs = {"Checks": ("size_bytes", "sha256"),  # the files read
             "Blank inputs": ("value_used", "unit")}  # fmt: skip
    for title, (left, right) in pairs.items():
        ws = wb[title]
        (top,) = [r for r in ws.iter_rows() if header(right) in [c.value for c in r]]
        heads = [c.value for c in top]
        j = heads.index(header(right))
        assert heads[j - 1].startswith(header(left))
        cells = [
            row[j]
            for row in ws.iter_rows(min_row=top[0].row + 1)
            if isinstance(row[j].value, str) and isinstance(row[j - 1].value, int)
        ]
        assert cells, title
        for c in cells:
            assert c.alignment.horizontal == "left" and c.alignment.indent >= 1, c.coordinate


def _period_totals(ws):
    """(label of the last row before each "Total" row, the Total row's total cost) of every
    table with a "Total" row on ``ws``."""
    found, head, previous = [], None, None
    for row in ws.iter_rows():
        first = row[0].value
        if str(row[0].fill.fgColor.rgb).endswith("1F3864"):  # a header row
            head = [c.value for c in row]
        elif first == "Total" and head:
            found.append((previous, row[head.index("Total cost (US$)")].value))
        previous = first
    return found


def test_every_period_table_adds_up_to_the_budget_total(template, tmp_path):
    """Reviewer's case: a budget run without a start date is in the budget total; each
    period table has an "Unscheduled (no start date)" row so that its total is that total."""
    plans = [dict(PLAN_A, **APPROVAL, budget_status="Approved"), PLAN_C]  # PLAN_C: no start
    p = with_references(template, tmp_path / "p.xlsx", plans)
    assert run(p, "--csv", tmp_path / "csv", "--out", tmp_path / "h.xlsx") == 0
    budget_total = float(read_csv(tmp_path / "csv", "totals")[0]["total_cost_usd"])
    want = expected(PLAN_A)["total_cost_usd"] + expected(PLAN_C)["total_cost_usd"]
    assert math.isclose(budget_total, want, rel_tol=1e-9, abs_tol=CENTS)
    from helpers_report import recalculated_values

    wb = recalculated_values(tmp_path / "h.xlsx")  # the totals are SUBTOTAL formulas
    monthly = _period_totals(wb["Monthly"])
    assert len(monthly) == 1
    for label, total in monthly:
        assert label == "Unscheduled (no start date)"
        assert math.isclose(total, budget_total, rel_tol=1e-9, abs_tol=CENTS)
    unscheduled = [r for r in wb["Monthly"].iter_rows() if r[0].value == label]
    for r in unscheduled:
        shown = [c.value for c in r if isinstance(c.value, float)]
        assert any(
            math.isclose(v, expected(PLAN_C)["total_cost_usd"], abs_tol=0.005) for v in shown
        )  # to the cent
    # the Summary's fiscal years and quarters (once, issue 18): an Unscheduled row, a total
    rows = {r[0]: r for r in wb["Summary"].iter_rows(values_only=True) if r[0]}
    assert [k for k in rows if str(k).startswith("Total, P")] == ["Total, P50", "Total, P90"]
    assert math.isclose(rows["Total, P50"][5], budget_total, rel_tol=1e-9, abs_tol=CENTS)
    assert math.isclose(rows["Unscheduled, P50"][5], expected(PLAN_C)["total_cost_usd"],
                        abs_tol=0.005)  # to the cent  # fmt: skip
    # the CSV period tables hold the scheduled months only; totals.csv says what is not
    totals = read_csv(tmp_path / "csv", "totals")[0]
    years = sum(float(y["total_cost_usd"]) for y in read_csv(tmp_path / "csv", "fiscal_years"))
    assert math.isclose(years + float(totals["unscheduled_total_cost_usd"]), budget_total,
                        abs_tol=CENTS)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# On paper (LibreOffice)
# ---------------------------------------------------------------------------------------------

_WORD = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>'
)


def _pages(pdf):
    """[(page number, [(x0, y0, x1, y1, word)])] from pdftotext -bbox."""
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    pages = []
    for i, chunk in enumerate(html.split("<page ")[1:], start=1):
        words = [(*map(float, m.groups()[:4]), m.group(5)) for m in _WORD.finditer(chunk)]
        pages.append((i, words))
    return pages


def _overlaps(words):
    """Pairs of words printed over each other: their boxes overlap across more than a third
    of a line's height (two lines of text next to each other only touch)."""
    found = []
    words = sorted(words, key=lambda w: w[1])
    for i, a in enumerate(words):
        for b in words[i + 1 :]:
            if b[1] >= a[3]:
                break
            dy = min(a[3], b[3]) - b[1]
            high = dy > 0.35 * min(a[3] - a[1], b[3] - b[1])
            if high and a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5:
                found.append((a[4], b[4]))
    return found


@pytest.fixture(scope="module")
def printed(template, tmp_path_factory):
    if find_soffice() is None:
        pytest.skip("LibreOffice not installed")
    d = tmp_path_factory.mktemp("printed")
    plans = [dict(PLAN_A, **APPROVAL, budget_status="Approved", owner="LLM team"),
             dict(PLAN_B, budget_status="Proposed", owner="Research"), PLAN_C]  # fmt: skip
    a = with_references(template, d / "team-a.xlsx", plans)
    b = with_references(template, d / "team-b.xlsx", [PLAN_A])
    assert run(a, b, "--out", d / "handoff.xlsx", "--fiscal-year-start", "4") == 0
    (pdf,) = convert([d / "handoff.xlsx"], d / "pdf", target="pdf")
    return d / "handoff.xlsx", pdf


@needs_soffice
def test_the_printed_handoff_has_no_text_over_text(printed):
    _, pdf = printed
    bad = {i: _overlaps(words)[:3] for i, words in _pages(pdf) if _overlaps(words)}
    assert not bad, f"text printed over text on page(s) {sorted(bad)}: {bad}"


@needs_soffice
def test_the_summary_prints_first_and_runs_on_one_page(printed):
    _, pdf = printed
    pages = _pages(pdf)
    first = " ".join(w[4] for w in pages[0][1])
    assert "Budget" in first and "Checks" in first and "WARN" in first
    # the sheet's name is in the page header, top right
    runs = [i for i, words in pages if any(w[4] == "Runs" and w[3] < 32 and w[0] > 400
                                           for w in words)]  # fmt: skip
    assert len(runs) == 1  # a handful of runs: one page, turned (a column per run)


@needs_soffice
def test_libreoffice_opens_the_budget_handoff_without_error_cells(printed, tmp_path):
    handoff, _ = printed
    (again,) = convert([handoff], tmp_path, target="xlsx")
    wb = openpyxl.load_workbook(again, data_only=True)
    errors = [f"{ws.title}!{c.coordinate}" for ws in wb for row in ws.iter_rows() for c in row
              if isinstance(c.value, str) and c.value.startswith("#")]  # fmt: skip
    assert not errors


def test_rows_are_as_tall_as_their_wrapped_text(printed):
    from workbook_templates.report.layout import cell_lines

    handoff, _ = printed
    wb = openpyxl.load_workbook(handoff)
    short, seen = [], 0
    for ws in wb:
        assert not ws.merged_cells.ranges, ws.title  # issue 18: nothing merged
        for row in ws.iter_rows():
            for c in row:
                if not (isinstance(c.value, str) and c.alignment.wrap_text):
                    continue
                width = ws.column_dimensions[c.column_letter].width or 8.43
                lines = cell_lines(c, width)
                seen += lines > 1
                height = ws.row_dimensions[c.row].height or 15
                if lines > 1 and height < 15 * lines:
                    short.append(f"{ws.title}!{c.coordinate}")
    assert not short
    assert seen  # some text does wrap


@needs_soffice
def test_the_recalculated_planner_and_the_handoff_agree(template, tmp_path):
    """The planner's own totals (LibreOffice) equal the hand-off's, defaults included."""
    from workbook_templates.reader import read_planner
    from workbook_templates.recalc import recalculate

    plans = [dict(PLAN_C, start_date=dt.date(2026, 5, 3)), PLAN_B]  # calibrated MFU; typed
    p = with_references(template, tmp_path / "p.xlsx", plans)
    (again,) = recalculate([p], tmp_path / "recalculated")
    assert run(again, "--csv", tmp_path / "csv") == 0
    saved = read_planner(again).scenarios[PRESET:]
    totals = read_csv(tmp_path / "csv", "totals")[0]
    for q in ("total_cost_usd", "electricity_cost_usd", "compute_cost_usd"):
        planner_total = sum(sc.cached[q] for sc in saved)
        assert math.isclose(float(totals[q]), planner_total, rel_tol=1e-9, abs_tol=CENTS), q
    assert read_csv(tmp_path / "csv", "mismatches") == []


def _named_row(wb, name):
    ((sheet, ref),) = wb.defined_names[name].destinations
    return [c.value for row in wb[sheet][ref.replace("$", "")] for c in row]


@needs_soffice
def test_the_planner_p10_p90_rows_equal_the_handoff_ranges(template, tmp_path):
    plans = [dict(PLAN_C, start_date=dt.date(2026, 5, 3)), dict(PLAN_B, price_range_pct=0.2)]
    p = with_references(template, tmp_path / "p.xlsx", plans)
    from workbook_templates.recalc import recalculate

    (again,) = recalculate([p], tmp_path / "recalculated")
    wb = openpyxl.load_workbook(again, data_only=True)
    assert wb.defined_names.get("total_cost_usd_p90") is not None
    assert run(again, "--csv", tmp_path / "csv") == 0
    ranges = read_csv(tmp_path / "csv", "ranges")
    for q in ("accelerator_hours", "compute_cost_usd", "total_cost_usd"):
        for k in ("p10", "p90"):
            saved = _named_row(wb, f"{q}_{k}")[PRESET : PRESET + 2]
            for r, v in zip(ranges, saved, strict=True):
                assert math.isclose(float(r[f"{q}_{k}"]), v, rel_tol=1e-9,
                                    abs_tol=CENTS if q.endswith("_usd") else 0), (q, k)  # fmt: skip
