"""One plan resolution (udfs.plan.resolve): engine arguments and the defaults applied."""

from __future__ import annotations

import math

import pytest

from udfs import calibration, engine, ranges
from udfs.plan import (
    PASS_THROUGH,
    RULES,
    THROUGHPUT_SOURCES,
    Note,
    engine_arguments,
    estimate_scenario,
    resolve,
)
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
    assert notes["mfu"].value == calibration.predicted_mfu("H100 SXM", 70e9)
    assert "H100 generation at 70B active" in notes["mfu"].why
    assert notes["active_params"].value == 70e9
    ranged = {"budget_status", "throughput_range_pct", "price_range_pct"}
    assert set(notes) == {"active_params", "peak_tflops", "mfu", "goodput", *PASS_THROUGH,
                          *ranged}  # fmt: skip
    assert [n.name for n in r.notes] == [q.name for q in PLAN_INPUTS if q.name in notes]
    for n in r.notes:
        assert n.why.startswith("blank: ")
        if n.name not in ranged:
            assert r.arguments[n.name] == n.value
    assert not ranged & set(r.arguments)  # the engine's arguments only
    assert notes["budget_status"] == Note("budget_status", "Proposed", "blank: counts as Proposed")
    assert r.budget_status == "Proposed"


def test_typed_inputs_give_no_notes_and_are_used_as_is():
    typed = {q.name: q.default for q in PLAN_INPUTS if isinstance(q.default, float)}
    typed.update(BASE, active_params=7e9, peak_tflops=500.0, mfu=0.5, usd_per_kwh=0.2,
                 budget_status="approved", throughput_range_pct=0.2)  # fmt: skip
    r = resolve(typed)
    assert r.notes == []
    assert r.budget_status == "Approved" and r.throughput_source == "typed MFU"
    assert r.throughput_sigma == pytest.approx(math.log(1.2) / ranges.z_score(0.9), rel=1e-15)
    assert r.price_sigma == 0.0
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
    assert math.isclose(
        out["total_cost_usd"], out["compute_cost_usd"] + out["electricity_cost_usd"]
    )


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


def test_the_blank_mfu_is_the_calibrated_default_by_generation_and_size():
    """The default MFU follows the accelerator's generation and the active parameters."""
    for accel, active in (("H100 SXM", 405e9), ("A100 SXM 80GB", 7e9), ("TPU v4", 540e9),
                          ("B200 (HGX)", 37e9), ("H800 SXM", 37e9)):  # fmt: skip
        plan = {**BASE, "total_params": 700e9, "active_params": active, "accelerator_name": accel}
        r = resolve(plan)
        assert r.arguments["mfu"] == calibration.predicted_mfu(accel, active)
        assert r.throughput_source == "calibrated default"
    why = notes_by_name({**BASE, "accelerator_name": "B200 (HGX)"})["mfu"].why
    assert "'other' generation (the B200 (HGX) is uncalibrated)" in why
    why = notes_by_name({**BASE, "peak_tflops": 500.0})["mfu"].why
    assert "no accelerator named" in why
    tiny = resolve({**BASE, "accelerator_name": "H100 SXM", "active_params": 1e6})
    mfu = tiny.arguments["mfu"]
    assert calibration.MFU_MIN <= mfu <= calibration.MFU_MAX  # clamped into the sane range
    assert mfu == calibration.predicted_mfu("H100 SXM", 1e6)


def test_range_rules_follow_the_throughput_source():
    """Blank throughput uncertainty: the calibrated spread, with a typed MFU or throughput too
    (a typed number is an estimate, never a zero-width range); a typed range replaces it."""
    h100 = {**BASE, "accelerator_name": "H100 SXM"}
    r = resolve(h100)
    assert r.throughput_source == THROUGHPUT_SOURCES[2]
    assert r.throughput_sigma == pytest.approx(calibration.throughput_sigma(), rel=1e-12)
    assert notes_by_name(h100)["throughput_range_pct"].value == calibration.default_range_pct()
    for extra, source in (({"mfu": 0.4}, "typed MFU"),
                          ({"effective_tflops_input": 400.0}, "typed throughput")):  # fmt: skip
        r = resolve({**h100, **extra})
        assert r.throughput_source == source
        assert r.throughput_sigma == pytest.approx(calibration.throughput_sigma(), rel=1e-12)
        assert r.throughput_sigma > 0  # contingency is never silently $0
        note = notes_by_name({**h100, **extra})["throughput_range_pct"]
        assert note.why == f"blank: the calibrated spread, kept with a {source} (an estimate too)"
        point = engine.estimate(**r.arguments)
        got = ranges.estimate_ranges(point, r.throughput_sigma, r.price_sigma)
        assert got["total_cost_usd"]["p90"] > point["total_cost_usd"]
    r = resolve({**h100, "mfu": 0.4, "throughput_range_pct": 0.15, "price_range_pct": 0.1})
    assert r.throughput_sigma == pytest.approx(math.log(1.15) / 1.2815515655446004, rel=1e-12)
    assert r.price_sigma == pytest.approx(math.log(1.10) / 1.2815515655446004, rel=1e-12)
    # P90 / P50 - 1 of accelerator-hours is the typed uncertainty
    point = engine.estimate(**r.arguments)
    got = ranges.estimate_ranges(point, r.throughput_sigma, r.price_sigma)
    assert got["accelerator_hours"]["p90"] / point["accelerator_hours"] == pytest.approx(1.15)
    assert point["accelerator_hours"] / got["accelerator_hours"]["p10"] == pytest.approx(1.15)


@pytest.mark.parametrize(
    ("name", "value"),
    [("throughput_range_pct", -0.1), ("throughput_range_pct", "wide"),
     ("price_range_pct", float("inf")), ("price_range_pct", True), ("budget_status", "Maybe"),
     ("budget_status", 3)],
)  # fmt: skip
def test_bad_budget_and_range_inputs_name_the_input(name, value):
    with pytest.raises(InputError) as err:
        resolve({**BASE, "accelerator_name": "H100 SXM", name: value})
    assert err.value.argument == name
