"""Issue 18, the hand-off side: defaults and approvals in the checks, continuous periods, the
FP&A export (long format, run id, version and as-of date, cents, no total rows, a data
dictionary), and the billions slip refused in one line."""

from __future__ import annotations

import csv
import datetime as dt
import re
import shutil
from pathlib import Path

import openpyxl
import pytest
from helpers_report import named_cells
from test_handoff_budget import expected, read_csv, run, with_references
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER

from workbook_templates import report
from workbook_templates.report import csv_files

#: The example plan's actuals (its run code), for a hand-off with every optional file.
ACTUALS = Path(report.__file__).parents[1] / "example-actuals.csv"

#: Two runs a year apart: the months between them spend nothing.
EARLY = {**PLAN_B, "scenario_name": "Early", "owner": "Team E", "budget_status": "Approved",
         "approval_ref": "CFO-2027-01", "approval_date": dt.datetime(2027, 1, 4),
         "approver": "CFO", "approved_amount_usd": 1e9,
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
    assert list(rows[0]) == ["run_code", "month", "fiscal_year", "quarter", "status", "account",
                             "cost_centre", "gl_account", "expense_class", "currency",
                             "accelerator_hours", "accelerator_hours_p90", "rate", "p50_usd",
                             "p90_usd", "version", "template_version", "as_of_date"]  # fmt: skip
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
    runs = {r["run_code"] for r in read_csv(handoff / "csv", "budget")}
    assert {r["run_code"] for r in rows} == runs and len(runs) == 3


def _dictionary(folder):
    """{file name: {column: meaning}} of the README.txt beside the CSV files (one line per
    column: a repeated column is an error)."""
    out, name = {}, None
    for line in (folder / "README.txt").read_text(encoding="utf-8").splitlines():
        head = re.match(r"([a-z0-9_]+)\.csv:", line)
        if head:
            name = head.group(1)
            out[name] = {}
        elif line.startswith("  ") and name:
            col, meaning = line.strip().split(": ", 1)
            assert col not in out[name], (name, col)
            out[name][col] = meaning
    return out


def test_the_data_dictionary_gives_every_column_a_meaning(example_plan, handoff, tmp_path):
    """Every column of every CSV file (with and without --actuals and --baseline) has one
    line in README.txt, and none is only its own name with spaces for underscores."""
    base, now = tmp_path / "base", tmp_path / "now"
    assert run(example_plan, "--csv", base) == 0
    assert run(example_plan, "--csv", now, "--actuals", ACTUALS, "--baseline", base) == 0
    seen = set()
    for folder in (handoff / "csv", base, now):
        notes = _dictionary(folder)
        files = sorted(p.stem for p in folder.glob("*.csv"))
        assert sorted(notes) == files, folder
        for name in files:
            with open(folder / f"{name}.csv", encoding="utf-8", newline="") as fh:
                header = next(csv.reader(fh))
            assert list(notes[name]) == header, name
            for col, meaning in notes[name].items():
                assert meaning.strip() and meaning != col.replace("_", " "), (name, col)
                seen.add(name)
    assert {"variance", "baseline", *csv_files.FORECAST_FILES, "fpa", "totals"} <= seen


def test_a_column_without_a_meaning_is_refused_not_named(handoff):
    assert "FP&A" in csv_files.column_meaning("checks", "check")
    with pytest.raises(LookupError, match="new_column"):
        csv_files.column_meaning("fpa", "new_column")


def test_every_csv_is_stamped_and_has_no_total_row(handoff):
    folder = handoff / "csv"
    for name in report.CSV_FILES:
        with open(folder / f"{name}.csv", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            head = next(reader)
            body = list(reader)
        assert head[-3:] == ["version", "template_version", "as_of_date"], name
        for row in body:
            assert row[-1] == dt.datetime.now(dt.UTC).date().isoformat() or row[-1] >= "2026"
            assert not any(v in ("Total", "Total in the budget") or v.startswith("Subtotal")
                           for v in row[:3]), (name, row)  # fmt: skip
    status = read_csv(folder, "status_totals")
    lines = ["Approved", "Proposed", "Proposed (approval incomplete)"]
    assert [r["budget_status"] for r in status] == lines
    readme = (folder / "README.txt").read_text(encoding="utf-8")
    for name in report.CSV_FILES:
        assert f"{name}.csv: " in readme
    assert "  run_code: the run's key" in readme and "  p90_usd: " in readme


def test_the_run_code_does_not_depend_on_the_file_or_column(template, handoff, tmp_path):
    moved = tmp_path / "elsewhere" / "renamed.xlsx"
    moved.parent.mkdir()
    p = with_references(template, tmp_path / "other.xlsx", [{}, LATE, EARLY])  # other columns
    shutil.copyfile(p, moved)
    assert run(moved, "--csv", tmp_path / "csv") == 0
    ids = {r["scenario"]: r["run_code"] for r in read_csv(tmp_path / "csv", "budget")}
    before = {r["scenario"]: r["run_code"] for r in read_csv(handoff / "csv", "budget")}
    assert ids["Late"] == before["Late"] and ids["Early"] == before["Early"]
    assert ids["Late"] != ids["Early"]


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
    assert budget["Custom 3"]["approval"] == ("missing: reference, date, approver, amount")
    assert budget["Early"]["approval"] == "CFO-2027-01 (2027-01-04), CFO, $1.0B"
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
    texts = [c.value for row in wb["Budget"].iter_rows() for c in row if c.value is not None]
    assert "Subtotal: Proposed (approval incomplete)" in texts
    assert "missing: reference, date, approver, amount" in texts
    assert "Total in the budget" in texts
    texts = [c.value for row in wb["Summary"].iter_rows() for c in row if c.value is not None]
    assert "Total in the budget" in texts


def _tables(wb):
    """{Table name: (sheet, table)} of the workbook."""
    return {name: (ws, ws.tables[name]) for ws in wb for name in ws.tables}


def test_each_table_is_an_excel_table_named_like_its_csv(handoff):
    from workbook_templates.report.baseline_data import BASELINE_DATA_SHEET, BASELINE_DATA_TABLES
    from workbook_templates.report.xlsx import TABLE_NAMES

    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    tables = _tables(wb)
    for title, names in TABLE_NAMES.items():
        for name in names:
            if name == "mismatches" and name not in tables:  # none: a line says so
                continue
            ws, table = tables[name]
            assert ws.title == title, name
            first, last = table.ref.split(":")
            top = int(first.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            heads = [c.value for c in ws[top]][: len(table.tableColumns)]
            assert [c.name for c in table.tableColumns] == heads, name
            end = int(last.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
            after = ws.cell(end + 1, 1).value  # totals outside it
            assert after in (None, "Total") or after.startswith("Subtotal: "), name
    assert set(tables) - set(BASELINE_DATA_TABLES) <= set(report.CSV_FILES)
    assert {tables[n][0].title for n in BASELINE_DATA_TABLES} == {BASELINE_DATA_SHEET}


def test_no_cell_is_merged_anywhere(template, handoff, tmp_path):
    """Issue 18: no merged cells in the hand-off (the Summary merged its long sentences), with
    one run and with three."""
    p = with_references(template, tmp_path / "one.xlsx", [EARLY])
    assert run(p, "--out", tmp_path / "one-h.xlsx") == 0
    for path in (handoff / "h.xlsx", tmp_path / "one-h.xlsx"):
        wb = openpyxl.load_workbook(path)
        merged = {ws.title: list(ws.merged_cells.ranges) for ws in wb if ws.merged_cells.ranges}
        assert not merged, merged
        assert wb.sheetnames[:2] == ["Summary", "Budget"]


def test_page_one_figures_are_named_cells_equal_to_the_csv(handoff):
    """Each headline figure, and each fiscal year's and quarter's P50 and P90, is a number in
    its own named cell on the Summary, equal to the CSV files (to the cent)."""
    from workbook_templates.report.summary import period_name

    wb = openpyxl.load_workbook(handoff / "h.xlsx", data_only=True)
    named = named_cells(wb)
    totals = read_csv(handoff / "csv", "totals")[0]
    for name, column in (("handoff_total_p50", "total_cost_usd"),
                         ("handoff_total_p90", "total_cost_usd_p90"),
                         ("handoff_contingency", "contingency_usd"),
                         ("handoff_approved", "approved_total_cost_usd"),
                         ("handoff_proposed", "proposed_total_cost_usd")):  # fmt: skip
        assert named[name] == pytest.approx(float(totals[column]), abs=0.01), name
    years = read_csv(handoff / "csv", "fiscal_years")
    quarters = read_csv(handoff / "csv", "quarterly")
    assert len(years) >= 1 and len(quarters) == 4 * len(years)
    for row in years + quarters:
        period = row["quarter"] if "quarter" in row else row["fiscal_year"]
        for level, column in (("p50", "total_cost_usd"), ("p90", "total_cost_usd_p90")):
            value = named[period_name(period, level)]
            assert isinstance(value, int | float), (period, level)
            assert value == pytest.approx(float(row[column]), abs=0.01), (period, level)
    assert period_name("FY2027 Q1", "p50") == "budget_fy2027q1_p50"
    assert period_name("FY2026/27", "p90") == "budget_fy2026_27_p90"
    unscheduled = named[period_name("unscheduled", "p50")]  # the run without a start date
    assert unscheduled == pytest.approx(float(totals["unscheduled_total_cost_usd"]), abs=0.01)
    for name in named:
        if name.startswith(("budget_", "handoff_")) and not name.startswith(
            ("budget_runs_", "budget_independent_")
        ):
            (dest,) = wb.defined_names[name].destinations
            assert dest[0] == "Summary", name  # the Budget sheet's run rows: budget_runs_*


def test_the_monthly_chart_has_a_date_axis_over_every_month(handoff):
    """The Monthly chart: a date axis (mmm yyyy) over every month from the first to the last
    ($0 months included), the P50 and the contingency up to the P90, budget runs only."""
    import zipfile

    with zipfile.ZipFile(handoff / "h.xlsx") as z:
        (chart,) = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert "<dateAx>" in chart and 'formatCode="mmm yyyy"' in chart and "<barChart>" in chart
    assert "P50 (the estimate)" in chart and "Contingency: P50 up to P90" in chart
    months = read_csv(handoff / "csv", "monthly")
    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    ws = wb["Monthly"]
    shown = [r[0] for r in ws.iter_rows(min_row=2, values_only=True)
             if isinstance(r[0], dt.datetime)]  # fmt: skip
    assert [m.date().isoformat() for m in shown] == [m["month"] for m in months]
    n = len(shown)
    assert f"$A$2:$A${n + 1}" in chart  # the categories: every month, no Unscheduled row
    budget = sum(float(r["total_cost_usd"]) for r in read_csv(handoff / "csv", "budget"))
    scheduled = float(read_csv(handoff / "csv", "totals")[0]["scheduled_total_cost_usd"])
    assert sum(float(m["total_cost_usd"]) for m in months) == pytest.approx(scheduled, abs=0.1)
    assert scheduled < budget  # the Reference columns (preset runs) are in no month


def test_one_name_for_the_compute_cost(handoff):
    """The compute cost is "Compute cost" on every sheet and compute_cost_usd in every CSV
    header and the data dictionary; "rental" only where the price basis is described."""
    import re

    wb = openpyxl.load_workbook(handoff / "h.xlsx")
    texts = [str(c.value) for ws in wb for row in ws.iter_rows() for c in row if c.value]
    texts += [str(c.value) for ws in wb for c in ws[1] if c.value]
    assert any("Compute cost" in t for t in texts)
    bad = re.compile(r"rental[- ]?(equivalent )?cost|rental_cost", re.IGNORECASE)
    assert not [t for t in texts if bad.search(t)]
    for name in report.CSV_FILES:
        with open(handoff / "csv" / f"{name}.csv", encoding="utf-8") as fh:
            head = next(csv.reader(fh))
        assert not [h for h in head if "rental" in h], name
    readme = (handoff / "csv" / "README.txt").read_text(encoding="utf-8")
    assert "compute_cost_usd: Compute cost" in readme and not bad.search(readme)
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "handoff.md").read_text(encoding="utf-8")
    assert not bad.search(doc)
    summary = " ".join(str(c.value) for row in wb["Summary"].iter_rows() for c in row
                       if isinstance(c.value, str))  # fmt: skip
    assert "The total includes the compute cost" in summary and "it excludes" in summary


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_the_totals_recalculated_by_both_engines_equal_the_engine(handoff, tmp_path):
    """Every total of the hand-off is a SUBTOTAL(9, ...) formula (page 1's by status: SUMIF
    and COUNTIF over the Budget rows; its periods: SUMIFS and SUMIF over the Monthly rows, a
    year the SUM of its quarters); LibreOffice and Gnumeric compute the same, and the Costs,
    Runs and Monthly totals equal the engine's."""
    from helpers import require_soffice, require_ssconvert
    from helpers_portable import lint_workbook
    from test_engines import compare

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    src = handoff / "h.xlsx"
    wb = openpyxl.load_workbook(src)
    formulas = [c.value for ws in wb for row in ws.iter_rows() for c in row if c.data_type == "f"]
    from test_report import SUMS

    assert formulas and [f for f in formulas if not f.startswith(SUMS)] == []
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
        for title in ("Costs", "Monthly"):
            ws = values[title]
            heads = [c.value for c in ws[1]]
            total = next(r for r in ws.iter_rows(values_only=True) if r[0] == "Total")
            assert total[heads.index(header("total_cost_usd"))] == pytest.approx(
                want, abs=0.02), (path, title)  # each run to the cent  # fmt: skip
        runs = values["Runs"]
        (row,) = [r for r in runs.iter_rows(values_only=True) if r[0] == header("total_cost_usd")]
        assert row[-1] == pytest.approx(want, abs=0.02)
        summary = values["Summary"]
        texts = {r[0]: r for r in summary.iter_rows(values_only=True)}
        assert texts["Total, P50"][5] == pytest.approx(want, abs=0.02)


#: Most pages a 1- or 3-run hand-off prints to, on A4 and on Letter (the P90 runs' later
#: months take a page of monthly rows on Letter).
MAX_HANDOFF_PAGES = 12
#: The median height (pt) of the printed words on every page is at least this: body text
#: printed at a readable scale (11 pt text at full size is 14.3 pt high; the hand-off of
#: main at issue 18 printed pages at 5.6 pt).
READABLE_PT = 10.5


def _page_count(pdf):
    import re

    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)",
                                         pdf.read_bytes())]  # fmt: skip
    return max(counts)


def assert_no_header_alone_at_a_foot(wb, pages):
    """No page of ``pages`` (``_pages`` of ``wb`` printed) ends its body with only words of a
    table header or section title of ``wb`` (a header alone at the foot of a page)."""
    from workbook_templates.report.layout import STYLES

    heads, whole = set(), set()  # the words of every table header and section title
    for ws in wb:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, str) and (c.fill == STYLES["header_fill"] or (
                        c.font.sz or 11) > 11):  # fmt: skip
                    heads |= set(c.value.split())
                    whole.add(c.value)
    for i, words in pages:
        body = [w for w in words if 40 < w[1] < max(x[3] for x in words) - 30]
        if not body:
            continue
        last = max(w[1] for w in body)  # the last printed line of the page's body
        foot = [w[4] for w in body if w[1] >= last - 2]
        # a header alone at the foot (one word: a whole header, not a wrapped text's last word)
        alone = all(w in heads for w in foot) and (len(foot) > 1 or foot[0] in whole)
        assert not alone, (i, foot)


@pytest.mark.libreoffice
@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("runs", [1, 3])
def test_the_handoff_prints_on_twelve_pages_one_page_wide(template, tmp_path, monkeypatch,
                                                       paper, runs):  # fmt: skip
    """1 and 3 runs on A4 and Letter (COMPUTE_LAB_PAPER): at most twelve pages, every sheet one
    page wide at a readable scale, no table title or header alone at the foot of a page."""
    import statistics

    from helpers import require_soffice
    from test_handoff_budget import _pages

    from workbook_templates.recalc import convert

    require_soffice()
    monkeypatch.setenv("COMPUTE_LAB_PAPER", paper)
    plans = [EARLY, LATE, LAZY][:runs] if runs == 3 else [EARLY]
    p = with_references(template, tmp_path / "team.xlsx", plans)
    assert run(p, "--out", tmp_path / "h.xlsx") == 0
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    size = {"a4": 9, "letter": 1}[paper]
    for ws in (ws for ws in wb if ws.sheet_state == "visible"):  # Baseline data: never printed
        assert ws.page_setup.paperSize == size and ws.page_setup.fitToWidth == 1, ws.title
    (pdf,) = convert([tmp_path / "h.xlsx"], tmp_path, "pdf")
    assert 1 <= _page_count(pdf) <= MAX_HANDOFF_PAGES
    pages = _pages(pdf)
    for i, words in pages:
        heights = [w[3] - w[1] for w in words]
        assert statistics.median(heights) >= READABLE_PT, (i, statistics.median(heights))
    assert_no_header_alone_at_a_foot(wb, pages)
    first = " ".join(w[4] for w in pages[0][1])
    assert "Contingency" in first and "Budget total (P50)" in first
    # the Summary on one page, its five words too (Letter is shorter than A4)
    assert "Words" in first and "Contingency: P90 - P50" in first
    assert "Summary" not in " ".join(w[4] for w in pages[1][1] if w[1] < 40)  # page 2's header
    # the months the budget covers, beside the P50
    period = ("Feb 2027 (P90 to Mar 2027)" if runs == 1
              else "Feb 2027 - Dec 2027 (P90 to Jan 2028)")  # fmt: skip
    assert f"the estimate, {period}" in first


def _summary_fits_excels_page(wb):
    """The Summary of ``wb`` prints on one page in Excel's page model: its rows (each of a set
    height) no taller than a portrait Letter page's body (shorter than A4's), no page break."""
    from workbook_templates.report.layout import _BODY

    ws = wb["Summary"]
    height = sum(ws.row_dimensions[r].height for r in range(1, ws.max_row + 1))
    assert height <= _BODY[("portrait", 1)][1] and not ws.row_breaks.brk, height


@pytest.mark.libreoffice
def test_page_one_with_a_baseline_is_one_page_its_version_line_whole(template, tmp_path):
    """3 runs, a version label and a baseline (Letter): the Summary is one page in Excel's page
    model and in LibreOffice's print, the bold version line wrapped, never cut at the page's
    edge ("(the Basel")."""
    from helpers import require_soffice
    from test_handoff_budget import _pages

    from workbook_templates.recalc import convert

    require_soffice()
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, LATE, LAZY])
    assert run(p, "--out", tmp_path / "b.xlsx", "--version", "FY2027 budget, first cut") == 0
    out = tmp_path / "h.xlsx"
    assert run(p, "--out", out, "--paper", "letter", "--version", "FY2027 budget, second cut",
               "--baseline", tmp_path / "b.xlsx") == 0  # fmt: skip
    wb = openpyxl.load_workbook(out)
    _summary_fits_excels_page(wb)
    (pdf,) = convert([out], tmp_path, "pdf")
    pages = _pages(pdf)
    first = " ".join(w[4] for w in pages[0][1])
    assert "Version: FY2027 budget, second cut; compared with the baseline" in first
    assert "budget, first cut&apos; of " in first and "(the Baseline sheet)." in first
    right = max(w[2] for w in pages[0][1] if w[1] > 40)  # no word runs off the body's edge
    assert right < 612 - 0.5 * 72 + 1, right
    assert "Words" in first
    assert "Summary" not in " ".join(w[4] for w in pages[1][1] if w[1] < 40)


def test_the_paper_flag_wins_over_the_environment(template, tmp_path, monkeypatch, capsys):
    """--paper letter over COMPUTE_LAB_PAPER=a4; a bad COMPUTE_LAB_PAPER is one line, before
    any file is read, and nothing is written."""
    p = with_references(template, tmp_path / "team.xlsx", [EARLY])
    monkeypatch.setenv("COMPUTE_LAB_PAPER", "a4")
    assert run(p, "--out", tmp_path / "h.xlsx", "--paper", "letter") == 0
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    assert {ws.page_setup.paperSize for ws in wb if ws.sheet_state == "visible"} == {1}  # Letter
    assert run(p, "--out", tmp_path / "a4.xlsx") == 0
    a4 = openpyxl.load_workbook(tmp_path / "a4.xlsx")
    assert {ws.page_setup.paperSize for ws in a4 if ws.sheet_state == "visible"} == {9}
    monkeypatch.setenv("COMPUTE_LAB_PAPER", "legal")
    capsys.readouterr()
    from compute_lab.cli import main

    assert main(["report", str(p), "--out", str(tmp_path / "bad.xlsx")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "COMPUTE_LAB_PAPER must be a4 or letter" in err
    assert not (tmp_path / "bad.xlsx").exists()


@pytest.mark.libreoffice
def test_a_long_table_of_a_sheet_of_several_repeats_its_header_on_each_page(template, tmp_path):
    """A run of three years and actuals: Costs' monthly spend by run and the Variance sheet's
    months run onto more pages, each of which prints the table's header (the repeated header
    row), and the Monthly chart never prints alone under the repeated header: the table's
    last rows go with it. Page 1, two pages long with the plan-vs-actual tables, never
    splits the five words (the page breaks hold in any page model between Excel's and
    LibreOffice's, whose scale depends on its fonts)."""
    from helpers import require_soffice
    from test_handoff_budget import _pages
    from test_variance_chart import ACTUALS_3

    from workbook_templates.recalc import convert

    require_soffice()
    long = {**LATE, "accelerators": 160}  # Nov 2027 to 2030
    p = with_references(template, tmp_path / "team.xlsx", [EARLY, long, LAZY])
    actuals = tmp_path / "act.csv"
    actuals.write_text(ACTUALS_3, encoding="utf-8")
    out = tmp_path / "h.xlsx"
    assert run(p, "--out", out, "--actuals", actuals, "--paper", "a4") == 0
    (pdf,) = convert([out], tmp_path, "pdf")
    by_sheet = {}
    for _, words in _pages(pdf):
        sheet = " ".join(w[4] for w in words if w[1] < 40 and w[0] > 300)
        body = [w for w in words if 40 < w[1] < max(x[3] for x in words) - 30]
        by_sheet.setdefault(sheet, []).append(body)
    heads = {"Costs": ("Month", "Share", "run"), "Variance": ("Month", "Forecast,", "P50")}
    for sheet, words in heads.items():
        pages = by_sheet[sheet]
        assert len(pages) >= 2, sheet  # the long table goes on
        for body in pages[1:]:
            top = min(w[1] for w in body)
            first = [w[4] for w in body if w[1] < top + 40]  # the header's lines
            assert all(w in first for w in words), (sheet, first[:12])
    summary = [" ".join(w[4] for w in body) for body in by_sheet["Summary"]]
    assert len(summary) == 2  # with the plan-vs-actual tables: the five words whole on one page
    glossary = [("Words" in t, "nine runs in ten." in t) for t in summary]
    assert glossary == [(False, False), (True, True)]
    monthly = by_sheet["Monthly"]
    assert len(monthly) >= 2 and "Total" in [w[4] for w in monthly[-1]]  # rows with the chart
    assert "Spend by month" in " ".join(w[4] for w in monthly[-1])


def test_page_one_never_splits_the_five_words_whatever_the_page_model(template, tmp_path):
    """3 runs with actuals, a baseline and a version: page 1 runs onto a second page (its
    plan-vs-actual tables). LibreOffice prints it scaled to the page's width by a factor its
    fonts decide, between Excel's page model and its widest substitute's: at every page
    height between the two, the five words print whole on one page."""
    from test_variance_chart import ACTUALS_3

    from workbook_templates.report.layout import _page_models

    p = with_references(template, tmp_path / "team.xlsx", [EARLY, LATE, LAZY])
    assert run(p, "--out", tmp_path / "b.xlsx") == 0
    actuals = tmp_path / "act.csv"
    actuals.write_text(ACTUALS_3, encoding="utf-8")
    out = tmp_path / "h.xlsx"
    assert run(p, "--out", out, "--actuals", actuals, "--baseline", tmp_path / "b.xlsx",
               "--version", "M1", "--paper", "a4") == 0  # fmt: skip
    ws = openpyxl.load_workbook(out)["Summary"]
    heights = [ws.row_dimensions[r].height for r in range(1, ws.max_row + 1)]
    assert sum(heights) > 734  # two pages
    words = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "Words")
    forced = {b.id for b in ws.row_breaks.brk}
    pages = [page for _, page in _page_models(ws)]
    for page in range(int(min(pages)), int(max(pages)) + 1):
        used, starts = 0.0, []
        for r, h in enumerate(heights, start=1):
            if r - 1 in forced or used + h > page:
                used = 0.0
                starts.append(r)
            used += h
        assert not [s for s in starts if words < s <= ws.max_row], page


def test_the_monthly_chart_never_prints_alone_under_the_repeated_header(template, tmp_path):
    """A Monthly table too long for its chart below it on the page (Excel's 15-point rows):
    the chart goes to the next page with the table's last rows, the total among them, never
    alone under the header the page repeats."""
    from workbook_templates.report.xlsx import CHART_ROWS

    p = with_references(template, tmp_path / "team.xlsx", [EARLY, {**LATE, "accelerators": 480}])
    assert run(p, "--out", tmp_path / "h.xlsx", "--paper", "a4") == 0
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Monthly"]
    total = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "Total")
    (chart,) = ws._charts
    assert chart.anchor._from.row + 1 == total + 2  # under the table, a blank row between
    (brk,) = [b.id for b in ws.row_breaks.brk]  # the chart's page starts with rows
    assert brk == total - CHART_ROWS and ws.print_title_rows in ("1:1", "$1:$1")
