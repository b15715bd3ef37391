"""Ranges (P10 / P50 / P90) for 1,000,000 scenarios against the bare point estimate.

The floor is the bare point estimate: :func:`udfs.engine.estimate` of the scenarios with the
calibrated default MFU already looked up (:func:`udfs.calibration.predicted_mfu`, done once,
outside every timing: it is the same work on both sides). The ranges add
:func:`udfs.ranges.estimate_ranges` on top (six quantities, three quantiles, a per-scenario
price range). Prints both times and the ratio (aim: the estimate with its ranges within 3x of
the bare point estimate), the MFU lookup's own time for reference, and writes
``benchmarks/results/bench_ranges.json``. Run: .venv/bin/python benchmarks/bench_ranges.py
"""

import time

import numpy as np
from _results import QUICK, record
from bench_engine import best_of

from udfs import calibration, engine, ranges

N = 10_000 if QUICK else 1_000_000  # --quick: a tiny run (tests/test_benchmarks.py)
ACCELERATORS = np.array(["H100 SXM", "A100 SXM 80GB", "H800 SXM", "TPU v4", "B200 (HGX)"])
PEAKS = np.array([989.4, 312.0, 989.0, 275.0, 2250.0])


def sweep(n, seed=0):
    rng = np.random.default_rng(seed)
    total = rng.uniform(1e9, 2e12, n)
    k = rng.integers(0, len(ACCELERATORS), n)
    usd = rng.uniform(0.5, 5.0, n)
    return {
        "total": total,
        "active": total * rng.uniform(0.03, 1.0, n),
        "tokens": rng.uniform(1e11, 3e13, n),
        "accelerators": rng.integers(8, 200_000, n),
        "accelerator": ACCELERATORS[k],
        "peak": PEAKS[k],
        "usd": usd,
        "usd_low": usd * 0.8,
        "usd_high": usd * 1.5,
    }


def point(s):
    """The bare point estimate (the MFU is looked up beforehand, in ``s["mfu"]``)."""
    return engine.estimate(
        s["total"],
        s["tokens"],
        s["accelerators"],
        active_params=s["active"],
        peak_tflops=s["peak"],
        mfu=s["mfu"],
        usd_per_accelerator_hour=s["usd"],
        usd_per_kwh=0.1,
    )


def with_ranges(s):
    p = point(s)
    price_sigma = ranges.sigma_from_p10_p90(s["usd_low"], s["usd_high"])
    return p, ranges.estimate_ranges(p, calibration.throughput_sigma(), price_sigma)


def main():
    s = sweep(N)
    calibration.throughput_sigma()  # reads the stored fitted numbers once
    t0 = time.perf_counter()
    s["mfu"] = calibration.predicted_mfu(s["accelerator"], s["active"])
    t_mfu = time.perf_counter() - t0
    t_point, p = best_of(point, s, 3)
    t_ranges, (p2, r) = best_of(with_ranges, s, 3)
    # Same point, P50 equal to it, P10 <= P50 <= P90: or the timing means nothing.
    assert np.array_equal(p["total_cost_usd"], p2["total_cost_usd"])
    for q, v in r.items():
        assert np.array_equal(v["p50"], p2[q]), q
        assert np.all(v["p10"] <= v["p50"]) and np.all(v["p50"] <= v["p90"]), q
    ratio = t_ranges / t_point
    sigma_tp = calibration.throughput_sigma()
    price_sigma = ranges.sigma_from_p10_p90(s["usd_low"], s["usd_high"])
    t_only, _ = best_of(lambda pt: ranges.estimate_ranges(pt, sigma_tp, price_sigma), p, 3)
    print(f"scenarios: {N:,}")
    print("floor: the bare point estimate (engine.estimate, inputs checked, MFU given)")
    print(f"bare point estimate (the floor):           {t_point:8.3f} s")
    print(f"point estimate + P10/P50/P90 of 6 figures: {t_ranges:8.3f} s  ({ratio:.2f}x)")
    print(f"of which the ranges alone:                 {t_only:8.3f} s  ({t_only / t_point:.2f}x)")
    print(f"(not timed above: the default-MFU lookup   {t_mfu:8.3f} s, once per sweep)")
    print(f"aim: <= 3x -> {'met' if ratio <= 3 else 'NOT met'}")
    record(
        "bench_ranges",
        {
            "point_s": t_point,
            "point_and_ranges_s": t_ranges,
            "ranges_only_s": t_only,
            "ranges_over_point": ratio,
            "mfu_lookup_s": t_mfu,
        },  # fmt: skip
        {"floor": "engine.estimate of 1M scenarios, MFU looked up beforehand", "scenarios": N},
    )


if __name__ == "__main__":
    main()
