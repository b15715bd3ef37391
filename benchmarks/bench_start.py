"""Start-up: ``compute-lab estimate`` as a whole process against ``python -c "import numpy"``.

The floor is a Python process that imports numpy and exits (the engine cannot start without
numpy); ``python -c pass`` is shown too. Each figure is the best and the median of ``RUNS``
wall-clock runs of a fresh process, the commands taking turns (one run of each, then the next
round), so that a busy spell on the shared machine hits them alike; the load average is
printed. Aim (issue 19): the estimate within 2.5x of the floor. Also timed, for reference:
an estimate on a catalogue accelerator, one from a preset (its run's implied MFU), one with
a team's own runs (``--own-runs``, a one-run file, read as plain columns),
``compute-lab runs`` (the grouped-validation table: 19 fits, one per organisation left out;
aim: under 1.5 s, 4.4 s when every candidate model was refitted at each call), and
``import udfs.excel`` (the classic and Lite Excel routes load it; xlwings' own imports are in
it). Results go to ``benchmarks/results/bench_start.json``. Run:
.venv/bin/python benchmarks/bench_start.py
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _results import QUICK, record

RUNS = 2 if QUICK else 10  # --quick: a tiny run (tests/test_benchmarks.py)

#: The aim for ``compute-lab runs`` as a whole process, in seconds (a newcomer's second command).
RUNS_AIM_S = 1.5


def timed(commands):
    """{name: (best, median)} of wall-clock seconds over ``RUNS`` rounds, taking turns."""
    times = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    return {name: (min(t), statistics.median(t)) for name, t in times.items()}


#: The ``--own-runs`` file timed: one completed run.
OWN_RUNS = (
    "name,organisation,active_params,total_params,tokens,accelerator,accelerators,"
    "accelerator_hours\nours,us,70B,70B,2T,H100,1024,1.5M\n"
)


def main():
    with tempfile.TemporaryDirectory() as folder:
        own_runs = Path(folder) / "runs.csv"
        own_runs.write_text(OWN_RUNS)
        run(str(own_runs))


def run(own_runs):
    py = sys.executable
    estimate = [py, "-m", "compute_lab", "estimate"]
    commands = {
        "python -c pass": [py, "-c", "pass"],
        'python -c "import numpy"': [py, "-c", "import numpy"],
        "compute-lab estimate": estimate,
        "estimate --accelerator H100 ...": [*estimate, "--accelerator", "H100", "--total-params",
                                            "70B", "--tokens", "2T", "--accelerators", "1024"],
        "estimate --preset llama-3.1-405b": [*estimate, "--preset", "llama-3.1-405b"],
        "estimate --own-runs FILE": [*estimate, "--own-runs", own_runs],
        "compute-lab runs": [py, "-m", "compute_lab", "runs"],
    }  # fmt: skip
    if importlib.util.find_spec("xlwings") is not None:
        commands["python -c 'import udfs.excel'"] = [py, "-c", "import udfs.excel"]
    load = os.getloadavg()[0]
    got = timed(commands)
    floor = got['python -c "import numpy"'][0]
    print("floor: a Python process importing numpy (the engine's one dependency)")
    print(f"load average {load:.2f} on {os.cpu_count()} cores; best / median of {RUNS} runs")
    for name, (b, m) in got.items():
        tail = "  (the floor)" if b == floor else f"  ({b / floor:.2f}x)"
        print(f"{name:34s} {b * 1e3:6.0f} / {m * 1e3:6.0f} ms{tail}")
    ratio = got["compute-lab estimate"][0] / floor
    keys = {"python -c pass": "python_pass_s", 'python -c "import numpy"': "import_numpy_s",
            "compute-lab estimate": "estimate_s",
            "estimate --accelerator H100 ...": "estimate_h100_s",
            "estimate --preset llama-3.1-405b": "estimate_preset_s",
            "estimate --own-runs FILE": "estimate_own_runs_s",
            "compute-lab runs": "runs_s",
            "python -c 'import udfs.excel'": "import_udfs_excel_s"}  # fmt: skip
    figures = {keys[name]: b for name, (b, _) in got.items()}
    figures |= {"estimate_over_numpy": ratio, "load_average": load}
    print(f"aim: the estimate within 2.5x of the floor -> {'met' if ratio <= 2.5 else 'NOT met'}")
    runs = got["compute-lab runs"][0]
    met = "met" if runs < RUNS_AIM_S else "NOT met"
    print(f"aim: `compute-lab runs` under {RUNS_AIM_S} s -> {met}")
    record("bench_start", figures, {"floor": 'python -c "import numpy"', "runs": RUNS})


if __name__ == "__main__":
    main()
