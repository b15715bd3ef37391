"""Reading and recomputing: filled planners in, one :class:`Run` per scenario out (no openpyxl).

Each file goes through :func:`workbook_templates.reader.read_planner`; every scenario with
inputs is resolved by :func:`udfs.plan.resolve` (the engine arguments, the defaults applied as
notes, the throughput source and the spreads) and recomputed by :func:`udfs.engine.estimate`,
with its P10 / P90 from :func:`udfs.ranges.estimate_ranges`. No figure is taken from a cached
cell: the cached values are only compared with the engine's (:func:`compare`).

A figure the engine gives as infinite or over 1e300 is a problem at the cell(s) of the
input(s) that drove it (:func:`_drivers`); an :class:`~udfs.validation.InputError` is located
at its input's cell the same way.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import itertools
import math
import re
import warnings
from dataclasses import dataclass, field

import numpy as np

from udfs import engine, plan, ranges
from udfs.quantities import MIN_PLAUSIBLE as _MIN_PLAUSIBLE
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, RANGE_QUANTITIES, SEED_PLAN
from udfs.validation import CommandError, InputError, implausible_rule, is_blank, printable

from ..baseline import MAX_BASELINE_USD
from ..reader import (
    DEFAULT_MAX_BYTES,
    MAX_SCENARIO_COLUMNS,
    MAX_TEXT_CHARS,
    ColumnBudgetError,
    PlannerError,
    read_planner,
)
from ..run_codes import run_code_of
from .pool import read_files

__all__ = [
    "DEFAULT_TOLERANCE",
    "MAX_TOTAL_SCENARIO_COLUMNS",
    "MIN_PLAUSIBLE",
    "IN_BUDGET",
    "UNKNOWN_STATUS",
    "APPROVAL_INPUTS",
    "APPROVAL_INCOMPLETE",
    "APPROVAL_WORDS",
    "Run",
    "Consolidation",
    "consolidate_files",
    "out_of_range",
    "RANGE_RULE",
]

#: Most scenario columns one run reads, over all its files: 500 planners of 8 columns (a
#: company's year of plans), about a minute of recomputation at worst. The file that would
#: pass it refuses the run before its cells are read (a file has at most
#: :data:`~workbook_templates.reader.MAX_SCENARIO_COLUMNS`).
MAX_TOTAL_SCENARIO_COLUMNS = 4_000

#: The fewest parameters (total or active) and training tokens a plan may have: the smallest
#: models trained on a cluster have tens of millions of parameters and see billions of
#: tokens. Below them a figure was almost surely typed in billions or trillions (70 for 70B):
#: refused at its cell, naming the likely slip, rather than costed at a few cents. One rule
#: (``udfs.quantities.MIN_PLAUSIBLE``, the advice of :func:`udfs.validation.implausible_rule`)
#: for the engine, the command line, the Excel functions and the planner's Checks.
MIN_PLAUSIBLE = _MIN_PLAUSIBLE

#: Control characters a worksheet cannot hold (tab, newline and carriage return are text).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

#: Relative tolerance of the cached-value check.
DEFAULT_TOLERANCE = 1e-9
_ABS_TOLERANCE = 1e-12

INPUT_NAMES = tuple(q.name for q in PLAN_INPUTS)
OUTPUT_NAMES = tuple(q.name for q in PLAN_OUTPUTS)
Q = {q.name: q for q in PLAN_INPUTS + PLAN_OUTPUTS}

#: The inputs that are not the plan: a run's name, key, status and approval (the last two
#: read when a planner has them). Editing them leaves the plan's price and its fingerprint
#: (``tables.plan_fingerprint``) as they were.
NOT_THE_PLAN = ("scenario_name", "run_code", "budget_status", "owner", "approval_ref",
                "approval_date", "approved_amount_usd", "approver")  # fmt: skip

#: The status of a column of an older planner without a ``budget_status`` row.
UNKNOWN_STATUS = "status unknown"
#: Statuses summed in the budget (an older planner's columns are counted, as they always were).
IN_BUDGET = ("Approved", "Proposed", UNKNOWN_STATUS)
#: What a run typed Approved must carry: without any of them it counts as Proposed (a WARN).
APPROVAL_INPUTS = ("approval_ref", "approval_date", "approver", "approved_amount_usd")
#: How the hand-off names each of :data:`APPROVAL_INPUTS` (the budget's approval column).
APPROVAL_WORDS = {"approval_ref": "reference", "approval_date": "date", "approver": "approver",
                  "approved_amount_usd": "amount"}  # fmt: skip
#: The budget line (its own subtotal) of the runs typed Approved whose approval is incomplete.
APPROVAL_INCOMPLETE = "Proposed (approval incomplete)"

# Engine argument names that differ from the planner's input names.
_ARGUMENT_TO_INPUT = {
    "tokens": "training_tokens",
    "bytes_per_param": "checkpoint_bytes_per_param",
    "hbm_gb": "accelerator_name",
}

#: The largest figure a hand-off holds. No plan comes near it; past it a figure is an
#: overflow (infinite, or clamped at the largest double, about 1.8e308) or so close to one
#: that a spreadsheet adding such figures up overflows.
LARGEST = 1e300
RANGE_RULE = "out of range (over 1e+300; a spreadsheet overflows past about 1.8e+308)"


@dataclass
class Run:
    """One recomputed scenario.

    ``resolved`` is :func:`udfs.plan.resolve`'s answer; ``notes`` the defaults applied
    (:class:`udfs.plan.Note`: the "Blank inputs" table); ``status`` the budget status used
    ("Proposed" for a blank in a filled column, :data:`UNKNOWN_STATUS` for an older
    planner, and for a run typed Approved whose approval is incomplete); ``ranges``
    maps each range quantity to its (P10, P90); ``approval_missing`` the
    :data:`APPROVAL_INPUTS` a run typed Approved left blank (empty otherwise).
    """

    scenario: object  # reader.Scenario
    resolved: object  # plan.Resolved
    outputs: dict
    notes: list
    status: str
    status_blank: bool
    ranges: dict
    approval_missing: tuple = ()

    @property
    def budget_line(self):
        """The line of the budget the run is subtotalled on: its status, or
        :data:`APPROVAL_INCOMPLETE` (counted as Proposed)."""
        return APPROVAL_INCOMPLETE if self.approval_missing else self.status

    @property
    def typed_approved(self):
        """Typed Approved, whether its approval is complete (Approved) or not (Proposed)."""
        return self.status == "Approved" or bool(self.approval_missing)

    @property
    def arguments(self):
        return self.resolved.arguments

    @property
    def in_budget(self):
        return self.status in IN_BUDGET

    @property
    def start(self):
        return self.scenario.inputs.get("start_date")

    @property
    def run_code(self):
        """The run's key: its typed run code, else the one derived from its owner and name
        (:func:`workbook_templates.run_codes.run_code_of`)."""
        return run_code_of(self.scenario)[0]

    @property
    def run_code_derived(self):
        """True when the planner's Run code was blank (or the planner has no such row)."""
        return run_code_of(self.scenario)[1]


@dataclass
class Consolidation:
    """Everything a hand-off holds, as DataFrames, with what went wrong on the way."""

    planners: list
    runs: list
    bad: list  # PlannerError of each file left out
    tables: dict = field(default_factory=dict)
    tolerance: float = DEFAULT_TOLERANCE
    fiscal_year_start: int = 1
    duplicates: list = field(default_factory=list)  # lists of Runs: one scenario, several files
    version: str | None = None  # the hand-off's version label (report --version)
    baseline: object = None  # workbook_templates.baseline.Baseline of report --baseline
    mismatch_rows: list = field(default_factory=list)
    as_of: object = None  # the hand-off's date and time (UTC), set once when it is written
    actuals: object = None  # workbook_templates.actuals.Actuals (report --actuals), else None
    variance_totals: dict = None  # to date, whole cents (report.variance_tables), else None

    @property
    def mismatches(self):
        return self.tables["mismatches"]

    @property
    def budget_runs(self):
        return [r for r in self.runs if r.in_budget]

    @property
    def other_runs(self):
        return [r for r in self.runs if not r.in_budget]

    @property
    def unscheduled(self):
        return [r for r in self.budget_runs if r.start is None]

    @property
    def master_status(self):
        """OK, WARN or ERROR: the worst status on the Checks table."""
        statuses = set(self.tables["checks"]["status"])
        return "ERROR" if "ERROR" in statuses else "WARN" if "WARN" in statuses else "OK"


def out_of_range(value):
    """True for a figure out of range: infinite, or over :data:`LARGEST` in magnitude.
    NaN is a blank figure (the engine has none), not out of range."""
    if isinstance(value, np.ndarray | np.generic):
        value = np.asarray(value, dtype=float)
        return bool(np.any(np.isinf(value) | (np.abs(np.nan_to_num(value)) > LARGEST)))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    value = float(value)
    return math.isinf(value) or abs(value) > LARGEST


def label(name):
    return f"{name} ({Q[name].label})" if name in Q else name


def _input_name(argument):
    """The planner input behind an engine argument name, or None."""
    name = _ARGUMENT_TO_INPUT.get(argument, argument)
    if argument == "effective_tflops":
        name = "effective_tflops_input"
    return name if name in INPUT_NAMES else None


def _estimate(inputs, own_runs=None):
    """(resolved, outputs) for one scenario's inputs (numpy warnings silenced: every figure
    is checked for range by the caller); ``own_runs`` a team's runs pulling a blank MFU."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolved = plan.resolve(inputs, own_runs=own_runs)
        return resolved, engine.estimate(resolved.plan)


def _bad_outputs(outputs):
    return [n for n, v in outputs.items() if out_of_range(v)]


def _in_range(inputs):
    try:
        _, outputs = _estimate(inputs)
    except InputError:
        return False
    return not _bad_outputs(outputs)


def _drivers(inputs):
    """The typed inputs that drive a figure out of range: the smallest set (one input, else
    a pair) that, given a typical value instead, brings every figure back in range."""
    numeric = [n for n in INPUT_NAMES if Q[n].kind == "number" and inputs.get(n) is not None]

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
            f"scenario {scenario.name!r}: its inputs drive {shown} {RANGE_RULE}: use "
            "realistic figures",
        )
    first, others = drivers[0], drivers[1:]
    message = f"{label(first)} = {scenario.inputs[first]:g}"
    for n in others:
        message += f" and {label(n)} = {scenario.inputs[n]:g} at {scenario.cells[n]}"
    verb = "drive" if others else "drives"
    message += f" {verb} {shown} {RANGE_RULE}: use realistic figures"
    return scenario.problem(first, message)


def _engine_problem(scenario, err):
    """The PlannerError of an InputError the engine or the plan resolution raised."""
    name = _input_name(err.argument)
    if name is None and err.argument in OUTPUT_NAMES:  # an output out of range
        return PlannerError(scenario.path, [_range_problem(scenario, [err.argument])])
    name = name or err.argument
    if getattr(err, "drivers", None):  # a figure out of range: the inputs that drive it
        if _drivers(scenario.inputs):
            return PlannerError(scenario.path, [_range_problem(scenario, [err.result])])
        message = err.describe(label_of=lambda n: _driver_label(scenario, n, name))
    else:
        message = err.describe(argument_label=label(name))
    return PlannerError(scenario.path, [scenario.problem(name, message)])


def _driver_label(scenario, argument, first):
    """A driver of an out-of-range figure: its label, and its cell unless it is ``first``
    (the cell the problem is located at)."""
    name = _input_name(argument) or argument
    ref = scenario.cells.get(name)
    return label(name) + (f" at {ref}" if ref is not None and name != first else "")


def _check_end(scenario, outputs, name="wall_clock_days"):
    """A run that would end after the year 9999 is a Problem at its start date (``name``:
    the length checked, the P50 ``wall_clock_days`` or the P90 run's ``wall_clock_days_p90``,
    which the P90 schedule spreads its spend over)."""
    start = scenario.inputs.get("start_date")
    days = float(outputs[name])
    if start is not None and start.toordinal() + days >= _dt.date.max.toordinal():
        raise PlannerError(
            scenario.path,
            [
                scenario.problem(
                    "start_date",
                    f"the run starting {start.isoformat()} lasts {days:,.4g} days "
                    f"({name}) and would end after the year 9999, the last date a "
                    "spreadsheet holds: check the inputs that set its length",
                )
            ],
        )


def _implausible(scenario):
    """Problems of the counts below :data:`MIN_PLAUSIBLE` (a unit slip: 70 for 70 billion),
    every one of them, in the engine's words (:func:`udfs.validation.implausible_rule`)."""
    problems = []
    for name, least in MIN_PLAUSIBLE.items():
        value = scenario.inputs.get(name)
        if isinstance(value, int | float) and 0 < value < least:
            rule = implausible_rule(name, value)
            problems.append(
                scenario.problem(
                    name, InputError(name, rule, value=float(value)).describe(label(name))
                )
            )
    return problems


def _ranges(resolved, outputs):
    """{quantity: (P10, P90)} from the resolved spreads (udfs.ranges.estimate_ranges)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = ranges.estimate_ranges(
            outputs, resolved.throughput_sigma, resolved.price_sigma, ps=(0.1, 0.9)
        )
    return {q: (float(found[q]["p10"]), float(found[q]["p90"])) for q in RANGE_QUANTITIES}


#: The largest approved amount a plan may carry, US$ (exclusive): the hand-off writes it on
#: its "Baseline data" sheet and in runs.csv, and ``report --baseline`` reads amounts under
#: :data:`workbook_templates.baseline.MAX_BASELINE_USD` only.
MAX_APPROVED_USD = MAX_BASELINE_USD


def _check_approved_amount(scenario):
    """PlannerError at its cell for an approved amount of US$1e13 or more (a slip: no
    hand-off holding it could serve as a later report's baseline)."""
    amount = scenario.inputs.get("approved_amount_usd")
    if (
        isinstance(amount, int | float)
        and not isinstance(amount, bool)
        and (amount >= MAX_APPROVED_USD)
    ):
        raise PlannerError(scenario.path, [scenario.problem(
            "approved_amount_usd",
            f"approved_amount_usd (Approved amount) must be under US${MAX_APPROVED_USD:.0e}, "
            f"the largest amount a hand-off's baseline holds to the cent (got "
            f"{f'{amount:,.2f}' if amount < 1e15 else f'{amount:.3e}'}): "
            "type the amount in US$",
        )])  # fmt: skip


def recompute(scenario, has_status=True, own_runs=None):
    """A Run for one scenario; InputError is turned into a Problem at the input's cell.

    A figure driven out of range (infinite, or over 1e300) is a Problem at the cell(s) of
    the input(s) that drove it, whether the engine raised it as an InputError naming an
    output or returned the figure. ``has_status`` False (an older planner without the
    ``budget_status`` row) gives the run the status :data:`UNKNOWN_STATUS`; a run typed
    Approved without one of :data:`APPROVAL_INPUTS` has the status Proposed.
    """
    implausible = _implausible(scenario)
    if implausible:
        raise PlannerError(scenario.path, implausible)
    _check_approved_amount(scenario)
    try:
        resolved, outputs = _estimate(scenario.inputs, own_runs)
    except InputError as err:
        raise _engine_problem(scenario, err) from None
    bad = _bad_outputs(outputs)
    if bad:
        bad = [n for n in OUTPUT_NAMES if n in bad] + [n for n in bad if n not in OUTPUT_NAMES]
        raise PlannerError(scenario.path, [_range_problem(scenario, bad)])
    _check_end(scenario, outputs)
    found = _ranges(resolved, outputs)
    bad = [f"{q}_p90" for q, (_, p90) in found.items() if out_of_range(p90)]
    if bad:
        raise PlannerError(scenario.path, [_range_problem(scenario, bad)])
    _check_end(scenario, {"wall_clock_days_p90": found["wall_clock_days"][1]},
               "wall_clock_days_p90")  # fmt: skip
    notes = [n for n in resolved.notes if has_status or n.name != "budget_status"]
    status = resolved.budget_status if has_status else UNKNOWN_STATUS
    blank = has_status and any(n.name == "budget_status" for n in resolved.notes)
    missing = ()
    if status == "Approved":  # an approval without its reference, date, approver or amount
        missing = tuple(n for n in APPROVAL_INPUTS if is_blank(scenario.inputs.get(n)))
        status = "Proposed" if missing else status
    return Run(scenario, resolved, outputs, notes, status, blank, found, missing)


def compare(planner, run, tolerance):
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
                "cached_value": shown(cached),
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


def shown(value):
    """A saved value as the Mismatches table shows it."""
    if value is None:
        return "(blank)"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return value
    text = str(value)
    if _CONTROL.search(text):  # as the console shows it: a workbook cannot hold them
        text = _CONTROL.sub(lambda m: printable(m.group()), text)
    if len(text) > MAX_TEXT_CHARS:  # the same cut text in the workbook and the CSV files
        cut = f"(cut at {MAX_TEXT_CHARS} of {len(text):,} characters)"
        return f"{text[: MAX_TEXT_CHARS - 1]}… {cut}"
    return text


def read_one(path, columns_left=None, max_bytes=DEFAULT_MAX_BYTES, own_runs=None):
    """(planner, runs) of one file; PlannerError with every problem in it. The planner's own
    "Our runs" block pulls its blank MFUs; without one, ``own_runs`` (report --own-runs)."""
    planner = read_planner(path, max_bytes=max_bytes, collect=True, columns_left=columns_left)
    has_status = "budget_status" not in planner.missing_optional
    runs, problems = [], list(planner.problems)
    own = planner.own_runs if planner.own_runs is not None else own_runs
    for sc in planner.scenarios:  # every scenario's problem, not just the first
        try:
            runs.append(recompute(sc, has_status, own))
        except PlannerError as err:
            problems.extend(err.problems)
    if problems:  # in column order, the reader's and the engine's together
        problems.sort(key=lambda p: _column_order(p.cell))
        raise PlannerError(path, problems)
    return planner, runs


def consolidate_files(
    paths,
    *,
    max_bytes=DEFAULT_MAX_BYTES,
    tolerance=DEFAULT_TOLERANCE,
    fiscal_year_start=1,
    jobs=1,
    progress=None,
    own_runs=None,
    started=None,
):
    """Read and recompute ``paths``: a :class:`Consolidation` without its tables yet.

    A file that cannot be read, or any of whose scenarios the engine rejects, is left out
    and its :class:`~workbook_templates.reader.PlannerError` (every problem in it) is in
    ``.bad``; the caller decides whether that stops the run. ``fiscal_year_start`` (1-12) is
    the first month of the fiscal year of the period tables. The checks and the tables come
    next (:func:`workbook_templates.report.tables.consolidate` does all of it).

    ``jobs`` above 1 reads the files in that many processes (:mod:`.pool`); the files are
    taken in order whatever finishes first, so the result, the bad files' order and every
    message are those of one process. ``progress(done, total)`` is called after each file;
    ``started()`` once the reading processes are forked (never in one process).
    """
    planners, runs, bad, mismatch_rows = [], [], [], []
    columns = 0  # scenario columns read so far
    read = functools.partial(read_one, max_bytes=max_bytes, own_runs=own_runs)
    left = lambda: MAX_TOTAL_SCENARIO_COLUMNS - columns  # noqa: E731 - read as it changes
    outcomes = read_files(paths, read, jobs, left, MAX_SCENARIO_COLUMNS, started)
    with contextlib.closing(outcomes):  # the pool is shut down here, whatever happens
        for path, outcome in outcomes:
            if isinstance(outcome, ColumnBudgetError):  # its columns, before its cells
                outcome = _within_budget(path, outcome, max_bytes, columns, own_runs)
            if isinstance(outcome, PlannerError):
                bad.append(outcome)
            else:
                planner, file_runs = outcome
                columns += planner.width
                planners.append(planner)
                runs.extend(file_runs)
                for r in file_runs:
                    mismatch_rows.extend(compare(planner, r, tolerance))
            if progress is not None:
                progress(len(planners) + len(bad), len(paths))
    result = Consolidation(planners, runs, bad, tolerance=tolerance,
                           fiscal_year_start=fiscal_year_start,
                           mismatch_rows=mismatch_rows)  # fmt: skip
    result.duplicates = duplicates(runs)
    return result


def _within_budget(path, err, max_bytes, columns, own_runs=None):
    """A file refused for its scenario columns: the run's refusal when the columns left
    (:data:`MAX_TOTAL_SCENARIO_COLUMNS` less ``columns``) are too few, else the file read
    again with the exact count (a reading process was given a lower bound)."""
    left = MAX_TOTAL_SCENARIO_COLUMNS - columns
    if err.width > left:
        raise CommandError(
            f"{path}: {err.problems[0].message}, taking the run over the limit of "
            f"{MAX_TOTAL_SCENARIO_COLUMNS:,} scenario columns in all files ({columns:,} "
            f"read before it; up to {MAX_SCENARIO_COLUMNS} per planner): consolidate "
            "fewer files at a time; nothing written"
        )
    try:
        return read_one(path, left, max_bytes=max_bytes, own_runs=own_runs)
    except PlannerError as again:
        return again


def duplicate_codes(runs):
    """Groups (lists) of budget runs that share a run code, in the order first read."""
    groups = {}
    for r in runs:
        if r.in_budget:
            groups.setdefault(r.run_code.casefold(), []).append(r)
    return [g for g in groups.values() if len(g) > 1]


def _identity(run):
    """What makes two scenarios the same plan: the name and every input but status, owner
    and run code."""
    inputs = run.scenario.inputs
    values = []
    for name in INPUT_NAMES:
        if name in ("budget_status", "owner", "run_code"):
            continue
        v = inputs.get(name)
        if name == "scenario_name":
            v = str(v or run.scenario.name).strip().casefold()
        elif isinstance(v, float) and v.is_integer():
            v = int(v)
        elif isinstance(v, str):
            v = v.strip().casefold()
        values.append(v)
    return tuple(values)


def duplicates(runs):
    """Groups (lists) of runs that are the same scenario in two or more different files."""
    groups = {}
    for r in runs:
        groups.setdefault(_identity(r), []).append(r)
    return [g for g in groups.values() if len({str(r.scenario.path) for r in g}) > 1]


def _column_order(cell):
    """Sort key of a problem's cell ("G5", or "column G" for a scenario column) by column."""
    m = re.search(r"([A-Z]+)\d*$", cell or "")
    letters = m.group(1) if m else ""
    return (len(letters), letters)
