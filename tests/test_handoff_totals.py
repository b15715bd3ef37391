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
    path = _handoff(template, tmp_path / "h", plans, fy_start) / "h.xlsx"
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
    xml = (b'<c r="A3"><f>SUM(A1:A2)</f><v /></c><c r="A4"><f>A3*2</f><v /></c>')
    out = with_saved_values(xml, {"A3": 3.25})
    assert out == b'<c r="A3"><f>SUM(A1:A2)</f><v>3.25</v></c><c r="A4"><f>A3*2</f><v /></c>'
    with pytest.raises(ValueError, match="A9"):
        with_saved_values(xml, {"A9": 1})
