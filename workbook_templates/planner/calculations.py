"""The Calculations sheet: the inputs as used and every output, per scenario."""

from __future__ import annotations

from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs import model
from udfs.plan import OWN_RUNS_MFU_EXCEL, PASS_THROUGH, RULES, THROUGHPUT_SOURCE_EXCEL
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS, PRICING_BASES, RANGE_OUTPUTS

from ..sheetkit import DEFAULT_GREY, Book, Row, align_table, put_text
from .layout import (
    FIRST_COL,
    MONEY_FORMAT,
    NOTE_COL,
    SCENARIO_COLUMNS,
    SCENARIO_WIDTH,
    SIZE_FORMAT,
    checks_flag,
    repeat_labels,
    wrap_units,
)
from .sizes import SIZE_INPUTS, size_excel

_INPUTS = {q.name: q for q in PLAN_INPUTS}


#: Inputs in the order of the "as used" rows (hbm_gb_used and catalogue_row go after peak).
_USED = ("total_params", "active_params", "training_tokens", "accelerators", "peak_tflops",
         "mfu", "goodput", "effective_tflops_input", "pricing_basis", *PASS_THROUGH,
         "other_costs_usd")  # fmt: skip
#: Rows after scenario_ready and throughput_source, which their formulas read.
_LATE = ("budget_status", "owner", "throughput_range_pct", "price_range_pct")
#: Spec name -> the planner's row for it: a formula reads the inputs as used.
BIND = {n: f"{{{n}_used}}" for n in (*_USED, *_LATE[2:], "hbm_gb")}
_READY = "=IF({scenario_ready},"
#: Section titles short enough for column A (repeated on the second printed page), and the
#: rest of what they say, in column B (first page only).
_INPUTS_AS_USED = "Inputs as used"
_RANGES = "Ranges: P10 and P90"
SECTION_NOTES = {
    _INPUTS_AS_USED: "A blank input takes its default from Inputs column C.",
    _RANGES: "P50 is the figure above; a lognormal spread.",
}


def _used(name):
    """The row of an input as used: typed, else its blank rule (udfs.plan.RULES)."""
    q = _INPUTS[name]
    rule = RULES.get(name)
    if rule is None:  # a required input: no default
        formula, note = f'IF(ISNUMBER({{{name}}}),{{{name}}},"")', "Required"
    else:
        formula, note = rule.excel_used(f"{{default.{name}}}"), rule.sheet_note
    if name in SIZE_INPUTS:  # a number, or text such as 70B read by the grammar (.sizes)
        blank = '""' if rule is None else rule.excel_blank.replace("{default}", "")
        formula = (f"IF(ISNUMBER({{{name}}}),{{{name}}},"
                   f"IF(ISTEXT({{{name}}}),{size_excel('{' + name + '}')},{blank}))")  # fmt: skip
        note = f"{note}; text such as 70B or 2T read as a number"
    if name == "budget_status":  # a blank counts as Proposed in a filled column only
        formula = f'IF(LEN({{{name}}})>0,{{{name}}},IF({{scenario_ready}},"Proposed",""))'
    if name == "usd_per_kwh":  # a rental all-in price includes the power (udfs.plan)
        formula = f'IF({{pricing_basis_used}}="{PRICING_BASES[0]}",0,{formula})'
        note = "Typed, or column C; 0 with a rental all-in price (the power is in the price)"
    return Row(f"{name}_used", q.label, q.unit, "=" + formula, note, "Link", True)


def _catalogue_rows():
    return [
        Row("catalogue_row", "Accelerator's row in the catalogue", "index",
            "=IF(ISBLANK({accelerator_name}),0,"
            "IFERROR(MATCH({accelerator_name},accel_names,0),0))",
            "0: no accelerator, or not in the catalogue", "Link", True),
        Row("hbm_gb_used", "HBM per accelerator", "GB",
            '=IF({catalogue_row}>0,INDEX(accel_hbm_gb,{catalogue_row},1),"")',
            "From the catalogue (memory check)", "Link", True),
    ]  # fmt: skip


def _default_mfu_rows():
    """The calibrated default MFU in three steps: the generation's intercept, the fitted value,
    and the value kept within its bounds (the spec's ``calibrated_mfu_raw`` and
    ``calibrated_mfu``), so that each step can be read and audited."""
    intercept = ("IF({catalogue_row}>0,INDEX(accel_mfu_intercept,{catalogue_row},1),"
                 "{mfu_ln_intercept_other})")  # fmt: skip
    raw = model.excel(
        "calibrated_mfu_raw",
        bind={
            "mfu_ln_intercept": "{mfu_ln_intercept_used}",
            "active_params": "{active_params_used}",
        },
    )
    clamped = model.excel("calibrated_mfu", bind={"calibrated_mfu_raw": "{calibrated_mfu_raw}"})
    return [
        Row("mfu_ln_intercept_used", "Default MFU: ln intercept", "ln units", "=" + intercept,
            "The accelerator generation's intercept (Accelerators sheet), else 'other'",
            "Link", True),
        Row("calibrated_mfu_raw", "Default MFU before its bounds", "fraction",
            f'=IF(ISNUMBER({{active_params_used}}),{raw},"")',
            "EXP(intercept + slope x LN(active parameters / 1E9))", "Calc", True),
        Row("calibrated_mfu", "Calibrated default MFU", "fraction",
            f'=IF(ISNUMBER({{calibrated_mfu_raw}}),{clamped},"")',
            "Within the lowest and highest default MFU (Inputs, model constants)", "Calc", True),
        Row("own_runs_mfu", "Default MFU with your runs", "fraction", "=" + OWN_RUNS_MFU_EXCEL,
            "Moved toward your runs on this generation (an uncalibrated accelerator: on it), "
            "within the bounds (Our runs sheet)", "Calc", True),
    ]  # fmt: skip


def _output_formula(name):
    """A spec'd output for one column: blank until the scenario is complete."""
    spec = model.excel(name, bind=BIND)
    if name == "effective_tflops":  # the override, when typed, is used as is (udfs.plan)
        override = "{effective_tflops_input_used}"
        spec = f"IF(ISNUMBER({override}),{override},{spec})"
    if name == "total_cost_usd":  # other costs added as they are, as the engine does
        spec = f"{spec}+{{other_costs_usd_used}}"
    if name == "min_accelerators_for_memory":  # needs the catalogue's HBM
        return f'=IF(AND({{scenario_ready}},N({{hbm_gb_used}})>0),{spec},"")'
    return f'{_READY}{spec},"")'


def _calc_rows():
    rows = [_INPUTS_AS_USED]
    for name in _USED:
        rows.append(_used(name))
        if name == "accelerators":
            catalogue_row, hbm = _catalogue_rows()
            rows.append(catalogue_row)
        if name == "peak_tflops":
            rows.append(hbm)
            rows += _default_mfu_rows()
    rows.append(
        Row("scenario_ready", "Scenario complete", "TRUE/FALSE",
            "=AND(ISNUMBER({total_params_used}),ISNUMBER({active_params_used}),"
            "ISNUMBER({training_tokens_used}),"
            "ISNUMBER({accelerators_used}),"
            "OR(N({effective_tflops_input_used})>0,N({peak_tflops_used})>0))",
            "Outputs show only for complete columns", "Calc", True)
    )  # fmt: skip
    rows.append(
        Row("plausible", "Parameters and tokens plausible", "TRUE/FALSE",
            "=OR(NOT({scenario_ready}),AND({total_params_used}>=min_plausible_params,"
            "{active_params_used}>=min_plausible_params,"
            "{training_tokens_used}>=min_plausible_tokens))",
            "At or above the plausibility floors (Inputs): below, typed in the wrong unit",
            "Calc", True)
    )  # fmt: skip
    rows.append(
        Row("throughput_source", "Throughput source", "",
            f'=IF({{scenario_ready}},{THROUGHPUT_SOURCE_EXCEL},"")',
            "Typed throughput (override), typed MFU, or the calibrated default", "Link", True)
    )  # fmt: skip
    rows += [_used(name) for name in _LATE]
    rows.append(
        Row("start_date_used", "Run start date", "date",
            '=IF(ISNUMBER({start_date}),{start_date},"")',
            "Typed, or none: no monthly schedule", "Link", True)
    )  # fmt: skip
    rows.append("Outputs")
    for q in PLAN_OUTPUTS:
        rows.append(Row(q.name, q.label, q.unit, _output_formula(q.name), q.note, "Calc", True))
    rows.append(_RANGES)
    for q in RANGE_OUTPUTS:
        rows.append(Row(q.name, q.label, q.unit, _output_formula(q.name), q.note, "Calc", True))
    return rows


def calculations_sheet(book, scen):
    widths = {"A": 32, "B": 12, "C": 2}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = SCENARIO_WIDTH
    widths[get_column_letter(NOTE_COL)] = 46
    ws = book.sheet("Calculations", widths)
    # Column A repeats on the second printed page: what sits in A fits A (or wraps in it),
    # longer text goes in column B, which prints on the first page only
    book.title(ws, "Calculations", "Nothing to type here.")
    put_text(ws["B2"], "The same formula across each row (the Formula column, on the right).")
    ws["B2"].style = "Note"
    ws["B2"].alignment = Alignment(wrap_text=False)
    checks_flag(ws, "A3").alignment = Alignment(wrap_text=True, vertical="top")
    ws.row_dimensions[3].height = 30  # "Checks: WARN, have a look at the Checks sheet"
    book.header(ws, 4, ["Quantity", "Unit", ""])
    for c in SCENARIO_COLUMNS:
        cell = ws.cell(4, c, book.formula('={scenario_name}&""', ws.title, get_column_letter(c)))
        cell.style = "Header"
    put_text(ws.cell(4, NOTE_COL), "Formula").style = "Header"
    ws.row_dimensions[4].height = 60  # a scenario name wraps to four lines
    book.write_rows(ws, 5, _calc_rows(), SCENARIO_COLUMNS, note_col=NOTE_COL)
    for r in range(5, ws.max_row + 1):
        note = SECTION_NOTES.get(ws.cell(r, 1).value)
        if note:
            put_text(ws.cell(r, 2), note).style = "Note"
            ws.cell(r, 2).alignment = Alignment(wrap_text=False)
    for name in ("throughput_sigma", "price_sigma"):  # ln units: four decimals
        _, row, first, last = book.rows[name]
        for c in range(first, last + 1):
            ws.cell(row, c).number_format = "0.0000"
    _grey_defaults(book, ws)
    for name in SIZE_INPUTS:  # 405.0B, 15.6T: the figure fits its column
        _, row, first, last = book.rows[f"{name}_used"]
        for c in range(first, last + 1):
            ws.cell(row, c).number_format = SIZE_FORMAT
    for r in range(5, ws.max_row + 1):  # $120.0M: a cost of any size fits its column
        if ws.cell(r, 2).value == "US$":
            for c in SCENARIO_COLUMNS:
                ws.cell(r, c).number_format = MONEY_FORMAT
    wrap_units(ws, 5, ws.max_row, widths["B"], skip=SECTION_NOTES.values())
    for name in ("pricing_basis_used", "throughput_source"):  # words wrap within the column
        _, row, first, last = book.rows[name]
        for c in range(first, last + 1):
            ws.cell(row, c).alignment = Alignment(wrap_text=True, vertical="top")
        ws.row_dimensions[row].height = 30
    align_table(ws, 4, NOTE_COL)
    outputs = next(r for r in range(5, ws.max_row + 1) if ws.cell(r, 1).value == "Outputs")
    ws.row_breaks.append(Break(id=outputs - 1))  # page 2: the outputs and ranges, whole
    # the inputs as used, then the outputs and ranges; the header row and the quantities
    # (column A) on every page
    Book.finish(ws, freeze=f"{get_column_letter(FIRST_COL)}5", print_titles="4:4", pages_tall=2)
    repeat_labels(ws)
    return ws


def _grey_defaults(book, ws):
    """An "as used" cell whose input is blank shows its default greyed and in italics, so a
    default is never read as a team's figure (the Inputs cell is blank until typed)."""
    a, b = get_column_letter(FIRST_COL), get_column_letter(SCENARIO_COLUMNS[-1])
    for name in (*_USED, *_LATE):
        _, row, _, _ = book.rows[f"{name}_used"]
        _, input_row, _, _ = book.rows[name]
        ws.conditional_formatting.add(
            f"{a}{row}:{b}{row}",
            FormulaRule(formula=[f"ISBLANK(Inputs!{a}{input_row})"],
                        font=Font(color=DEFAULT_GREY, italic=True)),
        )  # fmt: skip
