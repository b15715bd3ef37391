"""A third engine: every generated workbook computes the same in Gnumeric as in LibreOffice.

The three templates, the example plan and the planner filled as a user would (two plans, five
random plans, a fully typed plan, inputs that slip past validation: ``helpers.VARIANTS``) are
recalculated by LibreOffice (conftest ``_recalculated_all``) and by Gnumeric
(``ssconvert --recalc``, conftest ``gnumeric_recalculated``), and every formula cell of the
generated file is compared between the two by what it means (so are the budget-state and
range planners of tests/helpers_planner.py, recalculated in their own calls):

- numbers to a relative 1e-12 (``REL``); 0 only equals 0;
- text equal; an empty text result equals an empty cell (LibreOffice saves ``""`` as a cell
  with no value, Gnumeric as an empty string);
- errors equal (``#DIV/0!`` ...);
- a logical result: Gnumeric saves TRUE/FALSE as a boolean; LibreOffice saves a logical result
  in a cell with a number format as the number 1/0. So a Gnumeric boolean equals LibreOffice's
  1/0 only in a cell formatted with ``sheetkit.BOOLEAN_FORMAT`` (every logical cell of the
  workbooks has it), and nowhere else;
- a date: both save the serial number with a date format, which openpyxl reads as a datetime;
  it is compared as the serial number (openpyxl's rounding to the microsecond is below REL).

No cell is exempt (``EXEMPT`` is empty): the cells that differed were changed to a form both
engines read the same (INDEX with row and column; chart spreads rounded to the cent). The
Gnumeric copies are also checked against the engine's numbers, as tests/test_templates.py
checks the LibreOffice copies.
"""

from __future__ import annotations

import datetime as dt
import math

import openpyxl
import pytest
from helpers import PLANNER, VARIANTS, random_plans, row_values, run_cli
from helpers_portable import lint_workbook
from openpyxl.utils.datetime import to_excel
from test_templates import assert_matches_engine

from workbook_templates.sheetkit import BOOLEAN_FORMAT

#: Gnumeric's xlsx has no default cell style: openpyxl warns and applies its own.
pytestmark = pytest.mark.filterwarnings("ignore:Workbook contains no default style")

REL = 1e-12
#: (file name, sheet, cell) -> why that cell may differ between the engines. None today.
EXEMPT: dict[tuple[str, str, str], str] = {}
EXAMPLE = "team-a-plan.xlsx"
WORKBOOKS = sorted(
    ["training-run-planner.xlsx", "cluster-sizing.xlsx", "dense-vs-moe.xlsx", EXAMPLE, *VARIANTS]
)


def meaning(cell, boolean_format=False):
    """What a recalculated cell means: (kind, value), kind in number/text/logical/error/empty.

    ``boolean_format``: the generated cell is formatted as TRUE/FALSE, so LibreOffice's 1/0
    there is a logical value.
    """
    v = cell.value
    if cell.data_type == "e":
        return "error", v
    if v is None or v == "":
        return "empty", ""
    if isinstance(v, bool):
        return "logical", v
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return "number", float(to_excel(v))
    if isinstance(v, (int, float)):
        if boolean_format and v in (0, 1):
            return "logical", bool(v)
        return "number", float(v)
    return "text", str(v)


def same(a, b):
    if a[0] == b[0] == "number":
        return a[1] == b[1] or math.isclose(a[1], b[1], rel_tol=REL, abs_tol=0)
    return a == b


def compare(source, lo_path, gn_path):
    """(formula cells, the cells that differ as (sheet, cell, formula, LibreOffice, Gnumeric))."""
    formulas = openpyxl.load_workbook(source)
    lo = openpyxl.load_workbook(lo_path, data_only=True)
    gn = openpyxl.load_workbook(gn_path, data_only=True)
    n, differ = 0, []
    for ws in formulas:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type != "f":
                    continue
                n += 1
                logical = c.number_format == BOOLEAN_FORMAT
                a = meaning(lo[ws.title][c.coordinate], logical)
                b = meaning(gn[ws.title][c.coordinate], logical)
                if not same(a, b) and (source.name, ws.title, c.coordinate) not in EXEMPT:
                    differ.append((ws.title, c.coordinate, c.value, a, b))
    return n, differ


@pytest.fixture(scope="module")
def sources(generated_templates, template_variants, example_plan):
    return {**generated_templates, **template_variants, example_plan.name: example_plan}


@pytest.fixture(scope="module")
def libreoffice_copies(_recalculated_all):
    return _recalculated_all


def test_every_workbook_is_recalculated_by_both_engines(sources, gnumeric_recalculated):
    assert sorted(sources) == WORKBOOKS
    assert sorted(gnumeric_recalculated) == WORKBOOKS


@pytest.mark.parametrize("name", WORKBOOKS)
def test_every_formula_cell_agrees_between_gnumeric_and_libreoffice(
    name, sources, libreoffice_copies, gnumeric_recalculated
):
    n, differ = compare(sources[name], libreoffice_copies[name], gnumeric_recalculated[name])
    assert n > 50, (name, n)
    assert not differ, (name, f"{len(differ)} of {n} formula cells differ", differ[:8])


def test_the_meaning_comparison_can_fail():
    """The comparison tells a boolean from a number outside a TRUE/FALSE cell, an error from
    text, and numbers one part in 1e11 apart."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"], ws["A2"], ws["A3"] = True, 1, "#DIV/0!"
    ws["A4"], ws["A5"] = 1.0, 1.0 + 1e-11
    assert not same(meaning(ws["A1"]), meaning(ws["A2"]))
    assert same(meaning(ws["A1"]), meaning(ws["A2"], boolean_format=True))
    ws["A3"].data_type, ws["B3"].value, ws["B3"].data_type = "s", "#DIV/0!", "e"
    assert not same(meaning(ws["A3"]), meaning(ws["B3"]))
    assert not same(meaning(ws["A4"]), meaning(ws["A5"]))
    assert same(meaning(ws["A6"]), ("empty", ""))


# -- Gnumeric's numbers are the engine's, where the LibreOffice tests compare those -----------


def test_gnumeric_planner_columns_equal_the_engine(gnumeric_recalculated):
    plain = openpyxl.load_workbook(gnumeric_recalculated[PLANNER], data_only=True)
    for k in range(3):  # the two references and the example
        assert_matches_engine(plain, k)
    custom = openpyxl.load_workbook(gnumeric_recalculated["planner-custom.xlsx"], data_only=True)
    for k in (3, 4):  # the two typed plans
        assert_matches_engine(custom, k)
    rand = openpyxl.load_workbook(gnumeric_recalculated["planner-random.xlsx"], data_only=True)
    for k in range(3, 3 + len(random_plans())):
        assert_matches_engine(rand, k)


def test_gnumeric_master_checks(gnumeric_recalculated):
    for name, path in gnumeric_recalculated.items():
        got = row_values(openpyxl.load_workbook(path, data_only=True), "master_check")
        assert got == [name != "planner-bad.xlsx"], name


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_the_budget_state_and_range_variants_agree_too(generated_templates, tmp_path):
    """The planners of tests/helpers_planner.py (two plans in the budget, each master-check
    state, every uncertainty source) agree cell by cell too, and their ranges, default MFU and
    budget rows equal the engine in Gnumeric's copy."""
    from helpers_planner import assert_ranges_match_engine, filled_columns, make_variants

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    made = make_variants(generated_templates[PLANNER], tmp_path)
    lo = {p.name: p for p in recalculate(list(made.values()), tmp_path / "lo")}
    gn = {p.name: p for p in recalculate_gnumeric(list(made.values()), tmp_path / "gn")}
    for name, source in made.items():
        n, differ = compare(source, lo[name], gn[name])
        assert not differ, (name, f"{len(differ)} of {n} formula cells differ", differ[:8])
    ranges = openpyxl.load_workbook(gn["planner-ranges.xlsx"], data_only=True)
    for k in filled_columns(ranges):
        assert_ranges_match_engine(ranges, k)


# -- the hand-off ----------------------------------------------------------------------------


@pytest.mark.gnumeric
def test_the_hand_off_formulas_agree_too(recalculated_example, tmp_path):
    """The finance hand-off built from the recalculated example plan: its formula cells (none
    today: it holds values) pass the lint and agree between the engines."""
    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    out = tmp_path / "handoff.xlsx"
    code, _, err, _ = run_cli(["report", recalculated_example, "--out", out])
    assert code == 0 and out.exists(), err
    wb = openpyxl.load_workbook(out)
    assert not lint_workbook(wb)
    formulas = sum(c.data_type == "f" for ws in wb for row in ws.iter_rows() for c in row)
    if formulas:
        (lo,) = recalculate([out], tmp_path / "lo")
        (gn,) = recalculate_gnumeric([out], tmp_path / "gn")
        n, differ = compare(out, lo, gn)
        assert n == formulas and not differ, differ[:8]
