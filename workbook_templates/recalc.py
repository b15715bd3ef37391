"""Headless LibreOffice: recalculate workbooks, or convert them to PDF; Gnumeric as a check.

LibreOffice is the real spreadsheet engine the tests check the templates with, and what
``compute-lab templates --pdf`` prints through. Three traps are handled here (see the
project notes): xlsx files are not recalculated on load unless the profile says so, so each
run gets a fresh profile with ``OOXMLRecalcMode`` = 0 (always); ``soffice`` exits 0 even when
it could not load a file, so every expected output is checked; and parallel runs must not
share a profile, so each run has its own.

Gnumeric (``ssconvert --recalc``, Debian package ``gnumeric``) is the third engine the tests
recalculate every workbook with (:func:`recalculate_gnumeric`), to check that the formulas
compute the same outside Excel and LibreOffice. Its trap: ``ssconvert`` given a file it cannot
read as xlsx imports it as text and exits 0, so the importer is named (``-I``) and the exit
status and every output are checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

__all__ = [
    "LibreOfficeError",
    "find_soffice",
    "recalculate",
    "convert",
    "GnumericError",
    "find_ssconvert",
    "recalculate_gnumeric",
]

_REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
           xmlns:xs="http://www.w3.org/2001/XMLSchema"
           xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop>
</item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
  <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop>
</item>
</oor:items>
"""


class LibreOfficeError(RuntimeError):
    """LibreOffice is missing, failed, or did not write an expected file."""


def find_soffice():
    """Path of the ``soffice`` program, or None."""
    for name in ("soffice", "libreoffice"):
        path = shutil.which(name)
        if path:
            return path
    return None


def convert(paths, outdir, target="xlsx", timeout=300):
    """Convert ``paths`` with headless LibreOffice into ``outdir``; return the new paths.

    ``target`` is a LibreOffice filter spec: ``"xlsx"`` recalculates every formula and saves
    the values (forced recalculation on load), ``"pdf"`` prints. One soffice call for all
    files; a fresh, private profile per call.
    """
    soffice = find_soffice()
    if soffice is None:
        raise LibreOfficeError(
            "LibreOffice (soffice) is not installed: install libreoffice-calc-nogui"
        )
    paths = [Path(p).resolve() for p in paths]
    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    ext = target.split(":")[0]
    with tempfile.TemporaryDirectory(prefix="compute-lab-lo-") as profile:
        user = Path(profile, "user")
        user.mkdir()
        (user / "registrymodifications.xcu").write_text(_REGISTRY, encoding="utf-8")
        cmd = [
            soffice,
            f"-env:UserInstallation={Path(profile).as_uri()}",
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--convert-to",
            target,
            "--outdir",
            str(outdir),
            *map(str, paths),
        ]
        env = dict(os.environ, HOME=profile)
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise LibreOfficeError(f"LibreOffice took over {timeout} s converting {paths}") from exc
    outputs = [outdir / (p.stem + "." + ext) for p in paths]
    missing = [str(p) for p in outputs if not p.exists()]
    if missing:
        said = " ".join((proc.stderr.strip() or proc.stdout.strip()).split())  # one line
        raise LibreOfficeError(
            f"LibreOffice did not write {', '.join(missing)} (exit {proc.returncode}): {said[:300]}"
        )
    return outputs


def recalculate(paths, outdir, timeout=300):
    """Recalculated copies of the xlsx ``paths`` in ``outdir`` (cached values filled in)."""
    return convert(paths, outdir, "xlsx", timeout)


class GnumericError(RuntimeError):
    """Gnumeric's ssconvert is missing, failed, or did not write an expected file."""


def find_ssconvert():
    """Path of Gnumeric's ``ssconvert`` program, or None."""
    return shutil.which("ssconvert")


def recalculate_gnumeric(paths, outdir, timeout=300):
    """Copies of the xlsx ``paths`` in ``outdir``, every formula recalculated by Gnumeric.

    One ``ssconvert --recalc`` per file (it converts one file at a time), with the xlsx
    importer and the Excel 2010 exporter named, in a private HOME; ``timeout`` is per file.
    """
    ssconvert = find_ssconvert()
    if ssconvert is None:
        raise GnumericError("Gnumeric (ssconvert) is not installed: install gnumeric")
    outdir = Path(outdir).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    outputs = []
    with tempfile.TemporaryDirectory(prefix="compute-lab-gnumeric-") as home:
        env = dict(os.environ, HOME=home)
        for path in map(Path, paths):
            out = outdir / path.name
            out.unlink(missing_ok=True)
            cmd = [ssconvert, "-I", "Gnumeric_Excel:xlsx", "-T", "Gnumeric_Excel:xlsx2",
                   "--recalc", str(path.resolve()), str(out)]  # fmt: skip
            try:
                proc = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False
                )
            except subprocess.TimeoutExpired as exc:
                raise GnumericError(f"Gnumeric took over {timeout} s converting {path}") from exc
            if proc.returncode != 0 or not out.exists():
                said = " ".join((proc.stderr.strip() or proc.stdout.strip()).split())[-300:]
                raise GnumericError(
                    f"Gnumeric did not write {out} (exit {proc.returncode}): {said}"
                )
            outputs.append(out)
    return outputs
