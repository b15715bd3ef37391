"""The hand-off workbook's "Baseline data" sheet: what a later ``report --baseline BOOK.xlsx``
reads back, very hidden (a reader of the workbook never sees it; Excel's Unhide does not list
it).

It holds two Excel Tables, one below the other with an empty row between, every cell text
as the CSV files write it (:func:`.csv_files.csv_frame`, :func:`.csv_files.csv_writer`), so
that the workbook and the CSV folder of one hand-off give one baseline:

- ``baseline_runs`` (from row 1): one row per budget run, the columns of runs.csv a baseline
  reads (:data:`RUN_COLUMNS`: the run code, scenario, budget status and the plan's inputs,
  the approved amount among them);
- ``baseline_p50``: one row per run code and month (blank: a run without a start date) with
  its P50 in US$ to the cent, the sum of fpa.csv's rows of that run and month, and the
  hand-off's version label and as-of date (:data:`P50_COLUMNS`).
"""

from __future__ import annotations

import csv
import io

from openpyxl.utils import get_column_letter
from openpyxl.worksheet.table import Table

from udfs.quantities import PLAN_INPUTS

from ..sheetkit import put_text
from .csv_files import csv_frame, csv_writer

__all__ = ["BASELINE_DATA_SHEET", "BASELINE_DATA_TABLES", "RUN_COLUMNS", "P50_COLUMNS",
           "write_baseline_data"]  # fmt: skip

#: The very hidden sheet of the hand-off workbook a later report --baseline reads.
BASELINE_DATA_SHEET = "Baseline data"
#: The Excel Tables of the sheet, in order (not CSV files: their columns are those of
#: runs.csv and fpa.csv a baseline reads).
BASELINE_DATA_TABLES = ("baseline_runs", "baseline_p50")
#: Columns of the ``baseline_runs`` table (runs.csv's, those a baseline reads).
RUN_COLUMNS = ("run_code", "scenario", "budget_status",
               *(q.name for q in PLAN_INPUTS
                 if q.name not in ("scenario_name", "run_code", "budget_status")))  # fmt: skip
#: Columns of the ``baseline_p50`` table.
P50_COLUMNS = ("run_code", "month", "p50_usd", "version", "as_of_date")


def _csv_rows(df):
    """The rows of ``df`` as its CSV file writes them (header first), each field text."""
    buf = io.StringIO()
    csv_writer(df)(buf)
    return list(csv.reader(buf.getvalue().splitlines()))


def _p50_rows(c, as_of):
    """Header, then one row per run code and month: fpa.csv's P50 rows of it summed."""
    fpa = _csv_rows(csv_frame(c, "fpa", as_of)[["run_code", "month", "p50_usd", "version",
                                                  "as_of_date"]])  # fmt: skip
    cents, stamp = {}, {}
    for code, month, usd, version, day in fpa[1:]:
        cents[(code, month)] = cents.get((code, month), 0) + round(float(usd) * 100)
        stamp[(code, month)] = (version, day)
    return [list(P50_COLUMNS), *([code, month, f"{total / 100:.2f}", *stamp[(code, month)]]
                                 for (code, month), total in cents.items())]  # fmt: skip


def write_baseline_data(wb, c, generated):
    """Add the very hidden "Baseline data" sheet of ``c`` to ``wb``, its as-of date ``c.as_of``'s
    (as the CSV files', else ``generated``'s); it is never printed, so it has no print set-up."""
    as_of = (getattr(c, "as_of", None) or generated).date()
    runs = csv_frame(c, "runs", as_of)
    blocks = [("baseline_runs", _csv_rows(runs[[n for n in RUN_COLUMNS if n in runs]])),
              ("baseline_p50", _p50_rows(c, as_of))]  # fmt: skip
    ws = wb.create_sheet(BASELINE_DATA_SHEET)
    ws.sheet_state = "veryHidden"
    row = 1
    for name, rows in blocks:
        for i, fields in enumerate(rows):
            for j, text in enumerate(fields, start=1):
                put_text(ws.cell(row=row + i, column=j), text)
        if len(rows) > 1:  # an Excel Table needs a row under its header
            ws.add_table(
                Table(
                    displayName=name,
                    ref=f"A{row}:{get_column_letter(len(rows[0]))}{row + len(rows) - 1}",
                )
            )
        row += len(rows) + 1
    return ws
