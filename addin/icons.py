"""The add-in's ribbon and task pane icons, drawn in code (standard library only).

``python -m addin.icons`` rewrites ``addin/server/static/images/icons/compute-lab-N.png`` for
every size the manifest names (16, 32, 64, 80 pixels): a dark-blue square with three rising
bars (a capacity chart). Deterministic, so the committed files can be checked against it.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

#: Icon sizes the manifest refers to (IconUrl 32, HighResolutionIconUrl 64, ribbon 16/32/80).
SIZES = (16, 32, 64, 80)
ICON_DIR = Path(__file__).resolve().parent / "server" / "static" / "images" / "icons"

_BACKGROUND = (23, 55, 94)
_BARS = ((0.18, 0.30, 0.55), (0.40, 0.52, 0.35), (0.62, 0.74, 0.15))  # x0, x1, top (fractions)
_BAR = (255, 196, 61)


def pixels(size):
    """Rows of RGB tuples for a ``size`` x ``size`` icon."""
    rows = []
    base = 0.85
    for y in range(size):
        fy = (y + 0.5) / size
        row = []
        for x in range(size):
            fx = (x + 0.5) / size
            colour = _BACKGROUND
            for x0, x1, top in _BARS:
                if x0 <= fx < x1 and top <= fy < base:
                    colour = _BAR
            row.append(colour)
        rows.append(row)
    return rows


def png(size):
    """The PNG file bytes of one icon."""

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def write_icons(directory=ICON_DIR):
    """Write every icon; returns the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for size in SIZES:
        path = directory / f"compute-lab-{size}.png"
        path.write_bytes(png(size))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_icons():
        print(f"wrote {p}")
