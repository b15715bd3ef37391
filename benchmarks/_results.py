"""Benchmark results to a JSON file, compared with the last run's (issue 19 item 5).

``record("bench_engine", {"figure": seconds_or_ratio, ...})`` writes
``benchmarks/results/bench_engine.json`` (git-ignored) and prints each figure beside the
previous run's, so a change is seen as a ratio. Times are noisy on a shared machine: compare
ratios (engine / floor) rather than absolute seconds.

Every benchmark has a tiny mode, :data:`QUICK` (``--quick`` on its command line, or
``COMPUTE_LAB_BENCH_QUICK=1``): the same code paths on small inputs, a few seconds each, so
that ``tests/test_benchmarks.py`` sees a benchmark a merge broke. Its figures mean nothing:
they are written to ``COMPUTE_LAB_BENCH_RESULTS`` (else a folder under the system's temporary
folder), never to ``benchmarks/results``. Each benchmark names its floor (``notes["floor"]``:
what it is compared with, and what that includes).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).with_name("results")
#: The tiny mode (see above).
QUICK = "--quick" in sys.argv[1:] or os.environ.get("COMPUTE_LAB_BENCH_QUICK", "") not in ("", "0")


def results_dir():
    """Where results go: ``COMPUTE_LAB_BENCH_RESULTS``, else ``benchmarks/results`` (a quick
    run: a folder in the temporary folder)."""
    given = os.environ.get("COMPUTE_LAB_BENCH_RESULTS")
    if given:
        return Path(given)
    return Path(tempfile.gettempdir()) / "compute-lab-bench-quick" if QUICK else RESULTS


def record(name, figures, notes=None):
    """Write ``figures`` (name -> number) for benchmark ``name``; print the change from the
    last run. ``notes["floor"]`` says what the figures are compared with. Returns the path
    written."""
    if not (notes or {}).get("floor"):
        raise ValueError(f"{name}: notes['floor'] must say what the figures are compared with")
    folder = results_dir()
    path = folder / f"{name}.json"
    last = {}
    if path.exists():
        try:
            last = json.loads(path.read_text()).get("figures", {})
        except (OSError, ValueError):
            last = {}
    folder.mkdir(parents=True, exist_ok=True)
    payload = {
        "benchmark": name,
        "quick": QUICK,
        "when": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "notes": notes or {},
        "figures": figures,
    }
    path.write_text(json.dumps(payload, indent=1) + "\n")
    if last:
        print(f"\nagainst the last run ({path}):")
        for key, value in figures.items():
            before = last.get(key)
            if isinstance(before, int | float) and before and isinstance(value, int | float):
                print(f"  {key:<44} {before:12.4g} -> {value:12.4g}  ({value / before:5.2f}x)")
    else:
        print(f"\nfigures written to {path} (the next run compares with them)")
    return path


def best_cpu_time(fn, budget, share=8, most_calls=1 << 16):
    """Best CPU time of one ``fn()`` call, in seconds, over about ``budget`` seconds: calls are
    grouped so that one timing lasts about ``budget / share`` (at most ``most_calls`` calls),
    then the best of up to seven timings (as ``timeit.repeat`` takes the minimum)."""
    import time

    fn()
    number, start = 1, time.process_time()
    while True:
        t0 = time.process_time()
        for _ in range(number):
            fn()
        if time.process_time() - t0 >= budget / share or number >= most_calls:
            break
        number *= 4
    times = []
    while not times or (time.process_time() - start < budget and len(times) < 7):
        t0 = time.process_time()
        for _ in range(number):
            fn()
        times.append((time.process_time() - t0) / number)
    return min(times)
