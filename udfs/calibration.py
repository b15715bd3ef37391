"""Calibration of the engine against the catalogue's disclosed training runs.

- :func:`reference_table`: each run with disclosed accelerator-hours beside the model's
  FLOPs, the implied effective TFLOP/s and the implied MFU.
- :func:`default_mfu`: the MFU used when a user names an accelerator but no throughput, the
  median implied MFU of the disclosed runs.
- :func:`leave_one_out`: how well that default predicts each run's accelerator-hours when the
  run itself is left out of the median.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from . import catalogue, engine

__all__ = ["reference_table", "default_mfu", "leave_one_out"]


@functools.cache
def _table():
    runs = catalogue.runs()
    accels = catalogue.accelerators()
    rows = []
    for name, r in runs.iterrows():
        accel = r["accelerator"]
        peak = accels.loc[accel, "bf16_tflops"] if isinstance(accel, str) else np.nan
        have = np.isfinite([r["active_params"], r["training_tokens"]]).all()
        flops = engine.training_flops(r["active_params"], r["training_tokens"]) if have else np.nan
        hours = r["accelerator_hours"]
        implied = (
            engine.implied_effective_tflops(flops, hours)
            if np.isfinite([flops, hours]).all()
            else np.nan
        )
        mfu = (
            engine.implied_mfu(flops, hours, peak) if np.isfinite([implied, peak]).all() else np.nan
        )
        rows.append(
            {
                "run": name,
                "architecture": r["architecture"],
                "accelerator": accel,
                "accelerators": r["accelerators"],
                "model_training_flops": flops,
                "disclosed_accelerator_hours": hours,
                "peak_tflops": peak,
                "implied_effective_tflops": implied,
                "implied_mfu": mfu,
                "disclosed_mfu": r["disclosed_mfu"],
                "source": catalogue.source("run", name, "accelerator_hours"),
            }
        )
    return pd.DataFrame(rows).set_index("run", drop=False)


def reference_table():
    """Reference runs with the model's FLOPs, the implied TFLOP/s and implied MFU.

    ``model_training_flops`` is 6 x active x tokens; ``implied_effective_tflops`` divides it
    by the disclosed accelerator-hours; ``implied_mfu`` divides that by the accelerator's
    dense BF16 (V100: FP16) peak. Runs without disclosed hours have NaN there.
    """
    return _table().copy()


def _calibration_runs():
    t = _table()
    return t[np.isfinite(t["implied_mfu"])]


@functools.cache
def default_mfu():
    """Median implied MFU of the catalogue's runs with disclosed hours (a fraction).

    Examples
    --------
    >>> round(default_mfu(), 3)
    0.304
    """
    return float(np.median(_calibration_runs()["implied_mfu"]))


def leave_one_out():
    """For each calibration run: the default MFU without it, and the error it gives.

    Returns a DataFrame with ``mfu_without_run``, ``predicted_accelerator_hours`` (the
    run's FLOPs over peak x that MFU) and ``error_pct`` against the disclosed hours.
    Wall-clock days have the same relative error, since they scale with hours.
    """
    t = _calibration_runs().copy()
    mfus = t["implied_mfu"].to_numpy()
    without = np.array([np.median(np.delete(mfus, i)) for i in range(len(mfus))])
    t["mfu_without_run"] = without
    t["predicted_accelerator_hours"] = engine.accelerator_hours(
        t["model_training_flops"].to_numpy(), t["peak_tflops"].to_numpy() * without
    )
    t["error_pct"] = 100.0 * (
        t["predicted_accelerator_hours"] / t["disclosed_accelerator_hours"] - 1.0
    )
    return t[
        [
            "run",
            "implied_mfu",
            "mfu_without_run",
            "disclosed_accelerator_hours",
            "predicted_accelerator_hours",
            "error_pct",
        ]
    ]
