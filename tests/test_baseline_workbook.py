"""A baseline given as the earlier hand-off's workbook: its very hidden "Baseline data" sheet
gives the same comparison as its CSV folder; an older hand-off, a planner and a crafted
workbook are refused in one line."""

from __future__ import annotations

import datetime as dt

import openpyxl
import pytest
from test_finance_handoff import EARLY, LATE
from test_handoff_budget import run, with_references
from test_report_fixtures import PLANNER

from compute_lab.cli import main
from workbook_templates import baseline_workbook
from workbook_templates.baseline import BaselineError, read_baseline
from workbook_templates.report.baseline_data import BASELINE_DATA_SHEET


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def earlier(template, tmp_path_factory):
    """An earlier hand-off as workbook and CSV folder: Early Approved, Late Proposed, a run
    without a start date, "Gone" Proposed."""
    d = tmp_path_factory.mktemp("earlier")
    gone = {**LATE, "scenario_name": "Gone", "start_date": dt.datetime(2027, 5, 1)}
    someday = {**LATE, "scenario_name": "Someday", "start_date": None}
    p = with_references(template, d / "team.xlsx", [EARLY, LATE, gone, someday])
    assert run(p, "--csv", d / "csv", "--out", d / "h.xlsx", "--version", "Budget FY2027") == 0
    return d


def _now(template, path):
    repriced = {**EARLY, "usd_per_accelerator_hour": 2.75}
    later = {**LATE, "start_date": dt.datetime(2027, 12, 1)}
    new = {**LATE, "scenario_name": "New", "start_date": dt.datetime(2027, 9, 1)}
    return with_references(template, path, [repriced, later, new])


def test_the_workbook_and_the_csv_folder_give_the_same_baseline_csv(template, earlier, tmp_path):
    p = _now(template, tmp_path / "team.xlsx")
    for name, base in (("from_csv", earlier / "csv"), ("from_book", earlier / "h.xlsx")):
        assert run(p, "--csv", tmp_path / name, "--baseline", base, "--version", "Q2") == 0
    a = (tmp_path / "from_csv" / "baseline.csv").read_bytes()
    b = (tmp_path / "from_book" / "baseline.csv").read_bytes()
    assert a == b
    assert b"Someday" in a and b"TEAM-L-GONE" in a and b"Budget FY2027" in a
    assert vars(read_baseline(earlier / "csv")) | {"path": None} == vars(
        read_baseline(earlier / "h.xlsx")) | {"path": None}  # fmt: skip


def test_the_baseline_data_sheet_is_very_hidden_with_two_tables(earlier):
    wb = openpyxl.load_workbook(earlier / "h.xlsx")
    ws = wb[BASELINE_DATA_SHEET]
    assert ws.sheet_state == "veryHidden"
    assert wb.sheetnames[-1] == BASELINE_DATA_SHEET
    assert [s.title for s in wb.worksheets if s.sheet_state == "visible"][0] == "Summary"
    assert set(ws.tables) == {"baseline_runs", "baseline_p50"}
    assert all(isinstance(c.value, str) for row in ws.iter_rows() for c in row
               if c.value is not None)  # fmt: skip


def _refused(template, base, tmp_path, capsys):
    assert main(["report", str(template), "--csv", str(tmp_path / "out"),
                 "--baseline", str(base)]) == 2  # fmt: skip
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1, line
    assert f"error: --baseline: {base}: " in line and line.endswith("nothing written")
    assert not (tmp_path / "out").exists()
    return line


def test_a_workbook_made_before_the_baseline_data_sheet_is_refused(template, earlier, tmp_path,
                                                                   capsys):  # fmt: skip
    wb = openpyxl.load_workbook(earlier / "h.xlsx")
    del wb[BASELINE_DATA_SHEET]
    old = tmp_path / "old.xlsx"
    wb.save(old)
    line = _refused(template, old, tmp_path, capsys)
    assert "made by an earlier version of compute-lab report" in line
    assert "give its CSV folder" in line and "re-run that report" in line


def test_a_planner_is_not_a_baseline(template, tmp_path, capsys):
    line = _refused(template, template, tmp_path, capsys)
    assert "not a hand-off workbook" in line and "a planner is not a baseline" in line


def _edited(earlier, tmp_path, edit):
    wb = openpyxl.load_workbook(earlier / "h.xlsx")
    edit(wb[BASELINE_DATA_SHEET])
    out = tmp_path / "edited.xlsx"
    wb.save(out)
    return out


def _p50_row(ws):
    """The row of the baseline_p50 table's first data row, and its p50_usd column."""
    ref = ws.tables["baseline_p50"].ref
    first = int(ref.split(":")[0][1:])
    header = [c.value for c in ws[first]]
    return first + 1, header.index("p50_usd") + 1


@pytest.mark.parametrize(("value", "says"), [
    ("=1+1", "holds a formula"),
    ("12.345", "is not US$ to the cent"),
    ("1e+20", "is not US$ to the cent"),
])  # fmt: skip
def test_a_crafted_cell_is_refused_naming_file_sheet_row_and_column(
        template, earlier, tmp_path, capsys, value, says):  # fmt: skip
    def edit(ws):
        row, col = _p50_row(ws)
        ws.cell(row=row, column=col).value = value  # "=1+1": a formula, as openpyxl writes it

    book = _edited(earlier, tmp_path, edit)
    with pytest.raises(BaselineError) as err:
        read_baseline(book)
    row = _p50_row(openpyxl.load_workbook(book)[BASELINE_DATA_SHEET])[0]
    assert str(err.value).startswith(
        f"{book}: sheet 'Baseline data', table baseline_p50: row {row}, column p50_usd: "
    )
    assert says in str(err.value)
    assert says in _refused(template, book, tmp_path, capsys)


def test_a_cell_past_the_table_and_a_third_table_are_refused(earlier, tmp_path):
    book = _edited(earlier, tmp_path, lambda ws: ws.cell(row=2, column=60, value="x"))
    with pytest.raises(BaselineError, match=r"table baseline_runs: row 2, column BH: a cell past"):
        read_baseline(book)
    book = _edited(earlier, tmp_path, lambda ws: ws.cell(row=1, column=16384, value="x"))
    with pytest.raises(BaselineError, match=r"row 1, column XFD: past the 64 columns"):
        read_baseline(book)
    book = _edited(earlier, tmp_path, lambda ws: ws.cell(row=ws.max_row + 2, column=1, value="x"))
    with pytest.raises(BaselineError, match="a third table"):
        read_baseline(book)


def test_a_huge_sheet_is_refused_while_it_is_read(earlier, tmp_path, monkeypatch):
    monkeypatch.setattr(baseline_workbook, "MAX_BASELINE_ROWS", 3)
    with pytest.raises(BaselineError, match=r"over 3 rows, the limit for a baseline table"):
        read_baseline(earlier / "h.xlsx")
    monkeypatch.setattr(baseline_workbook, "MAX_BASELINE_WORKBOOK_BYTES", 1000)
    with pytest.raises(BaselineError, match=r"over the limit of 1,000 for a baseline workbook"):
        read_baseline(earlier / "h.xlsx")


def test_a_file_that_is_not_a_workbook_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "h.xlsx"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises(BaselineError) as err:
        read_baseline(bad)
    assert str(err.value).startswith(f"{bad}: ") and "\n" not in str(err.value)
    with pytest.raises(BaselineError, match="no such file"):
        read_baseline(tmp_path / "missing.xlsx")


def test_a_workbook_saved_again_by_a_spreadsheet_still_reads(earlier, tmp_path):
    """LibreOffice saves the sheet "hidden" and writes its own strings and rows: the same
    baseline."""
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    (saved,) = recalculate([earlier / "h.xlsx"], tmp_path)
    assert vars(read_baseline(earlier / "csv")) | {"path": None} == vars(
        read_baseline(saved)) | {"path": None}  # fmt: skip
