"""``compute-lab templates``: write the planning workbooks.

Writes ``training-run-planner.xlsx``, ``cluster-sizing.xlsx`` and ``dense-vs-moe.xlsx`` (plain
xlsx: no macros, no external links) into ``--out`` (default ``templates/``), printing each path.
An existing file is never overwritten without ``--force``; each workbook is written to a
temporary file in the same folder and renamed into place. ``--pdf`` also prints each workbook
to PDF through headless LibreOffice.

The module's top level stays light: openpyxl and the builders load when the command runs.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
from pathlib import Path

from .files import place, temp_beside

__all__ = ["TEMPLATES", "configure_parser", "run", "build_all", "write_templates"]

#: File name -> "module:function" building its openpyxl Workbook.
TEMPLATES = {
    "training-run-planner.xlsx": "workbook_templates.planner:build",
    "cluster-sizing.xlsx": "workbook_templates.sizing:build",
    "dense-vs-moe.xlsx": "workbook_templates.comparison:build",
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
    return parser


def _builder(spec):
    import importlib

    module, func = spec.split(":")
    return getattr(importlib.import_module(module), func)


def build_all(generated=None):
    """Every template as an openpyxl Workbook: a dict file name -> Workbook."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    return {name: _builder(spec)(generated) for name, spec in TEMPLATES.items()}


def _command_error(message):
    from udfs.cli import CommandError

    return CommandError(message)


def _check_out(out):
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise _command_error(f"--out: {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _command_error(f"--out: cannot create folder {out}: {exc.strerror}") from exc
    if not os.access(out, os.W_OK):
        raise _command_error(f"--out: folder {out} is not writable")
    return out


def _save(wb, target, force):
    tmp = temp_beside(target)
    try:
        wb.save(tmp)
        place(tmp, target, force)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise


def write_templates(out=DEFAULT_OUT, force=False, pdf=False, generated=None):
    """Write every template into ``out``; return the written paths (xlsx, then PDFs).

    Raises :class:`udfs.cli.CommandError` (one line, naming the flag or file) on a bad
    ``out``, an existing file without ``force`` (nothing is written then) or a failed write
    (without ``force``, the files this run wrote are removed again).
    """
    if pdf:
        from .recalc import find_soffice

        if find_soffice() is None:
            raise _command_error(
                "--pdf needs LibreOffice (soffice), which is not installed: install "
                "libreoffice-calc-nogui, or leave out --pdf"
            )
    out = _check_out(out)
    targets = [out / name for name in TEMPLATES]
    pdfs = [t.with_suffix(".pdf") for t in targets] if pdf else []
    if not force:
        existing = [str(p) for p in targets + pdfs if p.exists()]
        if existing:
            raise _command_error(
                f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''} "
                "(use --force to overwrite)"
            )
    books = build_all(generated)
    written = []
    try:
        for target in targets:
            _save(books[target.name], target, force)
            written.append(target)
        if pdf:
            written += _write_pdfs(targets, force)
    except BaseException as exc:
        if not force:  # leave the folder as it was: remove what this run created
            for path in written:
                path.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _command_error(f"could not write into {out}: {exc.strerror or exc}") from exc
        raise
    return written


def _write_pdfs(paths, force):
    from .recalc import LibreOfficeError, convert

    with tempfile.TemporaryDirectory(prefix=".pdf-", dir=paths[0].parent) as tmpdir:
        try:
            made = convert(paths, tmpdir, "pdf")
        except LibreOfficeError as exc:
            raise _command_error(f"--pdf: {exc}") from exc
        written = []
        for pdf in made:
            target = paths[0].parent / pdf.name
            place(pdf, target, force)
            written.append(target)
    return written


def run(args):
    """Run ``compute-lab templates``; print each written path; return the exit code."""
    for path in write_templates(args.out, force=args.force, pdf=args.pdf):
        print(path)
    return 0
