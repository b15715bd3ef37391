"""How the workbooks print and read: header/footer, print areas, row heights, charts, markers.

The layout checks read the generated files (no LibreOffice); the page counts print them to
PDF with headless LibreOffice (skipped without soffice) and read the page count from the PDF.
"""

from __future__ import annotations

import html
import os
import re

import openpyxl
import pytest
from helpers import is_true
from openpyxl.utils import get_column_letter, range_boundaries

from workbook_templates import generate
from workbook_templates.planner.monthly import MONTH_FORMAT, PRINTED_MONTHS
from workbook_templates.planner.own_runs import WORKING
from workbook_templates.planner.reference import HOURS_SOURCE_COL, SOURCE_COL
from workbook_templates.sheetkit import BOOLEAN_FORMAT, TEMPLATE_VERSION

PLANNER = "training-run-planner.xlsx"
#: Most pages each workbook may print to (LibreOffice, landscape, A4 or Letter): every sheet
#: that fits one page wide at a readable scale prints so; the wider or longer ones print at
#: MIN_PRINT_SCALE_PCT on more pages (the planner 15 pages at 4 to 6-point type before).
PLANNER_PAGES = 40
MAX_PAGES = {PLANNER: PLANNER_PAGES, "cluster-sizing.xlsx": 10, "dense-vs-moe.xlsx": 10}
#: Most pages of each planner sheet, on A4 and on Letter.
PLANNER_SHEET_PAGES = {
    "Cover": 2, "Inputs": 6, "Calculations": 6, "Summary": 4, "Sensitivity": 2,
    "Monthly spend": 1, "Charts": 2, "Reference runs": 4, "Accelerators": 2, "Checks": 4,
    "Change log": 1, "Our runs": 2,
}  # fmt: skip
#: The smallest printed word: 7-point type. pdftotext boxes a word of the sheets' type
#: 12.6 pt tall at 11 points (1.145 x the type size), so a box below 8.0 pt is type below 7.
MIN_PRINTED_PT = 7.0
WORD_BOX_PER_PT = 12.6 / 11
#: The page header and footer (8-point type, set apart from the sheet's scale) print within
#: this many points of the top and the bottom of the page.
HEADER_FOOTER_PT = 45
#: Page size (points, landscape) of each paper.
PAPER_POINTS = {"a4": (842, 595), "letter": (792, 612)}
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


def test_every_sheet_prints_one_page_wide_or_at_a_readable_scale(workbook):
    """docs/workbooks.md: a sheet prints one page wide when that scale keeps its type at 7
    points or more; else at MIN_PRINT_SCALE_PCT, on more pages; at most column A repeated (the
    row labels, on the sheets wider than a page)."""
    from pathlib import Path

    from workbook_templates.sheetkit import MIN_PRINT_SCALE_PCT

    path, wb = workbook
    doc = " ".join((Path(__file__).parents[1] / "docs" / "workbooks.md").read_text().split())
    assert "prints one page wide when that keeps its type at 7 points or more" in doc
    assert 11 * MIN_PRINT_SCALE_PCT / 100 >= MIN_PRINTED_PT
    for ws in wb:
        fitted = ws.sheet_properties.pageSetUpPr.fitToPage
        if fitted:
            assert ws.page_setup.fitToWidth == 1, (path.name, ws.title)
        else:
            assert ws.page_setup.scale == MIN_PRINT_SCALE_PCT, (path.name, ws.title)
        assert ws.print_title_cols in (None, "$A:$A"), (path.name, ws.title)


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
        assert ws.page_setup.orientation == "landscape"
        # the area holds every filled cell (except the rows kept off the page on purpose)
        min_col, min_row, max_col, max_row = range_boundaries(ws.print_area.split("!")[-1])
        if ws.title in ("Monthly spend", "Charts"):
            continue
        # Reference runs: the full sources sit right of the printed short source (on screen)
        beyond = {SOURCE_COL, HOURS_SOURCE_COL} if ws.title == "Reference runs" else set()
        if ws.title == "Our runs":  # its working columns, the last, on screen only
            beyond = set(range(ws.max_column - len(WORKING) + 1, ws.max_column + 1))
        for row in ws.iter_rows():
            for c in row:
                if c.value not in (None, "") and c.column not in beyond:
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


def test_charts_plot_the_filled_scenarios_four_per_page_references_apart(planner):
    from workbook_templates.planner.charts import N_TEAM, TABLE_HEAD

    ws = planner["Charts"]
    # every bar chart reads the table of filled scenarios on Charts, not Calculations' columns
    bars = [c for c in ws._charts if c.tagname == "barChart"]
    assert len(bars) == 5
    team_last = TABLE_HEAD + N_TEAM
    team, refs = [], []
    for chart in bars:
        for series in chart.series:
            ref = series.val.numRef.f
            assert ref.startswith("'Charts'!") or ref.startswith("Charts!"), ref
            rows = [int(n) for n in re.findall(r"\$(\d+)", ref)]
            (team if max(rows) <= team_last else refs).append(chart)
            # a team's rows and the references' rows are never in one chart (issue 18)
            assert max(rows) <= team_last or min(rows) > team_last, (chart.title, ref)
    assert len(set(map(id, team))) == 4 and len(set(map(id, refs))) == 1
    assert all(chart.y_axis.scaling.min == 0 for chart in bars)  # bars start at zero
    # the range chart: an invisible P10 base under two stacked segments
    (rng,) = [c for c in bars if c.grouping == "stacked"]
    assert len(rng.series) == 3 and rng.series[0].graphicalProperties.noFill
    # the table lists filled scenarios by formula (MATCH on their place), never by position
    table = [ws.cell(r, 2).value for r in range(23, 31)]
    assert all("MATCH(" in v for v in table)
    breaks = [b.id for b in ws.row_breaks.brk]
    assert len(breaks) == 1
    anchors = sorted(c.anchor._from.row + 1 for c in ws._charts)
    pages = [sum(a >= b for b in breaks) for a in anchors]
    assert pages.count(0) == 2 and pages.count(1) == 4  # page 2: the team's four, two by two


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
    # the P90 line: the P90 run, from the selected scenario's P90 total and P90 days
    assert "monthly_total_cost_usd_p90" in planner.defined_names
    linked = " ".join(str(c.value) for row in ws.iter_rows(max_row=12) for c in row)
    ((sheet, switch),) = planner.defined_names["active_scenario"].destinations
    assert sheet and switch  # a named cell is read by its name (issue 18)
    assert "INDEX(total_cost_usd_p90,1,active_scenario)" in linked
    assert "INDEX(wall_clock_days_p90,1,active_scenario)" in linked
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
    PLANNER: {k: v for k, v in PLANNER_SHEET_PAGES.items() if k != "Our runs"},
    "cluster-sizing.xlsx": {"Cover": 2, "Inputs": 2, "Sizing": 2, "Iterations": 2},
    "dense-vs-moe.xlsx": {"Cover": 2, "Inputs": 2, "Comparison": 2, "Efficiency paradox": 2},
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


def _require_poppler():
    import shutil

    if shutil.which("pdftotext") is None:
        if os.environ.get("CI"):
            pytest.fail("poppler's pdftotext is required when CI is set: run `make libreoffice`")
        pytest.skip("poppler's pdftotext is not installed")


def _page_texts(pdf, *options):
    """Each page's text (pdftotext with ``options``), in order."""
    import subprocess

    _require_poppler()
    text = subprocess.run(["pdftotext", *options, str(pdf), "-"], capture_output=True,
                          text=True, check=True).stdout  # fmt: skip
    pages = text.split("\f")
    return pages[: _page_count(pdf)]


#: The page header as pdftotext -layout lays it out: file, sheet, template version.
_HEADER = re.compile(r"\s*(\S+\.xlsx)\s{2,}(.+?)\s{2,}Template version (\S+)")


def _sheets_by_page(pdf, name):
    """The sheet each page prints (from its header), checking the header and footer."""
    sheets = []
    for number, page in enumerate(_page_texts(pdf, "-layout"), 1):
        lines = [line for line in page.splitlines() if line.strip()]
        head = _HEADER.match(lines[0])
        assert head and head.group(1) == name, (number, lines[:2])
        assert head.group(3) == TEMPLATE_VERSION
        assert f"Page {number} of " in lines[-1], (number, lines[-1])
        sheets.append(head.group(2).strip())
    return sheets


@pytest.mark.parametrize("name", sorted(MAX_PAGES))
def test_pdf_page_counts_stay_within_bounds(pdfs, generated_templates, name):
    most = MAX_PAGES[name]
    assert 1 <= _page_count(pdfs[name]) <= most


@pytest.mark.parametrize("name", sorted(MAX_SHEET_PAGES))
def test_each_sheet_prints_on_few_pages_with_its_header(pdfs, name):
    """The page header names the sheet (so it is printed); count the pages of each sheet."""
    from collections import Counter

    sheets = Counter(_sheets_by_page(pdfs[name], name))
    for sheet, most in MAX_SHEET_PAGES[name].items():
        assert 1 <= sheets[sheet] <= most, (sheet, dict(sheets))


# -- the planner on each paper (issue 18) ------------------------------------------------------


@pytest.fixture(scope="module")
def planner_on_paper(tmp_path_factory):
    """paper -> (the planner generated for it, its PDF): A4 and Letter, one LibreOffice call."""
    from helpers import require_soffice

    from workbook_templates.generate import write_templates
    from workbook_templates.recalc import convert
    from workbook_templates.sheetkit import PAPER_ENV

    require_soffice()
    made = {}
    before = os.environ.get(PAPER_ENV)
    try:
        for paper in PAPER_POINTS:
            os.environ[PAPER_ENV] = paper
            folder = tmp_path_factory.mktemp(f"paper-{paper}")
            (path,) = [p for p in write_templates(folder) if str(p).endswith(PLANNER)]
            copy = folder / f"planner-{paper}.xlsx"
            os.replace(path, copy)
            made[paper] = copy
    finally:
        if before is None:
            os.environ.pop(PAPER_ENV, None)
        else:
            os.environ[PAPER_ENV] = before
    out = tmp_path_factory.mktemp("paper-pdf")
    pdfs = {p.stem: p for p in convert(list(made.values()), out, "pdf")}
    return {paper: (made[paper], pdfs[f"planner-{paper}"]) for paper in PAPER_POINTS}


@pytest.mark.parametrize("paper", sorted(PAPER_POINTS))
def test_the_planner_prints_within_its_pages_on_each_paper(planner_on_paper, paper):
    """At most PLANNER_PAGES pages, each sheet within its pages, on the paper asked for (the
    PDF's page size)."""
    from collections import Counter

    path, pdf = planner_on_paper[paper]
    wb = openpyxl.load_workbook(path)
    most = PLANNER_PAGES
    assert _page_count(pdf) <= most, (paper, _page_count(pdf))
    sheets = Counter(_sheets_by_page(pdf, path.name))
    assert set(sheets) == set(wb.sheetnames), sheets
    for sheet, count in sheets.items():
        assert count <= PLANNER_SHEET_PAGES[sheet], (paper, sheet, count)
    sizes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", pdf.read_bytes())
    assert sizes and {(round(float(w)), round(float(h))) for w, h in sizes} == {
        PAPER_POINTS[paper]
    }, (paper, set(sizes))


def printed_words(pdf):
    """[(page, [(x0, y0, x1, y1, word)])] of the sheet's words: the page header and footer
    (8-point type, not scaled with the sheet) left out."""
    from test_handoff_budget import _pages

    _require_poppler()
    out = []
    for number, words in _pages(pdf):
        bottom = max((w[3] for w in words), default=0)
        body = [w for w in words if w[1] > HEADER_FOOTER_PT and w[3] < bottom - 20]
        out.append((number, body))
    return out


def small_words(pdf):
    """(page, word, type size in points) of every printed word below MIN_PRINTED_PT."""
    return [(number, w[4], round((w[3] - w[1]) / WORD_BOX_PER_PT, 1))
            for number, words in printed_words(pdf) for w in words
            if (w[3] - w[1]) / WORD_BOX_PER_PT < MIN_PRINTED_PT - 0.05]  # fmt: skip


@pytest.mark.parametrize("paper", sorted(PAPER_POINTS))
def test_no_planner_word_prints_below_seven_points(planner_on_paper, paper):
    """Every word of every page prints at 7-point type or more (its box in the PDF, from
    pdftotext -bbox: the page's scale x the cell's type): "Our runs" printed at about 4
    points, Cover, Inputs, Summary and Checks at about 6."""
    _, pdf = planner_on_paper[paper]
    small = small_words(pdf)
    assert not small, (paper, small[:8])


@pytest.mark.parametrize("paper", sorted(PAPER_POINTS))
def test_no_planner_text_prints_over_other_text(planner_on_paper, paper):
    """No word's box overlaps another's on any page (text spilling from one cell over the
    next prints word over word)."""
    from test_handoff_budget import _overlaps

    _, pdf = planner_on_paper[paper]
    bad = {n: _overlaps(words)[:3] for n, words in printed_words(pdf) if _overlaps(words)}
    assert not bad, (paper, bad)


def _plain(word):
    """Letters and digits: quotes and dashes print as other characters."""
    return re.sub(r"\W", "", html.unescape(word)).casefold()


def unprinted_words(xlsx, pdf, sheet_of):
    """{sheet!cell: [words]} of the text cells (not formulas) of ``xlsx``'s visible sheets with
    a word that is not on their sheet's pages of ``pdf`` (text cut by the next column or the
    page edge).
    ``sheet_of(words)`` names a page's sheet from its words (the page header)."""
    by_sheet = {}
    from test_handoff_budget import _pages

    _require_poppler()
    for _, words in _pages(pdf):
        printed = by_sheet.setdefault(sheet_of(words), set())
        printed.update(_plain(part) for w in words
                       for part in w[4].replace("/", "-").replace("!", "-").split("-"))  # fmt: skip
    missing = {}
    for ws in openpyxl.load_workbook(xlsx):
        if ws.sheet_state != "visible":  # a hidden sheet never prints
            continue
        printed = by_sheet.get(ws.title, set())
        _, _, last_col, last_row = range_boundaries(ws.print_area.split("!")[-1].replace("$", ""))
        for row in ws.iter_rows(max_row=last_row, max_col=last_col):
            for c in row:
                if not isinstance(c.value, str) or c.value.startswith("="):
                    continue
                if ws.row_dimensions[c.row].hidden:
                    continue
                # wrapped at a dash, a slash or the "!" of a cell reference (Inputs!H12)
                text = c.value.replace("/", " ").replace("-", " ").replace("!", " ")
                lost = [
                    w
                    for w in map(_plain, text.split())
                    if w
                    and w not in printed
                    and not (len(w) > 40 and any(w.startswith(p) for p in printed if len(p) > 20))
                ]  # a hash, wrapped
                if lost:
                    missing[f"{ws.title}!{c.coordinate}"] = lost
    return missing


@pytest.mark.parametrize("paper", sorted(PAPER_POINTS))
def test_every_word_of_every_planner_sheet_prints(planner_on_paper, paper):
    """The same on the planner ("... takes the calibrated spr" on Charts, cut at the page)."""
    path, pdf = planner_on_paper[paper]

    def sheet_of(words):  # the page header's middle part names the sheet
        return " ".join(w[4] for w in words if w[3] < 40 and 250 < w[0] < 560)

    missing = unprinted_words(path, pdf, sheet_of)
    assert not missing, missing


@pytest.mark.parametrize("paper", sorted(PAPER_POINTS))
def test_no_planner_page_ends_with_a_heading(planner_on_paper, paper):
    """Headers kept with their rows: no page's last line is a section heading or the table's
    header row (which repeats atop the next page instead)."""
    path, pdf = planner_on_paper[paper]
    wb = openpyxl.load_workbook(path)
    headings = set()  # a section title alone in its row, or a table's first header cell
    for ws in wb:
        for row in ws.iter_rows():
            first = row[0]
            if first.style not in ("Section", "Header") or not isinstance(first.value, str):
                continue
            if first.style == "Header" or all(c.value in (None, "") for c in row[1:]):
                headings.add(first.value.strip())
    assert "Outputs" in headings and "Model constants (fixed)" in headings
    for number, page in enumerate(_page_texts(pdf, "-layout"), 1):
        lines = [line.strip() for line in page.splitlines() if line.strip()]
        body = lines[1:-1]  # the page header and footer off
        last = re.split(r"\s{2,}", body[-1])[0]
        assert last not in headings, (paper, number, body[-1])


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


def test_monthly_p90_line_is_the_p90_run(recalculated_variants):
    """The P90 column is the P90 run (udfs.schedule): at least the P50 in every month, on
    after the P50 run ends, adding up to the scenario's P90 total cost."""
    wb = _values(recalculated_variants["planner-typed.xlsx"])
    k = _named(wb, "active_scenario")[0] - 1
    p50 = _named(wb, "monthly_total_cost_usd")
    p90 = _named(wb, "monthly_total_cost_usd_p90")
    numbers = [(a, b) for a, b in zip(p50, p90, strict=True) if isinstance(b, int | float)]
    assert all(b >= a * (1 - 1e-12) for a, b in numbers)
    assert any(b > 0 and not a for a, b in numbers)  # the P90 run ends later
    assert sum(b for _, b in numbers) == pytest.approx(_named(wb, "total_cost_usd_p90")[k])


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


def test_reference_runs_print_one_line_per_run_with_a_short_source(planner):
    """A compact table: each run on one line, its source shortened to the document (one line of
    the printed column); the full source and the hours' source beside it, off the print."""
    from workbook_templates.planner.reference import (
        SHORT_SOURCE_CHARS,
        SHORT_SOURCE_COL,
        short_source,
    )

    ws = planner["Reference runs"]
    rows = [r for r in range(5, ws.max_row + 1) if ws.cell(r, SOURCE_COL).value]
    assert len(rows) >= 50
    _, _, last_col, _ = range_boundaries(ws.print_area.split("!")[-1].replace("$", ""))
    assert last_col == SHORT_SOURCE_COL < SOURCE_COL < HOURS_SOURCE_COL
    assert SHORT_SOURCE_CHARS <= _width(ws, SHORT_SOURCE_COL) * 1.0
    for r in rows:
        assert ws.row_dimensions[r].height in (None, 15.0), r  # one line
        full, short = ws.cell(r, SOURCE_COL).value, ws.cell(r, SHORT_SOURCE_COL).value
        assert short == short_source(full) and len(short) <= SHORT_SOURCE_CHARS, short
        assert not ws.cell(r, SHORT_SOURCE_COL).alignment.wrap_text
        assert ws.cell(r, HOURS_SOURCE_COL).value  # "the same", or its own source
    assert short_source("LLaMA paper, https://arxiv.org/abs/2302.13971 (Table 2: 6.7B)") == (
        "LLaMA paper, arxiv.org/abs/2302.13971"
    )
    # the median's label, value and note all sit in the printed columns
    ((_, ref),) = planner.defined_names["ref_median_mfu"].destinations
    value = ws[ref.replace("$", "")]
    assert ws.cell(value.row, 1).value == "Median implied MFU" and value.column <= 3
    (note,) = [m for m in ws.merged_cells.ranges if m.min_row == value.row + 1]
    assert 1 < note.min_col and note.max_col <= last_col


def test_range_chart_and_empty_charts_are_explained(planner):
    from workbook_templates.planner.charts import FILL_NOTE, RANGE_NOTE
    from workbook_templates.sheetkit import chart_extent

    ws = planner["Charts"]
    texts = [ws.cell(r, 1).value for r in range(1, ws.max_row + 1)]
    notes = [r for r, t in enumerate(texts, 1) if t in (FILL_NOTE, RANGE_NOTE)]
    assert "typed MFU" in RANGE_NOTE and "uncertainty" in RANGE_NOTE and RANGE_NOTE in texts
    assert "fill in" in FILL_NOTE and texts.count(FILL_NOTE) == 1  # atop the page of bars
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
    import subprocess

    _require_poppler()
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
