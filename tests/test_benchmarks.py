"""Every benchmark in ``benchmarks/`` runs, in its tiny mode (issue 19 item 5).

Benchmarks run by hand, not in the suite, so a merge that breaks one went unseen (two were
found broken by the last session's merges). Here each ``benchmarks/bench_*.py`` runs as its
own process with ``COMPUTE_LAB_BENCH_QUICK=1`` (small inputs, a few seconds), writes its JSON
results to a temporary folder (never ``benchmarks/results``), names its floor in them and
prints it. No figure is asserted: speed is the benchmarks' business, not the tests'.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("bench_*.py"))


def _listing(folder):
    return (
        sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*")) if folder.is_dir() else []
    )


def test_every_benchmark_is_run_here():
    names = {p.stem for p in BENCHMARKS}
    assert {"bench_engine", "bench_excel", "bench_ranges", "bench_reader", "bench_report",
            "bench_server", "bench_start", "bench_team", "bench_templates",
            "bench_user"} <= names  # fmt: skip


@pytest.mark.parametrize("script", BENCHMARKS, ids=[p.stem for p in BENCHMARKS])
def test_a_benchmark_runs_in_its_quick_mode(script, tmp_path):
    results = ROOT / "benchmarks" / "results"
    before = _listing(results)
    env = dict(os.environ, COMPUTE_LAB_BENCH_QUICK="1", COMPUTE_LAB_BENCH_RESULTS=str(tmp_path))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=600, check=False)  # fmt: skip
    assert proc.returncode == 0, (
        f"{script.name} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    )
    assert "floor" in proc.stdout.lower(), f"{script.name} does not print its floor"
    (written,) = tmp_path.glob("*.json")
    payload = json.loads(written.read_text())
    assert payload["benchmark"] == script.stem and payload["quick"] is True
    assert payload["notes"]["floor"], "the JSON names the floor"
    assert payload["figures"] and all(
        isinstance(v, int | float) for v in payload["figures"].values()
    )
    assert _listing(results) == before, "a quick run wrote to benchmarks/results"


@pytest.mark.parametrize(
    "script",
    [p for p in BENCHMARKS if "ArgumentParser" in p.read_text(encoding="utf-8")],
    ids=lambda p: p.stem,
)
def test_a_benchmark_with_flags_takes_quick_as_its_docs_say(script):
    """benchmarks/_results.py and docs/development.md: ``--quick`` on the command line is the
    tiny mode too, so a benchmark with its own flags must not refuse it."""
    proc = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "--quick" in proc.stdout
