"""A plan as the planner workbook holds it, turned into the engine's arguments.

The planner workbook (``workbook_templates``) keeps one column per scenario with the inputs in
:data:`udfs.quantities.PLAN_INPUTS`. Some of them resolve before the engine sees them, and the
workbook's formulas resolve them the same way:

- ``active_params`` blank: the model is dense, active = total;
- ``effective_tflops_input`` typed: it is the sustained throughput, used as is; otherwise
  ``peak_tflops x mfu x goodput``, where a blank ``peak_tflops`` is the catalogue's BF16 peak
  of ``accelerator_name``, a blank ``mfu`` is :func:`udfs.calibration.default_mfu` and a blank
  ``goodput`` is 1;
- ``hbm_gb`` (for the memory fit) comes from the catalogue accelerator, when there is one;
- ``watts_per_accelerator`` blank is the catalogue accelerator's TDP where published, else the
  ``PLAN_INPUTS`` default (700 W, the H100 SXM's TDP);
- any other blank input takes its default from ``PLAN_INPUTS``.

:func:`engine_arguments` does this for one scenario (a mapping of input name to value, blank
as None); :func:`estimate_scenario` runs the engine on it.
"""

from __future__ import annotations

import math

from . import calibration, catalogue, engine
from .quantities import PLAN_INPUTS
from .validation import InputError, is_blank

__all__ = ["engine_arguments", "estimate_scenario", "REQUIRED", "PASS_THROUGH"]

REQUIRED = tuple(q.name for q in PLAN_INPUTS if q.required)

#: Inputs handed to the engine under the same name, defaulted from PLAN_INPUTS when blank.
PASS_THROUGH = (
    "usd_per_accelerator_hour",
    "watts_per_accelerator",
    "server_overhead",
    "pue",
    "usd_per_kwh",
    "grams_co2_per_kwh",
    "checkpoint_bytes_per_param",
)

_DEFAULTS = {q.name: q.default for q in PLAN_INPUTS}


def engine_arguments(inputs):
    """Keyword arguments for :func:`udfs.engine.estimate` from one scenario's inputs.

    Parameters
    ----------
    inputs : mapping
        Input name (as in ``PLAN_INPUTS``) to value; blank cells are None or "".

    Raises
    ------
    InputError
        A required input is blank, or a catalogue name is unknown (``argument`` is the input
        name, so a face can point at the cell).
    """
    for name in REQUIRED:
        if is_blank(inputs.get(name)):
            raise InputError(name, "is required (the cell is blank)")
    kwargs = {
        "total_params": inputs["total_params"],
        "training_tokens": inputs["training_tokens"],
        "accelerators": inputs["accelerators"],
    }
    if not is_blank(inputs.get("active_params")):
        kwargs["active_params"] = inputs["active_params"]

    accel_name = inputs.get("accelerator_name")
    accel = None
    if not is_blank(accel_name):
        accel = catalogue.accelerator(accel_name, argument="accelerator_name")
        if not math.isnan(accel["hbm_gb"]):
            kwargs["hbm_gb"] = float(accel["hbm_gb"])

    if not is_blank(inputs.get("effective_tflops_input")):
        kwargs["effective_tflops"] = inputs["effective_tflops_input"]
    else:
        peak = inputs.get("peak_tflops")
        if is_blank(peak):
            if accel is None or math.isnan(accel["bf16_tflops"]):
                raise InputError(
                    "peak_tflops",
                    "is required when effective_tflops_input is blank and accelerator_name "
                    "has no catalogue peak",
                )
            peak = float(accel["bf16_tflops"])
        kwargs["peak_tflops"] = peak
        mfu = inputs.get("mfu")
        kwargs["mfu"] = calibration.default_mfu() if is_blank(mfu) else mfu
        good = inputs.get("goodput")
        kwargs["goodput"] = 1.0 if is_blank(good) else good

    for name in PASS_THROUGH:
        value = inputs.get(name)
        kwargs[name] = _DEFAULTS[name] if is_blank(value) else value
    if is_blank(inputs.get("watts_per_accelerator")) and accel is not None:
        if not math.isnan(accel["tdp_watts"]):
            kwargs["watts_per_accelerator"] = float(accel["tdp_watts"])
    return kwargs


def estimate_scenario(inputs):
    """Every engine output for one scenario's inputs (see :func:`engine_arguments`).

    Examples
    --------
    >>> r = estimate_scenario({"total_params": 671e9, "active_params": 37e9,
    ...     "training_tokens": 14.8e12, "accelerators": 2048, "effective_tflops_input": 400,
    ...     "usd_per_accelerator_hour": 2.0, "watts_per_accelerator": 700})
    >>> round(r["rental_cost_usd"])
    4563333
    """
    return engine.estimate(**engine_arguments(inputs))
