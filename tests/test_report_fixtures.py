"""Helpers shared by the reader and report tests: planners to fill, and filling them.

``blank_planner`` builds a small stand-in planner that honours the defined-name contract of
``udfs.quantities`` (an Inputs sheet and an Outputs sheet with native formulas).
``planner_template`` prefers the real generated planner when the generator is there.
``fill`` types known plans into a copy of either, through the defined names, as a user would.
"""

from __future__ import annotations

import datetime as dt
import importlib
import shutil
import zipfile
from pathlib import Path

import openpyxl
from openpyxl.workbook.defined_name import DefinedName

from udfs import calibration
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS

PLANNER = "training-run-planner.xlsx"
COLUMNS = 4

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


def _col(k):
    return openpyxl.utils.get_column_letter(3 + k)


def blank_planner(path, columns=COLUMNS):
    """A stand-in planner: Inputs!C..F and Outputs!C..F, one defined name per quantity."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Inputs"
    out = wb.create_sheet("Outputs")
    ctl = wb.create_sheet("Control")
    ctl["A1"], ctl["B1"] = "Template version", "test-1"
    ctl["A2"], ctl["B2"] = "Active scenario", 1
    wb.defined_names["template_version"] = DefinedName("template_version", attr_text="Control!$B$1")
    wb.defined_names["active_scenario"] = DefinedName("active_scenario", attr_text="Control!$B$2")
    rows = {}
    for i, q in enumerate(PLAN_INPUTS):
        r = 3 + i
        rows[q.name] = r
        ws.cell(row=r, column=1, value=q.label)
        ws.cell(row=r, column=2, value=q.unit)
        last = _col(columns - 1)
        wb.defined_names[q.name] = DefinedName(q.name, attr_text=f"Inputs!$C${r}:${last}${r}")
        for k in range(columns):
            if q.name == "scenario_name" and k < 2:
                ws.cell(row=r, column=3 + k, value=f"Scenario {k + 1}")
            elif q.name == "accelerator_name":
                ws.cell(row=r, column=3 + k, value="H100 SXM")
            elif q.name == "start_date":
                ws.cell(row=r, column=3 + k).number_format = "yyyy-mm-dd"
    mfu = calibration.default_mfu()
    orow = {}
    for i, q in enumerate(PLAN_OUTPUTS):
        r = 3 + i
        orow[q.name] = r
        out.cell(row=r, column=1, value=q.label)
        out.cell(row=r, column=2, value=q.unit)
        last = _col(columns - 1)
        wb.defined_names[q.name] = DefinedName(q.name, attr_text=f"Outputs!$C${r}:${last}${r}")
    for k in range(columns):
        c = _col(k)

        def i(name, c=c):
            return f"Inputs!{c}{rows[name]}"

        def o(name, c=c):
            return f"{c}{orow[name]}"

        def d(name, default, c=c):
            return f'IF({i(name)}<>"",{i(name)},{default})'

        f = {
            "effective_tflops": f'IF({i("effective_tflops_input")}<>"",'
            f"{i('effective_tflops_input')},{d('peak_tflops', 989.4)}*{d('mfu', mfu)}"
            f"*{d('goodput', 1)})",
            "training_flops": f"6*{d('active_params', i('total_params'))}*{i('training_tokens')}",
            "accelerator_hours": f"{o('training_flops')}/({o('effective_tflops')}*1E+12)/3600",
            "wall_clock_days": f"{o('accelerator_hours')}/{i('accelerators')}/24",
            "checkpoint_gb": f"{i('total_params')}*{d('checkpoint_bytes_per_param', 2)}/1E+9",
            "rental_cost_usd": f"{o('accelerator_hours')}*{d('usd_per_accelerator_hour', 2)}",
            "electricity_kwh": f"{o('accelerator_hours')}*{d('watts_per_accelerator', 700)}"
            f"*{d('server_overhead', 1)}*{d('pue', 1)}/1000",
            "electricity_cost_usd": f"{o('electricity_kwh')}*{d('usd_per_kwh', 0.08)}",
            "co2_tonnes": f"{o('electricity_kwh')}*{d('grams_co2_per_kwh', 481)}/1E+6",
            "total_cost_usd": f"{o('rental_cost_usd')}+{o('electricity_cost_usd')}",
            "min_accelerators_for_memory": f"CEILING({i('total_params')}*16/(80*1E+9),1)",
            "iterations_per_year": f"365/{o('wall_clock_days')}",
        }
        for name, formula in f.items():
            out[o(name)] = f'=IF({i("total_params")}="","",{formula})'
    wb.save(path)
    return Path(path)


def planner_template(tmp_path_factory):
    """A blank planner: the generated one when the generator exists, else the stand-in."""
    folder = tmp_path_factory.mktemp("template")
    try:
        generate = importlib.import_module("workbook_templates.generate")
    except ModuleNotFoundError:
        generate = None
    writer = getattr(generate, "write_templates", None)
    if writer is not None:
        written = writer(folder)
        paths = {Path(p).name: Path(p) for p in written} if written else {}
        if PLANNER in paths:
            return paths[PLANNER]
        if (folder / PLANNER).exists():
            return folder / PLANNER
    return blank_planner(folder / PLANNER)


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


def cell_of(wb, name, k):
    ((sheet, ref),) = wb.defined_names[name].destinations
    first = ref.replace("$", "").split(":")[0]
    col, row = openpyxl.utils.cell.coordinate_from_string(first)
    col = openpyxl.utils.column_index_from_string(col) + k
    return wb[sheet], f"{openpyxl.utils.get_column_letter(col)}{row}"


def set_cell(wb, name, k, value):
    ws, coord = cell_of(wb, name, k)
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
