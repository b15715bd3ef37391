"""``compute-lab report``: consolidate filled planners into a hand-off workbook for finance.

Each file goes through :func:`workbook_templates.reader.read_planner` (safe opening, defined
names, inputs located by cell); every scenario with inputs is recomputed by the engine
(:func:`udfs.plan.engine_arguments` and :func:`udfs.engine.estimate`), so no figure is taken
from a cached cell. Where the file carries values saved by Excel or LibreOffice, each output
cell is compared with the engine's figure and every difference beyond a relative tolerance is
listed (a formula edited by hand shows up there). Mismatches are warnings: the run still
writes its output and exits 0, with the mismatches on the console and in the Mismatches and
Checks sheets.

The consolidation is a set of pandas tables (:class:`Consolidation`): runs, costs, totals,
monthly (spend added up by calendar month), monthly_by_run, mismatches, checks, files,
sources. :func:`write_workbook` lays them out for finance with openpyxl; the CSV writer
writes them as CSV. :func:`write_outputs` writes all the files of a run all or nothing
(:class:`workbook_templates.files.Staging`): each to a temporary file beside its target, then
all moved into place; on any failure every target holds what it held before, never over an
existing file without ``force``.

Every figure is in range or the run is refused: a figure the engine gives as infinite or
over 1e300 (no plan comes near it; a spreadsheet overflows past about 1.8e308) is a problem at
the cell(s) of the input(s) that drove it, found by giving each typed input (then each pair)
a typical value and recomputing; an :class:`~udfs.validation.InputError` the engine raises is
located the same way. :func:`check_in_range` is the last guard over every table and total
before anything is written. The same planner given twice (one file by two paths or links, or
two files with the same SHA-256) is refused, as it would be counted twice.

A run without a start date cannot be scheduled: it counts in every total, is left out of the
monthly tables, and is listed in Checks (and on the console) as unscheduled.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import math
import os
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from udfs import calibration, catalogue, engine, plan
from udfs.cli import CommandError
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, SEED_PLAN
from udfs.validation import InputError

from .files import Staging
from .reader import DEFAULT_MAX_BYTES, PlannerError, read_planner

__all__ = [
    "DEFAULT_TOLERANCE",
    "Consolidation",
    "consolidate",
    "write_workbook",
    "write_outputs",
    "safe_text",
    "configure_parser",
    "run",
]

PROG = "compute-lab report"
#: Relative tolerance of the cached-value check.
DEFAULT_TOLERANCE = 1e-9
_ABS_TOLERANCE = 1e-12

INPUT_NAMES = tuple(q.name for q in PLAN_INPUTS)
OUTPUT_NAMES = tuple(q.name for q in PLAN_OUTPUTS)
_Q = {q.name: q for q in PLAN_INPUTS + PLAN_OUTPUTS}

# Engine argument names that differ from the planner's input names.
_ARGUMENT_TO_INPUT = {
    "tokens": "training_tokens",
    "bytes_per_param": "checkpoint_bytes_per_param",
    "hbm_gb": "accelerator_name",
}

# Text that a spreadsheet would take for a formula when it starts a cell.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

CSV_FILES = (
    "runs",
    "costs",
    "totals",
    "monthly",
    "monthly_by_run",
    "mismatches",
    "checks",
    "files",
    "sources",
)


# ---------------------------------------------------------------------------------------------
# Consolidation
# ---------------------------------------------------------------------------------------------


@dataclass
class Run:
    """One recomputed scenario."""

    scenario: object  # reader.Scenario
    arguments: dict  # engine keyword arguments
    outputs: dict  # engine outputs
    defaults_used: list  # "name = value" of blank inputs that took a default
    other_costs_usd: float


@dataclass
class Consolidation:
    """Everything a hand-off holds, as DataFrames, with what went wrong on the way."""

    planners: list
    runs: list
    bad: list  # PlannerError of each file left out
    tables: dict = field(default_factory=dict)
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def mismatches(self):
        return self.tables["mismatches"]

    @property
    def unscheduled(self):
        return [r for r in self.runs if r.scenario.inputs.get("start_date") is None]


#: The largest figure a hand-off holds. No plan comes near it; past it a figure is an
#: overflow (infinite, or clamped at the largest double, about 1.8e308, as ``nan_to_num``
#: does) or so close to one that a spreadsheet adding such figures up overflows.
_LARGEST = 1e300
_RANGE_RULE = "out of range (over 1e+300; a spreadsheet overflows past about 1.8e+308)"


def _out_of_range(value):
    """True for a figure out of range: infinite, or over :data:`_LARGEST` in magnitude.
    NaN is a blank figure (the engine has none), not out of range."""
    if isinstance(value, np.ndarray | np.generic):
        value = np.asarray(value, dtype=float)
        return bool(np.any(np.isinf(value) | (np.abs(np.nan_to_num(value)) > _LARGEST)))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    value = float(value)
    return math.isinf(value) or abs(value) > _LARGEST


def _label(name):
    return f"{name} ({_Q[name].label})" if name in _Q else name


def _input_name(argument):
    """The planner input behind an engine argument name, or None."""
    name = _ARGUMENT_TO_INPUT.get(argument, argument)
    if argument == "effective_tflops":
        name = "effective_tflops_input"
    return name if name in INPUT_NAMES else None


def _estimate(inputs):
    """The engine's outputs for one scenario's inputs (numpy warnings silenced: every
    figure is checked for range by the caller)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kwargs = plan.engine_arguments(inputs)
        return kwargs, engine.estimate(**kwargs)


def _bad_outputs(outputs):
    return [n for n, v in outputs.items() if _out_of_range(v)]


def _in_range(inputs):
    try:
        _, outputs = _estimate(inputs)
    except InputError:
        return False
    return not _bad_outputs(outputs)


def _drivers(inputs):
    """The typed inputs that drive a figure out of range: the smallest set (one input, else
    a pair) that, given a typical value instead, brings every figure back in range."""
    numeric = [n for n in INPUT_NAMES if _Q[n].kind == "number" and inputs.get(n) is not None]

    def typical(trial, names):
        for n in names:
            trial[n] = SEED_PLAN.get(n) if n in plan.REQUIRED else None
        return trial

    for size in (1, 2):
        found = []
        for names in itertools.combinations(numeric, size):
            if _in_range(typical(dict(inputs), names)):
                found.extend(n for n in names if n not in found)
        if found:
            return [n for n in INPUT_NAMES if n in found]
    return []


def _range_problem(scenario, outputs_named):
    """The Problem of a scenario whose inputs drive ``outputs_named`` out of range."""
    drivers = _drivers(scenario.inputs)
    shown = ", ".join(outputs_named[:4]) + (", ..." if len(outputs_named) > 4 else "")
    if not drivers:
        return scenario.problem(
            "scenario_name",
            f"scenario {scenario.name!r}: its inputs drive {shown} {_RANGE_RULE}: use "
            "realistic figures",
        )
    first, others = drivers[0], drivers[1:]
    message = f"{_label(first)} = {scenario.inputs[first]:g}"
    for n in others:
        message += f" and {_label(n)} = {scenario.inputs[n]:g} at {scenario.cells[n]}"
    verb = "drive" if others else "drives"
    message += f" {verb} {shown} {_RANGE_RULE}: use realistic figures"
    return scenario.problem(first, message)


def _recompute(scenario):
    """A Run for one scenario; InputError is turned into a Problem at the input's cell.

    A figure driven out of range (infinite, or over 1e300: an overflow or next to one) is a
    Problem at the cell(s) of the input(s) that drove it, whether the engine raised it as an
    InputError naming an output or returned the figure. A run that would end after the year
    9999 is a Problem at its start date.
    """
    inputs = scenario.inputs
    try:
        kwargs, outputs = _estimate(inputs)
    except InputError as err:
        name = _input_name(err.argument)
        if name is None and err.argument in OUTPUT_NAMES:  # an output out of range
            raise PlannerError(scenario.path, [_range_problem(scenario, [err.argument])]) from None
        name = name or err.argument
        message = err.describe(argument_label=_label(name))
        raise PlannerError(scenario.path, [scenario.problem(name, message)]) from None
    bad = _bad_outputs(outputs)
    if bad:
        bad = [n for n in OUTPUT_NAMES if n in bad] + [n for n in bad if n not in OUTPUT_NAMES]
        raise PlannerError(scenario.path, [_range_problem(scenario, bad)])
    start = inputs.get("start_date")
    days = float(outputs["wall_clock_days"])
    if start is not None and start.toordinal() + days >= _dt.date.max.toordinal():
        raise PlannerError(
            scenario.path,
            [
                scenario.problem(
                    "start_date",
                    f"the run starting {start.isoformat()} lasts {days:,.4g} days "
                    "(wall_clock_days) and would end after the year 9999, the last date a "
                    "spreadsheet holds: check the inputs that set its length",
                )
            ],
        )
    defaults = []
    for q in PLAN_INPUTS:
        if inputs.get(q.name) is not None or q.name in ("scenario_name", "start_date"):
            continue
        if q.name == "active_params":
            defaults.append("active_params = total_params (dense)")
        elif q.name == "peak_tflops" and "peak_tflops" in kwargs:
            defaults.append(f"peak_tflops = {kwargs['peak_tflops']:g} (catalogue)")
        elif q.name in ("mfu", "goodput") and q.name in kwargs:
            defaults.append(f"{q.name} = {kwargs[q.name]:.4g}")
        elif q.name in plan.PASS_THROUGH:
            defaults.append(f"{q.name} = {kwargs[q.name]:g}")
    other = float(kwargs.get("other_costs_usd", 0.0))
    return Run(scenario, kwargs, outputs, defaults, other)


def _compare(planner, run, tolerance):
    """Mismatch rows between the file's saved output values and the engine's."""
    rows = []
    sc = run.scenario
    for name in OUTPUT_NAMES:
        cached = sc.cached.get(name)
        is_formula = sc.formulas.get(name, True)
        if is_formula and not planner.has_cached_values:
            continue  # never calculated by a spreadsheet: nothing to compare
        value = float(run.outputs[name])
        ok, rel = _agrees(cached, value, tolerance)
        if ok:
            continue
        ref = sc.cells[name]
        rows.append(
            {
                "file": str(sc.path),
                "sheet": ref.sheet,
                "cell": ref.cell,
                "name": name,
                "scenario": sc.name,
                "cached_value": _shown(cached),
                "engine_value": None if math.isnan(value) else value,
                "relative_difference": rel,
                "cell_holds": "formula" if is_formula else "typed value",
            }
        )
    return rows


def _agrees(cached, value, tolerance):
    """(agrees, relative difference or None)."""
    numeric = isinstance(cached, int | float) and not isinstance(cached, bool)
    if math.isnan(value):  # the engine has no figure (e.g. no catalogue HBM)
        return (not numeric), None
    if not numeric:
        return False, None
    cached = float(cached)
    if math.isclose(cached, value, rel_tol=tolerance, abs_tol=_ABS_TOLERANCE):
        return True, 0.0
    scale = max(abs(cached), abs(value))
    return False, abs(cached - value) / scale if scale else None


def _shown(value):
    if value is None:
        return "(blank)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return value
    return str(value)


def consolidate(paths, *, max_bytes=DEFAULT_MAX_BYTES, tolerance=DEFAULT_TOLERANCE):
    """Read, recompute and consolidate ``paths``.

    A file that cannot be read, or any of whose scenarios the engine rejects, is left out
    and its :class:`~workbook_templates.reader.PlannerError` (every problem in it) is in
    ``.bad``; the caller decides whether that stops the run.
    """
    planners, runs, bad = [], [], []
    mismatch_rows = []
    for path in paths:
        try:
            planner = read_planner(path, max_bytes=max_bytes, collect=True)
            file_runs, problems = [], list(planner.problems)
            for sc in planner.scenarios:  # every scenario's problem, not just the first
                try:
                    file_runs.append(_recompute(sc))
                except PlannerError as err:
                    problems.extend(err.problems)
            if problems:  # in column order, the reader's and the engine's together
                problems.sort(key=lambda p: _column_order(p.cell))
                raise PlannerError(path, problems)
        except PlannerError as err:
            bad.append(err)
            continue
        planners.append(planner)
        runs.extend(file_runs)
        for r in file_runs:
            mismatch_rows.extend(_compare(planner, r, tolerance))
    result = Consolidation(planners, runs, bad, tolerance=tolerance)
    result.tables = _tables(result, mismatch_rows)
    return result


def _column_order(cell):
    """Sort key of a problem's cell ("G5", or "column G" for a scenario column) by column."""
    m = re.search(r"([A-Z]+)\d*$", cell or "")
    letters = m.group(1) if m else ""
    return (len(letters), letters)


def _tables(c, mismatch_rows):
    run_rows, cost_rows, month_rows = [], [], []
    for r in c.runs:
        sc, out, kw = r.scenario, r.outputs, r.arguments
        key = {"file": str(sc.path), "column": sc.column, "scenario": sc.name}
        row = dict(key)
        for q in PLAN_INPUTS:
            if q.name == "scenario_name":
                continue
            row[q.name] = sc.inputs.get(q.name)
        # The figures the engine used where the planner cell was blank.
        row["active_params"] = kw.get("active_params", kw["total_params"])
        for name in ("peak_tflops", "mfu", "goodput", *plan.PASS_THROUGH):
            if name in kw:
                row[name] = kw[name]
        for name in OUTPUT_NAMES:
            row[name] = _num(out[name])
        row["defaults_used"] = "; ".join(r.defaults_used)
        row["scheduled"] = "yes" if sc.inputs.get("start_date") else "no: no start date"
        run_rows.append(row)

        compute, power = out["rental_cost_usd"], out["electricity_cost_usd"]
        total = out["total_cost_usd"]
        cost_rows.append(
            {
                **key,
                "accelerator_hours": out["accelerator_hours"],
                "usd_per_accelerator_hour": kw["usd_per_accelerator_hour"],
                "rental_cost_usd": compute,
                "electricity_kwh": out["electricity_kwh"],
                "usd_per_kwh": kw["usd_per_kwh"],
                "electricity_cost_usd": power,
                "other_costs_usd": r.other_costs_usd,
                "total_cost_usd": total,
                "rental_cost_share": compute / total if total else None,
                "electricity_cost_share": power / total if total else None,
                "other_costs_share": r.other_costs_usd / total if total else None,
                "co2_tonnes": out["co2_tonnes"],
            }
        )
        start = sc.inputs.get("start_date")
        if start is not None:
            for month, share in engine.month_shares(start, out["wall_clock_days"]):
                month_rows.append(
                    {
                        **key,
                        "month": month,
                        "share": share,
                        "rental_cost_usd": compute * share,
                        "electricity_cost_usd": power * share,
                        "other_costs_usd": r.other_costs_usd * share,
                        "total_cost_usd": total * share,
                    }
                )

    runs = pd.DataFrame(run_rows, columns=_RUN_COLUMNS)
    costs = pd.DataFrame(cost_rows, columns=_COST_COLUMNS)
    by_run = pd.DataFrame(month_rows, columns=_MONTH_RUN_COLUMNS)
    money = ["rental_cost_usd", "electricity_cost_usd", "other_costs_usd", "total_cost_usd"]
    if len(by_run):
        monthly = (
            by_run.groupby("month", sort=True)
            .agg(
                rental_cost_usd=("rental_cost_usd", "sum"),
                electricity_cost_usd=("electricity_cost_usd", "sum"),
                other_costs_usd=("other_costs_usd", "sum"),
                total_cost_usd=("total_cost_usd", "sum"),
                runs=("scenario", "size"),
            )
            .reset_index()
        )
    else:
        monthly = pd.DataFrame(columns=["month", *money, "runs"])
    is_scheduled = (runs["scheduled"] == "yes").to_numpy(dtype=bool)
    scheduled, unscheduled = costs[is_scheduled], costs[~is_scheduled]
    totals = pd.DataFrame(
        [
            {
                "files": len(c.planners),
                "runs": len(c.runs),
                "accelerator_hours": costs["accelerator_hours"].sum(),
                "rental_cost_usd": costs["rental_cost_usd"].sum(),
                "electricity_kwh": costs["electricity_kwh"].sum(),
                "electricity_cost_usd": costs["electricity_cost_usd"].sum(),
                "other_costs_usd": costs["other_costs_usd"].sum(),
                "total_cost_usd": costs["total_cost_usd"].sum(),
                "co2_tonnes": costs["co2_tonnes"].sum(),
                "scheduled_total_cost_usd": scheduled["total_cost_usd"].sum(),
                "unscheduled_total_cost_usd": unscheduled["total_cost_usd"].sum(),
            }
        ]
    )
    mismatches = pd.DataFrame(mismatch_rows, columns=_MISMATCH_COLUMNS)
    files = pd.DataFrame(
        [
            {
                "file": str(p.path),
                "size_bytes": p.size_bytes,
                "sha256": p.sha256,
                "template_version": _shown(p.template_version)
                if p.template_version is not None
                else None,
                "scenarios_read": len(p.scenarios),
                "cached_values": "yes" if p.has_cached_values else "no (never recalculated)",
            }
            for p in c.planners
        ],
        columns=_FILE_COLUMNS,
    )
    return {
        "runs": runs,
        "costs": costs,
        "totals": totals,
        "monthly": monthly,
        "monthly_by_run": by_run,
        "mismatches": mismatches,
        "checks": _checks(c, mismatches),
        "files": files,
        "sources": _sources(c),
    }


def _num(value):
    value = float(value)
    return None if math.isnan(value) else value


_RUN_COLUMNS = [
    "file",
    "column",
    "scenario",
    *[n for n in INPUT_NAMES if n != "scenario_name"],
    *OUTPUT_NAMES,
    "defaults_used",
    "scheduled",
]
_COST_COLUMNS = [
    "file",
    "column",
    "scenario",
    "accelerator_hours",
    "usd_per_accelerator_hour",
    "rental_cost_usd",
    "electricity_kwh",
    "usd_per_kwh",
    "electricity_cost_usd",
    "other_costs_usd",
    "total_cost_usd",
    "rental_cost_share",
    "electricity_cost_share",
    "other_costs_share",
    "co2_tonnes",
]
_MONTH_RUN_COLUMNS = [
    "file",
    "column",
    "scenario",
    "month",
    "share",
    "rental_cost_usd",
    "electricity_cost_usd",
    "other_costs_usd",
    "total_cost_usd",
]
_FILE_COLUMNS = [
    "file",
    "size_bytes",
    "sha256",
    "template_version",
    "scenarios_read",
    "cached_values",
]
_MISMATCH_COLUMNS = [
    "file",
    "sheet",
    "cell",
    "name",
    "scenario",
    "cached_value",
    "engine_value",
    "relative_difference",
    "cell_holds",
]


def _checks(c, mismatches):
    rows = []

    def add(check, status, detail, file=""):
        rows.append({"check": check, "status": status, "file": file, "detail": detail})

    add(
        "Files consolidated",
        "OK" if not c.bad else "WARNING",
        f"{len(c.planners)} file(s), {len(c.runs)} run(s)"
        + (f"; {len(c.bad)} bad file(s) left out (--skip-bad)" if c.bad else ""),
    )
    for err in c.bad:
        for p in err.problems:
            where = f"{p.where}: " if p.where else ""
            add("Bad file left out", "ERROR", where + p.message, str(err.path))
    for p in c.planners:
        if p.has_cached_values:
            n = int((mismatches["file"] == str(p.path)).sum()) if len(mismatches) else 0
            add(
                "Saved values agree with the engine",
                "OK" if n == 0 else "WARNING",
                "every output cell within the tolerance"
                if n == 0
                else f"{n} output cell(s) differ: see Mismatches",
                str(p.path),
            )
        else:
            add(
                "Saved values agree with the engine",
                "INFO",
                "no saved values (the file was never recalculated by a spreadsheet): "
                "nothing to compare; figures come from the engine",
                str(p.path),
            )
        if p.skipped_columns:
            shown = ", ".join(f"{col} ({name})" if name else col for col, name in p.skipped_columns)
            add(
                "Scenario columns without inputs",
                "INFO",
                f"not consolidated, no required input ({', '.join(plan.REQUIRED)}) filled: {shown}",
                str(p.path),
            )
    typed_over = False
    for r in c.runs:
        sc = r.scenario
        typed = [n for n, f in sc.formulas.items() if not f]
        typed_over = typed_over or bool(typed)
        if typed:
            cells = ", ".join(f"{sc.cells[n]} ({n})" for n in typed)
            add(
                "Output cells hold formulas",
                "WARNING",
                f"scenario {sc.name!r}: typed values instead of formulas at {cells}",
                str(sc.path),
            )
    if c.runs and not typed_over:
        add("Output cells hold formulas", "OK", "every output cell of every run is a formula")
    for r in c.unscheduled:
        sc = r.scenario
        add(
            "Run scheduled by month",
            "WARNING",
            f"scenario {sc.name!r} has no start date ({sc.cells['start_date']} is blank): "
            f"in the totals, left out of the monthly schedule "
            f"(US$ {r.outputs['total_cost_usd']:,.0f})",
            str(sc.path),
        )
    if c.runs and not c.unscheduled:
        add("Run scheduled by month", "OK", "every run has a start date")
    return pd.DataFrame(rows, columns=["check", "status", "file", "detail"])


def _sources(c):
    rows = []

    def add(section, item, value, detail):
        rows.append({"section": section, "item": item, "value": value, "detail": detail})

    method = [
        ("Training FLOPs", "6 x active parameters x training tokens (Kaplan 2020, Hoffmann 2022)"),
        (
            "Effective TFLOP/s",
            "the typed override, else peak TFLOP/s x MFU x goodput (peak from the catalogue "
            "when blank)",
        ),
        ("Accelerator-hours", "training FLOPs / (effective TFLOP/s x 1e12) / 3600"),
        ("Wall-clock days", "accelerator-hours / accelerators / 24 (linear scaling)"),
        ("Compute cost", "accelerator-hours x price per accelerator-hour (rental or ownership)"),
        ("Electricity", "accelerator-hours x watts x server overhead x PUE / 1000"),
        ("Electricity cost", "kWh x price per kWh"),
        ("Emissions", "kWh x grid gCO2/kWh / 1e6 (operational only)"),
        ("Other costs", "costs the engine carries besides compute and power; 0 from a planner"),
        ("Total cost", "compute + electricity + other"),
        (
            "Monthly schedule",
            "each run's costs spread evenly over its wall-clock time from its start date, "
            "split by calendar month (udfs.engine.month_shares, as the planner does)",
        ),
        (
            "Saved-value check",
            f"each output cell's saved value against the engine, relative tolerance "
            f"{c.tolerance:g}",
        ),
    ]
    for item, detail in method:
        add("Method", item, None, detail)
    add(
        "Assumption",
        "Default MFU",
        calibration.default_mfu(),
        "median implied MFU of the catalogue's runs with disclosed accelerator-hours",
    )
    for q in PLAN_INPUTS:
        if q.name == "scenario_name":
            continue
        detail = "; ".join(x for x in (q.unit, q.rule, q.note) if x)
        add("Input default", f"{q.name} ({q.label})", q.default, detail)
    used = sorted(
        {
            r.scenario.inputs["accelerator_name"]
            for r in c.runs
            if r.scenario.inputs.get("accelerator_name")
        }
    )
    for name in used:
        accel = catalogue.accelerator(name)
        add(
            "Accelerator",
            str(accel["name"]),
            _num(accel["bf16_tflops"]),
            f"BF16 TFLOP/s; HBM {accel['hbm_gb']:g} GB; source: "
            f"{catalogue.source('accelerator', accel['name'])}",
        )
    return pd.DataFrame(rows, columns=["section", "item", "value", "detail"])


# ---------------------------------------------------------------------------------------------
# The hand-off workbook
# ---------------------------------------------------------------------------------------------

_USD = '"$"#,##0;[Red]-"$"#,##0'
_USD_CENTS = '"$"#,##0.00'
_USD_MILLS = '"$"#,##0.000'
_INT = "#,##0"
_ONE = "#,##0.0"
_PCT = "0.0%"
_SCI = "0.000E+00"
_DATE = "yyyy-mm-dd"
_MONTH = "mmm yyyy"

_UNIT_FORMATS = {
    "parameters": _INT,
    "tokens": _INT,
    "accelerators": _INT,
    "TFLOP/s": _ONE,
    "fraction": _PCT,
    "US$/accelerator-hour": _USD_CENTS,
    "W": _INT,
    "ratio": "0.00",
    "US$/kWh": _USD_MILLS,
    "gCO2/kWh": _INT,
    "bytes": "0.0",
    "date": _DATE,
    "FLOPs": _SCI,
    "accelerator-hours": _INT,
    "days": _ONE,
    "GB": _ONE,
    "US$": _USD,
    "kWh": _INT,
    "tCO2": _ONE,
    "runs/year": "0.00",
}

_EXTRA = {
    # name: (header, number format)
    "file": ("File", None),
    "column": ("Column", None),
    "scenario": ("Scenario", None),
    "defaults_used": ("Blank inputs: value used", None),
    "scheduled": ("In monthly schedule", None),
    # (rental_cost_usd, electricity_cost_usd, total_cost_usd: the quantities' own labels)
    "other_costs_usd": ("Other costs (US$)", _USD),
    "rental_cost_share": ("Compute cost share", _PCT),
    "electricity_cost_share": ("Electricity cost share", _PCT),
    "other_costs_share": ("Other costs share", _PCT),
    "month": ("Month", _MONTH),
    "share": ("Share of run", _PCT),
    "runs": ("Runs", _INT),
    "files": ("Files", _INT),
    "scheduled_total_cost_usd": ("Scheduled by month (US$)", _USD),
    "unscheduled_total_cost_usd": ("Unscheduled: no start date (US$)", _USD),
    "sheet": ("Sheet", None),
    "cell": ("Cell", None),
    "name": ("Quantity", None),
    "cached_value": ("Saved in the file", "#,##0.########"),
    "engine_value": ("Engine", "#,##0.########"),
    "relative_difference": ("Relative difference", "0.00E+00"),
    "cell_holds": ("Cell holds", None),
    "check": ("Check", None),
    "status": ("Status", None),
    "detail": ("Detail", None),
    "size_bytes": ("Size (bytes)", _INT),
    "sha256": ("SHA-256", None),
    "template_version": ("Template version", None),
    "scenarios_read": ("Scenarios read", _INT),
    "cached_values": ("Saved values", None),
    "section": ("Section", None),
    "item": ("Item", None),
    "value": ("Value", "General"),
}

# Columns whose sum is meaningful in a totals row.
_ADDITIVE = {
    "training_flops",
    "accelerator_hours",
    "rental_cost_usd",
    "electricity_kwh",
    "electricity_cost_usd",
    "co2_tonnes",
    "total_cost_usd",
    "other_costs_usd",
}

#: Widest a column gets (longer text wraps).
_WIDE = {"file": 30, "detail": 90, "defaults_used": 60, "sha256": 66, "item": 40}


def _header(name):
    if name in _Q:
        q = _Q[name]
        return f"{q.label} ({q.unit})" if q.unit and q.unit != "date" else q.label
    return _EXTRA.get(name, (name, None))[0]


def _format(name):
    if name == "usd_per_accelerator_hour":
        return _USD_CENTS
    if name in _Q:
        return _UNIT_FORMATS.get(_Q[name].unit)
    return _EXTRA.get(name, (None, None))[1]


def safe_text(value):
    """``value`` with a leading apostrophe when a spreadsheet would read it as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _put(ws, row, col, value, number_format=None):
    """Write one value; text is always stored as text (never as a formula)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ws.cell(row=row, column=col)
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime().date()
    cell = ws.cell(row=row, column=col)
    cell.value = value
    if isinstance(value, str):
        cell.data_type = "s"  # openpyxl would store "=..." as a formula
    elif number_format and not isinstance(value, bool):
        cell.number_format = number_format
    return cell


def _styles():
    from openpyxl.styles import Alignment, Border, Font, PatternFill, Side

    return {
        "header_font": Font(bold=True, color="FFFFFF"),
        "header_fill": PatternFill("solid", fgColor="1F3864"),
        "header_align": Alignment(wrap_text=True, vertical="top"),
        "total_font": Font(bold=True),
        "total_border": Border(top=Side(style="thin"), bottom=Side(style="double")),
        "title_font": Font(bold=True, size=14),
        "status_fill": {
            "OK": PatternFill("solid", fgColor="C6EFCE"),
            "WARNING": PatternFill("solid", fgColor="FFEB9C"),
            "ERROR": PatternFill("solid", fgColor="FFC7CE"),
            "INFO": PatternFill("solid", fgColor="DDEBF7"),
        },
    }


#: Characters of column width per landscape A4 page (about 80% scale at most: readable).
_PAGE_CHARS = 190


def _print_setup(ws, title, header_rows="1:1", title_cols=None):
    """Landscape A4, as many pages wide as the columns need at a readable scale (1 to 3),
    each page as tall as needed, with the header row (and ``title_cols``) on every page."""
    from openpyxl.utils import get_column_letter

    widths = [
        ws.column_dimensions[get_column_letter(c)].width or 8.43
        for c in range(1, ws.max_column + 1)
    ]
    ws.page_setup.orientation = "landscape"
    ws.page_setup.paperSize = ws.PAPERSIZE_A4
    ws.page_setup.fitToWidth = max(1, min(3, math.ceil(sum(widths) / _PAGE_CHARS)))
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    if header_rows:
        ws.print_title_rows = header_rows
    if title_cols and ws.page_setup.fitToWidth > 1:
        ws.print_title_cols = title_cols
    ws.oddHeader.left.text = "Compute Lab hand-off"
    ws.oddHeader.right.text = title
    ws.oddFooter.left.text = "&D"
    ws.oddFooter.right.text = "Page &P of &N"
    ws.page_margins.left = ws.page_margins.right = 0.5


def _table(ws, df, styles, *, start_row=1, freeze_col=1, totals_label=None, title=""):
    """Write ``df`` with a header row; optional totals row; returns the last data row."""
    from openpyxl.utils import get_column_letter

    columns = list(df.columns)
    for j, name in enumerate(columns, start=1):
        cell = ws.cell(row=start_row, column=j, value=_header(name))
        cell.data_type = "s"
        cell.font = styles["header_font"]
        cell.fill = styles["header_fill"]
        cell.alignment = styles["header_align"]
    formats = [_format(n) for n in columns]
    row = start_row
    for row, record in enumerate(df.itertuples(index=False, name=None), start=start_row + 1):
        for j, value in enumerate(record, start=1):
            _put(ws, row, j, value, formats[j - 1])
    last = row
    if "status" in columns:
        k = columns.index("status") + 1
        for r in range(start_row + 1, last + 1):
            fill = styles["status_fill"].get(ws.cell(row=r, column=k).value)
            if fill is not None:
                ws.cell(row=r, column=k).fill = fill
    if totals_label and len(df):
        t = last + 1
        ws.cell(row=t, column=1, value=totals_label).font = styles["total_font"]
        for j, name in enumerate(columns, start=1):
            cell = ws.cell(row=t, column=j)
            cell.border = styles["total_border"]
            cell.font = styles["total_font"]
            if name in _ADDITIVE:
                total = pd.to_numeric(df[name], errors="coerce").sum(min_count=1)
                _put(ws, t, j, None if pd.isna(total) else float(total), formats[j - 1])
    _fit_columns(ws, columns, start_row, ws.max_row)
    ws.freeze_panes = ws.cell(row=start_row + 1, column=freeze_col + 1)
    if len(df):
        ws.auto_filter.ref = f"A{start_row}:{get_column_letter(len(columns))}{last}"
    ws.row_dimensions[start_row].height = 60  # headers wrap over up to four lines
    # On a sheet printed several pages wide, each page repeats the run's scenario name (or the
    # first column): the file and column stay on the first page.
    key = columns.index("scenario") + 1 if "scenario" in columns else 1
    _print_setup(ws, title, header_rows=f"{start_row}:{start_row}",
                 title_cols=f"{get_column_letter(key)}:{get_column_letter(key)}")  # fmt: skip
    return last


def _display_len(value, fmt):
    """About how many characters ``value`` takes when shown with number format ``fmt``."""
    if value is None:
        return 0
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool):
        return 5
    if isinstance(value, _dt.date):
        return 10
    if not isinstance(value, int | float) or not math.isfinite(value):
        return len(str(value))
    fmt = fmt or "General"
    if "E+" in fmt:
        return 10 + (value < 0)
    if "%" in fmt:
        return len(f"{value * 100:,.1f}%")
    decimals = len(fmt.split(".", 1)[1].split(";")[0].rstrip('"')) if "." in fmt else 0
    if fmt == "General":
        return len(f"{value:.10g}")
    return len(f"{value:,.{min(decimals, 10)}f}") + ("$" in fmt) + 1


def _fit_columns(ws, columns, header_row, last_row):
    """Size each column to its widest shown value (bold totals included) and its header."""
    from openpyxl.styles import Alignment
    from openpyxl.utils import get_column_letter

    for j, name in enumerate(columns, start=1):
        head = _header(name)
        # The header row wraps over up to four lines: its longest word must fit.
        need = max(max(len(w) for w in head.split()), len(head) / 3.2) + 2
        for r in range(header_row + 1, last_row + 1):
            cell = ws.cell(row=r, column=j)
            shown = _display_len(cell.value, cell.number_format)
            if cell.font is not None and cell.font.b:
                shown *= 1.1
            need = max(need, shown + 2)
        cap = _WIDE.get(name, 50)
        ws.column_dimensions[get_column_letter(j)].width = min(max(need, 8), cap)
        if need > cap:  # long text wraps within the column, from the top of its row
            for r in range(header_row + 1, last_row + 1):
                cell = ws.cell(row=r, column=j)
                if isinstance(cell.value, str) and len(cell.value) + 2 > cap:
                    cell.alignment = Alignment(wrap_text=True, vertical="top")


_SHEET_GUIDE = (
    ("Summary", "totals, the check status and this guide"),
    ("Runs", "one row per (file, scenario) with inputs: the inputs used and every output"),
    ("Costs", "cost breakdown per run: compute, electricity, other; shares; totals"),
    ("Monthly", "spend added up across runs by calendar month, with a chart"),
    ("Monthly by run", "each run's monthly spend (the rows Monthly adds up)"),
    ("Mismatches", "saved output values in the files that differ from the engine"),
    ("Checks", "what was checked, file by file: OK, INFO, WARNING, ERROR"),
    ("Files", "the files read: size, SHA-256, template version"),
    ("Sources", "method, defaults, the catalogue figures used and their sources"),
)


def _summary(ws, c, styles, generated):
    from udfs import __version__

    t = c.tables["totals"].iloc[0]
    ws["A1"] = "Compute Lab hand-off: training-run plans"
    ws["A1"].font = styles["title_font"]
    ws["A2"] = f"Generated {generated:%Y-%m-%d %H:%M} UTC by compute-lab {__version__}"
    ws["A3"] = (
        "Every figure is recomputed by the engine from the inputs; none is taken from a file."
    )
    statuses = set(c.tables["checks"]["status"])
    overall = "ERROR" if "ERROR" in statuses else "WARNING" if "WARNING" in statuses else "OK"
    rows = [
        ("Files consolidated", t["files"], _INT),
        ("Runs consolidated", t["runs"], _INT),
        ("Accelerator-hours", t["accelerator_hours"], _INT),
        ("Compute, rental or ownership (US$)", t["rental_cost_usd"], _USD),
        ("Electricity (kWh)", t["electricity_kwh"], _INT),
        ("Electricity (US$)", t["electricity_cost_usd"], _USD),
        ("Other (US$)", t["other_costs_usd"], _USD),
        ("Total (US$)", t["total_cost_usd"], _USD),
        ("of which scheduled by month (US$)", t["scheduled_total_cost_usd"], _USD),
        ("of which unscheduled: no start date (US$)", t["unscheduled_total_cost_usd"], _USD),
        ("Operational emissions (tCO2)", t["co2_tonnes"], _ONE),
        ("Saved values that differ from the engine", len(c.mismatches), _INT),
        ("Bad files left out", len(c.bad), _INT),
        ("Checks", overall, None),
    ]
    for i, (label, value, fmt) in enumerate(rows, start=5):
        ws.cell(row=i, column=1, value=label)
        cell = _put(ws, i, 2, value, fmt)
        if label == "Total (US$)":
            ws.cell(row=i, column=1).font = styles["total_font"]
            cell.font = styles["total_font"]
        if label == "Checks":
            cell.fill = styles["status_fill"][overall]
    r = 5 + len(rows) + 1
    ws.cell(row=r, column=1, value="Sheet").font = styles["total_font"]
    ws.cell(row=r, column=2, value="What it holds").font = styles["total_font"]
    for i, (sheet, what) in enumerate(_SHEET_GUIDE, start=r + 1):
        ws.cell(row=i, column=1, value=sheet)
        ws.cell(row=i, column=2, value=what)
    ws.column_dimensions["A"].width = 44
    ws.column_dimensions["B"].width = 70
    _print_setup(ws, "Summary", header_rows=None)


def _chart(ws, n_rows):
    from openpyxl.chart import BarChart, Reference

    chart = BarChart()
    chart.type = "col"
    chart.grouping = "stacked"
    chart.overlap = 100
    chart.title = "Spend by month (US$)"
    chart.y_axis.title = "US$"
    chart.y_axis.numFmt = "#,##0"
    chart.x_axis.title = "Month"
    chart.x_axis.number_format = _MONTH
    data = Reference(ws, min_col=2, max_col=4, min_row=1, max_row=n_rows + 1)
    cats = Reference(ws, min_col=1, min_row=2, max_row=n_rows + 1)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(cats)
    chart.height, chart.width = 9, 18
    ws.add_chart(chart, "I2")


def _build_workbook(c):
    from openpyxl import Workbook

    styles = _styles()
    wb = Workbook()
    generated = _dt.datetime.now(_dt.UTC)
    _summary(wb.active, c, styles, generated)
    wb.active.title = "Summary"
    tables = c.tables
    sheets = (
        ("Runs", tables["runs"], 3, "Total"),
        ("Costs", tables["costs"], 3, "Total"),
        ("Monthly", tables["monthly"], 1, "Total"),
        ("Monthly by run", tables["monthly_by_run"], 4, None),
        ("Mismatches", tables["mismatches"], 3, None),
        ("Checks", tables["checks"], 2, None),
        ("Files", tables["files"], 1, None),
        ("Sources", tables["sources"], 2, None),
    )
    for title, df, freeze, totals in sheets:
        ws = wb.create_sheet(title)
        last = _table(ws, df, styles, freeze_col=freeze, totals_label=totals, title=title)
        if not len(df):
            empty = {
                "Mismatches": "No saved value differs from the engine.",
                "Monthly": "No run has a start date: nothing to schedule.",
                "Monthly by run": "No run has a start date: nothing to schedule.",
            }.get(title, "Nothing to show.")
            ws.cell(row=last + 1, column=1, value=empty)
        if title == "Monthly" and len(df):
            _chart(ws, len(df))
    wb.properties.creator = "compute-lab report"
    wb.properties.title = "Compute Lab hand-off"
    return wb


def write_workbook(c, path):
    """Write the hand-off workbook of ``c`` to ``path`` (any existing file is replaced)."""
    _build_workbook(c).save(path)


def _csv_frames(c):
    out = {}
    for name in CSV_FILES:
        df = c.tables[name].copy()
        for col in df.columns:
            if not pd.api.types.is_numeric_dtype(df[col]):
                df[col] = df[col].map(safe_text)
        out[name] = df
    return out


# ---------------------------------------------------------------------------------------------
# Atomic output
# ---------------------------------------------------------------------------------------------


def _csv_text(value):
    return f"{value:.15g}"


def check_in_range(c):
    """Refuse (CommandError, one line) if any figure the hand-off would write is out of range.

    The last guard before writing: every number of every table, and every totals row of the
    workbook, must be finite and at most 1e300, also as the 15-digit text of the CSV files.
    The run's own figures are checked when it is recomputed; what is left is a sum over runs
    or months.
    """

    def bad(v):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, int | float):
            return False
        if isinstance(v, float) and math.isnan(v):
            return False
        return _out_of_range(v) or _out_of_range(float(_csv_text(float(v))))

    def culprits(df):
        if "total_cost_usd" in df.columns and "scenario" in df.columns and len(df):
            top = df.sort_values("total_cost_usd", ascending=False, key=abs).head(2)
            return (
                " (largest: "
                + "; ".join(
                    f"{r.file} scenario {r.scenario!r}" for r in top.itertuples(index=False)
                )
                + ")"
            )
        return ""

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for table, df in c.tables.items():
            for col in df.columns:
                values = df[col].tolist()
                for i, v in enumerate(values):
                    if bad(v):
                        row = df.iloc[i]
                        who = (
                            f" for {row['file']} scenario {row['scenario']!r}"
                            if "file" in df.columns and "scenario" in df.columns
                            else ""
                        )
                        raise CommandError(
                            f"the {table} table's {col}{who} would be {v:g}, {_RANGE_RULE}; "
                            "nothing written"
                        )
                if col in _ADDITIVE and table in ("runs", "costs", "monthly"):
                    total = pd.to_numeric(df[col], errors="coerce").sum(min_count=1)
                    if not pd.isna(total) and bad(float(total)):
                        raise CommandError(
                            f"the total of {col} over the {table} table would be "
                            f"{float(total):g}, {_RANGE_RULE}{culprits(df)}; nothing written"
                        )


def write_outputs(c, out=None, csv_dir=None, force=False):
    """Write the workbook and/or CSV files; all or nothing. Returns the paths written.

    Every file is written to a temporary file beside its target first; only when all are
    written are they moved into place, and if a move fails the files already moved are put
    back (see :class:`workbook_templates.files.Staging`): on any failure every target holds
    what it held before, and a CSV folder this run created is removed again.
    """
    check_in_range(c)
    with Staging(force) as staging:
        jobs = []  # (target, writer)
        if out is not None:
            jobs.append((Path(out), lambda p: write_workbook(c, p)))
        if csv_dir is not None:
            csv_dir = staging.folder(csv_dir, "--csv")
            for name, df in _csv_frames(c).items():
                jobs.append((csv_dir / f"{name}.csv", _csv_writer(df)))
        for target, writer in jobs:
            tmp = staging.new(target)
            try:
                writer(tmp)
            except OSError as exc:
                raise CommandError(
                    f"could not write {target}: {exc.strerror or exc}; nothing written"
                ) from None
        return staging.commit()


def _csv_writer(df):
    def write(path):
        frame = df.copy()
        for col in frame.columns:
            if frame[col].dtype == object:  # float_format skips mixed columns
                frame[col] = frame[col].map(
                    lambda v: f"{v:.15g}" if isinstance(v, float) and math.isfinite(v) else v
                )
            if frame[col].map(lambda v: isinstance(v, _dt.date)).any():
                frame[col] = frame[col].map(
                    lambda v: v.isoformat() if isinstance(v, _dt.date) else v
                )
        # 15 significant digits: what a double holds exactly, without the last-bit noise
        # of a sum (30840000.00000001 is written 30840000); 3.79e+25 FLOPs stay exact.
        frame.to_csv(path, index=False, encoding="utf-8", lineterminator="\n", float_format="%.15g")

    return write


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def configure_parser(parser):
    parser.add_argument("files", nargs="+", metavar="FILE.xlsx", help="filled planners")
    parser.add_argument("--out", type=Path, metavar="HANDOFF.xlsx", help="hand-off workbook")
    parser.add_argument(
        "--csv", type=Path, metavar="DIR", help="write the tables as CSV files into DIR"
    )
    parser.add_argument("--force", action="store_true", help="overwrite existing output files")
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="list bad files and consolidate the rest (default: any bad file stops the run)",
    )
    parser.add_argument(
        "--max-size-mb",
        type=float,
        default=DEFAULT_MAX_BYTES / 1024 / 1024,
        metavar="MB",
        help=f"refuse files larger than this (default {DEFAULT_MAX_BYTES // 1024 // 1024} MB)",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        metavar="REL",
        help=f"relative tolerance of the saved-value check (default {DEFAULT_TOLERANCE:g})",
    )


def _err(message):
    print(f"{PROG}: {message}", file=sys.stderr)


def _check_args(args):
    if args.out is None and args.csv is None:
        raise CommandError("give --out HANDOFF.xlsx and/or --csv DIR")
    if args.out is not None and args.out.suffix.lower() != ".xlsx":
        raise CommandError(f"--out must name an .xlsx file (got {args.out})")
    if not (args.max_size_mb > 0 and math.isfinite(args.max_size_mb)):
        raise CommandError(f"--max-size-mb must be greater than 0 (got {args.max_size_mb:g})")
    if not (0 <= args.tolerance < 1):
        raise CommandError(f"--tolerance must be at least 0 and below 1 (got {args.tolerance:g})")
    _check_same_inputs(args.files, int(args.max_size_mb * 1024 * 1024))
    inputs = [f for f in args.files if os.path.exists(f)]
    targets = []
    if args.out is not None:
        targets.append(args.out)
    if args.csv is not None:
        if args.csv.exists() and not args.csv.is_dir():
            raise CommandError(f"--csv: {args.csv} is a file, not a folder (give a folder)")
        targets += [args.csv / f"{n}.csv" for n in CSV_FILES]
    existing = []
    for t in targets:
        for f in inputs:
            if os.path.exists(t) and os.path.samefile(t, f):
                raise CommandError(f"{t} is one of the input files ({f}): it is never overwritten")
        if t.is_dir():
            raise CommandError(f"{t} is a folder: it cannot be replaced by a file")
        if os.path.lexists(t):
            existing.append(str(t))
    if existing and not args.force:
        verb = "already exists" if len(existing) == 1 else "already exist"
        raise CommandError(f"{', '.join(existing)} {verb} (use --force to overwrite)")
    if args.out is not None and not args.out.parent.is_dir():
        raise CommandError(f"--out: folder {args.out.parent} does not exist (got {args.out})")
    if args.csv is not None and not args.csv.exists():
        parent = args.csv.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise CommandError(f"--csv: {parent} is a file, not a folder (got {args.csv})")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(f"--csv: cannot create folder {args.csv}: {parent} is not writable")


def _sha256(path, limit):
    """SHA-256 of a regular file of at most ``limit`` bytes, else None (the reader refuses
    what is missing, not a file, or too large)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > limit:
            return None
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _check_same_inputs(files, limit):
    """Refuse the same planner given twice: one file by two paths (same device and inode:
    the same path, a symbolic or hard link) or two files with the same content (SHA-256)."""
    by_inode, by_hash = {}, {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue  # the reader names a missing or unreadable file
        key = (st.st_dev, st.st_ino)
        if key in by_inode:
            first = by_inode[key]
            if os.path.abspath(first) == os.path.abspath(f):
                raise CommandError(f"{f} is given twice: each planner is counted once")
            raise CommandError(
                f"{f} is the same file as {first} (another path or a hard link to it): "
                "each planner is counted once"
            )
        by_inode[key] = f
        digest = _sha256(f, limit)
        if digest is None:
            continue
        if digest in by_hash:
            raise CommandError(
                f"{f} has the same content as {by_hash[digest]} (SHA-256 {digest[:12]}...): "
                "the same planner given twice would be counted twice"
            )
        by_hash[digest] = f


def run(args):
    """Run ``compute-lab report``; return the exit code (2 for anything refused).

    numpy's floating-point warnings are off for the whole run: every figure is checked for
    range instead, and no Python warning reaches the user.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run(args)


def _run(args):
    _check_args(args)
    max_bytes = int(args.max_size_mb * 1024 * 1024)
    c = consolidate(args.files, max_bytes=max_bytes, tolerance=args.tolerance)
    seen = {}
    for p in c.planners:  # the bytes actually read (a file may change after the check)
        if p.sha256 in seen:
            raise CommandError(
                f"{p.path} has the same content as {seen[p.sha256]} (SHA-256 "
                f"{p.sha256[:12]}...): the same planner given twice would be counted twice"
            )
        seen[p.sha256] = p.path
    if c.bad and not args.skip_bad:
        lines = [line for err in c.bad for line in err.describe().splitlines()]
        if len(lines) == 1:  # one problem: one line
            _err(f"error: {lines[0]}; nothing written")
            return 2
        _err(
            f"error: {len(c.bad)} of {len(args.files)} file(s) cannot be consolidated; "
            "nothing written (--skip-bad consolidates the others):"
        )
        for line in lines:
            _err(f"error: {line}")
        return 2
    for err in c.bad:
        for line in err.describe().splitlines():
            _err(f"skipped: {line}")
    if not c.runs:
        why = "no file could be read" if not c.planners else "no scenario column has inputs"
        _err(f"error: {why}; nothing written")
        return 2
    check_in_range(c)  # before any warning: a refused run is one line
    for m in c.mismatches.itertuples(index=False):
        engine_value = "(none)" if m.engine_value is None else f"{m.engine_value:,.10g}"
        cached = m.cached_value if isinstance(m.cached_value, str) else f"{m.cached_value:,.10g}"
        _err(
            f"warning: {m.file}: {m.sheet}!{m.cell}: {m.name} (scenario {m.scenario!r}) "
            f"saved {cached} but the engine gives {engine_value}"
        )
    for r in c.unscheduled:
        sc = r.scenario
        _err(
            f"warning: {sc.path}: scenario {sc.name!r} has no start date "
            f"({sc.cells['start_date']}): left out of the monthly schedule"
        )
    written = write_outputs(c, out=args.out, csv_dir=args.csv, force=args.force)
    t = c.tables["totals"].iloc[0]
    print(
        f"Consolidated {len(c.runs)} run(s) from {len(c.planners)} file(s): total "
        f"${t['total_cost_usd']:,.0f} (compute ${t['rental_cost_usd']:,.0f}, electricity "
        f"${t['electricity_cost_usd']:,.0f}); {len(c.mismatches)} saved value(s) differ from the "
        f"engine; {len(c.unscheduled)} run(s) unscheduled; {len(c.bad)} bad file(s) skipped."
    )
    if args.out is not None:
        print(f"Wrote {args.out}")
    if args.csv is not None:
        print(f"Wrote {len(written) - (args.out is not None)} CSV files to {args.csv}")
    return 0
