"""The training-run engine: pure functions from a training plan to time, cost and energy.

Every function accepts scalars or array-likes, broadcasts them with numpy, and returns a
``float`` for scalar input and an ``ndarray`` otherwise (the numpy-financial pattern).
Inputs are checked: a bad value raises :class:`udfs.validation.InputError` naming the
argument, the position (for arrays) and the rule.

Units are in the names: ``*_params`` are parameter counts, ``tokens`` are tokens,
``*_tflops`` are TFLOP/s (1e12 FLOP/s) per accelerator, ``*_hours`` are hours,
``*_days`` are days of 24 hours, ``*_usd`` are US dollars, ``*_kwh`` are kilowatt-hours.

The linear core (``training_flops`` ... ``electricity_kwh``) is the Compute Lab methodology
(FLOPs = 6 x active parameters x tokens) and reproduces the DeepSeek-V3-like example plan's
printed figures to the digit. The rest extends it; each function names its source.

One definition per quantity: a function whose quantity has a formula in the model spec
(:mod:`udfs.quantities`, e.g. ``wall_clock_days = accelerator_hours / accelerators / 24``)
checks its inputs here and then computes the spec's formula, rendered to numpy by
:func:`udfs.model.function` (``_spec``, :func:`udfs.model.compute`); the planner's Excel
formulas are rendered from the same text. :func:`estimate` runs the plan in named steps
(:func:`_checked_arguments`, :func:`_throughput`, :func:`_hourly_price`,
:func:`_energy_and_costs`), its outputs checked by :mod:`udfs.result_checks`. The
hand-written functions are those the spec does not express (failures and checkpointing, from
:mod:`udfs.failures`; scaling; ownership and Chinchilla, from :mod:`udfs.sizing`, with the
memory fit, the inverse solves, the implied MFU and a run's months: all exported here).

This module does no I/O and imports nothing from Excel tooling.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np

from .failures import (
    _float_or_array,
    checkpoint_interval_hours,
    cluster_mtbf_hours,
    failure_rate_from_node_days,
    failure_rate_per_accelerator_day,
    goodput,
)
from .model import compute as _spec
from .quantities import ENGINE_INPUTS as _ENGINE_INPUTS
from .quantities import MODEL_CONSTANTS as _MODEL_CONSTANTS
from .quantities import MODEL_INPUTS as _MODEL_INPUTS
from .quantities import PLAN_INPUTS as _PLAN_INPUTS
from .result_checks import SCALING_INPUTS as _SCALING_INPUTS
from .result_checks import checked_results as _checked_results
from .result_checks import shape_of as _shape_of
from .sizing import (
    CHINCHILLA_FITS,
    HOURS_PER_YEAR,
    accelerators_for_days,
    chinchilla_loss,
    chinchilla_tokens,
    implied_effective_tflops,
    implied_mfu,
    min_accelerators_for_memory,
    month_shares,
    ownership_usd_per_accelerator_hour,
)
from .validation import (
    InputError,
    bound_check,
    check_at_least,
    check_at_most,
    check_count,
    check_fraction,
    check_non_negative,
    check_plausible,
    check_positive,
    check_whole,
)

__all__ = [
    "Plan",
    "FLOPS_PER_PARAM_TOKEN",
    "HOURS_PER_YEAR",
    "training_flops",
    "accelerator_hours",
    "wall_clock_days",
    "checkpoint_bytes",
    "checkpoint_gb",
    "compute_cost_usd",
    "electricity_kwh",
    "electricity_cost_usd",
    "co2_tonnes",
    "effective_tflops",
    "failure_rate_per_accelerator_day",
    "failure_rate_from_node_days",
    "cluster_mtbf_hours",
    "checkpoint_interval_hours",
    "goodput",
    "scaling_efficiency",
    "min_accelerators_for_memory",
    "ownership_usd_per_accelerator_hour",
    "accelerators_for_days",
    "iterations_per_year",
    "chinchilla_tokens",
    "chinchilla_loss",
    "CHINCHILLA_FITS",
    "implied_effective_tflops",
    "implied_mfu",
    "month_shares",
    "estimate",
]

_CONSTANT = {q.name: q.default for q in _MODEL_CONSTANTS}
#: FLOPs per active parameter per training token (forward + backward), Kaplan/Chinchilla "6N"
#: (the spec's ``flops_per_param_token``).
FLOPS_PER_PARAM_TOKEN = _CONSTANT["flops_per_param_token"]
_TERA = 1e12


def training_flops(active_params, tokens):
    """Training compute in FLOPs: 6 x active parameters x training tokens.

    Parameters
    ----------
    active_params : scalar or array_like
        Parameters that take part in processing one token (all of them for a dense model,
        the routed subset for a mixture-of-experts model). Must be > 0.
    tokens : scalar or array_like
        Training tokens. Must be > 0.

    Returns
    -------
    float or ndarray
        FLOPs (forward and backward pass; attention FLOPs and recomputation excluded).

    Notes
    -----
    The 6N heuristic (Kaplan et al. 2020; Hoffmann et al. 2022), as the Compute Lab
    methodology uses it.

    Examples
    --------
    DeepSeek-V3: 37e9 active parameters, 14.8e12 tokens.

    >>> f"{training_flops(37e9, 14.8e12):.3e}"
    '3.286e+24'
    """
    n = check_positive("active_params", active_params)
    d = check_positive("tokens", tokens)
    return _spec("training_flops", active_params=n, training_tokens=d)


def accelerator_hours(training_flops, effective_tflops):
    """Accelerator-hours: FLOPs / (sustained TFLOP/s per accelerator x 1e12) / 3600.

    Parameters
    ----------
    training_flops : scalar or array_like
        Total training FLOPs (> 0).
    effective_tflops : scalar or array_like
        Sustained (not peak) TFLOP/s achieved per accelerator (> 0).

    Returns
    -------
    float or ndarray
        Accelerator-hours (GPU-hours).

    Examples
    --------
    >>> round(accelerator_hours(3.2856e24, 400))
    2281667
    """
    f = check_positive("training_flops", training_flops)
    t = check_positive("effective_tflops", effective_tflops)
    return _spec("accelerator_hours", training_flops=f, effective_tflops=t)


def wall_clock_days(accelerator_hours, accelerators):
    """Wall-clock days at linear scaling: accelerator-hours / accelerators / 24.

    Parameters
    ----------
    accelerator_hours : scalar or array_like
        Accelerator-hours of the run (> 0).
    accelerators : scalar or array_like
        Accelerators working on it at once (> 0).

    Returns
    -------
    float or ndarray
        Days of 24 hours.

    Examples
    --------
    The methodology's iteration-time example: 30M accelerator-hours on 15,000 accelerators.

    >>> round(wall_clock_days(30e6, 15_000), 1)
    83.3
    """
    h = check_positive("accelerator_hours", accelerator_hours)
    n = check_whole("accelerators", accelerators)
    return _spec("wall_clock_days", accelerator_hours=h, accelerators=n)


def checkpoint_bytes(total_params, bytes_per_param=2.0):
    """Checkpoint size in bytes: total parameters x bytes per parameter.

    Parameters
    ----------
    total_params : scalar or array_like
        All stored parameters (every expert of an MoE model), > 0.
    bytes_per_param : scalar or array_like, default 2
        2 for BF16 weights alone (the methodology's figure); about 13 for a resumable
        checkpoint with optimizer state (BLOOM: 2.3 TB for 176B parameters).

    Returns
    -------
    float or ndarray
        Bytes.

    Examples
    --------
    >>> checkpoint_bytes(671e9)
    1342000000000.0
    """
    p = check_positive("total_params", total_params)
    b = check_positive("bytes_per_param", bytes_per_param)
    return _float_or_array(p * b)


def checkpoint_gb(total_params, bytes_per_param=2.0):
    """Checkpoint size in GB (1e9 bytes); see :func:`checkpoint_bytes`.

    Examples
    --------
    >>> checkpoint_gb(671e9)
    1342.0
    """
    p = check_positive("total_params", total_params)
    b = check_positive("bytes_per_param", bytes_per_param)
    return _spec("checkpoint_gb", total_params=p, checkpoint_bytes_per_param=b)


def compute_cost_usd(accelerator_hours, usd_per_accelerator_hour):
    """Rental-equivalent compute cost: accelerator-hours x $ per accelerator-hour.

    Parameters
    ----------
    accelerator_hours : scalar or array_like
        Accelerator-hours (> 0).
    usd_per_accelerator_hour : scalar or array_like
        Price of one accelerator for one hour, US$ (>= 0). For owned hardware use
        :func:`ownership_usd_per_accelerator_hour`.

    Returns
    -------
    float or ndarray
        US dollars.

    Examples
    --------
    DeepSeek-V3's own figure: 2,788K H800-hours at $2 per hour.

    >>> compute_cost_usd(2.788e6, 2.0)
    5576000.0
    """
    h = check_positive("accelerator_hours", accelerator_hours)
    p = check_non_negative("usd_per_accelerator_hour", usd_per_accelerator_hour)
    return _spec("compute_cost_usd", accelerator_hours=h, usd_per_accelerator_hour=p)


def electricity_kwh(accelerator_hours, watts_per_accelerator=700.0, server_overhead=1.0, pue=1.0):
    """Electricity drawn: accelerator-hours x watts x server overhead x PUE / 1000.

    Parameters
    ----------
    accelerator_hours : scalar or array_like
        Accelerator-hours (> 0).
    watts_per_accelerator : scalar or array_like, default 700
        Average draw of one accelerator in watts (H100 SXM TDP is 700 W).
    server_overhead : scalar or array_like, default 1.0
        Whole-server power over accelerator power (CPUs, memory, NICs, fans), >= 1.
        Epoch AI's cost model uses about 1.82 for H100 servers (and 0.75 average
        utilisation, which you can fold into ``watts_per_accelerator``).
    pue : scalar or array_like, default 1.0
        Data-centre power usage effectiveness, >= 1 (Uptime Institute average 1.56 in
        2024; hyperscalers about 1.1; Gopher's data centre 1.08).

    Returns
    -------
    float or ndarray
        kWh. With the defaults this is the methodology's accelerator-only figure.

    Examples
    --------
    >>> round(electricity_kwh(2_281_666.67))
    1597167
    >>> round(electricity_kwh(1000, 700, server_overhead=1.82, pue=1.1), 1)
    1401.4
    """
    h = check_positive("accelerator_hours", accelerator_hours)
    w = check_positive("watts_per_accelerator", watts_per_accelerator)
    s = check_at_least("server_overhead", server_overhead, 1.0)
    e = check_at_least("pue", pue, 1.0)
    return _spec(
        "electricity_kwh", accelerator_hours=h, watts_per_accelerator=w, server_overhead=s, pue=e
    )


def electricity_cost_usd(electricity_kwh, usd_per_kwh):
    """Electricity cost: kWh x $ per kWh.

    Examples
    --------
    >>> electricity_cost_usd(1_000_000, 0.08)
    80000.0
    """
    k = check_non_negative("electricity_kwh", electricity_kwh)
    p = check_non_negative("usd_per_kwh", usd_per_kwh)
    return _spec("electricity_cost_usd", electricity_kwh=k, usd_per_kwh=p)


def co2_tonnes(electricity_kwh, grams_co2_per_kwh):
    """Operational emissions: kWh x grams CO2 per kWh / 1e6, in tonnes CO2.

    Parameters
    ----------
    electricity_kwh : scalar or array_like
        Electricity drawn (>= 0).
    grams_co2_per_kwh : scalar or array_like
        Grid carbon intensity (world average about 481 g/kWh in 2023, Ember; France 56,
        China 582). The Llama model cards imply about 410-420 g/kWh.

    Examples
    --------
    >>> co2_tonnes(1_000_000, 481)
    481.0
    """
    k = check_non_negative("electricity_kwh", electricity_kwh)
    g = check_non_negative("grams_co2_per_kwh", grams_co2_per_kwh)
    return _spec("co2_tonnes", electricity_kwh=k, grams_co2_per_kwh=g)


# ---------------------------------------------------------------------------------------------
# Throughput: peak x MFU x goodput x scaling
# ---------------------------------------------------------------------------------------------


def effective_tflops(peak_tflops, mfu, goodput=1.0, scaling_efficiency=1.0):
    """Sustained TFLOP/s per accelerator: peak x MFU x goodput x scaling efficiency.

    Parameters
    ----------
    peak_tflops : scalar or array_like
        Dense peak TFLOP/s per accelerator at the training precision (BF16 or FP8; vendor
        "with sparsity" figures are 2x the dense figure and do not belong here).
    mfu : scalar or array_like
        Model FLOPs utilisation in (0, 1]: achieved model FLOP/s over peak (PaLM,
        Chowdhery et al. 2022, appendix B). Llama 3.1 reports 38-43%.
    goodput : scalar or array_like, default 1.0
        Fraction of wall-clock time doing useful training, in (0, 1]; see :func:`goodput`.
    scaling_efficiency : scalar or array_like, default 1.0
        Throughput per accelerator relative to ideal scaling, in (0, 1]; see
        :func:`scaling_efficiency`.

    Examples
    --------
    >>> round(effective_tflops(989.4, 0.40), 2)
    395.76
    """
    p = check_positive("peak_tflops", peak_tflops)
    m = check_fraction("mfu", mfu)
    g = check_fraction("goodput", goodput)
    s = check_fraction("scaling_efficiency", scaling_efficiency)
    return _float_or_array(
        np.asarray(_spec("effective_tflops", peak_tflops=p, mfu=m, goodput=g)) * s
    )


def scaling_efficiency(
    accelerators,
    active_params,
    total_params,
    global_batch_tokens,
    tflops_per_accelerator,
    tensor_parallel=1,
    pipeline_parallel=1,
    sequence_tokens=8192,
    pipeline_interleave=1,
    interconnect_gb_per_s=50.0,
    comm_overlap=0.0,
    bytes_per_gradient=2.0,
):
    """Throughput per accelerator relative to perfect scaling, at a fixed global batch.

    Each optimizer step computes ``6 x active x B`` FLOPs over ``N`` accelerators, so its
    compute time ``t_c`` falls as ``1/N``. Two costs do not fall with it:

    - the pipeline bubble. With ``d = N / (tensor x pipeline)`` data-parallel replicas, each
      replica runs ``m = B / (sequence x d)`` micro-batches per step, and the bubble adds
      ``(pipeline - 1) / (interleave x m)`` of ``t_c`` (Narayanan et al. 2021, arXiv
      2104.04473: bubble fraction (p - 1)/m, divided by the interleaving factor);
    - the data-parallel gradient all-reduce of ``bytes_per_gradient x total / (tensor x
      pipeline)`` bytes per accelerator, a ring taking ``(S / bw) x 2(d-1)/d`` (NVIDIA
      nccl-tests PERFORMANCE.md), of which ``1 - comm_overlap`` is exposed.

    ``efficiency = t_c / (t_c (1 + bubble) + (1 - overlap) t_allreduce)``.

    Parameters
    ----------
    accelerators : scalar or array_like
        Accelerators in the job (> 0).
    active_params, total_params : scalar or array_like
        Active parameters (compute) and all parameters (gradients), > 0.
    global_batch_tokens : scalar or array_like
        Tokens per optimizer step (Llama 3 405B: 16M).
    tflops_per_accelerator : scalar or array_like
        Sustained TFLOP/s per accelerator with no bubble or exposed communication.
    tensor_parallel, pipeline_parallel : scalar or array_like, default 1
        Model-parallel degrees, whole numbers >= 1 (Llama 3.1 405B: 8 and 16, arXiv
        2407.21783 table 4).
    sequence_tokens : scalar or array_like, default 8192
        Sequence length in tokens, a whole number >= 1; one sequence per micro-batch.
    pipeline_interleave : scalar or array_like, default 1
        Virtual pipeline stages per accelerator (interleaved schedule), a whole number >= 1.
    interconnect_gb_per_s : scalar or array_like, default 50
        Per-accelerator scale-out bandwidth, GB/s (400 Gb/s InfiniBand or RoCE: 50 GB/s).
    comm_overlap : scalar or array_like, default 0
        Share of the all-reduce hidden behind computation, in [0, 1).
    bytes_per_gradient : scalar or array_like, default 2
        2 for BF16 gradients, 4 for FP32.

    Returns
    -------
    float or ndarray
        A fraction in (0, 1]. More accelerators than the batch can feed (fewer than one
        sequence per replica per step) is an error naming ``accelerators``.

    Notes
    -----
    Checked against Llama 3.1 405B, which measured 430 BF16 TFLOP/s per GPU on 8,192 GPUs and
    400 on 16,384 with the batch fixed at 16M tokens (arXiv 2407.21783). With TP 8, PP 16 and
    no overlap, the one free parameter, the interleaving factor, fitted at about 8, gives
    that drop; the model's other inputs are disclosed or nominal. Expert-parallel
    all-to-all traffic, stragglers and network congestion are not modelled.

    Examples
    --------
    >>> e8k = scaling_efficiency(8_192, 405e9, 405e9, 16 * 2**20, 465.5, 8, 16, 8192, 8)
    >>> e16k = scaling_efficiency(16_384, 405e9, 405e9, 16 * 2**20, 465.5, 8, 16, 8192, 8)
    >>> round(465.5 * e8k), round(465.5 * e16k)
    (430, 400)
    """
    job = (accelerators, active_params, total_params, global_batch_tokens, tflops_per_accelerator)
    layout = (tensor_parallel, pipeline_parallel, sequence_tokens, pipeline_interleave)
    network = (interconnect_gb_per_s, comm_overlap, bytes_per_gradient)
    t_compute, bubble, t_comm, exposed = _step_times(*job, *layout, *network)
    return _float_or_array(t_compute / (t_compute * (1.0 + bubble) + exposed * t_comm))


def _step_times(
    accelerators,
    active_params,
    total_params,
    global_batch_tokens,
    tflops_per_accelerator,
    tensor_parallel,
    pipeline_parallel,
    sequence_tokens,
    pipeline_interleave,
    interconnect_gb_per_s,
    comm_overlap,
    bytes_per_gradient,
):
    """:func:`scaling_efficiency`'s terms, arguments checked: compute time of a step, bubble
    fraction, all-reduce time and the share of it exposed (``1 - comm_overlap``)."""
    n = check_whole("accelerators", accelerators)
    pa = check_positive("active_params", active_params)
    pt = check_positive("total_params", total_params)
    b = check_positive("global_batch_tokens", global_batch_tokens)
    x = check_positive("tflops_per_accelerator", tflops_per_accelerator)
    tp = check_count("tensor_parallel", tensor_parallel)
    pp = check_count("pipeline_parallel", pipeline_parallel)
    seq = check_count("sequence_tokens", sequence_tokens)
    v = check_count("pipeline_interleave", pipeline_interleave)
    bw = check_positive("interconnect_gb_per_s", interconnect_gb_per_s)
    ov = _PLAN_CHECKS["comm_overlap"]("comm_overlap", comm_overlap)
    g = check_positive("bytes_per_gradient", bytes_per_gradient)
    check_at_most("active_params", pa, "total_params", pt)
    mp = tp * pp
    check_at_most("tensor_parallel x pipeline_parallel", mp, "accelerators", n)
    dp = n / mp
    micro = b / (seq * dp)
    check_at_most(
        "accelerators",
        n,
        "what the batch can feed (tensor x pipeline x global_batch_tokens / sequence_tokens)",
        mp * b / seq,
    )
    t_compute = FLOPS_PER_PARAM_TOKEN * pa * b / (n * x * _TERA)
    bubble = (pp - 1.0) / (v * micro)
    t_comm = (g * pt / mp) / (bw * 1e9) * 2.0 * (dp - 1.0) / dp
    return t_compute, bubble, t_comm, 1.0 - ov


def iterations_per_year(wall_clock_days):
    """Back-to-back runs that fit in a 365-day year.

    Examples
    --------
    30M accelerator-hours: 83.3 days on 15,000 accelerators, 8.3 on 150,000 (the
    methodology's example).

    >>> round(iterations_per_year(wall_clock_days(30e6, 15_000)), 2)
    4.38
    >>> round(iterations_per_year(wall_clock_days(30e6, 150_000)), 1)
    43.8
    """
    d = check_positive("wall_clock_days", wall_clock_days)
    return _spec("iterations_per_year", wall_clock_days=d)


# ---------------------------------------------------------------------------------------------
# The whole plan
# ---------------------------------------------------------------------------------------------

#: The defaults of the engine's own inputs (and its constants), from the quantities spec.
_DEFAULT = {q.name: q.default for q in (*_ENGINE_INPUTS, *_MODEL_INPUTS, *_MODEL_CONSTANTS)}


#: One input of a plan: a number, or an array of numbers (one per plan).
Figure = float | np.ndarray


@dataclass(frozen=True, eq=False)
class Plan:
    """One training plan as the engine reads it: one field per input of :func:`estimate`.

    Each field is a number, or an array of numbers (one per plan: arrays of plans broadcast
    together, as every engine function does); ``None`` is an input not given (its output is
    NaN, or another input stands in for it: see :func:`estimate`). The record is frozen:
    :func:`udfs.plan.resolve` builds it from any face's inputs (a planner column, an Excel
    formula's arguments, the command line's flags), and :func:`estimate` reads it, step by
    step. The defaults of the engine's own inputs (failures, scaling, ownership, memory, other
    costs) are the quantities spec's (:data:`udfs.quantities.ENGINE_INPUTS`).
    """

    total_params: Figure
    training_tokens: Figure
    accelerators: Figure
    active_params: Figure | None = None
    effective_tflops: Figure | None = None
    peak_tflops: Figure | None = None
    mfu: Figure | None = None
    goodput: Figure | None = None
    usd_per_accelerator_hour: Figure | None = None
    watts_per_accelerator: Figure = 700.0
    server_overhead: Figure = 1.0
    pue: Figure = 1.0
    usd_per_kwh: Figure | None = None
    grams_co2_per_kwh: Figure | None = None
    checkpoint_bytes_per_param: Figure = 2.0
    failures_per_accelerator_day: Figure | None = _DEFAULT["failures_per_accelerator_day"]
    checkpoint_write_minutes: Figure = _DEFAULT["checkpoint_write_minutes"]
    restart_minutes: Figure = _DEFAULT["restart_minutes"]
    global_batch_tokens: Figure | None = _DEFAULT["global_batch_tokens"]
    tensor_parallel: Figure = _DEFAULT["tensor_parallel"]
    pipeline_parallel: Figure = _DEFAULT["pipeline_parallel"]
    sequence_tokens: Figure = _DEFAULT["sequence_tokens"]
    pipeline_interleave: Figure = _DEFAULT["pipeline_interleave"]
    interconnect_gb_per_s: Figure = _DEFAULT["interconnect_gb_per_s"]
    comm_overlap: Figure = _DEFAULT["comm_overlap"]
    hbm_gb: Figure | None = _DEFAULT["hbm_gb"]
    training_state_bytes_per_param: Figure = _DEFAULT["training_state_bytes_per_param"]
    purchase_usd_per_accelerator: Figure | None = _DEFAULT["purchase_usd_per_accelerator"]
    amortisation_years: Figure = _DEFAULT["amortisation_years"]
    utilisation: Figure = _DEFAULT["utilisation"]
    other_costs_usd: Figure = _DEFAULT["other_costs_usd"]


def estimate(*args, **kwargs):
    """Every output of one training plan (or of arrays of plans), as a dict of floats/arrays.

    ``estimate(plan)`` takes a :class:`Plan`; the keyword form, ``estimate(total_params,
    training_tokens, accelerators, **inputs)``, builds one from :class:`Plan`'s fields.

    Throughput: ``effective_tflops`` when given (sustained, as the methodology takes it, used
    as is); otherwise ``peak_tflops x mfu x goodput x scaling``, where goodput is the given
    value or, with ``failures_per_accelerator_day``, :func:`goodput` of the job MTBF, and
    scaling is :func:`scaling_efficiency` when ``global_batch_tokens`` is given (else 1).

    Hourly price: ``usd_per_accelerator_hour`` when given, else the ownership equivalent
    when ``purchase_usd_per_accelerator`` is given; electricity cost and CO2 need
    ``usd_per_kwh`` and ``grams_co2_per_kwh``. An output whose inputs are missing is NaN.

    Returns
    -------
    dict
        Keys: ``effective_tflops``, ``training_flops``, ``accelerator_hours``,
        ``wall_clock_days``, ``checkpoint_gb``, ``usd_per_accelerator_hour``,
        ``compute_cost_usd``, ``electricity_kwh``, ``electricity_cost_usd``, ``co2_tonnes``,
        ``total_cost_usd``, ``goodput``, ``scaling_efficiency``, ``cluster_mtbf_hours``,
        ``checkpoint_interval_hours``, ``min_accelerators_for_memory``,
        ``iterations_per_year``, ``chinchilla_tokens``, ``tokens_per_param``.

    Examples
    --------
    The DeepSeek-V3-like example plan:

    >>> r = estimate(671e9, 14.8e12, 2048, active_params=37e9, effective_tflops=400,
    ...              usd_per_accelerator_hour=2.0)
    >>> f"{r['training_flops']:.3e}", f"{r['accelerator_hours']:,.0f}"
    ('3.286e+24', '2,281,667')
    >>> round(r["wall_clock_days"], 1)
    46.4
    """
    if args and isinstance(args[0], Plan):
        if len(args) > 1 or kwargs:
            raise TypeError("estimate() takes a Plan alone, or the plan's inputs")
        return _estimate(args[0])
    return _estimate(Plan(*args, **kwargs))


estimate.__signature__ = inspect.Signature(  # Plan's fields, as estimate's parameters
    [
        q.replace(annotation=inspect.Parameter.empty)
        for q in inspect.signature(Plan).parameters.values()
    ]
)


@_checked_results
def _estimate(p):
    """:func:`estimate` of the :class:`Plan` ``p``, in named steps."""
    total, active, tokens, n = _checked_arguments(p)
    nan = np.full(_shape_of((total, active, n)), np.nan)
    through = _throughput(p, n, active, total, nan)
    flops = training_flops(active, tokens)
    hours = np.asarray(accelerator_hours(flops, through["effective_tflops"]))
    days = wall_clock_days(hours, n)
    price = _hourly_price(p, nan)
    memory = nan
    if p.hbm_gb is not None:
        memory = min_accelerators_for_memory(total, p.hbm_gb, p.training_state_bytes_per_param)
    out = {
        "effective_tflops": through["effective_tflops"],
        "training_flops": flops,
        "accelerator_hours": hours,
        "wall_clock_days": days,
        "checkpoint_gb": checkpoint_gb(total, p.checkpoint_bytes_per_param),
        "usd_per_accelerator_hour": price,
        **_energy_and_costs(p, hours, price, nan),
        "goodput": through["goodput"],
        "scaling_efficiency": through["scaling_efficiency"],
        "cluster_mtbf_hours": through["cluster_mtbf_hours"],
        "checkpoint_interval_hours": through["checkpoint_interval_hours"],
        "min_accelerators_for_memory": memory,
        "iterations_per_year": iterations_per_year(days),
        "chinchilla_tokens": chinchilla_tokens(total),
        "tokens_per_param": tokens / total,
    }
    return out  # one shape once checked (_checked_results)


# -- estimate(), step by step -----------------------------------------------------------------


def _checked_arguments(p):
    """Check every argument of :func:`estimate`, also one this plan does not use: a bad value
    is never ignored. Parameters and tokens must reach their plausibility floors
    (:func:`udfs.validation.check_plausible`: below, a unit slip such as 70 for 70 billion).
    Returns the model's checked arrays (total, active, tokens, accelerators)."""
    total = check_plausible("total_params", p.total_params)
    active = total
    if p.active_params is not None:
        active = check_plausible("active_params", p.active_params)
    check_at_most("active_params", active, "total_params", total)
    tokens = check_plausible("training_tokens", p.training_tokens)
    n = check_whole("accelerators", p.accelerators)
    for name, check in _PLAN_CHECKS.items():
        value = getattr(p, name)
        if value is not None:
            check(name, value)
    return total, active, tokens, n


def _plan_checks():
    """Each :class:`Plan` field with a bound in the quantities spec but the four the model
    checks first (parameters, tokens, accelerators), and its check, in the field order."""
    first = {"total_params", "active_params", "training_tokens", "accelerators"}
    return {
        name: bound_check(_BOUNDS[name])
        for name in Plan.__dataclass_fields__
        if name in _BOUNDS and name not in first
    }


_BOUNDS = {
    q.name: q.bound
    for q in (*_PLAN_INPUTS, *_ENGINE_INPUTS, *_MODEL_INPUTS, *_MODEL_CONSTANTS)
    if q.bound is not None
}
_BOUNDS["effective_tflops"] = _BOUNDS["effective_tflops_input"]
#: estimate()'s other arguments and their rules (a None argument is not given, and not
#: checked).
_PLAN_CHECKS = _plan_checks()


def _throughput(p, n, active, total, nan):
    """Sustained TFLOP/s per accelerator: ``effective_tflops`` as given, or derived.

    Derived: the spec's ``effective_tflops`` (peak x MFU x goodput) times the scaling
    efficiency, where goodput is the given one or, with ``failures_per_accelerator_day``,
    :func:`goodput` of the job MTBF. Returns the throughput and the figures behind it
    (NaN where they do not apply).
    """
    out = {"cluster_mtbf_hours": np.asarray(nan), "checkpoint_interval_hours": np.asarray(nan)}
    if p.effective_tflops is not None:
        for name in ("peak_tflops", "mfu", "goodput"):
            if getattr(p, name) is not None:
                raise InputError(name, "cannot be combined with effective_tflops (give one)")
        if p.failures_per_accelerator_day is not None or p.global_batch_tokens is not None:
            raise InputError(
                "effective_tflops",
                "is used as is; leave it out to derive throughput from failures or scaling",
            )
        out["effective_tflops"] = check_positive("effective_tflops", p.effective_tflops)
        out["goodput"] = out["scaling_efficiency"] = np.asarray(nan)
        return out
    if p.peak_tflops is None or p.mfu is None:
        raise InputError(
            "effective_tflops", "is required (or give peak_tflops and mfu to derive it)"
        )
    peak = check_positive("peak_tflops", p.peak_tflops)
    u = check_fraction("mfu", p.mfu)
    if p.failures_per_accelerator_day is not None:
        out.update(_goodput_from_failures(p, n))
    else:
        good = p.goodput
        out["goodput"] = np.asarray(1.0) if good is None else check_fraction("goodput", good)
    scale = np.asarray(1.0)
    if p.global_batch_tokens is not None:
        scale = np.asarray(_scaling(p, n, active, total, peak * u))
    out["scaling_efficiency"] = scale
    eff = _spec("effective_tflops", peak_tflops=peak, mfu=u, goodput=out["goodput"])
    out["effective_tflops"] = eff * scale
    return out


def _goodput_from_failures(p, n):
    """Goodput, job MTBF and checkpoint interval from the failure rate (Young/Daly)."""
    if p.goodput is not None:
        raise InputError("goodput", "cannot be combined with failures_per_accelerator_day")
    mtbf = np.asarray(cluster_mtbf_hours(n, p.failures_per_accelerator_day))
    d = check_positive("checkpoint_write_minutes", p.checkpoint_write_minutes) / 60.0
    r = check_non_negative("restart_minutes", p.restart_minutes) / 60.0
    interval = np.asarray(checkpoint_interval_hours(d, mtbf))
    try:
        good = np.asarray(goodput(mtbf, d, r))
    except InputError as err:
        raise InputError(
            "failures_per_accelerator_day",
            "is so high that checkpointing and restarts leave no time to train",
            err.position,
        ) from None
    return {"goodput": good, "cluster_mtbf_hours": mtbf, "checkpoint_interval_hours": interval}


def _scaling(p, n, active, total, tflops_per_accelerator):
    """:func:`scaling_efficiency` of the plan's batch and parallelism."""
    return scaling_efficiency(
        n,
        active,
        total,
        p.global_batch_tokens,
        tflops_per_accelerator,
        *(getattr(p, name) for name in _SCALING_INPUTS),
    )


def _hourly_price(p, nan):
    """US$ per accelerator-hour: the rental price, else the ownership equivalent, else NaN."""
    if p.usd_per_accelerator_hour is not None:
        if p.purchase_usd_per_accelerator is not None:
            raise InputError(
                "purchase_usd_per_accelerator",
                "cannot be combined with usd_per_accelerator_hour (give one price)",
            )
        return check_non_negative("usd_per_accelerator_hour", p.usd_per_accelerator_hour)
    if p.purchase_usd_per_accelerator is not None:
        return np.asarray(
            ownership_usd_per_accelerator_hour(
                p.purchase_usd_per_accelerator, p.amortisation_years, p.utilisation
            )
        )
    return nan


def _energy_and_costs(p, hours, price, nan):
    """Compute cost, electricity (kWh and US$), emissions and the total, by the spec's formulas.

    An unpriced electricity (``usd_per_kwh`` None) adds nothing to the total; other costs
    are added to it. The outputs are checked by :func:`estimate`'s wrapper.
    """
    kwh = np.asarray(electricity_kwh(hours, p.watts_per_accelerator, p.server_overhead, p.pue))
    rental = _spec("compute_cost_usd", accelerator_hours=hours, usd_per_accelerator_hour=price)
    kwh_cost = nan
    if p.usd_per_kwh is not None:
        usd_per_kwh = check_non_negative("usd_per_kwh", p.usd_per_kwh)
        kwh_cost = _spec("electricity_cost_usd", electricity_kwh=kwh, usd_per_kwh=usd_per_kwh)
    co2 = nan
    if p.grams_co2_per_kwh is not None:
        grams = check_non_negative("grams_co2_per_kwh", p.grams_co2_per_kwh)
        co2 = _spec("co2_tonnes", electricity_kwh=kwh, grams_co2_per_kwh=grams)
    other = check_non_negative("other_costs_usd", p.other_costs_usd)
    priced = unpriced_as_zero(kwh_cost)
    total = _spec("total_cost_usd", compute_cost_usd=rental, electricity_cost_usd=priced)
    return {
        "compute_cost_usd": rental,
        "electricity_kwh": kwh,
        "electricity_cost_usd": kwh_cost,
        "co2_tonnes": co2,
        "total_cost_usd": np.asarray(total) + other,
    }


def unpriced_as_zero(value):
    """An unpriced (NaN) figure adds 0 to a total; an overflow stays infinite, for the checks."""
    value = np.asarray(value, dtype=float)
    return np.where(np.isnan(value), 0.0, value)
