"""One plan resolution (udfs.plan.resolve): engine arguments and the defaults applied."""

from __future__ import annotations

import math

import pytest

from udfs import calibration, engine
from udfs.plan import PASS_THROUGH, RULES, Note, engine_arguments, estimate_scenario, resolve
from udfs.quantities import PLAN_INPUTS
from udfs.validation import InputError

BASE = {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024}


def notes_by_name(plan):
    return {n.name: n for n in resolve(plan).notes}


def test_a_blank_plan_gets_every_default_with_a_reason():
    r = resolve({**BASE, "accelerator_name": "H100 SXM"})
    notes = {n.name: n for n in r.notes}
    assert notes["watts_per_accelerator"] == Note(
        "watts_per_accelerator", 700.0, "blank: the H100 SXM's TDP from the catalogue"
    )
    assert notes["usd_per_kwh"].value == 0.08 == r.arguments["usd_per_kwh"]
    assert "US$0.08/kWh" in notes["usd_per_kwh"].why
    assert notes["peak_tflops"].value == 989.4 == r.arguments["peak_tflops"]
    assert notes["mfu"].value == calibration.default_mfu()
    assert notes["active_params"].value == 70e9
    assert set(notes) == {"active_params", "peak_tflops", "mfu", "goodput", *PASS_THROUGH}
    for n in r.notes:
        assert r.arguments[n.name] == n.value and n.why.startswith("blank: ")


def test_typed_inputs_give_no_notes_and_are_used_as_is():
    typed = {q.name: q.default for q in PLAN_INPUTS if isinstance(q.default, float)}
    typed.update(BASE, active_params=7e9, peak_tflops=500.0, mfu=0.5, usd_per_kwh=0.2)
    r = resolve(typed)
    assert r.notes == []
    assert r.arguments["usd_per_kwh"] == 0.2 and r.arguments["active_params"] == 7e9


def test_the_override_needs_no_throughput_defaults():
    notes = notes_by_name({**BASE, "effective_tflops_input": 400.0, "accelerator_name": ""})
    assert not {"peak_tflops", "mfu", "goodput"} & set(notes)
    assert notes["watts_per_accelerator"].why == "blank: 700 W, the H100 SXM's TDP"


def test_unpublished_tdp_is_named():
    notes = notes_by_name({**BASE, "accelerator_name": "TPU v5p"})
    assert "not published" in notes["watts_per_accelerator"].why


def test_required_and_catalogue_errors_name_the_input():
    with pytest.raises(InputError) as err:
        resolve({"total_params": 1e9, "accelerators": 8})
    assert err.value.argument == "training_tokens"
    with pytest.raises(InputError) as err:
        resolve({**BASE})  # no accelerator, no peak, no override
    assert err.value.argument == "peak_tflops"


def test_electricity_is_priced_and_total_cost_includes_it():
    """The issue's plan: 70B, 2T tokens, 1,024 x H100: electricity priced at $0.08/kWh."""
    out = estimate_scenario({**BASE, "accelerator_name": "H100 SXM"})
    assert out["electricity_cost_usd"] == pytest.approx(out["electricity_kwh"] * 0.08)
    assert math.isclose(out["total_cost_usd"], out["rental_cost_usd"] + out["electricity_cost_usd"])


def test_engine_arguments_is_resolve_arguments():
    plan = {**BASE, "accelerator_name": "H800 SXM", "mfu": 0.4}
    assert engine_arguments(plan) == resolve(plan).arguments
    assert engine.estimate(**engine_arguments(plan))["total_cost_usd"] > 0


def test_every_input_but_the_required_and_the_name_has_a_rule():
    rule_free = {q.name for q in PLAN_INPUTS if q.required} | {"scenario_name"}
    assert set(RULES) == {q.name for q in PLAN_INPUTS} - rule_free
    for name, rule in RULES.items():
        assert (rule.default is None) != (rule.blank_text == "") or name == "watts_per_accelerator"


def test_fp8_takes_the_fp8_peak():
    notes = notes_by_name({**BASE, "accelerator_name": "H100 SXM"})
    fp8 = {n.name: n for n in resolve({**BASE, "accelerator_name": "H100 SXM"}, "fp8").notes}
    assert fp8["peak_tflops"].value == 1978.9 != notes["peak_tflops"].value
    assert "FP8" in fp8["peak_tflops"].why
