"""Shared fixtures: the generated templates, and their copies recalculated by LibreOffice.

``generated_templates`` (file name -> Path) writes every template once per session;
``recalculated_templates`` (file name -> Path) is the same files after a forced recalculation
by headless LibreOffice (skipped when soffice is missing). ``template_variants`` are copies
of the planner with inputs changed as a user would (see ``VARIANTS``); they are recalculated
in the same LibreOffice call (``recalculated_variants``), since each call costs 1-2 s.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import openpyxl
import pytest

PLANNER = "training-run-planner.xlsx"

#: A plan typed into the first blank custom column (required inputs only; the column's
#: visible defaults do the rest).
CUSTOM_PLAN = {
    "scenario_name": "My 70B MoE",
    "total_params": 70e9,
    "active_params": 12e9,
    "training_tokens": 3e12,
    "accelerators": 1536,
}

#: A fully typed plan for the second custom column, with the switch pointing at it.
TYPED_PLAN = {
    "scenario_name": "=cmd|' /C calc'!A0",  # formula injection attempt: must stay text
    "total_params": 405e9,
    "training_tokens": 15e12,
    "accelerators": 8192,
    "accelerator_name": "B200 (HGX)",
    "peak_tflops": None,
    "mfu": 0.42,
    "goodput": 0.9,
    "usd_per_accelerator_hour": 3.5,
    "watts_per_accelerator": 1000,
    "server_overhead": 1.82,
    "pue": 1.1,
    "usd_per_kwh": 0.11,
    "grams_co2_per_kwh": 350,
    "checkpoint_bytes_per_param": 13,
    "start_date": dt.datetime(2027, 1, 17),
}


def planner_cell(wb, name, k):
    """Worksheet and coordinate of scenario column ``k`` (0-based) of defined name ``name``."""
    ((sheet, ref),) = wb.defined_names[name].destinations
    first = ref.replace("$", "").split(":")[0]
    col, row = openpyxl.utils.cell.coordinate_from_string(first)
    col = openpyxl.utils.column_index_from_string(col) + k
    return wb[sheet], f"{openpyxl.utils.get_column_letter(col)}{row}"


def type_plan(wb, k, plan):
    """Type ``plan`` into scenario column ``k`` as a user would (strings stay text)."""
    for name, value in plan.items():
        ws, coord = planner_cell(wb, name, k)
        ws[coord].value = value
        if isinstance(value, str) and value.startswith(("=", "+", "-", "@")):
            ws[coord].data_type = "s"


def _variant_custom(src, dst):
    wb = openpyxl.load_workbook(src)
    type_plan(wb, 3, CUSTOM_PLAN)  # Custom 1 (columns: dense, MoE, seed, custom...)
    wb.save(dst)


def _variant_typed(src, dst):
    wb = openpyxl.load_workbook(src)
    type_plan(wb, 4, TYPED_PLAN)  # Custom 2
    ws, coord = planner_cell(wb, "active_scenario", 0)
    ws[coord].value = 5
    wb.save(dst)


#: Variant file name -> how to make it from the generated planner.
VARIANTS = {
    "planner-custom.xlsx": _variant_custom,
    "planner-typed.xlsx": _variant_typed,
}


@pytest.fixture(scope="session")
def generated_templates(tmp_path_factory):
    """Every template, written once by ``write_templates``: file name -> Path."""
    from workbook_templates.generate import write_templates

    folder = tmp_path_factory.mktemp("templates")
    written = write_templates(folder)
    return {Path(p).name: Path(p) for p in written}


@pytest.fixture(scope="session")
def template_variants(generated_templates, tmp_path_factory):
    """Copies of the planner with user inputs typed in: file name -> Path."""
    folder = tmp_path_factory.mktemp("variants")
    out = {}
    for name, make in VARIANTS.items():
        make(generated_templates[PLANNER], folder / name)
        out[name] = folder / name
    return out


@pytest.fixture(scope="session")
def _recalculated_all(generated_templates, template_variants, tmp_path_factory):
    from workbook_templates.recalc import find_soffice, recalculate

    if find_soffice() is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    out = tmp_path_factory.mktemp("recalculated")
    paths = [*generated_templates.values(), *template_variants.values()]
    return {p.name: p for p in recalculate(paths, out)}


@pytest.fixture(scope="session")
def recalculated_templates(_recalculated_all, generated_templates):
    """The generated templates after a forced LibreOffice recalculation: file name -> Path."""
    return {name: _recalculated_all[name] for name in generated_templates}


@pytest.fixture(scope="session")
def recalculated_variants(_recalculated_all, template_variants):
    """The planner variants after a forced LibreOffice recalculation: file name -> Path."""
    return {name: _recalculated_all[name] for name in template_variants}


def copy_of(path, folder, name=None):
    """A copy of ``path`` in ``folder`` (tests must not change the session's files)."""
    target = Path(folder) / (name or Path(path).name)
    shutil.copyfile(path, target)
    return target
