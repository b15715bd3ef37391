"""Benchmark: time to generate every template, and LibreOffice's recalculation per workbook.

Run: ``.venv/bin/python benchmarks/bench_templates.py`` (``make bench`` runs every benchmark).
Generation is timed in-process (build + save, best of 5). Recalculation is one headless
LibreOffice call per workbook (fresh profile, forced recalculation), best of 3, and once for
all workbooks together (one call), which is how the tests use it. Figures include
LibreOffice's start-up (~1 s), which dominates.
"""

from __future__ import annotations

import datetime
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbook_templates import generate  # noqa: E402
from workbook_templates.recalc import find_soffice, recalculate  # noqa: E402


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        generate.build_all()  # warm imports and the catalogue cache
        gen = best(lambda: generate.write_templates(tmp / "gen", force=True), 5)
        print(f"generate all {len(generate.TEMPLATES)} templates (build + save): {gen:.3f} s")
        generated = datetime.datetime.now().replace(microsecond=0)
        for name, build in generate.TEMPLATES.items():
            t = best(lambda b=build, n=name: b(generated).save(tmp / f"one-{n}"), 5)
            print(f"  {name:28s} build + save {t:.3f} s")
        if find_soffice() is None:
            print("LibreOffice not installed: recalculation not measured")
            return 0
        paths = sorted((tmp / "gen").glob("*.xlsx"))
        for path in paths:
            t = best(lambda p=path: recalculate([p], tmp / "rc"), 3)
            print(f"LibreOffice recalculation {path.name:28s} {t:.2f} s (one call, one file)")
        t = best(lambda: recalculate(paths, tmp / "rc-all"), 3)
        print(f"LibreOffice recalculation, all {len(paths)} in one call: {t:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
