"""A fast start (issue 19): what ``compute-lab estimate`` and ``import udfs.excel`` import.

Each runs in a fresh interpreter under ``python -X importtime``; the modules it imports are
listed (printed with ``-s``) and the test fails when pandas, openpyxl or the calibration
(whose default-MFU fit the example plan does not need) is among them. ``udfs.excel`` needs
xlwings, which itself imports pandas when it is installed: that import is made first, so the
list is what ``udfs.excel`` adds.
"""

import subprocess
import sys

import pytest

HEAVY = ("pandas", "openpyxl", "udfs.calibration", "scipy", "matplotlib")


def _imported(code):
    """Top-level names of the modules ``code`` imports, in import order (importtime's list)."""
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    names = []
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def _heavy(names):
    return sorted({n for n in names for h in HEAVY if n == h or n.startswith(h + ".")})


def test_compute_lab_estimate_imports_no_pandas_openpyxl_or_fit():
    code = (
        "import contextlib, io\n"
        "from compute_lab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['estimate']) in (0, None)\n"
    )
    names = _imported(code)
    print(f"compute-lab estimate imports {len(names)} modules:", ", ".join(names))
    assert "udfs.engine" in names and "udfs.plan" in names  # the list is real
    assert _heavy(names) == []


def test_estimate_json_imports_no_pandas_openpyxl_or_fit():
    code = (
        "import contextlib, io\n"
        "from compute_lab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['estimate', '--json']) in (0, None)\n"
    )
    assert _heavy(_imported(code)) == []


def test_import_udfs_excel_adds_no_pandas_openpyxl_or_fit():
    pytest.importorskip("xlwings")
    names = _imported("import xlwings\nimport sys\nn = len(sys.modules)\nimport udfs.excel\n")
    start = names.index("udfs") if "udfs" in names else 0
    added = names[start:]
    print(f"udfs.excel adds {len(added)} modules:", ", ".join(added))
    assert "udfs.excel" in added
    assert _heavy(added) == []


def test_the_check_sees_a_heavy_import():
    """The check itself: a path that does need the calibration lists it."""
    names = _imported("from udfs import calibration\ncalibration.default_range_pct()\n")
    assert "udfs.calibration" in _heavy(names)
