"""The engine's sizing functions beyond the plan's linear core: the accelerators whose memory
holds the training state, an owned accelerator's hourly price, the inverse solves, the
Chinchilla tokens and loss, the MFU implied by disclosed figures and a run's calendar months.

Like :mod:`udfs.engine` (which re-exports every name here), each function accepts scalars or
array-likes, checks its inputs (:class:`udfs.validation.InputError` names the argument, the
position and the rule) and computes its quantity's formula from the model spec when it has
one (``_spec``, :func:`udfs.model.compute`). No I/O, nothing from Excel tooling.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from .failures import _float_or_array
from .model import compute as _spec
from .quantities import CHINCHILLA_TOKENS_PER_PARAM
from .quantities import MODEL_CONSTANTS as _MODEL_CONSTANTS
from .validation import InputError, check_fraction, check_non_negative, check_positive

__all__ = [
    "HOURS_PER_YEAR",
    "CHINCHILLA_FITS",
    "min_accelerators_for_memory",
    "ownership_usd_per_accelerator_hour",
    "accelerators_for_days",
    "chinchilla_tokens",
    "chinchilla_loss",
    "implied_effective_tflops",
    "implied_mfu",
    "month_shares",
]

#: Hours in the spec's year (``days_per_year`` x 24), for amortisation.
HOURS_PER_YEAR = next(q.default for q in _MODEL_CONSTANTS if q.name == "days_per_year") * 24.0

# ---------------------------------------------------------------------------------------------
# Memory, ownership, inverse solves, Chinchilla, calibration
# ---------------------------------------------------------------------------------------------


def min_accelerators_for_memory(total_params, hbm_gb, bytes_per_param=16.0, usable_fraction=1.0):
    """Fewest accelerators whose HBM holds the sharded training state.

    ``ceil(total x bytes_per_param / (hbm_gb x 1e9 x usable_fraction))``, the training state
    fully sharded (ZeRO-3 / FSDP). Activations, temporary buffers and fragmentation are
    excluded: lower ``usable_fraction`` to leave room for them.

    Parameters
    ----------
    total_params : scalar or array_like
        All parameters (> 0).
    hbm_gb : scalar or array_like
        HBM per accelerator, GB (H100: 80).
    bytes_per_param : scalar or array_like, default 16
        Mixed-precision Adam: 2 weights + 2 gradients + 4 master weights + 4 + 4 Adam
        moments (EleutherAI "Transformer Math 101"); 20 with FP32 gradients.
    usable_fraction : scalar or array_like, default 1.0
        Share of HBM available to the training state, in (0, 1].

    Examples
    --------
    >>> min_accelerators_for_memory(405e9, 80)
    81.0
    """
    p = check_positive("total_params", total_params)
    h = check_positive("hbm_gb", hbm_gb)
    b = check_positive("bytes_per_param", bytes_per_param)
    u = check_fraction("usable_fraction", usable_fraction)
    # Round before ceil so that an exact fit (e.g. 6.48e12 / 8e10 = 81) is not pushed up by
    # binary floating-point noise.
    usable = h if np.all(u == 1) else h * u  # GB of HBM the training state may use
    return _spec(
        "min_accelerators_for_memory",
        total_params=p,
        hbm_gb=usable,
        training_state_bytes_per_param=b,
    )


def ownership_usd_per_accelerator_hour(
    purchase_usd_per_accelerator, amortisation_years, utilisation=1.0, opex_usd_per_hour=0.0
):
    """Equivalent hourly price of an owned accelerator.

    ``purchase / (years x 8760 x utilisation) + opex``: straight-line depreciation spread
    over the hours the accelerator is actually busy (server life 3-5 years, Epoch AI
    arXiv 2405.21015). No financing cost or residual value.

    Parameters
    ----------
    purchase_usd_per_accelerator : scalar or array_like
        Capital cost per accelerator including its share of server and network, US$.
    amortisation_years : scalar or array_like
        Depreciation period, years (> 0).
    utilisation : scalar or array_like, default 1.0
        Share of hours the accelerator is rented to jobs, in (0, 1].
    opex_usd_per_hour : scalar or array_like, default 0
        Hosting, maintenance and staff per accelerator-hour (electricity is separate).

    Examples
    --------
    A $30,000 accelerator over 4 years at 80% utilisation:

    >>> round(ownership_usd_per_accelerator_hour(30_000, 4, 0.8), 3)
    1.07
    """
    c = check_non_negative("purchase_usd_per_accelerator", purchase_usd_per_accelerator)
    y = check_positive("amortisation_years", amortisation_years)
    u = check_fraction("utilisation", utilisation)
    o = check_non_negative("opex_usd_per_hour", opex_usd_per_hour)
    return _float_or_array(c / (y * HOURS_PER_YEAR * u) + o)


def accelerators_for_days(accelerator_hours, target_days):
    """Accelerators needed to finish in ``target_days`` at linear scaling (not rounded).

    The inverse of :func:`wall_clock_days`: ``hours / (24 x days)``. Round up for a count.

    Examples
    --------
    >>> accelerators_for_days(30e6, 80)
    15625.0
    """
    h = check_positive("accelerator_hours", accelerator_hours)
    d = check_positive("target_days", target_days)
    return _spec("accelerators_for_days", accelerator_hours=h, target_days=d)


def chinchilla_tokens(params, tokens_per_param=CHINCHILLA_TOKENS_PER_PARAM):
    """Compute-optimal training tokens, about 20 per parameter (Hoffmann et al. 2022).

    Examples
    --------
    >>> chinchilla_tokens(70e9)
    1400000000000.0
    """
    p = check_positive("params", params)
    t = check_positive("tokens_per_param", tokens_per_param)
    return _float_or_array(p * t)


#: Loss fits L(N, D) = E + A / N^alpha + B / D^beta.
CHINCHILLA_FITS = {
    # Hoffmann et al. 2022 (arXiv 2203.15556), approach 3.
    "hoffmann": {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28},
    # Besiroglu et al. 2024 replication refit (arXiv 2404.10102).
    "epoch": {"E": 1.8172, "A": 482.01, "B": 2085.43, "alpha": 0.3478, "beta": 0.3658},
}


def chinchilla_loss(params, tokens, fit="hoffmann"):
    """Predicted pre-training loss (nats per token) from the Chinchilla parametric fit.

    Parameters
    ----------
    params, tokens : scalar or array_like
        Parameters and training tokens (> 0).
    fit : {"hoffmann", "epoch"}
        Hoffmann et al. 2022, or the Besiroglu et al. 2024 refit.

    Examples
    --------
    >>> round(chinchilla_loss(70e9, 1.4e12), 3)
    1.937
    """
    if fit not in CHINCHILLA_FITS:
        raise InputError("fit", f"must be one of {', '.join(CHINCHILLA_FITS)}", value=fit)
    c = CHINCHILLA_FITS[fit]
    n = check_positive("params", params)
    d = check_positive("tokens", tokens)
    return _float_or_array(c["E"] + c["A"] / n ** c["alpha"] + c["B"] / d ** c["beta"])


def implied_effective_tflops(training_flops, accelerator_hours):
    """Sustained TFLOP/s per accelerator implied by disclosed FLOPs and accelerator-hours.

    Examples
    --------
    Llama 3.1 405B: 6 x 405e9 x 15.6e12 FLOPs in 30.84M H100-hours.

    >>> round(implied_effective_tflops(6 * 405e9 * 15.6e12, 30.84e6))
    341
    """
    f = check_positive("training_flops", training_flops)
    h = check_positive("accelerator_hours", accelerator_hours)
    return _spec("implied_effective_tflops", training_flops=f, accelerator_hours=h)


def implied_mfu(training_flops, accelerator_hours, peak_tflops):
    """MFU implied by disclosed figures: implied TFLOP/s over peak TFLOP/s.

    Lower than a paper's MFU when the disclosed hours include failures, restarts,
    evaluation or other phases.

    Examples
    --------
    >>> round(implied_mfu(6 * 405e9 * 15.6e12, 30.84e6, 989.4), 3)
    0.345
    """
    t = np.asarray(implied_effective_tflops(training_flops, accelerator_hours))
    p = check_positive("peak_tflops", peak_tflops)
    mfu = np.asarray(_spec("implied_mfu", implied_effective_tflops=t, peak_tflops=p))
    if np.any(mfu > 1.0):
        pos = None if np.ndim(mfu) == 0 else tuple(int(i) for i in np.argwhere(mfu > 1)[0])
        raise InputError(
            "accelerator_hours",
            "is too few for these FLOPs at this peak (the implied MFU is above 1)",
            pos,
        )
    return _float_or_array(mfu)


def month_shares(start_date, wall_clock_days):
    """How a run's spend falls into calendar months, spread evenly over its wall-clock time.

    The run occupies ``[start, start + days)`` from midnight of ``start_date``; each month's
    share is its overlap with that interval over ``days``:
    ``max(0, min(days, next_month - start) - max(0, month - start)) / days``, in days counted
    from the start (so a run far shorter than a day still has its month). The planner workbook's
    monthly schedule uses the same formula.

    Parameters
    ----------
    start_date : datetime.date
        First day of training.
    wall_clock_days : float
        Length of the run in days (> 0).

    Returns
    -------
    list of (datetime.date, float)
        First day of each calendar month the run touches, and its share (the shares add
        up to 1).

    Examples
    --------
    >>> [(d.isoformat(), round(s, 4)) for d, s in month_shares(_dt.date(2025, 1, 17), 46.4)]
    [('2025-01-01', 0.3233), ('2025-02-01', 0.6034), ('2025-03-01', 0.0733)]
    """
    if isinstance(start_date, _dt.datetime):
        start_date = start_date.date()
    if not isinstance(start_date, _dt.date):
        raise InputError("start_date", "must be a date", value=start_date)
    days = float(check_positive("wall_clock_days", wall_clock_days))
    start = start_date.toordinal()
    month = _dt.date(start_date.year, start_date.month, 1)
    shares = []
    # Days counted from the start, so that a run far shorter than a day (1e-10 days, whose
    # end as an ordinal rounds back to its start) still falls in its first month.
    while month.toordinal() - start < days or not shares:
        nxt = _dt.date(month.year + month.month // 12, month.month % 12 + 1, 1)
        overlap = min(days, nxt.toordinal() - start) - max(0, month.toordinal() - start)
        shares.append((month, max(0.0, overlap) / days))
        month = nxt
    return shares
