"""How the workbooks print and read: header/footer, print areas, row heights, charts, markers.

The layout checks read the generated files (no LibreOffice); the page counts print them to
PDF with headless LibreOffice (skipped without soffice) and read the page count from the PDF.
"""

from __future__ import annotations

import os
import re

import openpyxl
import pytest
from helpers import is_true
from openpyxl.utils import get_column_letter, range_boundaries

from workbook_templates import generate
from workbook_templates.planner.monthly import MONTH_FORMAT, PRINTED_MONTHS
from workbook_templates.sheetkit import BOOLEAN_FORMAT, TEMPLATE_VERSION

PLANNER = "training-run-planner.xlsx"
#: Most pages each workbook may print to (LibreOffice, A4 landscape): the planner 34 on main
#: before issue 18 (54 reference runs with their sources), 23 now (Calculations and
#: Summary one page tall, a reference run's source said once), 24 with the one-page Our runs
#: sheet (issue 17).
PLANNER_PAGES = 24
MAX_PAGES = {PLANNER: PLANNER_PAGES, "cluster-sizing.xlsx": 6, "dense-vs-moe.xlsx": 6}
#: Sheets whose words this work owns: none of them may say "seed" or "source project".
OWNED = {
    PLANNER: ("Sensitivity", "Monthly spend", "Charts"),
    "cluster-sizing.xlsx": ("Inputs", "Sizing", "Iterations"),
    "dense-vs-moe.xlsx": ("Inputs", "Comparison", "Efficiency paradox"),
}


@pytest.fixture(scope="module", params=sorted(generate.TEMPLATES))
def workbook(request, generated_templates):
    path = generated_templates[request.param]
    return path, openpyxl.load_workbook(path)


@pytest.fixture(scope="module")
def planner(generated_templates):
    return openpyxl.load_workbook(generated_templates[PLANNER])


def test_docs_name_every_sheet_that_prints_two_pages_wide(workbook):
    """docs/workbooks.md: one page wide, except the planner's Inputs, Calculations and
    Reference runs (two pages wide, first column repeated)."""
    from pathlib import Path

    path, wb = workbook
    doc = " ".join((Path(__file__).parents[1] / "docs" / "workbooks.md").read_text().split())
    wide = {"Inputs", "Calculations", "Reference runs"} if path.name == PLANNER else set()
    assert "prints one page wide, except three wide planner sheets" in doc
    for ws in wb:
        pages = ws.page_setup.fitToWidth
        assert pages == (2 if ws.title in wide else 1), (path.name, ws.title, pages)
        if ws.title in wide:
            assert ws.print_title_cols == "$A:$A" and ws.title in doc, ws.title


def test_every_sheet_has_the_header_and_footer(workbook):
    path, wb = workbook
    for ws in wb:
        header, footer = ws.oddHeader, ws.oddFooter
        assert header.left.text == "&F", (path.name, ws.title)  # file
        assert header.center.text == "&A", (path.name, ws.title)  # sheet
        assert header.right.text == f"Template version {TEMPLATE_VERSION}"
        assert footer.right.text == "Page &P of &N", (path.name, ws.title)
        # the date in the sheets' own format (yyyy-mm-dd)
        assert re.search(r"\b\d{4}-\d{2}-\d{2}\b", footer.left.text), footer.left.text


def test_every_sheet_has_a_print_area_fit_to_the_page_width(workbook):
    path, wb = workbook
    for ws in wb:
        assert ws.print_area, (path.name, ws.title)
        assert ws.sheet_properties.pageSetUpPr.fitToPage, (path.name, ws.title)
        assert ws.page_setup.fitToWidth in (1, 2), (path.name, ws.title)
        assert ws.page_setup.orientation == "landscape"
        # the area holds every filled cell (except the rows kept off the page on purpose)
        min_col, min_row, max_col, max_row = range_boundaries(ws.print_area.split("!")[-1])
        if ws.title in ("Monthly spend", "Charts"):
            continue
        for row in ws.iter_rows():
            for c in row:
                if c.value not in (None, ""):
                    assert c.column <= max_col and c.row <= max_row, (ws.title, c.coordinate)


def _width(ws, col):
    letter = get_column_letter(col)
    width = ws.column_dimensions[letter].width if letter in ws.column_dimensions else None
    return width or 8.43


def test_no_wrapped_text_is_taller_than_its_row(workbook):
    """Estimated lines (text length / characters per line of the column) x 12 pt <= row height."""
    path, wb = workbook
    for ws in wb:
        spans = {}
        for merged in ws.merged_cells.ranges:
            width = sum(_width(ws, c) for c in range(merged.min_col, merged.max_col + 1))
            height = sum(
                ws.row_dimensions[r].height or 15.0
                for r in range(merged.min_row, merged.max_row + 1)
            )
            spans[(merged.min_row, merged.min_col)] = (width, height)
        for row in ws.iter_rows():
            for c in row:
                if not isinstance(c.value, str) or c.data_type == "f":
                    continue
                if not c.alignment.wrap_text:
                    continue
                width, height = spans.get(
                    (c.row, c.column), (_width(ws, c.column), ws.row_dimensions[c.row].height)
                )
                per_line = max(1, int(width * 1.15))
                lines = sum(max(1, -(-len(part) // per_line)) for part in c.value.split("\n"))
                assert lines * 12 <= (height or 15.0) + 0.5, (path.name, ws.title, c.coordinate)


def test_every_chart_axis_has_a_title(workbook):
    path, wb = workbook
    for ws in wb:
        for chart in ws._charts:
            for axis in (chart.x_axis, chart.y_axis):
                assert axis.title is not None, (path.name, ws.title, chart.title)
                assert axis.delete is False


def test_days_against_accelerators_charts_are_on_log_axes(generated_templates):
    found = 0
    for name in (PLANNER, "cluster-sizing.xlsx"):
        wb = openpyxl.load_workbook(generated_templates[name])
        for ws in wb:
            for chart in ws._charts:
                if chart.tagname == "scatterChart":
                    assert chart.x_axis.scaling.logBase == 10, (name, ws.title)
                    assert chart.y_axis.scaling.logBase == 10, (name, ws.title)
                    found += 1
    assert found >= 3  # planner Charts, cluster-sizing Sizing and Iterations


def test_dollar_axes_are_formatted_as_dollars(planner):
    ws = planner["Charts"]
    dollar = [c for c in ws._charts if "US$" in str(c.y_axis.title.tx.rich.p[0].r[0].t)]
    assert len(dollar) >= 2
    for chart in dollar:
        assert chart.y_axis.numFmt.formatCode.startswith('"$"')


def test_charts_plot_the_filled_scenarios_and_two_per_page(planner):
    ws = planner["Charts"]
    # every bar chart reads the table of filled scenarios on Charts, not Calculations' columns
    bars = [c for c in ws._charts if c.tagname == "barChart"]
    assert len(bars) == 4
    for chart in bars:
        for series in chart.series:
            assert series.val.numRef.f.startswith("'Charts'!") or series.val.numRef.f.startswith(
                "Charts!"
            )
    # the range chart: an invisible P10 base under two stacked segments
    (rng,) = [c for c in bars if c.grouping == "stacked"]
    assert len(rng.series) == 3 and rng.series[0].graphicalProperties.noFill
    # the table lists filled scenarios by formula (MATCH on their place), never by position
    table = [ws.cell(r, 2).value for r in range(23, 31)]
    assert all("MATCH(" in v for v in table)
    breaks = [b.id for b in ws.row_breaks.brk]
    assert len(breaks) == 2
    anchors = sorted(c.anchor._from.row + 1 for c in ws._charts)
    pages = [sum(a >= b for b in breaks) for a in anchors]
    assert max(pages.count(p) for p in set(pages)) <= 2


def test_sensitivity_axes_centre_on_the_selected_scenario_and_mark_the_base(planner):
    ws = planner["Sensitivity"]
    titles = [r for r in range(5, 60) if str(ws.cell(r, 1).value).endswith("highest)")]
    assert len(titles) == 4
    for top in titles:
        base_col = ws.cell(top + 1, 6)  # the 4th of 7 column-axis values
        base_row = ws.cell(top + 5, 2)  # the 4th of 7 row-axis values
        for axis in (base_col, base_row):
            assert axis.number_format.endswith('" (base)"') and axis.font.bold
            # the base step: the 4th of the named steps, which holds 1 (issue 18)
            assert re.search(r"Summary'?!\$C\$\d+\*INDEX\(sens_steps_\w+,1,4\)",
                             str(axis.value)), axis.value  # fmt: skip
        cell = ws.cell(top + 5, 6)
        assert cell.border.left.style == "medium" and cell.font.bold  # the base case, boxed
    # the spend-per-month grid depends on the selected scenario (its accelerators and price)
    top = titles[-1]
    assert "Summary'!" in str(ws.cell(top + 1, 3).value)
    assert "Summary'!" in str(ws.cell(top + 2, 2).value)


def test_monthly_spend_month_format_and_one_printed_page(planner):
    ws = planner["Monthly spend"]
    ((_, ref),) = planner.defined_names["monthly_month"].destinations
    _, min_row, _, max_row = range_boundaries(ref.replace("$", ""))
    assert max_row - min_row + 1 == 60
    for r in range(min_row, max_row + 1):
        assert ws.cell(r, 1).number_format == MONTH_FORMAT
        assert ws.cell(r, 2).number_format == MONTH_FORMAT
    # one page: the links, the header and the first PRINTED_MONTHS months
    _, _, _, last = range_boundaries(ws.print_area.split("!")[-1].replace("$", ""))
    assert last == min_row + PRINTED_MONTHS - 1
    assert ws.page_setup.fitToHeight == 1
    # the P90 line: each month's P50 total x the selected scenario's P90/P50 ratio
    assert "monthly_total_cost_usd_p90" in planner.defined_names
    ratio = [
        c for row in ws.iter_rows(max_row=12) for c in row if "total_cost_usd_p90" in str(c.value)
    ]
    ((sheet, switch),) = planner.defined_names["active_scenario"].destinations
    assert sheet and switch  # a named cell is read by its name (issue 18)
    assert ratio and "INDEX(total_cost_usd,1,active_scenario)" in str(ratio[0].value)
    # labels never share a cell's width with the next column (merged over two columns)
    merged = {str(m) for m in ws.merged_cells.ranges}
    assert {"A5:B5", "A6:B6", "A7:B7"} <= merged


def test_no_seed_or_source_project_in_what_users_read(generated_templates):
    for name, sheets in OWNED.items():
        wb = openpyxl.load_workbook(generated_templates[name])
        for title in sheets:
            for row in wb[title].iter_rows():
                for c in row:
                    text = str(c.value or "").lower()
                    if c.data_type == "f":
                        text = " ".join(re.findall(r'"([^"]*)"', text))
                    assert "seed" not in text and "source project" not in text, (name, c)


def test_cluster_sizing_headers_have_one_unit_and_separators(generated_templates):
    wb = openpyxl.load_workbook(generated_templates["cluster-sizing.xlsx"])
    ws = wb["Sizing"]
    headers = [ws.cell(5, c).value for c in range(2, 6)]
    for text in headers:
        assert text.count("(") <= 1 and "(x)" not in text, text
    for r in range(6, 14):
        assert ws.cell(r, 3).number_format.startswith("#,##0")
    assert ws.row_dimensions[5].height >= 30


def test_dense_vs_moe_reads_level(generated_templates):
    wb = openpyxl.load_workbook(generated_templates["dense-vs-moe.xlsx"])
    ws = wb["Inputs"]
    assert ws["E8"].value != "n/a" and ws["E8"].alignment.horizontal == "right"
    assert {ws.cell(4, c).alignment.vertical for c in range(1, 8)} == {"center"}
    notes = wb["Comparison"]
    for r in range(5, 30):
        cell = notes.cell(r, 7)
        if cell.value:
            assert cell.alignment.indent >= 1, cell.coordinate


#: Most pages a sheet may print to: the sheets this layout work owns, and the covers.
MAX_SHEET_PAGES = {
    PLANNER: {"Cover": 1, "Sensitivity": 2, "Monthly spend": 1, "Charts": 3, "Our runs": 1},
    "cluster-sizing.xlsx": {"Cover": 1, "Inputs": 1, "Sizing": 1, "Iterations": 1},
    "dense-vs-moe.xlsx": {"Cover": 1, "Inputs": 1, "Comparison": 1, "Efficiency paradox": 1},
}


@pytest.fixture(scope="module")
def pdfs(generated_templates, tmp_path_factory):
    from helpers import require_soffice

    from workbook_templates.recalc import convert

    require_soffice()
    out = tmp_path_factory.mktemp("pdf")
    return {p.stem + ".xlsx": p for p in convert(list(generated_templates.values()), out, "pdf")}


def _page_count(pdf):
    data = pdf.read_bytes()
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", data)]
    if not counts:
        counts = [int(n) for n in re.findall(rb"/Count\s+(\d+)", data)]
    return max(counts)


@pytest.mark.parametrize("name", sorted(MAX_PAGES))
def test_pdf_page_counts_stay_within_bounds(pdfs, name):
    assert 1 <= _page_count(pdfs[name]) <= MAX_PAGES[name]


@pytest.mark.parametrize("name", sorted(MAX_SHEET_PAGES))
def test_each_sheet_prints_on_few_pages_with_its_header(pdfs, name):
    """The page header names the sheet (so it is printed); count the pages of each sheet."""
    import shutil
    import subprocess
    from collections import Counter

    if shutil.which("pdftotext") is None:
        if os.environ.get("CI"):
            pytest.fail("poppler's pdftotext is required when CI is set: run `make libreoffice`")
        pytest.skip("poppler's pdftotext is not installed")
    pdf = pdfs[name]
    sheets = Counter()
    for page in range(1, _page_count(pdf) + 1):
        text = subprocess.run(
            ["pdftotext", "-f", str(page), "-l", str(page), str(pdf), "-"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        assert lines[0] == name, (page, lines[:3])  # the header: the file name first
        sheets[lines[1]] += 1
        assert f"Page {page} of " in text and f"Template version {TEMPLATE_VERSION}" in text
    for sheet, most in MAX_SHEET_PAGES[name].items():
        assert 1 <= sheets[sheet] <= most, (sheet, dict(sheets))


# -- recalculated by LibreOffice -----------------------------------------------------------------


def _values(path):
    return openpyxl.load_workbook(path, data_only=True)


def _named(wb, name):
    ((sheet, ref),) = wb.defined_names[name].destinations
    got = wb[sheet][ref.replace("$", "")]
    if isinstance(got, openpyxl.cell.cell.Cell):
        return [got.value]
    return [c.value for row in got for c in row]


def test_charts_list_only_the_filled_scenarios_in_order(recalculated_variants):
    """Custom 1 and 2 filled (planner-custom): five scenarios charted, empty columns left out."""
    wb = _values(recalculated_variants["planner-custom.xlsx"])
    ready = _named(wb, "scenario_ready")
    names = _named(wb, "scenario_name")
    hours = _named(wb, "accelerator_hours")
    want = [(n, h) for n, h, ok in zip(names, hours, ready, strict=True) if is_true(ok)]
    ws = wb["Charts"]
    got = [(ws.cell(r, 2).value, ws.cell(r, 8).value) for r in range(23, 31)]
    # the team's filled columns first (issue 18: charted apart), the three references last
    assert got[:2] == want[3:] and got[5:] == want[:3] and len(want) == 5
    assert all(n in (None, "") for n, _ in got[2:5])


def test_monthly_p90_line_is_p50_times_the_scenarios_ratio(recalculated_variants):
    """Needs the contract's total_cost_usd_p90 on Calculations (issue 11, another branch)."""
    wb = _values(recalculated_variants["planner-typed.xlsx"])
    k = _named(wb, "active_scenario")[0] - 1
    ratio = _named(wb, "total_cost_usd_p90")[k] / _named(wb, "total_cost_usd")[k]
    p50 = _named(wb, "monthly_total_cost_usd")
    p90 = _named(wb, "monthly_total_cost_usd_p90")
    assert ratio >= 1
    for a, b in zip(p50, p90, strict=True):
        assert b == pytest.approx(a * ratio, rel=1e-9, abs=1e-9)


# -- issue 13, second reading: what a finance reader sees ----------------------------------------


def _shown_text(cell):
    """The text a cell shows: its string, or the quoted strings of its formula."""
    text = str(cell.value or "")
    if cell.data_type == "f":
        text = " ".join(re.findall(r'"([^"]*)"', text))
    return text


def test_no_seed_code_names_or_backticks_anywhere(workbook):
    """Every sheet of every workbook: no "seed", no ``udfs.`` module names, no backticks."""
    path, wb = workbook
    for ws in wb:
        for row in ws.iter_rows():
            for c in row:
                text = _shown_text(c)
                assert "seed" not in text.lower(), (path.name, ws.title, c.coordinate, text)
                assert "udfs." not in text and "`" not in text, (path.name, ws.title, c.coordinate)


def test_change_log_has_this_versions_entry(workbook):
    path, wb = workbook
    ws = wb["Change log"]
    versions = [ws.cell(r, 1).value for r in range(5, ws.max_row + 1)]
    assert TEMPLATE_VERSION in versions, (path.name, versions)
    entry = ws.cell(5 + versions.index(TEMPLATE_VERSION), 3).value
    for words in ("budget status", "calibrated default MFU", "P10/P90", "three states", "print"):
        assert words in entry, (path.name, words)


def test_check_cells_show_true_or_false_in_every_spreadsheet(workbook):
    """LibreOffice can print a logical value as 1/0: every check cell carries the format."""
    path, wb = workbook
    ws = wb["Checks"]
    # the planner's master cause (a row number and a text) and first failing columns are
    # not checks: columns C to K of the check rows only
    skip = ("Row of the first failing check", "Cause of an ERROR")
    checks = [
        c
        for row in ws.iter_rows(min_row=5, min_col=3, max_col=11)
        for c in row
        if c.data_type == "f" and not str(ws.cell(c.row, 1).value).startswith(skip)
    ]
    assert len(checks) >= 5
    for c in checks:
        assert c.number_format == BOOLEAN_FORMAT, (path.name, c.coordinate, c.number_format)
    if path.name == PLANNER:
        monthly = wb["Monthly spend"]
        (ready,) = [
            monthly.cell(c.row, 8)
            for row in monthly.iter_rows(max_row=12, max_col=7)
            for c in row
            if c.value == "Schedule ready"
        ]
        assert ready.number_format == BOOLEAN_FORMAT
        # "Scenario complete" on Calculations and on Summary: TRUE, not 1, after LibreOffice
        ((sheet, ref),) = wb.defined_names["scenario_ready"].destinations
        cells = [c for row in wb[sheet][ref.replace("$", "")] for c in row]
        summary = wb["Summary"]
        cells += [summary.cell(r, 3) for r in range(1, summary.max_row + 1)
                  if summary.cell(r, 1).value == "Scenario complete"]  # fmt: skip
        assert len(cells) == 9 and cells[-1].parent.title == "Summary"
        for c in cells:
            assert c.number_format == BOOLEAN_FORMAT, (c.parent.title, c.coordinate)


def test_summary_speaks_to_a_finance_reader(planner):
    """No formula vocabulary (INDEX, active_scenario) in the Summary's own text."""
    texts = [c.value for row in planner["Summary"].iter_rows() for c in row
             if isinstance(c.value, str) and c.data_type == "s"]  # fmt: skip
    assert any("Calculations sheet" in t for t in texts)
    for t in texts:
        assert "INDEX(" not in t and "active_scenario" not in t, t


def test_sensitivity_header_values_have_room(planner):
    """The checks verdict (up to "WARN: have a look at Checks") is never cut by the next cell."""
    ws = planner["Sensitivity"]
    merged = {str(m) for m in ws.merged_cells.ranges}
    assert {"C3:D3", "G3:I3"} <= merged
    assert "sel" not in str(ws["G3"].value) and "Checks" in str(ws["G3"].value)
    width = sum(_width(ws, c) for c in range(7, 10))
    assert width >= len("Checks: WARN: have a look at Checks") + 2
    assert ws["F3"].number_format.endswith("%") or "0.0" in ws["F3"].number_format


@pytest.mark.parametrize("sheet", ["Inputs", "Calculations", "Reference runs"])
def test_repeated_title_column_holds_only_what_fits_it(planner, sheet):
    """These sheets print two pages wide with column A repeated: on the right-hand page A stands
    alone, so nothing starting in A may run into B (no merge past A, no unwrapped overflow)."""
    ws = planner[sheet]
    assert ws.print_title_cols == "$A:$A"
    width = _width(ws, 1)
    for merged in ws.merged_cells.ranges:
        assert merged.min_col > 1, str(merged)
    for r in range(2, ws.max_row + 1):
        c = ws.cell(r, 1)
        if not isinstance(c.value, str) or c.alignment.wrap_text:
            continue
        # characters per width unit: the generic test's 1.15, 1.0 for a bold, larger heading
        per_width = 1.0 if c.style in ("Section", "Title", "Header") else 1.15
        assert len(c.value) <= width * per_width, (c.coordinate, c.value)


def test_reference_sources_wrap_within_their_rows(planner):
    """Each source is word-wrapped (a URL breaks anywhere): its lines fit the row height."""
    import textwrap

    ws = planner["Reference runs"]
    rows = [r for r in range(5, ws.max_row + 1) if ws.cell(r, 15).value]
    assert len(rows) >= 20
    for r in rows:
        for col in (15, 16):
            c = ws.cell(r, col)
            assert c.alignment.wrap_text
            per_line = int(_width(ws, col) * 1.15)  # the generic test's characters per line
            lines = len(textwrap.wrap(str(c.value), per_line, break_long_words=True))
            assert lines * 12 <= ws.row_dimensions[r].height, (c.coordinate, lines)
    # the median's label, value and note all sit in the first printed page's columns
    ((_, ref),) = planner.defined_names["ref_median_mfu"].destinations
    value = ws[ref.replace("$", "")]
    assert ws.cell(value.row, 1).value == "Median implied MFU" and value.column <= 3
    (note,) = [m for m in ws.merged_cells.ranges if m.min_row == value.row + 1]
    assert 1 < note.min_col and note.max_col <= 10


def test_range_chart_and_empty_charts_are_explained(planner):
    from workbook_templates.planner.charts import FILL_NOTE, RANGE_NOTE
    from workbook_templates.sheetkit import chart_extent

    ws = planner["Charts"]
    texts = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    notes = [r for r, t in enumerate(texts, 1) if t in (FILL_NOTE, RANGE_NOTE)]
    assert "typed MFU" in RANGE_NOTE and "uncertainty" in RANGE_NOTE and RANGE_NOTE in texts
    assert "fill in" in FILL_NOTE and texts.count(FILL_NOTE) == 2  # on both pages of bars
    for chart in ws._charts:  # no note under a chart
        top = chart.anchor._from.row + 1
        _, bottom = chart_extent(ws, chart)
        for r in notes:
            assert not top <= r <= bottom, (r, top, bottom)


def test_dense_vs_moe_columns_are_not_the_disclosed_runs(recalculated_templates):
    """The columns model the runs at the shared TFLOP/s: their names say so, unlike the
    planner's disclosed "DeepSeek-V3 (MoE reference)"."""
    wb = _values(recalculated_templates["dense-vs-moe.xlsx"])
    tflops = _named(wb, "effective_tflops")[0]
    heads = [wb["Comparison"].cell(4, c).value for c in (4, 5, 6)]
    assert heads[0] == f"DeepSeek-V3-like MoE at {tflops:,.0f} TFLOP/s", heads
    assert all(h.endswith(" TFLOP/s") and "reference" not in h for h in heads), heads
    planner_names = _named(_values(recalculated_templates[PLANNER]), "scenario_name")
    assert not set(_named(wb, "scenario_name")) & set(planner_names)


def test_check_cells_print_true_or_false(pdfs):
    """In LibreOffice's print of each Checks sheet, every result reads TRUE/FALSE (not 1/0)."""
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        if os.environ.get("CI"):
            pytest.fail("poppler's pdftotext is required when CI is set: run `make libreoffice`")
        pytest.skip("poppler's pdftotext is not installed")
    for name, pdf in pdfs.items():
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip
        pages = [p for p in text.split("\f") if "The master check" in p or "Master check" in p]
        assert pages, name
        for page in pages:
            for line in page.splitlines():
                if re.match(r"\s*(Accelerator-hours > 0|Price >= 0|Parameters and tokens)", line):
                    assert re.search(r"\bTRUE\s*$", line), (name, line)
                assert not re.search(r"\s{3,}[01](\s+[01])*\s*$", line), (name, line)
