"""The planner reader: defined names to located, type-checked inputs; unsafe files refused."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import zipfile

import openpyxl
import pytest
from helpers import planner_cell
from helpers_report import (
    encrypted_workbook,
    long_text,
    redefine_names,
    spread_names,
    xml_flood,
)
from test_report_fixtures import (
    PLAN_A,
    PLAN_B,
    PLAN_C,
    PLANNER,
    fill,
    rezip,
    set_cell,
    sheet_member,
    width,
)

from workbook_templates import reader, xlsx_safety
from workbook_templates.reader import PlannerError, read_planner
from workbook_templates.recalc import find_soffice, recalculate


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture
def filled(template, tmp_path):
    return fill(template, tmp_path / "filled.xlsx", [PLAN_A, PLAN_B])


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def edit(path, name, k, value):
    """Type ``value`` into input ``name`` of scenario column ``k``; return 'Sheet!C7'."""
    wb = openpyxl.load_workbook(path)
    where = set_cell(wb, name, k, value)
    wb.save(path)
    return where


def where(path, name, k):
    wb = openpyxl.load_workbook(path, read_only=False)
    ws, coord = planner_cell(wb, name, k)
    return ws.title, coord


def problem_of(path, **kwargs):
    with pytest.raises(PlannerError) as info:
        read_planner(path, **kwargs)
    return info.value


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def test_openpyxl_parses_with_defusedxml():
    reader.check_defusedxml()  # raises when openpyxl would use the plain standard library
    assert openpyxl.DEFUSEDXML is True
    assert openpyxl.xml.functions.iterparse.__module__.startswith("defusedxml")


def test_refuses_to_run_without_defusedxml(monkeypatch, filled):
    monkeypatch.setattr(openpyxl, "DEFUSEDXML", False)
    with pytest.raises(RuntimeError, match="defusedxml"):
        read_planner(filled)


def test_reads_each_scenario_with_its_cells(filled):
    before = digest(filled)
    p = read_planner(filled)
    assert digest(filled) == before
    assert [s.name for s in p.scenarios] == [PLAN_A["scenario_name"], PLAN_B["scenario_name"]]
    a, b = p.scenarios
    for name, value in PLAN_A.items():
        assert a.inputs[name] == value, name
    assert a.inputs["peak_tflops"] is None and a.inputs["mfu"] is None
    assert b.inputs["active_params"] is None
    assert b.inputs["start_date"] == dt.date(2026, 2, 20)
    sheet, coord = where(filled, "total_params", 1)
    assert (b.cells["total_params"].sheet, b.cells["total_params"].cell) == (sheet, coord)
    sheet, coord = where(filled, "total_cost_usd", 0)
    assert str(a.cells["total_cost_usd"]).endswith(f"!{coord}")
    assert p.template_version is not None
    assert p.has_cached_values is False  # written by openpyxl, never calculated
    assert all(a.formulas.values())  # every output cell holds a formula


def test_columns_without_inputs_are_skipped_and_listed(template, tmp_path):
    path = fill(template, tmp_path / "one.xlsx", [{}, PLAN_C])
    p = read_planner(path)
    assert [s.name for s in p.scenarios] == [PLAN_C["scenario_name"]]
    assert p.scenarios[0].index == 2
    first = where(path, "scenario_name", 0)[1].rstrip("0123456789")
    assert first in [col for col, _ in p.skipped_columns]
    assert len(p.skipped_columns) + len(p.scenarios) == width(openpyxl.load_workbook(path))


def test_the_untouched_template_reads(template, tmp_path):
    path = fill(template, tmp_path / "as-shipped.xlsx", [None] * 50)
    p = read_planner(path)
    assert p.scenarios  # the reference columns have inputs
    assert all(name for name in (s.name for s in p.scenarios))


def test_a_column_with_inputs_but_no_required_one_is_listed(template, tmp_path):
    path = fill(template, tmp_path / "odd.xlsx", [PLAN_A, {"mfu": 0.5, "scenario_name": "Odd"}])
    p = read_planner(path)
    assert len(p.scenarios) == 1
    column = where(path, "mfu", 1)[1].rstrip("0123456789")
    assert (column, "Odd") in p.skipped_columns


def test_a_partly_filled_column_names_the_blank_cell(template, tmp_path):
    plan = dict(PLAN_B)
    del plan["training_tokens"]
    path = fill(template, tmp_path / "part.xlsx", [PLAN_A, plan])
    err = problem_of(path)
    sheet, coord = where(path, "training_tokens", 1)
    (p,) = err.problems
    assert (p.sheet, p.cell) == (sheet, coord)
    assert "training_tokens" in p.message and "blank" in p.message
    assert str(path) in str(err) and f"{sheet}!{coord}" in str(err)


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("total_params", "671 billion", "must be a number, or text such as 70B"),
        ("accelerators", "2k", "must be a number, not text"),
        ("accelerators", True, "TRUE/FALSE"),
        ("mfu", "#DIV/0!", "error value"),
        ("usd_per_kwh", dt.datetime(2026, 1, 1), "not a date"),
        ("start_date", "next March", "must be a date"),
        ("accelerators", 2047.5, "must be a whole number (got 2047.5)"),
    ],
)
def test_a_value_of_the_wrong_kind_names_its_cell(filled, name, value, words):
    edit(filled, name, 1, value)
    err = problem_of(filled)
    sheet, coord = where(filled, name, 1)
    (p,) = err.problems
    assert (p.sheet, p.cell) == (sheet, coord)
    assert words in p.message and name in p.message


def test_every_bad_cell_of_a_file_is_listed(filled):
    edit(filled, "total_params", 0, "lots")
    edit(filled, "accelerators", 1, "many")
    err = problem_of(filled)
    assert len(err.problems) == 2
    assert len(str(err).splitlines()) == 2


def test_a_date_typed_as_a_serial_number_is_a_date(filled):
    edit(filled, "start_date", 0, 46039)  # 2026-01-17 in the 1900 date system
    p = read_planner(filled)
    assert p.scenarios[0].inputs["start_date"] == dt.date(2026, 1, 17)


def test_numbers_in_text_inputs_become_text(filled):
    edit(filled, "scenario_name", 0, 2027)
    assert read_planner(filled).scenarios[0].name == "2027"


# ---------------------------------------------------------------------------------------------
# Files that are not planners, broken or hostile
# ---------------------------------------------------------------------------------------------


def test_missing_file(tmp_path):
    err = problem_of(tmp_path / "nowhere.xlsx")
    assert "no such file" in str(err) and "nowhere.xlsx" in str(err)


def test_a_directory_is_not_a_file(tmp_path):
    d = tmp_path / "dir.xlsx"
    d.mkdir()
    assert "not a regular file" in str(problem_of(d))


def test_a_workbook_without_planner_names(tmp_path):
    path = tmp_path / "other.xlsx"
    wb = openpyxl.Workbook()
    wb.active["A1"] = "quarterly budget"
    wb.save(path)
    assert "not a training-run planner" in str(problem_of(path))


def test_another_template_is_not_a_planner(generated_templates):
    for name in ("cluster-sizing.xlsx", "dense-vs-moe.xlsx"):
        message = str(problem_of(generated_templates[name]))
        assert "is not a training-run planner (it is titled" in message, message
        assert "spans" not in message


def test_an_older_planner_without_the_budget_and_range_rows_reads(filled):
    wb = openpyxl.load_workbook(filled)
    for name in reader.OPTIONAL_INPUTS:
        del wb.defined_names[name]
    wb.save(filled)
    planner = read_planner(filled)
    assert planner.missing_optional == list(reader.OPTIONAL_INPUTS)
    a = planner.scenarios[0]
    assert a.name == PLAN_A["scenario_name"] and a.inputs["total_params"] == PLAN_A["total_params"]
    assert all(a.inputs[n] is None for n in reader.OPTIONAL_INPUTS)
    assert not set(reader.OPTIONAL_INPUTS) & set(a.cells)


def test_one_optional_row_missing_with_another_name_is_still_named(filled):
    wb = openpyxl.load_workbook(filled)
    del wb.defined_names["owner"]
    del wb.defined_names["pue"]
    wb.save(filled)
    err = str(problem_of(filled))
    assert "pue" in err and "owner" in err and "missing" in err


def test_a_planner_with_the_rows_misses_nothing(filled):
    assert read_planner(filled).missing_optional == []


def test_a_missing_defined_name_is_named(filled):
    wb = openpyxl.load_workbook(filled)
    del wb.defined_names["pue"]
    wb.save(filled)
    err = problem_of(filled)
    assert "pue" in str(err) and "missing" in str(err)


def test_a_name_spanning_two_rows(filled):
    wb = openpyxl.load_workbook(filled)
    ((sheet, ref),) = wb.defined_names["mfu"].destinations
    lo_col, row, hi_col, _ = openpyxl.utils.cell.range_boundaries(ref.replace("$", ""))
    a, b = (openpyxl.utils.get_column_letter(c) for c in (lo_col, hi_col))
    wb.defined_names["mfu"].attr_text = f"'{sheet}'!${a}${row}:${b}${row + 1}"
    wb.save(filled)
    assert "one row" in str(problem_of(filled))


def test_not_a_zip(tmp_path):
    path = tmp_path / "fake.xlsx"
    path.write_text("name,params\nx,1\n")
    assert "not a zip" in str(problem_of(path))


def test_truncated_zip(filled, tmp_path):
    path = tmp_path / "truncated.xlsx"
    path.write_bytes(filled.read_bytes()[: filled.stat().st_size // 2])
    assert "corrupt or truncated" in str(problem_of(path))


def test_corrupt_member(filled, tmp_path):
    data = bytearray(filled.read_bytes())
    with zipfile.ZipFile(filled) as z:
        info = z.getinfo("xl/workbook.xml")
    # Flip bytes inside the compressed data of xl/workbook.xml: its CRC check fails.
    start = info.header_offset + 30 + len(info.filename) + len(info.extra) + 5
    for i in range(start, start + 8):
        data[i] ^= 0xFF
    path = tmp_path / "corrupt.xlsx"
    path.write_bytes(bytes(data))
    assert "corrupt" in str(problem_of(path))


def test_a_zip_that_is_not_a_workbook(tmp_path):
    path = tmp_path / "doc.xlsx"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml", "<w/>")
    assert "not an Excel workbook" in str(problem_of(path))


def test_macro_enabled_by_name(filled, tmp_path):
    path = tmp_path / "filled.xlsm"
    path.write_bytes(filled.read_bytes())
    assert "macro-enabled" in str(problem_of(path))


def test_macro_enabled_by_content(filled, tmp_path):
    path = rezip(filled, tmp_path / "vba.xlsx", {"xl/vbaProject.bin": b"\xd0\xcf\x11\xe0"})
    err = problem_of(path)
    assert "macro-enabled" in str(err) and "vbaProject.bin" in str(err)


def test_macro_enabled_by_content_type(filled, tmp_path):
    with zipfile.ZipFile(filled) as z:
        ct = z.read("[Content_Types].xml").decode()
    ct = ct.replace(
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
        "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    )
    path = rezip(filled, tmp_path / "ct.xlsx", {"[Content_Types].xml": ct.encode()})
    assert "macro-enabled" in str(problem_of(path))


def test_size_limit_is_checked_before_parsing(filled, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("parsed a file over the size limit")

    monkeypatch.setattr(openpyxl, "load_workbook", never)
    monkeypatch.setattr(zipfile, "ZipFile", never)
    err = problem_of(filled, max_bytes=1000)
    assert "size limit" in str(err) and "1,000" in str(err)


def test_zip_bomb_by_declared_size(filled, tmp_path, monkeypatch):
    path = rezip(filled, tmp_path / "big.xlsx", {"xl/media/zeros.bin": b"\0" * 2_000_000})
    monkeypatch.setattr(xlsx_safety, "MAX_UNCOMPRESSED_BYTES", 1_000_000)
    assert "unpacks to" in str(problem_of(path))


BOMB = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    "<!DOCTYPE lolz [\n"
    ' <!ENTITY lol "lol">\n'
    + "".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'
        for i in range(1, 10)
    )
    + "]>\n"
)


def test_xml_bomb_is_refused(filled, tmp_path):
    member = sheet_member(filled, "Inputs")
    with zipfile.ZipFile(filled) as z:
        xml = z.read(member).decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    body = body.replace("Total parameters", "&lol9;", 1)
    path = rezip(filled, tmp_path / "bomb.xlsx", {member: (BOMB + body).encode()})
    before = digest(path)
    err = problem_of(path)
    assert "unsafe XML" in str(err) and member in str(err)
    assert digest(path) == before


def test_openpyxl_itself_refuses_the_bomb(filled, tmp_path):
    """Even past the reader's own scan, openpyxl parses through defusedxml."""
    import defusedxml

    member = sheet_member(filled, "Inputs")
    with zipfile.ZipFile(filled) as z:
        xml = z.read(member).decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    path = rezip(filled, tmp_path / "bomb2.xlsx", {member: (BOMB + body).encode()})
    with pytest.raises((defusedxml.DefusedXmlException, ValueError)) as info:
        wb = openpyxl.load_workbook(path, read_only=True)
        list(wb["Inputs"].iter_rows(values_only=True))
    err = info.value
    chain = [err, err.__cause__, err.__context__]
    assert any(isinstance(e, defusedxml.DefusedXmlException) for e in chain)


def test_external_entity_is_refused(filled, tmp_path):
    member = "xl/workbook.xml"
    with zipfile.ZipFile(filled) as z:
        xml = z.read(member).decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    evil = '<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n'
    path = rezip(filled, tmp_path / "xxe.xlsx", {member: (evil + body).encode()})
    assert "unsafe XML" in str(problem_of(path))


def test_an_input_formula_needs_a_saved_value(filled, tmp_path):
    wb = openpyxl.load_workbook(filled)
    ws, coord = planner_cell(wb, "total_params", 0)
    ws[coord] = "=671*1E+9"  # a formula typed into an input cell
    wb.save(filled)
    err = problem_of(filled)
    (p,) = err.problems
    assert (p.sheet, p.cell) == (ws.title, coord) and "formula with no saved value" in p.message
    if find_soffice() is None:
        pytest.skip("LibreOffice not installed")
    (saved,) = recalculate([filled], tmp_path / "lo")
    assert read_planner(saved).scenarios[0].inputs["total_params"] == 671e9


def test_text_that_looks_like_a_formula_is_text(filled):
    edit(filled, "scenario_name", 0, "=cmd|' /C calc'!A0")
    assert read_planner(filled).scenarios[0].name == "=cmd|' /C calc'!A0"


def test_collect_keeps_the_good_columns_and_the_problems(filled):
    edit(filled, "accelerators", 1, "many")
    p = read_planner(filled, collect=True)
    assert [s.name for s in p.scenarios] == [PLAN_A["scenario_name"]]
    (problem,) = p.problems
    assert (problem.sheet, problem.cell) == where(filled, "accelerators", 1)


# ---------------------------------------------------------------------------------------------
# Hardening (issue 8): bounded parts, unsafe XML under any name, encrypted files, =TRUE()
# ---------------------------------------------------------------------------------------------


def test_a_part_over_the_size_bound_is_refused_by_name_before_it_is_decompressed(
    filled, tmp_path, monkeypatch
):
    path = xml_flood(filled, tmp_path / "flood.xlsx", 3 * 1024 * 1024)
    monkeypatch.setattr(xlsx_safety, "MAX_PART_BYTES", 1024 * 1024)

    def never(*args, **kwargs):
        raise AssertionError("decompressed a part over the bound")

    monkeypatch.setattr(zipfile.ZipFile, "testzip", never)
    monkeypatch.setattr(zipfile.ZipFile, "open", never)
    err = problem_of(path)
    (line,) = str(err).splitlines()
    assert str(path) in line and "part customXml/item1.xml" in line
    assert "over the limit of 1,048,576 for one part" in line


def test_a_part_over_the_element_bound_is_refused_by_name(filled, tmp_path, monkeypatch):
    path = xml_flood(filled, tmp_path / "flood.xlsx", 200_000)  # 50,000 elements
    monkeypatch.setattr(xlsx_safety, "MAX_PART_ELEMENTS", 10_000)
    before = digest(path)
    (line,) = str(problem_of(path)).splitlines()
    assert str(path) in line and "part customXml/item1.xml" in line
    assert "over 10,000 XML elements" in line
    assert digest(path) == before


def test_the_element_bound_leaves_room_for_a_planner(filled, tmp_path):
    path = xml_flood(filled, tmp_path / "ok.xlsx", 40_000)  # 10,000 elements: accepted
    assert read_planner(path).scenarios


def test_elements_are_cleared_while_scanning(filled, tmp_path):
    """The scan holds no tree: a part of 200,000 elements leaves none alive in memory."""
    import gc
    import io as _io
    import tracemalloc

    path = xml_flood(filled, tmp_path / "flood.xlsx", 800_000)
    zf = zipfile.ZipFile(_io.BytesIO(path.read_bytes()))
    info = zf.getinfo("customXml/item1.xml")
    gc.collect()
    tracemalloc.start()
    xlsx_safety.scan_part(path, zf, info)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # 200,000 elements kept would be ~20 MB and more


def test_billion_laughs_in_a_part_with_an_unusual_name(filled, tmp_path):
    """The Inputs sheet renamed to .dat (its relationship and content type follow): openpyxl
    would parse it; the reader's scan finds it by its content and refuses it in one line."""
    member = sheet_member(filled, "Inputs")
    with zipfile.ZipFile(filled) as z:
        xml = z.read(member).decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        types = z.read("[Content_Types].xml").decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    body = body.replace("Total parameters", "&lol9;", 1)
    odd = member.replace(".xml", ".dat")
    leaf, odd_leaf = member.rsplit("/", 1)[1], odd.rsplit("/", 1)[1]
    path = rezip(
        filled,
        tmp_path / "odd.xlsx",
        {
            member: None,
            odd: (BOMB + body).encode(),
            "xl/_rels/workbook.xml.rels": rels.replace(leaf, odd_leaf).encode(),
            "[Content_Types].xml": types.replace("/" + member, "/" + odd).encode(),
        },
    )
    (line,) = str(problem_of(path)).splitlines()
    assert "unsafe XML" in line and odd in line


def test_a_vml_drawing_that_is_not_well_formed_is_not_a_problem(filled, tmp_path):
    path = rezip(
        filled, tmp_path / "vml.xlsx", {"xl/drawings/vmlDrawing1.vml": b"<xml><o:p></xml>"}
    )
    assert read_planner(path).scenarios


def test_an_encrypted_workbook_is_named_as_such(tmp_path):
    path = encrypted_workbook(tmp_path / "locked.xlsx")
    (line,) = str(problem_of(path)).splitlines()
    assert "encrypted (password-protected)" in line and str(path) in line
    assert "zip" not in line


def test_an_ole_file_without_encryption_is_an_old_workbook(tmp_path):
    path = encrypted_workbook(tmp_path / "old.xlsx")
    path.write_bytes(
        path.read_bytes().replace("Encrypted".encode("utf-16-le"), "Xncrypted".encode("utf-16-le"))
    )
    (line,) = str(problem_of(path)).splitlines()
    assert "Excel 97-2003" in line and "encrypted" not in line


def _saved_as_formula(filled, tmp_path, name, formula, cached):
    """The input cell rewritten as LibreOffice saves a TRUE typed into it: <f>TRUE()</f><v>1</v>."""
    sheet, coord = where(filled, name, 0)
    member = sheet_member(filled, sheet)
    with zipfile.ZipFile(filled) as z:
        xml = z.read(member).decode()
    cell = re.search(rf'<c r="{coord}"[^>]*?(/>|>.*?</c>)', xml)
    style = re.search(r' s="(\d+)"', cell.group(0))
    s = f' s="{style.group(1)}"' if style else ""
    new = f'<c r="{coord}"{s} t="n"><f aca="false">{formula}</f><v>{cached}</v></c>'
    path = rezip(
        filled, tmp_path / "saved.xlsx", {member: xml.replace(cell.group(0), new).encode()}
    )
    return path, (sheet, coord)


@pytest.mark.parametrize("formula", ["TRUE()", "FALSE()", "true()"])
def test_a_boolean_saved_as_a_formula_is_not_a_number(filled, tmp_path, formula):
    cached = 0 if formula.upper().startswith("FALSE") else 1
    path, (sheet, coord) = _saved_as_formula(filled, tmp_path, "accelerators", formula, cached)
    (p,) = problem_of(path).problems
    assert (p.sheet, p.cell) == (sheet, coord)
    assert "must be a number, not TRUE/FALSE" in p.message


def test_a_numeric_formula_with_a_saved_value_still_reads(filled, tmp_path):
    path, _ = _saved_as_formula(filled, tmp_path, "accelerators", "1024*2", 2048)
    assert read_planner(path).scenarios[0].inputs["accelerators"] == 2048


@pytest.mark.skipif(find_soffice() is None, reason="LibreOffice not installed")
def test_true_typed_into_accelerators_and_saved_by_libreoffice(template, tmp_path):
    path = fill(template, tmp_path / "true.xlsx", [{**PLAN_A, "accelerators": True}])
    (saved,) = recalculate([path], tmp_path / "lo")
    sheet, coord = where(saved, "accelerators", 0)
    with zipfile.ZipFile(saved) as z:
        xml = z.read(sheet_member(saved, sheet)).decode()
    assert f'<c r="{coord}"' in xml and "TRUE()" in xml  # how LibreOffice keeps it
    (p,) = problem_of(saved).problems
    assert (p.sheet, p.cell) == (sheet, coord) and "TRUE/FALSE" in p.message


def test_deep_nesting_is_refused_by_name(filled, tmp_path):
    path = rezip(
        filled, tmp_path / "deep.xlsx", {"customXml/item1.xml": b"<a>" * 300 + b"</a>" * 300}
    )
    (line,) = str(problem_of(path)).splitlines()
    assert "part customXml/item1.xml" in line and "over 256 deep" in line


def test_a_package_of_too_many_parts(filled, tmp_path, monkeypatch):
    path = rezip(filled, tmp_path / "many.xlsx", {f"customXml/i{i}.bin": b"x" for i in range(50)})
    monkeypatch.setattr(xlsx_safety, "MAX_PARTS", 40)
    (line,) = str(problem_of(path)).splitlines()
    assert "parts, over the limit of 40" in line


# ---------------------------------------------------------------------------------------------
# Issue 22: names spread over a sheet, too many columns, long texts, renamed sheets, dates
# ---------------------------------------------------------------------------------------------


def _no_cell_read(monkeypatch):
    def grab(*args, **kwargs):
        raise AssertionError("cells were read before the names' bounds were checked")

    monkeypatch.setattr(reader, "grab", grab)


def test_names_spanning_every_column_are_refused_before_any_cell_is_read(
    filled, tmp_path, monkeypatch
):
    path = spread_names(filled, tmp_path / "wide.xlsx", columns=("A", "XFD"))
    _no_cell_read(monkeypatch)
    err = problem_of(path)
    assert len(str(err).splitlines()) == 1
    assert "'scenario_name'" in str(err) and "$A$4:$XFD$4" in str(err)
    assert f"limit of {reader.MAX_SCENARIO_COLUMNS}" in str(err) and "16,384" in str(err)


def test_a_name_on_the_last_row_is_refused_before_any_cell_is_read(filled, tmp_path, monkeypatch):
    path = spread_names(filled, tmp_path / "tall.xlsx", last_row=1_048_576)
    _no_cell_read(monkeypatch)
    err = str(problem_of(path))
    assert len(err.splitlines()) == 1
    assert "'scenario_name'" in err and "$D$1048576:$K$1048576" in err
    assert f"limit of {reader.MAX_CELLS_READ:,} cells" in err


def test_the_cell_bounds_leave_room_for_a_widened_planner(filled, tmp_path):
    """Every name stretched to MAX_SCENARIO_COLUMNS columns still reads."""
    last = openpyxl.utils.get_column_letter(4 + reader.MAX_SCENARIO_COLUMNS - 1)
    path = spread_names(filled, tmp_path / "widest.xlsx", columns=("D", last))
    planner = read_planner(path, collect=True)  # the notes column L reads as a scenario
    assert planner.width == reader.MAX_SCENARIO_COLUMNS
    assert [s.name for s in planner.scenarios[:2]] == [PLAN_A["scenario_name"], "Dense 70B"]


def test_ten_thousand_scenario_columns_are_refused_at_once(filled, tmp_path, monkeypatch):
    path = spread_names(filled, tmp_path / "many.xlsx", columns=("D", "OUP"))  # 10,699
    _no_cell_read(monkeypatch)
    err = str(problem_of(path))
    assert "10,699 scenario columns" in err and f"limit of {reader.MAX_SCENARIO_COLUMNS}" in err


def test_a_text_over_excels_cell_limit_is_refused_while_scanning(template, tmp_path):
    source = fill(template, tmp_path / "marked.xlsx", [dict(PLAN_A, scenario_name="MARKER")])
    path = long_text(source, tmp_path / "long.xlsx", "MARKER", reader.MAX_CELL_TEXT_CHARS + 1)
    err = str(problem_of(path))
    assert len(err.splitlines()) == 1 and "32,768 characters" in err
    assert f"limit of {reader.MAX_CELL_TEXT_CHARS:,}" in err and "xxxxxxxxxx" not in err


def test_a_text_input_over_the_text_bound_is_refused_at_its_cell(template, tmp_path):
    name = "x" * (reader.MAX_TEXT_CHARS + 1)
    path = fill(template, tmp_path / "long.xlsx", [dict(PLAN_A, owner=name)])
    err = str(problem_of(path))
    sheet, cell = where(path, "owner", 0)
    assert f"{sheet}!{cell}" in err and f"limit of {reader.MAX_TEXT_CHARS}" in err
    assert len(err) < 300
    ok = fill(template, tmp_path / "ok.xlsx", [dict(PLAN_A, owner="y" * reader.MAX_TEXT_CHARS)])
    assert read_planner(ok).scenarios[0].inputs["owner"] == "y" * reader.MAX_TEXT_CHARS


def test_a_renamed_inputs_sheet_with_a_quote_is_read(filled, tmp_path):
    title = "Team's = plan"
    quoted = "'Team''s = plan'!"

    def rewrite(name, ref):
        for old in ("'Inputs'!", "Inputs!"):
            if ref.startswith(old):
                return quoted + ref[len(old) :]
        return None

    path = redefine_names(filled, tmp_path / "renamed.xlsx", rewrite, {"Inputs": title})
    planner = read_planner(path)
    assert [s.name for s in planner.scenarios] == [PLAN_A["scenario_name"], PLAN_B["scenario_name"]]
    assert planner.scenarios[0].cells["total_params"].sheet == title
    cell = read_planner(filled).scenarios[0].cells["total_params"].cell  # D and its row
    assert str(planner.scenarios[0].cells["total_params"]) == f"'Team''s = plan'!{cell}"


@pytest.mark.parametrize(
    "value, shown",
    [
        (-5, "1899-12-25"),
        (dt.date(1899, 12, 31), "serial number below 1"),
        (1e15, "#VALUE!"),
        (0.5, "0.5"),
    ],
)
def test_a_start_date_outside_the_spreadsheet_dates_is_refused(filled, value, shown):
    wb = openpyxl.load_workbook(filled)
    ws, coord = planner_cell(wb, "start_date", 0)
    ws[coord].value = value
    ws[coord].number_format = "yyyy-mm-dd" if not isinstance(value, float) or value > 1 else "0.0"
    wb.save(filled)
    err = str(problem_of(filled))
    assert f"{ws.title}!{coord}" in err and shown in err
    assert "from 1900-01-01 to 9999-12-31" in err


def _with_bytes(source, target, part_of, old, new):
    """Copy ``source`` with ``old`` replaced by ``new`` in the first part ``part_of`` selects."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as z:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if part_of(info.filename, data):
                data = data.replace(old, new, 1)
            z.writestr(info, data)
    return target


_RUNS = {
    "attribute": (b"<worksheet ", b'<worksheet foo="' + b"a" * 2_000_000 + b'" '),
    "comment": (b"<sheetData>", b"<!--" + b"c" * 2_000_000 + b"--><sheetData>"),
    "text": (b"MARKER", b"x" * 2_000_000),
}


@pytest.mark.parametrize("kind", sorted(_RUNS))
def test_a_token_past_the_run_bound_is_refused_before_parsing_it(template, tmp_path, kind):
    """Issue 22 review: expat 2.5 rescans an unfinished token on every 16 kB fed, so a
    30-million-byte attribute or comment in a 97 kB file took 110 s (and was accepted)."""
    source = fill(template, tmp_path / "marked.xlsx", [dict(PLAN_A, scenario_name="MARKER")])
    old, new = _RUNS[kind]
    path = _with_bytes(source, tmp_path / f"{kind}.xlsx", lambda n, d: b"MARKER" in d, old, new)
    err = str(problem_of(path))
    assert len(err.splitlines()) == 1 and "without an XML tag" in err
    assert f"{reader.MAX_XML_RUN_BYTES:,} bytes" in err and "aaaaaaaaaa" not in err


def test_a_long_document_property_is_refused_too(template, tmp_path):
    source = fill(template, tmp_path / "plain.xlsx", [PLAN_A])
    title = b"<dc:title>" + b"t" * 2_000_000 + b"</dc:title></cp:coreProperties>"
    path = _with_bytes(
        source,
        tmp_path / "title.xlsx",
        lambda n, d: n == "docProps/core.xml",
        b"</cp:coreProperties>",
        title,
    )
    err = str(problem_of(path))
    assert "part docProps/core.xml" in err and "without an XML tag" in err


def test_the_run_bound_leaves_room_for_the_longest_cell_text(template, tmp_path):
    """32,768 emoji written as character references (9 bytes each, 295 kB) reach the cell
    limit's own message, not the run bound."""
    source = fill(template, tmp_path / "marked.xlsx", [dict(PLAN_A, scenario_name="MARKER")])
    text = b"&#x1F600;" * (reader.MAX_CELL_TEXT_CHARS + 1)
    path = _with_bytes(
        source, tmp_path / "emoji.xlsx", lambda n, d: b"MARKER" in d, b"MARKER", text
    )
    err = str(problem_of(path))
    assert "32,768 characters" in err and f"limit of {reader.MAX_CELL_TEXT_CHARS:,}" in err
