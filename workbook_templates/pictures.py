"""Pictures of the real workbooks for the docs, so that they never go stale.

``python -m workbook_templates.pictures [--out docs/images]`` writes the example team plan
(:mod:`workbook_templates.example`), recalculates it with headless
LibreOffice, builds the finance hand-off from it, and a second hand-off with the example
actuals (:data:`EXAMPLE_ACTUALS`, ``report --actuals``: the Variance sheet's chart of
budget, actual and forecast by month), prints the workbooks to PDF and turns the pages the
docs show into PNG files with poppler's ``pdftoppm``; it also draws the calibration picture
(:mod:`workbook_templates.calibration_picture`, SVG). ``make pictures`` runs it.

Each picture is found by the title its page shows, not by a page
number, so a sheet that grows or moves does not silently change what a picture shows.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["PICTURES", "EXAMPLE_ACTUALS", "make_pictures", "main"]

#: The example plan's actuals: its one run's first month (run code TEAM-A-70B-2027), running,
#: as a plain actuals CSV (docs/plan-vs-actual.md).
EXAMPLE_ACTUALS = Path(__file__).with_name("example-actuals.csv")

#: (workbook, the title its page shows, image file name, what it shows)
PICTURES = (
    ("planner", "Summary: the budget, then the selected scenario", "planner-summary.png",
     "the planner's Summary sheet"),
    ("planner", "Sensitivity of the selected scenario", "planner-sensitivity.png",
     "the planner's sensitivity grids"),
    ("handoff", "Compute Lab hand-off", "handoff-summary.png", "the hand-off's Summary sheet"),
    ("actuals", "Budget, actual and forecast by month", "handoff-variance.png",
     "the hand-off's Variance chart, given the example actuals"),
)  # fmt: skip
#: Pictures of the top left part of their page only (image file name -> (the part of the
#: width, of the height), dots per inch): the Variance chart and its short month table print
#: at the top of a page of their own, the sheet scaled down to the page's width.
TOP_PART = {"handoff-variance.png": ((0.9, 0.72), 100)}


def _page_of(pdf, title):
    """1-based number of the first page of ``pdf`` that shows ``title`` (a title)."""
    pages = int(
        next(
            line.split()[-1]
            for line in subprocess.run(
                ["pdfinfo", str(pdf)], capture_output=True, text=True, check=True
            ).stdout.splitlines()
            if line.startswith("Pages:")
        )
    )
    for page in range(1, pages + 1):
        text = subprocess.run(
            ["pdftotext", "-f", str(page), "-l", str(page), "-layout", str(pdf), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if title in text:  # the sheet's title, below the page header
            return page
    raise RuntimeError(f"no page of {pdf.name} shows {title!r}")


def _page_size_pt(pdf, page):
    """(width, height) of page ``page`` of ``pdf`` in points."""
    info = subprocess.run(["pdfinfo", "-f", str(page), "-l", str(page), str(pdf)],
                          capture_output=True, text=True, check=True).stdout  # fmt: skip
    line = next(x for x in info.splitlines() if x.startswith(f"Page {page:4d} size:"))
    width, _, height = line.split(":", 1)[1].split()[:3]
    return float(width), float(height)


def _png(pdf, page, target, dpi=80, part=None):
    """Page ``page`` of ``pdf`` as ``target`` (PNG); ``part``: (width, height) fractions,
    its top left part only."""
    stem = target.with_suffix("")
    crop = []
    if part is not None:
        width, height = _page_size_pt(pdf, page)
        crop = ["-x", "0", "-y", "0", "-W", str(int(width / 72 * dpi * part[0])),
                "-H", str(int(height / 72 * dpi * part[1]))]  # fmt: skip
    subprocess.run(
        ["pdftoppm", "-png", "-r", str(dpi), "-f", str(page), "-l", str(page), *crop,
         "-singlefile", str(pdf), str(stem)],
        check=True,
    )  # fmt: skip
    return target


def make_pictures(out):
    """Write every picture in :data:`PICTURES` into ``out``; return their paths."""
    from . import calibration_picture, example, recalc, report

    for tool in ("pdftoppm", "pdftotext", "pdfinfo"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is missing: install Debian's poppler-utils")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="compute-lab-pictures-") as tmp:
        tmp = Path(tmp)
        recalculated = example.write_example(tmp / "team-a-plan.xlsx", recalculate=True)
        handoff, actuals = tmp / "handoff.xlsx", tmp / "handoff-actuals.xlsx"
        for target, extra in ((handoff, []), (actuals, ["--actuals", str(EXAMPLE_ACTUALS)])):
            options = argparse.ArgumentParser(prog=report.PROG)
            report.configure_parser(options)
            code = report.run(options.parse_args([str(recalculated), *extra,
                                                  "--out", str(target)]))  # fmt: skip
            if code:
                raise RuntimeError(f"compute-lab report failed on the example plan (exit {code})")
        pdfs = dict(
            zip(
                ("planner", "handoff", "actuals"),
                recalc.convert([recalculated, handoff, actuals], tmp / "pdf", "pdf"),
                strict=True,
            )
        )
        written = [calibration_picture.write(out)]  # docs/methodology-calibration.md
        for book, title, name, _ in PICTURES:
            page = _page_of(pdfs[book], title)
            part, dpi = TOP_PART.get(name, (None, 80))
            written.append(_png(pdfs[book], page, out / name, dpi, part))
    return written


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m workbook_templates.pictures")
    parser.add_argument("--out", default="docs/images", help="folder for the PNG files")
    args = parser.parse_args(argv)
    for path in make_pictures(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
