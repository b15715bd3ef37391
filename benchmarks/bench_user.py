"""What a user waits for: the benchmarks that judge whether a speed path earns its place.

One table, each row a wait a user sees, its value, its floor and the ratio to the floor:

- (a) a workbook of 10,000 single-cell ``TRAIN_DAYS`` formulas recalculated through the server
  route: ``compute-lab serve`` on loopback, xlwings' own custom-functions JavaScript in headless
  Chromium under the fake office.js of ``tests/browser``, every cell called at once as Excel's
  recalculation calls them, until the last cell's promise resolves. Floor: the same 10,000
  single-cell calls of the Excel function in-process (the Python work alone);
- (b) one 10,000-row ``TRAIN_DAYS`` array call on each route: classic (the Python function
  in-process, nested lists in and out, as xlwings calls it), server (one HTTP request to
  ``compute-lab serve``, Excel's request body), Lite (the generated bundle's ``main.py``
  function called through xlwings' ``custom_functions_call``, as Lite calls it, in a process of
  its own, with a stand-in ``pyodide.ffi`` importable as in Pyodide; the same without it, for
  reference) and the browser end to end (the served JavaScript in Chromium). Floor: numpy over the
  same cells (``np.array`` of the nested lists and the bare expression);
- (c) ``compute-lab estimate`` as a whole process. Floor: ``python -c "import numpy"``;
- (d) ``compute-lab report`` over 100 planners (saved by LibreOffice, one process per core, the
  default). Floor: 100 openpyxl loads of one planner, in process;
- (e) one single-cell call's latency on the team server under load (``compute-lab serve
  --require-sign-in``, default workers, 16 signed-in clients, one call in ten a 10,000-row one):
  the median and the 99th percentile. Floor: the median of the same call with one client.

The parts reuse ``bench_excel``, ``bench_start``, ``bench_report`` and ``bench_team``. Each
time is the best of several runs (the median for latencies). The machine's load average is
printed and recorded at the start and the end: on a shared machine the figures are indicative,
and only ratios measured side by side mean much. Results go to
``benchmarks/results/bench_user.json``; ``--quick`` (or ``COMPUTE_LAB_BENCH_QUICK=1``) is a tiny
run of the same paths (``tests/test_benchmarks.py``). Without Chromium or playwright the
browser rows are left out (said so), never faked.
Run: ``.venv/bin/python benchmarks/bench_user.py [--quick] [--only a,b,c,d,e]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
from _results import QUICK, record  # noqa: E402

#: Single-cell formulas in the recalculated workbook (a), and rows of the array call (b).
CELLS = 200 if QUICK else 10_000
ROWS = 500 if QUICK else 10_000
#: Planners in the report (d).
PLANNERS = 4 if QUICK else 100
#: Signed-in clients on the team server (e), and the bounds of each load level.
CLIENTS = 8 if QUICK else 16  # bench_team warms up with 8
LOAD_REQUESTS, LOAD_SECONDS = (40, 1.0) if QUICK else (1500, 15.0)
#: Runs of each timing (best of).
REPEAT = 2 if QUICK else 7
#: Recalculations of the single-cell workbook (a): one takes minutes on a loaded machine.
RECALC_REPEAT = 1
PARTS = "abcde"

ROWS_OUT = []  # (key, label, what the user waits for, seconds, floor seconds, floor label)


def add(key, label, waits_for, seconds, floor_s, floor_label):
    ROWS_OUT.append((key, label, waits_for, seconds, floor_s, floor_label))
    print(f"  {label}: {seconds * 1e3:.1f} ms (floor {floor_s * 1e3:.2f} ms, {floor_label})")


def best(fn, repeat=REPEAT):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def inputs(n):
    """``n`` distinct active-parameter cells and the other three TRAIN_DAYS arguments."""
    rng = np.random.default_rng(0)
    return [[float(p)] for p in rng.uniform(1e9, 1e12, n)], 14.8e12, 2048.0, 400.0


def numpy_floor(active, tokens, accelerators, tflops):
    a = np.array(active, dtype=float)
    return 6.0 * a * tokens / (tflops * 1e12) / 3600.0 / accelerators / 24.0


# ---------------------------------------------------------------------------------------------
# (a) and (b): the Excel routes
# ---------------------------------------------------------------------------------------------


def serve_command(port):
    code = "import sys; from compute_lab.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "serve", "--port", str(port)]


def routes(parts, folder):
    from udfs import excel

    active, tokens, accelerators, tflops = inputs(ROWS)
    want = excel.TRAIN_DAYS(active, tokens, accelerators, tflops)
    np.testing.assert_allclose(np.array(want), numpy_floor(*inputs(ROWS)), rtol=1e-12)
    floor_s = best(lambda: numpy_floor(active, tokens, accelerators, tflops), REPEAT * 3)
    floor_label = f"numpy over the {ROWS:,} cells"
    if "b" in parts:
        print(f"(b) one {ROWS:,}-row TRAIN_DAYS call on each route")
        classic = best(lambda: excel.TRAIN_DAYS(active, tokens, accelerators, tflops))
        add(
            "array_classic_s",
            f"{ROWS:,}-row call, classic (in-process)",
            "the column's numbers after Enter (classic xlwings)",
            classic,
            floor_s,
            floor_label,
        )
        add(
            "array_lite_s",
            f"{ROWS:,}-row call, Lite (bundle main.py)",
            "the column's numbers after Enter (xlwings Lite)",
            lite_seconds(folder, want),
            floor_s,
            floor_label,
        )
        add(
            "array_lite_cpython_s",
            f"{ROWS:,}-row call, Lite in CPython (reference)",
            "none: no pyodide.ffi, its import fails once per cell",
            lite_seconds(folder, want, pyodide=False),
            floor_s,
            floor_label,
        )
    cells, c_tokens, c_accelerators, c_tflops = inputs(CELLS)
    singles_floor = None
    if "a" in parts:
        singles_floor = best(
            lambda: [excel.TRAIN_DAYS(c[0], c_tokens, c_accelerators, c_tflops) for c in cells],
            max(2, REPEAT // 2),
        )
    if not ({"a", "b"} & set(parts)):
        return
    import httpx
    from bench_excel import request_body
    from bench_team import server_env

    from addin.local_server import ServerStartError, local_server

    env = server_env(folder)
    try:
        with local_server(serve_command, env=env, ready_path="/manifest.xml") as base:
            if "b" in parts:
                body = {
                    **request_body(),
                    "args": [active, [[tokens]], [[accelerators]], [[tflops]]],
                }
                with httpx.Client(base_url=base, timeout=120) as client:

                    def post():
                        answer = client.post("/xlwings/custom-functions-call", json=body)
                        answer.raise_for_status()
                        return answer

                    assert post().json()["result"] == want
                    add(
                        "array_server_s",
                        f"{ROWS:,}-row call, server (HTTP)",
                        "the column's numbers after Enter (compute-lab serve)",
                        best(post),
                        floor_s,
                        floor_label,
                    )
            browser(parts, base, want, floor_s, floor_label, singles_floor)
    except ServerStartError as err:
        raise SystemExit(str(err)) from None


#: What Pyodide's ``pyodide.ffi`` gives xlwings' custom-function conversion: the type of JS
#: null. xlwings asks for it once per argument cell (``from pyodide.ffi import JsNull``); in
#: Pyodide the import is found, in CPython it fails after searching ``sys.path`` each time
#: (about 0.25 ms a cell), which is no wait a Lite user has.
_PYODIDE_FFI = "class JsNull:\n    pass\n"


def lite_seconds(folder, want, pyodide=True):
    """The bundle's TRAIN_DAYS through xlwings' ``custom_functions_call`` in a process of its
    own (XLWINGS_ON_SERVER, as xlwings Lite loads ``main.py``): best of ``REPEAT``. With
    ``pyodide``, a stand-in ``pyodide.ffi`` is importable, as it is in Pyodide."""
    from bench_excel import request_body

    from addin import lite

    out = Path(folder) / "lite"
    if not (out / "main.py").exists():
        lite.write_bundle(out)
    stand_in = Path(folder) / "pyodide-stand-in"
    (stand_in / "pyodide").mkdir(parents=True, exist_ok=True)
    (stand_in / "pyodide" / "__init__.py").write_text("")
    (stand_in / "pyodide" / "ffi.py").write_text(_PYODIDE_FFI)
    body = {**request_body(), "args": [inputs(ROWS)[0], [[14.8e12]], [[2048.0]], [[400.0]]]}
    code = (
        "import asyncio, importlib, json, sys, time\n"
        "sys.path[0:0] = sys.argv[1:]\n"
        "from xlwings import server\n"
        "main = importlib.import_module('main')\n"
        "body = json.loads(sys.stdin.read())\n"
        "got = asyncio.run(server.custom_functions_call(body, main))\n"
        "times = []\n"
        f"for _ in range({REPEAT}):\n"
        "    start = time.perf_counter()\n"
        "    asyncio.run(server.custom_functions_call(body, main))\n"
        "    times.append(time.perf_counter() - start)\n"
        "print(json.dumps({'result': got, 'seconds': min(times)}))\n"
    )
    env = {
        **os.environ,
        "XLWINGS_ON_SERVER": "true",
        "XLWINGS_LICENSE_KEY": os.environ.get("XLWINGS_LICENSE_KEY", "noncommercial"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out), *([str(stand_in)] if pyodide else [])],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=600,
        check=False,
    )
    if proc.returncode:
        raise SystemExit(f"the Lite bundle failed:\n{proc.stderr[-2000:]}")
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(np.array(got["result"]), np.array(want), rtol=1e-12)
    return got["seconds"]


#: Excel's recalculation of the single-cell workbook: every cell's function called at once
#: (xlwings' JavaScript bounds the calls in flight itself), the time until the last resolves.
_RECALC_JS = """async ([cells, rest, repeat]) => {
    const times = [];
    let shown = null;
    for (let k = 0; k < repeat; k++) {
        const start = performance.now();
        const got = await Promise.all(cells.map((c, i) => window.__callCustomFunction(
            "TRAIN_DAYS", [[[c]], ...rest], `Sheet1!B${i + 2}`)));
        times.push(performance.now() - start);
        shown = got.map((g) => g.error ? g.message : g.raw[0][0]);
    }
    return {seconds: Math.min(...times) / 1e3, shown};
}"""

_ARRAY_JS = """async ([args, repeat]) => {
    const times = [];
    let got = null;
    for (let k = 0; k < repeat; k++) {
        const start = performance.now();
        got = await window.__callCustomFunction("TRAIN_DAYS", args);
        times.push(performance.now() - start);
    }
    if (got.error) throw new Error(got.message);
    return {seconds: Math.min(...times) / 1e3, shown: got.raw};
}"""


def browser(parts, base, want, floor_s, floor_label, singles_floor):
    from browser import harness

    if importlib.util.find_spec("playwright") is None or harness.chromium_path() is None:
        print("  chromium or playwright missing: the browser rows are left out (make chromium)")
        return
    from udfs import excel

    with harness.browser() as context:
        page = harness.open_taskpane(context, base)
        if "b" in parts:
            active, tokens, accelerators, tflops = inputs(ROWS)
            args = [active, [[tokens]], [[accelerators]], [[tflops]]]
            got = page.evaluate(_ARRAY_JS, [args, REPEAT])
            assert got["shown"] == want, "the browser's answer differs from the function's"
            add(
                "array_browser_s",
                f"{ROWS:,}-row call, browser end to end",
                "the column's numbers after Enter (Office.js in Chromium)",
                got["seconds"],
                floor_s,
                floor_label,
            )
        if "a" in parts:
            print(f"(a) {CELLS:,} single-cell TRAIN_DAYS formulas recalculated in the browser")
            cells, tokens, accelerators, tflops = inputs(CELLS)
            rest = [[[tokens]], [[accelerators]], [[tflops]]]
            got = page.evaluate(_RECALC_JS, [[c[0] for c in cells], rest, RECALC_REPEAT])
            expected = [excel.TRAIN_DAYS(c[0], tokens, accelerators, tflops) for c in cells]
            assert got["shown"] == expected, "a recalculated cell differs from the function"
            add(
                "recalc_cells_browser_s",
                f"{CELLS:,} single-cell formulas, browser recalc",
                "the workbook recalculated (every cell shows its number)",
                got["seconds"],
                singles_floor,
                f"{CELLS:,} single-cell calls in-process",
            )
        page.close()


# ---------------------------------------------------------------------------------------------
# (c) the command line, (d) the report, (e) the team server under load
# ---------------------------------------------------------------------------------------------


def estimate():
    import bench_start

    print("(c) compute-lab estimate as a process")
    py = sys.executable
    bench_start.RUNS = 3 if QUICK else 10
    got = bench_start.timed(
        {"numpy": [py, "-c", "import numpy"], "estimate": [py, "-m", "compute_lab", "estimate"]}
    )
    add(
        "estimate_process_s",
        "compute-lab estimate (a whole process)",
        "the estimate printed in the terminal",
        got["estimate"][0],
        got["numpy"][0],
        'python -c "import numpy"',
    )


def report(folder):
    import bench_report

    print(f"(d) compute-lab report over {PLANNERS} planners")
    tmp = Path(folder) / "report"
    base, _, saved_by = bench_report.make_base(tmp)
    paths = bench_report.planners(base, tmp / "many", PLANNERS)
    one_load = bench_report.floor(paths[0])
    seconds = min(bench_report.run_report(paths, tmp / "o")[0] for _ in range(1 if QUICK else 2))
    add(
        "report_planners_s",
        f"compute-lab report, {PLANNERS} planners ({saved_by})",
        "the finance hand-off written",
        seconds,
        one_load * PLANNERS,
        f"{PLANNERS} openpyxl loads of one planner",
    )


def team(folder):
    import bench_team

    print(f"(e) one single-cell call on the team server, {CLIENTS} signed-in clients")
    bench_team.REQUESTS, bench_team.SECONDS = LOAD_REQUESTS, LOAD_SECONDS
    workers = os.cpu_count() or 1
    alone, loaded = bench_team.load_test(folder, workers, (1, CLIENTS))
    for row in (alone, loaded):
        if row["other"]:
            print(f"  statuses other than 200 with {row['clients']} client(s): {row['other']}")
    floor_s = alone["small_p50"] / 1e3
    label = f"1-cell call, team server, {CLIENTS} clients"
    add(
        "team_one_cell_p50_s",
        f"{label}, p50",
        "one cell's number after Enter",
        loaded["small_p50"] / 1e3,
        floor_s,
        "the median with one client",
    )
    add(
        "team_one_cell_p99_s",
        f"{label}, p99",
        "one cell's number, worst 1 in 100",
        loaded["small_p99"] / 1e3,
        floor_s,
        "the median with one client",
    )


# ---------------------------------------------------------------------------------------------


def shown(seconds):
    """A time as a user reads it: milliseconds under 10 s, else seconds."""
    return f"{seconds * 1e3:8.1f} ms" if seconds < 10 else f"{seconds:8.1f} s "


def table():
    head = f"{'figure':<44} {'what the user waits for':<56} {'value':>11} {'floor':>11}  ratio"
    print("\n" + head)
    print("-" * len(head))
    for _, label, waits_for, seconds, floor_s, _ in ROWS_OUT:
        print(
            f"{label:<44} {waits_for:<56} {shown(seconds)} {shown(floor_s)} "
            f"{seconds / floor_s:7.1f}x"
        )
    print("floors:")
    for label in dict.fromkeys(r[5] for r in ROWS_OUT):
        keys = ", ".join(r[0] for r in ROWS_OUT if r[5] == label)
        print(f"  {label} ({keys})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a tiny run: small inputs")
    parser.add_argument(
        "--only", default=PARTS, help="the parts to run, e.g. 'a,b' (default: all of a-e)"
    )
    args = parser.parse_args(argv)
    parts = "".join(sorted(set(args.only.replace(",", ""))))
    if not parts or set(parts) - set(PARTS):
        parser.error(f"--only: letters among {','.join(PARTS)}, e.g. --only a,b; got {args.only!r}")
    load_start = os.getloadavg()
    print(
        f"load average {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f} "
        f"on {os.cpu_count()} cores (a shared machine: the figures are indicative)"
    )
    with tempfile.TemporaryDirectory(prefix="compute-lab-bench-user-") as folder:
        if "c" in parts:
            estimate()
        routes(parts, folder)
        if "d" in parts:
            report(folder)
        if "e" in parts:
            team(folder)
    load_end = os.getloadavg()
    table()
    print(f"load average at the end {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    figures = {}
    for key, _, _, seconds, floor_s, _ in ROWS_OUT:
        figures[key] = seconds
        figures[key.removesuffix("_s") + "_floor_s"] = floor_s
        figures[key.removesuffix("_s") + "_over_floor"] = seconds / floor_s
    notes = {
        "floor": "per figure: " + "; ".join(f"{r[0]}: {r[5]}" for r in ROWS_OUT),
        "waits_for": {r[0]: r[2] for r in ROWS_OUT},
        "parts": parts,
        "cells": CELLS,
        "rows": ROWS,
        "planners": PLANNERS,
        "clients": CLIENTS,
        "load_average_start": load_start[0],
        "load_average_end": load_end[0],
        "cores": os.cpu_count(),
    }
    record("bench_user", figures, notes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
