"""Issue 18, the hand-off side: defaults and approvals in the checks, continuous periods, the
FP&A export (long format, run id, version and as-of date, cents, no total rows, a data
dictionary), and the billions slip refused in one line."""

from __future__ import annotations

import csv
import datetime as dt
import shutil

import openpyxl
import pytest
from test_handoff_budget import expected, read_csv, run, with_references
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER

from workbook_templates import report

#: Two runs a year apart: the months between them spend nothing.
EARLY = {**PLAN_B, "scenario_name": "Early", "owner": "Team E", "budget_status": "Approved",
         "approval_ref": "CFO-2027-01", "approval_date": dt.datetime(2027, 1, 4),
         "start_date": dt.datetime(2027, 2, 1)}  # fmt: skip
LATE = {**PLAN_A, "scenario_name": "Late", "owner": "Team L", "budget_status": "Proposed",
        "start_date": dt.datetime(2027, 11, 1)}  # fmt: skip
#: Approved without a reference, owner and start date never typed, price left blank.
LAZY = {**PLAN_B, "scenario_name": "Custom 3", "budget_status": "Approved",
        "usd_per_accelerator_hour": None, "owner": None, "start_date": None}  # fmt: skip


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def handoff(template, tmp_path_factory):
    d = tmp_path_factory.mktemp("fin-handoff")
    p = with_references(template, d / "team.xlsx", [EARLY, LATE, LAZY])
    assert run(p, "--csv", d / "csv", "--out", d / "h.xlsx") == 0
    return d


def test_every_month_between_the_first_and_the_last_is_listed(handoff):
    months = [m["month"] for m in read_csv(handoff / "csv", "monthly")]
    assert months[0] == "2027-02-01" and months[-1] >= "2027-12-01"
    want, m = [], dt.date(2027, 2, 1)
    while m.isoformat() <= months[-1]:
        want.append(m.isoformat())
        m = dt.date(m.year + m.month // 12, m.month % 12 + 1, 1)
    assert months == want  # no gap: Jun 2027 is followed by Jul 2027, at $0
    gap = [m for m in read_csv(handoff / "csv", "monthly") if m["month"] == "2027-07-01"]
    assert float(gap[0]["total_cost_usd"]) == 0
    quarters = [q["quarter"] for q in read_csv(handoff / "csv", "quarterly")]
    assert quarters == ["FY2027 Q1", "FY2027 Q2", "FY2027 Q3", "FY2027 Q4"] + quarters[4:]


def test_the_long_format_export_adds_up_to_the_cent(handoff):
    rows = read_csv(handoff / "csv", "fpa")
    assert list(rows[0]) == ["run_id", "month", "fiscal_year", "quarter", "status", "account",
                             "p50_usd", "p90_usd", "template_version", "as_of_date"]  # fmt: skip
    totals = read_csv(handoff / "csv", "totals")[0]
    cents = sum(round(float(r["p50_usd"]) * 100) for r in rows)
    assert cents == round(float(totals["total_cost_usd"]) * 100)
    cents = sum(round(float(r["p90_usd"]) * 100) for r in rows)
    assert cents == round(float(totals["total_cost_usd_p90"]) * 100)
    assert {r["account"] for r in rows} == {"compute", "electricity", "other"}
    assert all(abs(float(r[k]) * 100 - round(float(r[k]) * 100)) < 1e-6
               for r in rows for k in ("p50_usd", "p90_usd"))  # fmt: skip
    unscheduled = [r for r in rows if r["month"] == ""]
    assert unscheduled and {r["fiscal_year"] for r in unscheduled} == {"unscheduled"}
    runs = {r["run_id"] for r in read_csv(handoff / "csv", "budget")}
    assert {r["run_id"] for r in rows} == runs and len(runs) == 3


def test_every_csv_is_stamped_and_has_no_total_row(handoff):
    folder = handoff / "csv"
    for name in report.CSV_FILES:
        with open(folder / f"{name}.csv", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            head = next(reader)
            body = list(reader)
        assert head[-2:] == ["template_version", "as_of_date"], name
        for row in body:
            assert row[-1] == dt.datetime.now(dt.UTC).date().isoformat() or row[-1] >= "2026"
            assert not any(v in ("Total", "Total in the budget") or v.startswith("Subtotal")
                           for v in row[:3]), (name, row)  # fmt: skip
    status = read_csv(folder, "status_totals")
    assert [r["budget_status"] for r in status] == ["Approved", "Proposed"]
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    for name in report.CSV_FILES:
        assert f"{name}.csv: " in readme
    assert "  run_id: stable id" in readme and "  p90_usd: " in readme


def test_the_run_id_does_not_depend_on_the_file_or_column(template, handoff, tmp_path):
    moved = tmp_path / "elsewhere" / "renamed.xlsx"
    moved.parent.mkdir()
    p = with_references(template, tmp_path / "other.xlsx", [{}, LATE, EARLY])  # other columns
    shutil.copyfile(p, moved)
    assert run(moved, "--csv", tmp_path / "csv") == 0
    ids = {r["scenario"]: r["run_id"] for r in read_csv(tmp_path / "csv", "budget")}
    before = {r["scenario"]: r["run_id"] for r in read_csv(handoff / "csv", "budget")}
    assert ids["Late"] == before["Late"] and ids["Early"] == before["Early"]
    assert ids["Late"] != ids["Early"] and ids["Late"].startswith("R-")


def test_defaults_nobody_typed_and_approvals_without_reference_are_warned(handoff):
    checks = read_csv(handoff / "csv", "checks")
    typed = [c for c in checks if c["check"] == "Typed, not defaults"]
    (lazy,) = [c for c in typed if "'Custom 3'" in c["detail"]]
    assert lazy["status"] == "WARN"
    for label in ("Scenario", "Owner", "Price per accelerator-hour", "Run start date"):
        assert label in lazy["detail"], label
    assert not any("'Early'" in c["detail"] for c in typed)
    approvals = [c for c in checks if c["check"] == "Approval"]
    assert len(approvals) == 1 and "'Custom 3'" in approvals[0]["detail"]
    budget = {r["scenario"]: r for r in read_csv(handoff / "csv", "budget")}
    assert budget["Custom 3"]["approval"] == "Approved (no reference)"
    assert budget["Early"]["approval"] == "CFO-2027-01 (2027-01-04)"
    assert budget["Late"]["approval"] == ""
    blank = {(b["scenario"], b["input"]) for b in read_csv(handoff / "csv", "blank_inputs")}
    assert ("Custom 3", "usd_per_accelerator_hour") in blank  # the default listed per run
    assert float(budget["Custom 3"]["total_cost_usd"]) == pytest.approx(
        expected({**LAZY, "usd_per_accelerator_hour": 2.0})["total_cost_usd"], abs=0.01
    )


def test_billions_typed_are_refused_in_one_line_naming_the_cells(template, tmp_path, capsys):
    slip = {**PLAN_B, "scenario_name": "Slip", "total_params": 70, "training_tokens": 2000,
            "start_date": dt.datetime(2027, 3, 1)}  # fmt: skip
    p = with_references(template, tmp_path / "slip.xlsx", [slip])
    code = run(p, "--csv", tmp_path / "csv")
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "total_params" in err and "billions" in err
    assert not (tmp_path / "csv").exists()


def test_the_workbook_names_the_approval_and_keeps_a_total_row(handoff):
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    texts = [c.value for row in wb["Summary"].iter_rows() for c in row if c.value is not None]
    assert "Approved (no reference)" in texts and "Total in the budget" in texts


def test_each_sheet_is_an_excel_table_named_like_its_csv(handoff):
    from workbook_templates.report.xlsx import TABLE_NAMES

    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    for title, name in TABLE_NAMES.items():
        ws = wb[title]
        if ws.max_row < 2 or title == "Mismatches" and not list(ws.tables):
            continue
        (table,) = ws.tables.values()
        assert table.displayName == name and table.ref.startswith("A1:"), title
        heads = [c.value for c in ws[1]][: len(table.tableColumns)]
        assert [c.name for c in table.tableColumns] == heads, title
        last = int(table.ref.split(":")[1].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        assert ws.cell(last + 1, 1).value in (None, "Total"), title  # totals outside it
    assert set(TABLE_NAMES.values()) - {"outputs"} <= set(report.CSV_FILES)


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_the_totals_recalculated_by_both_engines_equal_the_engine(handoff, tmp_path):
    """Every total of the hand-off is a SUBTOTAL(9, ...) formula; LibreOffice and Gnumeric
    compute the same, and the Costs and Monthly totals equal the engine's."""
    from helpers import require_soffice, require_ssconvert
    from helpers_portable import lint_workbook
    from test_engines import compare

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    src = handoff / "h.xlsx"
    wb = openpyxl.load_workbook(src)
    formulas = [c.value for ws in wb for row in ws.iter_rows() for c in row if c.data_type == "f"]
    assert formulas and all(f.startswith("=SUBTOTAL(9,") for f in formulas)
    assert not lint_workbook(wb)
    (lo,) = recalculate([src], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([src], tmp_path / "gn")
    n, differ = compare(src, lo, gn)
    assert n == len(formulas) and not differ, differ[:6]
    want = sum(expected(p)["total_cost_usd"] for p in (EARLY, LATE,
               {**LAZY, "usd_per_accelerator_hour": 2.0}))  # fmt: skip
    from test_report import header

    for path in (lo, gn):
        values = openpyxl.load_workbook(path, data_only=True)
        costs = values["Costs"]
        heads = [c.value for c in costs[1]]
        col = heads.index(header("total_cost_usd"))
        (total,) = [r for r in costs.iter_rows(values_only=True) if r[0] == "Total"]
        assert total[col] == pytest.approx(want, rel=1e-12), path
        monthly = values["Monthly"]
        heads = [c.value for c in monthly[1]]
        (total,) = [r for r in monthly.iter_rows(values_only=True) if r[0] == "Total"]
        assert total[heads.index(header("total_cost_usd"))] == pytest.approx(want, rel=1e-12)


#: Most pages the 3-run hand-off prints to (17 before issue 18; the target of about 10 is
#: not reached: Runs and Ranges still print two pages wide).
MAX_HANDOFF_PAGES = 16


@pytest.mark.libreoffice
def test_the_three_run_handoff_page_count(handoff, tmp_path):
    import re

    from helpers import require_soffice

    from workbook_templates.recalc import convert

    require_soffice()
    (pdf,) = convert([handoff / "h.xlsx"], tmp_path, "pdf")
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)",
                                         pdf.read_bytes())]  # fmt: skip
    assert 1 <= max(counts) <= MAX_HANDOFF_PAGES
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    assert wb["Outputs"].page_setup.fitToWidth == 1  # one page wide: 16 columns
