"""Reading planners in parallel: a bounded pool of processes, results taken in order.

:func:`read_files` gives each file's outcome, in the order of the files, whichever process
finishes first: the consolidation, its bad files and every message are those of a run in one
process. At most :data:`MAX_JOBS` processes read at once (``compute-lab report --jobs``), so
that their memory together stays within :data:`READ_MEMORY_BUDGET_MB` (each at most
:data:`READER_PEAK_MB`), and at most two files per process are in flight, so the answers
waiting to be taken stay few. The default is also held within the memory the machine has
available.

The processes are forked from the command (no second start-up: the engine and openpyxl are
imported once) and run in their own process group, so Ctrl-C reaches the command alone (an
interrupt sent to a reading process is passed on to it): the command takes it
(:func:`workbook_templates.files.deferred_interrupts`), stops handing out files, lets the
files being read finish and exits 130 with nothing written.
"""

from __future__ import annotations

import concurrent.futures as cf
import gc
import multiprocessing
import os
import signal

from udfs.validation import CommandError

from ..files import check_interrupt
from ..reader import PlannerError

__all__ = ["MAX_JOBS", "READER_PEAK_MB", "READ_MEMORY_BUDGET_MB", "default_jobs", "read_files"]

#: Most resident memory one reading process takes, in MB, whatever planner it is given: the
#: reader's bounds (``workbook_templates.reader`` and ``xlsx_safety``) keep every crafted
#: file of ``benchmarks/bench_reader.py`` under it (each under 150 MB; a planner 70 MB,
#: most of it the imports the processes share with the command), with room to spare.
READER_PEAK_MB = 400
#: Memory the reading processes of one run may take together, in MB: half of a laptop of
#: 8 GB, the least a team member runs the report on.
READ_MEMORY_BUDGET_MB = 4096
#: Most processes reading planners at once (``--jobs``): as many as fit the memory budget at
#: each one's peak (10), more than most machines here have cores.
MAX_JOBS = READ_MEMORY_BUDGET_MB // READER_PEAK_MB
#: Files handed to each process ahead of the one being taken (bounds the answers held).
AHEAD = 2
#: Seconds between looks for Ctrl-C while waiting for a file.
_POLL = 0.1


def default_jobs(files):
    """The default ``--jobs``: the cores this process may use, at most one per file, and no
    more than the memory available holds at :data:`READER_PEAK_MB` each."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    available = _available_mb()
    fit = MAX_JOBS if available is None else available // READER_PEAK_MB
    return max(1, min(cores, files, MAX_JOBS, fit))


def _available_mb():
    """The memory available to new processes, in MB (``MemAvailable``), or None when the
    system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _quiet():
    """A reading process: in its own process group, so a terminal's Ctrl-C reaches the
    command alone; an interrupt sent to it anyway is passed on to the command, which stops
    the run as for its own Ctrl-C."""
    os.setpgrp()
    signal.signal(signal.SIGINT, _pass_on)


def _pass_on(signum, frame):
    os.kill(os.getppid(), signal.SIGINT)


def _attempt(read, path, columns_left):
    """``read(path, columns_left)``, or the PlannerError it raised (sent back as a value)."""
    try:
        return read(path, columns_left)
    except PlannerError as err:
        return err


def read_files(paths, read, jobs, left, per_file, started=None):
    """Yield ``(path, outcome)`` for each of ``paths`` in order: ``read(path, columns_left)``'s
    answer, or its :class:`~workbook_templates.reader.PlannerError`.

    ``left()`` is the number of scenario columns the run has left after the files taken so
    far; a file is given it (in one process exactly, in a pool less ``per_file`` for each
    earlier file still being read, a lower bound: the caller reads a file refused for its
    columns again if the exact count allows it). ``started()`` is called once the reading
    processes are forked (all of them at the first file handed out, as the pool forks them).

    The command's objects are frozen (``gc.freeze``) while the processes are forked: their
    garbage collector then never walks them, so the pages they share with the command stay
    shared instead of being copied into each process.
    """
    paths = list(paths)
    if jobs <= 1 or len(paths) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        # one process (on Windows too, which cannot fork)
        for path in paths:
            check_interrupt()  # Ctrl-C is taken between files
            yield path, _attempt(read, path, left())
        return
    context = multiprocessing.get_context("fork")
    pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_quiet)
    try:
        pending = []  # futures, in file order
        queued = iter(paths)
        for _ in paths:
            while len(pending) < jobs * AHEAD and (nxt := next(queued, None)) is not None:
                bound = left() - per_file * len(pending)
                pending.append((nxt, _submit(pool, not pending, _attempt, read, nxt, bound)))
                if started is not None:  # the processes are forked at the first file
                    started, _ = None, started()
            done_path, future = pending.pop(0)
            yield done_path, _wait(future)
    except cf.process.BrokenProcessPool as exc:
        raise CommandError(
            f"a process reading the planners stopped ({exc}); nothing written"
        ) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _submit(pool, first, *call):
    """``pool.submit(*call)``; the first, which forks the processes, with the command's
    objects frozen."""
    if not first:
        return pool.submit(*call)
    gc.freeze()
    try:
        return pool.submit(*call)
    finally:
        gc.unfreeze()


def _wait(future):
    """The future's result, looking for Ctrl-C while it is computed."""
    while True:
        check_interrupt()
        try:
            return future.result(timeout=_POLL)
        except cf.TimeoutError:
            continue
