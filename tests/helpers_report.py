"""Hostile files and subprocess runs for the reader and report tests.

``xml_flood`` writes a small .xlsx whose extra part expands to a flood of ``<a/>`` elements
(streamed, never held in memory); ``encrypted_workbook`` a password-protected workbook's
container (an OLE compound file holding ``EncryptionInfo`` and ``EncryptedPackage``, as
Excel writes it); ``peak_rss_mb`` runs a command in a fresh measuring process and returns the
command's peak resident memory (``RUSAGE_CHILDREN`` of that process, which has no other
child); ``run_report`` runs ``compute-lab report`` in a subprocess, so that its real stderr
(warnings included) is what the test sees.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

#: ``compute-lab`` run by the interpreter running the tests.
CLI = [sys.executable, "-c", "import sys; from compute_lab.cli import main; sys.exit(main())"]

_MEASURE = """
import json, resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                  "peak_mb": peak_kb / 1024}))
"""


def peak_rss_mb(cmd, cwd=None):
    """Run ``cmd``; return (exit code, stdout, stderr, its peak RSS in MB).

    The command is the only child of a fresh measuring process, whose ``RUSAGE_CHILDREN``
    ``ru_maxrss`` (kB on Linux) is therefore the command's own peak, whatever else the test
    process ran before (LibreOffice, say).
    """
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, *map(str, cmd)],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
    )
    out = json.loads(proc.stdout)
    return out["rc"], out["stdout"], out["stderr"], out["peak_mb"]


def run_report(*args, cwd=None):
    """``compute-lab report ARGS`` in a subprocess: (exit code, stdout, stderr)."""
    proc = subprocess.run(
        [*CLI, "report", *map(str, args)], capture_output=True, text=True, cwd=cwd, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


def xml_flood(source, target, expanded_bytes, part="customXml/item1.xml"):
    """Copy the .xlsx ``source`` to ``target`` plus ``part``: ``<root>`` and ``<a/>`` elements
    up to about ``expanded_bytes``, streamed into the zip (deflated: a few hundred kB)."""
    chunk = b"<a/>" * (1 << 18)  # 1 MiB
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            z.writestr(info, zin.read(info.filename))
        with z.open(part, "w", force_zip64=True) as fh:
            fh.write(b"<root>")
            written = 0
            while written < expanded_bytes:
                fh.write(chunk)
                written += len(chunk)
            fh.write(b"</root>")
    return Path(target)


def _dir_entry(name, kind, start, size, child=-1, right=-1):
    encoded = (name + "\0").encode("utf-16-le") if name else b""
    return (
        encoded.ljust(64, b"\0")
        + struct.pack("<HBB", len(encoded), kind, 1)  # name length, type, colour (black)
        + struct.pack("<iii", -1, right, child)  # left, right sibling, child
        + b"\0" * 16  # CLSID
        + struct.pack("<I", 0)  # state bits
        + b"\0" * 16  # creation and modification times
        + struct.pack("<iI", start, size)
        + b"\0" * 4
    )


def encrypted_workbook(target, seed=b"compute-lab"):
    """Write the container of a password-protected .xlsx: an OLE compound file (version 3,
    512-byte sectors) with the ``EncryptionInfo`` and ``EncryptedPackage`` streams, as Excel
    writes one (the package bytes here are pseudo-random: nobody can open it without the
    password anyway)."""
    end, free, fat_sector = -2, -1, -3
    info = (struct.pack("<HHI", 4, 4, 0x40) + b"<encryption/>").ljust(4096, b"\0")
    package = b"".join(hashlib.sha256(seed + bytes([i])).digest() for i in range(256))  # 8 kB
    n_info, n_package = len(info) // 512, len(package) // 512
    fat = [fat_sector, end]  # sector 0: the FAT itself; sector 1: the directory
    first_info = len(fat)
    fat += [first_info + i + 1 for i in range(n_info - 1)] + [end]
    first_package = len(fat)
    fat += [first_package + i + 1 for i in range(n_package - 1)] + [end]
    fat += [free] * (128 - len(fat))
    header = (
        bytes.fromhex("d0cf11e0a1b11ae1")
        + b"\0" * 16
        + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
        + b"\0" * 6
        + struct.pack("<IIiIIiIiI", 0, 1, 1, 0, 4096, end, 0, end, 0)
        + struct.pack("<i", 0)
        + struct.pack("<i", free) * 108
    )
    directory = (
        _dir_entry("Root Entry", 5, end, 0, child=1)
        + _dir_entry("EncryptionInfo", 2, first_info, len(info), right=2)
        + _dir_entry("EncryptedPackage", 2, first_package, len(package))
        + _dir_entry("", 0, 0, 0)
    )
    data = header + struct.pack("<128i", *fat) + directory + info + package
    Path(target).write_bytes(data)
    return Path(target)


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree(folder):
    """Every file under ``folder`` (hidden ones too) with its SHA-256: what a run left."""
    folder = Path(folder)
    return {
        str(p.relative_to(folder)): digest(p) if p.is_file() else "<dir>"
        for p in sorted(folder.rglob("*"))
    }


def can_make_immutable(path):
    """True if ``chattr +i`` works here (root on ext4/xfs): a real, unwritable file."""
    if os.geteuid() != 0:
        return False
    probe = Path(path)
    probe.write_text("probe")
    try:
        ok = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    except FileNotFoundError:
        return False
    if ok:
        subprocess.run(["chattr", "-i", str(probe)], check=True)
    probe.unlink()
    return ok


def immutable(path, on=True):
    subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=True)


_DEFINED_NAME = re.compile(rb'(<definedName name="([^"]+)"[^>]*>)([^<]*)(</definedName>)')


def redefine_names(source, target, rewrite, sheet_titles=None):
    """Copy the .xlsx ``source`` to ``target`` with defined names rewritten.

    ``rewrite(name, reference)`` returns the new reference text (as Excel writes it, e.g.
    ``'Inputs'!$D$4:$K$4``), or None to keep it. ``sheet_titles`` ({old: new}) renames sheets
    in ``xl/workbook.xml`` too (the cells are not touched: the reader reads by names).
    """

    def one(m):
        new = rewrite(m.group(2).decode(), m.group(3).decode())
        if new is None:
            return m.group(0)
        return m.group(1) + new.replace("&", "&amp;").replace("<", "&lt;").encode() + m.group(4)

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "xl/workbook.xml":
                data = _DEFINED_NAME.sub(one, data)
                for old, new in (sheet_titles or {}).items():
                    escaped = new.replace("&", "&amp;").replace('"', "&quot;")
                    data = data.replace(f'name="{old}"'.encode(), f'name="{escaped}"'.encode())
            z.writestr(info, data)
    return Path(target)


_ROW_RANGE = re.compile(r"^(?P<sheet>.*!)\$[A-Z]+\$(?P<row>\d+):\$[A-Z]+\$(?P=row)$")


def spread_names(source, target, columns=None, last_row=None):
    """A planner whose one-row defined names are stretched: each spans ``columns`` (e.g.
    ``("A", "XFD")``), and/or ``scenario_name`` moves to row ``last_row`` (the sheets are
    untouched): the crafted files of issue 22 rows 2 and 4."""

    def rewrite(name, ref):
        m = _ROW_RANGE.match(ref)
        if m is None:
            return None
        first, last = columns or re.findall(r"\$([A-Z]+)\$", ref)
        row = last_row if (last_row and name == "scenario_name") else m.group("row")
        return f"{m.group('sheet')}${first}${row}:${last}${row}"

    return redefine_names(source, target, rewrite)


def long_text(source, target, marker, chars):
    """Copy ``source`` with the text ``marker`` (in the part that holds it: openpyxl writes
    inline strings) replaced by ``chars`` x's, streamed into the zip: a 30-million-character
    name is a file of about 30 kB more."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if marker.encode() not in data:
                z.writestr(info, data)
                continue
            head, tail = data.split(marker.encode(), 1)
            with z.open(info.filename, "w", force_zip64=True) as fh:
                fh.write(head)
                chunk = b"x" * (1 << 20)
                left = chars
                while left > 0:
                    fh.write(chunk[: min(left, len(chunk))])
                    left -= len(chunk)
                fh.write(tail)
    return Path(target)


_RECALCULATED = {}


def recalculated_values(path):
    """The hand-off at ``path`` recalculated by LibreOffice (its totals are SUBTOTAL formulas,
    issue 18), loaded with the values: an openpyxl Workbook (cached per path)."""
    from pathlib import Path

    import openpyxl

    from workbook_templates.recalc import recalculate

    path = Path(path)
    if path not in _RECALCULATED:
        (done,) = recalculate([path], path.parent / f"recalculated-{path.stem}")
        _RECALCULATED[path] = done
    return openpyxl.load_workbook(_RECALCULATED[path], data_only=True)


#: ``python -c READY report ...``: compute-lab, saying "ready" on stderr once everything is
#: imported (Ctrl-C during Python's own start-up is Python's: a traceback and status -2).
READY = (
    "import sys; from compute_lab.cli import main, _commands; _commands(); "
    "import workbook_templates.report; print('ready', file=sys.stderr, flush=True); "
    "sys.exit(main())"
)


def distinct_planners(base, folder, n):
    """``n`` planners differing in their first scenario's name, by rewriting ``base``'s zip."""
    with zipfile.ZipFile(base) as z:
        parts = {i.filename: z.read(i.filename) for i in z.infolist()}
    paths = []
    for i in range(n):
        path = folder / f"team-{i:03d}.xlsx"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in parts.items():
                z.writestr(name, data.replace(b"NAME0000", f"NAME{i:04d}".encode()))
        paths.append(path)
    return paths


def team_planners(template, folder, n):
    """``n`` distinct filled planners in ``folder`` (:func:`distinct_planners` of one planner
    with the two report-fixture plans typed in, its first scenario named NAME0000)."""
    from test_report_fixtures import PLAN_A, PLAN_B, fill

    base = fill(template, folder / "base.xlsx", [dict(PLAN_A, scenario_name="NAME0000"), PLAN_B])
    paths = distinct_planners(base, folder, n)
    base.unlink()
    return paths


def named_cells(wb):
    """{defined name: the value of its cell} of an openpyxl workbook (a name of a range of
    cells: the tuple of their values)."""
    out = {}
    for name, dn in wb.defined_names.items():
        for sheet, ref in dn.destinations:
            found = wb[sheet][ref.replace("$", "")]
            out[name] = (tuple(c.value for row in found for c in row)
                         if isinstance(found, tuple) else found.value)  # fmt: skip
    return out
