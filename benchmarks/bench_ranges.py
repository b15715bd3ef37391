"""Ranges (P10 / P50 / P90) for 1,000,000 scenarios against the point estimates alone.

The point estimate is :func:`udfs.engine.estimate` at the calibrated default MFU
(:func:`udfs.calibration.predicted_mfu`, looked up for every scenario's accelerator and
size); the ranges add :func:`udfs.ranges.estimate_ranges` on top (six quantities, three
quantiles, a per-scenario price range). Prints both times and the ratio (aim: the estimate with
its ranges within 3x of the point estimate alone). Run: .venv/bin/python benchmarks/bench_ranges.py
"""

import numpy as np
from bench_engine import best_of

from udfs import calibration, engine, ranges

N = 1_000_000
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
    mfu = calibration.predicted_mfu(s["accelerator"], s["active"])
    return engine.estimate(
        s["total"],
        s["tokens"],
        s["accelerators"],
        active_params=s["active"],
        peak_tflops=s["peak"],
        mfu=mfu,
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
    print(f"point estimate at the default MFU:         {t_point:8.3f} s")
    print(f"point estimate + P10/P50/P90 of 6 figures: {t_ranges:8.3f} s  ({ratio:.2f}x)")
    print(f"of which the ranges alone:                 {t_only:8.3f} s  ({t_only / t_point:.2f}x)")
    print(f"aim: <= 3x -> {'met' if ratio <= 3 else 'NOT met'}")


if __name__ == "__main__":
    main()
