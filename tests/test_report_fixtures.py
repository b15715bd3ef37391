"""Helpers shared by the reader and report tests: known plans, and typing them into copies.

The planner itself comes from the shared ``generated_templates`` fixture (tests/conftest.py);
``fill`` types known plans into a copy of it through the defined names, as a user would.
"""

from __future__ import annotations

import datetime as dt
import shutil
import zipfile
from pathlib import Path

import openpyxl
from helpers import planner_cell

from udfs.quantities import PLAN_INPUTS

PLANNER = "training-run-planner.xlsx"

#: Known plans: all figures typed, so the engine's result is exact and easy to check.
PLAN_A = {
    "scenario_name": "Base: DeepSeek-V3-like",
    "total_params": 671e9,
    "active_params": 37e9,
    "training_tokens": 14.8e12,
    "accelerators": 2048,
    "accelerator_name": "H100 SXM",
    "effective_tflops_input": 400,
    "usd_per_accelerator_hour": 2.0,
    "watts_per_accelerator": 700,
    "server_overhead": 1.82,
    "pue": 1.1,
    "usd_per_kwh": 0.08,
    "grams_co2_per_kwh": 481,
    "checkpoint_bytes_per_param": 2,
    "start_date": dt.date(2026, 1, 17),
}
PLAN_B = {
    "scenario_name": "Dense 70B",
    "total_params": 70e9,
    "training_tokens": 2e12,
    "accelerators": 1024,
    "accelerator_name": "H100 SXM",
    "peak_tflops": 989.4,
    "mfu": 0.4,
    "goodput": 0.9,
    "usd_per_accelerator_hour": 2.5,
    "watts_per_accelerator": 700,
    "server_overhead": 1.0,
    "pue": 1.2,
    "usd_per_kwh": 0.1,
    "grams_co2_per_kwh": 400,
    "checkpoint_bytes_per_param": 13,
    "start_date": dt.date(2026, 2, 20),
}
PLAN_C = {
    "scenario_name": "Small, defaults",
    "total_params": 7e9,
    "training_tokens": 1e12,
    "accelerators": 256,
    "accelerator_name": "H100 SXM",
}
#: A complete approval: reference, date, approver and an amount above any plan here.
APPROVAL = {"approval_ref": "CFO-2027-01", "approval_date": dt.datetime(2027, 1, 4),
            "approver": "CFO", "approved_amount_usd": 1e9}  # fmt: skip


def fill(template, target, plans):
    """Copy ``template`` to ``target`` and type ``plans`` into its scenario columns.

    ``plans[k]`` goes into scenario column k, exactly: inputs missing from the dict are
    cleared (an empty dict blanks the column); None leaves the template's column as it is.
    Columns beyond ``plans`` are cleared.
    """
    shutil.copyfile(template, target)
    wb = openpyxl.load_workbook(target)
    for k in range(width(wb)):
        p = plans[k] if k < len(plans) else {}
        if p is None:
            continue
        for q in PLAN_INPUTS:
            set_cell(wb, q.name, k, p.get(q.name))
    wb.save(target)
    return Path(target)


def width(wb):
    """The number of scenario columns."""
    ((_, ref),) = wb.defined_names["scenario_name"].destinations
    lo, _, hi, _ = openpyxl.utils.cell.range_boundaries(ref.replace("$", ""))
    return hi - lo + 1


def set_cell(wb, name, k, value):
    ws, coord = planner_cell(wb, name, k)
    ws[coord].value = value
    if isinstance(value, str) and value.startswith("="):
        ws[coord].data_type = "s"
    if isinstance(value, dt.date):
        ws[coord].number_format = "yyyy-mm-dd"
    return f"{ws.title}!{coord}"


def rezip(source, target, replace):
    """Copy the zip ``source`` to ``target`` with members replaced ({name: bytes or None})."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            if info.filename in replace:
                data = replace[info.filename]
                if data is not None:
                    z.writestr(info.filename, data)
            else:
                z.writestr(info, zin.read(info.filename))
        for name, data in replace.items():
            if name not in zin.namelist() and data is not None:
                z.writestr(name, data)
    return Path(target)


def sheet_member(path, title):
    """The zip member name of sheet ``title``."""
    wb = openpyxl.load_workbook(path, read_only=True)
    try:
        index = wb.sheetnames.index(title)
    finally:
        wb.close()
    # openpyxl, Excel and LibreOffice all number sheets in order when they save.
    return f"xl/worksheets/sheet{index + 1}.xml"
