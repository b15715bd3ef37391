"""The calibration picture for the docs: predicted vs disclosed accelerator-hours (log-log).

Each calibration run is one point, predicted with its whole organisation left out
(:func:`udfs.calibration.grouped_validation`), coloured by organisation; the diagonal is a
perfect prediction and the band is P10..P90 of a model of at least 5B active parameters on a
calibrated generation (the narrowest range; smaller models and other accelerators have wider
ones). Plain SVG, written with the standard library: ``make pictures`` writes
``docs/images/calibration.svg``.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

__all__ = ["SIZE", "calibration_svg", "write"]

#: Width and height of the picture, px.
SIZE = (760, 560)
_MARGIN = (70, 20, 30, 60)  # left, right, top, bottom (the legend sits inside the plot)
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")  # fmt: skip
_MARKERS = ("circle", "square", "diamond")


def _scale(lo, hi, a, b):
    la, lb = math.log10(lo), math.log10(hi)
    return lambda v: a + (math.log10(v) - la) / (lb - la) * (b - a)


def _marker(kind, x, y, colour):
    if kind == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}"/>'
    if kind == "square":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{colour}"/>'
    pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
    return f'<polygon points="{pts}" fill="{colour}"/>'


def calibration_svg():
    """The picture as SVG text (one ``<g class="run">`` per calibration run)."""
    from udfs import calibration

    table = calibration.grouped_validation()
    z90 = 1.2815515655446004
    band = math.exp(z90 * calibration.throughput_sigma())
    values = [*table["disclosed_accelerator_hours"], *table["predicted_accelerator_hours"]]
    lo = 10 ** math.floor(math.log10(min(values) / band))
    hi = 10 ** math.ceil(math.log10(max(values) * band))
    w, h = SIZE
    left, right, top, bottom = _MARGIN
    x, y = _scale(lo, hi, left, w - right), _scale(lo, hi, h - bottom, top)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>']  # fmt: skip
    decades = range(round(math.log10(lo)), round(math.log10(hi)) + 1)
    for d in decades:
        v = 10.0**d
        out.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{h - bottom}" '
                   f'stroke="#eee"/><line x1="{left}" y1="{y(v):.1f}" x2="{w - right}" '
                   f'y2="{y(v):.1f}" stroke="#eee"/>')  # fmt: skip
        out.append(
            f'<text x="{x(v):.1f}" y="{h - bottom + 15}" text-anchor="middle">1e{d}</text>'
            f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">1e{d}</text>'
        )
    corners = f"{x(lo):.1f},{y(lo * band):.1f} {x(hi / band):.1f},{y(hi):.1f} "
    corners += (
        f"{x(hi):.1f},{y(hi):.1f} {x(hi):.1f},{y(hi / band):.1f} {x(lo * band):.1f},{y(lo):.1f} "
    )
    corners += f"{x(lo):.1f},{y(lo):.1f}"
    out.append(f'<polygon class="band" points="{corners}" fill="#dbe9f6"/>')
    out.append(f'<line x1="{x(lo):.1f}" y1="{y(lo):.1f}" x2="{x(hi):.1f}" y2="{y(hi):.1f}" '
               'stroke="#555" stroke-dasharray="4 3"/>')  # fmt: skip
    orgs = sorted(
        table["organisation"].unique(), key=lambda o: -int((table["organisation"] == o).sum())
    )
    style = {o: (_COLOURS[i % 10], _MARKERS[i // 10 % 3]) for i, o in enumerate(orgs)}
    for r in table.itertuples(index=False):
        colour, kind = style[r.organisation]
        px, py = x(r.disclosed_accelerator_hours), y(r.predicted_accelerator_hours)
        out.append(f'<g class="run"><title>{escape(r.run)} ({escape(r.organisation)}): '
                   f"{r.error_pct:+.0f}%</title>{_marker(kind, px, py, colour)}</g>")  # fmt: skip
    for i, o in enumerate(orgs):
        colour, kind = style[o]
        ly = top + 12 + 14 * i
        out.append(_marker(kind, left + 14, ly - 4, colour))
        out.append(f'<text x="{left + 24}" y="{ly}">{escape(o)}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 15}" text-anchor="middle">'
               "disclosed accelerator-hours</text>")  # fmt: skip
    out.append(
        f'<text transform="translate(16,{(top + h - bottom) / 2}) rotate(-90)" '
        'text-anchor="middle">predicted accelerator-hours (organisation left out)</text>'
    )
    out.append(
        f'<text x="{w - right}" y="{h - bottom - 8}" text-anchor="end" fill="#555">'
        "band: P10..P90 (5B+ active, calibrated generation); dashed: exact</text>"
    )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write(out):
    """Write ``calibration.svg`` into the folder ``out``; return its path."""
    path = Path(out) / "calibration.svg"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(calibration_svg(), encoding="utf-8")
    return path
