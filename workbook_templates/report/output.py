"""Writing a hand-off: the last range guard, then every file all or nothing.

:func:`write_outputs` writes the workbook and/or the CSV files through
:class:`workbook_templates.files.Staging`: each to a temporary file beside its target, then
all moved into place; on any failure every target holds what it held before, never over an
existing file without ``force``.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from udfs.validation import CommandError

from ..files import Staging, check_interrupt
from .consolidate import RANGE_RULE, out_of_range
from .csv_files import README, csv_frames, csv_writer, readme_text
from .xlsx import ADDITIVE, write_workbook

__all__ = ["check_in_range", "write_outputs"]

#: Tables with a totals row (over the ADDITIVE columns) in the workbook.
_SUMMED = ("runs", "costs", "ranges", "budget", "monthly", "monthly_by_run")


def _bad(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    if isinstance(v, float) and math.isnan(v):
        return False
    return out_of_range(v) or out_of_range(float(f"{float(v):.15g}"))


def _culprits(df):
    if "total_cost_usd" in df.columns and "scenario" in df.columns and len(df):
        top = df.sort_values("total_cost_usd", ascending=False, key=abs).head(2)
        found = "; ".join(f"{r.file} scenario {r.scenario!r}" for r in top.itertuples(index=False))
        return f" (largest: {found})"
    return ""


def _check_table(table, df):
    for col in df.columns:
        for i, v in enumerate(df[col].tolist()):
            if _bad(v):
                row = df.iloc[i]
                who = (f" for {row['file']} scenario {row['scenario']!r}"
                       if "file" in df.columns and "scenario" in df.columns else "")  # fmt: skip
                raise CommandError(
                    f"the {table} table's {col}{who} would be {v:g}, {RANGE_RULE}; nothing written"
                )
        if col in ADDITIVE and table in _SUMMED:
            total = pd.to_numeric(df[col], errors="coerce").sum(min_count=1)
            if not pd.isna(total) and _bad(float(total)):
                raise CommandError(
                    f"the total of {col} over the {table} table would be {float(total):g}, "
                    f"{RANGE_RULE}{_culprits(df)}; nothing written"
                )


def check_in_range(c):
    """Refuse (CommandError, one line) if any figure the hand-off would write is out of range.

    The last guard before writing: every number of every table, and every totals row of the
    workbook, must be finite and at most 1e300, also as the 15-digit text of the CSV files.
    The run's own figures are checked when it is recomputed; what is left is a sum over runs
    or months.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for table, df in c.tables.items():
            _check_table(table, df)


def write_outputs(c, out=None, csv_dir=None, force=False, checked=False, own_runs=(None, None)):
    """Write the workbook and/or CSV files; all or nothing. Returns the paths written.
    ``checked``: :func:`check_in_range` has passed on ``c`` already (not checked twice);
    ``own_runs``: (path, text) of the own-runs file (``--write-own-runs``), or (None, None)."""
    if not checked:
        check_in_range(c)
    with Staging(force) as staging:
        jobs = []  # (target, writer)
        if out is not None:
            jobs.append((Path(out), lambda p: write_workbook(c, p)))
        if csv_dir is not None:
            csv_dir = staging.folder(csv_dir, "--csv")
            frames = csv_frames(c, as_of_date(c))
            for name, df in frames.items():
                jobs.append((csv_dir / f"{name}.csv", csv_writer(df)))
            text = readme_text(frames, c.version)
            jobs.append((csv_dir / README, lambda p: p.write_text(text, encoding="utf-8")))
        own_path, own_text = own_runs
        if own_path is not None:
            jobs.append((Path(own_path), lambda p: p.write_text(own_text, encoding="utf-8")))
        for target, writer in jobs:
            check_interrupt()
            tmp = staging.new(target)
            try:
                writer(tmp)
            except OSError as exc:
                raise CommandError(
                    f"could not write {target}: {exc.strerror or exc}; nothing written"
                ) from None
        return staging.commit()


def as_of_date(c):
    """The hand-off's as-of date: the day it is made (UTC), the same for every file."""
    import datetime as _dt

    if getattr(c, "as_of", None) is None:
        c.as_of = _dt.datetime.now(_dt.UTC).replace(tzinfo=None, microsecond=0)
    return c.as_of.date()
