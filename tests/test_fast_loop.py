"""The fast loop's markers, as ``tests/conftest.py`` assigns them from what each test uses.

``make check`` deselects ``slow``, ``spreadsheet``, ``browser`` and ``server`` tests; the markers
are found in the code of a test, of its fixtures and of the helpers they call. Each case here
collects real test files (``pytest --collect-only`` in a process of its own) and checks which
tests a marker expression selects.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAST = "not slow and not spreadsheet and not browser and not server"


def selected(expression, *files):
    """Node ids of ``files`` that the marker ``expression`` selects."""
    argv = ["--collect-only", "-q", "-p", "no:cacheprovider", "-m", expression, *files]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        check=False,
    )
    assert proc.returncode in (0, 5), proc.stdout[-2000:] + proc.stderr[-2000:]
    return {line for line in proc.stdout.splitlines() if "::" in line}


@pytest.mark.parametrize(
    ("marker", "path", "test"),
    [
        # a module fixture starting `compute-lab serve` through local_server
        ("server", "tests/test_server.py", "test_manifest_has_our_namespace_and_ids"),
        # the browser fixture of tests/browser/harness.py
        ("browser", "tests/test_browser.py", "test_every_function_is_associated"),
        # a session fixture recalculated by LibreOffice (conftest's _recalculated_all)
        ("spreadsheet", "tests/test_templates.py", "test_master_checks_pass"),
        # a subprocess in the test's own body
        ("slow", "tests/test_benchmarks.py", "test_a_benchmark_runs_in_its_quick_mode"),
        # listed by hand: seconds of CPU, no other program
        ("slow", "tests/test_calibration_study.py", ""),
    ],
)
def test_a_test_is_marked_by_what_it_uses(marker, path, test):
    marked = selected(marker, path)
    assert any(f"::{test}" in node for node in marked) if test else marked, marked
    assert not {node for node in marked if f"::{test}" in node} & selected(FAST, path)


def test_a_test_that_starts_nothing_stays_in_the_fast_loop():
    fast = selected(FAST, "tests/test_engine.py", "tests/test_plan.py")
    every = selected("", "tests/test_engine.py", "tests/test_plan.py")
    assert fast == every and len(fast) > 10


def test_a_test_that_signals_its_own_process_runs_outside_xdist():
    serial = selected("serial", "tests/test_report_bounds.py")
    assert any("::test_deferred_interrupts_restore_the_handler" in node for node in serial)
    assert not serial & selected("not serial", "tests/test_report_bounds.py")
