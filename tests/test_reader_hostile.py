"""Crafted planners the reader refuses in one line naming the file (and part, or cell), or
reads as a spreadsheet shows them: package-wide bounds, rows only from ``sheetData``, saved
values by the spreadsheet grammar, strings as Excel shows them, malformed styles, duplicate
zip entries, two sheets on one part. Each file is made from a real generated planner by
:mod:`helpers_hostile`, as an attacker would make it."""

from __future__ import annotations

import re
import sys

import openpyxl
import pytest
from helpers_hostile import (
    INPUTS,
    aliased_sheets,
    cell_value,
    duplicate_entry,
    flooded_parts,
    hidden_row,
    many_names,
    replaced,
    rewrite,
    wide_row,
    with_shared_string,
)
from helpers_report import peak_rss_mb, tree
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill

from compute_lab.cli import main
from workbook_templates import reader
from workbook_templates.reader import PlannerError, read_planner
from workbook_templates.recalc import find_soffice, recalculate
from workbook_templates.report import pool

STYLES = "xl/styles.xml"


@pytest.fixture(scope="module")
def planner(generated_templates, tmp_path_factory):
    """A filled planner: D13 (accelerators of the first scenario) holds 2048."""
    folder = tmp_path_factory.mktemp("hostile")
    return fill(generated_templates[PLANNER], folder / "filled.xlsx", [PLAN_A, PLAN_B])


def refusal(path):
    """The one line of the PlannerError reading ``path`` raises."""
    with pytest.raises(PlannerError) as info:
        read_planner(path)
    text = str(info.value)
    assert len(text.splitlines()) == 1, text
    assert text.startswith(f"{path}: "), text
    return text


# ---------------------------------------------------------------------------------------------
# Bounds across the package and on a row
# ---------------------------------------------------------------------------------------------


def test_two_sheet_entries_on_one_part_are_refused(planner, tmp_path):
    path = aliased_sheets(planner, tmp_path / "alias.xlsx", 2)
    err = refusal(path)
    assert "sheets 'Inputs' and 'Inputs 2' are one part, xl/worksheets/sheet2.xml" in err


def test_a_row_of_more_cells_than_columns_is_refused(planner, tmp_path):
    path = wide_row(planner, tmp_path / "wide.xlsx", reader.MAX_ROW_CELLS + 1)
    err = refusal(path)
    assert f"part {INPUTS}: row 13 holds over {reader.MAX_ROW_CELLS:,} cells" in err


def test_a_row_of_too_many_elements_is_refused(planner, tmp_path):
    row = re.compile(rb'(<row r="13"[^>/]*>)')
    flood = rb"\1" + b"<c><x/><x/><x/><x/><x/></c>" * (reader.MAX_ROW_ELEMENTS // 6 + 1)
    path = replaced(planner, tmp_path / "deep-row.xlsx", INPUTS, row, flood)
    err = refusal(path)
    assert f"row 13 holds over {reader.MAX_ROW_ELEMENTS:,} XML elements" in err


def test_defined_names_past_the_bound_are_refused_before_openpyxl_reads_them(planner, tmp_path):
    path = many_names(planner, tmp_path / "names.xlsx", reader.MAX_DEFINED_NAMES)
    err = refusal(path)
    assert f"part xl/workbook.xml: takes the package over {reader.MAX_DEFINED_NAMES:,}" in err


@pytest.mark.parametrize(
    ("part", "before", "element"),
    [
        ("xl/workbook.xml", b"</bookViews>", b"<workbookView/>"),
        ("[Content_Types].xml", b"</Types>", b'<Default Extension="x" ContentType="a/b"/>'),
    ],
)
def test_a_part_openpyxl_reads_into_objects_is_bounded(planner, tmp_path, part, before, element):
    """900,000 workbook views took 481 MB and 40 s; 600,000 content types 411 MB and 35 s."""
    flood = element * (reader.MAX_BOOK_PART_ELEMENTS + 1) + before
    path = replaced(planner, tmp_path / "objects.xlsx", part, before, flood)
    err = refusal(path)
    assert f"part {part}: holds " in err
    assert (
        f"over the limit of {reader.MAX_BOOK_PART_ELEMENTS:,} for a part read into objects" in err
    )


def test_a_workbook_part_named_as_a_worksheet_is_refused_before_openpyxl_reads_it(
    planner, tmp_path
):
    import zipfile

    with zipfile.ZipFile(planner) as z:
        book, rels = z.read("xl/workbook.xml"), z.read("xl/_rels/workbook.xml.rels")
    moved = "xl/worksheets/book.xml"
    edits = {
        "[Content_Types].xml": lambda d: d.replace(b"/xl/workbook.xml", b"/" + moved.encode()),
        "_rels/.rels": lambda d: d.replace(b"xl/workbook.xml", moved.encode()),
    }
    extra = {moved: book, "xl/worksheets/_rels/book.xml.rels": rels}
    path = rewrite(planner, tmp_path / "moved.xlsx", edits, extra)
    assert f"part {moved}: is the workbook's own part but is named as a worksheet" in refusal(path)


def test_elements_past_the_package_bound_are_refused(planner, tmp_path):
    """Three parts each under the bound of one part, over the bound of the package."""
    per_part = reader.MAX_PACKAGE_ELEMENTS // 3 + 1
    assert per_part < reader.MAX_PART_ELEMENTS
    path = flooded_parts(planner, tmp_path / "flood.xlsx", 3, per_part)
    err = refusal(path)
    assert "part customXml/flood2.xml: takes the package over 2,000,000 XML elements" in err


def test_a_wide_row_and_many_names_stay_under_the_peak_of_one_reader(planner, tmp_path):
    """999,000 empty cells in a row and 725,000 defined names: 970 MB before the bounds."""
    both = many_names(wide_row(planner, tmp_path / "w.xlsx", 999_000), tmp_path / "b.xlsx", 725_000)
    code = (
        "import sys; from workbook_templates.reader import read_planner; read_planner(sys.argv[1])"
    )
    rc, _, err, peak_mb = peak_rss_mb([sys.executable, "-c", code, both])
    assert rc == 1 and "PlannerError" in err and "defined names" in err
    assert peak_mb < pool.READER_PEAK_MB


def test_jobs_fit_the_memory_budget(monkeypatch):
    assert pool.MAX_JOBS * pool.READER_PEAK_MB <= pool.READ_MEMORY_BUDGET_MB
    monkeypatch.setattr(pool, "_available_mb", lambda: 2 * pool.READER_PEAK_MB + 1)
    assert pool.default_jobs(100) <= 2
    monkeypatch.setattr(pool, "_available_mb", lambda: 10)
    assert pool.default_jobs(100) == 1


# ---------------------------------------------------------------------------------------------
# What a spreadsheet shows
# ---------------------------------------------------------------------------------------------


def test_rows_outside_sheet_data_are_not_cells(planner, tmp_path):
    """A copy of rows 1-13 in ``<sheetPr><extLst><ext>`` with D13 = 8192: no spreadsheet
    shows it (LibreOffice shows sheetData's 2048); it was read."""
    path = hidden_row(planner, tmp_path / "hidden.xlsx")
    (first, _) = read_planner(path).scenarios
    assert first.inputs["accelerators"] == 2048


@pytest.mark.parametrize(
    ("before", "after", "last"),
    [
        (b'<row r="14"', b'<row r="13"><c r="D13" t="n"><v>8192</v></c></row><row r="14"', 13),
        (b"</sheetData>", b'<row r="13"><c r="D13" t="n"><v>8192</v></c></row></sheetData>', 52),
    ],
    ids=["repeated", "late"],
)
def test_a_row_repeated_or_out_of_order_is_refused(planner, tmp_path, before, after, last):
    """LibreOffice shows the last copy of row 13 (8192); openpyxl's reading took the first."""
    path = replaced(planner, tmp_path / "rows.xlsx", INPUTS, before, after)
    err = refusal(path)
    assert f"part {INPUTS}: row 13 comes after row {last}: rows out of order or repeated" in err


@pytest.mark.parametrize(
    ("before", "after", "words"),
    [
        (
            b'<c r="E13"',
            b'<c r="D99" t="n"><v>8192</v></c><c r="E13"',
            "Inputs!D99: is written in row 13",
        ),
        (b'<c r="D13"', '<c r="D\u0661\u0663"'.encode(), "a cell reference 'D\u0661\u0663'"),
        (b'<row r="13"', '<row r="\u0661\u0663"'.encode(), "a row numbered '\u0661\u0663'"),
    ],
    ids=["cell-in-another-row", "arabic-cell-reference", "arabic-row-number"],
)
def test_cell_and_row_references_outside_the_grammar_are_refused(
    planner, tmp_path, before, after, words
):
    """openpyxl's reading put a cell written as D99 inside row 13 at D13, and read Arabic-Indic
    digits in a reference as ASCII ones."""
    path = replaced(planner, tmp_path / "ref.xlsx", INPUTS, before, after)
    assert words in refusal(path)


@pytest.mark.skipif(find_soffice() is None, reason="LibreOffice is not installed")
def test_libreoffice_shows_the_sheet_data_row_and_the_grammar(planner, tmp_path):
    """LibreOffice is the arbiter: it shows 2048 for the hidden copy's cell, and 1 for
    ``1_024`` (which Python's ``int()`` read as 1024)."""
    hidden = hidden_row(planner, tmp_path / "hidden.xlsx")
    underscored = cell_value(planner, tmp_path / "underscore.xlsx", b"1_024")
    shown = recalculate([hidden, underscored], tmp_path / "recalculated")
    values = [openpyxl.load_workbook(p, data_only=True)["Inputs"]["D13"].value for p in shown]
    assert values == [2048, 1]
    assert read_planner(hidden).scenarios[0].inputs["accelerators"] == 2048
    assert "Inputs!D13: holds the saved number '1_024'" in refusal(underscored)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("\u0661\u0660\u0662\u0664".encode(), "not a number as a spreadsheet reads one"),
        (b"1_024", "not a number as a spreadsheet reads one"),
        (b" 1024", "not a number as a spreadsheet reads one"),
        (b"NaN", "not a number as a spreadsheet reads one"),
        (b"INF", "not a number as a spreadsheet reads one"),
        (b"-inf", "not a number as a spreadsheet reads one"),
        (b"0x400", "not a number as a spreadsheet reads one"),
        (b"1e400", "beyond a spreadsheet's numbers"),
    ],
)
def test_a_saved_number_outside_the_grammar_is_refused_naming_the_cell(
    planner, tmp_path, text, words
):
    path = cell_value(planner, tmp_path / "number.xlsx", text)
    err = refusal(path)
    assert f"{path}: Inputs!D13: holds the saved number" in err and words in err


def test_numbers_in_the_grammar_read_and_others_not(planner, tmp_path):
    path = cell_value(planner, tmp_path / "number.xlsx", b"+2.048E+3")
    assert read_planner(path).scenarios[0].inputs["accelerators"] == 2048
    path = cell_value(planner, tmp_path / "digits.xlsx", "\u0968\u0966\u096a\u096e".encode())
    assert "Inputs!D13: holds the saved number" in refusal(path)


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        (b'<c r="D13" s="\\1" t="b"><v>2</v></c>', "saved boolean '2', not 0 or 1"),
        (b'<c r="D13" s="\\1" t="s"><v>-1</v></c>', "refers to shared string '-1'"),
        (b'<c r="D13" s="\xd9\xa1" t="n"><v>2048</v></c>', "has the style"),
        (b'<c r="D13" s="\\1" t="d"><v>next week</v></c>', "not an ISO 8601 date"),
    ],
)
def test_other_saved_values_outside_the_grammar_are_refused(planner, tmp_path, cell, words):
    saved = re.compile(rb'<c r="D13" s="([0-9]+)" t="n"><v>2048</v></c>')  # its style kept
    path = replaced(planner, tmp_path / "cell.xlsx", INPUTS, saved, cell)
    err = refusal(path)
    assert "Inputs!D13: " in err and words in err


def test_rich_text_and_phonetic_runs_read_as_excel_shows_them(planner, tmp_path):
    si = (
        b'<r><rPr><b/><sz val="eleven"/></rPr><t>Rich </t></r><r><t>name</t></r>'
        b'<rPh sb="0" eb="x"><t>PHONETIC</t></rPh><phoneticPr fontId="none"/>'
    )
    path = with_shared_string(planner, tmp_path / "rich.xlsx", si)
    assert read_planner(path).scenarios[0].name == "Rich name"


def test_a_shared_string_over_the_cell_limit_in_runs_is_refused(planner, tmp_path):
    run = b"<r><t>" + b"x" * 30_000 + b"</t></r>"
    path = with_shared_string(planner, tmp_path / "runs.xlsx", run * 2)
    err = refusal(path)
    assert "part xl/sharedStrings.xml: holds a string of over 32,767 characters" in err


def test_a_duplicate_zip_entry_is_refused(planner, tmp_path):
    path = duplicate_entry(planner, tmp_path / "twice.xlsx")
    err = refusal(path)
    assert f"holds two zip entries named '{INPUTS}'" in err


def test_a_duplicate_zip_entry_differing_in_case_is_refused(planner, tmp_path):
    import zipfile

    with zipfile.ZipFile(planner) as z:
        data = z.read(INPUTS)
    path = rewrite(planner, tmp_path / "case.xlsx", extra={INPUTS.upper(): data})
    assert "holds two zip entries named" in refusal(path)


# ---------------------------------------------------------------------------------------------
# Malformed styles: one line naming the file and part; --skip-bad leaves the file out
# ---------------------------------------------------------------------------------------------

_STYLE_EDITS = {
    "numFmtId": (b'numFmtId="164"', b'numFmtId="x"', "a number format (numFmt) has numFmtId 'x'"),
    "formatCode": (b' formatCode="yyyy-mm-dd hh:mm"', b"", "number format 164 has no formatCode"),
    "xf": (
        re.compile(rb'(<cellXfs count="[0-9]+"><xf numFmtId=)"0"'),
        rb'\1"zero"',
        "cell format 0 (xf of cellXfs) has numFmtId 'zero'",
    ),
}


@pytest.mark.parametrize("kind", sorted(_STYLE_EDITS))
def test_a_malformed_stylesheet_is_refused_naming_the_part(planner, tmp_path, kind):
    old, new, words = _STYLE_EDITS[kind]
    path = replaced(planner, tmp_path / f"{kind}.xlsx", STYLES, old, new)
    err = refusal(path)
    assert f"part {STYLES}: {words}" in err


def test_the_command_refuses_a_malformed_file_and_skip_bad_leaves_it_out(planner, tmp_path, capsys):
    old, new, _ = _STYLE_EDITS["formatCode"]
    bad = replaced(planner, tmp_path / "bad.xlsx", STYLES, old, new)
    out = tmp_path / "out"
    out.mkdir()
    rc = main(["report", str(planner), str(bad), "--out", str(out / "h.xlsx")])
    err = capsys.readouterr().err
    assert rc == 2 and tree(out) == {}
    (line,) = [x for x in err.splitlines() if str(bad) in x]
    assert f"part {STYLES}: number format 164 has no formatCode" in line
    assert "internal error" not in err
    rc = main(["report", str(planner), str(bad), "--out", str(out / "h.xlsx"), "--skip-bad"])
    assert rc == 0 and (out / "h.xlsx").is_file()
