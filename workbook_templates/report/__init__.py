"""``compute-lab report``: consolidate filled planners into a budget hand-off for finance.

The package, in the order a run goes through it:

- :mod:`.consolidate`: read each file (:func:`workbook_templates.reader.read_planner`),
  resolve every scenario with :func:`udfs.plan.resolve` and recompute it with the engine,
  P10 / P90 from :func:`udfs.ranges.estimate_ranges`; cached cells are only compared;
- :mod:`.tables`, :mod:`.checks`, :mod:`.sources`: the pandas tables (budget runs only, except
  ``not_in_budget``), the three-state checks, the method and sources;
- :mod:`.xlsx`, :mod:`.summary`, :mod:`.layout`: the workbook (management summary first);
- :mod:`.csv_files`: the CSV files; :mod:`.output`: the last range guard and the all-or-nothing
  writing; :mod:`.command`: the flags and the run.

Only Approved and Proposed scenarios (a blank status in a filled column counts as Proposed;
an older planner's as "status unknown") are summed; Reference and Excluded scenarios are
listed as not in the budget. See docs/handoff.md.
"""

from __future__ import annotations

from udfs.validation import CommandError

from ..sheetkit import safe_text
from .command import PROG, configure_parser, run
from .consolidate import DEFAULT_TOLERANCE, Consolidation, Run, consolidate
from .csv_files import CSV_FILES
from .layout import header as _header
from .output import check_in_range, write_outputs
from .summary import SHEET_GUIDE as _SHEET_GUIDE
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
