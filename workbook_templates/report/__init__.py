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

import importlib

from udfs.validation import CommandError

from ..sheetkit import safe_text
from .command import PROG, configure_parser, run
from .consolidate import DEFAULT_TOLERANCE, Consolidation, Run

#: Names of the writing stages, imported when first used: a run forks its reading processes
#: before pandas and the workbook writer are imported (:mod:`.command`).
_LAZY = {
    "CSV_FILES": ("csv_files", "CSV_FILES"),
    "_header": ("layout", "header"),
    "check_in_range": ("output", "check_in_range"),
    "write_outputs": ("output", "write_outputs"),
    "_SHEET_GUIDE": ("summary", "SHEET_GUIDE"),
    "build_workbook": ("xlsx", "build_workbook"),
    "write_workbook": ("xlsx", "write_workbook"),
}


def consolidate(paths, **kwargs):
    """:func:`.tables.consolidate`: read, recompute, check and tabulate ``paths``."""
    from .forecast import add_forecast
    from .tables import consolidate as pipeline

    return add_forecast(pipeline(paths, **kwargs))


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(importlib.import_module(f".{module}", __name__), attr)
    globals()[name] = value
    return value


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
