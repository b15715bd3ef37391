"""The hand-off's tables as CSV files: one file per table, named after it, columns named after
the quantities (``total_cost_usd_p90``), text guarded against formula injection
(:func:`workbook_templates.sheetkit.safe_text`), 15 significant digits, dates ``yyyy-mm-dd``."""

from __future__ import annotations

import datetime as _dt
import math

import pandas as pd

from ..sheetkit import safe_text

__all__ = ["CSV_FILES", "csv_frames", "csv_writer"]

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
    "mismatches",
    "checks",
    "files",
    "sources",
)


def csv_frames(c):
    """{name: DataFrame} of the tables to write, text guarded."""
    out = {}
    for name in CSV_FILES:
        df = c.tables[name].copy()
        for col in df.columns:
            if not pd.api.types.is_numeric_dtype(df[col]):
                df[col] = df[col].map(safe_text)
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
