"""``compute-lab report``: consolidate filled planners into a budget hand-off for finance.

The package is a one-way pipeline, read -> consolidate -> check -> tabulate -> write, each
stage's modules importing only the stages before it (``tests/test_layers.py`` checks it):

- read: :func:`workbook_templates.reader.read_planner` (bounded, defused);
- consolidate, :mod:`.consolidate`: resolve every scenario with :func:`udfs.plan.resolve` and
  recompute it with the engine, P10 / P90 from :func:`udfs.ranges.estimate_ranges`; cached
  cells are only compared;
- check, :mod:`.checks`: the three-state checks;
- tabulate, :mod:`.sources`, :mod:`.tables`: the method and sources, the pandas tables
  (budget runs only, except ``not_in_budget``); :func:`.tables.consolidate` runs the stages
  so far;
- write: :mod:`.layout`, :mod:`.summary`, :mod:`.xlsx` (the workbook, management summary
  first), :mod:`.csv_files` (the CSV files), :mod:`.output` (the last range guard and the
  all-or-nothing writing);
- :mod:`.command`, on top: the flags and the run.

Only Approved and Proposed scenarios (a blank status in a filled column counts as Proposed;
an older planner's as "status unknown") are summed; Reference and Excluded scenarios are
listed as not in the budget. See docs/handoff.md.
"""

from __future__ import annotations

from udfs.validation import CommandError

from ..sheetkit import safe_text
from .command import PROG, configure_parser, run
from .consolidate import DEFAULT_TOLERANCE, Consolidation, Run
from .csv_files import CSV_FILES
from .layout import header as _header
from .output import check_in_range, write_outputs
from .summary import SHEET_GUIDE as _SHEET_GUIDE
from .tables import consolidate
from .xlsx import build_workbook, write_workbook

__all__ = [
    "PROG",
    "CSV_FILES",
    "DEFAULT_TOLERANCE",
    "CommandError",
    "Consolidation",
    "Run",
    "consolidate",
    "check_in_range",
    "build_workbook",
    "write_workbook",
    "write_outputs",
    "safe_text",
    "configure_parser",
    "run",
    "_header",
    "_SHEET_GUIDE",
]
