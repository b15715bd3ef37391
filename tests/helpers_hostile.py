"""Crafted planners, made from a real generated planner as an attacker would make them: the
reader tests and ``benchmarks/bench_reader.py`` build their hostile files with these.

Each function copies the .xlsx ``source`` to ``target`` with some parts rewritten and returns
``target``. The Inputs sheet of a planner is ``xl/worksheets/sheet2.xml`` (openpyxl, Excel and
LibreOffice number the parts in sheet order); its row 13 holds the accelerators.
"""

from __future__ import annotations

import re
import warnings
import zipfile
from pathlib import Path

INPUTS = "xl/worksheets/sheet2.xml"
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def rewrite(source, target, edits=None, extra=None, duplicate=None):
    """Copy ``source`` with ``edits`` ({part: bytes -> bytes}) applied, ``extra`` parts
    ({part: bytes, or an iterable of byte chunks, streamed}) added, and ``duplicate``
    ({part: bytes}) written as a second zip entry of the same name."""
    edits, extra, duplicate = edits or {}, extra or {}, duplicate or {}
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename in edits:
                data = edits[info.filename](data)
            z.writestr(info.filename, data)
        for name, data in extra.items():
            with z.open(name, "w", force_zip64=True) as fh:
                for chunk in [data] if isinstance(data, bytes) else data:
                    fh.write(chunk)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # zipfile's "Duplicate name"
            for name, data in duplicate.items():
                z.writestr(name, data)
    return Path(target)


def _elements(n, tag=b"<x/>", per_chunk=1 << 16):
    while n > 0:
        k = min(n, per_chunk)
        yield tag * k
        n -= k


def aliased_sheets(source, target, sheets, pad_elements=0):
    """``sheets`` sheet entries in ``xl/workbook.xml`` whose relationships all lead to the
    Inputs sheet's part, the planner's input names spread over them (so every entry holds
    named cells); the part padded with ``pad_elements`` ``<x/>`` elements."""

    def book(data):
        entries = b"".join(
            f'<sheet name="Inputs {i}" sheetId="{900 + i}" r:id="rIdAlias{i}"/>'.encode()
            for i in range(2, sheets + 1)
        )
        data = data.replace(b"</sheets>", entries + b"</sheets>")
        k = iter(range(10**6))

        def spread(m):
            i = next(k) % sheets + 1
            return m.group(1) + (b"'Inputs'!" if i == 1 else f"'Inputs {i}'!".encode())

        return re.sub(rb"(<definedName name=\"[a-z_]+\">)'Inputs'!", spread, data)

    def rels(data):
        more = b"".join(
            f'<Relationship Type="{_REL}/worksheet" Target="/{INPUTS}" Id="rIdAlias{i}"/>'.encode()
            for i in range(2, sheets + 1)
        )
        return data.replace(b"</Relationships>", more + b"</Relationships>")

    def pad(data):
        return data.replace(b"</worksheet>", b"<x/>" * pad_elements + b"</worksheet>")

    edits = {"xl/workbook.xml": book, "xl/_rels/workbook.xml.rels": rels, INPUTS: pad}
    return rewrite(source, target, edits)


def wide_row(source, target, cells, row=13):
    """Row ``row`` of the Inputs sheet (inside the named cells) followed by ``cells`` empty
    ``<c/>`` elements."""

    def edit(data):
        head, tail = data.split(f'<row r="{row}"'.encode(), 1)
        body, rest = tail.split(b"</row>", 1)
        return head + f'<row r="{row}"'.encode() + body + b"<c/>" * cells + b"</row>" + rest

    return rewrite(source, target, {INPUTS: edit})


def many_names(source, target, names):
    """``names`` more defined names in ``xl/workbook.xml``, each a constant."""

    def edit(data):
        more = b"".join(f'<definedName name="n{i}">1</definedName>'.encode() for i in range(names))
        return data.replace(b"</definedNames>", more + b"</definedNames>")

    return rewrite(source, target, {"xl/workbook.xml": edit})


def flooded_parts(source, target, parts, elements):
    """``parts`` extra parts ``customXml/floodN.xml``, each ``elements`` ``<x/>`` in a root."""
    extra = {
        f"customXml/flood{i}.xml": [b"<r>", *_elements(elements), b"</r>"] for i in range(parts)
    }
    return rewrite(source, target, extra=extra)


def with_shared_string(source, target, si_body, cell="D4"):
    """The Inputs sheet's ``cell`` (an inline string) read from a shared strings part whose
    one ``<si>`` holds ``si_body`` (bytes), declared in the manifest and relationships."""

    def sheet(data):
        pattern = f'<c r="{cell}" ([^>]*)t="inlineStr"><is>.*?</is></c>'.encode()
        new = f'<c r="{cell}" \\1t="s"><v>0</v></c>'.encode()
        return re.sub(pattern, new, data, count=1)

    def types(data):
        override = (
            b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
            b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
        )
        return data.replace(b"</Types>", override + b"</Types>")

    def rels(data):
        rel = f'<Relationship Type="{_REL}/sharedStrings" Target="sharedStrings.xml" Id="rIdS"/>'
        return data.replace(b"</Relationships>", rel.encode() + b"</Relationships>")

    table = f'<sst xmlns="{_MAIN}" count="1" uniqueCount="1"><si>'.encode() + si_body
    edits = {INPUTS: sheet, "[Content_Types].xml": types, "xl/_rels/workbook.xml.rels": rels}
    return rewrite(source, target, edits, {"xl/sharedStrings.xml": table + b"</si></sst>"})


def replaced(source, target, part, old, new, count=1):
    """``old`` replaced by ``new`` in ``part`` (``count`` times; -1: every time). ``old`` is
    bytes or a compiled pattern (``new`` then may name its groups, ``\\1``); it must occur, so
    that a planner laid out anew fails the test instead of leaving the file untouched."""

    def edit(data):
        if isinstance(old, re.Pattern):
            changed, n = old.subn(new, data, count=max(count, 0))
        else:
            n = data.count(old)
            changed = data.replace(old, new, count)
        assert n, f"{part} holds no {old!r}"
        return changed

    return rewrite(source, target, {part: edit})


def cell_value(source, target, text, cell="D13"):
    """The Inputs sheet's number cell ``cell`` saved as ``<v>text</v>``."""
    pattern = f'(<c r="{cell}" [^>]*>)<v>[^<]*</v>'.encode()

    def edit(data):
        new, n = re.subn(pattern, lambda m: m.group(1) + b"<v>" + text + b"</v>", data)
        assert n == 1, cell
        return new

    return rewrite(source, target, {INPUTS: edit})


def hidden_row(source, target, value=b"8192", cell="D13"):
    """A copy of the Inputs sheet's rows up to ``cell``'s, ``cell`` saved as ``value``,
    placed in ``<sheetPr><extLst><ext>`` before ``sheetData`` (which keeps its own rows, the
    ones a spreadsheet shows)."""
    row = int(cell.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))

    def edit(data):
        rows = data.split(b"<sheetData>", 1)[1].split(f'<row r="{row + 1}"'.encode(), 1)[0]
        pattern = f'(<c r="{cell}" [^>]*>)<v>[^<]*</v>'.encode()
        copy, n = re.subn(pattern, lambda m: m.group(1) + b"<v>" + value + b"</v>", rows)
        assert n == 1, cell
        ext = b'<extLst><ext uri="{00000000-0000-0000-0000-000000000000}">' + copy
        return data.replace(b"</sheetPr>", ext + b"</ext></extLst></sheetPr>", 1)

    return rewrite(source, target, {INPUTS: edit})


def duplicate_entry(source, target, part=INPUTS, old=b"<v>2048</v>", new=b"<v>8192</v>"):
    """A second zip entry named ``part``, its ``old`` replaced by ``new``."""
    with zipfile.ZipFile(source) as z:
        data = z.read(part)
    return rewrite(source, target, duplicate={part: data.replace(old, new, 1)})
