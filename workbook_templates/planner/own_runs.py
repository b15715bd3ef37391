"""The planner's "Our runs" sheet: a team's completed runs, pooled into the default MFU.

One row per completed run (up to :data:`MAX_ROWS`), typed by hand or filled by
``compute-lab templates --own-runs FILE`` (:func:`fill`): the own-runs file's columns
(:data:`udfs.own_runs.COLUMNS`; numbers plain or as text such as 70B, read as the Inputs
sheet reads them: the "as used" columns). Each row gets the row checks :data:`FLAGS` (the
rules of :func:`udfs.own_runs.from_rows`, which the report applies; a FALSE is an ERROR on the
Checks sheet). Each row that passes them gets, in native
formulas, its implied MFU (the spec's ``implied_mfu``), the calibrated default MFU for its
accelerator and size (the spec's ``calibrated_mfu``), its residual LN(implied / default),
its generation's intercept, which identifies the generation (the intercepts are distinct
fitted numbers), and ``own_runs_accelerator_group``: 0 on a calibrated generation, else the
accelerator's catalogue row (an accelerator outside the calibrated generations pools only
with itself: :func:`udfs.calibration.pooling_group`). The pooling constants come from
``udfs/data/calibration.toml``. The sheet holds one organisation's runs: a row naming another
organisation than the first one typed fails ``own_runs_one_organisation``.

The Calculations sheet's blank MFU and blank throughput uncertainty read the named columns
``own_runs_intercept``, ``own_runs_accelerator_group``, ``own_runs_ln_active`` and
``own_runs_counted_residual`` and the cells ``own_runs_size_h``, ``own_runs_k``,
``own_runs_base_narrowing`` and ``own_runs_small_narrowing`` (the rules in :mod:`udfs.plan`):
each run of the plan's pooling group weighs EXP(-|LN(its active / the plan's)| / h), and the
organisation effect is the weighted sum of residuals over (the summed weights + k), as
:class:`udfs.own_runs.OwnRuns` computes it.
With no row filled the planner is the calibrated default, unchanged.
"""

from __future__ import annotations

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from udfs import calibration, model
from udfs.own_runs import BOUNDS, MIN_IMPLIED_MFU, NUMBERS, REQUIRED, pooling_figures

from ..printing import first_page_last_col
from ..sheetkit import Column, check_colours, paragraph, put_text, write_table
from .layout import SIZE_FORMAT, constant_cell, repeat_labels
from .sizes import size_excel

__all__ = [
    "TITLE",
    "MAX_ROWS",
    "INPUT_COLUMNS",
    "FLAGS",
    "FIRST_ROW",
    "own_runs_sheet",
    "fill",
    "read_rows",
    "LETTERS",
]

#: The sheet's title (the reader finds the block by it and by the defined names).
TITLE = "Our runs"
#: Rows of the block: at most this many own runs in a planner (one printed page tall).
MAX_ROWS = 30
#: (own-runs file column, header, unit, width) of the typed columns, in the file's order.
INPUT_COLUMNS = (
    ("name", "Run", "", 15),
    ("organisation", "Organisation", "", 12),
    ("active_params", "Active parameters", "parameters", 12),
    ("total_params", "Total parameters", "parameters", 12),
    ("tokens", "Tokens", "tokens", 11),
    ("accelerator", "Accelerator", "", 15),
    ("accelerators", "Accelerators", "count", 12),
    ("accelerator_hours", "Accelerator-hours", "accelerator-hours", 13),
)
_TOP = 6  # header row of the block
#: The first and last rows of the block (a row's number on the sheet, as the Checks name it).
FIRST_ROW, LAST_ROW = _TOP + 1, _TOP + MAX_ROWS
_PREFIX = "own_run_"  # defined names of the typed columns: own_run_<column>
_USED = "own_runs_used_"  # defined names of the figures as used: own_runs_used_<column>
#: The row checks (TRUE = passes): (defined name of the column, header, ``ADVICE`` key of
#: :mod:`udfs.own_runs`). A FALSE is an ERROR on the Checks sheet: the row counts for nothing
#: here and ``compute-lab report`` refuses it.
FLAGS = (
    ("own_runs_complete", "Row complete", "complete"),
    ("own_runs_figures_ok", "Figures in bounds", "figures"),
    ("own_runs_known_accelerator", "Accelerator known", "accelerator"),
    ("own_runs_unique_name", "Name unique", "unique"),
    ("own_runs_one_organisation", "One organisation", "organisation"),
)


def _used(column):
    """A typed figure as used: the number, text such as 70B read as the Inputs sheet reads it
    (:func:`~workbook_templates.planner.sizes.size_excel`), "" when blank or not a number."""
    x = f"<{_PREFIX}{column}>"
    return f'=IF(ISNUMBER({x}),{x},IF(LEN(TRIM({x}))=0,"",{size_excel(x)}))'


def _u(column):
    return f"<{_USED}{column}>"


def _in_bounds(column):
    """The figure as used is a number within :data:`udfs.own_runs.BOUNDS` (the engine's
    rule: LibreOffice reads text past the largest double, 1e999, as 1.8E308, Gnumeric a
    denormal text as a number)."""
    least, most = BOUNDS[column]
    # the smallest normal double as 2^-1022 (exact): its 17 digits, saved by LibreOffice with
    # 15, would read back as a denormal, an invalid argument (Err:502) on the next opening
    low = "2^-1022" if least == 2.0**-1022 else f"{least:.15g}"
    return f"AND(ISNUMBER({_u(column)}),{_u(column)}>={low},{_u(column)}<={most:.15g})"


#: A row with anything typed (the rows the reader reads, :func:`read_rows`).
_TYPED = "LEN(TRIM(" + "&".join(f"<{_PREFIX}{c}>" for c, *_ in INPUT_COLUMNS) + "))>0"


def _flag_formulas():
    """The row checks (TRUE = passes, "" on a blank row): the rules of
    :func:`udfs.own_runs.from_rows` (:data:`udfs.own_runs.REQUIRED`, ``NUMBERS``, a catalogue
    name, a unique name), counted on the Checks sheet."""
    filled = {c: f"LEN(TRIM(<{_PREFIX}{c}>))>0" for c, *_ in INPUT_COLUMNS}
    figures = [f"OR(NOT({filled[c]}),{_in_bounds(c)})" for c in NUMBERS]
    figures.append(f"OR(NOT(ISNUMBER({_u('active_params')})),NOT(ISNUMBER({_u('total_params')})),"
                   f"{_u('active_params')}<={_u('total_params')})")  # fmt: skip
    # the implied MFU from MIN_IMPLIED_MFU to 1 (an error value: the figures overflow)
    figures.append(
        "IF(ISNUMBER(<own_runs_implied_mfu>),AND(<own_runs_implied_mfu>>="
        f"{MIN_IMPLIED_MFU!r},<own_runs_implied_mfu><=1),"
        "NOT(ISERROR(<own_runs_implied_mfu>)))"
    )
    # a plain range comparison (Gnumeric does not take TRIM or UPPER of a range in SUMPRODUCT)
    earlier = ("SUMPRODUCT((own_runs_name_key=<own_runs_name_key>)"
               "*(ROW(own_runs_name_key)<{row}))=0")  # fmt: skip
    # one organisation: the first organisation typed (a blank one is the sheet's)
    other_org = ("SUMPRODUCT((own_runs_organisation_first=1)"
                 "*(own_runs_organisation_key<><own_runs_organisation_key>))=0")  # fmt: skip
    rules = {
        "own_runs_complete": "AND(" + ",".join(filled[c] for c in REQUIRED) + ")",
        "own_runs_figures_ok": "AND(" + ",".join(figures) + ")",
        "own_runs_known_accelerator": f"OR(NOT({filled['accelerator']}),"
        "<own_runs_catalogue_row>>0)",
        "own_runs_unique_name": f"OR(NOT({filled['name']}),{earlier})",
        "own_runs_one_organisation": f"OR(NOT({filled['organisation']}),{other_org})",
    }
    return {n: f'=IF({_TYPED},{rule},"")' for n, rule in rules.items()}


def _formulas():
    """The calculated columns' templates (``<X>``: column X on the same row)."""
    usable = ("AND(" + ",".join(_in_bounds(c) for c in ("active_params", "tokens",
              "accelerator_hours")) + ",<own_runs_catalogue_row>>0)")  # fmt: skip
    ok = "AND(ISLOGICAL(<own_runs_complete>)," + ",".join(f"<{n}>" for n, *_ in FLAGS) + ")"
    flops = model.excel(
        "training_flops",
        bind={"active_params": _u("active_params"), "training_tokens": _u("tokens")},
    )
    tflops = model.excel(
        "implied_effective_tflops",
        bind={"training_flops": f"({flops})", "accelerator_hours": _u("accelerator_hours")},
    )
    implied = model.excel(
        "implied_mfu",
        bind={
            "implied_effective_tflops": f"({tflops})",
            "peak_tflops": "INDEX(accel_bf16_tflops,MAX(1,<own_runs_catalogue_row>),1)",
        },
    )
    default = model.excel(
        "calibrated_mfu",
        bind={
            "mfu_ln_intercept": "<own_runs_intercept>",
            "active_params": _u("active_params"),
        },
        through=("calibrated_mfu_raw",),
    )
    return {
        **{_USED + c: _used(c) for c in NUMBERS},
        "own_runs_name_key": f"=UPPER(TRIM(<{_PREFIX}name>))",
        "own_runs_organisation_key": f"=UPPER(TRIM(<{_PREFIX}organisation>))",
        "own_runs_organisation_first": "=IF(AND(LEN(<own_runs_organisation_key>)>0,"
        'SUMPRODUCT((own_runs_organisation_key<>"")*(ROW(own_runs_organisation_key)<{row}))=0),'
        "1,0)",
        "own_runs_catalogue_row": f"=IF(LEN(TRIM(<{_PREFIX}accelerator>))=0,0,"
        f"IFERROR(MATCH(TRIM(<{_PREFIX}accelerator>),accel_names,0),0))",
        "own_runs_implied_mfu": f'=IF({usable},{implied},"")',
        **_flag_formulas(),
        "own_runs_intercept": f"=IF({ok},"
        'INDEX(accel_mfu_intercept,MAX(1,<own_runs_catalogue_row>),1),"")',
        # the pooling group: 0 on a calibrated generation (its intercept tells it), else the
        # accelerator's catalogue row (udfs.calibration.pooling_group)
        "own_runs_accelerator_group": "=IF(ISNUMBER(<own_runs_intercept>),"
        'IF(<own_runs_intercept>=mfu_ln_intercept_other,<own_runs_catalogue_row>,0),"")',
        "own_runs_default_mfu": f'=IF(ISNUMBER(<own_runs_intercept>),{default},"")',
        "own_runs_residual": "=IF(ISNUMBER(<own_runs_intercept>),"
        'LN(<own_runs_implied_mfu>/<own_runs_default_mfu>),"")',
        # the pooling's numbers, 0 on a row that does not count (udfs.plan's SUMPRODUCTs)
        "own_runs_ln_active": f"=IF(ISNUMBER(<own_runs_intercept>),LN({_u('active_params')}),0)",
        "own_runs_counted_residual": "=IF(ISNUMBER(<own_runs_intercept>),<own_runs_residual>,0)",
    }


#: Columns that are 0 on a row that does not count (shown blank there).
_ZERO_WHEN_NOT_COUNTED = ("own_runs_ln_active", "own_runs_counted_residual")
_USED_HEADS = {"active_params": "Active", "total_params": "Total", "tokens": "Tokens",
               "accelerators": "Count", "accelerator_hours": "Hours"}  # fmt: skip
_CALC_HEADERS = {
    **{_USED + c: (f"{_USED_HEADS[c]} as used", "", 9) for c in NUMBERS},
    "own_runs_implied_mfu": ("Implied MFU", "fraction", 9),
    **{n: (head, "", w) for (n, head, _), w in zip(FLAGS, (9, 9, 11, 9, 12), strict=True)},
    "own_runs_intercept": ("Generation intercept", "ln units", 11),
    "own_runs_default_mfu": ("Default MFU", "fraction", 9),
    "own_runs_residual": ("LN(implied / default)", "ln units", 11),
    # the working, after the printed columns: on screen, not on paper (:data:`WORKING`)
    "own_runs_name_key": ("Name as compared", "", 12),
    "own_runs_organisation_key": ("Organisation as compared", "", 12),
    "own_runs_organisation_first": ("First organisation", "", 12),
    "own_runs_catalogue_row": ("Catalogue row", "index", 10),
    "own_runs_accelerator_group": ("Accelerator group", "index", 11),
    "own_runs_ln_active": ("LN(active) counted", "ln units", 10),
    "own_runs_counted_residual": ("Residual counted", "ln units", 10),
}
#: The working columns (the comparison keys and the pooling's numbers), the sheet's last: they
#: show on screen and print on no page, so that the runs and their checks print two pages wide.
WORKING = tuple(_CALC_HEADERS)[tuple(_CALC_HEADERS).index("own_runs_name_key") :]


def own_runs_sheet(book):
    """Add the "Our runs" sheet (empty rows) to the planner Book."""
    ws = book.sheet(TITLE)
    book.title(ws, "Our runs: your completed training runs", None)
    p = pooling_figures()
    paragraph(ws, 2, 1, "Type one organisation's completed runs (catalogue accelerator names; "
              "numbers such as 7E9, 7B or 2T), or fill them with compute-lab templates --own-runs "
              "FILE. A blank MFU moves toward your runs on the plan's calibrated generation (an "
              "accelerator outside them: on that accelerator), runs of a size like the plan's "
              "counting most, within the default MFU's bounds, and its spread narrows: more "
              "runs, more pull. A row that fails a row check (FALSE) counts for nothing and is "
              "an ERROR on Checks. The columns after LN(implied / default), the working, show on "
              "screen only.",
              13)  # fmt: skip
    constants = (
        ("own_runs_size_h", "Size width h (ln)", p["h"], "0.00",
         f"a run weighs EXP(-ABS(LN(its active / the plan's)) / h): 10x larger or smaller "
         f"{p['weight_10x']:.0%}"),
        ("own_runs_k", "Pooling k (runs)", p["k"], "0.00",
         f"pull = n_w / (n_w + k), n_w the runs' summed weights: one run of the plan's size "
         f"pulls {p['one_run_pull']:.0%}"),
        ("own_runs_base_narrowing", "Spread removed (all; small)",
         calibration.fitted()["own_runs_base_narrowing"], "0.0%", None),
    )  # fmt: skip
    for r, (name, label, value, fmt, note) in enumerate(constants, start=3):
        put_text(ws.cell(r, 1), label)
        cell = constant_cell(ws, r, 3, value)
        cell.number_format = fmt
        book.place_cell(name, ws, cell.coordinate, named=True)
        if note:
            put_text(ws.cell(r, 4), note).alignment = Alignment(indent=1)
    # the shares of the spread a pull of 1 removes: sigma^2's and a small model's extra's
    cell = constant_cell(ws, 5, 4, calibration.fitted()["own_runs_small_narrowing"])
    cell.number_format = "0.0%"
    book.place_cell("own_runs_small_narrowing", ws, cell.coordinate, named=True)
    put_text(
        ws.cell(5, 5),
        "of sigma^2 and of a small model's extra sigma^2 at a pull of 1 "
        "(fitted with whole organisations held out)",
    ).alignment = Alignment(indent=1)
    columns = [Column(_PREFIX + c, head, unit, inputs=(None,) * MAX_ROWS, width=w)
               for c, head, unit, w in INPUT_COLUMNS]  # fmt: skip
    formulas = _formulas()
    columns += [Column(n, h, u, formula=formulas[n], width=w)
                for n, (h, u, w) in _CALC_HEADERS.items()]  # fmt: skip
    write_table(book, ws, _TOP, columns, MAX_ROWS)
    at = {c.name: get_column_letter(j) for j, c in enumerate(columns, start=1)}
    check_colours(ws, f"{at[FLAGS[0][0]]}{FIRST_ROW}:{at[FLAGS[-1][0]]}{LAST_ROW}")
    for r in range(FIRST_ROW, LAST_ROW + 1):
        for c in NUMBERS:  # a figure as used, compact (a whole token count fits no column)
            ws[f"{at[_USED + c]}{r}"].number_format = "0.00E+00"
        for c in ("own_runs_catalogue_row", "own_runs_accelerator_group",
                  "own_runs_organisation_first"):  # fmt: skip
            ws[f"{at[c]}{r}"].number_format = "0;-0;;@"  # 0 (none, calibrated, no): blank
    for j, c in enumerate(columns, start=1):
        if c.unit == "ln units":  # the pooling's numbers are 0 on a row that does not count
            fmt = "0.0000;-0.0000;;@" if c.name in _ZERO_WHEN_NOT_COUNTED else "0.0000"
            for r in range(_TOP + 1, _TOP + 1 + MAX_ROWS):
                ws.cell(r, j).number_format = fmt
    for row in ws.iter_rows(min_row=_TOP + 1, max_row=_TOP + MAX_ROWS, max_col=len(INPUT_COLUMNS)):
        for cell in row[:2] + row[5:6]:
            cell.number_format = "@"
        for cell in row[2:5]:  # parameters and tokens as on Inputs: 405.0B, 15.6T
            cell.number_format = SIZE_FORMAT
    ws.unmerge_cells("A2:M2")  # the note wraps within the first printed page's columns
    ws.merge_cells(start_row=2, start_column=1, end_row=2, end_column=first_page_last_col(ws))
    ws["A2"].alignment = Alignment(wrap_text=True, vertical="top")
    printed = get_column_letter(len(columns) - len(WORKING))
    book.finish(ws, freeze=f"A{_TOP + 1}", print_titles=f"{_TOP}:{_TOP}",
                print_area=f"A1:{printed}{LAST_ROW}")  # fmt: skip
    repeat_labels(ws)  # two pages wide: the run's name beside its figures on the second
    ws.row_dimensions[_TOP].height = 60  # four lines: "Accelerator-hours (accelerator-hours)"
    return ws


def fill(wb, runs):
    """Write a team's runs (:class:`udfs.own_runs.OwnRuns`) into the sheet's typed cells of
    the planner Workbook ``wb``; refuses more than :data:`MAX_ROWS` runs. Text goes in through
    :func:`~workbook_templates.sheetkit.put_text`: a name such as ``=HYPERLINK(...)`` is
    stored as text, never as a formula."""
    from udfs.validation import CommandError

    if runs.count > MAX_ROWS:
        raise CommandError(
            f"--own-runs: {runs.count} runs, more than the planner's {MAX_ROWS} rows (MAX_ROWS)"
        )
    ws = wb[TITLE]
    for i, rec in enumerate(runs.records()):
        for j, (column, *_) in enumerate(INPUT_COLUMNS):
            value, cell = rec[column], ws.cell(_TOP + 1 + i, 1 + j)
            if isinstance(value, str):
                put_text(cell, value)
            else:
                cell.value = float(value)


#: The sheet's column letter of each typed column (the report names it in a refusal).
LETTERS = {c: get_column_letter(1 + j) for j, (c, *_) in enumerate(INPUT_COLUMNS)}
#: The typed block's cells, {(row, column)}: what the reader reads of the sheet.
AREA = frozenset(
    (r, 1 + j) for r in range(FIRST_ROW, LAST_ROW + 1) for j in range(len(INPUT_COLUMNS))
)


def read_rows(value_at):
    """The typed rows of the sheet: a list of (sheet row, {column: value}) for every row with
    anything typed, in the own-runs file's columns. ``value_at(row, col)`` is the cell's
    value (the reader's saved values)."""
    rows = []
    for r in range(FIRST_ROW, LAST_ROW + 1):
        raw = {c: value_at(r, 1 + j) for j, (c, *_) in enumerate(INPUT_COLUMNS)}
        if any(v is not None and str(v).strip() for v in raw.values()):
            rows.append((r, raw))
    return rows
