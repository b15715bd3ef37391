"""Benchmark results to a JSON file, compared with the last run's (issue 19 item 5).

``record("bench_engine", {"figure": seconds_or_ratio, ...})`` writes
``benchmarks/results/bench_engine.json`` (git-ignored) and prints each figure beside the
previous run's, so a change is seen as a ratio. Times are noisy on a shared machine: compare
ratios (engine / floor) rather than absolute seconds.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from pathlib import Path

RESULTS = Path(__file__).with_name("results")


def record(name, figures, notes=None):
    """Write ``figures`` (name -> number) for benchmark ``name``; print the change from the
    last run. Returns the path written."""
    path = RESULTS / f"{name}.json"
    last = {}
    if path.exists():
        try:
            last = json.loads(path.read_text()).get("figures", {})
        except (OSError, ValueError):
            last = {}
    RESULTS.mkdir(exist_ok=True)
    payload = {
        "benchmark": name,
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
