"""The hand-off's tables as CSV files: one file per table, named after it, columns named after
the quantities (``total_cost_usd_p90``), text guarded against formula injection
(:func:`workbook_templates.sheetkit.safe_text`), 15 significant digits, dates ``yyyy-mm-dd``."""

from __future__ import annotations

import datetime as _dt
import math

from udfs.schedule import is_money

from ..sheetkit import TEMPLATE_VERSION, safe_text

__all__ = ["CSV_FILES", "README", "STAMP_COLUMNS", "csv_frames", "csv_writer", "readme_text"]

#: The CSV files written by ``--csv`` (each ``<name>.csv``), one per table.
CSV_FILES = (
    "runs",
    "costs",
    "ranges",
    "budget",
    "status_totals",
    "assumptions",
    "not_in_budget",
    "blank_inputs",
    "totals",
    "monthly",
    "quarterly",
    "fiscal_years",
    "monthly_by_run",
    "fpa",
    "mismatches",
    "checks",
    "files",
    "sources",
)


#: Columns every CSV file ends with: the hand-off's template version and its as-of date.
STAMP_COLUMNS = ("template_version", "as_of_date")
#: The name of the data dictionary written beside the CSV files.
README = "README.txt"


def csv_frames(c, as_of):
    """{name: DataFrame} of the tables to write: text guarded, US$ to the cent, and every
    row stamped with the template version and the as-of date (``as_of``, a date)."""
    import pandas as pd  # here: the command reads its files before pandas is imported

    out = {}
    for name in CSV_FILES:
        df = c.tables[name].copy()
        for col in df.columns:
            if is_money(col) and pd.api.types.is_numeric_dtype(df[col]):
                df[col] = df[col].round(2)
            elif not pd.api.types.is_numeric_dtype(df[col]):
                df[col] = df[col].map(safe_text)
        df["template_version"] = TEMPLATE_VERSION
        df["as_of_date"] = as_of
        out[name] = df
    return out


def csv_writer(df):
    """A function writing ``df`` as CSV to a path."""

    def write(path):
        frame = df.copy()
        for col in frame.columns:
            if frame[col].dtype == object:  # float_format skips mixed columns
                frame[col] = frame[col].map(
                    lambda v: f"{v:.15g}" if isinstance(v, float) and math.isfinite(v) else v
                )
            if frame[col].map(lambda v: isinstance(v, _dt.date)).any():
                frame[col] = frame[col].map(
                    lambda v: v.isoformat() if isinstance(v, _dt.date) else v
                )
        # 15 significant digits: what a double holds exactly, without the last-bit noise
        # of a sum (30840000.00000001 is written 30840000); 3.79e+25 FLOPs stay exact.
        frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n", float_format="%.15g")

    return write


#: What each file holds (the data dictionary's first lines per file).
FILE_NOTES = {
    "runs": "one row per budget run: every input (as typed, or the value used when blank) "
            "and every output",
    "costs": "one row per budget run: compute, electricity and other costs, and their shares",
    "ranges": "one row per budget run: P10, P50 and P90 of hours, days and costs",
    "budget": "one row per budget run: status, approval, owner, months (the P50 run's and the "
              "P90 run's end), costs, P90, contingency and its throughput and price parts",
    "status_totals": "one row per budget status (Approved, Proposed): no total row, sum the "
                     "rows",
    "assumptions": "one row per budget run: price, throughput source, TFLOP/s, MFU, PUE, $/kWh",
    "not_in_budget": "Reference and Excluded runs: listed, never summed",
    "blank_inputs": "one row per default applied (an input left blank) per budget run",
    "totals": "one row: the budget's totals (the only file that is a total), with the P90 if "
              "the runs were independent",
    "monthly": "every month from the first to the last, 0 where nothing is spent",
    "quarterly": "every fiscal quarter of the fiscal years touched, 0 where nothing is spent",
    "fiscal_years": "one row per fiscal year",
    "monthly_by_run": "one row per budget run and month of its P90 run (the P50 run's months "
                      "and the later ones its P90 run spends in, at a P50 of 0)",
    "fpa": "long format for a pivot or an FP&A tool: one row per run, month and account "
           "(compute, electricity, other): the rounded rows every other file sums, so p50_usd "
           "and p90_usd add up to the budget's total and P90 to the cent; a month of the P90 "
           "run after the P50 run has p50_usd 0; a run without a start date has month blank "
           "and fiscal year 'unscheduled'",
    "mismatches": "saved planner values that differ from the engine",
    "checks": "every check: OK, WARN, ERROR or INFO",
    "files": "the planners read: size, SHA-256, template version",
    "sources": "method, defaults and catalogue figures with their sources",
}  # fmt: skip
#: Meanings of the columns that are not a quantity of udfs.quantities.
COLUMN_NOTES = {
    "run_id": "stable id of a run (R- and 10 hex digits) from its name, owner and inputs: "
              "the same in every file, independent of the file path and column letter",
    "file": "the planner file as given on the command line",
    "column": "the planner's scenario column letter",
    "scenario": "the scenario's name (Inputs, first row)",
    "budget_status": "Approved or Proposed (a blank status counts as Proposed)",
    "status": "Approved or Proposed",
    "approval": "an Approved run's reference and date, or 'Approved (no reference)'",
    "account": "compute (the price per accelerator-hour x hours), electricity, other",
    "p50_usd": "US$, the estimate (P50), to the cent",
    "p90_usd": "US$, the P90 (exceeded by one run in ten), to the cent",
    "month": "first day of the month, yyyy-mm-dd",
    "fiscal_year": "the fiscal year (--fiscal-year-start): FY2027 or FY2026/27",
    "quarter": "the fiscal quarter: FY2027 Q1",
    "contingency_usd": "P90 - P50 of the total cost, US$",
    "contingency_throughput_usd": "the part of the contingency from throughput risk (a slower "
                                  "run: more accelerator-hours and electricity), US$; with "
                                  "contingency_price_usd it adds up to contingency_usd",
    "contingency_price_usd": "the part of the contingency from price risk (the price per "
                             "accelerator-hour above the estimate), US$: the compute cost's "
                             "contingency x price_sigma^2 / (throughput_sigma^2 + "
                             "price_sigma^2)",
    "total_cost_usd_p90_independent": "the budget's P90 if the runs' costs were independent "
                                      "(Fenton-Wilkinson lognormal sum), US$; "
                                      "total_cost_usd_p90 sums the runs' P90s (every run late "
                                      "together)",
    "start_month": "the first month of the run, yyyy-mm-dd (blank: no start date)",
    "end_month": "the last month of the P50 run, yyyy-mm-dd",
    "end_month_p90": "the last month of the P90 run (the P90 accelerator-hours at the run's "
                     "capacity), yyyy-mm-dd: where the P90 spend ends",
    "share": "the month's share of the P50 run (0 in a month of the P90 run after it)",
    "template_version": "the hand-off's template version",
    "as_of_date": "the date the hand-off was made, yyyy-mm-dd",
    "defaults_used": "the defaults applied to blank inputs, one text",
}  # fmt: skip


def readme_text(frames, labels):
    """The data dictionary (``README.txt``): every file, every column and what it means.
    ``labels`` maps a quantity name to (label, unit)."""
    lines = [
        "Compute Lab finance hand-off: CSV files (UTF-8, comma-separated, one header row).",
        "Amounts in US$ are rounded once, to the cent, per run, month and account (fpa.csv);",
        "every other amount is a sum of those rows, so the files tie to the cent. Other",
        "numbers carry 15 significant digits;",
        "dates are yyyy-mm-dd. No file has a total row except totals.csv: sum the rows.",
        "Every row ends with template_version and as_of_date. Text that a spreadsheet would",
        "read as a formula starts with an apostrophe.",
        "",
    ]
    for name, df in frames.items():
        lines.append(f"{name}.csv: {FILE_NOTES.get(name, '')}")
        for col in df.columns:
            if col in COLUMN_NOTES:
                meaning = COLUMN_NOTES[col]
            elif col in labels:
                label, unit = labels[col]
                meaning = label + (f" ({unit})" if unit else "")
            else:
                meaning = col.replace("_", " ")
            lines.append(f"  {col}: {meaning}")
        lines.append("")
    return "\n".join(lines)
