"""Failures and checkpointing: failure rates, the job's MTBF, the checkpoint interval and the
goodput they leave (Young 1974, Daly 2006; Meta's failure rates, arXiv 2410.21680).

Every function accepts scalars or array-likes, broadcasts them with numpy, and returns a
``float`` for scalar input and an ``ndarray`` otherwise, as :mod:`udfs.engine` does (which
exports them); inputs are checked, a bad value raising :class:`udfs.validation.InputError`.
"""

from __future__ import annotations

import numpy as np

from .validation import (
    InputError,
    check_count,
    check_non_negative,
    check_positive,
    check_whole,
)

__all__ = [
    "failure_rate_per_accelerator_day",
    "failure_rate_from_node_days",
    "cluster_mtbf_hours",
    "checkpoint_interval_hours",
    "goodput",
]


def _float_or_array(x):
    """Scalar in, float out; array in, array out."""
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def failure_rate_per_accelerator_day(interruptions, days, accelerators):
    """Failure rate per accelerator per day from an observed count.

    Examples
    --------
    Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs (arXiv 2407.21783).

    >>> f"{failure_rate_per_accelerator_day(419, 54, 16_384):.3e}"
    '4.736e-04'
    """
    i = check_non_negative("interruptions", interruptions)
    d = check_positive("days", days)
    n = check_whole("accelerators", accelerators)
    return _float_or_array(i / d / n)


def failure_rate_from_node_days(failures_per_1000_node_days, accelerators_per_node=8):
    """Failure rate per accelerator-day from a rate quoted per 1,000 node-days.

    Meta's RSC clusters saw 6.50 and 2.34 failures per 1,000 node-days (arXiv 2410.21680),
    nodes of 8 GPUs.

    Examples
    --------
    >>> f"{failure_rate_from_node_days(6.5):.4e}"
    '8.1250e-04'
    """
    r = check_non_negative("failures_per_1000_node_days", failures_per_1000_node_days)
    k = check_count("accelerators_per_node", accelerators_per_node)
    return _float_or_array(r / 1000.0 / k)


def cluster_mtbf_hours(accelerators, failures_per_accelerator_day):
    """Mean time between failures of the whole job, in hours: 24 / (N x rate).

    A synchronous job stops when any accelerator (or its node) fails, so failure rates add
    up: MTTF = 1 / (N x r) (Meta RSC, arXiv 2410.21680). A rate quoted per 1,000 node-days
    of 8 accelerators is ``rate / 1000 / 8`` per accelerator-day.

    Examples
    --------
    Llama 3's observed rate on 16,384 GPUs gives one interruption every ~3.1 hours.

    >>> round(cluster_mtbf_hours(16_384, 419 / 54 / 16_384), 2)
    3.09
    """
    n = check_whole("accelerators", accelerators)
    r = check_positive("failures_per_accelerator_day", failures_per_accelerator_day)
    return _float_or_array(24.0 / (n * r))


def checkpoint_interval_hours(checkpoint_write_hours, mtbf_hours):
    """Optimal time between checkpoints (Daly 2006, with Young 1974 as its first term).

    ``tau = sqrt(2 d M) [1 + (1/3) sqrt(d / 2M) + (1/9)(d / 2M)] - d`` for ``d < 2M``,
    else ``tau = M``; ``d`` is the checkpoint write time and ``M`` the job MTBF.

    Examples
    --------
    >>> round(checkpoint_interval_hours(1 / 60, 3.09), 3)
    0.31
    """
    d = check_positive("checkpoint_write_hours", checkpoint_write_hours)
    m = check_positive("mtbf_hours", mtbf_hours)
    d, m = np.broadcast_arrays(d, m)
    x = d / (2.0 * m)
    young = np.sqrt(2.0 * d) * np.sqrt(m)  # not sqrt(2dm): that product can underflow to 0
    daly = young * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - d
    return _float_or_array(np.where(d < 2.0 * m, daly, m))


def goodput(mtbf_hours, checkpoint_write_hours, restart_hours, interval_hours=None):
    """Fraction of wall-clock time that advances training, given failures and checkpoints.

    ``goodput = 1 - (d / tau + (tau / 2 + R) / M)``: time spent writing
    checkpoints (``d / tau``), plus, per failure, half an interval of work redone and a
    restart ``R``, failures arriving every ``M`` hours (Daly 2006, first-order waste).

    Parameters
    ----------
    mtbf_hours : scalar or array_like
        Job MTBF in hours, see :func:`cluster_mtbf_hours`.
    checkpoint_write_hours : scalar or array_like
        Time the job stalls to write one checkpoint, hours (> 0).
    restart_hours : scalar or array_like
        Time from a failure to training again (detection, rescheduling, reload), hours.
    interval_hours : scalar or array_like, optional
        Checkpoint interval; default the optimum from :func:`checkpoint_interval_hours`.

    Returns
    -------
    float or ndarray
        A fraction in (0, 1]. Failures so frequent that the waste reaches 1 (the job
        cannot make progress) are an error naming ``mtbf_hours``.

    Examples
    --------
    Llama 3's rate (MTBF ~3.09 h) with 1-minute checkpoint writes and 5-minute restarts:

    >>> round(goodput(3.09, 1 / 60, 5 / 60), 3)
    0.869
    """
    m = check_positive("mtbf_hours", mtbf_hours)
    d = check_positive("checkpoint_write_hours", checkpoint_write_hours)
    r = check_non_negative("restart_hours", restart_hours)
    if interval_hours is None:
        tau = np.asarray(checkpoint_interval_hours(d, m))
    else:
        tau = check_positive("interval_hours", interval_hours)
    waste = d / tau + (tau / 2.0 + r) / m
    if np.any(waste >= 1.0):
        pos = None if np.ndim(waste) == 0 else tuple(int(i) for i in np.argwhere(waste >= 1)[0])
        if interval_hours is not None:
            _blame_interval(m, d, r, tau, pos)
        raise InputError(
            "mtbf_hours",
            "is too short: checkpoint writes, redone work and restarts leave no time to train",
            pos,
        )
    return _float_or_array(1.0 - waste)


def _blame_interval(m, d, r, tau, pos):
    """Raise the InputError naming a typed checkpoint interval when it is the largest waste
    term: far too long (the work redone after each failure) or too short (all the time spent
    writing). Returns when the restarts weigh more (the caller names mtbf_hours)."""
    shape = np.broadcast_shapes(*(np.shape(x) for x in (m, d, r, tau)))

    def at(x):
        x = np.asarray(x, dtype=float)
        return float(np.broadcast_to(x, shape)[pos] if pos is not None else x)

    m_, d_, tau_ = at(m), at(d), at(tau)
    writing, redone, restart = d_ / tau_, tau_ / 2.0 / m_, at(r) / m_
    best = float(np.sqrt(2.0 * d_ * m_))
    if restart > max(writing, redone):
        return  # the MTBF against the write time, or the restarts: mtbf_hours names all three
    if redone >= writing:
        rule = (
            f"is too long for an MTBF of {m_:.4g} h: half an interval of work is redone "
            f"after each failure, leaving no time to train (the optimum is about "
            f"{best:.3g} h)"
        )
    else:
        rule = (
            f"is too short for checkpoint writes of {d_:.4g} h: writing takes all the "
            f"time (the optimum is about {best:.3g} h)"
        )
    raise InputError("interval_hours", rule, pos, value=tau_)
