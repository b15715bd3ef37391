"""A fast start (issue 19): what ``compute-lab estimate`` and ``import udfs.excel`` import.

Each runs in a fresh interpreter under ``python -X importtime``; the modules it imports are
listed (printed with ``-s``) and the test fails when pandas or openpyxl is among them.
``udfs.excel`` needs xlwings, which itself imports pandas when it is installed: that import is
made first, so the list is what ``udfs.excel`` adds. No fit runs either: the calibration's
fits (``fit``, ``refit``) and numpy's least-squares solver are counted and must not be called
(the fitted numbers are data, ``udfs/data/calibration.toml``).
"""

import importlib.util
import subprocess
import sys

import pytest

HEAVY = ("pandas", "openpyxl", "scipy", "matplotlib")

#: Runs ``code`` with the calibration's fits (``fit``, ``refit``) and numpy's least-squares
#: solver counted; prints the count last.
_COUNT_FITS = """
import contextlib, io, numpy.linalg
from udfs import calibration
calls = []
def counted(owner, name):
    original = getattr(owner, name)
    setattr(owner, name, lambda *a, **k: calls.append(name) or original(*a, **k))
counted(numpy.linalg, "lstsq")
counted(calibration, "fit")
counted(calibration, "refit")
with contextlib.redirect_stdout(io.StringIO()):
{body}
print(len(calls))
"""


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


def test_estimate_on_a_catalogue_accelerator_imports_no_pandas_or_openpyxl():
    code = (
        "import contextlib, io\n"
        "from compute_lab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['estimate', '--accelerator', 'H100', '--mfu', '0.4', '--json'])\n"
    )
    assert _heavy(_imported(code)) == []


def _estimate_imports(*flags):
    code = (
        "import contextlib, io\n"
        "from compute_lab.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['estimate', *{list(flags)!r}]) == 0\n"
    )
    return _imported(code)


def test_estimate_from_a_preset_imports_no_pandas_or_openpyxl():
    """--preset takes the run's figures and its implied MFU without the reference table."""
    names = _estimate_imports("--preset", "llama-3.1-405b")
    assert "udfs.calibration" in names  # the preset's implied MFU was looked up
    assert _heavy(names) == []


def test_estimate_imports_no_face_nor_network_code():
    """The command line's own commands build their parser alone: no face's table (the
    server route's addin.commands), no ssl, no workbook code."""
    for flags in ((), ("--preset", "llama-3.1-405b")):
        names = _estimate_imports(*flags)
        faces = [n for n in names if n.split(".")[0] in ("addin", "workbook_templates", "ssl")]
        assert faces == [], flags


OWN_RUNS = (
    "name,organisation,active_params,total_params,tokens,accelerator,accelerators,"
    "accelerator_hours\nours,us,70B,70B,2T,H100,1024,1.5M\n"
)


def test_estimate_with_own_runs_imports_no_openpyxl_nor_face(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text(OWN_RUNS)
    names = _estimate_imports("--own-runs", str(path))
    assert "udfs.own_runs" in names
    assert [h for h in _heavy(names) if not h.startswith("pandas")] == []
    assert not [n for n in names if n.split(".")[0] in ("addin", "workbook_templates", "ssl")]


def test_estimate_with_own_runs_imports_no_pandas(tmp_path):
    """The runs are plain columns and the peaks a record lookup: pandas waits for a table
    (runs --own-runs prints one)."""
    path = tmp_path / "runs.csv"
    path.write_text(OWN_RUNS)
    assert _heavy(_estimate_imports("--own-runs", str(path))) == []


def test_importing_own_runs_imports_no_pandas():
    """The planner's Checks import udfs.own_runs for its rules; pandas waits for a table."""
    assert _heavy(_imported("import udfs.own_runs\n")) == []


def test_import_udfs_excel_adds_no_pandas_openpyxl_or_fit():
    pytest.importorskip("xlwings")
    names = _imported("import xlwings\nimport sys\nn = len(sys.modules)\nimport udfs.excel\n")
    start = names.index("udfs") if "udfs" in names else 0
    added = names[start:]
    print(f"udfs.excel adds {len(added)} modules:", ", ".join(added))
    assert "udfs.excel" in added
    assert _heavy(added) == []


def _fits(body):
    """How many least-squares solves ``body`` (indented code) makes."""
    code = _COUNT_FITS.format(body=body)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=False)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    return int(run.stdout.split()[-1])


def test_no_fit_runs_for_an_estimate_nor_on_importing_udfs_excel():
    body = "    from compute_lab.cli import main\n    main(['estimate'])\n"
    assert _fits(body) == 0
    typed_mfu = "    from compute_lab.cli import main\n    main(['estimate', '--mfu', '0.4',"
    typed_mfu += " '--accelerator', 'H100'])\n"
    assert _fits(typed_mfu) == 0
    preset = "    from compute_lab.cli import main\n"
    preset += "    main(['estimate', '--preset', 'llama-3.1-405b'])\n"
    assert _fits(preset) == 0
    if importlib.util.find_spec("xlwings") is not None:
        assert _fits("    import udfs.excel\n") == 0


def test_the_checks_see_a_heavy_import_and_a_fit():
    """The checks themselves: the calibration's tables import pandas; its fit solves."""
    names = _imported("from udfs import calibration\ncalibration.calibration_set()\n")
    assert "pandas" in _heavy(names)
    assert _fits("    from udfs import calibration\n    calibration.fit()\n") > 0
