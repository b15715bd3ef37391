"""The dense-versus-MoE workbook (``dense-vs-moe.xlsx``): the methodology's "efficiency paradox".

Three columns at the same throughput, price and cluster: the MoE reference (DeepSeek-V3,
~5.5% of its parameters active per token), the same model run dense (every parameter
active), and the dense reference (Llama 3.1 405B). What the activation ratio saves in FLOPs,
accelerator-hours and money, and where those savings go when the compute is spent anyway:
more tokens, more experiments, more iterations per year.
"""

from __future__ import annotations

import datetime as _dt

from openpyxl.chart import BarChart, Reference
from openpyxl.chart.data_source import NumFmt
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from udfs import catalogue, model
from udfs.quantities import SEED_PLAN

from .sheetkit import (
    CHECKS_STEP,
    Book,
    Row,
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
)

__all__ = ["FILENAME", "COLUMNS", "build"]

FILENAME = "dense-vs-moe.xlsx"
FIRST_COL = 4
COLUMNS = (4, 5, 6)  # D: MoE, E: same model dense, F: dense reference
NOTE_COL = 7
SHEETS = (
    ("Cover", "Purpose, how to use, colour legend, version, sources"),
    ("Inputs", "The two models and the shared throughput, price and cluster"),
    ("Comparison", "FLOPs, hours, days and cost of each; what the activation ratio saves"),
    ("Efficiency paradox", "Where the savings go when the compute is spent anyway"),
    ("Checks", "Input checks and the master check"),
    ("Change log", "Versions of this template"),
)


def _inputs(book):
    moe, dense = catalogue.run("DeepSeek-V3"), catalogue.run("Llama 3.1 405B")
    ws = book.sheet("Inputs", {"A": 36, "B": 20, "C": 4, "D": 20, "E": 20, "F": 20, "G": 80})
    book.title(
        ws,
        "Inputs",
        "Yellow cells are inputs. Each column is a model shaped like a disclosed run, computed at "
        "the shared throughput below (not the run's disclosed hours); the middle column is the "
        "MoE model with every parameter active (links, green).",
    )
    book.header(ws, 4, ["Scenario", "Unit", ""])
    put_text(ws.cell(4, NOTE_COL), "Notes and sources").style = "Header"
    ws.row_dimensions[4].height = 32
    r = _model_rows(book, ws, moe, dense)
    ws.cell(r, 1, "Shared by all three columns").style = "Section"
    input_block(book, ws, r + 1, _SHARED, note_col=NOTE_COL, value_col=FIRST_COL)
    _constants(book, ws, r + 6)
    align_table(ws, 4, NOTE_COL)
    Book.finish(ws, freeze="D5")


def _model_rows(book, ws, moe, dense):
    """The three model columns (the middle one links to the MoE column); next free row."""
    rows = (
        ("scenario_name", "Scenario", "",
         [f"{moe['name']}-like MoE", "Same model, dense", f"{dense['name']}-like dense"],
         "Middle column: the MoE model as if every parameter were active"),
        ("total_params", "Total parameters", "parameters",
         [moe["total_params"], "={total_params@D}", dense["total_params"]],
         f"{catalogue.source('run', moe['name'])}; {catalogue.source('run', dense['name'])}"),
        ("active_params", "Active parameters per token", "parameters",
         [moe["active_params"], "={total_params@D}", dense["active_params"]],
         "DeepSeek-V3 activates 37B of 671B parameters (~5.5%)"),
        ("training_tokens", "Training tokens", "tokens",
         [moe["training_tokens"], "={training_tokens@D}", dense["training_tokens"]], ""),
        ("disclosed_accelerator_hours", "Disclosed accelerator-hours", "accelerator-hours",
         [moe["accelerator_hours"], None, dense["accelerator_hours"]],
         f"{catalogue.source('run', moe['name'], 'accelerator_hours')}; "
         f"{catalogue.source('run', dense['name'])} (H100 GPU-hours)"),
    )  # fmt: skip
    for i, (name, label, unit, vals, note) in enumerate(rows):
        r = 4 + i  # scenario_name is the header row
        if name != "scenario_name":
            book.label_cells(ws, r, label, unit, note, note_col=NOTE_COL)
        book.place_row(name, ws, r, COLUMNS[0], COLUMNS[-1], named=True)
        for c, v in zip(COLUMNS, vals, strict=True):
            cell = ws.cell(r, c)
            if name == "scenario_name" and c == COLUMNS[1]:
                put_text(cell, v).style = "Header"
            elif isinstance(v, str) and v.startswith("={"):
                cell.value = book.formula(v.replace("@D}", "}"), ws.title, "D")
                cell.style = "Link"
            elif v is None:  # not disclosed: a grey dash, aligned like the figures
                put_text(cell, "not disclosed")
                cell.font = Font(italic=True, color="808080")
                cell.alignment = Alignment(horizontal="right")
            else:
                Book.input_cell(cell, v, unit)
            cell.number_format = number_format(unit)
    return 4 + len(rows) + 1


#: Inputs shared by the three columns (the DeepSeek-V3-like example plan's figures).
_SHARED = [
    (
        "effective_tflops",
        "Effective TFLOP/s per accelerator",
        "TFLOP/s",
        SEED_PLAN["effective_tflops"],
        "> 0",
        "The DeepSeek-V3-like example plan's (Compute Lab methodology) 400 sustained TFLOP/s "
        "for all three, so only the activation ratio differs. MoE models often sustain less "
        "per accelerator (all-to-all routing): "
        "DeepSeek-V3's disclosed hours imply ~327, Llama 3.1 405B's ~341.",
    ),
    (
        "usd_per_accelerator_hour",
        "Price per accelerator-hour",
        "US$/accelerator-hour",
        SEED_PLAN["usd_per_accelerator_hour"],
        ">= 0",
        "DeepSeek-V3's assumed rental price",
    ),
    (
        "accelerators",
        "Accelerators",
        "accelerators",
        float(SEED_PLAN["accelerators"]),
        "> 0",
        "DeepSeek-V3's 2,048 H800 (arXiv 2412.19437)",
    ),
    (
        "watts_per_accelerator",
        "Power per accelerator",
        "W",
        SEED_PLAN["watts_per_accelerator"],
        "> 0",
        "H100 SXM TDP 700 W",
    ),
]


def _constants(book, ws, r):
    """The model constants the formulas read (values from the spec, udfs.model.CONSTANTS)."""
    constants = (
        ("flops_per_param_token", "FLOPs per active parameter per token", "",
         "The 6N heuristic (forward + backward); fixed"),
        ("days_per_year", "Days per year", "days", "Fixed"),
    )  # fmt: skip
    for name, label, unit, note in constants:
        book.label_cells(ws, r, label, unit, note, note_col=NOTE_COL)
        cell = ws.cell(r, FIRST_COL, model.CONSTANTS[name])
        cell.style = "Constant"
        cell.number_format = number_format(unit)  # as its unit shows
        book.place_cell(name, ws, cell.coordinate, named=True)
        r += 1


#: Implied TFLOP/s of the disclosed hours (the spec's implied_effective_tflops).
_IMPLIED = model.excel(
    "implied_effective_tflops", {"accelerator_hours": "{disclosed_accelerator_hours}"}
)


def _comparison(book):
    widths = {"A": 40, "B": 20, "C": 4, "D": 20, "E": 20, "F": 20, "G": 60}
    ws = book.sheet("Comparison", widths)
    book.title(ws, "Dense versus MoE: the same throughput, price and cluster")
    book.header(ws, 4, ["Quantity", "Unit", ""])
    for c in COLUMNS:
        # the name and the throughput it is modelled at, never read as the disclosed run
        cell = ws.cell(4, c, book.formula(
            '={scenario_name}&" at "&TEXT({effective_tflops},"#,##0")&" TFLOP/s"', ws.title,
            get_column_letter(c)))  # fmt: skip
        cell.style = "Header"
    put_text(ws.cell(4, NOTE_COL), "Formula").style = "Header"
    ws.row_dimensions[4].height = 45
    r = book.write_rows(ws, 5, _comparison_rows(), COLUMNS, note_col=NOTE_COL)
    r = _savings(book, ws, r + 1)
    _chart(book, ws, r)
    align_table(ws, 4, NOTE_COL)
    Book.finish(ws, freeze="D5")


def _comparison_rows():
    """One row per quantity for the three columns: the spec'd ones rendered from the spec."""
    return [
        Row("activation_ratio", "Active / total parameters", "%",
            "={active_params}/{total_params}", "", "Calc", True),
        Row("training_flops", "Training compute", "FLOPs",
            "=" + model.excel("training_flops"),
            model.SPEC["training_flops"].note, "Calc", True),
        Row("accelerator_hours", "Accelerator-hours", "accelerator-hours",
            "=" + model.excel("accelerator_hours"),
            model.SPEC["accelerator_hours"].note, "Calc", True),
        Row("wall_clock_days", "Wall-clock days", "days",
            "=" + model.excel("wall_clock_days"), "On the shared cluster, linear scaling",
            "Calc", True),
        Row("compute_cost_usd", "Compute cost", "US$",
            "=" + model.excel("compute_cost_usd"), "", "Calc", True),
        Row("electricity_kwh", "Accelerator electricity", "kWh",
            "=" + model.excel("electricity_kwh", fix={"server_overhead": 1, "pue": 1}),
            "", "Calc", True),
        Row("iterations_per_year", "Back-to-back runs per year", "runs/year",
            "=" + model.excel("iterations_per_year"), "", "Calc", True),
        Row("flops_vs_moe", "Compute relative to the MoE model", "x",
            "={training_flops}/INDEX(training_flops,1,1)", "", "Calc", True),
        Row("implied_effective_tflops", "Implied TFLOP/s from disclosed hours", "TFLOP/s",
            f'=IF(ISNUMBER({{disclosed_accelerator_hours}}),{_IMPLIED},"")',
            "What the real runs sustained per accelerator", "Calc", True),
    ]  # fmt: skip


def _savings(book, ws, r):
    """What the activation ratio saves, and the ratios against the dense reference."""
    ws.cell(r, 1, "What the activation ratio saves (MoE vs the same model dense)").style = "Section"

    def diff(name):  # same model dense (column 2) minus MoE (column 1)
        return f"=INDEX({name},1,2)-INDEX({name},1,1)"

    r = output_block(
        book,
        ws,
        r + 1,
        [
            ("flops_saved", "Training FLOPs saved", "FLOPs", diff("training_flops"), ""),
            ("flops_saved_share", "Share of FLOPs saved", "%",
             "=1-INDEX(training_flops,1,1)/INDEX(training_flops,1,2)", "= 1 - active / total"),
            ("accelerator_hours_saved", "Accelerator-hours saved", "accelerator-hours",
             diff("accelerator_hours"), ""),
            ("wall_clock_days_saved", "Wall-clock days saved", "days", diff("wall_clock_days"),
             ""),
            ("rental_cost_saved_usd", "Compute cost saved", "US$", diff("compute_cost_usd"), ""),
            ("electricity_kwh_saved", "Electricity saved", "kWh", diff("electricity_kwh"), ""),
        ],
        note_col=NOTE_COL,
        value_col=FIRST_COL,
    )  # fmt: skip
    r += 1
    ws.cell(r, 1, "Against the dense reference (disclosed figures)").style = "Section"
    r = output_block(
        book,
        ws,
        r + 1,
        [
            ("disclosed_hours_ratio", "MoE / dense disclosed accelerator-hours", "%",
             "=INDEX(disclosed_accelerator_hours,1,1)/INDEX(disclosed_accelerator_hours,1,3)",
             "DeepSeek-V3 trained in under a tenth of Llama 3.1 405B's GPU-hours"),
            ("model_flops_ratio", "MoE / dense training FLOPs (6ND)", "%",
             "=INDEX(training_flops,1,1)/INDEX(training_flops,1,3)", ""),
            ("total_params_ratio", "MoE / dense total parameters", "x",
             "=INDEX(total_params,1,1)/INDEX(total_params,1,3)", "A larger model in total"),
        ],
        note_col=NOTE_COL,
        value_col=FIRST_COL,
    )  # fmt: skip
    return r


def _chart(book, ws, r):
    """Accelerator-hours of the three columns, below the tables."""
    chart = BarChart()
    chart.type = "col"
    chart.title = "Accelerator-hours at the same throughput"
    chart.legend = None
    _, row, _, _ = book.rows["accelerator_hours"]
    chart.add_data(
        Reference(ws, min_col=COLUMNS[0], max_col=COLUMNS[-1], min_row=row), from_rows=True
    )
    chart.set_categories(Reference(ws, min_col=COLUMNS[0], max_col=COLUMNS[-1], min_row=4))
    chart.x_axis.title = "Scenario"
    chart.y_axis.title = "Accelerator-hours"
    chart.y_axis.numFmt = NumFmt(formatCode="#,##0", sourceLinked=False)
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.width, chart.height = 18, 8
    ws.add_chart(chart, f"A{r + 2}")


def _paradox(book):
    ws = book.sheet("Efficiency paradox", {"A": 52, "B": 20, "C": 20, "D": 70})
    book.title(
        ws,
        "The efficiency paradox: where the savings go",
        "Cheaper per token does not mean a cheaper frontier: the compute saved per token is "
        "spent again.",
    )
    book.header(ws, 4, ["If the compute of the dense run is spent on the MoE model", "Unit",
                        "Value", "How"])  # fmt: skip
    ws.row_dimensions[4].height = 32
    output_block(
        book,
        ws,
        5,
        [
            ("dense_budget_flops", "Compute budget (the same model run dense)", "FLOPs",
             "=INDEX(training_flops,1,2)", "Link to Comparison"),
            ("tokens_affordable", "Training tokens it buys for the MoE model", "tokens",
             "={dense_budget_flops}/({flops_per_param_token}*INDEX(active_params,1,1))",
             "More data: text, code, images, audio, video"),
            ("tokens_multiple", "Multiple of the MoE model's tokens", "x",
             "={tokens_affordable}/INDEX(training_tokens,1,1)", "= total / active"),
            ("experiments_affordable", "Full MoE training runs it buys", "x",
             "={dense_budget_flops}/INDEX(training_flops,1,1)",
             "More experiments: ablations, data mixes, scaling-law sweeps"),
            ("moe_iterations_per_year", "MoE runs per year on the shared cluster", "runs/year",
             "=INDEX(iterations_per_year,1,1)", "More research iterations"),
            ("dense_iterations_per_year", "Dense-equivalent runs per year", "runs/year",
             "=INDEX(iterations_per_year,1,2)", ""),
            ("moe_runs_in_dense_reference_hours",
             "MoE runs in the dense reference's disclosed hours", "x",
             "=INDEX(disclosed_accelerator_hours,1,3)/INDEX(disclosed_accelerator_hours,1,1)",
             "Llama 3.1 405B's 30.84M H100-hours over DeepSeek-V3's 2.788M H800-hours"),
        ],
    )  # fmt: skip
    put_text(
        ws["A14"],
        "Routing each token to a few experts shrinks one factor of 6 x N x D: the N that "
        "does the work. Teams rarely bank the difference. The same budget buys more tokens "
        "(and new modalities), longer contexts, more ablations before the final run, and "
        "reinforcement-learning and search-heavy post-training, so total compute keeps rising "
        "while the compute behind each unit of capability falls. The bottleneck also moves: "
        "from matrix arithmetic to expert placement in memory and all-to-all traffic between "
        "accelerators, one reason an MoE run sustains fewer TFLOP/s per accelerator (see the "
        "implied TFLOP/s on Comparison).",
    ).style = "Note"
    ws.merge_cells("A14:D18")
    align_table(ws, 4, 4, last_row=12)
    paragraph(
        ws,
        20,
        1,
        "Source: the Compute Lab methodology, 'The Efficiency Paradox' and "
        "'MoE Changes the Bottleneck'; figures from arXiv 2412.19437 and the Llama 3.1 "
        "model card.",
        4,
    )
    Book.finish(ws, freeze="A5")


def build(generated=None):
    """The dense-versus-MoE workbook as an openpyxl Workbook (not saved)."""
    generated = generated or _dt.datetime.now().replace(microsecond=0)
    book = Book()
    _inputs(book)
    _comparison(book)
    _paradox(book)
    add_checks(
        book,
        [
            ("Parameters and tokens > 0",
             "=AND(COUNT(total_params,active_params,training_tokens)=9,"
             "MIN(total_params,active_params,training_tokens)>0)"),
            ("Active parameters <= total parameters",
             "=AND(INDEX(active_params,1,1)<=INDEX(total_params,1,1),"
             "INDEX(active_params,1,3)<=INDEX(total_params,1,3))"),
            ("Throughput, accelerators and power > 0",
             "=AND({effective_tflops}>0,{accelerators}>0,{watts_per_accelerator}>0)"),
            ("Price >= 0", "={usd_per_accelerator_hour}>=0"),
            ("Savings add up: MoE FLOPs + saved = dense FLOPs",
             "=ABS(INDEX(training_flops,1,1)+{flops_saved}-INDEX(training_flops,1,2))"
             "<=1E-9*INDEX(training_flops,1,2)"),
        ],
    )  # fmt: skip
    add_change_log(book, generated)
    add_cover(
        book,
        "Dense versus mixture-of-experts",
        "What DeepSeek-V3's ~5.5% activation ratio saves in FLOPs, accelerator-hours and "
        "money against the same model run dense and against Llama 3.1 405B, and where those "
        "savings go (the Compute Lab methodology's 'efficiency paradox').",
        [
            "Inputs: the MoE and dense columns hold the reference runs; change them to compare "
            "your own pair. The middle column follows the MoE column with every parameter "
            "active.",
            "Shared inputs (throughput, price, cluster) apply to all three columns, so only the "
            "activation ratio and size differ.",
            "Comparison: FLOPs, hours, days and cost, and the savings; Efficiency paradox: what "
            "the same compute buys instead.",
            CHECKS_STEP,
        ],
        SHEETS[1:],
        [
            f"DeepSeek-V3: {catalogue.source('run', 'DeepSeek-V3')}",
            f"Llama 3.1 405B: {catalogue.source('run', 'Llama 3.1 405B')}",
            "The DeepSeek-V3-like example plan (Compute Lab methodology): 400 sustained "
            "TFLOP/s, $2.0/hour, 2,048 accelerators, 700 W",
        ],
        generated,
    )
    order_sheets(book, [s for s, _ in SHEETS])
    set_properties(book, "Dense versus MoE", "Compute Lab planning template", generated)
    return book.wb
