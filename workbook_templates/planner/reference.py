"""The catalogue sheets: Accelerators (the dropdown's source) and Reference runs."""

from __future__ import annotations

import re
import textwrap

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.pagebreak import Break

from udfs import calibration, catalogue, model
from udfs.quantities import BUDGET_STATUSES, PRICING_BASES

from ..printing import first_page_last_col
from ..sheetkit import Book, number_format, paragraph, put_text
from .layout import SIZE_FORMAT, constant_cell, repeat_labels
from .sizes import SUFFIX_ROWS

#: Width of the Accelerators sheet's source column (J): the catalogue and its sources print
#: one page wide, a long source on two lines.
SOURCE_WIDTH = 46
#: Characters of a printed line of a source in that column (italic notes, a safe count).
SOURCE_LINE_CHARS = 42


def accelerators_sheet(book):
    df = catalogue.accelerators()
    ws = book.sheet("Accelerators", {"A": 17, "B": 11, "C": 11, "D": 9, "E": 9, "F": 10,
                                     "G": 8, "H": 10, "I": 10, "J": SOURCE_WIDTH})  # fmt: skip
    book.title(ws, "Accelerator catalogue", "Dense peak figures (vendor 'with sparsity' = 2x).")
    cols = (
        ("name", "Accelerator", ""),
        ("bf16_tflops", "BF16 TFLOP/s", "TFLOP/s"),
        ("fp8_tflops", "FP8 TFLOP/s", "TFLOP/s"),
        ("hbm_gb", "HBM GB", "GB"),
        ("hbm_tb_per_s", "HBM TB/s", "ratio"),
        ("scale_up_gb_per_s", "Scale-up GB/s", "W"),
        ("tdp_watts", "TDP W", "W"),
    )
    book.header(ws, 4, [c[1] for c in cols] + ["ln-MFU intercept", "Extra spread (ln)",
                                                "Source"])  # fmt: skip
    ws.row_dimensions[4].height = 45  # three lines: "Extra / spread / (ln)"
    for i, (_, row) in enumerate(df.iterrows()):
        r = 5 + i
        for j, (field, _, unit) in enumerate(cols):
            constant_cell(ws, r, 1 + j, row[field], unit)
        constant_cell(ws, r, len(cols) + 1, calibration.mfu_intercept(row["name"]), "ratio")
        ws.cell(r, len(cols) + 1).number_format = "0.0000"
        constant_cell(ws, r, len(cols) + 2, calibration.accelerator_extra_sigma(row["name"]),
                      "ratio")  # fmt: skip
        ws.cell(r, len(cols) + 2).number_format = "0.0000"
        source = put_text(ws.cell(r, len(cols) + 3), row["source"])
        source.style = "Note"
        source.alignment = Alignment(wrap_text=True, vertical="top")
        lines = len(textwrap.wrap(row["source"], SOURCE_LINE_CHARS)) or 1
        ws.row_dimensions[r].height = 15.0 * lines
        for c in range(1, len(cols) + 3):  # the figures on the source's first line
            ws.cell(r, c).alignment = Alignment(vertical="top")
    last = 4 + len(df)
    for field, letter in (("names", "A"), ("bf16_tflops", "B"), ("hbm_gb", "D"),
                          ("tdp_watts", "G"), ("mfu_intercept", "H"),
                          ("sigma_extra", "I")):  # fmt: skip
        book.name(f"accel_{field}", f"Accelerators!${letter}$5:${letter}${last}")
    r = _calibration(book, ws, last + 2)
    _lists(book, ws, r + 2)
    # the catalogue on the first page, the calibration and the lists together on the second
    ws.row_breaks.append(Break(id=last + 1))
    Book.finish(ws, freeze="B5")
    return ws


#: Input -> (the named list of its dropdown, section title, note): each list written once,
#: the dropdown's source and the Checks' list.
LISTS = {
    "budget_status": ("budget_statuses", "Budget statuses (the list)", BUDGET_STATUSES,
                      "Blank in a filled column counts as Proposed; Reference and Excluded are "
                      "never in a budget"),
    "pricing_basis": ("pricing_bases", "Pricing bases (the list)", PRICING_BASES,
                      "Only a rental all-in price includes the power: no electricity is added. "
                      "Blank: rental plus power"),
}  # fmt: skip


def _lists(book, ws, r):
    """The dropdowns' lists, one value per cell, each a defined name."""
    for name, title, values, note in LISTS.values():
        ws.cell(r, 1, title).style = "Section"
        for i, value in enumerate(values):
            put_text(ws.cell(r + 1 + i, 1), value).style = "Constant"
        book.name(name, f"Accelerators!$A${r + 1}:$A${r + len(values)}")
        cell = put_text(ws.cell(r, 4), note)  # the title reads over A:C
        cell.style = "Note"
        cell.alignment = Alignment(wrap_text=False)  # one line, beside the title
        r += len(values) + 2
    return _suffixes(book, ws, r)


def _suffixes(book, ws, r):
    """The suffixes of parameters and tokens typed as text (70B, 2T): letters and multipliers."""
    ws.cell(r, 1, "Suffixes of numbers typed as text").style = "Section"
    note = (
        "Parameters and tokens on Inputs may be typed as 70B, 2T, 15.6T or 1.5E12",
        "(any case); Calculations shows the number used",
    )  # two lines: the first page's width
    for i, text in enumerate(note):  # the title reads over A:C
        cell = put_text(ws.cell(r + i, 4), text)
        cell.style = "Note"
        cell.alignment = Alignment(wrap_text=False)
    for i, (letter, value) in enumerate(SUFFIX_ROWS):
        put_text(ws.cell(r + 1 + i, 1), letter).style = "Constant"
        constant_cell(ws, r + 1 + i, 2, value).number_format = "0E+0"
    last = r + len(SUFFIX_ROWS)
    book.name("size_suffixes", f"Accelerators!$A${r + 1}:$A${last}")
    book.name("size_multipliers", f"Accelerators!$B${r + 1}:$B${last}")
    return last


def _calibration(book, ws, r):
    """The calibrated default MFU's other numbers (udfs.calibration), below the table."""
    m = calibration.default_mfu_model()
    ws.cell(r, 1, "Calibrated default MFU (a blank MFU on Inputs)").style = "Section"
    paragraph(
        ws,
        r + 1,
        1,
        "MFU = MIN(max, MAX(min, EXP(intercept + slope x LN(active parameters / 1E9)))): the "
        "intercept of the accelerator's generation (column H; accelerators outside the "
        "calibrated A100, H100 and TPU generations, or a name not listed, take the 'other' "
        "intercept, the shared mean), fitted on the runs with public accelerator-hours, each "
        "generation pulled toward the shared mean by how many organisations support it, and "
        "validated with each organisation left out (docs/methodology-calibration.md). The "
        "spread below comes from those errors and applies to a typed MFU or throughput too, "
        "unless the column types its own uncertainty. Min and max are on Inputs.",
        8,
    )
    items = (
        ("mfu_ln_intercept_other", "'Other' intercept", m.intercepts["other"], "0.0000"),
        ("mfu_ln_slope", "Slope per LN(active / 5B), below 5B", m.slope, "0.0000"),
        ("calibrated_throughput_sigma", "Spread (sigma of ln hours)",
         calibration.throughput_sigma(), "0.0000"),
        ("calibrated_small_model_sigma",
         "Extra spread of a small model (ramps in below 5B; Inputs)",
         calibration.small_model_sigma(), "0.0000"),
        ("accelerator_extra_sigma_other", "Extra spread of an accelerator not listed",
         calibration.accelerator_extra_sigma(""), "0.0000"),
    )  # fmt: skip
    for i, (name, label, value, fmt) in enumerate(items):
        put_text(ws.cell(r + 2 + i, 1), label)
        cell = constant_cell(ws, r + 2 + i, 8, value)
        cell.number_format = fmt
        book.place_cell(name, ws, cell.coordinate, named=True)
    rr = r + 2 + len(items)
    put_text(
        ws.cell(rr, 1),
        "Calibrated throughput uncertainty (P90 / P50 - 1) of a model "
        "above the small-model size on a calibrated generation",
    ).alignment = Alignment(wrap_text=True, vertical="top")
    ws.merge_cells(start_row=rr, start_column=1, end_row=rr, end_column=7)  # two lines
    ws.row_dimensions[rr].height = 30
    base = model.excel("calibrated_range_pct", through=("calibrated_plan_sigma",),
                       bind={"small_model": "0", "accelerator_extra_sigma": "0",
                             "p90_level": "p90_level"})  # fmt: skip
    cell = ws.cell(rr, 8, book.formula("=" + base, ws.title))
    cell.style = "Calc"
    cell.number_format = "0.0%"
    book.place_cell("calibrated_range_pct", ws, cell.coordinate, named=True)
    return rr


#: Reference runs: the printed table ends with a short source (the document or its address);
#: the full sources, with tables and quotes, sit to its right (on screen, not printed).
SHORT_SOURCE_COL, SOURCE_COL, HOURS_SOURCE_COL = 15, 16, 17
_URL = re.compile(r"https?://(\S+?)[,;)]?(?:\s|$)")


#: Most characters of a short source (its printed column holds them on one line).
SHORT_SOURCE_CHARS = 56


def short_source(text):
    """The document a source names, in one line of at most :data:`SHORT_SOURCE_CHARS`: its name
    and web address (without https://), else its name and the arXiv number or the site."""
    head = re.split(r" \(", text, maxsplit=1)[0]
    m = _URL.search(head + " ")
    if not m:
        return head if len(head) <= SHORT_SOURCE_CHARS else head[: SHORT_SOURCE_CHARS - 3] + "..."
    name = head[: m.start()].rstrip(", ")
    address = m.group(1)
    for short in (
        f"{name}, {address}" if name else address,
        f"{name}, arXiv {address.rsplit('/', 1)[-1]}" if "arxiv.org/" in address else "",
        f"{name}, {address.split('/')[0]}",
    ):
        if short and len(short) <= SHORT_SOURCE_CHARS:
            return short
    return name if len(name) <= SHORT_SOURCE_CHARS else name[: SHORT_SOURCE_CHARS - 3] + "..."


def reference_sheet(book):
    df = catalogue.runs()
    ws = book.sheet("Reference runs", {"A": 22, "B": 7, "C": 11, "D": 11, "E": 10, "F": 16,
                                       "G": 12, "H": 12, "I": 10, "J": 8, "K": 8, "L": 8,
                                       "M": 9, "N": 8, "O": 56, "P": 90, "Q": 90})  # fmt: skip
    book.title(ws, "Reference runs")
    put_text(
        ws["A2"],
        "Public disclosures. Implied TFLOP/s = 6 x active x tokens / disclosed accelerator-hours; "
        "implied MFU = that / the accelerator's dense peak. Full sources: columns P and Q (on "
        "screen; the print shows the document).",
    ).style = "Note"
    ws["A2"].alignment = Alignment(wrap_text=True, vertical="top")
    last_col = first_page_last_col(ws)  # wrapped within the first printed page
    ws.merge_cells(start_row=2, start_column=1, end_row=2, end_column=last_col)
    ws.row_dimensions[2].height = 30  # two lines
    cols = (
        ("name", "Run", ""),
        ("architecture", "Dense / MoE", ""),
        ("total_params", "Total parameters", "parameters"),
        ("active_params", "Active parameters", "parameters"),
        ("training_tokens", "Training tokens", "tokens"),
        ("accelerator", "Accelerator", ""),
        ("accelerators", "Accelerators", "accelerators"),
        ("accelerator_hours", "Disclosed accelerator-hours", "accelerator-hours"),
    )
    heads = [c[1] for c in cols] + [
        "Model FLOPs (6ND)",
        "Peak TFLOP/s",
        "Implied TFLOP/s",
        "Implied MFU",
        "Disclosed MFU",
        "Active / total",
        "Source (the document)",
        "Source, in full",
        "Source of the accelerator-hours",
    ]
    book.header(ws, 4, heads)
    ws.row_dimensions[4].height = 45
    for i, (name, row) in enumerate(df.iterrows()):
        r = 5 + i
        for j, (field, _, unit) in enumerate(cols):
            cell = constant_cell(ws, r, 1 + j, row[field], unit)
            if unit in ("parameters", "tokens"):
                cell.number_format = SIZE_FORMAT  # 405.0B, 15.6T: one line
        for c, (formula, unit) in _run_formulas(r).items():
            ws.cell(r, c, formula).number_format = number_format(unit)
        constant_cell(ws, r, 13, row["disclosed_mfu"], "fraction")
        ws.cell(r, 14, f'=IF(COUNT(C{r},D{r})=2,D{r}/C{r},"")').number_format = "0.0%"
        full = catalogue.source("run", name)
        put_text(ws.cell(r, SHORT_SOURCE_COL), short_source(full)).style = "Note"
        put_text(ws.cell(r, SOURCE_COL), full).style = "Note"
        hours = catalogue.source("run", name, "accelerator_hours")
        same = hours == full  # said once
        put_text(ws.cell(r, HOURS_SOURCE_COL), "the same" if same else hours).style = "Note"
    last = 4 + len(df)
    for row in ws.iter_rows(min_row=5, max_row=last, max_col=len(heads)):
        for cell in row:  # one line per run: the full sources do not wrap
            apart = cell.column in (2, 6, SHORT_SOURCE_COL)  # text after a right-aligned figure
            cell.alignment = Alignment(vertical="top", wrap_text=False,
                                       horizontal="left" if apart else cell.alignment.horizontal,
                                       indent=1 if apart else 0)  # fmt: skip
    book.name("ref_run_names", f"'Reference runs'!$A$5:$A${last}")
    book.name("ref_implied_tflops", f"'Reference runs'!$K$5:$K${last}")
    book.name("ref_implied_mfu", f"'Reference runs'!$L$5:$L${last}")
    _median(book, ws, last)
    # one page tall too: the catalogue's runs (60) outgrew one page at the width's scale
    Book.finish(ws, freeze="B5", print_titles="4:4", pages_tall=1,
                print_area=f"A1:{get_column_letter(SHORT_SOURCE_COL)}{last + 3}")  # fmt: skip
    repeat_labels(ws)  # the run's name beside its short source on the second page
    return ws


def _run_formulas(r):
    """Column -> (formula, unit) of reference run row ``r``: FLOPs, peak, implied TFLOP/s, MFU."""
    flops = model.excel(
        "training_flops",
        {"flops_per_param_token": "flops_per_param_token", "active_params": f"D{r}",
         "training_tokens": f"E{r}"},
    )  # fmt: skip
    tflops = model.excel(
        "implied_effective_tflops", {"training_flops": f"I{r}", "accelerator_hours": f"H{r}"}
    )
    mfu = model.excel("implied_mfu", {"implied_effective_tflops": f"K{r}", "peak_tflops": f"J{r}"})
    peak = f'IFERROR(INDEX(accel_bf16_tflops,MATCH(F{r},accel_names,0),1),"")'
    return {
        9: (f'=IF(COUNT(D{r},E{r})=2,{flops},"")', "FLOPs"),
        10: (f'=IF(F{r}="","",{peak})', "TFLOP/s"),
        11: (f'=IF(AND(ISNUMBER(I{r}),ISNUMBER(H{r})),{tflops},"")', "TFLOP/s"),
        12: (f'=IF(AND(ISNUMBER(K{r}),N(J{r})>0),{mfu},"")', "fraction"),
    }


def _median(book, ws, last):
    """The median implied MFU below the table (for comparison with the calibrated default)."""
    r = last + 2
    put_text(ws.cell(r, 1), "Median implied MFU")
    cell = ws.cell(r, 2, f"=MEDIAN(L5:L{last})")  # beside its label, on the same page
    cell.number_format = "0.0%"
    cell.alignment = Alignment(horizontal="left")
    book.place_cell("ref.median_mfu", ws, cell.coordinate, named=False)
    book.name("ref_median_mfu", f"'Reference runs'!$B${r}")
    paragraph(
        ws,
        r + 1,
        2,  # from B: column A holds the median's label
        "A blank MFU on Inputs takes the calibrated default (by the accelerator's generation and "
        "the active parameters: the Accelerators sheet), fitted on these runs; this median is "
        "for comparison. Disclosed hours may include failures, restarts, evaluation and other "
        "phases, so implied MFU can sit below a paper's MFU.",
        first_page_last_col(ws),  # within the first printed page's columns
    ).alignment = Alignment(wrap_text=True, vertical="top")
