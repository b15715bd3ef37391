"""The model spec (udfs.quantities formulas, udfs.model): one definition, two renderings.

- numpy: each spec'd quantity's generated function equals the engine's hand-written function
  (and ``engine.estimate`` for a whole plan) on random plans (hypothesis), to a relative 1e-9;
- Excel: every spec'd quantity rendered to formula text in a small generated workbook,
  recalculated by headless LibreOffice, equals the numpy rendering to a relative 1e-9.
"""

from __future__ import annotations

import datetime as dt
import inspect
import math
import re

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from udfs import calibration, engine, model, ranges
from udfs.formula import FormulaError, norm_s_inv, parse, to_excel
from udfs.quantities import (
    MODEL_CONSTANTS,
    MODEL_INPUTS,
    PLAN_INPUTS,
    RANGE_OUTPUTS,
    RANGE_QUANTITIES,
)
from workbook_templates.sheetkit import Book, Row

REL = 1e-9

#: Spec'd quantity -> (engine function, spec name -> engine argument name where they differ).
ENGINE = {
    "effective_tflops": (engine.effective_tflops, {}),
    "training_flops": (engine.training_flops, {"training_tokens": "tokens"}),
    "accelerator_hours": (engine.accelerator_hours, {}),
    "wall_clock_days": (engine.wall_clock_days, {}),
    "checkpoint_gb": (engine.checkpoint_gb, {"checkpoint_bytes_per_param": "bytes_per_param"}),
    "compute_cost_usd": (engine.compute_cost_usd, {}),
    "electricity_kwh": (engine.electricity_kwh, {}),
    "electricity_cost_usd": (engine.electricity_cost_usd, {}),
    "co2_tonnes": (engine.co2_tonnes, {}),
    "min_accelerators_for_memory": (
        engine.min_accelerators_for_memory,
        {"training_state_bytes_per_param": "bytes_per_param"},
    ),
    "iterations_per_year": (engine.iterations_per_year, {}),
    "accelerators_for_days": (engine.accelerators_for_days, {}),
    "implied_effective_tflops": (engine.implied_effective_tflops, {}),
    "implied_mfu": (engine.implied_mfu, {}),
}
#: Spec'd quantities the engine computes only inside ``estimate``.
VIA_ESTIMATE = ("total_cost_usd",)
#: Spec'd quantities of one calendar month, computed by ``engine.month_shares`` for a whole run.
VIA_MONTH_SHARES = (
    "run_days_in_month",
    "month_share",
    "run_days_in_month_p90",
    "month_share_p90",
    "month_total_cost_usd_p90",
)  # and udfs.schedule
#: The ranges (udfs.ranges evaluates these) and the calibrated default (udfs.calibration),
#: with its spread narrowed by a team's own runs (udfs.own_runs).
VIA_RANGES = tuple(q.name for q in RANGE_OUTPUTS)
VIA_CALIBRATION = ("calibrated_mfu", "calibrated_mfu_raw", "calibrated_plan_sigma",
                   "calibrated_range_pct", "small_model", "own_runs_narrowest_sigma",
                   "own_runs_plan_sigma")  # fmt: skip


def _pos(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, allow_subnormal=False)


#: One random value per name a formula can read (inputs, constants and intermediates).
VALUES = {
    "peak_tflops": _pos(1, 5000),
    "mfu": _pos(0.01, 1),
    "goodput": _pos(0.01, 1),
    "flops_per_param_token": st.just(6.0),
    "days_per_year": st.just(365.0),
    "active_params": _pos(1e6, 2e12),
    "total_params": _pos(1e6, 2e12),
    "training_tokens": _pos(1e9, 1e14),  # from the plausibility floor (MIN_PLAUSIBLE)
    "training_flops": _pos(1e15, 1e27),
    "effective_tflops": _pos(1, 5000),
    "accelerator_hours": _pos(1, 1e9),
    "accelerators": st.integers(1, 500_000).map(float),
    "checkpoint_bytes_per_param": _pos(0.5, 20),
    "training_state_bytes_per_param": _pos(1, 40),
    "hbm_gb": _pos(8, 300),
    "usd_per_accelerator_hour": _pos(0, 20),
    "watts_per_accelerator": _pos(10, 2000),
    "server_overhead": _pos(1, 3),
    "pue": _pos(1, 2),
    "electricity_kwh": _pos(0, 1e12),
    "usd_per_kwh": _pos(0, 1),
    "grams_co2_per_kwh": _pos(0, 1200),
    "wall_clock_days": _pos(0.01, 1e5),
    "target_days": _pos(0.1, 1000),
}


def test_every_output_and_extra_is_spec_d_and_checked():
    assert set(model.SPEC) == (set(ENGINE) | set(VIA_ESTIMATE) | set(VIA_MONTH_SHARES)
                               | set(VIA_RANGES) | set(VIA_CALIBRATION))  # fmt: skip
    leaves = {n for q in model.SPEC for n in model.inputs_of(q)} - set(model.SPEC)
    known = {q.name for q in PLAN_INPUTS + MODEL_CONSTANTS + MODEL_INPUTS}
    assert leaves <= known, leaves - known  # every name a formula reads is described


@pytest.mark.parametrize("name", sorted(ENGINE))
@settings(max_examples=60, deadline=None)
@given(data=st.data(), n=st.integers(0, 4))
def test_numpy_rendering_equals_the_engine_function(name, data, n):
    """For arrays of n plans (n = 0: scalars), the generated function = the engine's."""
    fn, rename = ENGINE[name]
    args = model.inputs_of(name, through=("implied_effective_tflops",))

    def draw(arg):
        if n == 0:
            return data.draw(VALUES[arg], label=arg)
        return np.array([data.draw(VALUES[arg], label=f"{arg}[{i}]") for i in range(n)])

    values = {a: draw(a) for a in args}
    if name == "implied_mfu":  # the engine refuses an implied MFU above 1: stay below it
        util = 0.99 * draw("mfu")  # not exactly 1: rounding could put it just above
        values["accelerator_hours"] = values["training_flops"] / (
            values["peak_tflops"] * util * 1e12 * 3600
        )
    ours = model.evaluate(values, [name])[name]
    params = inspect.signature(fn).parameters
    theirs = fn(**{rename.get(a, a): v for a, v in values.items() if rename.get(a, a) in params})
    assert type(ours) is type(theirs)
    np.testing.assert_allclose(ours, theirs, rtol=REL, atol=0)


PLAN = st.fixed_dictionaries(
    {
        n: VALUES[n]
        for n in (
            "total_params",
            "training_tokens",
            "accelerators",
            "peak_tflops",
            "mfu",
            "goodput",
            "usd_per_accelerator_hour",
            "watts_per_accelerator",
            "server_overhead",
            "pue",
            "usd_per_kwh",
            "grams_co2_per_kwh",
            "checkpoint_bytes_per_param",
            "hbm_gb",
        )
    }  # fmt: skip
).flatmap(
    lambda p: _pos(1e-3, 1).map(  # active parameters from their plausibility floor up
        lambda share: {**p, "active_params": max(p["total_params"] * share, 1e6)}
    )
)


@settings(max_examples=100, deadline=None)
@given(plan=PLAN)
def test_whole_plan_equals_engine_estimate(plan):
    ours = model.evaluate(plan)
    theirs = engine.estimate(**plan)
    for name in ENGINE.keys() & ours.keys() | set(VIA_ESTIMATE):
        if name in theirs:
            assert math.isclose(ours[name], theirs[name], rel_tol=REL), name


@settings(max_examples=100, deadline=None)
@given(
    start=st.dates(dt.date(2000, 1, 1), dt.date(2100, 1, 1)),
    days=_pos(0.01, 2000),
)
def test_month_share_equals_engine_month_shares(start, days):
    """The spec's per-month share, over the engine's months, = engine.month_shares."""
    theirs = engine.month_shares(start, days)
    months = [m for m, _ in theirs]
    nxt = [dt.date(m.year + m.month // 12, m.month % 12 + 1, 1) for m in months]
    t0 = start.toordinal()
    ours = model.evaluate(
        {"run_start": t0, "wall_clock_days": days,
         "month_start": np.array([m.toordinal() for m in months], float),
         "next_month": np.array([m.toordinal() for m in nxt], float)},
        ["month_share"],
    )["month_share"]  # fmt: skip
    np.testing.assert_allclose(ours, [share for _, share in theirs], rtol=REL, atol=1e-15)


@settings(max_examples=100, deadline=None)
@given(
    start=st.dates(dt.date(2000, 1, 1), dt.date(2100, 1, 1)),
    days=_pos(0.01, 2000),
    slower=_pos(1, 4),
    costs=st.tuples(_pos(0, 1e9), _pos(0, 1e7), _pos(0, 1e6)),
    price_risk=_pos(1, 1.5),
)
def test_the_spec_p90_month_equals_the_p90_schedule(start, days, slower, costs, price_risk):
    """The spec's month_total_cost_usd_p90 (the planner's Monthly spend P90 column), over the
    P90 run's months, = udfs.schedule.spend_schedule's P90 month."""
    from udfs import schedule

    compute, power, other = costs
    days_p90 = days * slower
    p50 = {"compute": compute, "electricity": power, "other": other}
    p90 = {"compute": compute * slower * price_risk, "electricity": power * slower,
           "other": other}  # fmt: skip
    theirs = schedule.spend_schedule(start, days, days_p90, p50, p90)
    months = [m.month for m in theirs]
    nxt = [dt.date(m.year + m.month // 12, m.month % 12 + 1, 1) for m in months]
    ours = model.evaluate(
        {"run_start": start.toordinal(), "wall_clock_days": days,
         "wall_clock_days_p90": days_p90, "other_costs_usd": other,
         "total_cost_usd_p90": sum(p90.values()),
         "month_start": np.array([m.toordinal() for m in months], float),
         "next_month": np.array([m.toordinal() for m in nxt], float)},
        ["month_total_cost_usd_p90", "month_share_p90"],
    )  # fmt: skip
    np.testing.assert_allclose(ours["month_share_p90"], [m.share_p90 for m in theirs],
                               rtol=REL, atol=1e-15)  # fmt: skip
    np.testing.assert_allclose(ours["month_total_cost_usd_p90"],
                               [m.total_p90 for m in theirs], rtol=1e-9,
                               atol=1e-9 * sum(p90.values()))  # fmt: skip


Z90 = 1.2815515655446004  # NORM.S.INV(0.9)


@settings(max_examples=100, deadline=None)
@given(plan=PLAN, tp=_pos(0, 2), price=_pos(0, 2))
def test_range_rows_are_lognormal_around_the_point(plan, tp, price):
    """The spec's {q}_p10 / {q}_p90, written out by hand here, = udfs.ranges.estimate_ranges."""
    point = engine.estimate(**plan)
    ours = model.evaluate({**point, "throughput_range_pct": tp, "price_range_pct": price})
    s_tp, s_price = math.log(1 + tp) / Z90, math.log(1 + price) / Z90  # LN(1 + pct)
    assert math.isclose(ours["throughput_sigma"], s_tp, rel_tol=REL, abs_tol=1e-300)
    got = ranges.estimate_ranges(point, ours["throughput_sigma"], ours["price_sigma"])
    s_rent = math.hypot(s_tp, s_price)
    for k, z in (("p10", -Z90), ("p90", Z90)):
        want = {q: point[q] * math.exp(z * s_tp) for q in RANGE_QUANTITIES}
        want["compute_cost_usd"] = point["compute_cost_usd"] * math.exp(z * s_rent)
        want["total_cost_usd"] = want["compute_cost_usd"] + want["electricity_cost_usd"]
        for q in RANGE_QUANTITIES:
            assert math.isclose(ours[f"{q}_{k}"], want[q], rel_tol=REL), (q, k)
            assert ours[f"{q}_{k}"] == got[q][k], (q, k)  # one definition
    for q in RANGE_QUANTITIES:
        assert got[q]["p10"] <= got[q]["p50"] == point[q] <= got[q]["p90"]
    assert tuple(ranges.QUANTITIES) == RANGE_QUANTITIES  # one list of range quantities


def test_calibrated_mfu_is_the_calibration_s_prediction():
    """calibration.predicted_mfu and the planner's blank MFU are one formula (the spec's)."""
    m = calibration.default_mfu_model()
    for accel in ("H100 SXM", "A100 SXM 40GB", "TPU v5p", "MI300X", "not a chip"):
        for active in (1e8, 7e9, 37e9, 405e9, 5e12):
            knee = calibration.model.CONSTANTS["small_model_active_params"]  # flat from it up
            ln_mfu = calibration.mfu_intercept(accel) + m.slope * math.log(min(active, knee) / knee)
            want = min(calibration.MFU_MAX, max(calibration.MFU_MIN, math.exp(ln_mfu)))
            assert calibration.predicted_mfu(accel, active) == pytest.approx(want, rel=1e-14)
    assert calibration.default_range_pct() == pytest.approx(
        math.exp(Z90 * calibration.throughput_sigma()) - 1, rel=1e-14
    )


def test_norm_s_inv_is_excel_s():
    assert norm_s_inv(0.9) == pytest.approx(Z90, rel=1e-15)
    got = norm_s_inv(np.array([[0.1, 0.5], [0.9, 0.0]]))
    assert got.shape == (2, 2) and got[0, 1] == 0.0 and math.isnan(got[1, 1])
    assert got[0, 0] == -got[1, 0]
    assert model.excel("throughput_sigma") == (
        "LN(1+{throughput_range_pct})/_xlfn.NORM.S.INV({p90_level})"
    )
    assert model.CONSTANTS["p90_level"] == 0.9 and model.CONSTANTS["p10_level"] == 0.1


def test_formulas_refuse_anything_but_arithmetic():
    for bad in ("__import__('os')", "a.b", "a[0]", "a if b else c", "open(a)", "'text'", "a<b<c"):
        with pytest.raises(FormulaError):
            parse(bad)


def test_excel_text_keeps_precedence():
    assert to_excel(parse("(a - b) - (c - d)")) == "{a}-{b}-({c}-{d})"
    assert to_excel(parse("a / (b * c) ** 2")) == "{a}/({b}*{c})^2"
    assert to_excel(parse("-a ** 2")) == "(-({a}^2))"
    assert to_excel(parse("where(a >= 1e-9, log(a), exp(b))")) == "IF({a}>=1E-9,LN({a}),EXP({b}))"


# ---------------------------------------------------------------------------------------------
# Excel text through LibreOffice
# ---------------------------------------------------------------------------------------------

N_PLANS = 24


def _random_leaves(rng):
    """N_PLANS random plans: every name any formula reads that is not computed."""
    leaves = sorted({n for q in model.SPEC for n in model.inputs_of(q)} - set(model.SPEC))
    out = {}
    for name in leaves:
        lo, hi = {"accelerators": (1, 5e5), "mfu": (0.01, 1), "goodput": (0.01, 1)}.get(
            name, (0.5, 2e3)
        )
        values = np.exp(rng.uniform(math.log(lo), math.log(hi), N_PLANS))
        out[name] = np.round(values) if name == "accelerators" else values
    # uncertainties and the calibrated default's coefficients in their own ranges
    for name, (lo, hi) in {"throughput_range_pct": (0, 1.5), "price_range_pct": (0, 1.5),
                           "calibrated_throughput_sigma": (0, 1), "mfu_ln_intercept": (-3, 0),
                           "calibrated_small_model_sigma": (0, 1),
                           "accelerator_extra_sigma": (0, 0.5), "own_runs_pull": (0, 1),
                           "own_runs_base_narrowing": (0, 1),
                           "own_runs_small_narrowing": (0, 1),
                           "mfu_ln_slope": (-0.3, 0.3), "mfu_min": (0.05, 0.15),
                           "mfu_max": (0.4, 0.7)}.items():  # fmt: skip
        out[name] = rng.uniform(lo, hi, N_PLANS)
    # the percentile levels and the small-model sizes: their own figures
    for name in ("p10_level", "p90_level", "small_model_active_params", "small_model_full_params"):
        out[name] = np.full(N_PLANS, model.CONSTANTS[name])
    # a few realistic magnitudes so that the large numbers go through Excel too
    out["total_params"] = out["total_params"] * 1e9
    out["active_params"] = out["total_params"] * rng.uniform(0.01, 1, N_PLANS)
    out["training_tokens"] = out["training_tokens"] * 1e10
    out["peak_tflops"] = out["peak_tflops"] * 2  # implied MFU stays a plain ratio
    return out


def _spec_workbook(leaves, path):
    """Leaves typed as rows; every spec'd quantity a row of its Excel rendering."""
    book = Book()
    ws = book.sheet("Spec")
    cols = tuple(range(2, 2 + N_PLANS))
    r = 1
    for name, values in leaves.items():
        book.place_row(name, ws, r, cols[0], cols[-1], named=True)
        for c, v in zip(cols, values, strict=True):
            ws.cell(r, c, float(v))
        r += 1
    rows = [Row(n, n, "", "=" + model.excel(n), named=True) for n in model.SPEC]
    book.write_rows(ws, r, rows, cols)
    book.wb.save(path)


@pytest.mark.libreoffice
def test_excel_rendering_equals_numpy_through_libreoffice(tmp_path):
    from helpers import require_soffice

    from workbook_templates.recalc import recalculate

    require_soffice()
    leaves = _random_leaves(np.random.default_rng(20261130))
    _spec_workbook(leaves, tmp_path / "spec.xlsx")
    (done,) = recalculate([tmp_path / "spec.xlsx"], tmp_path / "out")
    wb = openpyxl.load_workbook(done, data_only=True)
    expected = model.evaluate(leaves)
    assert set(expected) == set(model.SPEC)
    for name, want in expected.items():
        ((sheet, ref),) = wb.defined_names[name].destinations
        got = [c.value for row in wb[sheet][ref] for c in row]
        assert all(isinstance(v, (int, float)) for v in got), (name, got)
        np.testing.assert_allclose(got, want, rtol=REL, atol=0, err_msg=name)


# ---------------------------------------------------------------------------------------------
# Written once: the templates render the spec, they do not retype it
# ---------------------------------------------------------------------------------------------

TEMPLATE_SOURCES = ("planner", "sizing.py", "comparison.py", "sheetkit.py")


def _template_sources():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "workbook_templates"
    for name in TEMPLATE_SOURCES:
        path = root / name
        yield from sorted(path.glob("*.py")) if path.is_dir() else [path]


@pytest.mark.parametrize("name", sorted(model.SPEC))
def test_no_template_types_a_spec_d_formula(name):
    """Neither the Excel text of a spec'd quantity nor its constants appear in template code."""
    text = model.excel(name)
    for path in _template_sources():
        source = path.read_text()
        assert text not in source, f"{path.name} types {name}'s formula: use udfs.model.excel"
        for token in ("1E+12", "1E+9", "1E+6", "/3600", "/24", "/1000"):
            assert token not in source, f"{path.name} holds {token!r}: a spec'd formula retyped"


def test_the_planner_renders_the_spec_and_the_rules():
    """Calculations rows and Inputs column C come from model.excel and plan.RULES."""
    import datetime as dt

    from udfs.plan import RULES
    from workbook_templates import planner
    from workbook_templates.planner.calculations import BIND

    wb = planner.build(dt.datetime(2026, 1, 1))
    names = wb.defined_names
    calc = wb["Calculations"]
    for name in ("wall_clock_days", "accelerator_hours", "total_cost_usd", "co2_tonnes"):
        ((_, ref),) = names[name].destinations
        formula = calc[ref.split(":")[0].replace("$", "")].value
        expected = f'=IF({{scenario_ready}},{model.excel(name, bind=BIND)},"")'
        if name == "total_cost_usd":  # other costs added as they are, as the engine does
            expected = expected.replace(',"")', '+{other_costs_usd_used},"")')
        assert _shape(formula) == re.sub(r"\{[\w.]+\}", "X", expected), name
    inputs = wb["Inputs"]
    for name, rule in RULES.items():
        ((_, ref),) = names[name].destinations
        row = int(re.sub(r"[^0-9:]", "", ref).split(":")[0])
        shown = inputs.cell(row, 3).value
        assert shown == (rule.default if rule.default is not None else rule.blank_text), name


def _shape(formula):
    """A formula with every cell reference replaced by X, for comparison with the spec."""
    return re.sub(r"(?:'?[A-Za-z ]+'?!)?\$?[A-Z]{1,3}\$?\d+", "X", formula)
