"""The Sources table: the method, the defaults and the catalogue figures used, with sources.

Each row carries the ``unit`` of its value, so that the workbook shows an MFU as a
percentage and a price in dollars (the ``value`` column holds figures of many kinds).
"""

from __future__ import annotations

import pandas as pd

from udfs import calibration, catalogue
from udfs.quantities import PLAN_INPUTS

__all__ = ["sources_table"]

COLUMNS = ["section", "item", "value", "unit", "detail"]

_METHOD = (
    ("Training FLOPs", "6 x active parameters x training tokens (Kaplan 2020, Hoffmann 2022)"),
    ("Effective TFLOP/s", "the typed override, else peak TFLOP/s x MFU x goodput (peak from "
     "the catalogue when blank; MFU the calibrated default when blank)"),
    ("Accelerator-hours", "training FLOPs / (effective TFLOP/s x 1e12) / 3600"),
    ("Wall-clock days", "accelerator-hours / accelerators / 24 (linear scaling)"),
    ("Compute cost", "accelerator-hours x price per accelerator-hour (rental or ownership)"),
    ("Electricity", "accelerator-hours x watts x server overhead x PUE / 1000"),
    ("Electricity cost", "kWh x price per kWh (US$0.08/kWh when blank)"),
    ("Emissions", "kWh x grid gCO2/kWh / 1e6 (operational only)"),
    ("Total cost", "compute + electricity (none where the price includes the power: rental "
     "all-in) + other costs"),
    ("Budget", "only Approved and Proposed scenarios are summed (a blank status in a filled "
     "column counts as Proposed; an older planner's columns as 'status unknown'); Reference "
     "and Excluded scenarios are listed as not in the budget"),
    ("P50, P90", "P50 is the point estimate; P90 = P50 x EXP(NORM.S.INV(0.9) x sigma), "
     "sigma from the throughput and price uncertainties (the calibrated ranges, Compute Lab "
     "methodology); the P90 of a sum is the sum of the P90s (errors taken as correlated)"),
    ("Contingency", "P90 - P50 of the total cost"),
    ("Monthly schedule", "each run's costs spread evenly over its wall-clock time from its "
     "start date, split by calendar month (as the planner's monthly schedule does)"),
)  # fmt: skip


def sources_table(c):
    """The Sources table of a consolidation."""
    rows = []

    def add(section, item, value, unit, detail):
        rows.append({"section": section, "item": item, "value": value, "unit": unit,
                     "detail": detail})  # fmt: skip

    for item, detail in _METHOD:
        add("Method", item, None, "", detail)
    add(
        "Method",
        "Saved-value check",
        c.tolerance,
        "",
        "each output cell's saved value against the engine, relative tolerance",
    )
    add(
        "Method",
        "Fiscal year",
        c.fiscal_year_start,
        "",
        "first month of the fiscal year (--fiscal-year-start)",
    )
    add("Assumption", "Calibrated throughput uncertainty", calibration.default_range_pct(),
        "fraction", "P90 / P50 - 1 of accelerator-hours with the calibrated default MFU "
        "(leave-one-out over the disclosed runs; the calibrated ranges, Compute Lab "
        "methodology)")  # fmt: skip
    for q in PLAN_INPUTS:  # the inputs a blank can leave to a default, and where it is from
        if q.default is None and "blank" not in (q.note or "").lower() or q.name == "run_code":
            continue  # no default; the run code is the run's key, not a figure
        add("Input default", q.label, q.default, q.unit, q.note or q.rule)
    used = sorted({r.scenario.inputs["accelerator_name"] for r in c.runs
                   if r.scenario.inputs.get("accelerator_name")})  # fmt: skip
    for name in used:
        accel = catalogue.accelerator(name)
        value = float(accel["bf16_tflops"])
        add("Accelerator", str(accel["name"]), None if value != value else value, "TFLOP/s",
            f"dense BF16 peak; HBM {accel['hbm_gb']:g} GB; source: "
            f"{catalogue.source('accelerator', accel['name'])}")  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
