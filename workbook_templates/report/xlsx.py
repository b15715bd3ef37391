"""The hand-off workbook: the Summary (management page and budget view) and one sheet a table.

Every sheet prints on landscape A4 with its header row repeated; the Runs sheet at most two
pages wide; wrapped text grows its row (:func:`.layout.fit_rows`); files show as base names
with the full path in a note; months as ``mmm yyyy``; the Monthly chart's value axis in US$.
"""

from __future__ import annotations

import datetime as _dt

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Alignment
from openpyxl.worksheet.table import Table, TableStyleInfo

from udfs.quantities import RANGE_QUANTITIES

from ..files import save_workbook
from .consolidate import OUTPUT_NAMES
from .layout import (
    BILLIONS,
    MONTH,
    USD,
    fit_columns,
    fit_header_rows,
    fit_rows,
    fmt,
    header,
    put,
    realign,
    setup_print,
    write_table,
)
from .summary import SHEET_GUIDE, write_budget, write_summary
from .tables import TABLE_COLUMNS, UNSCHEDULED, with_unscheduled

__all__ = ["build_workbook", "write_workbook", "ADDITIVE", "SHEETS"]

#: Columns whose sum is meaningful in a totals row.
ADDITIVE = {
    "training_flops", "accelerator_hours", "compute_cost_usd", "electricity_kwh",
    "electricity_cost_usd", "co2_tonnes", "total_cost_usd", "other_costs_usd",
    "contingency_usd",
    *(f"{q}_{k}" for q in RANGE_QUANTITIES if q != "wall_clock_days" for k in ("p10", "p90")),
}  # fmt: skip

_KEY = ("file", "column", "scenario", "budget_status")
#: The Runs sheet: the inputs used (the runs table without its outputs, which go to Outputs).
RUN_SHEET_COLUMNS = [n for n in TABLE_COLUMNS["runs"]
                     if n not in OUTPUT_NAMES and n != "defaults_used"]  # fmt: skip
OUTPUT_SHEET_COLUMNS = [*_KEY, *OUTPUT_NAMES]

#: (sheet, table, columns frozen at the left, totals row label, pages wide)
SHEETS = (
    ("Runs", "runs", 3, None, 2),
    ("Outputs", "runs", 3, "Total", 1),
    ("Blank inputs", "blank_inputs", 3, None, 1),
    ("Costs", "costs", 3, "Total", 1),
    ("Ranges", "ranges", 3, "Total", 2),
    ("Monthly", "monthly", 1, "Total", 1),
    ("Monthly by run", "monthly_by_run", 4, "Total", 1),
    ("Mismatches", "mismatches", 3, None, 1),
    ("Checks", "checks", 2, None, 1),
    ("Files", "files", 1, None, 1),
    ("Sources", "sources", 2, None, 1),
)

#: Sheet -> the name of its Excel Table: its CSV file's (Outputs: the outputs of runs.csv).
TABLE_NAMES = {
    "Runs": "runs", "Outputs": "outputs", "Blank inputs": "blank_inputs", "Costs": "costs",
    "Ranges": "ranges", "Monthly": "monthly", "Monthly by run": "monthly_by_run",
    "Mismatches": "mismatches", "Checks": "checks", "Files": "files", "Sources": "sources",
}  # fmt: skip

_COLUMNS = {
    "Runs": RUN_SHEET_COLUMNS,
    "Outputs": OUTPUT_SHEET_COLUMNS,
    # the input's label; its name (``input``) is in blank_inputs.csv
    "Blank inputs": [n for n in TABLE_COLUMNS["blank_inputs"] if n != "input"],
}

_EMPTY = {
    "Mismatches": "No saved value differs from the engine.",
    "Monthly": "No budget run with a start date: nothing to schedule.",
    "Monthly by run": "No budget run with a start date: nothing to schedule.",
    "Runs": "No scenario is in the budget (see Not in the budget on the Summary).",
    "Outputs": "No scenario is in the budget (see Not in the budget on the Summary).",
}

#: The Runs sheet shows parameters and tokens in billions (the cells hold the exact figures).
_IN_BILLIONS = ("total_params", "active_params", "training_tokens")


def _formats(title, df):
    formats = [fmt(n) for n in df.columns]
    if title == "Runs":
        formats = [BILLIONS if n in _IN_BILLIONS else f for n, f in zip(df.columns, formats,
                                                                         strict=True)]  # fmt: skip
    return formats


def _sheet(wb, title, df, freeze, totals, pages_wide, generated):
    ws = wb.create_sheet(title)
    last = write_table(ws, df, totals=totals, additive=ADDITIVE, formats=_formats(title, df))
    if title == "Runs":
        for j, name in enumerate(df.columns, start=1):
            if name in _IN_BILLIONS:
                ws.cell(row=1, column=j).value = f"{header(name)} (billions)"
    if title == "Ranges":  # the point estimate is the P50
        for j, name in enumerate(df.columns, start=1):
            if name in RANGE_QUANTITIES:
                ws.cell(row=1, column=j).value = f"{header(name)}, P50"
    if title in ("Sources", "Blank inputs"):  # each value in its own unit's format
        col = list(df.columns).index("value" if title == "Sources" else "value_used") + 1
        for i, unit in enumerate(df["unit"], start=2):
            cell = ws.cell(row=i, column=col)
            if unit and isinstance(cell.value, int | float):
                cell.number_format = fmt("value", unit)
            if unit == "fraction":  # shown as a percentage: say so
                ws.cell(row=i, column=col + 1).value = "%"
            ws.cell(row=i, column=col + 1).alignment = Alignment(
                horizontal="left", vertical="top", indent=1
            )
    if not len(df):
        put(ws, last + 1, 1, _EMPTY.get(title, "Nothing to show."))
    for row in ws.iter_rows(min_row=2):  # a row grown by wrapped text reads from the top
        for cell in row:
            if cell.value is not None:
                realign(cell, vertical="top")
    _pad_text_after_figures(ws)
    fit_columns(ws, list(df.columns), 1, ws.max_row)
    fit_rows(ws, 2)
    fit_header_rows(ws)
    ws.freeze_panes = ws.cell(row=2, column=freeze + 1)
    if len(df):  # an Excel Table named like its CSV file, over the rows (not the totals)
        rows = len(df) + 1
        ref = f"A1:{ws.cell(row=rows, column=len(df.columns)).coordinate}"
        table = Table(displayName=TABLE_NAMES[title], ref=ref)
        table.tableStyleInfo = TableStyleInfo(name="TableStyleLight1", showRowStripes=False)
        ws.add_table(table)
    months = df[df["month"] != UNSCHEDULED] if title == "Monthly" else df
    if title == "Monthly" and len(months):  # the months only, not the Unscheduled row
        _chart(ws, months)
    key = list(df.columns).index("scenario") + 1 if "scenario" in df.columns else 1
    letter = ws.cell(row=1, column=key).column_letter
    setup_print(ws, title, generated, pages_wide=pages_wide, header_rows="1:1",
                title_cols=f"{letter}:{letter}" if pages_wide > 1 else None)  # fmt: skip
    return ws


def _pad_text_after_figures(ws):
    """Indent the text of a column that follows right-aligned figures or dates in the column
    to its left (the whole column, so it stays aligned), so that the two never touch in
    print ("2027-03-01 calibrated default", "4 yes")."""

    def figure(value):
        return isinstance(value, int | float | _dt.date) and not isinstance(value, bool)

    for j in range(2, ws.max_column + 1):
        rows = range(2, ws.max_row + 1)
        if not any(isinstance(ws.cell(row=r, column=j).value, str)
                   and figure(ws.cell(row=r, column=j - 1).value) for r in rows):  # fmt: skip
            continue
        for r in rows:
            cell = ws.cell(row=r, column=j)
            if isinstance(cell.value, str):
                realign(cell, horizontal="left", indent=max(1, cell.alignment.indent or 0))


def _chart(ws, df):
    """Stacked monthly spend: compute, electricity and the P90 contingency (US$); a series
    that is zero every month is left out of the chart and its legend."""
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    extra = df["contingency_usd"].fillna(0).abs().sum() > 0
    chart.title = "Spend by month: P50 and the contingency to P90" if extra else (
        "Spend by month (P50)")  # fmt: skip
    chart.y_axis.title = "US$"
    chart.y_axis.numFmt = USD
    chart.y_axis.number_format = USD
    chart.x_axis.title = "Month"
    chart.x_axis.number_format = MONTH
    chart.x_axis.delete = chart.y_axis.delete = False
    n = len(df)
    for name in ("compute_cost_usd", "electricity_cost_usd", "other_costs_usd", "contingency_usd"):
        if not df[name].fillna(0).abs().sum():
            continue
        col = list(df.columns).index(name) + 1
        chart.add_data(Reference(ws, min_col=col, min_row=1, max_row=n + 1), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=2, max_row=n + 1))
    chart.height, chart.width = 9, 18
    ws.add_chart(chart, f"A{n + 4}")


def build_workbook(c, generated=None):
    """The hand-off workbook of ``c`` (an openpyxl Workbook)."""
    if generated is None:  # the same date as the CSV files of the same run
        if getattr(c, "as_of", None) is None:
            c.as_of = _dt.datetime.now(_dt.UTC).replace(tzinfo=None, microsecond=0)
        generated = c.as_of
    paper = getattr(c, "paper", None)
    wb = Workbook()
    write_summary(wb.active, c, generated, paper)
    write_budget(wb.create_sheet("Budget"), c, generated, paper)
    for title, table, freeze, totals, pages_wide in SHEETS:
        df = with_unscheduled(c, table) if title == "Monthly" else c.tables[table]
        if title in _COLUMNS:
            df = df[_COLUMNS[title]]
        _sheet(wb, title, df, freeze, totals, pages_wide, generated)
    assert [s for s, _ in SHEET_GUIDE] == wb.sheetnames  # noqa: S101 (the guide lists them all)
    wb.properties.creator = "compute-lab report"
    wb.properties.title = "Compute Lab hand-off"
    return wb


def write_workbook(c, path):
    """Write the hand-off workbook of ``c`` to ``path`` (any existing file is replaced)."""
    save_workbook(build_workbook(c), path)
