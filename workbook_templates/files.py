"""Writing output files without losing any: a temporary file beside the target, then a move.

:func:`temp_beside` makes the temporary file in the target's folder (so the move is a rename
on one file system) with ordinary permissions; :func:`place` moves it into place atomically
and, unless forced, never over an existing file, even one that appeared a moment ago.

:class:`Staging` does the same for all the files of one run, all or nothing: every file is
written to its temporary first, and only then are they moved into place; if any move fails,
the files already moved are taken back (an overwritten file is restored from a hard link kept
aside), so on any failure the folder holds what it held before, with no temporary file and
no folder the run created. The moves (and a roll-back) run with Ctrl-C held back until they
end, so an interrupt never leaves some files new and others old.

:func:`deferred_interrupts` turns Ctrl-C into one ``KeyboardInterrupt`` whose text says what
the run left: :data:`NOTHING_WRITTEN` or :data:`ALL_WRITTEN`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path

from udfs.validation import CommandError

__all__ = [
    "temp_beside",
    "place",
    "Staging",
    "save_workbook",
    "deferred_interrupts",
    "check_interrupt",
    "NOTHING_WRITTEN",
    "ALL_WRITTEN",
]

#: What a run interrupted by Ctrl-C before its outputs moved into place left: the text of its
#: ``KeyboardInterrupt``, after "interrupted; " on the command's one line.
NOTHING_WRITTEN = "nothing written: every old file is as it was"
#: What a run interrupted once its outputs were all in place left (the moves are never cut).
ALL_WRITTEN = "the new files were already all in place"

#: The state of the running :func:`deferred_interrupts` block (None outside one): the Ctrl-C
#: count and whether a :class:`Staging` has moved its files into place.
_INTERRUPTS = None


def temp_beside(target):
    """A new, empty temporary file in ``target``'s folder, readable as the umask allows."""
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{_short(target.name)}.", suffix=".part", dir=target.parent)
    os.close(fd)
    mask = os.umask(0o022)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes 0600; these files are meant to be shared
    return Path(tmp)


def _short(name):
    """``name`` cut to 200 bytes of UTF-8: a temporary or kept-aside name beside a target whose
    own name is up to 255 bytes stays a name the file system allows."""
    return name.encode("utf-8", "surrogateescape")[:200].decode("utf-8", "ignore")


def place(tmp, target, force):
    """Move ``tmp`` to ``target``: atomically, and without ``force`` never over a file.

    Raises :class:`udfs.validation.CommandError` (and removes ``tmp``) when ``target`` exists.
    """
    tmp, target = Path(tmp), Path(target)
    if force:
        os.replace(tmp, target)
        return
    exists = CommandError(f"{target} already exists (use --force to overwrite)")
    try:
        os.link(tmp, target)  # fails if target exists, even if it appeared just now
    except FileExistsError:
        tmp.unlink()
        raise exists from None
    except OSError:  # a file system without hard links
        if target.exists():
            tmp.unlink()
            raise exists from None
        os.replace(tmp, target)
        return
    tmp.unlink()


def save_workbook(wb, path):
    """Save the openpyxl workbook ``wb`` to ``path``, its zip closed whatever happens, each
    formula cell written by :func:`.sheetkit.put_formula` with its computed value saved.

    openpyxl's own ``save`` leaves the zip open when a write fails (a full disk): the zip's
    finaliser then retries the write and prints ``Exception ignored in ZipFile.__del__`` and
    a traceback after our one-line message. Here the file and the zip are closed in order,
    and an error closing them is the error raised (an ``OSError``, turned into one line by
    the caller).
    """
    import datetime
    import zipfile

    from openpyxl.writer.excel import ExcelWriter

    from .sheetkit import SavedValuesArchive

    now = datetime.datetime.now(tz=datetime.UTC).replace(tzinfo=None)
    wb.properties.modified = now  # as openpyxl's save does
    with open(path, "wb") as fh:
        archive = zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True)
        try:
            ExcelWriter(wb, SavedValuesArchive(archive, wb)).write_data()
        except BaseException:
            with contextlib.suppress(Exception):
                archive.close()  # writes the central directory; may fail again on a full disk
            raise
        archive.close()


@contextlib.contextmanager
def deferred_interrupts():
    """Within the block, Ctrl-C (SIGINT) is noted, and :func:`check_interrupt` raises it.

    Python runs a signal handler between any two bytecodes, finalisers included; a
    ``KeyboardInterrupt`` raised inside one (a ``ZipFile.__del__`` while reading planners) is
    printed as "Exception ignored" and lost, and the run went on to replace its outputs.
    Here the first Ctrl-C only sets a flag, turned into ``KeyboardInterrupt`` at the next
    safe point (between files, before each output is written and before they are moved into
    place); a second Ctrl-C interrupts at once. A Ctrl-C noted once the outputs were moved
    into place (it waits for the moves) is raised when the block ends.

    The ``KeyboardInterrupt`` leaving the block says what the run left: :data:`ALL_WRITTEN`
    when its :class:`Staging` had moved every file into place, else :data:`NOTHING_WRITTEN`.
    The previous handler is restored on the way out; outside the main thread, or when SIGINT
    is ignored, nothing changes.
    """
    global _INTERRUPTS
    if threading.current_thread() is not threading.main_thread() or _INTERRUPTS is not None:
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield
        return
    state = {"count": 0, "written": False, "raised": False}

    def note(signum, frame):
        state["count"] += 1
        if state["count"] > 1:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, note)
    _INTERRUPTS = state
    try:
        yield
    except KeyboardInterrupt as exc:
        if not exc.args:
            exc.args = (ALL_WRITTEN if state["written"] else NOTHING_WRITTEN,)
        raise
    finally:
        _INTERRUPTS = None
        signal.signal(signal.SIGINT, previous)
    if state["count"] and not state["raised"]:  # noted, never raised (the outputs in place)
        raise KeyboardInterrupt(ALL_WRITTEN if state["written"] else NOTHING_WRITTEN)


def check_interrupt():
    """Raise ``KeyboardInterrupt`` if Ctrl-C was pressed in the :func:`deferred_interrupts`
    block (a no-op outside one)."""
    if _INTERRUPTS is not None and _INTERRUPTS["count"]:
        _INTERRUPTS["raised"] = True
        raise KeyboardInterrupt


@contextlib.contextmanager
def _ctrl_c_held():
    """Within the block, Ctrl-C is only noted; when the block ends, a noted Ctrl-C goes to the
    handler that was there before (under :func:`deferred_interrupts`, counted; otherwise a
    ``KeyboardInterrupt`` raised then). The moves of :meth:`Staging.commit` and their roll-back
    are never cut halfway. Python runs signal handlers in the main thread, so the handler
    swapped in holds Ctrl-C off whichever thread the signal reaches (numpy's BLAS threads
    too, which blocking the signal in the main thread would not cover). Only in the main
    thread, and when Ctrl-C has a Python handler."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # ignored, or the system's default: nothing of ours to hold
        yield
        return
    pressed = []
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        previous(signal.SIGINT, None)


def _reason(exc):
    return exc.strerror or str(exc) or type(exc).__name__


class Staging:
    """The output files of one run, staged to temporaries and moved into place together.

    Use as a context manager; :meth:`new` gives the temporary path to write each target to
    (or :meth:`add` an already written file in the target's folder), :meth:`commit` moves
    them all into place. Leaving the block without a commit, by an exception or otherwise,
    removes every temporary file and every folder :meth:`folder` created.

    Parameters
    ----------
    force : bool
        Replace existing files; without it an existing target refuses the whole run.
    """

    def __init__(self, force=False):
        self.force = force
        self.pairs = []  # (temporary, target)
        self.created = []  # folders this run made, outermost first
        self.committed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.committed:
            self.discard()
        return False

    def folder(self, path, flag):
        """Make folder ``path`` (and missing parents), remembered so a failure removes them.

        Raises :class:`udfs.validation.CommandError` naming ``flag`` when it cannot be made.
        """
        path = Path(path)
        missing = []
        p = path
        while not p.exists() and not p.is_symlink() and p != p.parent:
            missing.append(p)
            p = p.parent
        if p.exists() and not p.is_dir():
            raise CommandError(f"{flag}: {p} is a file, not a folder")
        for d in reversed(missing):
            try:
                d.mkdir()
            except OSError as exc:
                raise CommandError(f"{flag}: cannot create folder {d}: {_reason(exc)}") from None
            self.created.append(d)
        if not path.is_dir():
            raise CommandError(f"{flag}: {path} is not a folder")
        return path

    def new(self, target):
        """A new temporary file beside ``target``, to write it to."""
        target = Path(target)
        try:
            tmp = temp_beside(target)
        except OSError as exc:
            raise CommandError(
                f"could not write {target}: {_reason(exc)}; nothing written"
            ) from None
        self.pairs.append((tmp, target))
        return tmp

    def add(self, tmp, target):
        """Stage an already written file ``tmp`` (in ``target``'s folder) for ``target``."""
        self.pairs.append((Path(tmp), Path(target)))

    def check(self):
        """Refuse (nothing moved) when a target is a folder, or exists without ``force``."""
        existing = []
        for _, target in self.pairs:
            if target.is_dir():
                raise CommandError(
                    f"{target} is a folder: it cannot be replaced by a file; nothing written"
                )
            if os.path.lexists(target):
                existing.append(str(target))
        if existing and not self.force:
            verb = "already exists" if len(existing) == 1 else "already exist"
            raise CommandError(f"{', '.join(existing)} {verb} (use --force to overwrite)")

    def commit(self):
        """Move every staged file into place, all or nothing; return the targets.

        Raises :class:`udfs.validation.CommandError` (one line, naming the file) on failure; every
        target then holds what it held before.
        """
        self.check()
        check_interrupt()  # a Ctrl-C while staging: nothing is moved
        try:
            with _ctrl_c_held():  # all moved, or all rolled back: a Ctrl-C waits for the end
                self._move_all()
                if _INTERRUPTS is not None:
                    _INTERRUPTS["written"] = True
        except KeyboardInterrupt as exc:  # pressed while the files moved, raised once moved
            if self.committed and not exc.args:
                exc.args = (ALL_WRITTEN,)
            raise
        return [t for _, t in self.pairs]

    def _move_all(self):
        done = []  # (target, kept copy of what it held, or None when it was new)
        target = None
        try:
            for tmp, target in self.pairs:
                kept = None
                if self.force and os.path.lexists(target):
                    kept = _keep_aside(target)
                try:
                    if kept is not None:
                        os.replace(tmp, target)
                    else:
                        place(tmp, target, force=False)
                except BaseException:
                    if kept is not None:
                        with contextlib.suppress(OSError):
                            kept.unlink()
                    raise
                done.append((target, kept))
        except BaseException as exc:  # an interrupt too: leave every target as it was
            failed = self._roll_back(done)
            if not isinstance(exc, OSError | CommandError):
                raise
            reason = exc if isinstance(exc, CommandError) else _reason(exc)
            if failed:
                raise CommandError(
                    f"could not write {target}: {reason}; and could not restore {', '.join(failed)}"
                ) from None
            raise CommandError(f"could not write {target}: {reason}; nothing written") from None
        for _, kept in done:
            if kept is not None:
                with contextlib.suppress(OSError):
                    kept.unlink()
        self.committed = True

    def _roll_back(self, done):
        failed = []
        for target, kept in reversed(done):
            try:
                if kept is not None:
                    os.replace(kept, target)
                else:
                    target.unlink()
            except OSError:
                failed.append(str(target))
        return failed

    def discard(self):
        """Remove every temporary file and every folder this run created (when empty)."""
        for tmp, _ in self.pairs:
            with contextlib.suppress(OSError):
                tmp.unlink()
        for d in reversed(self.created):
            with contextlib.suppress(OSError):
                d.rmdir()


def _keep_aside(target):
    """A hard link (else a copy) of ``target`` beside it, to restore it from on failure."""
    target = Path(target)
    for _ in range(100):
        kept = target.with_name(f".{_short(target.name)}.{secrets.token_hex(4)}.old")
        try:
            os.link(target, kept, follow_symlinks=False)
            return kept
        except FileExistsError:
            continue
        except OSError:  # no hard links here: a copy
            if stat.S_ISLNK(os.lstat(target).st_mode):
                os.symlink(os.readlink(target), kept)
            else:
                shutil.copy2(target, kept)
            return kept
    raise FileExistsError(f"no free name beside {target}")
