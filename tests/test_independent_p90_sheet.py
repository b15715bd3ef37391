"""The Budget sheet's "P90 if the runs were independent" on awkward budgets: runs of P50 0,
runs without spread, a $1e12 run beside small ones, 200 runs, runs of a few cents. The
block's formulas recalculated by LibreOffice and by Gnumeric give every cell its saved
value to the cent (no #NUM!, no #DIV/0!), and the engine's P90 sits within its bounds."""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName

from udfs import ranges, schedule
from workbook_templates.files import save_workbook
from workbook_templates.report import summary

#: (P50, P90) of each run, in whole cents.
BUDGETS = {
    "a run of P50 0 among others": [(0, 0), (12345678, 15000000), (500000, 900000)],
    "every run at P50 0": [(0, 0), (0, 0)],
    "a run without spread": [(1000000, 1000000), (12345678, 15000000)],
    "runs without spread, of odd cents": [
        (8026, 8026),
        (2325, 5908),
        (790, 1986),
        (1, 2),
        (2665399670275, 2665399670275),
    ],
    "a $1e12 run beside 100 small ones": [(10**14, 10**14)] + [(100000, 200000)] * 100,
    "$1e12 runs of a tiny spread": [
        (25261732851270, 25261742510177),
        (15711600828841, 15711610607781),
        (53, 53),
        (10623, 10623),
    ],
    "a $1e12 run of a spread of cents": [(112483657477096, 112483716826782), (2, 2)],
    "200 runs": [(1000000 + 7919 * i, 1300000 + 7919 * i + 13 * i * i) for i in range(200)],
    "runs of a few cents": [(1, 2), (3, 7), (5, 5), (2, 9)],
}


def _budget_sheet(pairs, path):
    """A Budget sheet of the runs ``pairs`` (the Table's P50, P90 and contingency columns and
    their names) and the block worked out under it; returns the engine's P90 and its
    bounds (US$)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    first, rows = 2, []
    at = {c: summary._BY_RUN.index(c) + 1 for c in summary.BUDGET_RANGES}
    runs = []
    for i, (a, b) in enumerate(pairs):
        r = first + i
        ws.cell(r, 2, f"R{i}")
        for column, value in (("total_cost_usd", a), ("total_cost_usd_p90", b),
                              ("contingency_usd", b - a)):  # fmt: skip
            ws.cell(r, at[column], schedule.usd(value))
        mean = schedule.to_cents(ranges.lognormal_mean(schedule.usd(a), schedule.usd(b)))
        rows.append(
            {
                "run_code": f"R{i}",
                "expected_cost_usd": schedule.usd(mean),
                "total_cost_usd": schedule.usd(a),
                "total_cost_usd_p90": schedule.usd(b),
            }
        )
        runs.append(mean)
    last = first + len(pairs) - 1
    for column, name in summary.BUDGET_RANGES.items():
        letter = get_column_letter(at[column])
        wb.defined_names[name] = DefinedName(
            name, attr_text=f"Budget!${letter}${first}:${letter}${last}"
        )
    p50, p90 = [a for a, _ in pairs], [b for _, b in pairs]
    low, high = sum(p50) + max(b - a for a, b in pairs), sum(p90)
    got = schedule.to_cents(ranges.independent_sum_p90(p50, p90, runs) / 100)
    engine = min(max(got, low), high)
    summary._independent_block(ws, pd.DataFrame(rows), first, last + 3, schedule.usd(engine))
    save_workbook(wb, path)
    return got, low, high


@pytest.mark.libreoffice
@pytest.mark.gnumeric
def test_the_independent_p90_recalculates_to_its_saved_values(tmp_path):
    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    paths, bounds = [], {}
    for i, (name, pairs) in enumerate(BUDGETS.items()):
        paths.append(tmp_path / f"b{i}.xlsx")
        bounds[name] = _budget_sheet(pairs, paths[-1])
    for name, (got, low, high) in bounds.items():
        assert low <= got <= high, (name, got, low, high)
    done = {"LibreOffice": recalculate(paths, tmp_path / "lo")}
    done["Gnumeric"] = recalculate_gnumeric(paths, tmp_path / "gn")
    off = []
    for name, path in zip(BUDGETS, paths, strict=True):
        formulas = openpyxl.load_workbook(path)["Budget"]
        saved = openpyxl.load_workbook(path, data_only=True)["Budget"]
        cells = [c.coordinate for row in formulas.iter_rows() for c in row if c.data_type == "f"]
        assert cells
        for engine_name, files in done.items():
            values = openpyxl.load_workbook(files[paths.index(path)], data_only=True)["Budget"]
            for ref in cells:
                want, value = saved[ref].value, values[ref].value
                if not (isinstance(value, int | float) and abs(value - want) < 0.005):
                    off.append((name, engine_name, ref, want, value))
    assert not off, "\n".join(map(str, off))


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates["training-run-planner.xlsx"]


FREE = {"usd_per_accelerator_hour": 0.0, "pricing_basis": "rental all-in"}


#: Each hand-off's plans (changes to Beta, changes to Approved and Later) and how many of
#: its three runs have a P50 of 0.
HANDOFF_BUDGETS = {
    "one run priced at 0": (FREE, {}, 1),
    "every run priced at 0": (FREE, FREE, 3),
    "a $1e12 run beside small ones": ({"usd_per_accelerator_hour": 2.2e4}, {}, 0),
}


@pytest.mark.libreoffice
@pytest.mark.gnumeric
@pytest.mark.parametrize("budget", list(HANDOFF_BUDGETS))
def test_a_handoff_of_odd_runs_recalculates_to_its_saved_values(template, tmp_path, budget):
    """Runs priced at 0, rental all-in (P50 0), beside others or alone, and a run of about
    US$1e12 beside runs of a few million: the hand-off recalculated by LibreOffice and by
    Gnumeric gives every formula cell its saved value to the cent."""
    from test_handoff_budget import read_csv
    from test_handoff_totals import _formula_cells
    from test_p90_schedule import APPROVED, BETA, LATER, _handoff

    from workbook_templates.recalc import recalculate, recalculate_gnumeric

    beta, others, zeros = HANDOFF_BUDGETS[budget]
    plans = [{**BETA, **beta}, {**APPROVED, **others}, {**LATER, **others}]
    folder = _handoff(template, tmp_path / "h", plans, 1)
    p50s = [float(r["total_cost_usd"]) for r in read_csv(folder / "csv", "budget")]
    assert len(p50s) == 3 and p50s.count(0.0) == zeros
    if not zeros:
        assert 9e11 < max(p50s) < 1e13
    path = folder / "h.xlsx"
    saved = _formula_cells(path)
    (lo,) = recalculate([path], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([path], tmp_path / "gn")
    off = []
    for engine_name, done in (("LibreOffice", lo), ("Gnumeric", gn)):
        values = openpyxl.load_workbook(done, data_only=True)
        for (sheet, ref), want in saved.items():
            got = values[sheet][ref].value
            if not (isinstance(got, int | float) and abs(got - want) < 0.005):
                off.append((engine_name, sheet, ref, want, got))
    assert not off, "\n".join(map(str, off))
