"""Where things sit in the planner: columns, sheets, and small cell helpers."""

from __future__ import annotations

import math
import re

from openpyxl.styles import Alignment

from ..sheetkit import number_format, put_text, state_colours

FILENAME = "training-run-planner.xlsx"
N_CUSTOM = 5
FIRST_COL = 4  # column D
DEFAULT_COL = 3  # column C: the value a blank input takes
INPUT_HEADER_ROW = 4  # the scenario_name row
MONTHS = 60
SHEETS = (
    ("Cover", "Purpose, how to use, colour legend, version, sources"),
    (
        "Inputs",
        "Every input, one row each, one column per scenario: type in the yellow cells "
        "(the grey reference columns are fixed)",
    ),
    ("Calculations", "Inputs as used (blanks resolved) and every output, per scenario"),
    ("Summary", "The selected scenario (active-scenario switch)"),
    ("Sensitivity", "Two-way grids for the selected scenario, with heat maps"),
    ("Monthly spend", "Accelerator-hours and cost per calendar month from the start date"),
    ("Charts", "Scenario comparison; wall-clock days against accelerators"),
    ("Reference runs", "Disclosed training runs with sources, implied TFLOP/s and MFU"),
    ("Our runs", "Your completed runs: a blank MFU moves toward them (typed or --own-runs)"),
    ("Accelerators", "The accelerator catalogue (the dropdown's source)"),
    ("Checks", "Input and consistency checks, and the master check"),
    ("Change log", "Versions of this template"),
)

#: Scenario columns (column numbers), in order.
SCENARIO_COLUMNS = tuple(range(FIRST_COL, FIRST_COL + 3 + N_CUSTOM))
LAST_COL = SCENARIO_COLUMNS[-1]
NOTE_COL = LAST_COL + 1
#: Width of a scenario column on Inputs and Calculations (eight fit one printed page wide).
SCENARIO_WIDTH = 11
#: Parameters and tokens in a scenario column: 405.0B, 15.6T (the value stays exact).
SIZE_FORMAT = '[>=1000000000000]#,##0.0##,,,,"T";[>=1000000000]#,##0.0##,,,"B";#,##0'
RULE_COL = LAST_COL + 2
#: US$ in a scenario column: $9,999,999 in full, then $120.0M and $1.25B (to the nearest
#: $100,000 and $10M), so that a budget of any size fits the column instead of printing ###
#: (the value stays exact).
MONEY_FORMAT = '[>=1000000000]"$"#,##0.00,,,"B";[>=10000000]"$"#,##0.0,,"M";"$"#,##0'


def wrap_units(ws, first_row, last_row, width, skip=()):
    """Wrap the units in column B, rows ``first_row`` to ``last_row``, that are longer than the
    column's ``width``, each row at least as tall as its lines (a unit breaks at "/" and "-")."""
    for row in ws.iter_rows(min_row=first_row, max_row=last_row, min_col=2, max_col=2):
        for cell in row:
            text = cell.value
            if not isinstance(text, str) or text.startswith("=") or len(text) <= width:
                continue
            if text in skip:
                continue
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            lines, used = 1, 0
            for part in re.findall(r"[^/ -]*[/ -]?", text):
                if used and used + len(part) > width:
                    lines, used = lines + 1, 0
                used += len(part)
            dims = ws.row_dimensions[cell.row]
            dims.height = max(dims.height or 15.0, 15.0 * lines)


def repeat_labels(ws):
    """Column A (the row labels) on every printed page of a planner sheet wider than a page
    (openpyxl's print titles; the notes of such a sheet are merged within its first page, so
    none prints under the repeated column)."""
    ws.print_title_cols = "A:A"


def blank_if_nan(value):
    """None for a missing catalogue figure (None or NaN), else the value."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def checks_flag(ws, coordinate):
    """The master check's verdict in one cell, so every output sheet shows it."""
    cell = ws[coordinate]
    cell.value = (
        '=IF(master_status="OK","Checks: OK",IF(master_status="WARN",'
        '"Checks: WARN, have a look at the Checks sheet","Checks: ERROR, see the Checks sheet"))'
    )
    cell.style = "Link"
    state_colours(ws, coordinate)
    return cell


def single(book, ws, r, name, label, unit, formula, style="Link", note=""):
    """One labelled single-cell quantity in column C of ``ws``."""
    book.label_cells(ws, r, label, unit, note, note_col=4)
    cell = ws.cell(r, 3, book.formula(formula, ws.title))
    cell.style = style
    cell.number_format = number_format(unit)
    book.place_cell(name, ws, cell.coordinate)
    return cell


def show_axes(chart):
    """openpyxl 3.1 marks axes deleted unless told: show both."""
    chart.x_axis.delete = False
    chart.y_axis.delete = False


def constant_cell(ws, r, c, value, unit=""):
    """A fixed figure (grey): a catalogue value, text kept as text, blank when missing."""
    value = blank_if_nan(value)
    cell = ws.cell(r, c)
    if isinstance(value, str):
        put_text(cell, value)
    else:
        cell.value = value
    cell.style = "Constant"
    cell.number_format = number_format(unit)
    return cell
