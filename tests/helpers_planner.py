"""Planner variants for the ranges, the budget rows and the three-state master check.

Each variant is the generated planner with inputs typed as a user would (``helpers.type_plan``),
built to put the master check in one state for one reason. They are recalculated together in
one LibreOffice call (:func:`recalculate_variants`), beside the variants of tests/helpers.py.
"""

from __future__ import annotations

import datetime as dt
import math

import openpyxl
from helpers import CUSTOM_PLAN, is_true, row_values, type_plan

from udfs import calibration, engine, ranges
from udfs.plan import resolve
from udfs.quantities import PLAN_INPUTS, RANGE_OUTPUTS, RANGE_QUANTITIES

REL = 1e-9

#: Required inputs and a typed MFU below the calibrated P90 MFU: nothing for a human to look at.
TYPED_MFU = {**CUSTOM_PLAN, "mfu": 0.30}
#: What a budget run must not leave to a default: owner, price, start date (and its name).
CHOSEN = {"owner": "Team A", "usd_per_accelerator_hour": 2.4,
          "start_date": dt.datetime(2027, 2, 10)}  # fmt: skip
#: The warning a budget column fails when it leaves one of them blank.
DEFAULTS_WARNING = "In the budget: name, owner, price and start date typed"

#: Variant file -> (column k -> plan typed there, expected master status, warning rows that fail
#: as {label start: [columns]}). Columns 0-2 are the references and the example.
STATE_VARIANTS = {
    "state-ok.xlsx": (
        {3: {**TYPED_MFU, **CHOSEN, "budget_status": "Approved",
             "approval_ref": "CFO-2027-03", "approval_date": dt.datetime(2027, 1, 5),
             "approver": "CFO", "approved_amount_usd": 1e12},
         4: {**CUSTOM_PLAN, "scenario_name": "Not in the budget", "budget_status": "Excluded"},
         5: {**CUSTOM_PLAN, **CHOSEN, "scenario_name": "Calibrated",
             "budget_status": "Proposed"}},
        "OK", {},
    ),
    "state-warn-typed-mfu.xlsx": (
        {3: {**CUSTOM_PLAN, **CHOSEN, "mfu": 0.6, "budget_status": "Proposed"}},
        "WARN", {"In the budget: a typed MFU is not above the calibrated P90 MFU": [3]},
    ),
    "state-warn-override.xlsx": (
        {5: {**TYPED_MFU, **CHOSEN, "mfu": None, "effective_tflops_input": 450.0,
             "budget_status": "Approved"}},
        "WARN", {"In the budget: no effective TFLOP/s override": [5],
                 "Approved has its reference, date, approver and approved amount": [5]},
    ),
    "state-warn-status.xlsx": (
        {6: {**TYPED_MFU, **CHOSEN}},
        "WARN", {"Filled column has a budget status": [6]},
    ),
    "state-warn-default-price.xlsx": (
        {3: {**TYPED_MFU, **CHOSEN, "usd_per_accelerator_hour": None,
             "budget_status": "Proposed"},
         4: {**TYPED_MFU, **CHOSEN, "scenario_name": "Custom 2", "budget_status": "Proposed"},
         5: {**TYPED_MFU, **CHOSEN, "usd_per_accelerator_hour": None,
             "budget_status": "Excluded"}},
        "WARN", {DEFAULTS_WARNING: [3, 4]},
    ),
    "state-error-status.xlsx": (
        {3: {**TYPED_MFU, "budget_status": "Maybe"},
         4: {**TYPED_MFU, "throughput_range_pct": -0.1}},
        "ERROR", {},
    ),
}  # fmt: skip

#: Typed uncertainties, every throughput source, a small model on an uncalibrated accelerator
#: (the widest calibrated spread), the first custom column left empty: the
#: Summary's blank switch shows the first filled custom column (Custom 2, scenario 5).
RANGES_PLANS = {
    4: {**CUSTOM_PLAN, "scenario_name": "Calibrated, price range", "price_range_pct": 0.2,
        "accelerator_name": "TPU v5p", "budget_status": "Approved"},
    5: {**TYPED_MFU, "scenario_name": "Small model, uncalibrated accelerator, typed MFU",
        "total_params": 3e9, "active_params": None, "price_range_pct": 0.1,
        "accelerator_name": "MI300X"},
    6: {**CUSTOM_PLAN, "scenario_name": "Override and range", "effective_tflops_input": 380.0,
        "throughput_range_pct": 0.3, "accelerator_name": None},
    7: {**CUSTOM_PLAN, "scenario_name": "Calibrated, typed range", "throughput_range_pct": 0.05,
        "accelerator_name": "H800 SXM", "active_params": None},
}  # fmt: skip


def _typed(plans, src, dst):
    wb = openpyxl.load_workbook(src)
    for k, plan in plans.items():
        type_plan(wb, k, plan)
    wb.save(dst)


def make_variants(src, folder):
    """Write every variant of this module next to each other: file name -> Path."""
    out = {}
    for name, (plans, _, _) in STATE_VARIANTS.items():
        _typed(plans, src, folder / name)
        out[name] = folder / name
    _typed(RANGES_PLANS, src, folder / "planner-ranges.xlsx")
    out["planner-ranges.xlsx"] = folder / "planner-ranges.xlsx"
    return out


def close(a, b):
    return isinstance(a, (int, float)) and math.isclose(a, b, rel_tol=REL, abs_tol=1e-300)


def assert_ranges_match_engine(wb, k):
    """Column ``k``'s default MFU, budget rows, spreads and P10 / P90 rows = the engine's
    (udfs.plan.resolve, then udfs.ranges.estimate_ranges), to 1e-9; P10 <= P50 <= P90."""
    inputs = {q.name: row_values(wb, q.name)[k] for q in PLAN_INPUTS}
    r = resolve(inputs)
    point = engine.estimate(**r.arguments)
    want = ranges.estimate_ranges(point, r.throughput_sigma, r.price_sigma)
    got = {q.name: row_values(wb, q.name)[k] for q in RANGE_OUTPUTS}
    name = inputs["scenario_name"]
    assert close(got["throughput_sigma"], r.throughput_sigma) or got["throughput_sigma"] == 0 == (
        r.throughput_sigma
    ), (name, got["throughput_sigma"], r.throughput_sigma)
    assert close(got["price_sigma"], r.price_sigma) or got["price_sigma"] == 0 == r.price_sigma
    for q in RANGE_QUANTITIES:
        p50 = row_values(wb, q)[k]
        assert close(p50, point[q]), (name, q)
        for key in ("p10", "p90"):
            assert close(got[f"{q}_{key}"], float(want[q][key])), (name, q, key)
        assert got[f"{q}_p10"] <= p50 * (1 + 1e-12) and p50 <= got[f"{q}_p90"] * (1 + 1e-12)
    assert row_values(wb, "throughput_source")[k] == r.throughput_source, name
    assert row_values(wb, "budget_status_used")[k] == r.budget_status, name
    assert row_values(wb, "owner_used")[k] in ("", None, inputs["owner"])
    if inputs["mfu"] is None:  # the calibrated default, by generation and active parameters
        accel = inputs["accelerator_name"] or "no accelerator"
        active = inputs["active_params"] or inputs["total_params"]
        assert close(row_values(wb, "mfu_used")[k], calibration.predicted_mfu(accel, active))
        if r.throughput_source == "calibrated default":
            assert close(r.arguments["mfu"], row_values(wb, "mfu_used")[k])
    return r


def filled_columns(wb):
    """Indices of the complete scenario columns."""
    return [k for k, ready in enumerate(row_values(wb, "scenario_ready")) if is_true(ready)]
