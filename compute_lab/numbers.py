"""Numbers as the command line takes them: ``671e9``, ``671B``, ``14.8T``, ``16k``, ``2,048``,
``40%``; infinity, NaN and denormals refused with one line naming the rule."""

from __future__ import annotations

import argparse
import math
import re

from udfs.validation import SMALLEST_NORMAL

_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
# ASCII only (re.ASCII: \d is 0-9, not every Unicode digit). Thousands grouped by three with
# commas (2,048) or single underscores (1_000), never both; an optional exponent and suffix.
_NUMBER = re.compile(
    r"(?P<mantissa>[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+|\d+)(?:\.\d*)?|\.\d+))"
    r"(?P<exponent>e[-+]?\d+)?\s*(?P<suffix>[kmbgtp%]?)",
    re.I | re.ASCII,
)
_EXAMPLES = "a number such as 671e9, 671B, 14.8T, 16k, 2,048 or 40%"


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
        raise argparse.ArgumentTypeError(f"must be {what}, in ASCII digits 0-9 (got {text!r})")
    m = _NUMBER.fullmatch(cleaned)
    if not m:
        if re.search(r"\d[,_]|[,_]\d", cleaned) and _NUMBER.fullmatch(re.sub(r"[,_]", "", cleaned)):
            raise argparse.ArgumentTypeError(
                f"must group thousands by three digits, as in 2,048 or 1_000 (got {text!r})"
            )
        raise argparse.ArgumentTypeError(f"must be {what} (got {text!r})")
    mantissa = m.group("mantissa").replace(",", "").replace("_", "")
    value = float(mantissa + (m.group("exponent") or ""))
    suffix = m.group("suffix").lower()
    if suffix == "%":
        value /= 100.0
    elif suffix:
        value *= _SUFFIXES[suffix]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, at most 1.8e308 (got {text!r})")
    if abs(value) < SMALLEST_NORMAL and (value != 0 or any(c in "123456789" for c in mantissa)):
        raise argparse.ArgumentTypeError(
            f"is too close to 0 to compute with (below 2.2e-308; got {text!r})"
        )
    return value


def fraction(text):
    """``--throughput-range``, ``--price-range``: a fraction such as 0.15 or 15%."""
    return parse_number(text, "a fraction such as 0.15 or 15% (P90 15% above P50)")


def accelerator_count(text):
    """``--accelerators``: a count, told apart from an accelerator's name."""
    return parse_number(
        text,
        "a whole number of accelerators, e.g. 2048 or 16k (the accelerator's type goes in "
        "--accelerator)",
    )
