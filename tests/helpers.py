"""Shared test helpers: plans typed into the planner as a user would, and LibreOffice.

Plain functions and data, imported by test modules (``from helpers import ...``); the
pytest fixtures that use them live in ``conftest.py``.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time

import openpyxl
import pytest

from workbook_templates.recalc import find_soffice, find_ssconvert

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


#: The same plan on an A100, power left blank: it must take the A100's TDP (400 W).
A100_PLAN = {**CUSTOM_PLAN, "scenario_name": "On A100s", "accelerator_name": "A100 SXM 80GB"}


def _variant_custom(src, dst):
    wb = openpyxl.load_workbook(src)
    type_plan(wb, 3, CUSTOM_PLAN)  # Custom 1 (columns: dense, MoE, seed, custom...)
    type_plan(wb, 4, A100_PLAN)  # Custom 2
    ws, coord = planner_cell(wb, "active_scenario", 0)
    ws[coord].value = 3  # the seed column, whose effective TFLOP/s is a typed override
    wb.save(dst)


def _variant_typed(src, dst):
    wb = openpyxl.load_workbook(src)
    type_plan(wb, 4, TYPED_PLAN)  # Custom 2
    ws, coord = planner_cell(wb, "active_scenario", 0)
    ws[coord].value = 5
    wb.save(dst)


def random_plans(seed=20261129, n=5):
    """``n`` random but valid plans that exercise every way an input resolves.

    Optional inputs are sometimes None (the cell is cleared, so the workbook's column C and the
    engine's defaults must agree), the throughput is sometimes an override, sometimes a typed
    peak, sometimes the catalogue's peak with a typed or blank MFU.
    """
    from udfs import catalogue

    rng = random.Random(seed)
    names = list(catalogue.accelerators()["name"])
    plans = []
    for i in range(n):
        total = rng.choice([7e9, 70e9, 405e9, 671e9, 1.2e12]) * rng.uniform(0.5, 2)
        plan = {
            "scenario_name": f"Random {i + 1}",
            "total_params": total,
            "active_params": rng.choice([None, total, total * rng.uniform(0.02, 0.5)]),
            "training_tokens": rng.uniform(0.2e12, 40e12),
            "accelerators": float(rng.choice([256, 1000, 2048, 16384, 100000])),
            "accelerator_name": rng.choice(names),
            "peak_tflops": None,
            "mfu": rng.choice([None, rng.uniform(0.15, 0.6)]),
            "goodput": rng.choice([None, rng.uniform(0.7, 1.0)]),
            "effective_tflops_input": None,
            "usd_per_accelerator_hour": rng.choice([None, rng.uniform(0.5, 6.0)]),
            "watts_per_accelerator": rng.choice([None, rng.uniform(300, 1200)]),
            "server_overhead": rng.choice([None, rng.uniform(1.0, 2.0)]),
            "pue": rng.choice([None, rng.uniform(1.0, 1.6)]),
            "usd_per_kwh": rng.choice([None, rng.uniform(0.03, 0.3)]),
            "grams_co2_per_kwh": rng.choice([None, rng.uniform(20, 800)]),
            "checkpoint_bytes_per_param": rng.choice([None, 2.0, 13.0]),
            "start_date": dt.datetime(2026, rng.randint(1, 12), rng.randint(1, 28)),
        }
        mode = i % 3
        if mode == 1:
            plan["effective_tflops_input"] = rng.uniform(50, 900)
            plan["mfu"] = plan["goodput"] = None  # the override is used as is
        elif mode == 2:
            plan["peak_tflops"] = rng.uniform(100, 3000)
        if i == n - 1:
            plan["accelerator_name"] = None  # no catalogue row: peak must be typed
            plan["peak_tflops"] = rng.uniform(100, 3000)
            plan["effective_tflops_input"] = None
        plans.append(plan)
    return plans


def _variant_random(src, dst):
    wb = openpyxl.load_workbook(src)
    for i, plan in enumerate(random_plans()):
        type_plan(wb, 3 + i, plan)
    wb.save(dst)


#: Inputs that slip past data validation (pasted, or typed in another tool): column -> plan.
BAD_PLANS = {
    3: {"total_params": "405X", "training_tokens": 15e12, "accelerators": 1024},
    4: {"total_params": 70e9, "active_params": 80e9, "training_tokens": 2e12, "accelerators": 64},
    5: {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 64, "mfu": 1.5},
    6: {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 64,
        "accelerator_name": "H100 PCIe (not in the catalogue)"},
    7: {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 64.5},
}  # fmt: skip


def _variant_bad(src, dst):
    wb = openpyxl.load_workbook(src)
    for k, plan in BAD_PLANS.items():
        type_plan(wb, k, plan)
    wb.save(dst)


#: Variant file name -> how to make it from the generated planner.
VARIANTS = {
    "planner-custom.xlsx": _variant_custom,
    "planner-typed.xlsx": _variant_typed,
    "planner-random.xlsx": _variant_random,
    "planner-bad.xlsx": _variant_bad,
}


def is_true(value):
    """A TRUE as LibreOffice saves it: True, or 1 (a cell formatted to print TRUE/FALSE is
    stored as a number)."""
    if isinstance(value, bool):
        return value
    return isinstance(value, (int, float)) and value == 1


def row_values(wb, name):
    """Values of defined name ``name`` (a row or a single cell) as a list."""
    ((sheet, ref),) = wb.defined_names[name].destinations
    got = wb[sheet][ref]
    if isinstance(got, openpyxl.cell.cell.Cell):
        return [got.value]
    return [c.value for row in got for c in row]


def run_cli(argv):
    """``compute-lab`` run in this process: (status, stdout, stderr, warnings raised)."""
    import contextlib
    import io
    import warnings

    from compute_lab.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(record=True) as caught,
    ):
        warnings.simplefilter("always")
        try:
            code = main([str(a) for a in argv])
        except SystemExit as stop:  # main returns statuses; this would be a defect
            code = f"SystemExit({stop.code})"
    return code, out.getvalue(), err.getvalue(), caught


def require_soffice():
    """The path of ``soffice``; without it, fail when ``CI`` is set, else skip the test.

    Every test that recalculates or prints a workbook calls this (or uses a fixture that
    does) and carries the ``libreoffice`` marker, so CI can never pass by skipping them.
    """
    path = find_soffice()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is required when CI is set: run `make libreoffice`")
        pytest.skip("LibreOffice (soffice) is not installed")
    return path


def require_ssconvert():
    """The path of Gnumeric's ``ssconvert``; without it, fail when ``CI`` is set, else skip.

    Every test that recalculates with Gnumeric uses a fixture that calls this and carries the
    ``gnumeric`` marker, so CI can never pass by skipping them.
    """
    path = find_ssconvert()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Gnumeric (ssconvert) is required when CI is set: run `make gnumeric`")
        pytest.skip("Gnumeric (ssconvert) is not installed")
    return path


def fenced_blocks(text, lang):
    """The fenced code blocks of a Markdown ``text`` whose info string is ``lang``, each as
    its list of lines."""
    blocks, body, info = [], None, None
    for line in text.splitlines():
        if line.startswith("```"):
            if body is None:
                body, info = [], line[3:].strip()
            else:
                if info == lang:
                    blocks.append(body)
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def interrupt_when_ready(program, argv, delay, timeout):
    """Run ``python -c program ARGV`` (a program that says "ready" on stderr once loaded),
    press Ctrl-C ``delay`` seconds after it is ready: (exit status, stdout, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", program, *argv],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr.readline().strip() == "ready"
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err
