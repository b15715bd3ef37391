"""Benchmark: the planner reader's peak memory and time, on a normal planner and hostile files.

Run: ``.venv/bin/python benchmarks/bench_reader.py`` (``make bench`` runs every benchmark).
Each file is read by ``workbook_templates.reader.read_planner`` in a fresh Python process
(imports included, about 80 MB and 0.5 s of the figures), measured from the outside: peak
resident memory is that process's ``ru_maxrss`` (``RUSAGE_CHILDREN`` of this one, which runs
one child at a time), time is its wall clock, best of 3, followed by the time spent in
``read_planner`` itself (imports excluded). The files:

- the generated planner with two plans typed in (a normal file, about 45 kB);
- the same plus ``customXml/item1.xml`` holding 190 MB of ``<a/>`` (issue 8's file: before
  the bounds it took 4.4 GB and 67 s, and was then accepted);
- the same with 30 MB of ``<a/>`` (7.9 million elements, under the part size bound: refused
  at the element bound, after 1,000,000 elements);
- 1,000,000 nested ``<a>`` (every open element stays alive: refused at the depth bound);
- ``xl/workbook.xml`` padded with 999,000 ``<a/>`` (just under the element bound of one
  part; refused at the bound on a part openpyxl reads into objects, ``MAX_BOOK_PART_ELEMENTS``);
- issue 22's crafted planners, each to be refused in under a second at under 150 MB: every
  defined name spanning columns A:XFD (row 2: before the bounds, 43 s at row 20,000);
  ``scenario_name`` moved to row 1,048,576 (row 2, the cells-read bound); 10,699 scenario
  columns (row 4: 118 s and 1.1 GB before); a scenario name of 30 million characters (row 5:
  546 MB of CSV before);
- the crafted planners of the package-wide bounds (made by ``tests/helpers_hostile.py``),
  each to be refused under 30 s and :data:`~workbook_templates.report.pool.READER_PEAK_MB`
  (400 MB): 38 sheet entries on one worksheet part whose accelerators row holds 999,000 empty cells
  (a part read once per entry would take minutes); a row of 999,000 empty ``<c/>``;
  725,000 defined names; both together; 50 parts of 999,000 ``<x/>`` each.

The floor every figure is compared with: the normal planner read the same way (a fresh
Python process importing the reader, about 80 MB and 0.5 s of it, and ``read_planner``).
Results also go to ``benchmarks/results/bench_reader.json``. ``--quick``: the normal planner
and the two crafted files that are fast to make, read once each.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from _results import QUICK, record  # noqa: E402
from helpers_hostile import aliased_sheets, flooded_parts, many_names, wide_row  # noqa: E402
from helpers_report import long_text, spread_names, xml_flood  # noqa: E402
from test_report_fixtures import PLAN_A, PLAN_B, fill, rezip  # noqa: E402

from workbook_templates import generate  # noqa: E402
from workbook_templates.reader import (  # noqa: E402
    MAX_PART_BYTES,
    MAX_PART_ELEMENTS,
    MAX_XML_DEPTH,
)

_DEEP = b"<a>" * 10**6 + b"</a>" * 10**6

_READ = """
import sys, time
from workbook_templates.reader import PlannerError, read_planner
t0 = time.perf_counter()
try:
    p = read_planner(sys.argv[1])
    said = f"read: {len(p.scenarios)} scenario(s)"
except PlannerError as err:
    said = "refused: " + str(err).split(": ", 1)[1][:90]
print(f"{time.perf_counter() - t0:.2f} s in read_planner; {said}")
"""


def measure(path, repeat=1 if QUICK else 3):
    """(best wall time in s, peak RSS in MB, what the reader said) of reading ``path``."""
    best_time, outcome = float("inf"), ""
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _READ, str(path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        best_time = min(best_time, time.perf_counter() - t0)
        outcome = proc.stdout.strip()
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return best_time, peak_mb, outcome


def padded_workbook(source, target, elements):
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/workbook.xml":
                data = data.replace(b"</workbook>", b"<a/>" * elements + b"</workbook>")
            z.writestr(info, data)
    return target


def _issue22_files(template, normal, tmp):
    marked = fill(template, tmp / "marked.xlsx", [dict(PLAN_A, scenario_name="MARKER"), PLAN_B])
    return [
        ("names spanning A:XFD", spread_names(normal, tmp / "wide.xlsx", columns=("A", "XFD"))),
        ("a name on row 1,048,576", spread_names(normal, tmp / "tall.xlsx", last_row=2**20)),
        ("10,699 scenario columns", spread_names(normal, tmp / "many.xlsx", columns=("D", "OUP"))),
        ("a 30-million-character name", long_text(marked, tmp / "long.xlsx", "MARKER", 30 * 10**6)),
    ]


def _issue30_files(normal, tmp):
    wide = wide_row(normal, tmp / "wide-row.xlsx", 999_000)
    return [
        ("38 sheet entries on one part", aliased_sheets(wide, tmp / "alias.xlsx", 38)),
        ("a row of 999,000 empty cells", wide),
        ("725,000 defined names", many_names(normal, tmp / "names.xlsx", 725_000)),
        ("the row and the names together", many_names(wide, tmp / "both.xlsx", 725_000)),
        ("50 parts of 999,000 elements", flooded_parts(normal, tmp / "parts.xlsx", 50, 999_000)),
    ]  # fmt: skip


def main():
    print(
        f"bounds: {MAX_PART_BYTES / 2**20:.0f} MiB expanded, {MAX_PART_ELEMENTS:,} "
        f"XML elements and {MAX_XML_DEPTH} levels of nesting per part"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (template,) = [
            p for p in generate.write_templates(tmp / "t") if p.name == "training-run-planner.xlsx"
        ]
        normal = fill(template, tmp / "normal.xlsx", [PLAN_A, PLAN_B])
        files = (
            _quick_files(normal, tmp)
            if QUICK
            else [
                ("normal planner", normal),
                ("190 MB of <a/> in customXml", xml_flood(normal, tmp / "h190.xlsx", 190 * 2**20)),
                ("30 MB of <a/> in customXml", xml_flood(normal, tmp / "h30.xlsx", 30 * 2**20)),
                (
                    "1,000,000 nested <a> in customXml",
                    rezip(normal, tmp / "deep.xlsx", {"customXml/item1.xml": _DEEP}),
                ),
                (
                    "999,000 <a/> in workbook.xml",
                    padded_workbook(normal, tmp / "wb.xlsx", MAX_PART_ELEMENTS - 1000),
                ),
                *_issue22_files(template, normal, tmp),
                *_issue30_files(normal, tmp),
            ]
        )
        results = []
        for label, path in files:
            # ru_maxrss of the children is a running maximum: measure the small file first,
            # and each hostile file in its own measuring process.
            proc = subprocess.run(
                [sys.executable, __file__, "--one", str(path), *(["--quick"] * QUICK)],
                capture_output=True,
                text=True,
                check=True,
            )
            seconds, peak_mb, outcome = json.loads(proc.stdout)
            results.append((label, path.stat().st_size, seconds, peak_mb, outcome))
        base_time, base_mb = results[0][2], results[0][3]
        print(
            f"floor: the normal planner, read the same way: {base_time:.2f} s, "
            f"{base_mb:.0f} MB (a fresh Python process importing the reader, and the read)"
        )
        figures = {}
        for label, size, seconds, peak_mb, outcome in results:
            key = "".join(ch if ch.isalnum() else "_" for ch in label).strip("_").lower()
            figures.update({f"{key}_s": seconds, f"{key}_peak_mb": peak_mb,
                            f"{key}_over_floor": seconds / base_time})  # fmt: skip
            print(
                f"{label:34s} {size / 1024:7.0f} kB file: {seconds:5.2f} s "
                f"({seconds / base_time:4.1f}x), peak {peak_mb:4.0f} MB "
                f"({peak_mb / base_mb:3.1f}x): {outcome}"
            )
    record("bench_reader", figures, {
        "floor": "the normal planner read the same way: a fresh Python process importing the "
                 "reader, and read_planner", "runs": 1 if QUICK else 3})  # fmt: skip
    return 0


def _quick_files(normal, tmp):
    return [
        ("normal planner", normal),
        ("38 sheet entries on one part", aliased_sheets(normal, tmp / "alias.xlsx", 38)),
        ("names spanning A:XFD", spread_names(normal, tmp / "wide.xlsx", columns=("A", "XFD"))),
        ("30,000 nested <a> in customXml",
         rezip(normal, tmp / "deep.xlsx", {"customXml/item1.xml": b"<a>" * 30_000})),
    ]  # fmt: skip


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(measure(sys.argv[2])))
        raise SystemExit(0)
    raise SystemExit(main())
