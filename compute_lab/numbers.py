"""Numbers as the command line takes them: ``671e9``, ``671B``, ``14.8T``, ``16k``, ``2,048``,
``40%``; infinity, NaN and denormals refused with one line naming the rule. The grammar is
:mod:`udfs.numbers` (one definition, which the planner's text inputs use a subset of)."""

from __future__ import annotations

import argparse

from udfs import numbers as _numbers

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
    try:
        return _numbers.parse_number(text, what)
    except _numbers.NumberTextError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
