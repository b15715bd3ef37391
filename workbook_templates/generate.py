"""``compute-lab templates``: write the planning workbooks.

Writes ``training-run-planner.xlsx``, ``cluster-sizing.xlsx`` and ``dense-vs-moe.xlsx`` (plain
xlsx: no macros, no external links) into ``--out`` (default ``templates/``), printing each path.
An existing file is never overwritten without ``--force``; the files of one run are written
all or nothing (each is written to a temporary folder in ``--out``, then all are moved into
place together). ``--pdf`` also prints each workbook to PDF through headless LibreOffice.

The module's top level stays light: openpyxl and the builders load when the command runs.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import tempfile
from pathlib import Path

from .files import Staging, check_interrupt, deferred_interrupts, save_workbook

__all__ = ["TEMPLATES", "configure_parser", "run", "build_all", "write_templates"]


def _planner(generated):
    from . import planner

    return planner.build(generated)


def _sizing(generated):
    from . import sizing

    return sizing.build(generated)


def _comparison(generated):
    from . import comparison

    return comparison.build(generated)


#: File name -> the function building its openpyxl Workbook (its module imported when called).
TEMPLATES = {
    "training-run-planner.xlsx": _planner,
    "cluster-sizing.xlsx": _sizing,
    "dense-vs-moe.xlsx": _comparison,
}

DEFAULT_OUT = "templates"


def configure_parser(parser):
    """Add the command's flags to an argparse (sub)parser."""
    parser.add_argument(
        "--out",
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"folder to write the workbooks into (default: {DEFAULT_OUT}/, created if missing)",
    )
    parser.add_argument(
        "--force", action="store_true", help="overwrite workbooks (and PDFs) that already exist"
    )
    parser.add_argument(
        "--pdf",
        action="store_true",
        help="also write a PDF of each workbook through headless LibreOffice",
    )
    parser.add_argument(
        "--own-runs",
        metavar="FILE",
        help="CSV of your completed runs (as estimate --own-runs): filled into the planner's "
        "Our runs sheet, where they pull a blank MFU",
    )
    return parser


def build_all(generated=None):
    """Every template as an openpyxl Workbook: a dict file name -> Workbook."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    return {name: build(generated) for name, build in TEMPLATES.items()}


def write_templates(out=DEFAULT_OUT, force=False, pdf=False, generated=None, own_runs=None):
    """Write every template into ``out``; return the written paths (xlsx, then PDFs).

    All or nothing: every workbook (and PDF) is written into a temporary folder inside
    ``out`` first, then all are moved into place together (:class:`.files.Staging`); on any
    failure every file in ``out`` holds what it held before, and a folder this run created
    is removed again.

    Raises :class:`udfs.validation.CommandError` (one line, naming the flag or file) on a bad
    ``out``, an existing file without ``force``, a folder where a file goes, or a failed
    write. ``own_runs`` (:class:`udfs.own_runs.OwnRuns`) fills the planner's "Our runs" sheet.
    """
    from udfs.validation import CommandError

    if pdf:
        from .recalc import find_soffice

        if find_soffice() is None:
            raise CommandError(
                "--pdf needs LibreOffice (soffice), which is not installed: install "
                "libreoffice-calc-nogui, or leave out --pdf"
            )
    with Staging(force) as staging:
        out = staging.folder(out, "--out")
        if not os.access(out, os.W_OK | os.X_OK):
            raise CommandError(f"--out: folder {out} is not writable")
        targets = [out / name for name in TEMPLATES]
        pdfs = [t.with_suffix(".pdf") for t in targets] if pdf else []
        existing = []
        for p in targets + pdfs:
            if p.is_dir():
                raise CommandError(f"{p} is a folder: it cannot be replaced by a file")
            if os.path.lexists(p):
                existing.append(str(p))
        if existing and not force:
            verb = "already exists" if len(existing) == 1 else "already exist"
            raise CommandError(f"{', '.join(existing)} {verb} (use --force to overwrite)")
        books = build_all(generated)
        if own_runs is not None:
            from .planner.layout import FILENAME
            from .planner.own_runs import fill

            fill(books[FILENAME], own_runs)
        try:
            stage = Path(tempfile.mkdtemp(prefix=".templates-", suffix=".part", dir=out))
        except OSError as exc:
            raise CommandError(
                f"could not write {targets[0]}: {exc.strerror or exc}; nothing written"
            ) from None
        try:
            staged = []
            for target in targets:
                check_interrupt()  # Ctrl-C is taken between workbooks
                path = stage / target.name
                try:
                    _save(books[target.name], path, force)
                except OSError as exc:
                    raise CommandError(
                        f"could not write {target}: {exc.strerror or exc}; nothing written"
                    ) from None
                _ordinary_permissions(path)
                staged.append(path)
            for target, path in zip(targets, staged, strict=True):
                staging.add(path, target)
            if pdf:
                for made in _convert_pdfs(staged, stage):
                    _ordinary_permissions(made)
                    staging.add(made, out / made.name)
            written = staging.commit()
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    return written


def _save(wb, path, force):
    """Save one workbook to ``path``, its staged copy (``force`` applies when it is moved)."""
    del force
    save_workbook(wb, path)  # the zip closed even on a full disk: no finaliser traceback


def _ordinary_permissions(path):
    mask = os.umask(0o022)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def _convert_pdfs(paths, folder):
    from udfs.validation import CommandError

    from .recalc import LibreOfficeError, convert

    try:
        return convert(paths, folder, "pdf")
    except LibreOfficeError as exc:
        check_interrupt()  # Ctrl-C at a terminal reaches LibreOffice too: interrupted, not failed
        raise CommandError(f"--pdf: {exc}") from exc


def run(args):
    """Run ``compute-lab templates``; print each written path; return the exit code.

    Ctrl-C is taken between workbooks and before they move into place; once they are moving
    it waits for the end (:func:`workbook_templates.files.deferred_interrupts`): the
    ``KeyboardInterrupt`` says whether nothing was written or every new file is in place.
    """
    with deferred_interrupts():
        return _run(args)


def _run(args):
    from udfs.validation import CommandError, check_name

    if not str(args.out).strip():  # Path("") is the current folder: never meant
        raise CommandError(f"--out is empty; give a folder, e.g. --out {DEFAULT_OUT}")
    check_name(args.out, "--out")
    from udfs import own_runs

    own = own_runs.read_given(args)
    for path in write_templates(args.out, force=args.force, pdf=args.pdf, own_runs=own):
        print(path)
    return 0
