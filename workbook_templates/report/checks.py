"""The Checks table: OK, WARN (a person should look), ERROR (a real failure), INFO.

The master check (:attr:`Consolidation.master_status`) is the worst of them. WARN whenever
something needs a human look: a column without a budget status (an older planner), a blank
status counted as Proposed, the same scenario in two files, a typed MFU above the calibrated
P90 MFU or a typed throughput override in a budget run, a saved value that differs from the engine,
a value typed over a formula, a budget run without a start date, a run typed Approved without
its reference, date, approver or approved amount (counted as Proposed), an Approved run whose
P50 is over its approved amount, a budget run without its cost centre or GL account (the
FP&A codes of fpa.csv), a run code derived from the owner and the scenario name (none
typed). ERROR: a file left out, a run code two budget runs share.
"""

from __future__ import annotations

import pandas as pd

from udfs import calibration, plan, schedule
from udfs.validation import is_blank

from ..planner.checks import NEVER_DEFAULT, PLACEHOLDER_NAME
from .consolidate import APPROVAL_INCOMPLETE, APPROVAL_WORDS, UNKNOWN_STATUS, Q

__all__ = ["Rows", "checks_table", "duplicate_text"]

COLUMNS = ["check", "status", "file", "detail"]


def duplicate_text(group):
    """One line about a scenario found in several files."""
    files = ", ".join(dict.fromkeys(str(r.scenario.path) for r in group))
    counted = sum(r.in_budget for r in group)
    how = (f"counted {counted} times in the budget" if counted > 1
           else "counted once in the budget" if counted else "not in the budget")  # fmt: skip
    return (f"scenario {group[0].scenario.name!r} (same name and inputs) is in {len(group)} "
            f"files: {files}; {how}")  # fmt: skip


def _labels(names):
    """The inputs' or outputs' labels, as a finance reader knows them ("Total cost")."""
    return ", ".join(Q[n].label if n in Q else n for n in names)


class Rows(list):
    """The Checks table's rows, one :meth:`add` each."""

    def add(self, check, status, detail, file=""):
        self.append({"check": check, "status": status, "file": str(file), "detail": detail})


def _files(rows, c):
    rows.add("Files consolidated", "OK" if not c.bad else "ERROR",
             f"{len(c.planners)} file(s), {len(c.runs)} scenario(s): {len(c.budget_runs)} in "
             f"the budget, {len(c.other_runs)} not"
             + (f"; {len(c.bad)} bad file(s) left out (--skip-bad)" if c.bad else ""))  # fmt: skip
    for err in c.bad:
        for p in err.problems:
            where = f"{p.where}: " if p.where else ""
            rows.add("Bad file left out", "ERROR", where + p.message, err.path)


def _statuses(rows, c):
    for p in c.planners:
        runs = [r for r in c.runs if r.scenario.path == p.path]
        if "budget_status" in p.missing_optional:
            rows.add("Budget status", "WARN",
                     f"no budget_status row (an older planner): its {len(runs)} scenario(s) "
                     f"are listed as '{UNKNOWN_STATUS}' and counted in the budget; check "
                     "which are plans", p.path)  # fmt: skip
            continue
        blank = [r for r in runs if r.status_blank]
        for r in blank:
            where = r.scenario.cells["budget_status"]
            rows.add("Budget status", "WARN",
                     f"scenario {r.scenario.name!r}: status blank ({where}): counted as Proposed",
                     p.path)  # fmt: skip
        if runs and not blank:
            rows.add("Budget status", "OK", "every scenario has a budget status", p.path)
    for group in _once(c.other_runs):  # a reference in every team's file: one line
        r, files = group[0], list(dict.fromkeys(g.scenario.path.name for g in group))
        where = (f" (the same in {len(files)} files: {', '.join(files)}; their paths on Sources)"
                 if len(files) > 1 else "")  # fmt: skip
        rows.add("Not in the budget", "INFO",
                 f"scenario {r.scenario.name!r} is {r.status}: listed, never summed{where}",
                 r.scenario.path)  # fmt: skip


def _once(runs):
    """Runs grouped as the same scenario (name and inputs) with the same status, in order."""
    from .consolidate import _identity

    groups = {}
    for r in runs:
        groups.setdefault((_identity(r), r.status), []).append(r)
    return list(groups.values())


def _duplicates(rows, c):
    for group in c.duplicates:
        if not any(r.in_budget for r in group):
            continue  # never summed: one "Not in the budget" line names its files
        rows.add("Duplicate scenarios", "WARN", duplicate_text(group))
    if not any(any(r.in_budget for r in g) for g in c.duplicates):
        rows.add("Duplicate scenarios", "OK", "no budget scenario is in two files")


def _run_codes(rows, c):
    """ERROR for a run code two budget runs share (naming every file and column), WARN for a
    budget run whose run code is derived (blank, or an older planner without the row)."""
    from .consolidate import duplicate_codes

    for group in duplicate_codes(c.budget_runs):
        where = " and ".join(f"{r.scenario.path} column {r.scenario.column} (scenario "
                             f"{r.scenario.name!r})" for r in group)  # fmt: skip
        rows.add(
            "Run codes",
            "ERROR",
            f"run code {group[0].run_code!r} is used by {len(group)} budget runs: {where}; "
            "a run code must be unique in a hand-off (actuals and later versions are "
            "joined by it): type another Run code in all but one",
            group[0].scenario.path,
        )
    derived = [r for r in c.budget_runs if r.run_code_derived]
    for r in derived:
        sc = r.scenario
        cell = sc.cells.get("run_code")
        why = f"Run code blank ({cell})" if cell else "no Run code row (an older planner)"
        rows.add("Run codes", "WARN",
                 f"scenario {sc.name!r}: {why}: the hand-off derives {r.run_code!r} from the "
                 "owner and the scenario name (never from the plan's figures); renaming either "
                 "changes it, so type it in the planner", sc.path)  # fmt: skip
    if c.budget_runs and not derived and not duplicate_codes(c.budget_runs):
        rows.add("Run codes", "OK", "every budget run has its own typed run code")


def _throughput(rows, c):
    for r in c.budget_runs:
        sc, source = r.scenario, r.resolved.throughput_source
        kw = r.arguments
        spread = (f"P90 hours {r.ranges['accelerator_hours'][1]:,.0f} vs P50 "
                  f"{r.outputs['accelerator_hours']:,.0f}")  # fmt: skip
        if source == plan.THROUGHPUT_SOURCES[2]:
            rows.add("Throughput", "INFO",
                     f"scenario {sc.name!r}: MFU blank, the calibrated default {kw['mfu']:.1%} "
                     f"with its spread ({spread}): one comparable run in ten needed more "
                     "than P90", sc.path)  # fmt: skip
        elif source == plan.THROUGHPUT_SOURCES[0]:
            rows.add("Throughput", "WARN",
                     f"scenario {sc.name!r}: effective TFLOP/s override "
                     f"{kw['effective_tflops']:,.4g} typed at {sc.cells['effective_tflops_input']}"
                     f", used instead of peak x MFU x goodput ({spread})", sc.path)  # fmt: skip
        else:
            _typed_mfu(rows, sc, r, kw, spread)


def _typed_mfu(rows, sc, r, kw, spread):
    """WARN when a typed MFU is above the calibrated P90 MFU (one comparable run in ten)."""
    name = sc.inputs.get("accelerator_name")
    p90 = calibration.mfu_p90("" if is_blank(name) else str(name), kw["active_params"])
    if kw["mfu"] > p90:
        rows.add("Throughput", "WARN",
                 f"scenario {sc.name!r}: typed MFU {kw['mfu']:.1%} is above the calibrated P90 "
                 f"MFU {p90:.1%} (fewer than one comparable disclosed run in ten reached it); "
                 f"the spread is kept ({spread})", sc.path)  # fmt: skip
    else:
        rows.add("Throughput", "OK",
                 f"scenario {sc.name!r}: typed MFU {kw['mfu']:.1%} (calibrated P90 MFU "
                 f"{p90:.1%}); the spread is kept ({spread})", sc.path)  # fmt: skip


def _saved_values(rows, c, mismatches):
    for p in c.planners:
        n = int((mismatches["file"] == str(p.path)).sum()) if len(mismatches) else 0
        if not p.has_cached_values and n:  # values typed over formulas are saved values
            rows.add("Saved values agree with the engine", "WARN",
                     f"{n} saved value(s) differ from the engine: values typed over output "
                     "formulas (the file was never recalculated by a spreadsheet, so no other "
                     "output cell has a saved value): see Mismatches", p.path)  # fmt: skip
        elif not p.has_cached_values:
            rows.add("Saved values agree with the engine", "INFO",
                     "no saved values (never recalculated by a spreadsheet): nothing to "
                     "compare; figures come from the engine", p.path)  # fmt: skip
        else:
            rows.add("Saved values agree with the engine", "OK" if n == 0 else "WARN",
                     "every output cell within the tolerance" if n == 0
                     else f"{n} output cell(s) differ: see Mismatches", p.path)  # fmt: skip
        if p.has_cached_values and p.skipped_columns:  # as before: a recalculated file
            shown = ", ".join(f"{col} ({name})" if name else col for col, name in p.skipped_columns)
            rows.add("Scenario columns without inputs", "INFO",
                     f"not consolidated, no required input ({_labels(plan.REQUIRED)}) "
                     f"filled: {shown}", p.path)  # fmt: skip


def _formulas(rows, c):
    typed_over = False
    for r in c.runs:
        sc = r.scenario
        typed = [n for n, f in sc.formulas.items() if not f]
        if typed:
            typed_over = True
            cells = ", ".join(f"{sc.cells[n]} ({_labels([n])})" for n in typed)
            rows.add("Output cells hold formulas", "WARN",
                     f"scenario {sc.name!r}: typed values instead of formulas at {cells}",
                     sc.path)  # fmt: skip
    if c.runs and not typed_over:
        rows.add("Output cells hold formulas", "OK", "every output cell of every run is a formula")


def _schedule(rows, c):
    for r in c.unscheduled:
        sc = r.scenario
        rows.add("Run scheduled by month", "WARN",
                 f"scenario {sc.name!r} has no start date ({sc.cells['start_date']} is blank): "
                 f"in the totals and the period tables' 'Unscheduled' row, not in any month "
                 f"(US$ {r.outputs['total_cost_usd']:,.0f})", sc.path)  # fmt: skip
    if c.budget_runs and not c.unscheduled:
        rows.add("Run scheduled by month", "OK", "every budget run has a start date")


def _typed(r, name):
    value = r.scenario.inputs.get(name)
    if name == "scenario_name":
        text = "" if value is None else str(value).strip()
        return text != "" and not PLACEHOLDER_NAME.match(text)
    return value not in (None, "")


def _defaults(rows, c):
    """WARN for a budget run whose name, owner, price or start date was never typed."""
    for r in c.budget_runs:
        missing = [n for n in NEVER_DEFAULT if not _typed(r, n)]
        if missing:
            cells = ", ".join(f"{Q[n].label} ({r.scenario.cells[n]})" for n in missing
                              if n in r.scenario.cells)  # fmt: skip
            rows.add("Typed, not defaults", "WARN",
                     f"scenario {r.scenario.name!r}: never typed: {cells}; the hand-off uses "
                     "the default (Blank inputs)", r.scenario.path)  # fmt: skip
    if c.budget_runs and not any(not _typed(r, n) for r in c.budget_runs for n in NEVER_DEFAULT):
        rows.add("Typed, not defaults", "OK",
                 "every budget run has its own name, owner, price and start date")  # fmt: skip


def _approvals(rows, c, p50_cents):
    """WARN for a run typed Approved without its reference, date, approver or approved
    amount (counted as Proposed), and for one whose P50 (``p50_cents(run)``: its total in
    whole cents, as the budget has it) is over its approved amount."""
    approved, before = [r for r in c.budget_runs if r.typed_approved], len(rows)
    for r in approved:
        sc = r.scenario
        if r.approval_missing:
            words = ", ".join(APPROVAL_WORDS[n] for n in r.approval_missing)
            cells = [sc.cells[n] for n in r.approval_missing if n in sc.cells]
            where = (f" ({cells[0]}" + "".join(f", {c.cell}" for c in cells[1:]) + ")"
                     if cells else " (an older planner, without these rows)")  # fmt: skip
            rows.add("Approval", "WARN",
                     f"scenario {sc.name!r}: Approved without its {words}{where}: counted as "
                     f"{APPROVAL_INCOMPLETE}", sc.path)  # fmt: skip
        amount = sc.inputs.get("approved_amount_usd")
        if amount in (None, ""):
            continue
        p50, limit = p50_cents(r), schedule.to_cents(amount)
        if p50 > limit:  # the difference and the run first: page 1 shows the line's start
            rows.add("Within the approved amount", "WARN",
                     f"{schedule.short_usd(p50 - limit)} over in {sc.name!r} "
                     f"({r.run_code}): P50 total cost US$ {schedule.usd(p50):,.2f}, approved "
                     f"amount US$ {schedule.usd(limit):,.2f} "
                     f"({sc.cells['approved_amount_usd']}), over by US$ "
                     f"{schedule.usd(p50 - limit):,.2f}", sc.path)  # fmt: skip
    if approved and len(rows) == before:
        rows.add("Approval", "OK",
                 "every run typed Approved has its reference, date, approver and approved "
                 "amount, and a P50 within it")  # fmt: skip


#: The FP&A codes a budget run is booked with (fpa.csv): a blank one is a WARN.
FPA_CODES = ("cost_centre", "gl_account")


def _fpa_codes(rows, c):
    """WARN for the budget runs of a file without their cost centre or GL account, one line
    a file, naming each run's cells."""
    by_file = {}
    for r in c.budget_runs:
        sc = r.scenario
        missing = [n for n in FPA_CODES if is_blank(sc.inputs.get(n))]
        if missing:
            cells = ", ".join(f"{Q[n].label} ({sc.cells[n]})" if n in sc.cells
                              else f"{Q[n].label} (an older planner, without this row)"
                              for n in missing)  # fmt: skip
            by_file.setdefault(sc.path, []).append(f"scenario {sc.name!r}: no {cells}")
    for path, said in by_file.items():
        rows.add("FP&A codes", "WARN",
                 "; ".join(said) + ": their fpa.csv rows carry it blank, for FP&A to code",
                 path)  # fmt: skip
    if c.budget_runs and not any(
        is_blank(r.scenario.inputs.get(n)) for r in c.budget_runs for n in FPA_CODES
    ):
        rows.add("FP&A codes", "OK", "every budget run has its cost centre and GL account")


def checks_table(c, mismatches, p50_cents):
    """The Checks table of a consolidation; ``p50_cents(run)`` is a budget run's P50 total
    in whole cents (the tables' rounding)."""
    rows = Rows()
    _files(rows, c)
    _statuses(rows, c)
    _duplicates(rows, c)
    _run_codes(rows, c)
    _throughput(rows, c)
    _saved_values(rows, c, mismatches)
    _formulas(rows, c)
    _schedule(rows, c)
    _defaults(rows, c)
    _approvals(rows, c, p50_cents)
    _fpa_codes(rows, c)
    return pd.DataFrame(rows, columns=COLUMNS)
