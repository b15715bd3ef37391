"""An example team plan: a fresh planner with one custom column filled in, as a team would.

``python -m workbook_templates.example FILE`` writes it (``make demo`` writes
``out/example/team-a-plan.xlsx`` and builds the finance hand-off from it); the docs' pictures
start from it too (:mod:`workbook_templates.pictures`). An existing file is replaced only with
``--force``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["EXAMPLE_PLAN", "write_example", "main"]

#: The plan typed into the planner's first custom column (the rest keeps its visible defaults).
EXAMPLE_PLAN = {
    "scenario_name": "Team A: 70B dense",
    "run_code": "TEAM-A-70B-2027",
    "budget_status": "Proposed",
    "owner": "Team A",
    "cost_centre": "CC-4100",
    "gl_account": "6420 Cloud compute",
    "total_params": 70e9,
    "training_tokens": 2e12,
    "accelerators": 1024,
    "accelerator_name": "H100 SXM",
    "start_date": dt.datetime(2027, 3, 1),
}


def _cell(wb, name, k):
    """Worksheet and coordinate of scenario column ``k`` of the defined name ``name``."""
    from openpyxl.utils import column_index_from_string, get_column_letter
    from openpyxl.utils.cell import coordinate_from_string

    ((sheet, ref),) = wb.defined_names[name].destinations
    col, row = coordinate_from_string(ref.replace("$", "").split(":")[0])
    return wb[sheet], f"{get_column_letter(column_index_from_string(col) + k)}{row}"


def _first_blank_column(wb):
    """Index of the first scenario column whose total parameters are blank."""
    for k in range(64):
        ws, coord = _cell(wb, "total_params", k)
        if ws[coord].value is None:
            return k
    raise RuntimeError("the planner has no blank scenario column")


def write_example(target, plan=None, force=False, recalculate=False):
    """Write a planner with ``plan`` (default :data:`EXAMPLE_PLAN`) typed in; return its path.

    An existing ``target`` is replaced only with ``force``. With ``recalculate`` the file is
    saved by headless LibreOffice after a full recalculation, so it carries the values its
    formulas compute, as a file a team saved in a spreadsheet does (the hand-off compares
    them with the engine).
    """
    import openpyxl

    from .files import place, temp_beside
    from .planner import build
    from .sheetkit import put_text

    target = Path(target)
    if target.exists() and not force:
        raise FileExistsError(f"{target} already exists (use --force to overwrite)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="compute-lab-example-") as tmp:
        fresh = Path(tmp) / "planner.xlsx"
        build().save(fresh)
        wb = openpyxl.load_workbook(fresh)
        k = _first_blank_column(wb)
        for name, value in (plan or EXAMPLE_PLAN).items():
            ws, coord = _cell(wb, name, k)
            if isinstance(value, str):  # text stays text, whatever it starts with
                put_text(ws[coord], value)
            else:
                ws[coord].value = value
        tmp_file = temp_beside(target)
        try:
            if recalculate:
                from .recalc import recalculate as _recalculate

                typed = Path(tmp) / target.name
                wb.save(typed)
                (done,) = _recalculate([typed], Path(tmp) / "recalculated")
                shutil.copyfile(done, tmp_file)
            else:
                wb.save(tmp_file)
        except BaseException:
            tmp_file.unlink(missing_ok=True)
            raise
    place(tmp_file, target, force=force)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m workbook_templates.example",
        description="Write a planner with an example team plan filled in.",
    )
    parser.add_argument("file", help="the .xlsx file to write")
    parser.add_argument("--force", action="store_true", help="replace the file if it exists")
    parser.add_argument(
        "--recalculate",
        action="store_true",
        help="save it through headless LibreOffice, with every formula's value",
    )
    args = parser.parse_args(argv)
    from .files import CommandError
    from .recalc import LibreOfficeError

    try:
        print(write_example(args.file, force=args.force, recalculate=args.recalculate))
    except (CommandError, OSError, LibreOfficeError) as exc:
        print(f"python -m workbook_templates.example: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
