"""Structure of the generated workbooks: Excel pitfalls lint, zip, reload, properties.

These need no LibreOffice: they read the files ``compute-lab templates`` writes.
"""

from __future__ import annotations

import re
import zipfile

import openpyxl
import pytest
from helpers_portable import RULES, lint, lint_rules_of_sheets, lint_workbook
from openpyxl.utils import column_index_from_string

from workbook_templates import generate
from workbook_templates.sheetkit import TEMPLATE_VERSION, put_text, safe_text


def _formulas(wb):
    for ws in wb:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type == "f":
                    yield ws.title, c.coordinate, str(c.value)


def _excel_rejects(name):
    """Why Excel would reject a defined name (None when it is fine)."""
    if not re.fullmatch(r"[A-Za-z_\\][A-Za-z0-9_.]*", name) or len(name) > 255:
        return "bad characters"
    if name.lower().startswith("_xl"):
        return "reserved prefix"
    m = re.fullmatch(r"([A-Za-z]{1,3})(\d+)", name)
    if m and column_index_from_string(m.group(1).upper()) <= 16384:
        return "looks like a cell reference"
    if re.fullmatch(r"[RrCc]", name) or re.fullmatch(r"[Rr]\d*[Cc]\d*", name):
        return "looks like an R1C1 reference"
    return None


@pytest.fixture(scope="module", params=sorted(generate.TEMPLATES))
def workbook(request, generated_templates):
    path = generated_templates[request.param]
    return path, openpyxl.load_workbook(path)


def test_command_writes_every_template(generated_templates):
    assert set(generated_templates) == set(generate.TEMPLATES)
    assert "training-run-planner.xlsx" in generated_templates


def test_only_portable_excel_2010_formulas(workbook):
    """Every formula, conditional format and custom validation passes the portable-forms lint
    (tests/helpers_portable.py: Excel 2010 functions with the _xlfn. prefix where Excel needs
    it, INDEX with row and column, no range where one value is wanted...)."""
    path, wb = workbook
    for sheet, coord, formula in _formulas(wb):
        assert len(formula) <= 8192, (path.name, sheet, coord)
    broken = lint_workbook(wb) + lint_rules_of_sheets(wb)
    assert not broken, (path.name, len(broken), broken[:5])


#: Rule name -> (formulas it refuses, the portable forms it lets through).
LINT_CASES = {
    "index-row-and-column": (
        ["=INDEX(scenario_name,2)", "=IF(x,INDEX(total_cost_usd,$C$5),0)",
         "=COUNTIF(INDEX(scenario_ready,1):INDEX(scenario_ready,3),TRUE)"],
        ["=INDEX(scenario_name,1,2)", "=INDEX(accel_names,MATCH(A1,accel_names,0),1)"],
    ),
    "range-where-one-value-is-wanted": (
        ["=total_cost_usd*2", "=Calculations!$D$5:$K$5", "=SUM(IF(A1:A3>0,1,0))",
         "=ABS(scenario_name)", "=MATCH(A1:A2,accel_names,0)", "=N(A1:B1)",
         "=SUMPRODUCT(--(TRIM(A1:A3)=B1))", "=SUMPRODUCT(--ISERROR(A1:A3))"],
        ["=SUM(total_cost_usd)*2", "=MATCH(TRUE,$D$5:$K$5,0)", "=COUNTIF(A1:A3,TRUE)",
         "=COUNTIF(INDEX(scenario_ready,1,1):INDEX(scenario_ready,1,3),TRUE)", "=N($D14)",
         "=SUMPRODUCT((accel_names=B1)*(ROW(accel_names)<5))"],
    ),
    "excel-2010-functions": (
        ["=XLOOKUP(A1,B1,C1)", "=_xlfn.XLOOKUP(A1,B1,C1)", "=IFNA(A1,0)", "=FOO(1)"],
        ["=IFERROR(A1,0)", "=_xlfn.NORM.S.INV(0.9)"],
    ),
    "xlfn-prefix": (["=NORM.S.INV(0.9)"], ["=_xlfn.NORM.S.INV(0.9)"]),
    "engine-specific-function": (['=INDIRECT("A1")', "=OFFSET(A1,1,0)"], ["=A2"]),
    "function-every-engine-has": (
        ["=_xlfn.NORM.S.DIST(1,TRUE)", "=_xlfn.AGGREGATE(9,5,A1:A3)"],
        ["=NORMSDIST(1)", "=_xlfn.NORM.S.INV(0.9)"],
    ),
    "no-structured-reference": (
        ["=SUBTOTAL(9,Runs[Amount])", "=SUM(Runs[Amount])", "=[1]Sheet1!A1"],
        ["=SUBTOTAL(9,B2:B4)", "=SUM(Runs!B2:B4)"],
    ),
    "subtotal-function-number": (
        ["=SUBTOTAL(109,B2:B4)", "=SUBTOTAL(A1,B2:B4)", "=SUBTOTAL(12,B2:B4)"],
        ["=SUBTOTAL(9,B2:B4)", "=SUBTOTAL(1,B2:B4)"],
    ),
    "no-text-arithmetic": (['="5"*2', '=1+"2"'], ['="a"&A1', '=IF(A1="OK",1,2)']),
}  # fmt: skip


@pytest.mark.parametrize("rule", sorted(LINT_CASES))
def test_the_lint_refuses_each_non_portable_form_by_name(rule):
    ranges = {"scenario_name", "total_cost_usd", "scenario_ready", "accel_names"}
    bad, good = LINT_CASES[rule]
    for formula in bad:
        assert rule in [r.name for r in lint(formula, ranges)], formula
    for formula in good:
        assert rule not in [r.name for r in lint(formula, ranges)], formula
    assert rule in {r.name for r in RULES}


def test_the_lint_refuses_an_array_formula(tmp_path):
    from openpyxl.worksheet.formula import ArrayFormula

    wb = openpyxl.Workbook()
    wb.active["A1"] = ArrayFormula("A1", "=SUM(B1:B3*C1:C3)")
    assert [line.split(": ")[1] for line in lint_workbook(wb)] == ["no-array-formula"]


def test_names_excel_accepts(workbook):
    path, wb = workbook
    assert "template_version" in wb.defined_names and "master_check" in wb.defined_names
    for name, dn in wb.defined_names.items():
        assert _excel_rejects(name) is None, (path.name, name, _excel_rejects(name))
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), (path.name, name)  # snake_case
        assert "#REF" not in dn.attr_text
    for title in wb.sheetnames:
        assert len(title) <= 31 and not set(title) & set("/\\?*[]:")


def test_list_validations_fit_excel(workbook):
    path, wb = workbook
    for ws in wb:
        for dv in ws.data_validations.dataValidation:
            if dv.type == "list" and dv.formula1 and dv.formula1.startswith('"'):
                assert len(dv.formula1) <= 257, (path.name, ws.title)
            assert dv.showErrorMessage and dv.showInputMessage
            assert len(dv.prompt or "") <= 255 and len(dv.promptTitle or "") <= 32


def test_zip_is_sound_and_has_no_macros_or_external_links(workbook):
    path, _ = workbook
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        names = z.namelist()
        assert not [n for n in names if "externalLink" in n or n.endswith(".bin")]
        assert "macroEnabled" not in z.read("[Content_Types].xml").decode()


def test_properties_freeze_panes_and_cover(workbook):
    path, wb = workbook
    assert wb.properties.version == TEMPLATE_VERSION
    assert wb.custom_doc_props["template_version"].value == TEMPLATE_VERSION
    assert wb.sheetnames[0] == "Cover" and wb.sheetnames[-1] == "Change log"
    assert wb.active.title == "Cover"
    assert [ws.title for ws in wb if ws.sheet_view.tabSelected] == ["Cover"]
    assert "Checks" in wb.sheetnames and "Inputs" in wb.sheetnames
    for ws in wb:
        if ws.title not in ("Cover", "Charts"):
            assert ws.freeze_panes, (path.name, ws.title)


def test_planner_has_the_sheets_a_finance_reader_expects(generated_templates):
    wb = openpyxl.load_workbook(generated_templates["training-run-planner.xlsx"])
    assert wb.sheetnames == [
        "Cover", "Inputs", "Calculations", "Summary", "Sensitivity", "Monthly spend", "Charts",
        "Reference runs", "Our runs", "Accelerators", "Checks", "Change log",
    ]  # fmt: skip
    assert len(wb["Charts"]._charts) >= 2
    # the same formula across each Calculations row (relative to its column)
    ws = wb["Calculations"]
    for row in ws.iter_rows(min_row=5, min_col=4, max_col=11):
        texts = [
            re.sub(r"(?<![A-Za-z$])[D-K](?=\d)", "X", str(c.value)) if c.value else None
            for c in row
        ]
        assert len(set(texts)) == 1, texts


def test_recalculated_files_reload(recalculated_templates):
    for path in recalculated_templates.values():
        wb = openpyxl.load_workbook(path)
        assert "master_check" in wb.defined_names


# -- nothing lost: text stays text, no overwrite, atomic writes --------------------------------


def test_put_text_keeps_formula_like_text_as_text(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    for i, text in enumerate(["=1+1", "+1", "-1", "@SUM(A1)", "plain"], 1):
        put_text(ws.cell(i, 1), text)
    wb.save(tmp_path / "t.xlsx")
    with zipfile.ZipFile(tmp_path / "t.xlsx") as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet
    back = openpyxl.load_workbook(tmp_path / "t.xlsx").active
    assert [back.cell(i, 1).value for i in range(1, 6)] == ["=1+1", "+1", "-1", "@SUM(A1)", "plain"]
    assert all(back.cell(i, 1).data_type == "s" for i in range(1, 6))


def test_safe_text_quotes_every_formula_lead_for_csv():
    leads = ["=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"]
    assert [safe_text(t) for t in leads] == ["'" + t for t in leads]
    assert [safe_text(v) for v in ("plain", 1.5, None)] == ["plain", 1.5, None]


def test_catalogue_text_that_looks_like_a_formula_is_written_as_text(monkeypatch, tmp_path):
    from udfs import catalogue

    evil = ['=HYPERLINK("http://example.invalid")', "+1+1", "-2+3", "@SUM(1)"]
    real_source = catalogue.source
    calls = {"n": 0}

    def fake_source(kind, name, field=None):
        calls["n"] += 1
        return evil[calls["n"] % len(evil)] + " " + real_source(kind, name, field)

    real_accels = catalogue.accelerators

    def fake_accelerators():
        df = real_accels()
        df["source"] = [evil[i % len(evil)] for i in range(len(df))]
        return df

    monkeypatch.setattr(catalogue, "source", fake_source)
    monkeypatch.setattr(catalogue, "accelerators", fake_accelerators)
    written = generate.write_templates(tmp_path)
    seen = 0
    for path in written:
        with zipfile.ZipFile(path) as z:
            xml = b"".join(z.read(n) for n in z.namelist() if n.startswith("xl/worksheets/"))
        formulas = b" ".join(re.findall(rb"<f>[^<]*</f>", xml))
        for text in (b"example.invalid", b"+1+1", b"-2+3", b"SUM(1)"):
            assert text not in formulas, text
        wb = openpyxl.load_workbook(path)
        found = [
            c for ws in wb for row in ws.iter_rows() for c in row
            if isinstance(c.value, str) and c.value.startswith(tuple(evil))
        ]  # fmt: skip
        assert all(c.data_type == "s" for c in found)
        seen += len(found)
    assert seen > 10  # the planted text is there, as text


def test_write_templates_never_overwrites_without_force(tmp_path):
    from udfs.validation import CommandError

    first = generate.write_templates(tmp_path)
    stamps = {p: p.stat().st_mtime_ns for p in first}
    with pytest.raises(CommandError, match="already exist.*--force"):
        generate.write_templates(tmp_path)
    assert {p: p.stat().st_mtime_ns for p in first} == stamps
    again = generate.write_templates(tmp_path, force=True)
    assert again == first
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(generate.TEMPLATES)  # no temps


def test_one_existing_file_stops_the_whole_run(tmp_path):
    from udfs.validation import CommandError

    (tmp_path / "dense-vs-moe.xlsx").write_bytes(b"mine")
    with pytest.raises(CommandError, match="dense-vs-moe.xlsx"):
        generate.write_templates(tmp_path)
    assert (tmp_path / "dense-vs-moe.xlsx").read_bytes() == b"mine"
    assert [p.name for p in tmp_path.iterdir()] == ["dense-vs-moe.xlsx"]


# -- the command line --------------------------------------------------------------------------


def test_cli_writes_and_prints_each_path(tmp_path, capsys):
    from compute_lab.cli import main

    out = tmp_path / "t"
    assert main(["templates", "--out", str(out)]) == 0
    printed = capsys.readouterr().out.split()
    assert printed == [str(out / name) for name in generate.TEMPLATES]


def test_cli_default_folder_is_templates(tmp_path, monkeypatch, capsys):
    from compute_lab.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["templates"]) == 0
    assert sorted(p.name for p in (tmp_path / "templates").iterdir()) == sorted(generate.TEMPLATES)


@pytest.mark.parametrize("case", ["existing", "out-is-file"])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys, case):
    from compute_lab.cli import main

    if case == "existing":
        generate.write_templates(tmp_path)
        argv, expect = ["templates", "--out", str(tmp_path)], "--force"
    else:
        (tmp_path / "f").write_text("x")
        argv, expect = ["templates", "--out", str(tmp_path / "f")], "--out"
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expect in err and "Traceback" not in err


@pytest.mark.libreoffice
def test_pdf_of_each_workbook(tmp_path):
    from helpers import require_soffice

    require_soffice()
    written = generate.write_templates(tmp_path, pdf=True)
    pdfs = [p for p in written if p.suffix == ".pdf"]
    assert [p.stem for p in pdfs] == [p.stem for p in written if p.suffix == ".xlsx"]
    for pdf in pdfs:
        assert pdf.read_bytes()[:5] == b"%PDF-"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in written)
    from udfs.validation import CommandError

    with pytest.raises(CommandError, match="already exist"):
        generate.write_templates(tmp_path, pdf=True)


def test_a_failed_write_removes_what_this_run_wrote(tmp_path, monkeypatch):
    from udfs.validation import CommandError

    real_save = generate._save
    calls = []

    def failing_save(wb, target, force):
        calls.append(target.name)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_save(wb, target, force)

    monkeypatch.setattr(generate, "_save", failing_save)
    with pytest.raises(CommandError, match="No space left on device"):
        generate.write_templates(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_charts_are_schema_complete(workbook):
    path, _ = workbook
    with zipfile.ZipFile(path) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
        assert charts, path.name
        for name in charts:
            xml = z.read(name).decode()
            if "<c:scatterChart>" in xml or "<scatterChart>" in xml:
                assert "scatterStyle" in xml, (path.name, name)
            assert 'delete val="1"' not in xml, (path.name, name)  # axes are shown


def test_pdf_without_libreoffice_is_a_one_line_error_before_writing(tmp_path, monkeypatch, capsys):
    from compute_lab.cli import main
    from workbook_templates import recalc

    monkeypatch.setattr(recalc, "find_soffice", lambda: None)
    assert main(["templates", "--out", str(tmp_path / "t"), "--pdf"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--pdf" in err and "LibreOffice" in err
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("name", ["cluster-sizing.xlsx", "dense-vs-moe.xlsx"])
def test_cover_says_what_the_checks_read(generated_templates, name):
    """One set of states (issue 18): the Checks sheet's master check and the Cover's Checks
    line both read OK or ERROR, never TRUE / FALSE."""
    wb = openpyxl.load_workbook(generated_templates[name])
    cover = wb["Cover"]
    texts = [str(c.value) for row in cover.iter_rows() for c in row if c.value is not None]
    (step,) = [t for t in texts if re.match(r"\d+\. Checks:", t)]
    assert "Checks sheet then reads OK" in step and "TRUE" not in step, step
    (line,) = [t for t in texts if t.startswith('=IF(master_status="OK",')]
    assert '"OK: every check passes"' in line
    ((sheet, ref),) = wb.defined_names["master_status"].destinations
    assert wb[sheet][ref.replace("$", "")].value.endswith('"OK","ERROR")')
    master = openpyxl.load_workbook(generated_templates[name])["Checks"]
    assert "master check reads OK or ERROR" in master["A2"].value


def test_the_published_calibrated_mfu_formula_is_portable():
    """The formula docs/methodology-calibration.md gives for a hand-built workbook (over a
    two-column generation -> intercept table) passes the same lint."""
    from udfs import calibration

    text = calibration.excel_coefficients()["formula"]
    assert lint(text, {"mfu_ln_intercepts", "mfu_generations"}) == [], text
