"""The speed trick of the Excel functions: :func:`gc_paused`, the cyclic garbage collector
held off while a large result is turned into lists of rows (:mod:`udfs._cells`).

It stays because removing it makes a figure of ``benchmarks/bench_user.py`` (what a user
waits for: the 10,000-row call in xlwings Lite) more than 20% slower; ``docs/architecture.md``
gives the figures.
"""

from __future__ import annotations

import contextlib
import gc

__all__ = ["gc_paused"]


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
