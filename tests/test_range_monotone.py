"""A budget never gets smaller when the model gets bigger (issue 17 item 4, audit).

The small-model widening of the calibrated spread (udfs.calibration ``small_model_sigma``)
ramps in continuously over ln(active parameters) (the spec's ``small_model``): with every
other input fixed, P90 accelerator-hours and P90 costs never decrease as active parameters
grow, across 0.1B-1T, on a calibrated generation (H100) and on an accelerator outside them
(MI300X). Before the ramp, P90 hours fell from 147,903 to 106,685 between 4.9B and 5B.
"""

import functools
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


def p90(accelerator, active, own=None):
    """P90 hours and costs of a dense plan of ``active`` parameters, all else fixed (and the
    spread, ``sigma``); ``own``: a team's own runs (udfs.own_runs.OwnRuns)."""
    plan = {"total_params": active, "active_params": active, "training_tokens": 2e12,
            "accelerators": 64.0, "accelerator_name": accelerator}  # fmt: skip
    r = resolve(plan, own_runs=own)
    ranges = estimate_ranges(engine.estimate(r.plan), r.throughput_sigma, r.price_sigma)
    return {"sigma": r.throughput_sigma, **{q: float(ranges[q]["p90"]) for q in P90_QUANTITIES}}


@functools.cache
def team_runs(accelerator, n, mfu, size=7e9):
    """``n`` runs of one team on ``accelerator``, each of ``size`` active parameters and 2T
    tokens at implied MFU ``mfu``."""
    from udfs import catalogue, own_runs
    from udfs.numbers import parse_number

    peak = float(catalogue.accelerator(accelerator)["bf16_tflops"])
    hours = engine.accelerator_hours(engine.training_flops(size, 2e12), peak * mfu)
    rows = "".join(f"r{i},Acme,{size!r},{size!r},2T,{accelerator},512,{hours!r}\n"
                   for i in range(n))  # fmt: skip
    head = "name,organisation,active_params,total_params,tokens,accelerator,accelerators,"
    return own_runs.parse(head + "accelerator_hours\n" + rows, "runs.csv", parse_number)


@settings(max_examples=60, deadline=None)
@given(
    accelerator=st.sampled_from(ACCELERATORS),
    n=st.integers(1, 200),
    mfu=st.floats(0.12, 0.5),
    size=st.sampled_from([5e9, 7e9, 13e9, 70e9]),
    ln_a=st.floats(math.log(4e9), math.log(5e9)),
    step=st.floats(1e-6, 0.3),
)
# twenty H100 runs narrowed the spread at 5B below what the ramp allows: P90 hours fell by
# 0.06% from 4.88B to 5B (0.07% with a thousand runs, from 4.86B; 0.03% with five)
@example(accelerator="H100 SXM", n=20, mfu=0.2, size=7e9, ln_a=math.log(4.88e9), step=0.025)
@example(accelerator="H100 SXM", n=5, mfu=0.2, size=7e9, ln_a=math.log(4.91e9), step=0.02)
@example(accelerator="MI300X", n=200, mfu=0.3, size=7e9, ln_a=math.log(4.88e9), step=0.025)
def test_with_own_runs_p90_never_falls_as_the_model_grows_past_the_knee(
    accelerator, n, mfu, size, ln_a, step
):
    """The law above with a team's own runs of 5B and more, which narrow the spread at 5B
    (udfs.own_runs): P90 hours and costs never fall as a model grows from below 5B past it,
    however many runs (the spec's own_runs_plan_sigma keeps the spread at 5B at least
    own_runs_narrowest_sigma), and the runs never widen the spread."""
    own = team_runs(accelerator, n, mfu, size)
    small, large = math.exp(ln_a), math.exp(ln_a + step)
    lo, hi = p90(accelerator, small, own), p90(accelerator, large, own)
    for q in P90_QUANTITIES:
        assert hi[q] >= lo[q] * (1 - 1e-12), (q, accelerator, n, small, large, lo[q], hi[q])
    assert lo["sigma"] <= p90(accelerator, small)["sigma"]  # the runs narrow, never widen


def test_the_narrowest_spread_own_runs_leave_is_the_ramps_bound():
    """Many runs narrow a 5B plan's spread to own_runs_narrowest_sigma and no further:
    NORM.S.INV(0.9) x small-model sigma^2 / (2 x LN(5B / 1B) x (1 - slope)), 0.266 today
    (before: 0.248 with a thousand runs, under the 0.266 the ramp needs)."""
    f = calibration.fitted()
    c = model.CONSTANTS
    ramp = math.log(c["small_model_active_params"] / c["small_model_full_params"])
    want = calibration._Z90 * f["small_model_sigma"] ** 2 / (2 * ramp * (1 - max(0, f["slope"])))
    assert want == pytest.approx(0.2658, abs=1e-4)
    for accelerator in ACCELERATORS:
        own = team_runs(accelerator, 1000, 0.2)
        assert p90(accelerator, 5e9, own)["sigma"] == pytest.approx(want, rel=1e-12)
        assert p90(accelerator, 7e9, own)["sigma"] == pytest.approx(want, rel=1e-12)
        far = team_runs(accelerator, 1, 0.2, 70e9)  # one run far in size: a small pull
        assert want < p90(accelerator, 5e9, far)["sigma"] < p90(accelerator, 5e9)["sigma"]


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
