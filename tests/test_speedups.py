"""The speed tricks (udfs.speedups): the xlwings patch fails loudly when xlwings changes."""

import gc
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import xlwings
import xlwings.utils

from udfs import _cells, speedups

ROOT = Path(__file__).resolve().parents[1]


def test_the_installed_xlwings_is_the_one_the_patch_was_written_for():
    """Fails when xlwings is upgraded: review speedups.skip_pyodide_probe, then update
    XLWINGS_VERSION and IS_JSNULL_SHA256 (and the pin in pyproject.toml)."""
    assert xlwings.__version__ == speedups.XLWINGS_VERSION, (
        f"xlwings {xlwings.__version__} is installed; udfs.speedups patches "
        f"xlwings.utils.is_jsnull of {speedups.XLWINGS_VERSION}: review the patch"
    )
    original = xlwings.utils.is_jsnull
    if original is not speedups._not_jsnull:
        assert speedups._source_sha256(original) == speedups.IS_JSNULL_SHA256, (
            "xlwings.utils.is_jsnull changed: review udfs.speedups.skip_pyodide_probe"
        )
    assert speedups.is_jsnull_is_the_pinned_one()


def test_pyproject_pins_that_xlwings_for_the_server():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["optional-dependencies"]["server"] if d.startswith("xlwings==")]
    assert pins == [f"xlwings=={speedups.XLWINGS_VERSION}"]


@pytest.fixture
def restore_is_jsnull(monkeypatch):
    """Whatever a test does to xlwings.utils.is_jsnull is undone afterwards."""
    monkeypatch.setattr(xlwings.utils, "is_jsnull", xlwings.utils.is_jsnull)
    return monkeypatch


def test_the_patch_answers_false_off_pyodide(restore_is_jsnull):
    assert speedups.skip_pyodide_probe(xlwings) is True
    assert xlwings.utils.is_jsnull is speedups._not_jsnull
    assert xlwings.utils.is_jsnull(None) is False and xlwings.utils.is_jsnull(object()) is False


def test_a_changed_function_or_version_is_left_alone(restore_is_jsnull):
    def is_jsnull(value):  # not the pinned source
        return value is None

    restore_is_jsnull.setattr(xlwings.utils, "is_jsnull", is_jsnull)
    assert speedups.skip_pyodide_probe(xlwings) is False
    assert xlwings.utils.is_jsnull is is_jsnull

    class Newer:
        __version__ = "0.38.0"

    assert speedups.is_jsnull_is_the_pinned_one(Newer) is False


def test_gc_paused_switches_the_collector_back_on():
    assert gc.isenabled()
    with speedups.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), speedups.gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with speedups.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_freeze_startup_objects_freezes_them():
    code = (
        "import gc; from udfs import speedups; assert gc.get_freeze_count() == 0; "
        "speedups.freeze_startup_objects(); print(gc.get_freeze_count())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) > 1000


def test_the_call_sites_use_this_module():
    assert _cells.gc_paused is speedups.gc_paused
    server = (ROOT / "addin" / "server_app.py").read_text()
    assert "speedups.skip_pyodide_probe(xlwings)" in server
    assert "speedups.freeze_startup_objects()" in server
    for source in (server, (ROOT / "udfs" / "_cells.py").read_text()):
        code = "\n".join(line.split("#")[0] for line in source.splitlines())
        assert not re.search(r"\bgc\.(disable|freeze)\(|is_jsnull\s*=", code)
