"""The speed tricks, in one place: each is small, measured, and safe to switch off.

- :func:`freeze_startup_objects`: ``gc.freeze()`` once the server has started, so that no
  later collection walks the start-up objects (:mod:`addin.server_app`);
- :func:`gc_paused`: the cyclic garbage collector held off while a large result is turned
  into lists of rows (:mod:`udfs._cells`).

Each stays because removing it makes a figure of ``benchmarks/bench_user.py`` (what a user
waits for) more than 20% slower; ``docs/architecture.md`` gives the figures.
"""

from __future__ import annotations

import contextlib
import gc

__all__ = ["freeze_startup_objects", "gc_paused"]


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
