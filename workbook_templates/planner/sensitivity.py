"""The Sensitivity sheet: two-way grids for the selected scenario, with heat maps."""

from __future__ import annotations

from openpyxl.formatting.rule import ColorScaleRule
from openpyxl.styles import Alignment, Border, Font, Side
from openpyxl.utils import get_column_letter

from udfs import model

from ..sheetkit import Book, bold, number_format, paragraph, put_text, state_colours

#: The selected scenario's figures the grids vary around (spec name -> Excel text).
_SELECTED = {
    "training_flops": "{sel.training_flops}",
    "peak_tflops": "{sel.peak_tflops_used}",
    "goodput": "{sens.goodput}",
}
#: The grids inline these spec'd quantities, so that MFU and the count can vary per cell.
_THROUGH = ("accelerator_hours", "effective_tflops")


#: The middle of each axis (index 3) is the selected scenario's own figure.
BASE = 3
#: Base-case markers: the axis value's format suffix, and the boxed, bold grid cell.
BASE_SUFFIX = '" (base)"'
_BOX = Side(style="medium", color="1F4E78")


def _axis(book, ws, cell, own, multiple, unit, whole=False, cap=None, steps=None, j=0):
    """An axis value: step ``j`` of the named row ``steps`` (``multiple``) x the selected
    scenario's own figure ``own`` (a formula)."""
    value = f"{own}*INDEX({steps},1,{j + 1})"
    if whole:
        value = f"MAX(1,ROUND({value},0))"
    if cap is not None:
        value = f"MIN({cap},{value})"
    cell.value = book.formula(f'=IF(N({own})>0,{value},"")', ws.title)
    cell.style = "Link"
    cell.number_format = number_format(unit)
    if multiple == 1:
        cell.number_format += BASE_SUFFIX
        bold(cell)
    return cell


def _grid(book, ws, top, title, rows, cols, cell_formula, unit, corner_text,
          high_is_good=False):  # fmt: skip
    """A two-way grid around the selected scenario: axes and one formula for every cell.

    ``rows`` and ``cols`` are (own figure, multiples, unit, options) of each axis; the
    middle row and column are the scenario's own figures and their cell (the base case) is
    bold and boxed. ``<row>`` and ``<col>`` in ``cell_formula`` are the cell's axis values.
    The heat map runs green (good) to red (bad); ``high_is_good`` flips it.
    """
    low, high = ("red", "green") if high_is_good else ("green", "red")
    ws.cell(top, 1, f"{title} ({low} = lowest, {high} = highest)").style = "Section"
    corner = ws.cell(top + 1, 2, corner_text)
    corner.style = "Header"
    own_r, row_mult, row_unit, row_opts = rows
    own_c, col_mult, col_unit, col_opts = cols
    for j, m in enumerate(col_mult):
        _axis(book, ws, ws.cell(top + 1, 3 + j), own_c, m, col_unit, **col_opts, j=j)
    for i, m in enumerate(row_mult):
        _axis(book, ws, ws.cell(top + 2 + i, 2), own_r, m, row_unit, **row_opts, j=i)
        for j in range(len(col_mult)):
            row_ref = f"$B{top + 2 + i}"
            col_ref = f"{get_column_letter(3 + j)}${top + 1}"
            text = cell_formula.replace("<row>", row_ref).replace("<col>", col_ref)
            cell = ws.cell(top + 2 + i, 3 + j, book.formula(text, ws.title))
            cell.number_format = number_format(unit)
            if i == BASE and j == BASE:
                cell.border = Border(left=_BOX, right=_BOX, top=_BOX, bottom=_BOX)
                bold(cell)
    first = f"C{top + 2}"
    last = f"{get_column_letter(2 + len(col_mult))}{top + 1 + len(row_mult)}"
    ws.conditional_formatting.add(
        f"{first}:{last}",
        ColorScaleRule(
            start_type="min",
            start_color="F8696B" if high_is_good else "63BE7B",
            mid_type="percentile",
            mid_value=50,
            mid_color="FFEB84",
            end_type="max",
            end_color="63BE7B" if high_is_good else "F8696B",
        ),
    )
    return top + 3 + len(row_mult), f"{first}:{last}"


#: Axis multiples of the selected scenario's own accelerators, MFU and price (1 = its own).
SENS_ACCELERATORS = (0.125, 0.25, 0.5, 1, 2, 4, 8)
SENS_MFU = (0.7, 0.8, 0.9, 1, 1.1, 1.2, 1.3)
SENS_PRICE = (0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5)


def _override_warning(book, ws):
    """Row 4: a warning, when the selected scenario types its effective TFLOP/s, that the
    grids (which vary peak x MFU x goodput) do not apply to it."""
    warn = ws.cell(4, 2, book.formula(
        '=IF(ISNUMBER({sel.effective_tflops_input_used}),"This scenario uses a typed effective '
        'TFLOP/s override ("&TEXT({sel.effective_tflops_input_used},"#,##0.0")&"). The days, '
        "cost and iterations grids vary peak x MFU x goodput, so they do NOT apply to it: "
        'its own figures are on Summary.","")', ws.title))  # fmt: skip
    warn.font = Font(bold=True, color="C00000")
    warn.alignment = Alignment(wrap_text=True, vertical="top")
    ws.merge_cells("B4:I4")
    ws.row_dimensions[4].height = 30


def sensitivity_sheet(book):
    ws = book.sheet("Sensitivity", {"A": 4, "B": 22, **{get_column_letter(c): 14 for c in
                                                           range(3, 10)}})  # fmt: skip
    book.title(
        ws,
        "Sensitivity of the selected scenario",
        "The middle row and column are the selected scenario's own accelerators, MFU and price "
        "(marked (base); the boxed cell is the scenario as planned), the others multiples of "
        "them. Each cell is a plain formula on its training FLOPs, peak TFLOP/s and goodput.",
    )
    ws["A2"].alignment = Alignment(wrap_text=True, vertical="top")
    ws.merge_cells("A2:I2")
    # one line, each value in its own room: the name over C:D, the checks verdict over G:I
    ws["B3"] = "Scenario"
    ws["C3"] = book.formula("={sel.scenario_name}", ws.title)
    ws["C3"].style = "Link"
    ws["C3"].alignment = Alignment(horizontal="left", shrink_to_fit=True)
    ws.merge_cells("C3:D3")
    ws["E3"] = "Goodput"
    ws["E3"].alignment = Alignment(horizontal="right")
    ws["F3"] = book.formula("=INDEX(goodput_used,1,{active_scenario})", ws.title)
    ws["F3"].style = "Link"
    ws["F3"].number_format = number_format("fraction")
    book.place_cell("sens.goodput", ws, "F3")
    ws["G3"] = book.formula('="Checks: "&{sel.checks}', ws.title)
    ws["G3"].style = "Link"
    ws["G3"].alignment = Alignment(horizontal="left", indent=1, shrink_to_fit=True)
    ws.merge_cells("G3:I3")
    state_colours(ws, "G3")
    _override_warning(book, ws)
    ok = ("IF(AND({sel.scenario_ready},N({sel.peak_tflops_used})>0,ISNUMBER(<row>),"
          "ISNUMBER(<col>)),")  # fmt: skip
    accelerators = ("{sel.accelerators_used}", SENS_ACCELERATORS, "accelerators",
                    {"whole": True, "steps": "sens_steps_accelerators"})  # fmt: skip
    mfu = ("{sel.mfu_used}", SENS_MFU, "fraction", {"cap": 1, "steps": "sens_steps_mfu"})
    price = ("{sel.usd_per_accelerator_hour_used}", SENS_PRICE, "US$/accelerator-hour",
             {"steps": "sens_steps_price"})  # fmt: skip
    by_accelerators_mfu = {**_SELECTED, "accelerators": "<row>", "mfu": "<col>"}
    days = model.excel("wall_clock_days", by_accelerators_mfu, _THROUGH)
    nxt, grid1 = _grid(
        book, ws, 5, "Wall-clock days: accelerators (rows) x MFU (columns)",
        accelerators, mfu, "=" + ok + days + ',"")', "days", "Accelerators \\ MFU",
    )  # fmt: skip
    book.place_cell("sens.days_first", ws, grid1.split(":")[0])
    by_mfu_price = {**_SELECTED, "mfu": "<row>", "usd_per_accelerator_hour": "<col>"}
    cost = model.excel("compute_cost_usd", by_mfu_price, _THROUGH)
    nxt, _ = _grid(
        book, ws, nxt + 1, "Compute cost (US$): MFU (rows) x price per accelerator-hour (columns)",
        mfu, price, "=" + ok + cost + ',"")', "US$", "MFU \\ US$ per hour",
    )  # fmt: skip
    iters = model.excel("iterations_per_year", by_accelerators_mfu, ("wall_clock_days", *_THROUGH))
    nxt, _ = _grid(
        book, ws, nxt + 1, "Research iterations per year: accelerators (rows) x MFU (columns)",
        accelerators, mfu, "=" + ok + iters + ',"")', "runs/year", "Accelerators \\ MFU",
        high_is_good=True,
    )  # fmt: skip
    burn = "<row>*<col>*24*{days_per_year}/12"
    nxt, _ = _grid(
        book, ws, nxt + 1,
        "Spend per month while the run lasts (US$): accelerators (rows) x price (columns)",
        accelerators, price, '=IF(AND(ISNUMBER(<row>),ISNUMBER(<col>)),' + burn + ',"")', "US$",
        "Accelerators \\ US$ per hour",
    )  # fmt: skip
    paragraph(
        ws,
        nxt + 1,
        2,
        "Under the linear model the compute cost of a run does not depend on the number of "
        "accelerators (more accelerators finish sooner; the accelerator-hours stay the same), "
        "so total cost varies with MFU and price, while the cluster size sets the time and the "
        "monthly spend (accelerators x price x 24 x 365 / 12) for as long as the run lasts. "
        "Real scaling is sub-linear at large counts.",
        9,
    )
    _steps(book, ws, nxt + 3)
    Book.finish(ws, freeze="A5", pages_tall=1)  # the four grids on one page
    return ws


#: The named rows of the grids' steps: (defined name, label, multiples).
STEPS = (
    ("sens_steps_accelerators", "Accelerators x", SENS_ACCELERATORS),
    ("sens_steps_mfu", "MFU x", SENS_MFU),
    ("sens_steps_price", "Price per hour x", SENS_PRICE),
)


def _steps(book, ws, r):
    """The grids' steps as named cells (multiples of the base; the base itself fixed at 1):
    no figure is typed inside a grid formula, and a step can be changed here."""
    ws.cell(
        r, 2, "Steps of the grids (multiples of the selected scenario's figure)"
    ).style = "Section"
    for i, (name, label, multiples) in enumerate(STEPS):
        row = r + 1 + i
        put_text(ws.cell(row, 2), label)
        for j, m in enumerate(multiples):
            cell = ws.cell(row, 3 + j)
            if j == BASE:
                cell.value = m
                cell.style = "Constant"
            else:
                Book.input_cell(cell, m)
                cell.number_format = "0.000"
        last = get_column_letter(2 + len(multiples))
        book.name(name, f"'Sensitivity'!$C${row}:${last}${row}")
        book.validation(ws, f"C{row}:{last}{row}", "decimal", "0", None, "greaterThan",
                        prompt=f"{label} step: a multiple > 0 of the selected scenario's figure",
                        error="A step is a number > 0.", title="Grid step")  # fmt: skip
    return r + 1 + len(STEPS)
