"""The cluster-sizing and iteration-time workbook (``cluster-sizing.xlsx``).

From one run's accelerator-hours: the accelerators needed to finish in a target number of
days, and the wall-clock days and research iterations per year a cluster size gives, with
the Compute Lab methodology's example (30M accelerator-hours: ~83 days on 15,000
accelerators, ~8 days on 150,000). Linear scaling; every formula is rendered from the model
spec (:mod:`udfs.model`: ``accelerators_for_days``, ``wall_clock_days``,
``iterations_per_year``, ``compute_cost_usd``).
"""

from __future__ import annotations

import datetime as _dt

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.chart.data_source import NumFmt

from udfs import model

from .sheetkit import (
    CHECKS_STEP,
    Book,
    Column,
    add_change_log,
    add_checks,
    add_cover,
    align_table,
    input_block,
    number_format,
    order_sheets,
    output_block,
    paragraph,
    put_text,
    set_properties,
    write_table,
)

__all__ = ["FILENAME", "TARGET_DAYS", "CLUSTER_SIZES", "SEED_HOURS", "build"]

FILENAME = "cluster-sizing.xlsx"
SEED_HOURS = 30e6
TARGET_DAYS = (7, 14, 30, 45, 60, 90, 120, 180)
CLUSTER_SIZES = (1024, 2048, 4096, 8192, 15000, 16384, 32768, 65536, 100000, 150000)
SHEETS = (
    ("Cover", "Purpose, how to use, colour legend, version, sources"),
    ("Inputs", "The run's accelerator-hours and price"),
    ("Sizing", "Target days -> accelerators needed"),
    ("Iterations", "Accelerators -> wall-clock days and research iterations per year"),
    ("Checks", "Input checks and the master check"),
    ("Change log", "Versions of this template"),
)


#: The Sizing table's target days column stands for the spec's ``target_days``.
_TARGET = {"target_days": "<target_days>"}


def _inputs(book):
    ws = book.sheet("Inputs", {"A": 36, "B": 22, "C": 18, "D": 80})
    book.title(ws, "Inputs", "Type in the yellow cells.")
    book.header(ws, 4, ["Input", "Unit", "Value", "Notes and sources"])
    input_block(
        book,
        ws,
        5,
        [
            ("accelerator_hours", "Accelerator-hours of one run", "accelerator-hours",
             SEED_HOURS, "> 0",
             "The Compute Lab methodology's example: 30 million accelerator-hours. Take your "
             "own from the planner's Summary (Accelerator-hours)."),
            ("usd_per_accelerator_hour", "Price per accelerator-hour", "US$/accelerator-hour",
             2.0, ">= 0", "Rental, or the ownership equivalent"),
        ],
    )  # fmt: skip
    note = "Back-to-back runs per year = days per year / wall-clock days"
    book.label_cells(ws, 7, "Days per year (fixed)", "days", note, note_col=4)
    constant = ws.cell(7, 3, model.CONSTANTS["days_per_year"])
    constant.style = "Constant"
    constant.number_format = number_format("days")  # as its unit shows (365.0)
    book.place_cell("days_per_year", ws, constant.coordinate, named=True)
    output_block(
        book,
        ws,
        9,
        [
            ("cost_per_run_usd", "Compute cost of one run", "US$",
             "=" + model.excel("compute_cost_usd"),
             "Does not depend on the cluster size under linear scaling"),
        ],
    )  # fmt: skip
    align_table(ws, 4, 4)
    paragraph(
        ws,
        11,
        1,
        "Linear scaling: twice the accelerators, half the days, the same accelerator-hours. "
        "Real scaling is sub-linear at large counts (network, failures, batch-size limits), "
        "so read the large clusters' days as lower bounds.",
        4,
    )
    Book.finish(ws, freeze="A5")


def _sizing(book):
    ws = book.sheet("Sizing", {"A": 4})
    book.title(ws, "Accelerators needed for a target wall-clock time",
               "accelerators = accelerator-hours / (24 x target days)")  # fmt: skip
    ws["B3"] = "Accelerator-hours"
    ws["C3"] = book.formula("={accelerator_hours}", ws.title)
    ws["C3"].style = "Link"
    ws["C3"].number_format = "#,##0"
    columns = [
        Column("target_days", "Target wall-clock days", "days", inputs=TARGET_DAYS),
        Column("accelerators_for_days", "Accelerators needed", "",
               f"=ROUND({model.excel('accelerators_for_days', _TARGET)},6)", width=18),
        Column("accelerators_rounded_up", "Accelerators needed", "",
               "=ROUNDUP(<accelerators_for_days>,0)", width=18),
        Column("sizing_iterations_per_year", "Iterations per year", "runs/year",
               "=" + model.excel("iterations_per_year", {"wall_clock_days": "<target_days>"}),
               width=16),
    ]  # fmt: skip
    first, last = write_table(book, ws, 5, columns, len(TARGET_DAYS), first_col=2)
    # headers with one unit each, and thousands separators on the accelerator counts
    for col, text, fmt in (
        ("B", "Target wall-clock time (days)", None),
        ("C", "Accelerators needed, exact", "#,##0.0"),
        ("D", "Accelerators needed, rounded up", "#,##0"),
        ("E", "Iterations per year (runs/year)", None),
    ):
        put_text(ws[f"{col}5"], text)
        ws.column_dimensions[col].width = 20
        for r in range(first, last + 1):
            if fmt:
                ws[f"{col}{r}"].number_format = fmt
    ws.row_dimensions[5].height = 45
    _log_chart(
        ws, "Accelerators needed against the target wall-clock time",
        "Target wall-clock time (days, log scale)", "Accelerators needed (log scale)",
        Reference(ws, min_col=2, min_row=first, max_row=last),
        Reference(ws, min_col=4, min_row=first - 1, max_row=last), "G5",
    )  # fmt: skip
    paragraph(
        ws,
        last + 2,
        2,
        "Round up to a whole accelerator, then to your cluster's unit (8 per server).",
        5,
    )
    Book.finish(ws, freeze="B6")


def _iterations(book):
    ws = book.sheet("Iterations", {"A": 4})
    book.title(
        ws,
        "Iteration time: cluster size -> days per run and runs per year",
        "days = accelerator-hours / accelerators / 24; iterations per year = 365 / days",
    )
    columns = [
        Column("accelerators", "Accelerators", "accelerators", inputs=CLUSTER_SIZES),
        Column("wall_clock_days", "Wall-clock days per run", "days",
               "=" + model.excel("wall_clock_days", {"accelerators": "<accelerators>"}), width=18),
        Column("iterations_per_year", "Research iterations per year", "runs/year",
               "=" + model.excel("iterations_per_year", {"wall_clock_days": "<wall_clock_days>"}),
               width=18),
        Column("speed_up", "Speed-up vs the first row", "x",
               "=INDEX(wall_clock_days,1,1)/<wall_clock_days>", width=16),
    ]  # fmt: skip
    first, last = write_table(book, ws, 5, columns, len(CLUSTER_SIZES), first_col=2)
    put_text(ws["B5"], "Accelerators")  # a count: no unit in brackets
    # the Compute Lab methodology's example, worded as in the source
    r = last + 2
    put_text(ws.cell(r, 2), "The Compute Lab methodology's example: 30M accelerator-hours")
    ws.cell(r, 2).style = "Section"
    seed_rows = []
    for i, n in enumerate((15000, 150000)):
        rr = r + 1 + i
        Book.input_cell(ws.cell(rr, 2), n, "accelerators")
        days = model.excel("wall_clock_days", {"accelerators": f"B{rr}"})
        ws.cell(rr, 3, book.formula(f"={days}", ws.title)).number_format = "#,##0.0"
        runs = model.excel("iterations_per_year", {"wall_clock_days": f"C{rr}"})
        ws.cell(rr, 4, book.formula(f"={runs}", ws.title)).number_format = "0.00"
        seed_rows.append(rr)
    book.name("seed_example_accelerators", f"Iterations!$B${seed_rows[0]}:$B${seed_rows[-1]}")
    book.name("seed_example_days", f"Iterations!$C${seed_rows[0]}:$C${seed_rows[-1]}")
    book.name("seed_example_iterations", f"Iterations!$D${seed_rows[0]}:$D${seed_rows[-1]}")
    paragraph(
        ws,
        r + 4,
        2,
        "Source: the Compute Lab methodology (iteration time). At perfect scaling a "
        "30M accelerator-hour run takes ~83 days on 15,000 accelerators and ~8 days on "
        "150,000: ten times the cluster buys ten times the research cycles per year, which is "
        "why capacity is concentrated even though real scaling falls short of linear.",
        5,
    )
    _log_chart(
        ws, "Wall-clock days against accelerators",
        "Accelerators (log scale)", "Wall-clock days per run (log scale)",
        Reference(ws, min_col=2, min_row=first, max_row=last),
        Reference(ws, min_col=3, min_row=first - 1, max_row=last), "G5",
    )  # fmt: skip
    Book.finish(ws, freeze="B6")


def _log_chart(ws, title, x_title, y_title, xs, ys, anchor):
    """A line-and-marker scatter chart on log axes (a 1/x curve reads as a straight line)."""
    chart = ScatterChart(scatterStyle="lineMarker")
    chart.title = title
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    for axis in (chart.x_axis, chart.y_axis):
        axis.scaling.logBase = 10
        axis.numFmt = NumFmt(formatCode="#,##0", sourceLinked=False)
        axis.delete = False
    series = Series(ys, xs, title_from_data=True)
    series.marker.symbol = "circle"
    chart.series.append(series)
    chart.legend = None
    chart.width, chart.height = 16, 9
    ws.add_chart(chart, anchor)


def build(generated=None):
    """The cluster-sizing workbook as an openpyxl Workbook (not saved)."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    book = Book()
    _inputs(book)
    _sizing(book)
    _iterations(book)
    add_checks(
        book,
        [
            ("Accelerator-hours > 0", "=AND(ISNUMBER({accelerator_hours}),{accelerator_hours}>0)"),
            ("Price >= 0", "=AND(ISNUMBER({usd_per_accelerator_hour}),"
                           "{usd_per_accelerator_hour}>=0)"),
            ("Days per year > 0", "=AND(ISNUMBER({days_per_year}),{days_per_year}>0)"),
            ("Every target is a number of days > 0",
             "=AND(COUNT(target_days)=ROWS(target_days),MIN(target_days)>0)"),
            ("Every cluster size is > 0",
             "=AND(COUNT(accelerators)=ROWS(accelerators),MIN(accelerators)>0)"),
            ("Every table figure is a number",
             "=COUNT(accelerators_for_days,wall_clock_days,iterations_per_year)"
             "=ROWS(target_days)+2*ROWS(accelerators)"),
        ],
    )  # fmt: skip
    add_change_log(book, generated)
    add_cover(
        book,
        "Cluster sizing and iteration time",
        "How many accelerators a run needs to finish in a given time, and how many research "
        "iterations per year a cluster size allows, from one run's accelerator-hours.",
        [
            "Inputs: type the run's accelerator-hours (from the training-run planner's Summary) "
            "and the price per accelerator-hour.",
            "Sizing: type target wall-clock days (yellow) to read the accelerators needed.",
            "Iterations: type cluster sizes (yellow) to read days per run and runs per year.",
            CHECKS_STEP,
        ],
        SHEETS[1:],
        [
            "Example: the Compute Lab methodology, 'Iteration Time as the Scarce Resource' "
            "(30M accelerator-hours, 15,000 vs 150,000 accelerators)",
            "Formulas: the Compute Lab engine's accelerators for a target time, wall-clock days "
            "and iterations per year (the same formulas as the compute-lab command line)",
        ],
        generated,
    )
    order_sheets(book, [s for s, _ in SHEETS])
    set_properties(book, "Cluster sizing and iteration time", "Compute Lab planning template",
                   generated)  # fmt: skip
    return book.wb
