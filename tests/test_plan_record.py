"""A plan is one record: ``udfs.engine.Plan``, built by ``udfs.plan.resolve`` and read by
``engine.estimate``; the command line's flags come from the quantities spec."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from compute_lab.cli import build_parser
from compute_lab.flags import FLAG_RULES, PLAN_NAME
from udfs import engine, plan
from udfs.quantities import (
    ENGINE_INPUTS,
    ESTIMATE_FLAGS,
    MODEL_CONSTANTS,
    MODEL_INPUTS,
    PLAN_INPUTS,
)

SPEC = {q.name: q for q in (*PLAN_INPUTS, *MODEL_INPUTS, *MODEL_CONSTANTS, *ENGINE_INPUTS)}
FIELDS = [f.name for f in dataclasses.fields(engine.Plan)]
SEED = {
    "total_params": 671e9,
    "training_tokens": 14.8e12,
    "accelerators": 2048,
    "active_params": 37e9,
    "effective_tflops": 400,
    "usd_per_accelerator_hour": 2.0,
}


def test_the_keyword_form_has_the_plans_fields_as_parameters():
    params = inspect.signature(engine.estimate).parameters
    assert list(params) == FIELDS
    for f in dataclasses.fields(engine.Plan):
        assert params[f.name].default is (
            inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        )


def test_the_engines_own_inputs_take_the_specs_defaults():
    for q in ENGINE_INPUTS:
        if q.name in FIELDS:
            assert getattr(engine.Plan(1, 1, 1), q.name) == q.default, q.name
    assert (
        engine.Plan(1, 1, 1).training_state_bytes_per_param
        == SPEC["training_state_bytes_per_param"].default
    )


def test_a_plan_is_frozen():
    p = engine.Plan(**SEED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.accelerators = 1


def test_estimate_of_a_plan_is_the_keyword_forms():
    by_plan = engine.estimate(engine.Plan(**SEED))
    by_keywords = engine.estimate(**SEED)
    np.testing.assert_equal(by_plan, by_keywords)  # NaN where an input is missing, in both
    with pytest.raises(TypeError):
        engine.estimate(engine.Plan(**SEED), accelerators=1)


def test_a_plan_holds_arrays_of_plans():
    accelerators = np.array([1024.0, 2048.0, 4096.0])
    out = engine.estimate(engine.Plan(**{**SEED, "accelerators": accelerators}))
    for i, n in enumerate(accelerators):
        one = engine.estimate(**{**SEED, "accelerators": n})
        assert out["wall_clock_days"][i] == pytest.approx(one["wall_clock_days"], rel=1e-15)


def test_resolve_builds_the_plan_estimate_takes():
    inputs = {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024,
              "accelerator_name": "H100 SXM"}  # fmt: skip
    r = plan.resolve(inputs)
    assert isinstance(r.plan, engine.Plan)
    assert {k: getattr(r.plan, k) for k in r.arguments} == r.arguments
    np.testing.assert_equal(engine.estimate(r.plan), engine.estimate(**r.arguments))
    np.testing.assert_equal(plan.estimate_scenario(inputs), engine.estimate(r.plan))


def test_resolve_takes_the_engines_own_inputs():
    inputs = {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024,
              "accelerator_name": "H100 SXM"}  # fmt: skip
    r = plan.resolve(inputs, engine_inputs={"failures_per_accelerator_day": 1e-3,
                                            "purchase_usd_per_accelerator": 30_000})  # fmt: skip
    assert r.plan.goodput is None and r.plan.usd_per_accelerator_hour is None
    assert r.plan.failures_per_accelerator_day == 1e-3
    assert {"goodput", "usd_per_accelerator_hour"}.isdisjoint(n.name for n in r.notes)


def test_every_flag_sets_a_quantity_of_the_spec():
    converted = {"failures_per_1000_node_days", "accelerators_per_node"}  # to a per-day rate
    planner = {q.name for q in PLAN_INPUTS}  # resolved first (the spreads go to the ranges)
    assert len({f.flag for f in ESTIMATE_FLAGS}) == len(ESTIMATE_FLAGS)
    for f in ESTIMATE_FLAGS:
        assert f.quantity in SPEC, f
        assert f.name in FIELDS or f.name in converted or f.quantity in planner, f
        assert f.name in FLAG_RULES
    assert set(PLAN_NAME.values()) == {f.quantity for f in ESTIMATE_FLAGS} & planner


def test_the_parser_lists_the_specs_flags_in_their_groups_order():
    """Every flag of the spec once, in the order of the help's groups (FLAG_GROUPS)."""
    from compute_lab.flags import FLAG_GROUPS

    parser, _ = build_parser("estimate")
    spec = {g.flag for g in ESTIMATE_FLAGS}
    actions = [a for a in parser.commands["estimate"]._actions if a.option_strings[0] in spec]
    flags = [a.option_strings[0] for a in actions]
    rank = {dest: i for i, dest in enumerate(d for group in FLAG_GROUPS.values() for d in group)}
    assert all(a.dest in rank for a in actions), [a.dest for a in actions if a.dest not in rank]
    assert flags == [a.option_strings[0] for a in sorted(actions, key=lambda a: rank[a.dest])]
    assert sorted(flags) == sorted(spec)
    helps = {a.option_strings[0]: a.help for a in parser.commands["estimate"]._actions}
    for f in ESTIMATE_FLAGS:
        assert helps[f.flag].startswith(f.help.replace("%", "%%")), f.flag
