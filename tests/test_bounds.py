"""Each number input's range is written once, as a Bound on its quantity: the engine, the
command line (checks and help), the planner's data validation and the rule text all follow it."""

from __future__ import annotations

import pytest

from compute_lab.cli import main
from compute_lab.flags import FLAG_RULES, configure_estimate
from udfs import engine
from udfs.numbers import SIZE_INPUTS
from udfs.quantities import (
    ENGINE_INPUTS,
    ESTIMATE_FLAGS,
    MIN_PLAUSIBLE,
    MODEL_CONSTANTS,
    MODEL_INPUTS,
    PLAN_INPUTS,
    Bound,
)
from udfs.validation import InputError, bound_refusal, check_bound
from workbook_templates.sheetkit import bound_validation

_QUANTITIES = {q.name: q for q in (*PLAN_INPUTS, *MODEL_INPUTS, *MODEL_CONSTANTS, *ENGINE_INPUTS)}
_PLAN = {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024.0}
_ARGV = ["--total-params", "70B", "--tokens", "2T", "--accelerators", "1024"]


def _outside(bound):
    """A value just outside ``bound``'s range (below its low end, or above its high end)."""
    if bound.low is not None:
        return bound.low / 2 if bound.low > 0 else bound.low - 0.5
    return bound.high + 1


def _flags_with_a_bound():
    return [f for f in ESTIMATE_FLAGS if f.quantity not in MIN_PLAUSIBLE]


@pytest.mark.parametrize(
    ("bound", "text", "refusal"),
    [
        (Bound(low=0, low_inclusive=False), "> 0", "must be greater than 0"),
        (Bound(low=0), ">= 0", "must be 0 or more"),
        (Bound(low=1), ">= 1", "must be at least 1"),
        (Bound(low=0, low_inclusive=False, high=1), "> 0 and <= 1",
         "must be greater than 0 and at most 1"),
        (Bound(low=0.01, high=1, low_text="{0:g} ({0:.0%})"), "0.01 (1%) to 1",
         "must be at least 0.01 (1%) and at most 1"),
        (Bound(low=2, high=5, unit="years"), "2 to 5 years", "must be from 2 to 5 years"),
        (Bound(low=1, whole=True), "a whole number >= 1", "must be at least 1"),
    ],
)  # fmt: skip
def test_a_bound_gives_its_rule_text_and_its_refusal(bound, text, refusal):
    assert bound.text == text
    assert bound_refusal(bound) == refusal


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "must be greater than 0"),  # a positive quantity first
        (0.5, "must be from 1 to 100 days"),
        (101, "must be from 1 to 100 days"),
        (2.5, None),
    ],
)
def test_a_range_above_zero_names_the_nearest_rule_broken(value, message):
    bound = Bound(low=1, high=100, unit="days")
    if message is None:
        assert check_bound("x", value, bound) == value
        return
    with pytest.raises(InputError) as err:
        check_bound("x", value, bound)
    assert err.value.rule == message


def test_a_whole_bound_refuses_a_fraction_and_the_ceiling_only_on_request():
    bound = Bound(low=1, whole=True, ceiling=10)
    with pytest.raises(InputError, match="must be a whole number"):
        check_bound("n", [1.0, 2.5], bound)
    assert check_bound("n", 20.0, bound) == 20.0  # the engine keeps no ceiling
    with pytest.raises(InputError, match="must be at most 1e1"):
        check_bound("n", 20.0, bound, ceiling=True)


def test_every_input_the_engine_and_the_flags_read_has_a_bound():
    for f in ESTIMATE_FLAGS:
        assert _QUANTITIES[f.quantity].bound is not None, f.flag
    for q in (*ENGINE_INPUTS, *PLAN_INPUTS):
        assert (q.bound is None) == (q.kind != "number"), q.name
        if q.bound is not None:
            assert q.rule == q.bound.text, q.name


@pytest.mark.parametrize("flag", _flags_with_a_bound(), ids=lambda f: f.flag)
def test_the_engine_and_the_command_line_refuse_a_value_outside_the_bound_alike(flag, capsys):
    """The same value outside a quantity's bound: the engine's estimate and the flag refuse it
    with the same rule (amortisation years and utilisation too: the engine keeps the range the
    command line always had)."""
    bound = _QUANTITIES[flag.quantity].bound
    value = _outside(bound)
    with pytest.raises(InputError) as err:
        check_bound(flag.name, value, bound)
    if flag.name in engine.Plan.__dataclass_fields__:  # an input of the engine's estimate
        with pytest.raises(InputError) as engine_err:
            engine.estimate(**(_PLAN | {flag.name: value}))
        assert (engine_err.value.argument, engine_err.value.rule) == (flag.name, err.value.rule)
    argv = _ARGV[:4] if flag.flag == "--accelerators" else _ARGV
    assert main(["estimate", *argv, flag.flag, repr(value)]) == 2
    line = capsys.readouterr().err.strip()
    assert f"{flag.flag} {err.value.rule} (got " in line, (line, err.value.rule)


def test_the_engine_keeps_the_owned_hardware_ranges():
    owned = {"purchase_usd_per_accelerator": 30_000.0}
    with pytest.raises(InputError, match="must be from 1/365 \\(one day\\) to 100 years"):
        engine.estimate(**_PLAN, effective_tflops=400, **owned, amortisation_years=0.001)
    with pytest.raises(InputError, match="must be at least 0.01 \\(1%\\) and at most 1"):
        engine.estimate(**_PLAN, effective_tflops=400, **owned, utilisation=0.005)


def test_each_flag_checks_its_ceiling_and_its_help_shows_the_range():
    import argparse

    parser = argparse.ArgumentParser()
    configure_estimate(parser)
    helps = {a.option_strings[0]: a.help for a in parser._actions if a.option_strings}
    for f in _flags_with_a_bound():
        bound = _QUANTITIES[f.quantity].bound
        assert bound.interval.replace("%", "%%") in helps[f.flag], f.flag
        if bound.ceiling is not None:
            with pytest.raises(InputError) as err:
                FLAG_RULES[f.name](f.name, bound.ceiling * 2)
            assert err.value.rule == f"must be at most {bound.ceiling_words}", f.flag


def test_the_planners_validation_is_its_inputs_bound():
    """accelerators: the rule beside the input is the one its validation keeps (a whole
    number), and each number row's validation is its bound's."""
    from workbook_templates import planner

    wb = planner.build()
    ws = wb["Inputs"]
    by_sqref = {str(dv.sqref).split(":")[0]: dv for dv in ws.data_validations.dataValidation}
    rows = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1)}
    checked = 0
    for q in PLAN_INPUTS:
        if q.bound is None or q.label not in rows or q.name in SIZE_INPUTS:
            continue
        r = rows[q.label]
        dv = next(dv for ref, dv in by_sqref.items() if ref.endswith(str(r)) and ref[1:] == str(r))
        first = str(dv.sqref).split(":")[0]
        kind, f1, _, op = bound_validation(q.bound, first)
        assert (dv.type, dv.formula1, dv.operator) == (kind, f1, op), q.name
        assert q.rule in dv.prompt, q.name
        checked += 1
    assert checked >= 15
    assert "a whole number > 0" in [c.value for c in ws[rows["Accelerators"]]]
