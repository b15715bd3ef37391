"""Start-up: ``compute-lab estimate`` as a whole process against ``python -c "import numpy"``.

The floor is a Python process that imports numpy and exits (the engine cannot start without
numpy); ``python -c pass`` is shown too. Each figure is the best of ``RUNS`` wall-clock runs
of a fresh process. Aim (issue 19): the estimate within 2.5x of the floor. Also timed:
``import udfs.excel`` (the classic and Lite Excel routes load it; xlwings' own imports are in
it). Results go to ``benchmarks/results/bench_start.json``. Run:
.venv/bin/python benchmarks/bench_start.py
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time

from _results import QUICK, record

RUNS = 2 if QUICK else 10  # --quick: a tiny run (tests/test_benchmarks.py)


def best(argv):
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    py = sys.executable
    bare = best([py, "-c", "pass"])
    floor = best([py, "-c", "import numpy"])
    estimate = best([py, "-m", "compute_lab", "estimate"])
    figures = {"python_pass_s": bare, "import_numpy_s": floor, "estimate_s": estimate,
               "estimate_over_numpy": estimate / floor}  # fmt: skip
    print("floor: a Python process importing numpy (the engine's one dependency)")
    print(f"python -c pass                  {bare * 1e3:8.0f} ms")
    print(f'python -c "import numpy"        {floor * 1e3:8.0f} ms  (the floor)')
    print(f"compute-lab estimate            {estimate * 1e3:8.0f} ms  ({estimate / floor:.2f}x)")
    if importlib.util.find_spec("xlwings") is not None:
        excel = best([py, "-c", "import udfs.excel"])
        figures["import_udfs_excel_s"] = excel
        print(f"python -c 'import udfs.excel'   {excel * 1e3:8.0f} ms  ({excel / floor:.2f}x)")
    ratio = estimate / floor
    print(f"aim: the estimate within 2.5x of the floor -> {'met' if ratio <= 2.5 else 'NOT met'}")
    record("bench_start", figures, {"floor": 'python -c "import numpy"', "runs": RUNS})


if __name__ == "__main__":
    main()
