"""Issue 18: parameters and tokens typed as text such as ``70B``, ``2T``, ``15.6T`` or ``1.5e12``.

One grammar (:mod:`udfs.numbers`): the command line reads it (:func:`parse_number`), the planner
reads its subset with native formulas in the "as used" rows (``workbook_templates.planner.sizes``)
and the report reads a typed text with :func:`parse_size`. The planner's variants are recalculated
by LibreOffice (and Gnumeric) and compared with the engine on the same plan typed as numbers.
"""

from __future__ import annotations

import argparse
import math

import openpyxl
import pytest
from helpers import PLANNER, is_true, planner_cell, row_values, type_plan
from hypothesis import given
from hypothesis import strategies as st

from compute_lab.numbers import parse_number as cli_parse_number
from udfs.numbers import NumberTextError, parse_number, parse_size
from udfs.plan import estimate_scenario
from udfs.quantities import PLAN_OUTPUTS

REL = 1e-12
#: Custom 1 (k=3): 70B parameters, 2T tokens; Custom 2: an MoE typed with suffixes and spaces;
#: Custom 3: Custom 1 typed as numbers (the engine's figures).
DENSE = {"scenario_name": "Typed 70B", "total_params": "70B", "training_tokens": "2T",
         "accelerators": 1024, "accelerator_name": "H100 SXM", "mfu": 0.35,
         "budget_status": "Proposed", "owner": "Team T",
         "usd_per_accelerator_hour": 2.5}  # fmt: skip
MOE = {**DENSE, "scenario_name": "Typed MoE", "total_params": " 671 b", "active_params": "37B",
       "training_tokens": "14.8t "}  # fmt: skip
DENSE_NUMBERS = {**DENSE, "scenario_name": "As numbers", "total_params": 70e9,
                 "training_tokens": 2e12}  # fmt: skip
EXPONENT = {**DENSE, "scenario_name": "Exponent", "total_params": "7e10",
            "training_tokens": "1.5e12"}  # fmt: skip
#: Text that is not a number: an ERROR naming the cell, never a silent blank.
BAD = {3: {**DENSE, "scenario_name": "Bad suffix", "total_params": "70X"},
       4: {**DENSE, "scenario_name": "Words", "training_tokens": "seventy"}}  # fmt: skip
GOOD = {3: DENSE, 4: MOE, 5: DENSE_NUMBERS, 6: EXPONENT}
#: Text that reads as a number below the plausibility floors: typed in billions, as text.
FLOOR = {3: {**DENSE, "scenario_name": "Billions as text", "total_params": "70",
             "training_tokens": "2k"}}  # fmt: skip


def _numbers(plan):
    return {k: parse_size(v) if k in ("total_params", "active_params", "training_tokens")
            and isinstance(v, str) else v for k, v in plan.items()}  # fmt: skip


@pytest.fixture(scope="module")
def variants(generated_templates, tmp_path_factory):
    """(typed copies, their LibreOffice recalculations) of the good and bad plans."""
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    folder = tmp_path_factory.mktemp("sizes")
    made = {}
    for name, plans in (("sizes-good.xlsx", GOOD), ("sizes-bad.xlsx", BAD),
                        ("sizes-floor.xlsx", FLOOR)):  # fmt: skip
        wb = openpyxl.load_workbook(generated_templates[PLANNER])
        for k, plan in plans.items():
            type_plan(wb, k, plan)
        wb.save(folder / name)
        made[name] = folder / name
    done = {p.name: p for p in recalculate(list(made.values()), folder / "lo")}
    return made, done


# -- the grammar ----------------------------------------------------------------------------


def test_the_planner_grammar_reads_what_the_command_line_reads():
    for text, want in (("70B", 70e9), ("405B", 405e9), ("2T", 2e12), ("15.6T", 15.6e12),
                       ("1.5e12", 1.5e12), (" 671 b ", 671e9), ("16k", 16e3), ("2G", 2e9),
                       ("1P", 1e15), ("6.7e9", 6.7e9), (".5T", 0.5e12)):  # fmt: skip
        assert parse_size(text) == want == parse_number(text) == cli_parse_number(text), text
    for text in ("70X", "seventy", "", "B", "-70B", "7,000B", "40%", "1e", "70BB", "1.2.3",
                 "70 B B", "\u0667\u0660B", "inf", "nan"):  # fmt: skip
        with pytest.raises(NumberTextError, match="must be a number, or text such as 70B"):
            parse_size(text)
    with pytest.raises(argparse.ArgumentTypeError, match="must be a number such as 671e9"):
        cli_parse_number("70X")  # the command line's message, from the one grammar


_mantissa = st.one_of(
    st.from_regex(r"[0-9]{1,6}(\.[0-9]{0,4})?", fullmatch=True),
    st.from_regex(r"\.[0-9]{1,4}", fullmatch=True),
)


@given(_mantissa, st.sampled_from(["", "e3", "E-2", "e+4"]), st.sampled_from(list("kKmMbBgGtTpP")
       + [""]), st.sampled_from(["", " "]))  # fmt: skip
def test_the_subset_is_the_command_lines_grammar(mantissa, exponent, suffix, space):
    text = f"{mantissa}{exponent}{space}{suffix}"
    assert parse_size(text) == parse_number(text)


# -- the planner: native formulas, checks, data validation --------------------------------------


@pytest.mark.libreoffice
def test_text_sizes_compute_the_engines_figures_in_libreoffice(variants):
    _, done = variants
    wb = openpyxl.load_workbook(done["sizes-good.xlsx"], data_only=True)
    assert row_values(wb, "master_status")[0] != "ERROR", row_values(wb, "master_cause")
    assert row_values(wb, "total_params_used")[3:7] == [70e9, 671e9, 70e9, 70e9]
    assert row_values(wb, "active_params_used")[3:7] == [70e9, 37e9, 70e9, 70e9]
    assert row_values(wb, "training_tokens_used")[3:7] == [2e12, 14.8e12, 2e12, 1.5e12]
    for k, plan in GOOD.items():
        want = estimate_scenario(_numbers(plan))
        for q in PLAN_OUTPUTS:
            if q.name != "min_accelerators_for_memory":
                got = row_values(wb, q.name)[k]
                assert got == pytest.approx(want[q.name], rel=REL, abs=1e-9), (k, q.name)
    # the text column and the same plan typed as numbers: the same figures to the bit
    assert row_values(wb, "total_cost_usd")[3] == row_values(wb, "total_cost_usd")[5]


@pytest.mark.libreoffice
def test_text_that_is_not_a_number_is_an_error_naming_the_cell(variants):
    made, done = variants
    wb = openpyxl.load_workbook(done["sizes-bad.xlsx"], data_only=True)
    typed = openpyxl.load_workbook(made["sizes-bad.xlsx"])
    assert row_values(wb, "master_status") == ["ERROR"]
    cause = row_values(wb, "master_cause")[0]
    _, params = planner_cell(typed, "total_params", 3)  # Custom 1's cell: G<row>
    row = "".join(ch for ch in params if ch.isdigit())
    assert cause.startswith("Parameters and tokens typed as text read as numbers (Inputs rows "
                            f"{row},"), cause  # fmt: skip
    assert f"(column {params[0]}: Bad suffix)" in cause, cause
    assert "70B" in cause and "2T" in cause
    label = next(lab for lab in _labels(wb) if lab.startswith("Parameters and tokens typed"))
    cols = _check_cells(wb, label)
    assert [is_true(v) for v in cols] == [True] * 3 + [False, False] + [True] * 3
    # never a silent blank that passes: the column is not complete, and the check says why
    assert [is_true(v) for v in row_values(wb, "scenario_ready")[3:5]] == [False, False]


def _labels(wb):
    ws = wb["Checks"]
    return [ws.cell(r, 1).value for r in range(5, ws.max_row + 1) if ws.cell(r, 1).value]


def _check_cells(wb, label):
    ws = wb["Checks"]
    (r,) = [r for r in range(5, ws.max_row + 1) if ws.cell(r, 1).value == label]
    return [ws.cell(r, c).value for c in range(4, 12)]


@pytest.mark.libreoffice
def test_the_data_validation_allows_such_text_and_refuses_other_text(generated_templates, tmp_path):
    """The size rows' validation formula, put in cells beside test texts and recalculated."""
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    ws, total = planner_cell(wb, "total_params", 0)
    dvs = [d for d in ws.data_validations.dataValidation if total in str(d.sqref)]
    (dv,) = dvs
    assert dv.type == "custom" and len(dv.formula1) <= 255 and "size_suffixes" in dv.formula1
    assert dv.showErrorMessage and dv.errorStyle == "stop" and "70B" in dv.error
    cases = {"70B": True, "2T": True, "15.6T": True, "1.5e12": True, " 405 b": True, 7e10: True,
             "70X": False, "seventy": False, "": False, -5: False}  # fmt: skip
    col = ws.max_column + 2
    for i, text in enumerate(cases):
        r = 200 + i
        ws.cell(r, col - 1).value = text
        ref = f"{openpyxl.utils.get_column_letter(col - 1)}{r}"
        ws.cell(r, col).value = "=" + dv.formula1.replace(total, ref)
    wb.save(tmp_path / "dv.xlsx")
    (out,) = recalculate([tmp_path / "dv.xlsx"], tmp_path / "lo")
    got = openpyxl.load_workbook(out, data_only=True)["Inputs"]
    for i, (text, want) in enumerate(cases.items()):
        assert bool(got.cell(200 + i, col).value) is want, (text, got.cell(200 + i, col).value)


@pytest.mark.gnumeric
@pytest.mark.libreoffice
def test_text_sizes_compute_the_same_in_gnumeric(variants, tmp_path):
    from helpers import require_ssconvert
    from test_engines import compare

    from workbook_templates.recalc import recalculate_gnumeric

    require_ssconvert()
    made, done = variants
    gn = {p.name: p for p in recalculate_gnumeric(list(made.values()), tmp_path / "gn")}
    for name, path in made.items():
        n, differ = compare(path, done[name], gn[name])
        assert n > 50 and not differ, (name, len(differ), differ[:6])


# -- the report reads the same number --------------------------------------------------------


@pytest.mark.libreoffice
def test_the_report_reads_the_number_the_planner_computed(variants, tmp_path):
    from test_handoff_budget import read_csv, run

    _, done = variants
    assert run(done["sizes-good.xlsx"], "--csv", tmp_path / "csv") == 0
    runs = {r["scenario"]: r for r in read_csv(tmp_path / "csv", "budget")}
    planner = openpyxl.load_workbook(done["sizes-good.xlsx"], data_only=True)
    for k, plan in GOOD.items():
        got = float(runs[plan["scenario_name"]]["total_cost_usd"])
        assert math.isclose(got, row_values(planner, "total_cost_usd")[k], rel_tol=1e-9,
                            abs_tol=0.02), plan["scenario_name"]  # fmt: skip
        want = estimate_scenario(_numbers(plan))["total_cost_usd"]
        assert math.isclose(got, want, rel_tol=1e-9, abs_tol=0.02)


@pytest.mark.libreoffice
def test_the_report_refuses_text_that_is_not_a_number_naming_the_cell(variants, tmp_path, capsys):
    from test_handoff_budget import run

    made, done = variants
    assert run(done["sizes-bad.xlsx"], "--csv", tmp_path / "csv") == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    typed = openpyxl.load_workbook(made["sizes-bad.xlsx"])
    for name, k, text in (("total_params", 3, "70X"), ("training_tokens", 4, "seventy")):
        ws, coord = planner_cell(typed, name, k)
        line = next(x for x in err.splitlines() if f"{ws.title}!{coord}" in x)
        assert name in line and repr(text) in line and "70B" in line, line
    assert not (tmp_path / "csv").exists()


@pytest.mark.libreoffice
def test_text_below_the_floors_is_the_floors_error_in_planner_and_report(variants, tmp_path,
                                                                          capsys):  # fmt: skip
    from test_handoff_budget import run

    made, done = variants
    wb = openpyxl.load_workbook(done["sizes-floor.xlsx"], data_only=True)
    assert row_values(wb, "total_params_used")[3] == 70 and row_values(wb, "master_status") == [
        "ERROR"
    ]
    cause = row_values(wb, "master_cause")[0]
    assert cause.startswith("Total and active parameters >= 1E6") and "70E9" in cause, cause
    assert run(done["sizes-floor.xlsx"], "--csv", tmp_path / "csv") == 2
    err = capsys.readouterr().err
    typed = openpyxl.load_workbook(made["sizes-floor.xlsx"])
    ws, coord = planner_cell(typed, "total_params", 3)
    line = next(x for x in err.splitlines() if f"{ws.title}!{coord}" in x)
    assert "total_params" in line and "billions" in line, line


#: Text past the largest double: LibreOffice read it as 1.8e308 and Gnumeric as a number, and
#: the Checks passed while the report refused it as not finite.
PAST = {3: {**DENSE, "scenario_name": "Past", "total_params": "1e999"},
        4: {**DENSE, "scenario_name": "Past tokens", "training_tokens": "2e308"},
        5: {**MOE, "scenario_name": "Past active", "active_params": "9e999B"}}  # fmt: skip


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_text_past_the_largest_double_is_an_error_in_planner_and_report(
    generated_templates, tmp_path
):
    """The planner's grammar refuses what parse_size refuses (not finite), in LibreOffice and
    Gnumeric: an ERROR on Checks naming the column, and the report's one line naming the cell."""
    from helpers import run_cli

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    wb = openpyxl.load_workbook(generated_templates[PLANNER])
    for k, plan in PAST.items():
        type_plan(wb, k, plan)
    path = tmp_path / "past.xlsx"
    wb.save(path)
    (lo,) = recalculate([path], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([path], tmp_path / "gn")
    for done in (lo, gn):
        got = openpyxl.load_workbook(done, data_only=True)
        assert row_values(got, "master_status") == ["ERROR"], done
        label = next(lab for lab in _labels(got) if lab.startswith("Parameters and tokens typed"))
        cols = _check_cells(got, label)
        assert [is_true(v) for v in cols] == [True] * 3 + [False] * 3 + [True] * 2, done
        code, _, err, _ = run_cli(["report", done, "--csv", tmp_path / "csv"])
        assert code == 2 and "must be a finite number" in err, err
        assert not (tmp_path / "csv").exists()
