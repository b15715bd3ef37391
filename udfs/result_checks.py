"""The checks of :func:`udfs.engine.estimate`'s outputs: every output finite and usable, or an
error naming the output and the plan's inputs that drove it out of range.

Each output has a label for the error (:data:`_RESULT_LABELS`) and the inputs it depends on
(:func:`_result_inputs`), given which inputs the plan gives; an output whose inputs are not
given is NaN by design (:func:`_absent`) and is not checked. :func:`checked_results` wraps the
step-by-step estimate with these checks and gives the outputs one shape.

This module reads a plan by its fields' names; it imports nothing from the engine. It lists
the scaling and the failure models' inputs once (:data:`SCALING_INPUTS`,
:data:`FAILURE_INPUTS`): the engine and the command line take them from here.
"""

from __future__ import annotations

import functools

import numpy as np

from .validation import (
    InputError,
    OutOfRangeError,
    check_result,
    out_of_range,
    result_usable,
)

__all__ = ["checked_results", "shape_of", "SCALING_INPUTS", "FAILURE_INPUTS"]

#: The scaling model's inputs beyond the job's size (:func:`udfs.engine.scaling_efficiency`'s
#: arguments after the throughput, in its order), used only with ``global_batch_tokens``: the
#: engine passes them, an out-of-range scaling efficiency names them, and the command line
#: says when they are given to no effect.
SCALING_INPUTS = (
    "tensor_parallel",
    "pipeline_parallel",
    "sequence_tokens",
    "pipeline_interleave",
    "interconnect_gb_per_s",
    "comm_overlap",
)
#: The failure model's inputs beyond the failure rate, used only with
#: ``failures_per_accelerator_day``: named and noted like :data:`SCALING_INPUTS`.
FAILURE_INPUTS = ("checkpoint_write_minutes", "restart_minutes")


#: estimate()'s outputs in words, for an error that one of them is out of range.
_RESULT_LABELS = {
    "effective_tflops": "effective TFLOP/s",
    "training_flops": "training compute (FLOPs)",
    "accelerator_hours": "accelerator-hours",
    "wall_clock_days": "wall-clock time",
    "checkpoint_gb": "checkpoint size",
    "usd_per_accelerator_hour": "price per accelerator-hour",
    "compute_cost_usd": "compute cost",
    "electricity_kwh": "electricity (kWh)",
    "electricity_cost_usd": "electricity cost",
    "co2_tonnes": "emissions",
    "total_cost_usd": "total cost",
    "goodput": "goodput",
    "scaling_efficiency": "scaling efficiency",
    "cluster_mtbf_hours": "job MTBF",
    "checkpoint_interval_hours": "checkpoint interval",
    "min_accelerators_for_memory": "min. accelerators for training state",
    "iterations_per_year": "back-to-back runs per year",
    "chinchilla_tokens": "Chinchilla-optimal tokens",
    "tokens_per_param": "tokens per parameter",
}

#: Outputs that may be 0 (a free price, a carbon-free grid); the others must be positive.
_OUTPUTS_THAT_MAY_BE_ZERO = frozenset(
    {
        "usd_per_accelerator_hour",
        "compute_cost_usd",
        "electricity_cost_usd",
        "co2_tonnes",
        "total_cost_usd",
    }
)

#: Names the engine's own checks give intermediate figures inside estimate(): the output each
#: one is (or feeds), for an error naming the inputs behind it instead.
_INTERMEDIATES = {
    "training_flops": "training_flops",
    "accelerator_hours": "accelerator_hours",
    "wall_clock_days": "wall_clock_days",
    "effective_tflops": "effective_tflops",
    "tflops_per_accelerator": "effective_tflops",
    "mtbf_hours": "cluster_mtbf_hours",
    "checkpoint_write_hours": "checkpoint_interval_hours",
    "interval_hours": "checkpoint_interval_hours",
    "restart_hours": "goodput",
    "electricity_kwh": "electricity_kwh",
}


def _result_inputs(p):
    """For each output of estimate(), the inputs it depends on (given the :class:`Plan` ``p``)."""
    model = ("active_params" if p.active_params is not None else "total_params",)
    model += ("training_tokens",)
    if p.effective_tflops is not None:
        eff = ("effective_tflops",)
        good = scale = ()
    else:
        good = ("goodput",)
        if p.failures_per_accelerator_day is not None:
            good = ("failures_per_accelerator_day", "accelerators", *FAILURE_INPUTS)
        scale = ()
        if p.global_batch_tokens is not None:
            scale = ("global_batch_tokens", "accelerators", "total_params", *SCALING_INPUTS)
        eff = ("peak_tflops", "mfu", *good, *scale)
    hours = (*model, *eff)
    days = (*hours, "accelerators")
    if p.usd_per_accelerator_hour is not None:
        price = ("usd_per_accelerator_hour",)
    else:
        price = ("purchase_usd_per_accelerator", "amortisation_years", "utilisation")
    kwh = (*hours, "watts_per_accelerator", "server_overhead", "pue")
    mtbf = ("accelerators", "failures_per_accelerator_day")
    return {
        "effective_tflops": eff,
        "training_flops": model,
        "accelerator_hours": hours,
        "wall_clock_days": days,
        "checkpoint_gb": ("total_params", "checkpoint_bytes_per_param"),
        "usd_per_accelerator_hour": price,
        "compute_cost_usd": (*hours, *price),
        "electricity_kwh": kwh,
        "electricity_cost_usd": (*kwh, "usd_per_kwh"),
        "co2_tonnes": (*kwh, "grams_co2_per_kwh"),
        "total_cost_usd": (*hours, *price, *kwh[len(hours) :], "usd_per_kwh", "other_costs_usd"),
        "goodput": good,
        "scaling_efficiency": scale,
        "cluster_mtbf_hours": mtbf,
        "checkpoint_interval_hours": (*mtbf, "checkpoint_write_minutes"),
        "min_accelerators_for_memory": ("total_params", "hbm_gb", "training_state_bytes_per_param"),
        "iterations_per_year": days,
        "chinchilla_tokens": ("total_params",),
        "tokens_per_param": ("training_tokens", "total_params"),
    }


def _absent(key, p):
    """True when output ``key`` is NaN by design: an input it needs was not given."""
    if key in ("goodput", "scaling_efficiency"):
        return p.effective_tflops is not None
    if key in ("cluster_mtbf_hours", "checkpoint_interval_hours"):
        return p.failures_per_accelerator_day is None
    if key in ("usd_per_accelerator_hour", "compute_cost_usd", "total_cost_usd"):
        return p.usd_per_accelerator_hour is None and p.purchase_usd_per_accelerator is None
    needs = {
        "electricity_cost_usd": "usd_per_kwh",
        "co2_tonnes": "grams_co2_per_kwh",
        "min_accelerators_for_memory": "hbm_gb",
    }.get(key)
    return needs is not None and getattr(p, needs) is None


def checked_results(function):
    """Make every output of ``function(plan)`` (the estimate) finite, or an error naming its
    inputs.

    An output beyond a float's range (infinity, NaN, a denormal, or 0 where it must be
    positive), or an intermediate figure that an inner check refuses, raises
    :class:`~udfs.validation.OutOfRangeError` naming the output and the inputs that drove
    it there. numpy's floating-point warnings are silenced inside: the outputs are checked.
    """

    @functools.wraps(function)
    def checked(p):
        with np.errstate(all="ignore"):
            try:
                out = function(p)
            except OutOfRangeError:
                raise
            except InputError as err:
                key = _INTERMEDIATES.get(err.argument)
                if key is None or getattr(p, err.argument, None) is not None or err.value is None:
                    raise
                inputs = {k: getattr(p, k) for k in _result_inputs(p)[key]}
                shape = np.broadcast_shapes(*(np.shape(v) for v in inputs.values()))
                raise out_of_range(
                    key,
                    err.value,
                    inputs,
                    shape=shape,
                    position=err.position,
                    result_label=_RESULT_LABELS[key],
                ) from None
            present = [key for key in out if not _absent(key, p)]
            if _all_usable([out[key] for key in present]):
                return _one_shape(out)
            out = _one_shape(out)
            depends = _result_inputs(p)  # an output is out of range: the error names inputs
            for key in present:
                value = out[key]
                check_result(
                    key,
                    value,
                    {k: getattr(p, k) for k in depends[key]},
                    allow_zero=key in _OUTPUTS_THAT_MAY_BE_ZERO,
                    result_label=_RESULT_LABELS[key],
                )
        return out

    return checked


def _all_usable(values):
    """True when every element of every value is a usable figure
    (:func:`udfs.validation.result_usable`)."""
    return all(result_usable(value) for value in values)


def _one_shape(out):
    """Floats for a scalar plan; arrays of one broadcast shape for arrays of plans."""
    shape = shape_of(out.values())
    if shape == ():
        return {k: float(v) for k, v in out.items()}
    return {k: _read_only(v, shape) for k, v in out.items()}


def shape_of(values):
    """The broadcast shape of ``values`` (numbers and arrays), quickly when they agree."""
    shapes = {getattr(v, "shape", None) if type(v) is np.ndarray else np.shape(v) for v in values}
    if len(shapes) > 1:
        shapes.discard(())
    if len(shapes) == 1:
        return shapes.pop()
    return np.broadcast_shapes(*shapes)


def _read_only(value, shape):
    """``value`` as a read-only float array of ``shape`` (a view, never a copy of the data)."""
    if type(value) is np.ndarray and value.dtype == float and value.shape == shape:
        view = value.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(np.asarray(value, float), shape)
