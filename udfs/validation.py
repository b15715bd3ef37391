"""Input rules shared by the engine and every face (formulas, command line, workbook reader).

Each check takes the argument's name, converts the value to a float array and raises
:class:`InputError` naming the argument, the first offending position (for arrays) and the
rule it broke. The faces translate the argument name into their own vocabulary (a flag,
a cell, an Excel argument).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .quantities import (
    FRACTION,
    MAX_RUN_FIGURE,
    MIN_PLAUSIBLE,
    NON_NEGATIVE,
    PLAUSIBLE_SLIPS,
    POSITIVE,
    Bound,
)

__all__ = [
    "CommandError",
    "InputError",
    "OutOfRangeError",
    "SMALLEST_NORMAL",
    "LARGEST",
    "check_result",
    "drivers_of",
    "as_array",
    "is_blank",
    "check_finite",
    "check_positive",
    "check_plausible",
    "implausible_rule",
    "plausibility_advice",
    "check_non_negative",
    "check_fraction",
    "check_at_least",
    "check_bound",
    "bound_check",
    "bound_stages",
    "bound_refusal",
    "check_at_most",
    "check_whole",
    "check_count",
    "MAX_ECHO_CHARS",
    "MAX_NAME_BYTES",
    "MAX_TEXT_CHARS",
    "printable",
    "control_character",
    "echo",
    "console_line",
    "check_name",
]


#: The smallest positive normal float (2.2e-308): below it numbers lose precision (denormals).
SMALLEST_NORMAL = float(np.finfo(float).tiny)
#: The largest float (1.8e308): above it a figure is infinity.
LARGEST = float(np.finfo(float).max)
_DENORMAL_RULE = "is too close to 0 to compute with (a denormal number, below 2.2e-308)"


class CommandError(Exception):
    """A user-facing error of a face (a command, a file, a workbook): one line for a person.

    The command line prints it as ``compute-lab COMMAND: error: ...`` and exits with status 2.
    It lives in the core, beside :class:`InputError`, so that a face raises it without
    importing another face or the command line (:mod:`compute_lab`).
    """


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


class OutOfRangeError(InputError):
    """A computed figure out of the range a float holds, naming the inputs that drove it there.

    Raised instead of returning infinity, NaN, or a figure that underflowed to a denormal
    (or to 0 where 0 cannot be right).

    Attributes
    ----------
    result : str
        The engine's name for the figure (``total_cost_usd``).
    result_label : str
        The figure in words ("total cost").
    bound : str
        "above 1.8e308", "below 2.2e-308" or "not a number".
    drivers : list of (str, float)
        The inputs most responsible, first the most: engine argument name and its value
        (at ``position`` for arrays). ``argument`` and ``value`` are the first of them.
    """

    def __init__(self, result, bound, drivers, position=None, result_label=None):
        self.result = result
        self.result_label = result_label or result.replace("_", " ")
        self.bound = bound
        self.drivers = list(drivers)
        argument, value = self.drivers[0] if self.drivers else (result, None)
        super().__init__(
            argument, f"drives {self.result_label} out of range ({bound})", position, value
        )

    def describe(self, argument_label=None, position_label=None, label_of=None):
        """``"total cost is out of range (above 1.8e308): lower usd_per_kwh (1e+300)"``.

        ``label_of`` maps every driver's name to the face's own (a flag, an Excel argument);
        without it, ``argument_label`` names the first driver and the rest keep their names.
        """
        where = ""
        if self.position is not None:
            where = f" at {position_label or _format_position(self.position)}"
        text = f"{self.result_label}{where} is out of range ({self.bound})"
        parts = []
        last_advice = None
        for i, (name, value) in enumerate(self.drivers):
            if label_of is not None:
                label = label_of(name)
            elif i == 0 and argument_label:
                label = argument_label
            else:
                label = name
            advice = "lower" if abs(value) > 1 else "raise"
            lead = "" if advice == last_advice else f"{advice} "
            parts.append(f"{lead}{label} ({_format_value(float(value))})")
            last_advice = advice
        if parts:
            text += ": " + " or ".join(parts)
        return text


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
    """A value as a message shows it: six significant digits (``1e+305``, ``2.5``), more when
    six would change it (``999999999``, not ``1e+09`` beside a bound of 1e9)."""
    if isinstance(value, float):
        text = f"{value:g}"
        digits = 6
        while (
            digits < 17 and value == value and abs(value) != float("inf") and float(text) != value
        ):
            digits += 1
            text = f"{value:.{digits}g}"
        return text
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
    failing input (or one holding zeros) pays for locating the first bad element and naming
    the rule it broke. Denormal numbers (non-zero, below 2.2e-308) are refused: arithmetic on
    them loses precision and their reciprocals overflow.

    A plain number (a Python float or int, a numpy float64) that passes is checked with
    Python comparisons and returned as a numpy float64 scalar, with no array made: the
    small-call path (one plan, a single-cell formula). Anything else, or a failing number,
    takes the array path and its error."""
    x = _plain_float(value)
    if x is not None and low_ok(x) and high_ok(x) and (x == 0.0 or _usable(x)):
        return _float64(x)
    arr = as_array(name, value)
    if arr.size:
        lo, hi = _min_max(arr)  # NaN propagates into both and fails the fast path
        lo, hi = float(lo), float(hi)
        if (
            low_ok(lo)
            and high_ok(hi)
            and -LARGEST <= lo  # finite: NaN fails every comparison
            and hi <= LARGEST
            and (lo >= SMALLEST_NORMAL or hi <= -SMALLEST_NORMAL)
        ):
            return arr
    arr = check_finite(name, arr)
    bad = bad_of(arr)
    if np.any(bad):
        pos = _first_bad(np.asarray(bad))
        got = float(arr[pos] if pos is not None else arr.item())
        raise InputError(name, rule(got) if callable(rule) else rule, pos, got)
    if arr.dtype.kind == "f":
        tiny = (arr != 0) & (np.abs(arr) < SMALLEST_NORMAL)
        if tiny.any():
            pos = _first_bad(tiny)
            got = arr[pos] if pos is not None else arr.item()
            raise InputError(name, _DENORMAL_RULE, pos, float(got))
    return arr


_float64 = np.float64
_PLAIN_TYPES = frozenset({float, int, np.float64})


def _plain_float(value):
    """``value`` as a float when it is a plain number (float, int, float64), else None."""
    if type(value) in _PLAIN_TYPES:
        try:
            return float(value)
        except OverflowError:  # an int beyond a float: the array path refuses it
            return None
    return None


def _usable(x):
    """Finite and not a denormal (nor 0): what the fast path of :func:`_check` lets through."""
    return SMALLEST_NORMAL <= abs(x) <= LARGEST


_min_reduce, _max_reduce = np.minimum.reduce, np.maximum.reduce
_CHUNK = 1 << 16  # 512 KiB of float64: both reductions run while the chunk is in cache


def _min_max(arr):
    """``(min, max)`` of ``arr`` with one trip through memory for large arrays (NaN propagates)."""
    flat = arr.reshape(-1)
    if flat.size <= _CHUNK:
        return _min_reduce(flat), _max_reduce(flat)
    lo, hi = flat[:1].min(), flat[:1].max()
    for start in range(0, flat.size, _CHUNK):
        chunk = flat[start : start + _CHUNK]
        lo = np.minimum(lo, chunk.min())
        hi = np.maximum(hi, chunk.max())
    return lo, hi


def _always(_):
    return True


@functools.cache
def _range_test(low, high, low_inclusive, high_inclusive):
    """(bad_of, low_ok, high_ok) of a range: ``bad_of(array)`` marks the elements outside it,
    ``low_ok(smallest)`` and ``high_ok(largest)`` say whether the extremes are inside."""
    lo = None if low is None else float(low)
    hi = None if high is None else float(high)
    low_ok = _always if lo is None else (lo.__le__ if low_inclusive else lo.__lt__)
    high_ok = _always if hi is None else (hi.__ge__ if high_inclusive else hi.__gt__)

    def bad_of(a):
        bad = np.zeros(np.shape(a), bool)
        if lo is not None:
            bad |= (a < lo) if low_inclusive else (a <= lo)
        if hi is not None:
            bad |= (a > hi) if high_inclusive else (a >= hi)
        return bad

    return bad_of, low_ok, high_ok


def bound_refusal(bound):
    """The rule a value outside ``bound`` breaks, in words: "must be greater than 0", "must be
    0 or more", "must be at least 1", "must be greater than 0 and at most 1", "must be from
    1/365 (one day) to 100 years" (a closed range with a unit)."""
    if bound.closed and bound.unit:
        return f"must be from {bound.low_words} to {bound.high:g} {bound.unit}"
    parts = []
    if bound.low is not None:
        if not bound.low_inclusive:
            parts.append(f"greater than {bound.low_words}")
        elif bound.low == 0 and bound.high is None:
            parts.append("0 or more")
        else:
            parts.append(f"at least {bound.low_words}")
    if bound.high is not None:
        parts.append(f"{'at most' if bound.high_inclusive else 'less than'} {bound.high:g}")
    return "must be " + " and ".join(parts)


def _stage(low, high, low_inclusive, high_inclusive, rule):
    """One check of :func:`bound_stages`: (bad_of, rule, low_ok, high_ok) for :func:`_check`."""
    bad_of, low_ok, high_ok = _range_test(low, high, low_inclusive, high_inclusive)
    return bad_of, rule, low_ok, high_ok


@functools.cache
def bound_stages(bound):
    """The checks of ``bound``, in the order a value meets them, so that each refusal names
    the nearest rule broken:

    - a range of two ends above 0 first refuses a value not above 0 ("must be greater than
      0"; with a high end of 1, "must be greater than 0 and at most 1", a fraction), then a
      value outside the range (``0.001`` years: "must be from 1/365 (one day) to 100 years");
    - a range open at the top only (``[0, 1)``) refuses a value outside both ends ("must be
      between 0 and 1"), then the top itself ("must be less than 1");
    - any other range, in one rule (:func:`bound_refusal`).

    ``whole`` and the command line's ``ceiling`` are checked after them (:func:`check_bound`).
    """
    lo, hi = bound.low, bound.high
    stages = ()
    if lo is not None and hi is not None and lo > 0:
        stages = bound_stages(FRACTION if hi == 1 else POSITIVE)
    if lo is not None and hi is not None and bound.low_inclusive and not bound.high_inclusive:
        between = f"must be between {bound.low_words} and {hi:g}"
        return (
            *stages,
            _stage(lo, hi, True, True, between),
            _stage(lo, hi, True, False, f"must be less than {hi:g}"),
        )
    return (
        *stages,
        _stage(lo, hi, bound.low_inclusive, bound.high_inclusive, bound_refusal(bound)),
    )


def check_bound(name, value, bound, *, ceiling=False):
    """``value`` checked against ``bound`` (a :class:`udfs.quantities.Bound`): finite, in its
    range (:func:`bound_stages`), a whole number when ``bound.whole`` and, with ``ceiling``
    (the command line), at most ``bound.ceiling`` ("must be at most 1e9")."""
    for bad_of, rule, low_ok, high_ok in bound_stages(bound):
        value = _check(name, value, bad_of, rule, low_ok, high_ok)
    if bound.whole:
        value = _check_whole_number(name, value)
    if ceiling and bound.ceiling is not None:
        _check(name, value, *_ceiling_stage(bound))
    return value


@functools.cache
def _ceiling_stage(bound):
    return _stage(None, bound.ceiling, True, True, f"must be at most {bound.ceiling_words}")


def bound_check(bound, *, ceiling=False):
    """``check(name, value)``: :func:`check_bound` of ``bound``, its stages made once (the
    checks of a table of inputs, such as the engine's and the command line's)."""
    stages = bound_stages(bound)
    top = _ceiling_stage(bound) if ceiling and bound.ceiling is not None else None

    def check(name, value):
        for bad_of, rule, low_ok, high_ok in stages:
            value = _check(name, value, bad_of, rule, low_ok, high_ok)
        if bound.whole:
            value = _check_whole_number(name, value)
        if top is not None:
            _check(name, value, *top)
        return value

    return check


_POSITIVE = bound_stages(POSITIVE)[0]
_NON_NEGATIVE = bound_stages(NON_NEGATIVE)[0]
_FRACTION = bound_stages(FRACTION)[0]


def check_positive(name, value):
    """Finite and greater than zero."""
    bad_of, rule, low_ok, high_ok = _POSITIVE
    return _check(name, value, bad_of, rule, low_ok, high_ok)


def _bound_text(x):
    """A bound as the messages spell it: 1e6, 1e9 (not 1e+06)."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def plausibility_advice(quantity):
    """The advice for a count below its plausibility floor, the same on every face (the
    engine's message, the planner's Checks): ``"too few for a run planned on a cluster: was it
    typed in billions?"``; the full number to type is ``PLAUSIBLE_SLIPS[quantity][1]``."""
    words = " or ".join(f"{word}s" for word, _ in PLAUSIBLE_SLIPS[quantity][0])
    return f"too few for a run planned on a cluster: was it typed in {words}?"


def implausible_rule(quantity, value):
    """The rule a count below its plausibility floor breaks, with the likely unit slip: the
    one advice every face gives (``udfs.quantities.MIN_PLAUSIBLE``, ``PLAUSIBLE_SLIPS``).
    Each slip's reading is shown while it stays a figure a plan can hold (at most
    ``MAX_RUN_FIGURE``, 1e15).

    >>> print(implausible_rule("total_params", 70).replace("? ", "?\\n"))
    is below 1e6, too few for a run planned on a cluster: was it typed in billions?
    (70 billion is 7e+10; type the full number, e.g. 70E9)
    """
    slips, example = PLAUSIBLE_SLIPS[quantity]
    sizes = ", ".join(
        f"{value:g} {word} is {value * size:g}"
        for word, size in slips
        if value * size <= MAX_RUN_FIGURE
    )
    return (
        f"is below {_bound_text(MIN_PLAUSIBLE[quantity])}, {plausibility_advice(quantity)} "
        f"({sizes + '; ' if sizes else ''}type the full number, e.g. {example})"
    )


def _plausibility_rule(quantity):
    """(bad_of, low_ok, rule) of :func:`check_plausible` for ``quantity``."""
    least = MIN_PLAUSIBLE[quantity]
    positive = _POSITIVE[1]

    def rule(got):
        if got <= 0:
            return positive
        return _DENORMAL_RULE if got < SMALLEST_NORMAL else implausible_rule(quantity, got)

    return (lambda a: a < least), (lambda lo: lo >= least), rule


_PLAUSIBILITY = {quantity: _plausibility_rule(quantity) for quantity in MIN_PLAUSIBLE}


def check_plausible(name, value, quantity=None):
    """Finite and at least the plausibility floor of ``quantity`` (``name`` when None): a
    parameter count or a number of training tokens of a run planned on a cluster
    (``udfs.quantities.MIN_PLAUSIBLE``). 0 or less breaks "must be greater than 0"; a figure
    above 0 and below the floor names the likely unit slip (:func:`implausible_rule`)."""
    bad_of, low_ok, rule = _PLAUSIBILITY[quantity or name]
    return _check(name, value, bad_of, rule, low_ok, _always)


def check_non_negative(name, value):
    """Finite and zero or more."""
    bad_of, rule, low_ok, high_ok = _NON_NEGATIVE
    return _check(name, value, bad_of, rule, low_ok, high_ok)


def check_fraction(name, value):
    """Finite, in (0, 1]."""
    bad_of, rule, low_ok, high_ok = _FRACTION
    return _check(name, value, bad_of, rule, low_ok, high_ok)


def check_at_least(name, value, minimum):
    """Finite and at least ``minimum``."""
    return check_bound(name, value, Bound(low=minimum))


def _not_whole(a):
    return a != np.trunc(a)


def _never(_):
    return False


def _check_whole_number(name, arr):
    """``arr`` (already checked finite) when every element is a whole number."""
    if type(arr) is _float64 and float(arr).is_integer():  # a plain whole number
        return arr
    if arr.dtype.kind in "iu":
        return arr
    if arr.size and not np.array_equal(np.trunc(arr), arr):
        return _check(name, arr, _not_whole, "must be a whole number", _never, _always)
    return arr


def check_whole(name, value):
    """Finite, greater than zero and a whole number (a count of accelerators)."""
    return _check_whole_number(name, check_positive(name, value))


def check_count(name, value):
    """Finite, at least 1 and a whole number (a parallel degree, a sequence length, a node's
    accelerators): 0.5 breaks "must be at least 1", 2.5 "must be a whole number"."""
    return check_bound(name, value, _COUNT_RANGE)


_COUNT_RANGE = Bound(low=1, whole=True)


def check_at_most(name, value, other_name, other):
    """``value <= other`` element-wise, after broadcasting (both already checked)."""
    x, y = _plain_float(value), _plain_float(other)
    if x is not None and y is not None and x <= y:
        return value
    a, b = np.broadcast_arrays(np.asarray(value, float), np.asarray(other, float))
    bad = a > b
    if bad.any():
        pos = _first_bad(bad)
        got = a[pos] if pos is not None else a.item()
        raise InputError(name, f"must not exceed {other_name}", pos, float(got))
    return value


def _element(value, shape, position):
    """``value`` (broadcast to ``shape``) at ``position``, as a float; None if it has none."""
    arr = np.asarray(value, dtype=float)
    if position is None or arr.ndim == 0:
        return float(arr.reshape(-1)[0]) if arr.size else None
    try:
        return float(np.broadcast_to(arr, shape)[position])
    except (ValueError, IndexError):
        return None


def drivers_of(inputs, shape=(), position=None, limit=3):
    """The inputs most likely to have driven a figure out of range, most responsible first.

    A figure of this engine is (nearly) a product of powers of its inputs, so the ones that
    push it past a float's range are those furthest from 1 in orders of magnitude: each input
    scores ``|log10 |x||`` (at ``position`` for arrays) and those scoring at least half the
    top score are returned (at most ``limit``), as ``(name, value)``.

    Parameters
    ----------
    inputs : mapping
        Argument name to value (scalar or array; None and zero are skipped).
    shape : tuple of int
        Shape of the figure, for broadcasting array inputs.
    position : tuple of int or None
        Index of the offending element of the figure.
    """
    scored = []
    for name, value in inputs.items():
        if value is None:
            continue
        try:
            v = _element(value, shape, position)
        except (TypeError, ValueError):
            continue
        if v is None or v == 0 or not np.isfinite(v):
            continue
        scored.append((abs(float(np.log10(abs(v)))), name, v))
    if not scored:
        return []
    top = max(score for score, _, _ in scored)
    chosen = sorted((s for s in scored if s[0] >= top / 2), key=lambda s: -s[0])
    return [(name, v) for _, name, v in chosen[:limit]]


def _bound(value):
    if np.isnan(value):
        return "not a number"
    if abs(value) >= 1:
        return "above 1.8e308"
    return "below 2.2e-308"


def out_of_range(result, value, inputs, *, shape=(), position=None, result_label=None):
    """An :class:`OutOfRangeError` for ``result`` holding ``value`` at ``position``."""
    return OutOfRangeError(
        result,
        _bound(float(value)),
        drivers_of(inputs, shape, position),
        position,
        result_label,
    )


def result_usable(value):
    """True when every element of ``value`` is at least 2.2e-308 and at most 1.8e308 in size
    (the fast test of :func:`check_result`; False also for an empty array, NaN or 0)."""
    x = _plain_float(value)
    if x is not None:
        return _usable(x)
    arr = np.asarray(value, dtype=float)
    if arr.size:
        lo, hi = _min_max(arr)
        return float(lo) >= SMALLEST_NORMAL and float(hi) <= LARGEST  # NaN fails both
    return False


def check_result(result, value, inputs, *, allow_zero=False, result_label=None):
    """``value`` if every element is a usable figure, else :class:`OutOfRangeError`.

    Usable: finite and, unless ``allow_zero``, at least 2.2e-308 in size (a figure that must
    be positive and underflowed to a denormal or 0 is out of range; with ``allow_zero``, a
    cost that underflowed is as good as 0). The error names the ``inputs`` (argument name ->
    value) that drove the figure out of range; see :func:`drivers_of`.
    """
    if result_usable(value):
        return value
    arr = np.asarray(value, dtype=float)
    bad = ~np.isfinite(arr)
    if not allow_zero:  # a figure that must be positive, and that later figures divide by
        bad |= np.abs(arr) < SMALLEST_NORMAL
    if not bad.any():
        return value
    pos = _first_bad(bad)
    got = arr[pos] if pos is not None else arr.item()
    raise out_of_range(
        result, got, inputs, shape=arr.shape, position=pos, result_label=result_label
    )


# ---------------------------------------------------------------------------------------------
# What the command line prints and accepts as a name (issue 22)
# ---------------------------------------------------------------------------------------------

#: Longest value echoed back in a message (``(got '…')``): enough to recognise what was
#: typed; a 10 kB flag value is not repeated in full (the rest is counted).
MAX_ECHO_CHARS = 80
#: Longest file or folder name (one path component), in bytes of UTF-8: what Linux, macOS
#: and Windows file systems allow (NAME_MAX).
MAX_NAME_BYTES = 255
#: Longest text of one typed value, in characters: an input cell of a planner (scenario name,
#: owner, accelerator name, status), a run's name and organisation on its Our runs sheet, and
#: every field of an own-runs file. A name is a few words; 255 is what Excel allows in a
#: sheet name's cousins (a defined name, a chart title) and keeps every table of the hand-off
#: and of ``compute-lab runs`` readable. A longer text is refused at its cell or field, so
#: the workbook and every CSV file carry the same text.
MAX_TEXT_CHARS = 255
#: Characters written as escapes in a console line: control characters (a newline would
#: start a forged line), line and paragraph separators, and the bidirectional overrides that
#: reorder what a terminal shows.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(ch):
    code = ord(ch)
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _needs_escape(ch):
    code = ord(ch)
    return (
        code < 0x20
        or 0x7F <= code < 0xA0
        or ch in "\u2028\u2029"
        or ch in _BIDI
        or (0xD800 <= code <= 0xDFFF)
    )


def printable(text):
    """``text`` with control characters, separators, bidirectional overrides and undecodable
    bytes written as escapes (``\\n``, ``\\x01``, ``\\xff``, ``\\u202e``): one line, as typed."""
    text = str(text)
    if not any(_needs_escape(ch) for ch in text):
        return text
    return "".join(_escape(ch) if _needs_escape(ch) else ch for ch in text)


def control_character(text):
    """The first character of ``text`` that :func:`printable` writes as an escape (a control
    character, a line or paragraph separator, a bidirectional override, an undecodable
    byte), as that escape (``\\x01``, ``\\u202e``); None when there is none. A name holding
    one would forge a line or reorder what a terminal, a message or a table shows."""
    bad = next((ch for ch in str(text) if _needs_escape(ch)), None)
    return None if bad is None else _escape(bad)


def echo(value, limit=MAX_ECHO_CHARS):
    """``repr(value)`` for a message, cut to about ``limit`` characters: ``'99999…' (10,000
    characters)``."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[: limit - 3]!r}... ({len(text):,} characters)"


#: A quoted echo in a message: a quote opening after a space, "(", "[" or "=" (not an
#: apostrophe inside a word), then no quote of its kind (except escaped, as ``repr`` writes
#: it), then the closing quote before a space, punctuation or the end.
_QUOTED = re.compile(
    r"(?:(?<=[\s(\[=])|^)(?:'(?P<single>(?:[^'\\\n]|\\.){N,})'|\"(?P<double>(?:[^\"\\\n]|\\.){N,})\")"
    r"(?=$|[\s),;:.\]\\])".replace("N", str(MAX_ECHO_CHARS + 1))
)


def console_line(message):
    """A message as the command line prints it: one line (:func:`printable`), any quoted
    echo longer than :data:`MAX_ECHO_CHARS` cut (``'aaaa...' (10,000 characters)``)."""

    def cut(m):
        q, inner = (
            ("'", m.group("single")) if m.group("single") is not None else ('"', m.group("double"))
        )
        return f"{q}{inner[: MAX_ECHO_CHARS - 3]}...{q} ({len(inner):,} characters)"

    return _QUOTED.sub(cut, printable(message))


def check_name(path, flag):
    """Refuse (:class:`CommandError`) a path the tools cannot name faithfully: a control
    character (a newline would forge lines in every message and table), bytes that are not
    UTF-8 (they cannot be written in a workbook or a UTF-8 CSV), or a component over
    :data:`MAX_NAME_BYTES` bytes. ``flag`` names the argument (``FILE``, ``--out``)."""
    text = str(path)
    shown = printable(text)
    if len(shown) > MAX_ECHO_CHARS:
        shown = shown[: MAX_ECHO_CHARS - 3] + "..."
    if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in text):
        raise CommandError(
            f"{flag} {shown}: the name is not valid UTF-8 text (a byte shown as \\xNN); rename it"
        )
    bad = control_character(text)
    if bad is not None:
        raise CommandError(f"{flag} {shown}: the name holds the control character {bad}; rename it")
    for part in text.replace("\\", "/").split("/"):
        size = len(part.encode("utf-8", "surrogateescape"))
        if size > MAX_NAME_BYTES:
            raise CommandError(
                f"{flag} {shown}: a name of {size:,} bytes, over the limit of "
                f"{MAX_NAME_BYTES} bytes a file system allows for one file or folder name"
            )
