"""``compute-lab report``: filled planners in, a hand-off workbook and CSV out.

Planner copies are filled programmatically with known plans; one set is recalculated and saved
by LibreOffice (so it carries cached values) and one of those has a formula tampered with and
an output typed over. Every figure of the hand-off is checked against the engine run on the
plans themselves, and every kind of bad input is run through the command.
"""

from __future__ import annotations

import collections
import datetime as dt
import hashlib
import math
import os
import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from helpers import planner_cell
from test_report_fixtures import (
    PLAN_A,
    PLAN_B,
    PLAN_C,
    PLANNER,
    fill,
    rezip,
    set_cell,
    sheet_member,
)

from compute_lab.cli import main
from udfs import engine, plan
from udfs.quantities import PLAN_INPUTS, PLAN_OUTPUTS
from workbook_templates import report
from workbook_templates.recalc import find_soffice, recalculate

OUTPUTS = [q.name for q in PLAN_OUTPUTS]
PLANS = {p["scenario_name"]: p for p in (PLAN_A, PLAN_B, PLAN_C)}

#: CSV amounts in US$ are written to the cent (issue 18): a sum of n of them is within
#: n half-cents of the engine's figure.
CENTS = 0.1


def grand_total(name="total_cost_usd"):
    return sum(expected(p)[name] for p in PLANS.values())


needs_soffice = pytest.mark.skipif(find_soffice() is None, reason="LibreOffice not installed")


def expected(p):
    """The engine's outputs for a plan dict, straight from udfs.plan."""
    return plan.estimate_scenario({q.name: p.get(q.name) for q in PLAN_INPUTS})


def digest(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def close(a, b, rel=1e-12, cents=False):
    """``cents``: a CSV amount in US$, written to the cent (issue 18)."""
    if a is None or b is None or (isinstance(b, float) and math.isnan(b)):
        return (a is None or a == "") and (b is None or math.isnan(b))
    return math.isclose(a, b, rel_tol=rel, abs_tol=CENTS if cents else 1e-9)


#: The sheets the hand-off had before issue 18's print layout -> the Excel Table holding
#: their rows now (Runs and Outputs: the Runs sheet, turned).
_TABLE_OF = {
    "Costs": "costs",
    "Ranges": "ranges",
    "Monthly by run": "monthly_by_run",
    "Files": "files",
    "Mismatches": "mismatches",
    "Checks": "checks",
    "Blank inputs": "blank_inputs",
    "Monthly": "monthly",
    "Sources": "sources",
}


def sheet_records(path, title):
    """Rows of a hand-off table as dicts keyed by header, its totals row(s) included (their
    SUBTOTAL formulas recalculated by LibreOffice). ``title`` names the table's old sheet:
    "Runs" and "Outputs" read the Runs sheet turned back (a record per run, then "Total")."""
    from helpers_report import recalculated_values

    wb = recalculated_values(path)
    if title in ("Runs", "Outputs"):
        return _run_records(wb["Runs"])
    layout = openpyxl.load_workbook(path)
    name = _TABLE_OF[title]
    found = [(ws.title, ws.tables[name].ref) for ws in layout for n in ws.tables if n == name]
    if not found:  # an empty table: its line
        ws = layout["Checks"]
        return [{header("file"): c.value} for row in ws.iter_rows() for c in row
                if str(c.value).startswith("No saved value")]  # fmt: skip
    ((sheet, ref),) = found
    ws = wb[sheet]
    first = int(ref.split(":")[0].lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    rows = list(ws.iter_rows(min_row=first, values_only=True))
    head, out = rows[0], []
    for r in rows[1:]:
        if all(v is None for v in r):
            break
        out.append(dict(zip(head, r, strict=True)))
    return out


def _run_records(ws):
    """The turned Runs sheet as a record per run (keyed by its row labels, the scenario under
    header("scenario") and the file under header("file")), then the Total column's record."""
    rows = [r for r in ws.iter_rows(values_only=True) if r[0] is not None]
    heads = rows[0]
    out = []
    for j in range(1, len(heads)):
        if heads[j] is None:
            continue
        record = {r[0]: r[j] for r in rows[1:]}
        record[header("scenario")] = heads[j]
        if heads[j] == "Total":
            record[header("file")] = "Total"
        out.append(record)
    return out


def header(name):
    return report._header(name)


def report_cli(*args):
    return main(["report", *map(str, args)])


# ---------------------------------------------------------------------------------------------
# Fixtures: filled planners, recalculated and tampered copies
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def planners(template, tmp_path_factory):
    """team-a (plans A, B), team-b (plan C, no start date) and a tampered copy of team-a."""
    d = tmp_path_factory.mktemp("planners")
    a = fill(template, d / "team-a.xlsx", [PLAN_A, PLAN_B])
    b = fill(template, d / "team-b.xlsx", [PLAN_C])
    tampered = fill(template, d / "tampered.xlsx", [PLAN_A, PLAN_B])
    wb = openpyxl.load_workbook(tampered)
    ws, coord = planner_cell(wb, "total_cost_usd", 0)
    ws[coord] = f"=({ws[coord].value[1:]})*1.1"  # a hand-edited formula
    ws2, coord2 = planner_cell(wb, "compute_cost_usd", 1)
    ws2[coord2] = 12345.0  # a value typed over a formula
    wb.save(tampered)
    tamper = {
        "formula": (ws.title, coord),
        "typed": (ws2.title, coord2),
    }
    return {"a": a, "b": b, "tampered": tampered, "tamper": tamper, "dir": d}


@pytest.fixture(scope="module")
def recalculated(planners, tmp_path_factory):
    if find_soffice() is None:
        pytest.skip("LibreOffice not installed")
    out = tmp_path_factory.mktemp("recalculated")
    a, tampered = recalculate([planners["a"], planners["tampered"]], out)
    return {"a": a, "tampered": tampered}


@pytest.fixture(scope="module")
def handoff(planners, tmp_path_factory):
    """The report of team-a and team-b (written by openpyxl, no cached values)."""
    d = tmp_path_factory.mktemp("handoff")
    before = {k: digest(planners[k]) for k in ("a", "b")}
    rc = report_cli(planners["a"], planners["b"], "--out", d / "handoff.xlsx", "--csv", d / "csv")
    assert rc == 0
    assert {k: digest(planners[k]) for k in ("a", "b")} == before  # sources untouched
    return d


# ---------------------------------------------------------------------------------------------
# Every figure against the engine
# ---------------------------------------------------------------------------------------------


def billions(name):
    """The Runs sheet's header of an input shown in billions."""
    return f"{header(name)} (billions)" if name in BILLIONS else header(name)


BILLIONS = ("total_params", "active_params", "training_tokens")


def test_runs_and_outputs_sheets_hold_every_input_and_output_as_the_engine_computes(handoff):
    rows = sheet_records(handoff / "handoff.xlsx", "Outputs")  # the Runs sheet, turned
    inputs = [r for r in rows if r[header("file")] != "Total"]
    blank = collections.defaultdict(set)  # scenario -> (input, value used)
    for b in sheet_records(handoff / "handoff.xlsx", "Blank inputs"):
        blank[b[header("scenario")]].add((b[header("input_label")], b[header("value_used")]))
    assert header("input") not in sheet_records(handoff / "handoff.xlsx", "Blank inputs")[0]
    label = {q.name: q.label for q in PLAN_INPUTS}  # the sheet shows labels, not names
    mfu = plan.resolve(PLAN_C).arguments["mfu"]  # the calibrated default
    assert any(n == label["mfu"] and close(v, mfu) for n, v in blank[PLAN_C["scenario_name"]])
    runs = [r for r in rows if r[header("file")] != "Total"]
    assert sorted(r[header("scenario")] for r in runs) == sorted(PLANS)
    assert [r[header("scenario")] for r in inputs] == [r[header("scenario")] for r in runs]
    for r, i in zip(runs, inputs, strict=True):
        p = PLANS[r[header("scenario")]]
        out = expected(p)
        for name in OUTPUTS:
            assert close(r[header(name)], out[name], cents=name.endswith("_usd")), (
                p["scenario_name"],
                name,
            )  # money to the cent, as in every table
        for name in ("total_params", "training_tokens", "accelerators", "accelerator_name"):
            assert i[billions(name)] == p[name]
        if "active_params" not in p:  # blank: dense, the engine used total
            assert i[billions("active_params")] == p["total_params"]
            assert (label["active_params"], p["total_params"]) in blank[r[header("scenario")]]
    assert all(
        r[header("file")] == "team-a.xlsx" or r[header("file")] == "team-b.xlsx" for r in runs
    )  # base names; the full path in the cell's note
    (total,) = [r for r in rows if r[header("file")] == "Total"]
    for name in ("total_cost_usd", "compute_cost_usd", "electricity_kwh", "accelerator_hours"):
        assert close(total[header(name)], sum(expected(p)[name] for p in PLANS.values()),
                     cents=name.endswith("_usd"))  # fmt: skip


def test_costs_sheet_breaks_the_total_down(handoff):
    rows = sheet_records(handoff / "handoff.xlsx", "Costs")
    runs = [r for r in rows if r[header("scenario")] != "Total"]
    for r in runs:
        out = expected(PLANS[r[header("scenario")]])
        assert close(r[header("compute_cost_usd")], out["compute_cost_usd"], cents=True)
        assert close(r[header("electricity_cost_usd")], out["electricity_cost_usd"], cents=True)
        assert r[header("other_costs_usd")] == 0
        assert close(r[header("total_cost_usd")], out["total_cost_usd"], cents=True)
        assert close(
            r[header("compute_cost_usd")]
            + r[header("electricity_cost_usd")]
            + r[header("other_costs_usd")],
            r[header("total_cost_usd")],
        )
        assert close(
            r[header("compute_cost_share")], out["compute_cost_usd"] / out["total_cost_usd"], 1e-6
        )  # of the figures to the cent
    (total,) = [r for r in rows if r[header("scenario")] == "Total"]
    assert close(total[header("total_cost_usd")], grand_total(), cents=True)


def test_monthly_sheet_adds_schedules_up_by_calendar_month(handoff):
    want = collections.defaultdict(float)
    for p in PLANS.values():
        if p.get("start_date"):
            out = expected(p)
            for month, share in engine.month_shares(p["start_date"], out["wall_clock_days"]):
                want[month] += share * out["total_cost_usd"]
    rows = sheet_records(handoff / "handoff.xlsx", "Monthly")
    got = {
        r[header("month")].date(): r[header("total_cost_usd")]
        for r in rows
        if isinstance(r[header("month")], dt.datetime)
    }
    assert got.keys() >= want.keys()  # and the P90 runs' later months, at a P50 of 0
    assert not any(got[m] for m in got.keys() - want.keys())
    for month in want:
        assert close(got[month], want[month], cents=True)
    # the runs without a start date in their own row: the sheet adds up to the budget total
    (unscheduled,) = [r for r in rows if r[header("month")] == "Unscheduled (no start date)"]
    late = sum(expected(p)["total_cost_usd"] for p in PLANS.values() if not p.get("start_date"))
    assert late > 0 and close(unscheduled[header("total_cost_usd")], late, cents=True)
    (total,) = [r for r in rows if r[header("month")] == "Total"]
    assert close(total[header("total_cost_usd")], grand_total(), cents=True)


def test_a_run_without_start_date_is_unscheduled_but_counted(handoff):
    checks = sheet_records(handoff / "handoff.xlsx", "Checks")
    unscheduled = [c for c in checks if c[header("check")] == "Run scheduled by month"]
    assert len(unscheduled) == 1 and unscheduled[0][header("status")] == "WARN"
    assert PLAN_C["scenario_name"] in unscheduled[0][header("detail")]
    by_run = sheet_records(handoff / "handoff.xlsx", "Monthly by run")
    assert PLAN_C["scenario_name"] not in {r[header("scenario")] for r in by_run}
    totals = pd.read_csv(handoff / "csv" / "totals.csv").iloc[0]
    assert close(totals["unscheduled_total_cost_usd"], expected(PLAN_C)["total_cost_usd"], 1e-9,
                 cents=True)  # fmt: skip
    assert close(totals["total_cost_usd"], grand_total(), 1e-9, cents=True)


@pytest.mark.parametrize("actuals", [None, "given"])
@pytest.mark.parametrize("tables", [{}, {"baseline": None}])
def test_the_workbook_writes_the_sheets_the_guide_lists(monkeypatch, actuals, tables):
    """Which optional sheets a hand-off has (Variance with actuals, Baseline with a baseline)
    is said once, in summary.OPTIONAL_SHEETS: the guide and the workbook's sheets follow it."""
    from types import SimpleNamespace

    from workbook_templates.report import summary, xlsx

    c = SimpleNamespace(actuals=actuals, tables=tables)
    guide = [s for s, _ in summary.sheet_guide(c)]
    assert ("Variance" in guide) == (actuals is not None)
    assert ("Baseline" in guide) == ("baseline" in tables)
    assert guide[:3] == ["Summary", "Budget", "Runs"]
    assert [s[0] for s in xlsx._sheets(c)] == guide[3:]
    monkeypatch.setitem(summary.OPTIONAL_SHEETS, "Monthly", lambda c: False)
    monkeypatch.setitem(summary.OPTIONAL_SHEETS, "Baseline", lambda c: True)
    guide = [s for s, _ in summary.sheet_guide(c)]
    assert "Monthly" not in guide and "Baseline" in guide
    assert [s[0] for s in xlsx._sheets(c)] == guide[3:]


def test_summary_and_the_other_sheets(handoff):
    from helpers_report import recalculated_values

    wb = recalculated_values(handoff / "handoff.xlsx")
    shown = [ws.title for ws in wb.worksheets if ws.sheet_state == "visible"]
    assert shown == [s for s, _ in report._SHEET_GUIDE if s not in ("Variance", "Baseline")]
    assert wb.sheetnames == [*shown, "Baseline data"]  # very hidden: what --baseline reads
    assert wb["Baseline data"].sheet_state != "visible"  # LibreOffice saves it "hidden"
    summary = {}
    for r in wb["Summary"].iter_rows(values_only=True):  # the first of each label: page 1
        summary.setdefault(r[0], r[1])
    assert close(summary["Budget total (P50)"], grand_total(), cents=True)
    assert summary["Checks"] == "WARN"  # default MFU, override, blank statuses, no start date
    assert summary["Total in the budget"] == 3
    files = sheet_records(handoff / "handoff.xlsx", "Files")
    assert len(files) == 2 and all(len(f[header("sha256")]) == 64 for f in files)
    sources = sheet_records(handoff / "handoff.xlsx", "Sources")
    items = {s[header("item")] for s in sources}
    assert "Calibrated throughput uncertainty" in items and "H100 SXM" in items
    assert "Training FLOPs" in items and "Default MFU" not in items
    mismatches = sheet_records(handoff / "handoff.xlsx", "Mismatches")
    assert [m[header("file")] for m in mismatches] == ["No saved value differs from the engine."]


def test_formatted_for_finance(handoff):
    path = handoff / "handoff.xlsx"
    wb = openpyxl.load_workbook(path)
    runs, costs = wb["Runs"], wb["Costs"]
    assert runs.freeze_panes == "B2" and costs.freeze_panes == "B2"
    assert runs.print_title_rows == "$1:$1"
    # turned: a column per run, one page wide for up to four runs
    assert runs.page_setup.fitToWidth == 1 and runs.page_setup.fitToHeight == 0
    for ws in (ws for ws in wb if ws.sheet_state == "visible"):  # Baseline data: never printed
        portrait = ws.title in ("Summary", "Runs")
        assert ws.page_setup.orientation == ("portrait" if portrait else "landscape"), ws.title
        assert ws.sheet_properties.pageSetUpPr.fitToPage, ws.title
    # every column is wide enough for what it shows, the bold grand totals included
    monthly = wb["Monthly"]
    total_row = max(r for r in range(1, monthly.max_row + 1) if monthly.cell(r, 1).value == "Total")
    for col in range(2, monthly.max_column + 1):
        cell = monthly.cell(total_row, col)
        if isinstance(cell.value, float):
            shown = f"${cell.value:,.0f}" if "$" in cell.number_format else f"{cell.value:,.0f}"
            letter = openpyxl.utils.get_column_letter(col)
            assert monthly.column_dimensions[letter].width >= len(shown) * 1.1 + 1, letter
    col = [c.value for c in costs[1]].index(header("total_cost_usd")) + 1
    assert "$" in costs.cell(row=2, column=col).number_format
    assert "#,##0" in costs.cell(row=2, column=col).number_format
    (flops,) = [r for r in runs.iter_rows() if r[0].value == header("training_flops")]
    assert "E+" in flops[1].number_format
    with zipfile.ZipFile(path) as z:
        assert any(n.startswith("xl/charts/chart") for n in z.namelist())


def test_csv_tables_match_the_engine(handoff):
    d = handoff / "csv"
    assert sorted(p.stem for p in d.glob("*.csv")) == sorted(report.CSV_FILES)
    runs = pd.read_csv(d / "runs.csv")
    assert list(runs.columns[:3]) == ["file", "column", "scenario"]
    for _, r in runs.iterrows():
        out = expected(PLANS[r["scenario"]])
        for name in OUTPUTS:
            assert close(None if pd.isna(r[name]) else r[name], out[name], 1e-12,
                         cents=name.endswith("_usd")), name  # fmt: skip
    monthly = pd.read_csv(d / "monthly.csv", parse_dates=["month"])
    scheduled = pd.read_csv(d / "totals.csv")["scheduled_total_cost_usd"][0]
    assert close(monthly["total_cost_usd"].sum(), scheduled)


@needs_soffice
def test_libreoffice_opens_the_handoff(handoff, tmp_path):
    (copy,) = recalculate([handoff / "handoff.xlsx"], tmp_path)
    assert openpyxl.load_workbook(copy).sheetnames[0] == "Summary"


# ---------------------------------------------------------------------------------------------
# Cached values: LibreOffice-saved copies, a tampered formula
# ---------------------------------------------------------------------------------------------


@needs_soffice
def test_a_recalculated_planner_agrees_with_the_engine(recalculated, tmp_path, capsys):
    before = digest(recalculated["a"])
    rc = report_cli(recalculated["a"], "--out", tmp_path / "h.xlsx")
    assert rc == 0 and digest(recalculated["a"]) == before
    err = capsys.readouterr().err  # the WARN items of the Checks, none about saved values
    assert "differ" not in err and "saved" not in err and "Saved values" not in err
    checks = sheet_records(tmp_path / "h.xlsx", "Checks")
    (agree,) = [c for c in checks if c[header("check")] == "Saved values agree with the engine"]
    assert agree[header("status")] == "OK"
    rows = sheet_records(tmp_path / "h.xlsx", "Outputs")
    for r in rows[:-1]:
        out = expected(PLANS[r[header("scenario")]])
        assert all(close(r[header(n)], out[n], cents=n.endswith("_usd")) for n in OUTPUTS)


@needs_soffice
def test_tampered_cells_are_listed_with_both_values(recalculated, planners, tmp_path, capsys):
    rc = report_cli(recalculated["tampered"], "--out", tmp_path / "h.xlsx", "--csv", tmp_path)
    assert rc == 0  # mismatches warn; they do not fail the run
    err = capsys.readouterr().err
    sheet, cell = planners["tamper"]["formula"]
    a = expected(PLAN_A)["total_cost_usd"]
    assert f"{sheet}!{cell}: total_cost_usd" in err
    mism = pd.read_csv(tmp_path / "mismatches.csv")
    row = mism[(mism["cell"] == cell) & (mism["sheet"] == sheet)].iloc[0]
    assert row["name"] == "total_cost_usd" and row["scenario"] == PLAN_A["scenario_name"]
    assert close(float(row["cached_value"]), a * 1.1, 1e-9)
    assert close(row["engine_value"], a)
    assert row["cell_holds"] == "formula"
    sheet2, cell2 = planners["tamper"]["typed"]
    typed = mism[(mism["cell"] == cell2) & (mism["sheet"] == sheet2)].iloc[0]
    assert float(typed["cached_value"]) == 12345.0 and typed["cell_holds"] == "typed value"
    assert close(typed["engine_value"], expected(PLAN_B)["compute_cost_usd"])
    # Nothing else is flagged but what depends on the typed-over cell (plan B's total).
    flagged = set(zip(mism["scenario"], mism["name"], strict=True))
    assert flagged == {
        (PLAN_A["scenario_name"], "total_cost_usd"),
        (PLAN_B["scenario_name"], "compute_cost_usd"),
        (PLAN_B["scenario_name"], "total_cost_usd"),
    }
    checks = sheet_records(tmp_path / "h.xlsx", "Checks")
    statuses = {c[header("check")]: c[header("status")] for c in checks}
    assert statuses["Saved values agree with the engine"] == "WARN"
    assert statuses["Output cells hold formulas"] == "WARN"
    sheet_rows = sheet_records(tmp_path / "h.xlsx", "Mismatches")
    assert {r[header("cell")] for r in sheet_rows} >= {  # the sheet and what the cell holds
        f"{sheet}!{cell} (formula)",
        f"{sheet2}!{cell2} (typed value)",
    }


def test_a_typed_over_output_is_flagged_without_a_recalculation(planners, tmp_path):
    rc = report_cli(planners["tampered"], "--csv", tmp_path)
    assert rc == 0
    mism = pd.read_csv(tmp_path / "mismatches.csv")
    assert list(mism["cell_holds"]) == ["typed value"]  # the only value saved in the file


# ---------------------------------------------------------------------------------------------
# Formula injection
# ---------------------------------------------------------------------------------------------


#: The formulas of a hand-off: totals, and page 1's figures over the Budget and Monthly rows.
#: Every formula a hand-off writes starts so: totals and status sums over the Tables, the
#: P90 if the runs were independent (Budget), page 1's reference to it.
SUMS = ("=SUBTOTAL(9,", "=SUMIF(", "=COUNTIF(", "=SUMIFS(", "=SUM(", "=SQRT(SUMSQ(",
        "=IF(budget_independent_mean=0,", "=budget_independent_p90", "=handoff_total_p90",
        "=IF(H")  # fmt: skip


def test_text_from_a_planner_is_never_a_formula(template, tmp_path, monkeypatch):
    evil = dict(PLAN_A, scenario_name='=HYPERLINK("http://example.com","x")')
    evil2 = dict(PLAN_B, scenario_name="@SUM(1+1)")
    fill(template, tmp_path / "=evil.xlsx", [evil, evil2])
    monkeypatch.chdir(tmp_path)  # so that the file name, as given, starts with "="
    rc = report_cli("=evil.xlsx", "--out", tmp_path / "h.xlsx", "--csv", tmp_path / "csv")
    assert rc == 0
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:  # the only formulas: the totals' sums and page 1's over the rows
                assert (
                    c.data_type != "f"
                    or c.value.startswith(SUMS)
                    and not any(bad in c.value for bad in ("HYPERLINK", "@SUM", "1+1"))
                ), (
                    ws.title,
                    c.coordinate,
                    c.value,
                )
    names = [r[header("scenario")] for r in sheet_records(tmp_path / "h.xlsx", "Runs")]
    assert evil["scenario_name"] in names and "@SUM(1+1)" in names
    runs = pd.read_csv(tmp_path / "csv" / "runs.csv")
    assert set(runs["scenario"]) == {"'" + evil["scenario_name"], "'@SUM(1+1)"}
    assert set(runs["file"]) == {"'=evil.xlsx"}


# ---------------------------------------------------------------------------------------------
# Bad and hostile input: exit 2, a message naming file, sheet and cell, nothing written
# ---------------------------------------------------------------------------------------------


def _edit(path, name, k, value):
    wb = openpyxl.load_workbook(path)
    where = set_cell(wb, name, k, value)
    wb.save(path)
    return where


def _not_planner(good, path):
    wb = openpyxl.Workbook()
    wb.active["A1"] = "budget"
    wb.save(path)
    return path, "not a training-run planner"


def _missing_name(good, path):
    wb = openpyxl.load_workbook(good)
    del wb.defined_names["usd_per_kwh"]
    wb.save(path)
    return path, "usd_per_kwh"


def _cell_case(name, value, words):
    def make(good, path):
        path.write_bytes(good.read_bytes())
        where = _edit(path, name, 1, value)
        return path, (where, words)

    return make


def _blank_required(good, path):
    path.write_bytes(good.read_bytes())
    where = _edit(path, "accelerators", 0, None)
    return path, (where, "required")


def _corrupt(good, path):
    data = bytearray(good.read_bytes())
    mid = len(data) // 3
    data[mid : mid + 64] = b"\0" * 64
    path.write_bytes(bytes(data))
    return path, "corrupt"


def _truncated(good, path):
    path.write_bytes(good.read_bytes()[:-300])
    return path, "corrupt or truncated"


def _xlsm(good, path):
    path = path.with_suffix(".xlsm")
    path.write_bytes(good.read_bytes() + b"\0")  # not a copy of good: refused by its name
    return path, "macro-enabled"


def _vba(good, path):
    return rezip(good, path, {"xl/vbaProject.bin": b"\xd0\xcf\x11\xe0" * 8}), "vbaProject.bin"


def _bomb(good, path):
    member = sheet_member(good, "Inputs")
    with zipfile.ZipFile(good) as z:
        xml = z.read(member).decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    doctype = (
        '<?xml version="1.0"?>\n<!DOCTYPE bomb [<!ENTITY a "aaaaaaaaaa">'
        + "".join(
            f'<!ENTITY {c} "{("&" + p + ";") * 10}">'
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + "]>"
    )
    return rezip(good, path, {member: (doctype + body).encode()}), "unsafe XML"


def _other_template(good, path):
    from workbook_templates.generate import write_templates

    (sizing,) = [p for p in write_templates(path.parent / "t") if p.name == "cluster-sizing.xlsx"]
    return sizing, "is not a training-run planner (it is titled 'Cluster sizing"


BAD = {
    "not a planner": _not_planner,
    "missing defined name": _missing_name,
    "text in a numeric input": _cell_case("accelerators", "seventy", "not text"),
    "text not a count": _cell_case("total_params", "seventy billion", "text such as 70B"),
    "blank required cell": _blank_required,
    "out of range (MFU over 1)": _cell_case("mfu", 1.5, "at most 1"),
    "out of range (negative price)": _cell_case("usd_per_accelerator_hour", -2, "0 or more"),
    "active over total": _cell_case("active_params", 1e15, "must not exceed total_params"),
    "unknown accelerator": _cell_case("accelerator_name", "H900 Ultra", "not a known"),
    "fractional accelerators": _cell_case(
        "accelerators", 1024.5, "accelerators (Accelerators) must be a whole number (got 1024.5)"
    ),
    "another template": _other_template,
    "corrupt zip": _corrupt,
    "truncated zip": _truncated,
    "macro-enabled name": _xlsm,
    "macro content": _vba,
    "xml bomb": _bomb,
}


@pytest.fixture(scope="module")
def good(planners):
    return planners["a"]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_naming_the_place_and_writes_nothing(case, good, tmp_path, capsys):
    src, expect = BAD[case](good, tmp_path / "bad.xlsx")
    before = digest(src)
    out = tmp_path / "out"
    out.mkdir()
    rc = report_cli(good, src, "--out", out / "h.xlsx", "--csv", out / "csv")
    err = capsys.readouterr().err
    assert rc == 2
    assert digest(src) == before
    assert not (out / "h.xlsx").exists() and not (out / "csv").exists()
    assert list(out.iterdir()) == []  # no temporary file left either
    assert str(src) in err and "nothing written" in err
    if isinstance(expect, tuple):
        where, words = expect
        assert where in err, err
        assert words in err, err
    else:
        assert expect in err, err


def test_size_limit(good, tmp_path, capsys):
    rc = report_cli(good, "--out", tmp_path / "h.xlsx", "--max-size-mb", "0.001")
    err = capsys.readouterr().err
    assert rc == 2 and "size limit" in err and str(good) in err
    assert not (tmp_path / "h.xlsx").exists()


def test_skip_bad_consolidates_the_rest(good, planners, tmp_path, capsys):
    bad1, _ = _cell_case("mfu", 1.5, "")(good, tmp_path / "bad1.xlsx")
    bad2, _ = _truncated(good, tmp_path / "bad2.xlsx")
    rc = report_cli(good, bad1, planners["b"], bad2, "--skip-bad", "--out", tmp_path / "h.xlsx")
    err = capsys.readouterr().err
    assert rc == 0
    assert f"skipped: {bad1}" in err and f"skipped: {bad2}" in err
    checks = sheet_records(tmp_path / "h.xlsx", "Checks")
    bad = [c for c in checks if c[header("check")] == "Bad file left out"]
    assert {c[header("file")] for c in bad} == {bad1.name, bad2.name}  # the path in a note
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    notes = {c.comment.text for row in wb["Checks"].iter_rows() for c in row if c.comment}
    assert {f"Full path: {bad1}", f"Full path: {bad2}"} <= notes
    runs = sheet_records(tmp_path / "h.xlsx", "Outputs")
    assert len(runs) == 3 + 1  # plans A, B, C and the totals row


def test_skip_bad_with_nothing_good_writes_nothing(good, tmp_path, capsys):
    bad, _ = _truncated(good, tmp_path / "bad.xlsx")
    rc = report_cli(bad, "--skip-bad", "--out", tmp_path / "h.xlsx")
    assert rc == 2 and not (tmp_path / "h.xlsx").exists()
    assert "nothing written" in capsys.readouterr().err


def test_no_scenario_with_inputs(template, tmp_path, capsys):
    empty = fill(template, tmp_path / "empty.xlsx", [])
    rc = report_cli(empty, "--out", tmp_path / "h.xlsx")
    assert rc == 2 and "no scenario column has inputs" in capsys.readouterr().err


def test_never_overwrites_without_force(good, tmp_path, capsys):
    out = tmp_path / "h.xlsx"
    out.write_bytes(b"keep me")
    assert report_cli(good, "--out", out) == 2
    assert "already exists" in capsys.readouterr().err and out.read_bytes() == b"keep me"
    assert report_cli(good, "--out", out, "--force") == 0
    assert openpyxl.load_workbook(out).sheetnames[0] == "Summary"
    assert [p.name for p in tmp_path.iterdir()] == ["h.xlsx"]


def test_csv_files_are_not_overwritten_without_force(good, tmp_path, capsys):
    (tmp_path / "runs.csv").write_text("keep")
    assert report_cli(good, "--csv", tmp_path) == 2
    assert (tmp_path / "runs.csv").read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.csv"]


def test_an_input_file_is_never_the_output(good, capsys):
    before = digest(good)
    assert report_cli(good, "--out", good, "--force") == 2
    assert "never overwritten" in capsys.readouterr().err and digest(good) == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "give --out"),
        (["--out", "h.csv"], "must name an .xlsx"),
        (["--out", "h.xlsx", "--max-size-mb", "0"], "--max-size-mb"),
        (["--out", "nowhere/h.xlsx"], "--out: folder nowhere does not exist"),
        (
            ["--out", "h.xlsx", "--tolerance", "-1"],
            "--tolerance must be at least 0 and below 1 (got -1)",
        ),
        (["--out", "h.xlsx", "--max-size-mb", "-2"], "(got -2)"),
    ],
)
def test_bad_arguments(good, tmp_path, monkeypatch, capsys, args, words):
    monkeypatch.chdir(tmp_path)
    assert report_cli(good, *args) == 2
    assert words in capsys.readouterr().err


def test_the_same_file_twice(good, capsys, tmp_path):
    assert report_cli(good, good, "--out", tmp_path / "h.xlsx") == 2
    assert "given twice" in capsys.readouterr().err


def test_a_failed_write_leaves_nothing(good, tmp_path, monkeypatch, capsys):
    def broken(c, path):
        Path(path).write_bytes(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report.output, "write_workbook", broken)
    rc = report_cli(good, "--out", tmp_path / "h.xlsx", "--csv", tmp_path / "csv")
    assert rc == 2 and "No space left" in capsys.readouterr().err
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert leftovers == []


# ---------------------------------------------------------------------------------------------
# The shared LibreOffice-recalculated planners (tests/conftest.py)
# ---------------------------------------------------------------------------------------------


def test_the_shipped_planner_recalculated_agrees(recalculated_templates, tmp_path, capsys):
    src = recalculated_templates[PLANNER]
    rc = report_cli(src, "--csv", tmp_path)
    assert rc == 0 and "warning" not in capsys.readouterr().err
    assert pd.read_csv(tmp_path / "mismatches.csv").empty
    # the reference and example columns: in the budget, or listed as not in it
    text = (tmp_path / "runs.csv").read_text() + (tmp_path / "not_in_budget.csv").read_text()
    # Llama 3.1 405B's hours are 30,840,000.00000001 in floating point: written without noise
    assert ",30840000," in text and "30840000.0000000" not in text
    flops = tmp_path / "flops.csv"
    report.csv_files.csv_writer(pd.DataFrame({"training_flops": [3.7908e25]}))(flops)
    assert "3.7908e+25" in flops.read_text()  # 15 significant digits keep every digit
    c = report.consolidate([src])
    assert len(c.runs) >= 3
    for r in c.runs:  # every column, in the budget or not, as the engine computes it
        out = plan.estimate_scenario(r.scenario.inputs)
        for name in OUTPUTS:
            assert close(r.outputs[name], out[name]), name


def test_the_shared_variants_agree_and_keep_text_as_text(recalculated_variants, tmp_path):
    from helpers import TYPED_PLAN

    good = ("planner-custom.xlsx", "planner-typed.xlsx", "planner-random.xlsx")
    files = [recalculated_variants[name] for name in good if name in recalculated_variants]
    rc = report_cli(*files, "--out", tmp_path / "h.xlsx", "--csv", tmp_path / "csv")
    assert rc == 0
    assert pd.read_csv(tmp_path / "csv" / "mismatches.csv").empty
    wb = openpyxl.load_workbook(tmp_path / "h.xlsx")
    cells = [c for row in wb["Runs"].iter_rows() for c in row]
    (hit,) = [c for c in cells if c.value == TYPED_PLAN["scenario_name"]]
    assert hit.data_type == "s"


def test_one_bad_cell_is_one_line(good, tmp_path, capsys):
    src = tmp_path / "one-bad.xlsx"
    src.write_bytes(good.read_bytes())
    where = _edit(src, "mfu", 1, 1.5)
    assert report_cli(src, "--out", tmp_path / "h.xlsx") == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"compute-lab report: error: {src}: {where}: mfu")
    assert lines[0].endswith("; nothing written")


def test_several_problems_put_the_summary_first(good, tmp_path, capsys):
    bad1, _ = _cell_case("mfu", 1.5, "")(good, tmp_path / "bad1.xlsx")
    bad2, _ = _truncated(good, tmp_path / "bad2.xlsx")
    assert report_cli(good, bad1, bad2, "--out", tmp_path / "h.xlsx") == 2
    lines = capsys.readouterr().err.splitlines()
    assert "2 of 3 file(s) cannot be consolidated; nothing written" in lines[0]
    assert len(lines) == 3 and str(bad1) in lines[1] and str(bad2) in lines[2]


def test_csv_names_are_the_quantity_names_and_floats_carry_no_noise(handoff):
    d = handoff / "csv"
    names = {q.name for q in PLAN_INPUTS + PLAN_OUTPUTS}
    for table in ("runs", "costs", "totals", "monthly", "monthly_by_run"):
        columns = set(pd.read_csv(d / f"{table}.csv").columns)
        assert not {"total_usd", "compute_usd", "electricity_usd", "other_usd"} & columns
        if table != "runs":
            assert {"compute_cost_usd", "electricity_cost_usd", "total_cost_usd"} <= columns
        assert "total_cost_usd" in columns and columns & names
    for path in d.glob("*.csv"):
        for token in re.findall(r"(?<![\w.])\d+\.\d+(?:e[+-]\d+)?", path.read_text()):
            digits = token.split("e")[0].replace(".", "").lstrip("0")
            assert len(digits) <= 15, (path.name, token)


def test_every_bad_scenario_of_a_file_is_reported(good, tmp_path, capsys):
    src = tmp_path / "two-bad.xlsx"
    src.write_bytes(good.read_bytes())
    first = _edit(src, "mfu", 1, 1.5)
    second = _edit(src, "usd_per_accelerator_hour", 0, -1)
    assert report_cli(src, "--out", tmp_path / "h.xlsx") == 2
    err = capsys.readouterr().err
    assert f"{src}: {first}: mfu" in err and f"{src}: {second}: usd_per_accelerator_hour" in err


def test_files_sheet_fingerprints_what_was_read(handoff, planners):
    files = {f[header("file")]: f for f in sheet_records(handoff / "handoff.xlsx", "Files")}
    for key in ("a", "b"):
        row = files[planners[key].name]
        assert row[header("sha256")] == digest(planners[key])
        assert row[header("size_bytes")] == planners[key].stat().st_size


def test_every_bad_file_is_reported_not_just_the_first(good, tmp_path, capsys):
    bad1, _ = _truncated(good, tmp_path / "bad1.xlsx")
    bad2, _ = _xlsm(good, tmp_path / "bad2.xlsx")
    assert report_cli(bad1, good, bad2, "--out", tmp_path / "h.xlsx") == 2
    err = capsys.readouterr().err
    assert f"error: {bad1}:" in err and f"error: {bad2}:" in err
    assert "2 of 3 file(s) cannot be consolidated; nothing written" in err
    assert not (tmp_path / "h.xlsx").exists()


@needs_soffice
def test_tolerance_is_relative(recalculated, tmp_path):
    # The hand-edited formula is 10% off: inside a 20% tolerance, outside the default.
    rc = report_cli(recalculated["tampered"], "--csv", tmp_path, "--tolerance", "0.2")
    assert rc == 0
    mism = pd.read_csv(tmp_path / "mismatches.csv")
    flagged = set(zip(mism["scenario"], mism["name"], strict=True))
    assert (PLAN_A["scenario_name"], "total_cost_usd") not in flagged
    assert "typed value" in set(mism["cell_holds"])  # 12,345 is still far off


def test_outputs_get_ordinary_file_permissions(handoff):
    mask = os.umask(0o022)
    os.umask(mask)
    for path in [handoff / "handoff.xlsx", *(handoff / "csv").glob("*.csv")]:
        assert path.stat().st_mode & 0o777 == 0o666 & ~mask, path


def test_the_shared_bad_variant_lists_every_bad_cell(recalculated_variants, capsys):
    from helpers import BAD_PLANS

    if "planner-bad.xlsx" not in recalculated_variants:
        pytest.skip("no bad variant in conftest")
    src = recalculated_variants["planner-bad.xlsx"]
    before = digest(src)
    assert report_cli(src, "--csv", src.parent / "bad-csv") == 2
    err = capsys.readouterr().err
    assert digest(src) == before and not (src.parent / "bad-csv").exists()
    wb = openpyxl.load_workbook(src)
    expected_cells = {
        "total_params": 3,  # text
        "active_params": 4,  # above total
        "mfu": 5,  # above 1
        "accelerator_name": 6,  # not in the catalogue
        "accelerators": 7,  # not a whole number
    }
    lines = [line for line in err.splitlines() if str(src) in line]
    assert len(lines) == len(BAD_PLANS)
    for name, k in expected_cells.items():
        ws, coord = planner_cell(wb, name, k)
        assert any(f"{ws.title}!{coord}: {name}" in line for line in lines), (name, err)
    assert any("must be a whole number (got 64.5)" in line for line in lines), err


# ---------------------------------------------------------------------------------------------
# Hardening (issue 8): figures in range, all-or-nothing outputs, one line
# ---------------------------------------------------------------------------------------------


def _real_estimate():
    return engine.estimate


def test_an_engine_input_error_names_the_input_cell(good, tmp_path, monkeypatch, capsys):
    """The engine refusing a non-finite output as an InputError on the argument that drove it
    (usd_per_kwh): the report puts it at that input's cell, as any other bad input."""
    from udfs.validation import InputError

    real = _real_estimate()

    def estimate(plan):  # the report hands the engine one Plan
        if (plan.usd_per_kwh or 0) > 0.09:  # PLAN_B's 0.1, not PLAN_A's 0.08
            raise InputError("usd_per_kwh", "drives electricity_cost_usd to infinity")
        return real(plan)

    monkeypatch.setattr(engine, "estimate", estimate)
    assert report_cli(good, "--out", tmp_path / "h.xlsx") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    wb = openpyxl.load_workbook(good)
    ws, coord = planner_cell(wb, "usd_per_kwh", 1)
    assert f"{ws.title}!{coord}: usd_per_kwh (" in line and "to infinity" in line
    assert list(tmp_path.iterdir()) == []


def test_an_engine_input_error_on_an_output_finds_the_driving_input(
    template, tmp_path, monkeypatch, capsys
):
    """An InputError naming an output (not an input) is traced back to the typed input that
    drives it, by trying each input at a typical value."""
    from udfs.validation import InputError

    real = _real_estimate()

    def estimate(plan):  # the report hands the engine one Plan
        out = real(plan)
        if out["total_cost_usd"] > 1e200:
            raise InputError("total_cost_usd", "is not a finite number")
        return out

    monkeypatch.setattr(engine, "estimate", estimate)
    path = fill(template, tmp_path / "p.xlsx", [PLAN_A, {**PLAN_B, "usd_per_kwh": 1e250}])
    assert report_cli(path, "--out", tmp_path / "h.xlsx") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    wb = openpyxl.load_workbook(path)
    ws, coord = planner_cell(wb, "usd_per_kwh", 1)
    assert f"{ws.title}!{coord}: usd_per_kwh (" in line and "total_cost_usd" in line


def test_a_sum_over_runs_out_of_range_is_refused(template, tmp_path, capsys):
    """Each run's figures are in range, their sum is not: the last guard refuses it."""
    hours = [expected(p)["accelerator_hours"] for p in (PLAN_A, PLAN_B)]
    plans = [
        {**p, "usd_per_accelerator_hour": 6e299 / h}
        for p, h in zip((PLAN_A, PLAN_B), hours, strict=True)
    ]
    path = fill(template, tmp_path / "p.xlsx", plans)
    out = tmp_path / "out"
    out.mkdir()
    assert report_cli(path, "--out", out / "h.xlsx", "--csv", out / "csv") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "the total of" in line and "out of range" in line and "nothing written" in line
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("value", [1.7976931348623155e308, math.inf, 2e300])
def test_check_in_range_is_the_last_guard(good, value):
    """Whatever reaches the tables: infinite, over 1e300, or a figure just under the largest
    double that prints (15 digits) as a number over it."""
    c = report.consolidate([good])
    report.check_in_range(c)  # as consolidated: in range
    c.tables["totals"].loc[0, "total_cost_usd"] = value
    with pytest.raises(report.CommandError, match="out of range"):
        report.check_in_range(c)


def _sentinels(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_text(f"old {n}")
    return {n: f"old {n}" for n in names}


def _contents(folder):
    return {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}


def test_force_with_a_folder_in_the_way_changes_nothing(good, tmp_path, capsys):
    csv_dir = tmp_path / "csv"
    old = _sentinels(csv_dir, [f"{n}.csv" for n in report.CSV_FILES if n != "checks"])
    (csv_dir / "checks.csv").mkdir()
    (tmp_path / "h.xlsx").write_text("old h")
    rc = report_cli(good, "--out", tmp_path / "h.xlsx", "--csv", csv_dir, "--force")
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and f"{csv_dir / 'checks.csv'} is a folder" in line
    assert _contents(csv_dir) == old and (tmp_path / "h.xlsx").read_text() == "old h"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["csv", "h.xlsx"]


def test_a_failed_move_puts_every_file_back(good, tmp_path, capsys):
    """A real failure in the middle of the moves (an immutable file): the files already
    replaced are restored, the message names the file and says nothing was written."""
    from helpers_report import can_make_immutable, immutable

    if not can_make_immutable(tmp_path / "probe"):
        pytest.skip("chattr +i is not available here")
    csv_dir = tmp_path / "csv"
    old = _sentinels(csv_dir, [f"{n}.csv" for n in report.CSV_FILES])
    (tmp_path / "h.xlsx").write_text("old h")
    last = csv_dir / f"{report.CSV_FILES[-1]}.csv"
    immutable(last)
    try:
        rc = report_cli(good, "--out", tmp_path / "h.xlsx", "--csv", csv_dir, "--force")
    finally:
        immutable(last, on=False)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and f"could not write {last}" in line and "nothing written" in line
    assert _contents(csv_dir) == old and (tmp_path / "h.xlsx").read_text() == "old h"
    assert sorted(p.name for p in csv_dir.iterdir()) == sorted(old)  # no temporary left


def test_no_csv_folder_is_left_behind(good, tmp_path, capsys):
    from helpers_report import can_make_immutable, immutable

    if not can_make_immutable(tmp_path / "probe"):
        pytest.skip("chattr +i is not available here")
    locked = tmp_path / "locked"
    locked.mkdir()
    immutable(locked)
    try:
        rc = report_cli(good, "--out", locked / "h.xlsx", "--csv", tmp_path / "new" / "csv")
    finally:
        immutable(locked, on=False)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and f"could not write {locked / 'h.xlsx'}" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["locked"]  # no "new" folder


def test_already_exists_agrees_with_the_count(good, tmp_path, capsys):
    (tmp_path / "h.xlsx").write_text("keep")
    assert report_cli(good, "--out", tmp_path / "h.xlsx") == 2
    assert f"{tmp_path / 'h.xlsx'} already exists (use --force" in capsys.readouterr().err
    csv_dir = tmp_path / "csv"
    _sentinels(csv_dir, ["runs.csv", "costs.csv"])
    assert report_cli(good, "--csv", csv_dir) == 2
    err = capsys.readouterr().err
    assert "costs.csv already exist (use --force" in err and "exist(s)" not in err


# ---------------------------------------------------------------------------------------------
# compute-lab templates: all or nothing too (issue 8, item 4)
# ---------------------------------------------------------------------------------------------


def templates_cli(*args):
    return main(["templates", *map(str, args)])


TEMPLATE_NAMES = ["training-run-planner.xlsx", "cluster-sizing.xlsx", "dense-vs-moe.xlsx"]


def test_templates_force_with_a_folder_in_the_way(tmp_path, capsys):
    old = _sentinels(tmp_path, TEMPLATE_NAMES[:2])
    (tmp_path / TEMPLATE_NAMES[2]).mkdir()
    assert templates_cli("--out", tmp_path, "--force") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"{tmp_path / TEMPLATE_NAMES[2]} is a folder" in line
    assert _contents(tmp_path) == old


def test_templates_force_failing_on_the_last_file_restores_the_others(tmp_path, capsys):
    from helpers_report import can_make_immutable, immutable

    if not can_make_immutable(tmp_path / "probe"):
        pytest.skip("chattr +i is not available here")
    out = tmp_path / "out"
    old = _sentinels(out, TEMPLATE_NAMES)
    immutable(out / TEMPLATE_NAMES[2])
    try:
        rc = templates_cli("--out", out, "--force")
    finally:
        immutable(out / TEMPLATE_NAMES[2], on=False)
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert f"could not write {out / TEMPLATE_NAMES[2]}" in line and "nothing written" in line
    assert _contents(out) == old
    assert sorted(p.name for p in out.iterdir()) == sorted(TEMPLATE_NAMES)


def test_templates_into_a_folder_that_cannot_be_made_leave_nothing(tmp_path, capsys):
    (tmp_path / "a-file").write_text("x")
    assert templates_cli("--out", tmp_path / "a-file" / "t") == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--out:" in line and "a-file" in line


def test_templates_already_exist_grammar(tmp_path, capsys):
    _sentinels(tmp_path, TEMPLATE_NAMES[:1])
    assert templates_cli("--out", tmp_path) == 2
    err = capsys.readouterr().err
    assert f"{TEMPLATE_NAMES[0]} already exists (use --force" in err
    _sentinels(tmp_path, TEMPLATE_NAMES)
    assert templates_cli("--out", tmp_path) == 2
    err = capsys.readouterr().err
    assert "already exist (use --force" in err and "exist(s)" not in err
    assert _contents(tmp_path) == {n: f"old {n}" for n in TEMPLATE_NAMES}


def test_templates_write_all_three_with_ordinary_permissions(tmp_path, capsys):
    out = tmp_path / "new" / "t"
    assert templates_cli("--out", out) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(TEMPLATE_NAMES)  # no staging left
    for p in out.iterdir():
        assert p.stat().st_mode & 0o044 == 0o044
