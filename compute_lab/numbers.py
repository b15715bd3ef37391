"""Numbers as the command line takes them: ``671e9``, ``671B``, ``14.8T``, ``16k``, ``2,048``,
``40%``; infinity, NaN and denormals refused with one line naming the rule. The grammar is
:mod:`udfs.numbers` (one definition, which the planner's text inputs use a subset of)."""

from __future__ import annotations

import argparse

from udfs import numbers as _numbers

_EXAMPLES = "a number such as 671e9, 671B, 14.8T, 16k, 2,048 or 40%"


def parse_number(text, what=_EXAMPLES):
    """:func:`udfs.numbers.parse_number` (its grammar and examples), a bad text an
    :class:`argparse.ArgumentTypeError` with the same one-line message."""
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
