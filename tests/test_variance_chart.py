"""The Variance sheet's chart (report --actuals): budget, actual and forecast by month of every
budget run together, drawn from cells that tie to variance.csv and forecast.csv to the cent.
The hand-off made from the example plan and the example actuals is the one ``make pictures``
prints (docs/images/handoff-variance.png)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from decimal import Decimal

import openpyxl
import pytest
from openpyxl.utils import range_boundaries
from test_handoff_budget import read_csv, run
from test_report_fixtures import PLANNER

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


#: Most pages a 1- or 3-run hand-off with actuals and a baseline prints to: the twelve of
#: one without (test_finance_handoff), the Baseline sheet, the Variance sheet's chart and
#: page 1's plan-vs-actual tables (the five words on a second Summary page).
MAX_PAGES_WITH_ACTUALS = 15
#: The median height (pt) of the printed words on every page is at least this: text of 7 pt
#: or more (11 pt text is 14.3 pt high). The wide Variance sheet of 3 runs prints at about
#: 8 pt in LibreOffice, under test_finance_handoff's READABLE_PT for the other sheets.
MIN_TEXT_BOX_PT = 7 * 14.3 / 11
#: The 3-run plans' actuals: two runs, one completed, and a run code no plan has.
ACTUALS_3 = """run_code,month,accelerator_hours,cost_usd,tokens_processed,status
TEAM-E-EARLY,2027-02,500000,1300000.00,,running
TEAM-E-EARLY,2027-03,180000,455000.50,,completed
TEAM-L-LATE,2027-11,1400000,2950000.00,,running
TEAM-X-ORPHAN,2027-10,1200,2500.00,,
"""


@pytest.mark.libreoffice
@pytest.mark.parametrize("runs", [1, 3])
def test_a_handoff_with_actuals_prints_readable_pages(generated_templates, tmp_path, runs):
    """1 and 3 runs with actuals and a baseline: every page readable, no words printed over
    each other, no table title or header alone at the foot of a page, the chart on a page
    with its title, the unplanned spend's source file path whole on its page."""
    import statistics

    from helpers import require_soffice
    from test_finance_handoff import (
        EARLY,
        LATE,
        LAZY,
        _page_count,
        assert_no_header_alone_at_a_foot,
    )
    from test_handoff_budget import _overlaps, _pages, with_references

    from workbook_templates.recalc import convert

    require_soffice()
    plans = [EARLY, LATE, LAZY] if runs == 3 else [EARLY]
    p = with_references(generated_templates[PLANNER], tmp_path / "team.xlsx", plans)
    assert run(p, "--out", tmp_path / "b.xlsx", "--csv", tmp_path / "base") == 0
    actuals = tmp_path / "act.csv"
    actuals.write_text(ACTUALS_3 if runs == 3 else ACTUALS_3.splitlines()[0] + "\n"
                       + ACTUALS_3.splitlines()[1] + "\n", encoding="utf-8")  # fmt: skip
    out = tmp_path / "h.xlsx"
    assert run(p, "--actuals", actuals, "--baseline", tmp_path / "base", "--version", "M1",
               "--out", out) == 0  # fmt: skip
    (pdf,) = convert([out], tmp_path, "pdf")
    assert 1 <= _page_count(pdf) <= MAX_PAGES_WITH_ACTUALS
    pages = _pages(pdf)
    for i, words in pages:
        assert statistics.median(w[3] - w[1] for w in words) >= MIN_TEXT_BOX_PT, i
        assert not _overlaps(words), (i, _overlaps(words)[:3])
    assert_no_header_alone_at_a_foot(openpyxl.load_workbook(out), pages)
    text = " ".join(w[4] for _, words in pages for w in words)
    assert "Budget, actual and forecast by month" in text
    if runs == 3:
        assert "act.csv" in text and "row 5" in text  # the source's last line printed


@pytest.mark.libreoffice
def test_a_short_table_goes_with_its_chart_to_the_next_page(example_plan, tmp_path):
    """The example actuals' month table (two months) is too short to leave rows behind when
    its chart takes the next page: the title, header, months and total go with the chart, so
    the page never shows the repeated header over a chart alone."""
    import subprocess

    from helpers import require_soffice

    from workbook_templates.recalc import convert

    require_soffice()
    out = tmp_path / "h.xlsx"
    assert run(example_plan, "--actuals", EXAMPLE_ACTUALS, "--out", out) == 0
    (pdf,) = convert([out], tmp_path, "pdf")
    pages = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                           text=True, check=True).stdout.split("\f")  # fmt: skip
    (page,) = [p for p in pages if "Budget, actual and forecast by month" in p]
    assert "Every budget run by month" in page  # the table's title
    assert "Mar 2027" in page and "Apr 2027" in page and "Total" in page
