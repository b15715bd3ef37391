"""The engine against a plain-Python loop, from 1 scenario to 1,000,000.

The curve: for 1, 10, 100 ... 1,000,000 scenarios, ``engine.estimate`` (every output, every
input checked; one scenario is given as plain Python numbers, the way a single-cell formula
and ``compute-lab estimate`` call) against the floor, a plain-Python loop of the example
plan's six formulas with no checks (what a user would otherwise write). Results also go to
``benchmarks/results/bench_engine.json`` and are compared with the last run.

Then the 1,000,000-scenario sweep through the vectorised engine against the same loop.

The loop calls the Compute Lab methodology's six functions (those that print the
DeepSeek-V3-like example plan's six lines) once per scenario; the engine takes the whole sweep
as arrays, input checks included, computing each spec'd quantity from its formula in the model
spec (udfs.engine._spec). Also shown: the spec's plain numpy rendering (udfs.model.function,
no input checks) for the same six figures. Prints the times and ratios.

These figures explain where the engine's time goes; they set no aim of their own. What a user
waits for, and so whether a speed path stays, is judged by ``benchmarks/bench_user.py`` (a
column's numbers after Enter, a workbook recalculated, ``compute-lab estimate``, the hand-off).
Run: .venv/bin/python benchmarks/bench_engine.py
"""

import time

import numpy as np
from _results import QUICK, best_cpu_time, record

from udfs import engine, model

N = 1_000 if QUICK else 1_000_000  # --quick: a tiny run (tests/test_benchmarks.py)


# The methodology's functions, verbatim in behaviour: the baseline a user would otherwise write.
def training_flops(active_params, tokens):
    return 6 * active_params * tokens


def accelerator_hours(flops, effective_tflops):
    return flops / (effective_tflops * 1e12) / 3600


def wall_clock_days(accel_hours, num_accelerators):
    return (accel_hours / num_accelerators) / 24


def bf16_checkpoint_bytes(total_params):
    return total_params * 2


def rental_cost(accel_hours, dollars_per_accel_hour):
    return accel_hours * dollars_per_accel_hour


def electricity_kwh(accel_hours, watts_per_accelerator=700):
    return accel_hours * watts_per_accelerator / 1000


def sweep(n, seed=0):
    rng = np.random.default_rng(seed)
    total = rng.uniform(1e9, 2e12, n)
    return {
        "total": total,
        "active": total * rng.uniform(0.03, 1.0, n),
        "tokens": rng.uniform(1e11, 3e13, n),
        "accelerators": rng.integers(8, 200_000, n),  # counts: whole numbers
        "tflops": rng.uniform(100, 1500, n),
        "usd": rng.uniform(0.5, 5.0, n),
    }


def run_loop(s):
    out = []
    cols = zip(
        s["total"].tolist(),
        s["active"].tolist(),
        s["tokens"].tolist(),
        s["accelerators"].tolist(),
        s["tflops"].tolist(),
        s["usd"].tolist(),
        strict=True,
    )
    for total, active, tokens, n, tflops, usd in cols:
        flops = training_flops(active, tokens)
        hours = accelerator_hours(flops, tflops)
        out.append(
            (
                flops,
                hours,
                wall_clock_days(hours, n),
                bf16_checkpoint_bytes(total),
                rental_cost(hours, usd),
                electricity_kwh(hours),
            )
        )
    return out


def run_engine(s):
    flops = engine.training_flops(s["active"], s["tokens"])
    hours = engine.accelerator_hours(flops, s["tflops"])
    return (
        flops,
        hours,
        engine.wall_clock_days(hours, s["accelerators"]),
        engine.checkpoint_bytes(s["total"]),
        engine.compute_cost_usd(hours, s["usd"]),
        engine.electricity_kwh(hours),
    )


def run_spec(s):
    f = model.function
    flops = f("training_flops")(6.0, s["active"], s["tokens"])
    hours = f("accelerator_hours")(flops, s["tflops"])
    return (
        flops,
        hours,
        f("wall_clock_days")(hours, s["accelerators"]),
        f("checkpoint_gb")(s["total"], 2.0) * 1e9,
        f("compute_cost_usd")(hours, s["usd"]),
        f("electricity_kwh")(hours, 700.0, 1.0, 1.0),
    )


def run_estimate(s):
    return engine.estimate(
        s["total"],
        s["tokens"],
        s["accelerators"],
        active_params=s["active"],
        effective_tflops=s["tflops"],
        usd_per_accelerator_hour=s["usd"],
    )


def best_of(fn, arg, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn(arg)
        times.append(time.perf_counter() - t0)
    return min(times), result


def _per_call(fn, arg, budget=0.2):
    """Best time of one ``fn(arg)`` call, in seconds, over ~``budget`` seconds of CPU time."""
    return best_cpu_time(lambda: fn(arg), budget, share=5, most_calls=1 << 20)


def _plain(s):
    """One scenario as plain Python numbers (as a single-cell formula gives it)."""
    return {k: v.tolist()[0] for k, v in s.items()}


def curve(sizes=(1, 10, 100) if QUICK else (1, 10, 100, 300, 1_000, 10_000, 100_000, 1_000_000)):
    """Print and return the engine / loop ratio for each number of scenarios."""
    print("engine.estimate (all outputs, inputs checked) against its floor, a plain-Python")
    print("loop of the example plan's six formulas (no checks); CPU time per call:")
    print(f"{'scenarios':>10} {'loop':>12} {'estimate':>12} {'ratio':>8}")
    figures = {}
    for n in sizes:
        s = sweep(n)
        t_loop = _per_call(run_loop, s, budget=0.2 if n < 100_000 else 1.0)
        arg = _plain(s) if n == 1 else s
        t_est = _per_call(run_estimate, arg, budget=0.2 if n < 100_000 else 1.0)
        print(f"{n:>10,} {t_loop * 1e6:10.1f}us {t_est * 1e6:10.1f}us {t_est / t_loop:8.2f}")
        figures[f"loop_s_{n}"] = t_loop
        figures[f"estimate_s_{n}"] = t_est
        figures[f"estimate_over_loop_{n}"] = t_est / t_loop
    return figures


def main():
    figures = curve()
    print()
    s = sweep(N)
    t_loop, loop = best_of(run_loop, s, 3)
    t_vec, vec = best_of(run_engine, s, 9)
    t_est, est = best_of(run_estimate, s, 3)
    t_spec, spec = best_of(run_spec, s, 9)
    # Same numbers, or the comparison means nothing.
    days_loop = np.array([row[2] for row in loop])
    assert np.allclose(days_loop, vec[2], rtol=1e-12)
    assert np.allclose(days_loop, est["wall_clock_days"], rtol=1e-12)
    assert all(np.array_equal(a, b) for a, b in zip(vec[:3], spec[:3], strict=True))
    print(f"scenarios: {N:,}")
    print(f"plain-Python loop of the six functions:    {t_loop:8.3f} s")
    print(
        f"vectorised engine, six core functions:     {t_vec:8.3f} s  "
        f"({t_loop / t_vec:,.0f}x faster)"
    )
    print(
        f"vectorised engine.estimate (all outputs):  {t_est:8.3f} s  "
        f"({t_loop / t_est:,.0f}x faster)"
    )
    print(
        f"spec's numpy rendering, no input checks:   {t_spec:8.3f} s  "
        f"({t_loop / t_spec:,.0f}x faster; the engine takes {t_vec / t_spec:.2f}x its time)"
    )
    figures.update(loop_1m_s=t_loop, engine_six_1m_s=t_vec, estimate_1m_s=t_est, spec_1m_s=t_spec)
    floor = "plain-Python loop of the example plan's six formulas, no input checks"
    record("bench_engine", figures, {"floor": floor, "timer": "process_time, best of runs"})


if __name__ == "__main__":
    main()
