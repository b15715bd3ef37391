"""Compute Lab's custom scripts: what the task pane and the ribbon buttons run.

Each script writes into the workbook through xlwings Server (the task pane's JavaScript
applies the writes): no script reads or changes anything but the cells it names.

- :func:`insert_train_plan`: the example plan's inputs (the DeepSeek-V3-like example from the
  Compute Lab methodology), labelled with their units, at the selected cell, and a
  ``TRAIN_PLAN`` formula beside them that spills the whole plan;
- :func:`insert_reference_runs` and :func:`insert_accelerators`: the catalogue as an Excel
  table at the selected cell, one column per field (unit in the header), sources included,
  undisclosed figures left blank.

A script that cannot run (no cell selected) raises ``xw.XlwingsError``: a 400 with the
reason, which the task pane shows.
"""

from __future__ import annotations

import inspect
import math

import xlwings as xw
from xlwings.server import script

from udfs import catalogue, excel, quantities

__all__ = [
    "insert_train_plan",
    "insert_reference_runs",
    "insert_accelerators",
    "namespace",
    "plan_block",
    "catalogue_rows",
]

#: TRAIN_PLAN's inputs as the block labels them (unit in brackets).
PLAN_LABELS = {
    "total_params": "Total parameters (parameters)",
    "active_params": "Active parameters per token (parameters)",
    "tokens": "Training tokens (tokens)",
    "accelerators": "Accelerators (accelerators)",
    "effective_tflops": "Sustained TFLOP/s per accelerator (TFLOP/s)",
    "usd_per_accelerator_hour": "Price per accelerator-hour (US$)",
    "watts_per_accelerator": "Power per accelerator (W)",
    "pue": "Power usage effectiveness (ratio)",
    "usd_per_kwh": "Electricity price (US$/kWh)",
    "grams_co2_per_kwh": "Grid carbon intensity (gCO2/kWh)",
    "hbm_gb": "HBM per accelerator (GB)",
}


def namespace():
    """The formula namespace Excel shows the functions under (LAB, or LAB_DEV in dev)."""
    from xlwings_server.config import settings

    name = (settings.functions_namespace or "").upper()
    if settings.environment != "prod":
        name = f"{name}_{settings.environment.upper()}" if name else settings.environment.upper()
    return name


def _example_inputs():
    plan = dict(quantities.SEED_PLAN)
    plan["tokens"] = plan.pop("training_tokens")
    return plan


def _column(index):
    """Excel column letters of a 1-based column number."""
    letters = ""
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def plan_block(row, column, prefix="LAB"):
    """Labels and values (2 columns), and the TRAIN_PLAN formula for a block at (row, column).

    ``row`` and ``column`` are 1-based; the formula goes two columns right of the values and
    refers to them, so editing a value recalculates the plan.
    """
    example = _example_inputs()
    names = list(inspect.signature(excel.TRAIN_PLAN).parameters)
    rows = [[PLAN_LABELS[name], example.get(name)] for name in names]
    value_column = _column(column + 1)
    refs = ", ".join(f"{value_column}{row + i}" for i in range(len(names)))
    function = f"{prefix}.TRAIN_PLAN" if prefix else "TRAIN_PLAN"
    return rows, f"={function}({refs})"


def catalogue_rows(kind):
    """Header (field with unit) and rows of the reference runs or the accelerators."""
    frame = catalogue.runs() if kind == "runs" else catalogue.accelerators()
    units = catalogue.RUN_FIELDS if kind == "runs" else catalogue.ACCELERATOR_FIELDS
    header = [f"{f} ({units[f]})" if units.get(f) else f for f in frame.columns]
    rows = []
    for record in frame.itertuples(index=False):
        rows.append([None if isinstance(v, float) and math.isnan(v) else v for v in record])
    return header, rows


def _anchor(book):
    address = book.api["book"].get("selection")
    if not address:
        raise xw.XlwingsError("select a cell first: the block is written there")
    return book.app.selection[0, 0]


@script
def insert_train_plan(book: xw.Book):
    """Write the example plan's inputs at the selected cell and a TRAIN_PLAN formula beside."""
    cell = _anchor(book)
    rows, formula = plan_block(cell.row, cell.column, namespace())
    cell.value = rows
    cell.offset(0, 3).formula = formula


def _insert_table(book, kind):
    cell = _anchor(book)
    header, rows = catalogue_rows(kind)
    cell.value = [header, *rows]
    block = cell.resize(len(rows) + 1, len(header))
    cell.sheet.tables.add(source=block, has_headers=True)


@script
def insert_reference_runs(book: xw.Book):
    """Write the reference runs (name, architecture, sizes, hours, sources) as a table."""
    _insert_table(book, "runs")


@script
def insert_accelerators(book: xw.Book):
    """Write the accelerator catalogue (peak TFLOP/s, HBM, TDP, sources) as a table."""
    _insert_table(book, "accelerators")
