"""The hand-off report at scale (issue 19 item 4): ``compute-lab report`` over many planners.

Each planner is a copy of the generated planner with two plans typed in and saved through
LibreOffice (so it carries saved values, as a team's file does; without LibreOffice, as
openpyxl saved it), its first scenario renamed so that no two files are the same.

Printed, each a whole ``compute-lab report`` process (``--out`` and ``--csv``), best of
``RUNS``:

- the floor: one openpyxl load of one planner (``openpyxl.load_workbook(path)``, in process,
  best of 5): what "reading the file" costs at least with the library the reader is built on;
- 1, 10 and 100 planners with ``--jobs 1`` (one process) and with the default (one process
  per core); the cost of each further planner, ``(t(100) - t(10)) / 90``, against the floor
  (aim: at most one load, 1.0x);
- peak memory: the largest sum of the proportional set sizes (PSS: resident pages, a page
  shared by forked processes counted once in all) of the command and its reading processes,
  sampled every 20 ms (aim: under 300 MB for 1,000 planners);
- 1,000 planners (four scenario columns each: 1,000 eight-column planners would pass the run's
  bound of 4,000 scenario columns): time and peak memory;
- the CPU time (user and system) of each run's process tree beside its wall time: on a
  loaded machine the processes wait for a core, and only the CPU time says what they cost;
- with ``--against DIR`` (a checkout of another commit, e.g. the last main), the same runs of
  that code in the same session, alternately, and the ratios: on a shared machine only ratios
  measured side by side mean anything.

``BENCH_REPORT_RUNS`` sets ``RUNS``. Results also go to
``benchmarks/results/bench_report.json``. ``--quick``: 1 and 4 planners saved by openpyxl,
once each (tests/test_benchmarks.py).
Run: ``.venv/bin/python benchmarks/bench_report.py [--against /work/main] [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import openpyxl  # noqa: E402
from _results import QUICK, record  # noqa: E402
from helpers_report import spread_names  # noqa: E402
from test_report_fixtures import PLAN_A, PLAN_B, fill  # noqa: E402

from workbook_templates import generate  # noqa: E402
from workbook_templates.recalc import find_soffice, recalculate  # noqa: E402

RUNS = 1 if QUICK else int(os.environ.get("BENCH_REPORT_RUNS", "2"))
SIZES = (1, 4) if QUICK else (1, 10, 100)
THOUSAND = 1000
MARKER = b"NAME0000"


def planners(base, folder, n):
    """``n`` distinct planners made from ``base`` by renaming its first scenario."""
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(base) as z:
        parts = [(i, z.read(i.filename)) for i in z.infolist()]
    paths = []
    for k in range(n):
        path = folder / f"team-{k:04d}.xlsx"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
            for info, data in parts:
                out.writestr(info, data.replace(MARKER, f"NAME{k:04d}".encode()))
        paths.append(path)
    return paths


def _tree_memory_kb(pid):
    """Memory (kB) of ``pid`` and all its descendants, from /proc: each process's
    proportional set size (its own pages, and its share of the pages the forked reading
    processes share with the command; resident sizes would count those once per process)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup") as fh:
                for line in fh:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
            with open(f"/proc/{p}/task/{p}/children") as fh:
                todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            continue
    return total


def _children_cpu():
    """CPU seconds (user and system) of the finished child processes and theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_report(files, out, code_root=None, jobs=None, extra=()):
    """(seconds, peak MB of the process tree, CPU seconds of the tree) of one
    ``compute-lab report`` process: on a loaded machine the CPU time says what the wall
    time cannot (the processes wait for a core). ``extra``: more command-line arguments."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    env = dict(os.environ)
    if code_root is not None:
        env["PYTHONPATH"] = str(code_root)
    argv = [sys.executable, "-m", "compute_lab", "report", *map(str, files),
            "--out", str(out / "h.xlsx"), "--csv", str(out / "csv"), *map(str, extra)]  # fmt: skip
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    start, cpu = time.perf_counter(), _children_cpu()
    with open(out / "stderr.txt", "w+b") as stderr:  # a file: a pipe would fill and block it
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, env=env,
                                cwd=code_root or ROOT)  # fmt: skip
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_memory_kb(proc.pid))
            time.sleep(0.02)
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
        stderr.seek(0)
        err = stderr.read().decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"report failed ({proc.returncode}): {err[-1500:]}")
    return seconds, peak / 1024, cpu


def floor(path):
    """One openpyxl load of ``path`` (best of 5), in seconds."""
    times = []
    for _ in range(1 if QUICK else 5):
        start = time.perf_counter()
        openpyxl.load_workbook(path).close()
        times.append(time.perf_counter() - start)
    return min(times)


def make_base(tmp):
    (template,) = [p for p in generate.write_templates(tmp / "t")
                   if p.name == "training-run-planner.xlsx"]  # fmt: skip
    base = fill(template, tmp / "base.xlsx", [dict(PLAN_A, scenario_name="NAME0000"), PLAN_B])
    if QUICK or find_soffice() is None:
        return base, base, "openpyxl"
    (saved,) = recalculate([base], tmp / "saved")
    return saved, base, "LibreOffice"


def sizes(paths, tmp, figures, against):
    print(f"{'planners':>8} {'jobs':>6} {'this code':>10} {'cpu':>7} {'peak MB':>8}"
          + (f" {'against':>10} {'cpu':>7} {'peak MB':>8} {'ratio':>6} {'cpu':>6}"
             if against else ""))  # fmt: skip
    for n in SIZES:
        runs = {}
        for _ in range(RUNS):  # alternately: a change in the machine's load hits both sides
            for jobs in (1, None, "against"):
                if jobs == "against" and not against:
                    continue
                root = against if jobs == "against" else None
                got = run_report(paths[:n], tmp / "o", code_root=root,
                                 jobs=None if jobs == "against" else jobs)  # fmt: skip
                old = runs.get(jobs, (float("inf"), 0.0, float("inf")))
                runs[jobs] = (min(old[0], got[0]), max(old[1], got[1]), min(old[2], got[2]))
        if against:
            (figures[f"against_{n}_s"], figures[f"against_{n}_peak_mb"],
             figures[f"against_{n}_cpu_s"]) = runs["against"]  # fmt: skip
        for jobs in (1, None):
            label = "1" if jobs == 1 else "cores"
            ours = runs[jobs]
            figures[f"report_{n}_jobs_{label}_s"] = ours[0]
            figures[f"report_{n}_jobs_{label}_peak_mb"] = ours[1]
            figures[f"report_{n}_jobs_{label}_cpu_s"] = ours[2]
            line = f"{n:>8} {label:>6} {ours[0]:9.2f}s {ours[2]:6.2f}s {ours[1]:8.0f}"
            if against:
                theirs = runs["against"]
                figures[f"report_{n}_jobs_{label}_over_against"] = ours[0] / theirs[0]
                figures[f"report_{n}_jobs_{label}_cpu_over_against"] = ours[2] / theirs[2]
                line += (f" {theirs[0]:9.2f}s {theirs[2]:6.2f}s {theirs[1]:8.0f}"
                         f" {ours[0] / theirs[0]:6.2f} {ours[2] / theirs[2]:6.2f}")  # fmt: skip
            print(line)


def thousand(base, tmp, figures):
    """1,000 planners of 4 scenario columns (``base``'s names narrowed to D:G), as saved by
    openpyxl: time and peak memory of one report, jobs = cores."""
    narrow = spread_names(base, tmp / "narrow.xlsx", columns=("D", "G"))  # 4 scenario columns
    paths = planners(narrow, tmp / "thousand", THOUSAND)
    seconds, peak, cpu = run_report(paths, tmp / "o1000")
    figures.update(report_1000_s=seconds, report_1000_peak_mb=peak, report_1000_cpu_s=cpu)
    print(f"{THOUSAND:,} planners (4 scenario columns each), jobs = cores: {seconds:.1f} s "
          f"({cpu:.1f} s CPU), peak {peak:.0f} MB (aim: under 300 MB)")  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run (1 and 4 planners)")
    parser.add_argument("--against", type=Path, help="another checkout to time side by side")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="compute-lab-bench-report-") as tmp:
        tmp = Path(tmp)
        base, unsaved, saved_by = make_base(tmp)
        paths = planners(base, tmp / "many", max(SIZES))
        one_load = floor(paths[0])
        print(f"planners saved by {saved_by}, {paths[0].stat().st_size / 1024:.0f} kB each")
        print(f"floor: one openpyxl load of one planner (load_workbook, in process): "
              f"{one_load * 1e3:.0f} ms")  # fmt: skip
        figures = {"one_openpyxl_load_s": one_load}
        sizes(paths, tmp, figures, args.against)
        small, large = SIZES[-2], SIZES[-1]
        for label in ("1", "cores"):
            extra = (figures[f"report_{large}_jobs_{label}_s"]
                     - figures[f"report_{small}_jobs_{label}_s"]) / (large - small)  # fmt: skip
            figures[f"each_further_planner_jobs_{label}_over_load"] = extra / one_load
            print(f"each further planner, jobs {label}: {extra * 1e3:.0f} ms, "
                  f"{extra / one_load:.2f}x one openpyxl load (aim: at most 1x)")  # fmt: skip
        if not QUICK:
            thousand(unsaved, tmp, figures)  # its names as openpyxl writes them
    notes = {"floor": "one openpyxl load_workbook of one planner, in process",
             "planners_saved_by": saved_by, "runs": RUNS,
             "against": str(args.against) if args.against else None}  # fmt: skip
    record("bench_report", figures, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
