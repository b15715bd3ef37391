"""Pages a finance reader prints and reads: the hand-off and the planner on paper (no word
below 7-point type, no word over another, repeated reference rows once, continuation pages
with their header row), and the planner's CFO-first Summary (a headline box with the period
covered, the defaults listed, the same default-input verdict as the hand-off), all in
LibreOffice and Gnumeric."""

from __future__ import annotations

import datetime as dt
import math
import re

import openpyxl
import pytest
from test_handoff_budget import _overlaps, _pages, expected, read_csv, run, with_references
from test_print import printed_words, small_words, unprinted_words
from test_report_fixtures import APPROVAL, PLAN_A, PLAN_B, PLAN_C, set_cell

from udfs import calibration
from workbook_templates.planner.checks import NEVER_DEFAULT
from workbook_templates.recalc import convert, find_soffice

needs_soffice = pytest.mark.skipif(find_soffice() is None, reason="LibreOffice not installed")

#: Most pages of the hand-off of four runs from three planners (each with the planner's
#: three preset references, nine reference rows, listed once): the Budget sheet's second page
#: holds "Not in the budget", under the working of the P90 if the runs were independent.
MAX_FOUR_RUN_PAGES = 14
#: A cent, for money compared across programs.
CENTS = 0.01


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates["training-run-planner.xlsx"]


@pytest.fixture(scope="module")
def four_runs(template, tmp_path_factory):
    """A hand-off of four runs from three planners, each with the three preset references
    (nine reference rows), printed: (hand-off, its PDF)."""
    if find_soffice() is None:
        pytest.skip("LibreOffice not installed")
    d = tmp_path_factory.mktemp("four")
    moe = dict(PLAN_A, **APPROVAL, budget_status="Approved", owner="LLM team",
               scenario_name="MoE 671B on owned B200s, second attempt")  # fmt: skip
    a = with_references(template, d / "team-a.xlsx",
                        [moe, dict(PLAN_B, budget_status="Proposed", owner="R")])  # fmt: skip
    b = with_references(template, d / "team-b.xlsx", [PLAN_C])
    c = with_references(template, d / "team-c.xlsx", [dict(PLAN_A, owner="Infra")])
    wb = openpyxl.load_workbook(c)
    set_cell(wb, "total_cost_usd", 3, 1543210.0)  # a value typed over a formula: Mismatches
    wb.save(c)
    assert run(a, b, c, "--out", d / "handoff.xlsx", "--fiscal-year-start", "4") == 0
    (pdf,) = convert([d / "handoff.xlsx"], d / "pdf", target="pdf")
    return d / "handoff.xlsx", pdf


@needs_soffice
def test_repeated_reference_rows_print_once(four_runs):
    """The planner's preset references, in every team's file, are one row each on Budget
    ("Not in the budget"), their files listed together; the hand-off prints on few pages."""
    from test_finance_handoff import _page_count

    handoff, pdf = four_runs
    ws = openpyxl.load_workbook(handoff)["Budget"]
    rows = [[c.value for c in row] for row in ws.iter_rows()]
    (head,) = [i for i, r in enumerate(rows) if r[0] == "Not in the budget"]
    listed = [r for r in rows[head + 3 :] if r[2] == "Reference"]
    names = [r[0] for r in listed]
    assert len(names) == 3 == len(set(names)), names
    for r in listed:
        assert r[1] == "team-a.xlsx, team-b.xlsx, team-c.xlsx", r
    assert _page_count(pdf) <= MAX_FOUR_RUN_PAGES


@needs_soffice
def test_no_handoff_word_prints_below_seven_points_or_over_another(four_runs):
    _, pdf = four_runs
    assert not small_words(pdf), small_words(pdf)[:8]
    bad = {n: _overlaps(words)[:3] for n, words in printed_words(pdf) if _overlaps(words)}
    assert not bad, bad


@needs_soffice
def test_every_word_of_every_hand_off_sheet_prints(four_runs):
    """No cell's text is cut by the next column or the page edge: every word of every text
    cell is a word on the sheet's pages."""
    handoff, pdf = four_runs

    def sheet_of(words):  # the page header's right part names the sheet
        return " ".join(w[4] for w in words if w[3] < 40 and w[0] > 400)

    missing = unprinted_words(handoff, pdf, sheet_of)
    assert not missing, missing


@needs_soffice
def test_a_continued_table_repeats_its_header_row(template, tmp_path):
    """Enough excluded scenarios that "Not in the budget" runs onto a second page: that page
    starts with the table's header row (a print title)."""
    plans = [dict(PLAN_C, scenario_name=f"Alternative {k} with a long name to wrap",
                  budget_status="Excluded") for k in range(5)]  # fmt: skip
    files = []
    for i in range(6):
        named = [dict(p, scenario_name=f"{p['scenario_name']} ({i})") for p in plans]
        files.append(with_references(template, tmp_path / f"t{i}.xlsx", named))
    assert run(*files, "--out", tmp_path / "h.xlsx") == 0
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Budget"]
    assert ws.print_title_rows
    (pdf,) = convert([tmp_path / "h.xlsx"], tmp_path / "pdf", target="pdf")
    budget = [words for _, words in _pages(pdf)
              if any(w[4] == "Budget" and w[3] < 40 and w[0] > 400 for w in words)]  # fmt: skip
    assert len(budget) >= 2
    for words in budget[1:]:
        body = sorted((w for w in words if w[1] > 40), key=lambda w: (round(w[1]), w[0]))
        top = [w[4] for w in body if abs(w[1] - body[0][1]) < 2]
        assert top[:3] == ["Scenario", "File", "Budget"], top


def test_the_glossary_quotes_the_calibrated_mfu(generated_templates):
    """The Cover's MFU line gives the calibration's stored defaults, not a prose range."""
    from workbook_templates.sheetkit import GLOSSARY_ACTIVE_PARAMS

    wb = openpyxl.load_workbook(generated_templates["training-run-planner.xlsx"])
    cover = wb["Cover"]
    (mfu,) = [r[1].value for r in cover.iter_rows() if r[0].value == "MFU"]
    assert "30-45" not in mfu
    h100 = calibration.predicted_mfu("H100 SXM", GLOSSARY_ACTIVE_PARAMS)
    a100 = calibration.predicted_mfu("A100 SXM 80GB", GLOSSARY_ACTIVE_PARAMS)
    assert f"H100 {h100:.0%}" in mfu and f"A100 {a100:.0%}" in mfu, mfu


# -- the planner's Summary, recalculated --------------------------------------------------------

#: Two budget runs and one without a start date: Approved from Feb 2027, Proposed from Jun 2027
#: (the price left blank: the $2.00 default), a Proposed one with no start date.
CFO_PLANS = [
    dict(PLAN_A, **APPROVAL, budget_status="Approved", owner="LLM team",
         start_date=dt.date(2027, 2, 10)),
    dict(PLAN_B, budget_status="Proposed", owner="Research", start_date=dt.date(2027, 6, 1),
         usd_per_accelerator_hour=None),
    dict(PLAN_C, budget_status="Proposed"),
]  # fmt: skip


@pytest.fixture(scope="module")
def cfo_planner(template, tmp_path_factory):
    from helpers import require_soffice, require_ssconvert

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    require_soffice()
    require_ssconvert()
    d = tmp_path_factory.mktemp("cfo")
    p = with_references(template, d / "p.xlsx", CFO_PLANS)
    (lo,) = recalculate([p], d / "lo")
    (gn,) = recalculate_gnumeric([p], d / "gn")
    assert run(p, "--csv", d / "csv") == 0
    return p, {"LibreOffice": lo, "Gnumeric": gn}, d / "csv"


def _named(wb, name):
    ((sheet, ref),) = wb.defined_names[name].destinations
    return wb[sheet][ref.replace("$", "")].value


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_summary_opens_on_the_budget_and_its_period(cfo_planner):
    """Atop Summary: total P50, P90 and contingency of the budget runs (the hand-off's totals),
    and the months covered, first to last, in both programs."""
    _, recalculated, csv = cfo_planner
    totals = read_csv(csv, "totals")[0]
    p50 = sum(expected(p)["total_cost_usd"] for p in CFO_PLANS)
    assert math.isclose(float(totals["total_cost_usd"]), p50, abs_tol=CENTS)
    for program, path in recalculated.items():
        wb = openpyxl.load_workbook(path, data_only=True)
        ws = wb["Summary"]
        assert ws["A3"].value.startswith("Budget of this planner"), program
        assert ws["C4"].coordinate == "C4" and _named(wb, "headline_budget_p50") == ws["C4"].value
        assert math.isclose(_named(wb, "headline_budget_p50"), p50, abs_tol=CENTS), program
        assert math.isclose(
            _named(wb, "headline_budget_p90"), float(totals["total_cost_usd_p90"]), abs_tol=CENTS
        ), program
        p2 = dict(CFO_PLANS[1], usd_per_accelerator_hour=2.0)
        end = dt.date(2027, 6, 1) + dt.timedelta(days=expected(p2)["wall_clock_days"])
        assert _named(wb, "headline_period") == f"Feb 2027 - {end:%b %Y}", program
        note = ws["D7"].value
        assert note.startswith("1 scenario(s) without a start date"), (program, note)


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_summary_lists_the_defaults_and_greys_them(cfo_planner):
    """Which inputs of which scenario are left to a default ("price $2.00/h" for the run whose
    price is blank), and the selected scenario's defaults
    in grey italics (a conditional format on the input being blank)."""
    path, recalculated, _ = cfo_planner
    for program, done in recalculated.items():
        ws = openpyxl.load_workbook(done, data_only=True)["Summary"]
        head = [c.value for c in ws[10]]
        col = head.index("Inputs left to a default") + 1
        names = {ws.cell(r, 1).value.split(". ", 1)[1]: ws.cell(r, col).value
                 for r in range(11, 19)}  # fmt: skip
        assert "price $2.00/h" in names["Dense 70B"], program
        assert "price $" not in names[CFO_PLANS[0]["scenario_name"]]
        assert "start date none" in names["Small, defaults"], program
        assert names["Llama 3.1 405B (dense reference)"] in ("", None)  # a preset reference
        counted = _named(openpyxl.load_workbook(done, data_only=True), "headline_defaults")
        assert counted == 3, (program, counted)  # the three budget runs leave defaults
    ws = openpyxl.load_workbook(path)["Summary"]
    grey = [rule.formula[0] for rng in ws.conditional_formatting for rule in rng.rules
            if rule.dxf is not None and rule.dxf.font is not None and rule.dxf.font.i]  # fmt: skip
    assert "LEN(INDEX(usd_per_accelerator_hour,1,active_scenario))=0" in grey
    for name in ("peak_tflops", "active_params", "mfu"):  # the catalogue's, dense, calibrated
        assert f"LEN(INDEX({name},1,active_scenario))=0" in grey, name


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_scenario_list_gives_each_default_whole(cfo_planner):
    """The Summary's scenario list: a reference's row two lines high, any other row tall
    enough for every default it may list and no taller (four lines: an empty custom row
    spent five), each list whole (no "..."), in both programs."""
    from workbook_templates.planner.summary import _LIST_LINE_CHARS, DEFAULT_WORDS, LIST_ROW

    path, recalculated, _ = cfo_planner
    ws = openpyxl.load_workbook(path)["Summary"]
    heights = [ws.row_dimensions[r].height for r in range(LIST_ROW + 1, LIST_ROW + 9)]
    longest = len("; ".join(words for _, words in DEFAULT_WORDS))
    assert heights[:2] == [30.0] * 2
    assert all(h >= 15 * -(-longest // _LIST_LINE_CHARS) for h in heights[2:]), heights
    assert all(h <= 60 for h in heights[2:]), heights
    for program, done in recalculated.items():
        ws = openpyxl.load_workbook(done, data_only=True)["Summary"]
        col = [c.value for c in ws[LIST_ROW]].index("Inputs left to a default") + 1
        texts = {ws.cell(r, 1).value.split(". ", 1)[1]: ws.cell(r, col).value or ""
                 for r in range(LIST_ROW + 1, LIST_ROW + 9)}  # fmt: skip
        small = texts["Small, defaults"]  # many defaults: all of them
        assert not small.endswith("...") and "electricity $0.08/kWh" in small, (program, small)
        assert small.endswith("checkpoint 2 bytes"), (program, small)


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_planner_and_the_handoff_give_one_verdict_on_defaults(cfo_planner):
    """A budget run leaving its name, owner, price or start date to a default: a WARN in the
    planner's Checks (both programs) exactly where the hand-off's Checks say WARN."""
    from test_templates import _warnings_failed

    from workbook_templates.planner.checks import TYPED_NOT_DEFAULTS_EXCEL

    assert set(NEVER_DEFAULT) == {"scenario_name", "owner", "usd_per_accelerator_hour",
                                  "start_date"}  # fmt: skip
    assert all(f"{{{n}}}" in TYPED_NOT_DEFAULTS_EXCEL for n in NEVER_DEFAULT)
    _, recalculated, csv = cfo_planner
    warned = {re.search(r"scenario '([^']+)'", r["detail"]).group(1)
              for r in read_csv(csv, "checks")
              if r["check"] == "Typed, not defaults" and r["status"] == "WARN"}  # fmt: skip
    assert warned == {"Dense 70B", "Small, defaults"}
    preset = 3
    for program, done in recalculated.items():
        wb = openpyxl.load_workbook(done, data_only=True)
        failed = _warnings_failed(wb)
        (label,) = [k for k in failed if k.startswith("In the budget: name, owner, price")]
        names = {CFO_PLANS[k - preset]["scenario_name"] for k in failed[label]}
        assert names == warned, (program, failed[label])
        assert _named(wb, "master_status") == "WARN", program
