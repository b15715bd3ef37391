"""The Sensitivity sheet: two-way grids for the selected scenario, with heat maps."""

from __future__ import annotations

from openpyxl.formatting.rule import ColorScaleRule
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs import model

from ..sheetkit import Book, number_format, paragraph

#: The selected scenario's figures the grids vary around (spec name -> Excel text).
_SELECTED = {
    "training_flops": "{sel.training_flops}",
    "peak_tflops": "{sel.peak_tflops_used}",
    "goodput": "{sens.goodput}",
}
#: The grids inline these spec'd quantities, so that MFU and the count can vary per cell.
_THROUGH = ("accelerator_hours", "effective_tflops")


def _grid(book, ws, top, title, row_axis, col_axis, cell_formula, unit, row_unit, col_unit,
          corner_text, high_is_good=False):  # fmt: skip
    """A two-way grid: typed axes (inputs) and one formula template for every cell.

    ``<row>`` and ``<col>`` in ``cell_formula`` are the cell's row and column axis values.
    The heat map runs green (good) to red (bad); ``high_is_good`` flips it.
    """
    low, high = ("red", "green") if high_is_good else ("green", "red")
    ws.cell(top, 1, f"{title} ({low} = lowest, {high} = highest)").style = "Section"
    corner = ws.cell(top + 1, 2, corner_text)
    corner.style = "Header"
    for j, v in enumerate(col_axis):
        book.input_cell(ws.cell(top + 1, 3 + j), v, col_unit)
    for i, v in enumerate(row_axis):
        book.input_cell(ws.cell(top + 2 + i, 2), v, row_unit)
        for j in range(len(col_axis)):
            row_ref = f"$B{top + 2 + i}"
            col_ref = f"{get_column_letter(3 + j)}${top + 1}"
            text = cell_formula.replace("<row>", row_ref).replace("<col>", col_ref)
            cell = ws.cell(top + 2 + i, 3 + j, book.formula(text, ws.title))
            cell.number_format = number_format(unit)
    first = f"C{top + 2}"
    last = f"{get_column_letter(2 + len(col_axis))}{top + 1 + len(row_axis)}"
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
    return top + 3 + len(row_axis), f"{first}:{last}"


SENS_ACCELERATORS = (1024, 2048, 4096, 8192, 16384, 32768, 65536)
SENS_MFU = (0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50)
SENS_PRICE = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)


def sensitivity_sheet(book):
    ws = book.sheet("Sensitivity", {"A": 4, "B": 22, **{get_column_letter(c): 14 for c in
                                                           range(3, 10)}})  # fmt: skip
    book.title(
        ws,
        "Sensitivity of the selected scenario",
        "Axes are inputs (yellow); each cell is a plain formula on the selected scenario's "
        "training FLOPs, peak TFLOP/s and goodput (Summary). Each grid's colours are in its title.",
    )
    ws["B3"] = "Scenario"
    ws["C3"] = book.formula("={sel.scenario_name}", ws.title)
    ws["C3"].style = "Link"
    ws["F3"] = "Checks"
    ws["G3"] = book.formula("={sel.checks}", ws.title)
    ws["G3"].style = "Link"
    ws["H3"] = "Goodput"
    ws["I3"] = book.formula("=INDEX(goodput_used,{active_scenario})", ws.title)
    ws["I3"].style = "Link"
    ws["I3"].number_format = number_format("fraction")
    book.place_cell("sens.goodput", ws, "I3")
    warn = ws.cell(4, 2, book.formula(
        '=IF(ISNUMBER({sel.effective_tflops_input_used}),"This scenario uses a typed effective '
        'TFLOP/s override ("&TEXT({sel.effective_tflops_input_used},"#,##0.0")&"). The days, '
        "cost and iterations grids vary peak x MFU x goodput, so they do NOT apply to it: "
        'its own figures are on Summary.","")', ws.title))  # fmt: skip
    warn.font = Font(bold=True, color="C00000")
    warn.alignment = Alignment(wrap_text=True, vertical="top")
    ws.merge_cells("B4:I4")
    ws.row_dimensions[4].height = 30
    ok = "IF(AND({sel.scenario_ready},N({sel.peak_tflops_used})>0),"
    by_accelerators_mfu = {**_SELECTED, "accelerators": "<row>", "mfu": "<col>"}
    days = model.excel("wall_clock_days", by_accelerators_mfu, _THROUGH)
    nxt, grid1 = _grid(
        book, ws, 5, "Wall-clock days: accelerators (rows) x MFU (columns)",
        SENS_ACCELERATORS, SENS_MFU, "=" + ok + days + ',"")', "days", "accelerators", "fraction",
        "Accelerators \\ MFU",
    )  # fmt: skip
    book.place_cell("sens.days_first", ws, grid1.split(":")[0])
    by_mfu_price = {**_SELECTED, "mfu": "<row>", "usd_per_accelerator_hour": "<col>"}
    cost = model.excel("rental_cost_usd", by_mfu_price, _THROUGH)
    nxt, _ = _grid(
        book, ws, nxt + 1, "Compute cost (US$): MFU (rows) x price per accelerator-hour (columns)",
        SENS_MFU, SENS_PRICE, "=" + ok + cost + ',"")', "US$", "fraction", "US$/accelerator-hour",
        "MFU \\ US$ per hour",
    )  # fmt: skip
    iters = model.excel("iterations_per_year", by_accelerators_mfu, ("wall_clock_days", *_THROUGH))
    ws.row_breaks.append(Break(id=nxt))  # two grids per printed page, never one split
    nxt, _ = _grid(
        book, ws, nxt + 1, "Research iterations per year: accelerators (rows) x MFU (columns)",
        SENS_ACCELERATORS, SENS_MFU, "=" + ok + iters + ',"")', "runs/year", "accelerators",
        "fraction", "Accelerators \\ MFU", high_is_good=True,
    )  # fmt: skip
    burn = "<row>*<col>*24*{days_per_year}/12"
    nxt, _ = _grid(
        book, ws, nxt + 1,
        "Spend per month while the run lasts (US$): accelerators (rows) x price (columns)",
        SENS_ACCELERATORS, SENS_PRICE, "=" + burn, "US$", "accelerators",
        "US$/accelerator-hour", "Accelerators \\ US$ per hour",
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
    Book.finish(ws, freeze="A5")
    return ws
