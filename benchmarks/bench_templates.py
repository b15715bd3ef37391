"""Benchmark: time to generate every template, and LibreOffice's recalculation per workbook.

Run: ``.venv/bin/python benchmarks/bench_templates.py [--quick]`` (``make bench`` runs every
benchmark). Generation is timed in-process (build + save, best of 5), against its floor:
openpyxl building and saving an empty workbook (the library's own fixed cost). Recalculation
is one headless LibreOffice call per workbook (fresh profile, forced recalculation), best of
3, and once for all workbooks together (one call), which is how the tests use it, against its
floor: the same call on an empty workbook (LibreOffice's start-up, about 1 s, which
dominates). Results also go to ``benchmarks/results/bench_templates.json``. ``--quick``: one
run of each, the planner only through LibreOffice.
"""

from __future__ import annotations

import datetime
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import openpyxl  # noqa: E402
from _results import QUICK, record  # noqa: E402

from workbook_templates import generate  # noqa: E402
from workbook_templates.recalc import find_soffice, recalculate  # noqa: E402

GENERATE_RUNS = 1 if QUICK else 5
RECALC_RUNS = 1 if QUICK else 3


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _generation(tmp, figures):
    generate.build_all()  # warm imports and the catalogue cache
    empty = best(lambda: openpyxl.Workbook().save(tmp / "empty.xlsx"), GENERATE_RUNS)
    print(f"floor: openpyxl builds and saves an empty workbook: {empty:.3f} s")
    gen = best(lambda: generate.write_templates(tmp / "gen", force=True), GENERATE_RUNS)
    print(f"generate all {len(generate.TEMPLATES)} templates (build + save): {gen:.3f} s "
          f"({gen / empty:.0f}x the floor)")  # fmt: skip
    figures.update(empty_workbook_s=empty, generate_all_s=gen)
    generated = datetime.datetime.now().replace(microsecond=0)
    for name, build in generate.TEMPLATES.items():
        t = best(lambda b=build, n=name: b(generated).save(tmp / f"one-{n}"), GENERATE_RUNS)
        print(f"  {name:28s} build + save {t:.3f} s ({t / empty:.0f}x)")
        figures[f"generate_{Path(name).stem}_s"] = t


def _recalculation(tmp, figures):
    empty = tmp / "empty.xlsx"
    floor = best(lambda: recalculate([empty], tmp / "rc-empty"), RECALC_RUNS)
    print(f"floor: LibreOffice recalculating an empty workbook (its start-up): {floor:.2f} s")
    figures["recalc_empty_s"] = floor
    paths = sorted((tmp / "gen").glob("*.xlsx"))
    if QUICK:
        paths = [p for p in paths if p.name == "training-run-planner.xlsx"]
    for path in paths:
        t = best(lambda p=path: recalculate([p], tmp / "rc"), RECALC_RUNS)
        print(f"LibreOffice recalculation {path.name:28s} {t:.2f} s (one call, one file; "
              f"{t / floor:.1f}x the floor)")  # fmt: skip
        figures[f"recalc_{path.stem}_s"] = t
    if QUICK:
        return
    t = best(lambda: recalculate(paths, tmp / "rc-all"), RECALC_RUNS)
    print(f"LibreOffice recalculation, all {len(paths)} in one call: {t:.2f} s "
          f"({t / floor:.1f}x the floor)")  # fmt: skip
    figures["recalc_all_one_call_s"] = t


def main():
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _generation(tmp, figures)
        if find_soffice() is None:
            print("LibreOffice not installed: recalculation not measured")
        else:
            _recalculation(tmp, figures)
    record("bench_templates", figures, {
        "floor": "generation: openpyxl building and saving an empty workbook; recalculation: "
                 "LibreOffice recalculating an empty workbook (its start-up)",
        "generate_runs": GENERATE_RUNS, "recalc_runs": RECALC_RUNS})  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
