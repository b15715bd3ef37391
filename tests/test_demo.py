"""`make demo` speaks plainly: about twenty lines, what was made and where, what to open next,
and a plain line for each thing a newcomer would otherwise read as a failure.

The demo is run for real: `make demo DEMO_OUT=...` when the Makefile's virtual environment is
set up and current (as after `make test`, which CI runs), else its one step,
``python -m compute_lab.demo``, with this Python (and the Makefile's recipes are checked to
echo nothing of their own).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import require_soffice

ROOT = Path(__file__).resolve().parent.parent

#: Everything `make demo` prints, make's own lines included, at most.
DEMO_LINES = 25


def _make_is_set_up():
    """True when `make demo` here would run no install: make exists and the stamp is current."""
    if shutil.which("make") is None or not (ROOT / ".venv" / ".installed-demo").is_file():
        return False
    probe = subprocess.run(["make", "-q", ".venv/.installed-demo"], cwd=ROOT, env=_env(),
                           capture_output=True, check=False)  # fmt: skip
    return probe.returncode == 0


def _env():
    """The environment without the calling make's variables (a sub-make would print
    "Entering directory" lines that a user's `make demo` never prints)."""
    return {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}


def _rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _recipes(target):
    """The recipe lines of ``target`` in the Makefile."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"{re.escape(target)}\s*:", line))
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        out.append(line[1:])
    return out


def test_the_demo_and_its_set_up_echo_no_command_of_their_own():
    for target in ("$(BIN)/python", "$(STAMP_DEMO)", "demo"):
        recipes = _recipes(target)
        assert recipes, target
        for line in recipes:
            assert line.startswith("@"), (target, line)
            if "pip install" in line:
                assert "-qq" in line, line  # pip's notices would outnumber the demo's lines


def test_make_demo_says_what_it_made_in_about_twenty_lines(tmp_path):
    require_soffice()
    out = tmp_path / "out"
    if _make_is_set_up():
        argv, cwd, cli = ["make", "demo", f"DEMO_OUT={out}"], ROOT, ".venv/bin/compute-lab"
    else:
        if os.environ.get("CI"):
            pytest.fail("CI runs `make test` first: the Makefile's .venv must be set up here")
        argv, cwd = [sys.executable, "-m", "compute_lab.demo", "--out", str(out)], tmp_path
        cli = f"{Path(sys.executable).parent}/compute-lab"
    proc = subprocess.run(argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, text=True,
                          stderr=subprocess.STDOUT, timeout=600, check=False)  # fmt: skip
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stdout
    assert len(lines) <= DEMO_LINES, proc.stdout
    text = proc.stdout

    # what was made, and where: every file it names exists
    for name in ("templates/training-run-planner.xlsx", "templates/cluster-sizing.xlsx",
                 "templates/dense-vs-moe.xlsx", "example/team-a-plan.xlsx", "handoff.xlsx",
                 "handoff-csv/", "estimate.txt", "runs.txt", "report.txt"):  # fmt: skip
        assert name in text, name
        assert (out / name).exists(), name
    assert f"Made in {out}/" in text
    assert f"Next: open {out}/templates/training-run-planner.xlsx" in text

    # the full outputs stay one command away, and are kept: estimate.txt is the command's text
    assert f"Full estimate: {cli} estimate; calibration table: {cli} runs" in text
    estimate = subprocess.run([str(Path(sys.executable).parent / "compute-lab"), "estimate"],
                              capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert (out / "estimate.txt").read_text(encoding="utf-8") == estimate
    for line in estimate.splitlines():
        if line.startswith(("Wall-clock at ", "Total cost: ", "Total cost, P10-P90: ")):
            assert f"  {line}\n" in text, line
    assert "Grouped validation" in (out / "runs.txt").read_text(encoding="utf-8")
    report = (out / "report.txt").read_text(encoding="utf-8")
    assert "warning:" in report and "checks WARN" in report  # kept there, explained here

    # the budget it shows is the hand-off's, and what reads like a failure is explained
    flat = " ".join(text.split())
    totals = _rows(out / "handoff-csv" / "totals.csv")[0]
    assert f"${float(totals['total_cost_usd']):,.0f}, P90 $" in flat
    assert "Expected, not failures:" in text
    warn = [r for r in _rows(out / "handoff-csv" / "checks.csv") if r["status"] == "WARN"]
    assert len(warn) == 1 and "never typed: Price per accelerator-hour" in warn[0]["detail"]
    assert (
        "The hand-off's checks say WARN: 'Team A: 70B dense' left the price per "
        "accelerator-hour blank, so the default 2 US$/accelerator-hour is used" in flat
    )
    assert f"{totals['not_in_budget_runs']} not in the budget: the planner's Reference" in flat
