"""Every total of the hand-off is seen by every reader: each formula cell is saved with the
value it computes (what Excel saves), so pandas and file previewers read the totals; those
values are what LibreOffice and Gnumeric compute; the contingency is split into a throughput
part and a price part that add up to it to the cent; page 1 shows the portfolio P90 if runs
were independent beside the summed one."""

from __future__ import annotations

import math

import openpyxl
import pandas as pd
import pytest
from helpers_report import named_cells
from test_handoff_budget import read_csv
from test_p90_schedule import BETA, HANDOFFS, _handoff

from udfs import ranges
from workbook_templates.sheetkit import put_formula, with_saved_values


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates["training-run-planner.xlsx"]


@pytest.fixture(scope="module", params=list(HANDOFFS))
def handoff(request, template, tmp_path_factory):
    plans, fy_start = HANDOFFS[request.param]
    return _handoff(template, tmp_path_factory.mktemp("totals") / "h", plans, fy_start)


def _cents(text):
    return round(float(text) * 100)


def _formula_cells(path):
    """{(sheet, coordinate): saved value} of every formula cell of the workbook at ``path``."""
    formulas = openpyxl.load_workbook(path)
    values = openpyxl.load_workbook(path, data_only=True)
    return {(ws.title, c.coordinate): values[ws.title][c.coordinate].value
            for ws in formulas.worksheets for row in ws.iter_rows() for c in row
            if c.data_type == "f"}  # fmt: skip


def test_every_formula_cell_has_its_value_saved(handoff):
    cells = _formula_cells(handoff / "h.xlsx")
    assert cells
    assert not [k for k, v in cells.items() if v is None]


def test_pandas_reads_every_total_equal_to_the_csv_totals(handoff):
    """pandas.read_excel (no recalculation) sees the Budget's total, every Monthly and Costs
    total row and page 1's headline figures, equal to totals.csv to the cent."""
    (totals,) = read_csv(handoff / "csv", "totals")
    sheets = pd.read_excel(handoff / "h.xlsx", sheet_name=None, header=None)

    def row_of(sheet, label):
        df = sheets[sheet]
        (i,) = df.index[df[0] == label]
        return df.loc[i]

    budget = sheets["Budget"]
    head = budget.index[budget[0] == "Scenario"][0]
    col = {v: j for j, v in budget.loc[head].items() if isinstance(v, str)}
    total = row_of("Budget", "Total in the budget")
    for label, name in (("Total cost (US$)", "total_cost_usd"),
                        ("Total cost (US$), P90", "total_cost_usd_p90"),
                        ("Contingency P90 - P50 (US$)", "contingency_usd")):  # fmt: skip
        assert round(total[col[label]] * 100) == _cents(totals[name]), label
    monthly = row_of("Monthly", "Total")
    monthly_head = list(sheets["Monthly"].loc[0])
    j = monthly_head.index(next(h for h in monthly_head if str(h).startswith("Total cost")))
    assert round(monthly[j] * 100) == _cents(totals["total_cost_usd"])
    wb = openpyxl.load_workbook(handoff / "h.xlsx", data_only=True)
    named = named_cells(wb)
    for cell, name in (("handoff_total_p50", "total_cost_usd"),
                       ("handoff_total_p90", "total_cost_usd_p90"),
                       ("handoff_contingency", "contingency_usd"),
                       ("handoff_approved", "approved_total_cost_usd"),
                       ("handoff_proposed", "proposed_total_cost_usd")):  # fmt: skip
        assert round(named[cell] * 100) == _cents(totals[name]), cell


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_libreoffice_and_gnumeric_compute_the_saved_values(template, tmp_path):
    """The hand-off recalculated by LibreOffice and by Gnumeric: every formula cell equal to
    the value saved in it (money to the cent)."""
    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    plans, fy_start = HANDOFFS["calendar years, a run without a start date"]
    half = {
        **BETA,
        "scenario_name": "Half approved",
        "budget_status": "Approved",
        "approval_ref": "CFO-9",
    }  # no approver or amount: Proposed (approval incomplete)
    path = _handoff(template, tmp_path / "h", [*plans, half], fy_start) / "h.xlsx"
    saved = _formula_cells(path)
    (lo,) = recalculate([path], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([path], tmp_path / "gn")
    for engine_name, done in (("LibreOffice", lo), ("Gnumeric", gn)):
        values = openpyxl.load_workbook(done, data_only=True)
        off = {}
        for (sheet, ref), want in saved.items():
            got = values[sheet][ref].value
            if not (isinstance(got, int | float) and math.isclose(got, want, rel_tol=1e-12,
                                                                   abs_tol=0.005)):  # fmt: skip
                off[(sheet, ref)] = (want, got)
        assert not off, (engine_name, off)


def test_a_saved_value_goes_beside_its_formula_and_nowhere_else():
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["A2"] = 1.25, 2
    put_formula(ws["A3"], "=SUM(A1:A2)", 3.25)
    ws["A4"] = "=A3*2"  # not saved: left to the spreadsheet
    xml = b'<c r="A3"><f>SUM(A1:A2)</f><v /></c><c r="A4"><f>A3*2</f><v /></c>'
    out = with_saved_values(xml, {"A3": 3.25})
    assert out == b'<c r="A3"><f>SUM(A1:A2)</f><v>3.25</v></c><c r="A4"><f>A3*2</f><v /></c>'
    with pytest.raises(ValueError, match="A9"):
        with_saved_values(xml, {"A9": 1})


def test_headline_figures_are_formulas_over_the_budget_rows(handoff):
    """Page 1's totals and the Budget by status are formulas over the Budget sheet's run
    rows, its quarters over the Monthly rows (named ranges a reader can follow), their values
    saved."""
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    named = {n: list(dn.destinations) for n, dn in wb.defined_names.items()}
    ((sheet, ref),) = named["budget_runs_p50"]
    assert sheet == "Budget"
    first, last = (int("".join(ch for ch in part if ch.isdigit())) for part in ref.split(":"))
    budget = read_csv(handoff / "csv", "budget")
    table = wb["Budget"].tables["budget"]  # the Excel Table of the runs, and nothing else
    top, end = (int("".join(ch for ch in part if ch.isdigit())) for part in table.ref.split(":"))
    assert (first, last) == (top + 1, end) and last - first + 1 == len(budget)
    codes = [wb["Budget"].cell(r, 2).value for r in range(first, last + 1)]
    assert sorted(codes) == sorted(r["run_code"] for r in budget)
    column = {c.name: j for j, c in enumerate(table.tableColumns)}
    for name in ("budget_runs_status", "budget_runs_p50", "budget_runs_p90"):
        ((_, where),) = named[name]
        letter = where.split("$")[1]  # each name is one of the Table's columns
        assert openpyxl.utils.column_index_from_string(letter) - 1 in column.values()
    below = [[c.value for c in row] for row in wb["Budget"].iter_rows(min_row=last + 1)]
    subtotals = [r for r in below if str(r[0]).startswith("Subtotal: ")]
    assert {r[0] for r in subtotals} == {f"Subtotal: {r['budget_status']}" for r in budget}
    for r in subtotals:
        status = r[0].removeprefix("Subtotal: ")
        assert f'=SUMIF(budget_runs_status,"{status}",budget_runs_p50)' in r
    total = next(r for r in below if r[0] == "Total in the budget")
    assert "=SUBTOTAL(9,budget_runs_p90)" in total
    (where,) = named["handoff_total_p50"]
    assert wb["Summary"][where[1].replace("$", "")].value == "=SUBTOTAL(9,budget_runs_p50)"
    (where,) = named["handoff_approved"]
    formula = wb["Summary"][where[1].replace("$", "")].value
    assert formula.startswith("=SUMIF(budget_runs_status,")
    summary = wb["Summary"]
    counts = [c.value for row in summary.iter_rows() for c in row
              if isinstance(c.value, str) and c.value.startswith("=COUNTIF(")]  # fmt: skip
    assert counts  # Budget by status: each status's runs counted from the Budget rows
    from workbook_templates.report.summary import period_name

    quarter = read_csv(handoff / "csv", "quarterly")[0]["quarter"]
    ((_, where),) = named[period_name(quarter, "p50")]
    formula = summary[where.replace("$", "")].value
    assert formula.startswith("=SUMIFS(monthly_p50,monthly_month,"), formula
    ((sheet, _),) = named["monthly_p50"]
    assert sheet == "Monthly"


def test_contingency_parts_add_up_and_the_independent_p90_is_within_its_bounds(handoff):
    """Per run (budget.csv, ranges.csv) and in total, throughput + price = contingency to the
    cent; the independent-runs P90 lies between the total P50 plus the largest run's
    contingency and the summed P90; the Beta plan's price range gives a price part."""
    for name in ("budget", "ranges"):
        for r in read_csv(handoff / "csv", name):
            parts = _cents(r["contingency_throughput_usd"]) + _cents(r["contingency_price_usd"])
            assert parts == _cents(r["contingency_usd"]), (name, r["scenario"])
            assert _cents(r["contingency_throughput_usd"]) >= 0
            assert _cents(r["contingency_price_usd"]) >= 0
            if r["scenario"] == "Beta":
                assert _cents(r["contingency_price_usd"]) > 0
    budget = read_csv(handoff / "csv", "budget")
    (t,) = read_csv(handoff / "csv", "totals")
    assert _cents(t["contingency_throughput_usd"]) + _cents(t["contingency_price_usd"]) == (
        _cents(t["contingency_usd"]))  # fmt: skip
    p50 = [_cents(r["total_cost_usd"]) for r in budget]
    p90 = [_cents(r["total_cost_usd_p90"]) for r in budget]
    alone = _cents(t["total_cost_usd_p90_independent"])
    assert sum(p50) + max(b - a for a, b in zip(p50, p90, strict=True)) <= alone <= sum(p90)
    if len(budget) > 1:
        assert alone < sum(p90)
    else:
        assert alone == sum(p90)


def test_budget_csv_has_the_p90_end_month_and_its_dictionary_line(handoff):
    for r in read_csv(handoff / "csv", "budget"):
        if r["start_month"]:
            assert r["end_month_p90"] >= r["end_month"], r["scenario"]
            if r["scenario"] == "Beta":  # a slower P90 run ends later
                assert r["end_month_p90"] > r["end_month"]
        else:
            assert not r["end_month_p90"]
    readme = (handoff / "csv" / "README.txt").read_text()
    assert "  end_month_p90: the last month of the P90 run" in readme
    assert "  contingency_price_usd: " in readme


def test_the_independent_p90_is_the_lognormal_sum_and_keeps_its_bounds():
    """Fenton-Wilkinson against a simulation of independent lognormal runs (within 0.5%),
    and the bounds on lopsided portfolios."""
    import numpy as np

    rng = np.random.default_rng(7)
    p50 = np.array([151.5, 40.0, 12.0])
    p90 = np.array([231.2, 55.0, 19.0])
    z = ranges.z_score(0.9)
    draws = sum(m * np.exp(math.log(q / m) / z * rng.standard_normal(400_000))
                for m, q in zip(p50, p90, strict=True))  # fmt: skip
    assert ranges.independent_sum_p90(p50, p90) == pytest.approx(np.quantile(draws, 0.9),
                                                                 rel=0.005)  # fmt: skip
    for p50, p90 in (([1e6, 1.0, 1.0], [3e6, 2.0, 2.0]), ([5.0, 5.0], [5.0, 5.0]),
                     ([0.0, 10.0], [0.0, 15.0]), ([100.0] * 50, [400.0] * 50)):  # fmt: skip
        got = ranges.independent_sum_p90(p50, p90)
        low = sum(p50) + max(b - a for a, b in zip(p50, p90, strict=True))
        assert low - 1e-9 <= got <= sum(p90) + 1e-9, (p50, p90, got)
    assert ranges.independent_sum_p90([BETA["usd_per_accelerator_hour"]], [5.0]) == 5.0


def test_the_independent_p90_is_worked_out_on_the_budget_sheet_for_several_runs(handoff):
    """Several runs: the Budget sheet's working (each run's mean and standard deviation, the
    total's), page 1's figure a reference to it; one run: no working, its P90 is its own."""
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    named = {n: list(dn.destinations) for n, dn in wb.defined_names.items()}
    ((_, where),) = named["handoff_total_p90_independent"]
    formula = wb["Summary"][where.replace("$", "")].value
    budget = read_csv(handoff / "csv", "budget")
    texts = [c.value for row in wb["Budget"].iter_rows() for c in row if c.value is not None]
    if len(budget) == 1:
        assert formula == "=handoff_total_p90"
        assert "P90 if the runs were independent" not in texts
        assert "budget_independent_p90" not in named
        return
    assert formula == "=budget_independent_p90"
    assert "P90 if the runs were independent" in texts
    ((sheet, cell),) = named["budget_independent_sd"]
    assert sheet == "Budget" and wb["Budget"][cell.replace("$", "")].value.startswith(
        "=SQRT(SUMSQ("
    )
    means = [
        v
        for v in texts
        if isinstance(v, str) and v.startswith("=IF(H") and "EXP(" in v and "ROUND(" in v
    ]
    assert len(means) == len(budget)  # one expected cost per run, over its row of the Table
