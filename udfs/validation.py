"""Input rules shared by the engine and every face (formulas, command line, workbook reader).

Each check takes the argument's name, converts the value to a float array and raises
:class:`InputError` naming the argument, the first offending position (for arrays) and the
rule it broke. The faces translate the argument name into their own vocabulary (a flag,
a cell, an Excel argument).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "InputError",
    "as_array",
    "is_blank",
    "check_finite",
    "check_positive",
    "check_non_negative",
    "check_fraction",
    "check_at_most",
    "check_whole",
]


class InputError(ValueError):
    """A bad input value.

    Attributes
    ----------
    argument : str
        The engine's name for the argument (``active_params``, ``mfu``...).
    rule : str
        The rule it broke, as a phrase ("must be greater than 0").
    position : tuple of int or None
        Index of the first offending element when the input is an array.
    value : object
        The offending value.
    """

    def __init__(self, argument, rule, position=None, value=None):
        self.argument = argument
        self.rule = rule
        self.position = position
        self.value = value
        super().__init__(self.describe())

    def describe(self, argument_label=None, position_label=None):
        label = argument_label or self.argument
        where = ""
        if self.position is not None:
            where = f" at {position_label or _format_position(self.position)}"
        shown = "" if self.value is None else f" (got {_format_value(self.value)})"
        return f"{label}{where} {self.rule}{shown}"


def is_blank(value):
    """True for a missing value: None, empty or all-space text, or NaN (a blank figure)."""
    return (
        value is None
        or (isinstance(value, str) and not value.strip())
        or (isinstance(value, float) and value != value)
    )


def _format_position(position):
    return "position " + ",".join(str(i) for i in position)


def _format_value(value):
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


def _first_bad(mask):
    """Index tuple of the first True in ``mask`` (None for a scalar)."""
    if mask.ndim == 0:
        return None
    return tuple(int(i) for i in np.argwhere(mask)[0])


def as_array(name, value):
    """``value`` as a float ndarray; text, booleans and None are rejected by name."""
    if value is None:
        raise InputError(name, "is required (got nothing)")
    if isinstance(value, bool | np.bool_):
        raise InputError(name, "must be a number, not TRUE/FALSE")
    if isinstance(value, str):
        raise InputError(name, "must be a number, not text", value=value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "iu":
        return value  # whole numbers already: no float copy (counts of accelerators)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        arr = np.asarray(value, dtype=object)
        for idx, item in np.ndenumerate(arr):
            if item is None:
                raise InputError(name, "is blank", position=idx or None) from None
            if isinstance(item, bool | np.bool_):
                raise InputError(name, "must be a number, not TRUE/FALSE", idx or None) from None
            try:
                float(item)
            except (TypeError, ValueError):
                raise InputError(name, "must be a number, not text", idx or None, item) from None
        raise InputError(name, "must be a number") from None
    if arr.dtype == bool:
        raise InputError(name, "must be a number, not TRUE/FALSE")
    return arr


def check_finite(name, value):
    """Float array of ``value``; NaN and infinity are rejected."""
    arr = as_array(name, value)
    bad = ~np.isfinite(arr)
    if bad.any():
        pos = _first_bad(bad)
        got = arr[pos] if pos is not None else arr.item()
        raise InputError(name, "must be a finite number", pos, float(got))
    return arr


def _check(name, value, bad_of, rule, low_ok, high_ok):
    """Check ``value`` with a fast path: two reductions (min, max) decide most inputs; only a
    failing input pays for locating the first bad element and naming the rule it broke."""
    arr = as_array(name, value)
    if arr.size:
        lo, hi = _min_max(arr)  # NaN propagates into both and fails the fast path
        if low_ok(lo) and high_ok(hi) and np.isfinite(lo) and np.isfinite(hi):
            return arr
    arr = check_finite(name, arr)
    bad = bad_of(arr)
    if np.any(bad):
        pos = _first_bad(np.asarray(bad))
        got = arr[pos] if pos is not None else arr.item()
        raise InputError(name, rule, pos, float(got))
    return arr


_CHUNK = 1 << 16  # 512 KiB of float64: both reductions run while the chunk is in cache


def _min_max(arr):
    """``(min, max)`` of ``arr`` with one trip through memory for large arrays (NaN propagates)."""
    flat = arr.reshape(-1)
    if flat.size <= _CHUNK:
        return flat.min(), flat.max()
    lo, hi = flat[:1].min(), flat[:1].max()
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start : start + _CHUNK]
        lo = np.minimum(lo, chunk.min())
        hi = np.maximum(hi, chunk.max())
    return lo, hi


def _always(_):
    return True


def check_positive(name, value):
    """Finite and greater than zero."""
    return _check(
        name, value, lambda a: a <= 0, "must be greater than 0", lambda lo: lo > 0, _always
    )


def check_non_negative(name, value):
    """Finite and zero or more."""
    return _check(name, value, lambda a: a < 0, "must be 0 or more", lambda lo: lo >= 0, _always)


def check_fraction(name, value, *, allow_zero=False):
    """Finite, in (0, 1] (or [0, 1] with ``allow_zero``)."""
    if allow_zero:
        return _check(
            name,
            value,
            lambda a: (a < 0) | (a > 1),
            "must be between 0 and 1",
            lambda lo: lo >= 0,
            lambda hi: hi <= 1,
        )
    return _check(
        name,
        value,
        lambda a: (a <= 0) | (a > 1),
        "must be greater than 0 and at most 1",
        lambda lo: lo > 0,
        lambda hi: hi <= 1,
    )


def check_at_least(name, value, minimum):
    """Finite and at least ``minimum``."""
    return _check(
        name,
        value,
        lambda a: a < minimum,
        f"must be at least {minimum:g}",
        lambda lo: lo >= minimum,
        _always,
    )


def check_whole(name, value):
    """Finite, greater than zero and a whole number (a count of accelerators)."""
    arr = check_positive(name, value)
    if arr.dtype.kind in "iu":
        return arr
    if arr.size and not np.array_equal(np.trunc(arr), arr):
        return _check(
            name,
            arr,
            lambda a: a != np.trunc(a),
            "must be a whole number",
            lambda lo: False,
            _always,
        )
    return arr


def check_at_most(name, value, other_name, other):
    """``value <= other`` element-wise, after broadcasting (both already checked)."""
    a, b = np.broadcast_arrays(np.asarray(value, float), np.asarray(other, float))
    bad = a > b
    if bad.any():
        pos = _first_bad(bad)
        got = a[pos] if pos is not None else a.item()
        raise InputError(name, f"must not exceed {other_name}", pos, float(got))
    return value
