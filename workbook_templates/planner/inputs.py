"""The Inputs sheet: one row per input, one column per scenario, the defaults in column C."""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs.numbers import SIZE_EXAMPLES
from udfs.plan import RULES
from udfs.quantities import (
    MODEL_CONSTANTS,
    PLAN_INPUTS,
    PLAUSIBILITY_FLOORS,
)

from ..printing import first_page_last_col
from ..sheetkit import Book, bold, number_format, put_text, validate_rule
from .layout import (
    DEFAULT_COL,
    FIRST_COL,
    INPUT_HEADER_ROW,
    LAST_COL,
    MONEY_FORMAT,
    NOTE_COL,
    RULE_COL,
    SCENARIO_COLUMNS,
    SCENARIO_WIDTH,
    SIZE_FORMAT,
    repeat_labels,
    wrap_units,
)
from .reference import LISTS
from .sizes import SIZE_INPUTS, size_validation

#: Alert texts of the rules whose "<label> must be <rule>." reads badly.
_ERRORS = {
    "a catalogue name": "Pick an accelerator from the list (the Accelerators sheet).",
    "a date": "Type a date (for example 2026-01-15).",
    "text": "Type a short name (1 to 60 characters).",
}


def _validation_for(book, ws, q, rng):
    """Data validation for one input row from its PLAN_INPUTS bound, or its rule when it is
    text (sheetkit's encoding)."""
    rule = q.bound or q.rule
    if q.name in LISTS:  # a dropdown: the named list on the Accelerators sheet
        validate_rule(
            book,
            ws,
            rng,
            "a catalogue name",
            q.label,
            "",
            q.note,
            error=f"Pick a {q.label.lower()}: {q.rule}.",
            list_source=LISTS[q.name][0],
        )
        return
    if q.name in SIZE_INPUTS:  # a number, or text such as 70B (.sizes)
        first = rng.split(":")[0]
        total = None
        if q.name == "active_params":
            total = book.ref("total_params", ws.title, get_column_letter(FIRST_COL))
        book.validation(
            ws, rng, "custom", size_validation(first, total),
            prompt=f"{q.label} ({q.unit}): {q.rule}; {SIZE_EXAMPLES}. {q.note or ''}".strip(),
            error=f"{q.label} must be {SIZE_EXAMPLES} (K, M, B, T or P), greater than 0.",
            title=q.label,
        )  # fmt: skip
        return
    total = None  # the scenario_name row comes before total_params
    if "total_params" in book.rows:
        total = book.ref("total_params", ws.title, get_column_letter(FIRST_COL))
    validate_rule(
        book,
        ws,
        rng,
        rule,
        q.label,
        q.unit,
        q.note,
        error=_ERRORS.get(q.rule),
        total=total,
        list_source="accel_names",
    )


#: Notes that read better on the sheet than the quantity's own note (which ends mid-phrase).
_NOTES = {
    "price_range_pct": "Spread of the price per accelerator-hour, independent of the "
    "throughput uncertainty",
}


def _header(book, ws, scen):
    book.title(
        ws,
        "Inputs",
        "One row per input, one column per scenario. Type in the yellow cells (the grey columns "
        "D-F are fixed references); a blank cell takes the value in column C.",
    )
    put_text(ws.cell(3, 1), "Column type").style = "Note"
    for c, s in zip(SCENARIO_COLUMNS, scen, strict=True):
        put_text(ws.cell(3, c), s["kind"]).style = "Note"  # "Dense reference": two lines
    ws.row_dimensions[3].height = 30
    book.header(ws, INPUT_HEADER_ROW, ["Scenario", "Unit", "Used when blank"])
    put_text(ws.cell(INPUT_HEADER_ROW, NOTE_COL), "Notes and sources").style = "Header"
    put_text(ws.cell(INPUT_HEADER_ROW, RULE_COL), "Allowed values").style = "Header"
    ws.row_dimensions[INPUT_HEADER_ROW].height = 60  # a scenario name wraps to four lines


def _used_when_blank(book, ws, r, q):
    """Column C: the rule's fixed default (a named cell), or what a blank means."""
    rule = RULES.get(q.name)
    if rule is None:  # required inputs
        if q.name != "scenario_name":
            put_text(ws.cell(r, DEFAULT_COL), "required").style = "Note"
        return
    if rule.default is None:
        put_text(ws.cell(r, DEFAULT_COL), rule.blank_text).style = "Note"
        return
    dc = ws.cell(r, DEFAULT_COL, rule.default)
    dc.style = "Constant"
    dc.number_format = number_format(q.unit)
    if q.name == "watts_per_accelerator":  # the TDP first, then this figure
        dc.number_format = '"TDP, else "#,##0'
    book.place_cell(f"default.{q.name}", ws, dc.coordinate)


def _input_rows(book, ws, scen):
    r = INPUT_HEADER_ROW
    for q in PLAN_INPUTS:
        if q.name != "scenario_name":
            r += 1
            note = _NOTES.get(q.name, q.note)
            book.label_cells(ws, r, q.label, q.unit, note, note_col=NOTE_COL)
            put_text(ws.cell(r, RULE_COL), q.rule).style = "Note"
        book.place_row(q.name, ws, r, FIRST_COL, LAST_COL, named=True)
        for c, s in zip(SCENARIO_COLUMNS, scen, strict=True):
            cell = book.input_cell(ws.cell(r, c), s["values"].get(q.name), q.unit)
            if s["kind"] != "Custom":  # references and example: grey and locked, never a plan
                cell.style = "Constant"
                cell.number_format = number_format(q.unit)
            if q.name in SIZE_INPUTS:  # 405.0B, 15.6T: the figure fits its column
                cell.number_format = SIZE_FORMAT
            if q.unit == "US$":  # $120.0M: the figure fits its column
                cell.number_format = MONEY_FORMAT
            if q.name == "scenario_name":
                bold(cell)
                cell.alignment = Alignment(wrap_text=True, vertical="center")
        _used_when_blank(book, ws, r, q)
        for c in range(1, LAST_COL + 1):  # beside a wrapped note, every cell reads from the top
            cell = ws.cell(r, c)
            cell.alignment = Alignment(vertical="top", horizontal=cell.alignment.horizontal,
                                       wrap_text=cell.alignment.wrap_text)  # fmt: skip
        rng = f"{get_column_letter(FIRST_COL)}{r}:{get_column_letter(LAST_COL)}{r}"
        _validation_for(book, ws, q, rng)
    return r


#: The fixed, named cells under the inputs: (section title, quantities).
CONSTANT_SECTIONS = (
    ("Model constants (fixed)", MODEL_CONSTANTS),
    ("Plausibility floors", PLAUSIBILITY_FLOORS),
)


def _constants(book, ws, r):
    for title, quantities in CONSTANT_SECTIONS:
        if title != CONSTANT_SECTIONS[0][0]:
            r += 1  # each section title right under the last: the page holds the sources too
        r = _constant_rows(book, ws, r, title, quantities)
    return r


def _constant_rows(book, ws, r, title, quantities):
    ws.cell(r, 1, title).style = "Section"
    for q in quantities:
        r += 1
        book.label_cells(ws, r, q.label, q.unit, q.note, note_col=NOTE_COL)
        cell = ws.cell(r, DEFAULT_COL, q.default)
        cell.style = "Constant"
        cell.number_format = number_format(q.unit)
        book.place_cell(q.name, ws, cell.coordinate, named=True)
        for c in range(1, NOTE_COL + 1):  # level with a note that wraps to two lines
            cell = ws.cell(r, c)
            if cell.value is not None:
                cell.alignment = Alignment(vertical="top", horizontal=cell.alignment.horizontal,
                                           wrap_text=cell.alignment.wrap_text)  # fmt: skip
    return r


def _note(ws, r, text):
    """A note from column B to the last scenario column that prints on the first page,
    wrapped: it prints whole there (column A repeats on the second page)."""
    cell = put_text(ws.cell(r, 2), text)
    cell.style = "Note"
    cell.alignment = Alignment(wrap_text=True, vertical="top")
    last = min(LAST_COL, first_page_last_col(ws))
    ws.merge_cells(start_row=r, start_column=2, end_row=r, end_column=last)


def _sources(ws, r, scen):
    ws.cell(r, 1, "Sources of the preloaded columns").style = "Section"
    for s in scen:
        if s["note"]:
            r += 1
            put_text(ws.cell(r, 1), s["values"]["scenario_name"]).alignment = Alignment(
                vertical="top", wrap_text=True
            )
            _note(ws, r, s["note"])
    r += 1  # the custom columns right under the preloaded ones: one page for all
    watts = RULES["watts_per_accelerator"].default
    put_text(ws.cell(r, 1), "Custom columns").alignment = Alignment(vertical="top")
    _note(
        ws,
        r,
        "Type the total parameters, tokens and accelerator count (and the active parameters for "
        "an MoE model), then your price and start date. Every other input starts blank and "
        "takes column C (the power follows the accelerator: its catalogue TDP, else "
        f"{watts:,.0f} W); the figure used is on Calculations, greyed while it is a default.",
    )


def inputs_sheet(book, scen):
    """The Inputs sheet: every PLAN_INPUTS row, column C from udfs.plan.RULES."""
    widths = {"A": 34, "B": 12, "C": 14}
    for c in SCENARIO_COLUMNS:
        widths[get_column_letter(c)] = SCENARIO_WIDTH
    widths[get_column_letter(NOTE_COL)] = 50
    widths[get_column_letter(RULE_COL)] = 20
    ws = book.sheet("Inputs", widths)
    _header(book, ws, scen)
    r = _input_rows(book, ws, scen)
    ws.row_breaks.append(Break(id=r + 1))  # page 2: the constants and sources, whole
    r = _constants(book, ws, r + 2)
    wrap_units(ws, INPUT_HEADER_ROW + 1, r, widths["B"])
    _sources(ws, r + 2, scen)
    # two pages wide at 70%: the header row and the input labels (column A) on every page
    Book.finish(
        ws,
        freeze=f"{get_column_letter(FIRST_COL)}{INPUT_HEADER_ROW + 1}",
        print_titles=f"{INPUT_HEADER_ROW}:{INPUT_HEADER_ROW}",
    )
    repeat_labels(ws)
    return ws
