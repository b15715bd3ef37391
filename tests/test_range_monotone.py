"""A budget never gets smaller when the model gets bigger (issue 17 item 4, audit).

The small-model widening of the calibrated spread (udfs.calibration ``small_model_sigma``)
ramps in continuously over ln(active parameters) (the spec's ``small_model``): with every
other input fixed, P90 accelerator-hours and P90 costs never decrease as active parameters
grow, across 0.1B-1T, on a calibrated generation (H100) and on an accelerator outside them
(MI300X). Before the ramp, P90 hours fell from 147,903 to 106,685 between 4.9B and 5B.
"""

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from udfs import calibration, engine, model
from udfs.plan import resolve
from udfs.ranges import estimate_ranges

ACCELERATORS = ("H100 SXM", "MI300X")  # a calibrated generation, and one outside them
P90_QUANTITIES = ("accelerator_hours", "compute_cost_usd", "total_cost_usd")
LN_LOW, LN_HIGH = math.log(1e8), math.log(1e12)


def p90(accelerator, active):
    """P90 hours and costs of a dense plan of ``active`` parameters, all else fixed."""
    plan = {"total_params": active, "active_params": active, "training_tokens": 2e12,
            "accelerators": 64.0, "accelerator_name": accelerator}  # fmt: skip
    r = resolve(plan)
    ranges = estimate_ranges(engine.estimate(r.plan), r.throughput_sigma, r.price_sigma)
    return {q: float(ranges[q]["p90"]) for q in P90_QUANTITIES}


@settings(max_examples=60, deadline=None)
@given(
    accelerator=st.sampled_from(ACCELERATORS),
    ln_a=st.floats(LN_LOW, LN_HIGH),
    step=st.floats(1e-6, 2.0),
)
@example(accelerator="H100 SXM", ln_a=math.log(4.9e9), step=0.03)  # 4.9B -> 5.05B
@example(accelerator="MI300X", ln_a=math.log(4.9e9), step=0.03)  # 4.9B -> 5.05B
def test_p90_hours_and_cost_never_fall_as_the_model_grows(accelerator, ln_a, step):
    small, large = math.exp(ln_a), math.exp(min(LN_HIGH, ln_a + step))
    lo, hi = p90(accelerator, small), p90(accelerator, large)
    for q in P90_QUANTITIES:
        assert hi[q] >= lo[q] * (1 - 1e-12), (q, accelerator, small, large, lo[q], hi[q])


@pytest.mark.parametrize("accelerator", ACCELERATORS)
def test_the_p90_is_continuous_at_the_small_model_threshold(accelerator):
    knee = model.CONSTANTS["small_model_active_params"]
    below, at = p90(accelerator, knee * (1 - 1e-9)), p90(accelerator, knee)
    assert below["accelerator_hours"] == pytest.approx(at["accelerator_hours"], rel=1e-6)


def test_the_stored_spread_cannot_outrun_the_size_of_the_work():
    """Why the law holds: below 5B, ln P50 hours grows with ln(active) at 1 - slope at least
    (the MFU's size effect, or 0 where it is clamped), and ln(P90 / P50) = NORM.S.INV(0.9) x
    sigma falls at most NORM.S.INV(0.9) x small^2 / (2 x sigma_0 x LN(5B / 1B)) (at 5B, where
    sigma is smallest). A refit that breaks this bound breaks the law: widen the ramp."""
    f = calibration.fitted()
    c = model.CONSTANTS
    ramp = math.log(c["small_model_active_params"] / c["small_model_full_params"])
    fall = calibration._Z90 * f["small_model_sigma"] ** 2 / (2 * f["throughput_sigma"] * ramp)
    assert fall < 1 - max(0.0, f["slope"])


def test_the_share_ramps_over_ln_active():
    c = model.CONSTANTS
    full, knee = c["small_model_full_params"], c["small_model_active_params"]
    share = calibration.small_model_share([1e8, full, math.sqrt(full * knee), knee, 1e12])
    assert share.tolist() == pytest.approx([1.0, 1.0, 0.5, 0.0, 0.0], abs=1e-12)
