"""The planner as printed: no number as ###, row labels and headers on every page, text whole.

The number widths are read from the generated workbook (each cell's format rendered at the
largest plausible value of its input); the rest from the planner printed to PDF by LibreOffice.
"""

from __future__ import annotations

import re

import openpyxl
import pytest
from helpers import PLANNER

from udfs.quantities import PLAN_INPUTS

#: The largest figure a user could plausibly type, by unit (money: ten billion dollars), capped
#: by the input's own bound.
PLAUSIBLE_MAX = {
    "US$": 1e10,
    "parameters": 1e15,
    "tokens": 1e15,
    "accelerators": 1e6,
    "TFLOP/s": 1e5,
    "fraction": 10.0,
    "US$/accelerator-hour": 1000.0,
    "W": 1e5,
    "ratio": 10.0,
    "US$/kWh": 10.0,
    "gCO2/kWh": 2000.0,
    "bytes": 100.0,
}


def _sections(fmt):
    """A number format's sections (split at ';' outside quotes)."""
    out, current, quoted = [], "", False
    for ch in fmt:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append(current)
            current = ""
        else:
            current += ch
    return [*out, current]


def shown(fmt, value):
    """The text a positive ``value`` shows in number format ``fmt`` (the formats the planner
    uses: conditions such as [>=1000], thousands separators, scaling commas, decimals,
    percent and quoted literals)."""
    chosen = None
    for section in _sections(fmt):
        cond = re.match(r"\[>=([\d.]+)\]", section)
        if cond is None or value >= float(cond.group(1)):
            chosen = section[cond.end() :] if cond else section
            break
    assert chosen is not None, fmt
    text, k = "", 0
    while k < len(chosen):
        ch = chosen[k]
        if ch == '"':
            end = chosen.index('"', k + 1)
            text += chosen[k + 1 : end]
            k = end + 1
            continue
        digits = re.match(r"[#0,.]+", chosen[k:])
        if digits:
            part = digits.group(0)
            body = part.rstrip(",")
            v = value / 1000 ** (len(part) - len(body))
            if "%" in chosen:
                v *= 100
            decimals = len(body.split(".")[1]) if "." in body else 0
            text += f"{v:,.{decimals}f}" if "," in body else f"{v:.{decimals}f}"
            k += len(part)
            continue
        text += ch
        k += 1
    return text


def test_shown_renders_the_planner_formats():
    assert shown('"$"#,##0', 120e6) == "$120,000,000"
    assert shown("0.0%", 0.35) == "35.0%"
    assert shown('[>=1000000000]"$"#,##0.00,,,"B";[>=10000000]"$"#,##0.0,,"M";"$"#,##0', 12e7) == (
        "$120.0M"
    )


def _fits(ws, cell, value):
    width = ws.column_dimensions[cell.column_letter].width
    text = shown(cell.number_format, value)
    return len(text) + 1 <= width, (ws.title, cell.coordinate, cell.number_format, text, width)


def test_no_input_prints_as_hashes_at_its_largest_plausible_value(generated_templates):
    """An approved amount of $120,000,000 printed "###" in an 11-wide scenario column: each
    number input of each scenario column shows its largest plausible value (its bound's
    ceiling, else PLAUSIBLE_MAX) within the column's width."""
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws = wb["Inputs"]
    checked = 0
    for q in PLAN_INPUTS:
        if q.unit not in PLAUSIBLE_MAX:
            continue
        most = PLAUSIBLE_MAX[q.unit]
        if q.bound is not None:
            for cap in (q.bound.high, q.bound.ceiling):
                if cap is not None:
                    most = min(most, cap)
        ((_, ref),) = wb.defined_names[q.name].destinations
        for row in ws[ref.replace("$", "")]:
            for cell in row:
                ok, why = _fits(ws, cell, most)
                assert ok, why
                checked += 1
    assert checked >= 8 * 15


def test_no_cost_prints_as_hashes_on_calculations(generated_templates):
    """The costs of a $120M run ("Compute cost", "Total cost, P90") printed ### on
    Calculations: each US$ row shows ten billion dollars within its scenario columns."""
    from workbook_templates.planner.layout import SCENARIO_COLUMNS

    ws = openpyxl.load_workbook(generated_templates[PLANNER])["Calculations"]
    rows = [r for r in range(5, ws.max_row + 1) if ws.cell(r, 2).value == "US$"]
    assert len(rows) >= 6
    for r in rows:
        for c in SCENARIO_COLUMNS:
            ok, why = _fits(ws, ws.cell(r, c), PLAUSIBLE_MAX["US$"])
            assert ok, why
