"""``make demo``: the main job on the built-in examples, told in about twenty lines.

``python -m compute_lab.demo --out DIR`` runs what a newcomer's first hour runs, in one process:
``compute-lab estimate`` (the DeepSeek-V3-like example plan), ``compute-lab runs`` (the default
throughput checked on the disclosed runs), ``compute-lab templates``, the example team plan
(:mod:`workbook_templates.example`, saved by LibreOffice when it is installed) and
``compute-lab report`` on it. Everything each command prints goes to ``DIR/estimate.txt``,
``runs.txt`` and ``report.txt``; the screen gets what was made and where, what to open next, a
plain line for each thing a newcomer would otherwise read as a failure (the example's WARN
about the price it never typed, the reference runs not in the budget), and the commands that
print the rest.

The figures shown are read back from what the commands wrote (their printed lines, the
hand-off's CSV files): the summary cannot say something the files do not. A step that fails
prints what the command printed and the demo exits with its status.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import sys
import textwrap
from pathlib import Path

from .cli import main as compute_lab

#: The screen is this wide: the demo's lines are wrapped to it.
WIDTH = 100

#: The lines of ``compute-lab estimate`` the summary repeats (by their start).
ESTIMATE_LINES = ("Wall-clock at ", "Total cost: ", "Total cost, P10-P90: ")

#: What each workbook is for, as the README's table says.
WORKBOOKS = {
    "training-run-planner.xlsx": "the planner: open it, type a plan into a Custom column",
    "cluster-sizing.xlsx": "accelerators for a target number of days",
    "dense-vs-moe.xlsx": "what an MoE model's activation ratio saves",
}


class StepError(Exception):
    """A step of the demo failed: ``status`` is its exit status, ``text`` what it printed."""

    def __init__(self, status, text):
        super().__init__(text)
        self.status, self.text = status, text


def _run(argv, log):
    """``compute-lab argv``, everything it prints (stdout and stderr) into ``log``; the text."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        status = compute_lab(argv)
    text = buffer.getvalue()
    Path(log).write_text(text, encoding="utf-8")
    if status:
        raise StepError(status, text)
    return text


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _shown(path):
    """``path`` as the user gave it (relative stays relative)."""
    return str(path).replace(os.sep, "/")


def _command_prefix():
    """How to run ``compute-lab`` from here: the virtual environment's, relative when inside."""
    bin_dir = Path(sys.executable).parent
    try:
        bin_dir = bin_dir.relative_to(Path.cwd())
    except ValueError:
        pass
    return f"{_shown(bin_dir)}/compute-lab"


def _activate(cli):
    """The ``source .../activate`` line for the virtual environment ``cli`` lives in."""
    return f"source {cli.rsplit('/', 1)[0]}/activate"


def _wrapped(text, indent="  "):
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ")


def _explanations(handoff_csv):
    """One plain line (wrapped) for each thing in the hand-off that reads like a failure."""
    lines = []
    blanks = _rows(handoff_csv / "blank_inputs.csv")
    for check in _rows(handoff_csv / "checks.csv"):
        if check["status"] != "WARN":
            continue
        detail = check["detail"]
        if "never typed: " in detail:
            scenario = detail.split("'")[1] if "'" in detail else "a plan"
            label = detail.split("never typed: ", 1)[1].split(" (", 1)[0]
            used = next((b for b in blanks if b["input_label"] == label), None)
            value = f" {float(used['value_used']):g} {used['unit']}" if used else ""
            lines += _wrapped(
                f"The hand-off's checks say WARN: '{scenario}' left the {label.lower()} blank, "
                f"so the default{value} is used (listed on its Blank inputs sheet)."
            )
        else:
            lines += _wrapped(f"Checks say WARN: {check['check']}: {detail}")
    others = _rows(handoff_csv / "not_in_budget.csv")
    if others:
        statuses = " and ".join(sorted({r["budget_status"] for r in others}))
        lines += _wrapped(
            f"{len(others)} not in the budget: the planner's {statuses} columns (the preloaded "
            "runs and the example plan), listed for comparison, never summed."
        )
    return lines


def run(out):
    """The demo's steps into ``out``; returns the lines to print."""
    from workbook_templates.report.command import usd

    from .tables import runs_summary

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    estimate = _run(["estimate"], out / "estimate.txt")
    _run(["runs"], out / "runs.txt")
    _run(["templates", "--out", str(out / "templates"), "--force"], out / "templates.txt")
    (out / "templates.txt").unlink()
    from workbook_templates import example
    from workbook_templates.recalc import find_soffice

    saved_by_libreoffice = find_soffice() is not None
    plan = example.write_example(out / "example" / "team-a-plan.xlsx", force=True,
                                 recalculate=saved_by_libreoffice)  # fmt: skip
    handoff, handoff_csv = out / "handoff.xlsx", out / "handoff-csv"
    report_argv = ["report", str(plan), "--out", str(handoff), "--csv", str(handoff_csv)]
    _run([*report_argv, "--force"], out / "report.txt")

    s = runs_summary()
    totals = _rows(handoff_csv / "totals.csv")[0]
    cli = _command_prefix()
    shown = [line for line in estimate.splitlines() if line.startswith(ESTIMATE_LINES)]
    made = [(f"templates/{name}", what) for name, what in WORKBOOKS.items()]
    made += [
        ("example/team-a-plan.xlsx", "the planner with one team's plan typed in"),
        ("handoff.xlsx, handoff-csv/", f"finance's hand-off built from it: "
         f"{usd(float(totals['total_cost_usd']))}, P90 {usd(float(totals['total_cost_usd_p90']))}"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in made)
    return [
        "Compute Lab demo. The DeepSeek-V3-like example plan (compute-lab estimate):",
        *(f"  {line}" for line in shown),
        *_wrapped(
            f"How good: the default throughput misses {s['runs']} disclosed runs by a median "
            f"{s['median_abs_error_pct']:.0f}% (compute-lab runs)."
        ),
        "",
        f"Made in {_shown(out)}/ (with each command's output: estimate.txt, runs.txt, report.txt):",
        *(f"  {name.ljust(width)}  {what}" for name, what in made),
        "",
        "Expected, not failures:",
        *_explanations(handoff_csv),
        *(
            []
            if saved_by_libreoffice
            else _wrapped(
                "LibreOffice is not installed: the example plan is saved without its formulas' "
                "values (the hand-off recomputes every figure anyway)."
            )
        ),
        "",
        f"Next: open {_shown(out / 'templates' / 'training-run-planner.xlsx')} (no add-in needed).",
        f"Full estimate: {cli} estimate; calibration table: {cli} runs",
        f"Every command: {cli} --help (or {_activate(cli)}, then compute-lab)",
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m compute_lab.demo",
        description="Run the demo (what `make demo` runs) and print a short summary.",
    )
    parser.add_argument("--out", default="out", help="folder to write into (default: out)")
    args = parser.parse_args(argv)
    try:
        lines = run(args.out)
    except StepError as failed:
        print(failed.text, end="", file=sys.stderr)
        print(f"demo: a step failed (exit {failed.status}); nothing more was run", file=sys.stderr)
        return failed.status
    except (OSError, RuntimeError) as err:
        print(f"demo: error: {err}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
