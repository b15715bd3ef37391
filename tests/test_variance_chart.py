"""The Variance sheet's chart (report --actuals): budget, actual and forecast by month of every
budget run together, drawn from cells that tie to variance.csv and forecast.csv to the cent.
The hand-off made from the example plan and the example actuals is the one ``make pictures``
prints (docs/images/handoff-variance.png)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

import openpyxl
from openpyxl.utils import range_boundaries
from test_handoff_budget import read_csv, run

from workbook_templates.pictures import EXAMPLE_ACTUALS, PICTURES
from workbook_templates.report.xlsx import VARIANCE_SERIES


def _cents(value):
    return int(Decimal(str(value)) * 100)


def _cells(wb, ref):
    """The values of a chart reference such as ``'Variance'!$B$5:$B$7``."""
    sheet, cells = ref.rsplit("!", 1)
    ws = wb[sheet.strip("'")]
    lo_col, lo_row, hi_col, hi_row = range_boundaries(cells.replace("$", ""))
    assert lo_col == hi_col
    return [ws.cell(row=r, column=lo_col).value for r in range(lo_row, hi_row + 1)]


def _month(value):
    return value.date() if isinstance(value, dt.datetime) else value


def test_the_variance_chart_shows_the_csv_figures_to_the_cent(example_plan, tmp_path):
    out, csv_dir = tmp_path / "h.xlsx", tmp_path / "csv"
    assert run(example_plan, "--actuals", EXAMPLE_ACTUALS, "--out", out, "--csv", csv_dir) == 0
    expected = {name: defaultdict(int) for name in VARIANCE_SERIES}
    for r in read_csv(csv_dir, "variance"):
        if r["account"] == "total" and r["scenario"] in ("budget", "actual"):
            expected[f"{r['scenario']}_usd"][r["month"]] += _cents(r["amount_usd"])
    for r in read_csv(csv_dir, "forecast"):
        expected["forecast_usd"][r["month"]] += _cents(r["p50_usd"])
    months = sorted(set(expected["budget_usd"]) | set(expected["forecast_usd"]))
    assert len(months) >= 2 and len(expected["actual_usd"]) == 1  # Mar 2027; Apr forecast

    wb = openpyxl.load_workbook(out)
    charts = wb["Variance"]._charts
    assert len(charts) == 1
    chart = charts[0]
    assert [s.tx.v for s in chart.series] == [label for label, _ in VARIANCE_SERIES.values()]
    shown = [_month(v) for v in _cells(wb, chart.series[0].cat.numRef.f)]
    assert [m.isoformat() for m in shown] == months
    for series, name in zip(chart.series, VARIANCE_SERIES, strict=True):
        values = _cells(wb, series.val.numRef.f)
        got = {m: _cents(v) for m, v in zip(months, values, strict=True) if v is not None}
        assert got == dict(expected[name]), name
    # the actual stops at the last month with actuals: a blank cell, not $0, after it
    assert _cells(wb, chart.series[1].val.numRef.f)[-1] is None


def test_the_variance_picture_is_made_from_the_example_actuals():
    assert any(book == "actuals" for book, *_ in PICTURES)
    header = EXAMPLE_ACTUALS.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("run_code,month,accelerator_hours,cost_usd")


def test_a_path_in_a_cell_wraps_at_its_slashes():
    """A file path wraps after its slashes in print (LibreOffice): the row is sized for the
    three lines of ``/tmp/chart/ | three/act3.csv | row 5`` in a 16-unit column (the
    Variance sheet's unplanned Source), never cut to two."""
    from openpyxl import Workbook

    from workbook_templates.report.layout import cell_lines

    cell = Workbook().active.cell(row=1, column=1, value="/tmp/chart/three/act3.csv row 5")
    assert cell_lines(cell, 16) == 3
    assert cell_lines(Workbook().active.cell(row=1, column=1, value="P90 / P50 - 1"), 16) == 1
