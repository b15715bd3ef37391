"""Numbers written as text, one grammar for every face: ``671e9``, ``671B``, ``14.8T``, ``16k``,
``2,048``, ``40%`` on the command line (:func:`parse_number`), and its subset ``70B``, ``405B``,
``2T``, ``15.6T``, ``1.5e12`` for parameters and tokens typed as text in the planner
(:func:`parse_size`; the planner renders the same subset in native formulas, and the report
reads a typed text with this function).

The suffixes (any case) are :data:`SUFFIXES`: K 1e3, M 1e6, B or G 1e9, T 1e12, P 1e15. A value
is ``float(mantissa and exponent) x the suffix's multiplier``: the planner's formula computes it
the same way (``VALUE`` of the same text, times the multiplier), so both read the same number.
"""

from __future__ import annotations

import math
import re

from .validation import SMALLEST_NORMAL

#: Suffix -> multiplier (any case): the one table of the command line and the planner.
SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_SUFFIX = "[" + "".join(SUFFIXES) + "]"
#: A plain decimal: digits with an optional point (``15.6``, ``5.``, ``.5``).
_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
_EXPONENT = r"(?P<exponent>e[-+]?\d+)?"
# ASCII only (re.ASCII: \d is 0-9, not every Unicode digit). Thousands grouped by three with
# commas (2,048) or single underscores (1_000), never both; an optional exponent and suffix.
_NUMBER = re.compile(
    r"(?P<mantissa>[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+|\d+)(?:\.\d*)?|\.\d+))"
    + _EXPONENT
    + r"\s*(?P<suffix>"
    + _SUFFIX
    + "?|%)",
    re.I | re.ASCII,
)
#: The planner's subset for parameters and tokens: no sign, no grouping, no %, spaces only.
_SIZE = re.compile(
    r" *(?P<mantissa>" + _DECIMAL + ")" + _EXPONENT + r" *(?P<suffix>" + _SUFFIX + "?) *",
    re.I | re.ASCII,
)
_EXAMPLES = "a number such as 671e9, 671B, 14.8T, 16k, 2,048 or 40%"
#: The planner's inputs that may hold text such as 70B (read by :func:`parse_size`).
SIZE_INPUTS = ("total_params", "active_params", "training_tokens")
#: What a parameter or token count may be, as the planner's checks and the report say it.
SIZE_EXAMPLES = "a number, or text such as 70B, 405B, 2T, 15.6T or 1.5e12"


class NumberTextError(ValueError):
    """A text that is not a number of the grammar; the message completes "<argument> ..."."""


def _value(text, mantissa, exponent, suffix):
    value = float(mantissa + (exponent or ""))
    suffix = suffix.lower()
    if suffix == "%":
        value /= 100.0
    elif suffix:
        value *= SUFFIXES[suffix]
    if not math.isfinite(value):
        raise NumberTextError(f"must be a finite number, at most 1.8e308 (got {text!r})")
    if abs(value) < SMALLEST_NORMAL and (value != 0 or any(c in "123456789" for c in mantissa)):
        raise NumberTextError(f"is too close to 0 to compute with (below 2.2e-308; got {text!r})")
    return value


def parse_number(text, what=_EXAMPLES):
    """A number from the command line: ``671e9``, ``671B``, ``14.8T``, ``16k``, ``2,048``, ``40%``.

    Suffixes (any case): K 1e3, M 1e6, B or G 1e9, T 1e12, P 1e15; ``%`` divides by 100.
    Thousands may be grouped by three with commas (``2,048``) or underscores (``1_000``).
    Only ASCII digits: Arabic-Indic or fullwidth digits and ``1__0`` are refused, and so
    are infinity, NaN and numbers too close to 0 to compute with (denormals, below 2.2e-308).
    ``what`` completes the message for a malformed text ("must be {what}").

    >>> parse_number("14.8T"), parse_number("671B"), parse_number("2,048"), parse_number("40%")
    (14800000000000.0, 671000000000.0, 2048.0, 0.4)
    """
    cleaned = str(text).strip()
    if not cleaned.isascii():
        raise NumberTextError(f"must be {what}, in ASCII digits 0-9 (got {text!r})")
    m = _NUMBER.fullmatch(cleaned)
    if not m:
        if re.search(r"\d[,_]|[,_]\d", cleaned) and _NUMBER.fullmatch(re.sub(r"[,_]", "", cleaned)):
            raise NumberTextError(
                f"must group thousands by three digits, as in 2,048 or 1_000 (got {text!r})"
            )
        raise NumberTextError(f"must be {what} (got {text!r})")
    mantissa = m.group("mantissa").replace(",", "").replace("_", "")
    return _value(text, mantissa, m.group("exponent"), m.group("suffix"))


def parse_size(text):
    """A parameter or token count typed as text in the planner: ``70B``, ``2T``, ``15.6T``,
    ``1.5e12``, ``405 b`` (the command line's grammar without a sign, thousands grouping or
    ``%``; spaces only around the suffix and the whole). Raises :class:`NumberTextError`.

    >>> parse_size("70B"), parse_size("15.6T"), parse_size("1.5e12"), parse_size(" 2 t ")
    (70000000000.0, 15600000000000.0, 1500000000000.0, 2000000000000.0)
    """
    shown = str(text) if len(str(text)) <= 40 else str(text)[:37] + "..."
    m = _SIZE.fullmatch(str(text))
    if not m:
        raise NumberTextError(f"must be {SIZE_EXAMPLES} (got {shown!r})")
    return _value(shown, m.group("mantissa"), m.group("exponent"), m.group("suffix"))
