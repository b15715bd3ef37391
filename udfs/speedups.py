"""The speed tricks, in one place: each is small, measured, and safe to switch off.

- :func:`skip_pyodide_probe`: off Pyodide, answer xlwings' per-cell "is this JS null?"
  check without a failing import (xlwings Server, :mod:`addin.server_app`);
- :func:`freeze_startup_objects`: ``gc.freeze()`` once the server has started, so that no
  later collection walks the start-up objects (:mod:`addin.server_app`);
- :func:`gc_paused`: the cyclic garbage collector held off while a large result is turned
  into lists of rows (:mod:`udfs._cells`).

The xlwings patch replaces a function of a pinned xlwings release: it is applied only when
the installed function is the one it was written for (:data:`XLWINGS_VERSION`, the source
hash :data:`IS_JSNULL_SHA256`), and ``tests/test_speedups.py`` fails loudly when the pinned
xlwings changes, so the patch is reviewed rather than silently dropped or misapplied.
Figures: ``benchmarks/bench_excel.py`` (xlwings Server route, 10,000-row calls).
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib.util
import inspect

__all__ = [
    "XLWINGS_VERSION",
    "IS_JSNULL_SHA256",
    "is_jsnull_is_the_pinned_one",
    "skip_pyodide_probe",
    "freeze_startup_objects",
    "gc_paused",
]

#: The xlwings release the patch of ``xlwings.utils.is_jsnull`` was written for (the server
#: extra pins it in pyproject.toml).
XLWINGS_VERSION = "0.37.8"
#: SHA-256 of ``inspect.getsource(xlwings.utils.is_jsnull)`` in that release.
IS_JSNULL_SHA256 = "987fcb50121a01e2164eafa461348184beff60a83301c1d326b675ce4f05f033"


def _source_sha256(function):
    return hashlib.sha256(inspect.getsource(function).encode()).hexdigest()


def is_jsnull_is_the_pinned_one(xlwings_module=None):
    """True when the installed xlwings is :data:`XLWINGS_VERSION` and its
    ``utils.is_jsnull`` has the source the patch was written for."""
    if xlwings_module is None:
        import xlwings as xlwings_module
    import xlwings.utils

    function = getattr(xlwings.utils, "is_jsnull", None)
    if getattr(xlwings_module, "__version__", None) != XLWINGS_VERSION or function is None:
        return False
    if function is _not_jsnull:  # patched already
        return True
    try:
        return _source_sha256(function) == IS_JSNULL_SHA256
    except (OSError, TypeError):  # no source to read: not the function we know
        return False


def skip_pyodide_probe(xlwings_module=None):
    """Off Pyodide, answer xlwings' per-cell "is this JS null?" check without an import.

    xlwings 0.37.8's ``xlwings.utils.is_jsnull`` runs ``from pyodide.ffi import JsNull`` for
    every cell it converts; outside Pyodide that import fails each time after searching
    ``sys.path`` (about 0.1 ms a cell: a second for a 10,000-row range). Outside Pyodide the
    function's answer is always False (its own documentation says so), so this process uses
    that answer directly. Nothing changes where pyodide is importable, nor with an xlwings
    other than the pinned one (see :func:`is_jsnull_is_the_pinned_one`).

    Returns
    -------
    bool
        True when the patch is in place.
    """
    import xlwings.utils

    if importlib.util.find_spec("pyodide") is not None:
        return False
    if not is_jsnull_is_the_pinned_one(xlwings_module):
        return False
    xlwings.utils.is_jsnull = _not_jsnull
    return True


def _not_jsnull(value):
    """``xlwings.utils.is_jsnull`` outside Pyodide: never JS null."""
    return False


def freeze_startup_objects():
    """Keep the start-up objects out of every later garbage collection (``gc.freeze()``).

    After importing xlwings, FastAPI, pydantic and numpy the process holds over 100,000
    container objects that live as long as it does (modules, classes, functions). A full
    collection walks them all (about 65 ms here), and a 10,000-row request allocates enough
    lists (the JSON body, xlwings' conversion, the response) to trigger one. Frozen, they are
    skipped; everything created later is collected as usual. The cost: a reference cycle
    among the start-up objects that later becomes garbage is never reclaimed (such objects
    live for the whole process anyway). Nothing about requests or authentication changes.
    """
    gc.collect()
    gc.freeze()


@contextlib.contextmanager
def gc_paused():
    """Hold off Python's cyclic garbage collector while building a list of rows.

    ``tolist()`` of a 10,000 x 1 array makes 10,000 row lists; each allocation counts towards
    a collection, and the collections it triggers walk every tracked object of the process
    (the caller's input lists included), which took more than half of a 10,000-row call.
    The new lists hold only floats, so they cannot form cycles. Reference counting still
    frees everything as usual; the collector is switched back on (if it was on) at once,
    also when the body raises.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
