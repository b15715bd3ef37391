"""The speed trick of the Excel functions (udfs.speedups): the paused collector."""

import gc
import re
from pathlib import Path

import pytest

from udfs import _cells, speedups

ROOT = Path(__file__).resolve().parents[1]


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


def test_the_call_sites_use_this_module():
    assert _cells.gc_paused is speedups.gc_paused
    server = (ROOT / "addin" / "server_app.py").read_text()
    for source in (server, (ROOT / "udfs" / "_cells.py").read_text()):
        code = "\n".join(line.split("#")[0] for line in source.splitlines())
        assert not re.search(r"\bgc\.(disable|freeze)\(|is_jsnull\s*=", code)


def test_nothing_of_xlwings_is_replaced():
    """xlwings runs as released: no module of the project assigns to an xlwings attribute."""
    for path in [*ROOT.glob("udfs/*.py"), *ROOT.glob("addin/*.py")]:
        code = "\n".join(line.split("#")[0] for line in path.read_text().splitlines())
        assert not re.search(r"\bxlwings(\.\w+)+\s*=[^=]", code), path
