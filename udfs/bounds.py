"""The values an input may take: the bounds of numbers, their named limits, the text rules.

A :class:`Bound` is a number input's range: the rule every face checks (the engine, the
Excel functions, the command line, the planner's Checks, the hand-off reader) and the text
its help and messages show. The limits are named constants, documented in docs/refused.md; the
dropdowns' values and the run code's rule are here too. :mod:`udfs.quantities` builds its
rows from them and re-exports every name here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Bound",
    "MAX_COUNT",
    "MAX_RUN_FIGURE",
    "MAX_TFLOPS",
    "MAX_PURCHASE_USD",
    "MAX_OTHER_COSTS_USD",
    "MIN_AMORTISATION_YEARS",
    "MAX_AMORTISATION_YEARS",
    "MIN_UTILISATION",
    "MAX_RANGE_PCT",
    "POSITIVE",
    "NON_NEGATIVE",
    "AT_LEAST_ONE",
    "FRACTION",
    "COUNT",
    "ACCELERATOR_COUNT",
    "RANGE_PCT",
    "BUDGET_STATUSES",
    "PRICING_BASES",
    "MAX_RUN_CODE_CHARS",
    "RUN_CODE_RULE",
]


def _sci(x):
    """A bound as the help and messages spell it: 1e9, not 1e+09 or 1000000000.0."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


@dataclass(frozen=True)
class Bound:
    """The values a number input may take, written once.

    The engine's check and its refusal (:func:`udfs.validation.bound_check`), the command
    line's check and help (``compute_lab.flags``), the planner's data validation
    (``workbook_templates.sheetkit.bound_validation``) and the rule text beside each input
    (:attr:`text`, a quantity's ``rule``) all derive from it.

    Attributes
    ----------
    low, high : float or None
        The ends of the range (None: open on that side).
    low_inclusive, high_inclusive : bool
        Whether the end itself is allowed: ``Bound(low=0, low_inclusive=False)`` is "> 0".
    whole : bool
        A whole number (a count of accelerators, a parallel degree).
    unit : str
        Spelt after a closed range: "from 1/365 (one day) to 100 years".
    low_text : str
        The low end as written, when ``f"{low:g}"`` is not enough: "0.01 (1%)", from
        ``"{0:g} ({0:.0%})"``.
    not_above : str
        The quantity the value may not exceed, in words ("total parameters"); each face
        checks it against that quantity.
    ceiling : float or None
        The command line's bound on top of the range: past it a figure is a slip or a test of
        the tool, never a plan (``MAX_COUNT``...; docs/refused.md).
    ceiling_text : str
        The ceiling as messages and help spell it: ``{0}`` stands for it in the 1e9 form,
        ``{1}`` for the number (``"{1:g} ({1:.0%})"``: "10 (1000%)").
    """

    low: float | None = None
    high: float | None = None
    low_inclusive: bool = True
    high_inclusive: bool = True
    whole: bool = False
    unit: str = ""
    low_text: str = ""
    not_above: str = ""
    ceiling: float | None = None
    ceiling_text: str = "{}"

    def contains(self, x):
        """True when the number ``x`` is inside the range (and whole, for a whole bound); the
        command line's ceiling is not part of it."""
        if self.low is not None and (x < self.low if self.low_inclusive else x <= self.low):
            return False
        if self.high is not None and (x > self.high if self.high_inclusive else x >= self.high):
            return False
        return not self.whole or float(x).is_integer()

    @property
    def low_op(self):
        """The low end's comparison, as text and Excel write it: ">=" or ">"."""
        return ">=" if self.low_inclusive else ">"

    @property
    def high_op(self):
        """The high end's comparison: "<=" or "<"."""
        return "<=" if self.high_inclusive else "<"

    @property
    def low_words(self):
        """The low end as text: ``low_text`` (``{0}`` standing for it), else ``f"{low:g}"``."""
        return (self.low_text or "{0:g}").format(self.low)

    @property
    def closed(self):
        """Both ends given and allowed: a range read "from LOW to HIGH"."""
        return (
            self.low is not None
            and self.high is not None
            and self.low_inclusive
            and self.high_inclusive
        )

    @property
    def text(self):
        """The rule beside the input: "> 0", ">= 0 and < 1", "a whole number >= 1", "0.01
        (1%) to 1"."""
        if self.closed:
            text = f"{self.low_words} to {self.high:g}" + (f" {self.unit}" if self.unit else "")
        else:
            parts = []
            if self.low is not None:
                parts.append(f"{self.low_op} {self.low_words}")
            if self.high is not None:
                parts.append(f"{self.high_op} {self.high:g}")
            if self.not_above:
                parts.append(f"<= {self.not_above}")
            text = " and ".join(parts)
        return f"a whole number {text}" if self.whole else text

    @property
    def ceiling_words(self):
        """The command line's ceiling as text ("1e9", "US$1e15"); "" when there is none."""
        if self.ceiling is None:
            return ""
        return self.ceiling_text.format(_sci(self.ceiling), self.ceiling)

    @property
    def interval(self):
        """The range as the command line's help writes it: "(0, 1]", ">= 1", "1/365 (one day)
        to 100 years", "a whole number up to 1e9"."""
        if self.whole:
            top = f" up to {self.ceiling_words}" if self.ceiling is not None else ""
            return f"a whole number{top}" if self.low in (0, 1) else self.text + top
        if self.low is not None and self.high is not None and not self.closed:
            left = "[" if self.low_inclusive else "("
            right = "]" if self.high_inclusive else ")"
            return f"{left}{self.low_words}, {self.high:g}{right}"
        text = self.text
        if self.ceiling is not None:
            text += f", at most {self.ceiling_words}"
        return text


#: Bounds of the command line beyond the engine's rules: a value past them is a typo or a test
#: of the tool, never a plan, and would print figures of hundreds of digits (docs/refused.md).
MAX_COUNT = 1e9  # accelerators, parallel degrees, sequence tokens, accelerators per node
#: The largest parameters, tokens or accelerator-hours of a completed run (a team's own runs,
#: udfs.own_runs): the largest disclosed runs hold about 2e12 parameters, 4e13 tokens and 4e7
#: accelerator-hours. Past it a figure is a slip, or text beyond the largest double (1e999)
#: that a spreadsheet reads as 1.8e308; its accelerators are bounded by MAX_COUNT.
MAX_RUN_FIGURE = 1e15
MAX_TFLOPS = 1e6  # per accelerator: an H100 SXM peaks at 989 dense BF16 TFLOP/s
MAX_PURCHASE_USD = 1e9  # per accelerator
MAX_OTHER_COSTS_USD = 1e15
MIN_AMORTISATION_YEARS = 1 / 365  # one day
MAX_AMORTISATION_YEARS = 100.0
MIN_UTILISATION = 0.01  # 1%
#: The most an uncertainty may be: P90 = 11 x P50 (1000%); past it, a percentage typed as a
#: fraction (15 for 15%).
MAX_RANGE_PCT = 10.0

#: The common bounds of number inputs.
POSITIVE = Bound(low=0, low_inclusive=False)
NON_NEGATIVE = Bound(low=0)
AT_LEAST_ONE = Bound(low=1)
FRACTION = Bound(low=0, low_inclusive=False, high=1)
#: A count: a parallel degree, a sequence length, a node's accelerators.
COUNT = Bound(low=1, whole=True, ceiling=MAX_COUNT)
#: Accelerators in a job.
ACCELERATOR_COUNT = Bound(low=0, low_inclusive=False, whole=True, ceiling=MAX_COUNT)
#: An uncertainty, P90 / P50 - 1.
RANGE_PCT = Bound(
    low=0, ceiling=MAX_RANGE_PCT, ceiling_text="{1:g} ({1:.0%}): a fraction such as 0.15 or 15%"
)


#: The budget_status dropdown's values; a blank in a filled column counts as "Proposed".
BUDGET_STATUSES = ("Reference", "Proposed", "Approved", "Excluded")
#: The pricing_basis dropdown's values: what the price per accelerator-hour covers. Only a
#: rental all-in price includes the power (no electricity is added); blank: rental plus power.
PRICING_BASES = ("rental all-in", "rental plus power", "owned")

#: The longest run code: what a billing tag value and an FP&A key field hold comfortably.
MAX_RUN_CODE_CHARS = 40
#: What a run code may hold (``workbook_templates.run_codes`` checks it).
RUN_CODE_RULE = (
    f"1 to {MAX_RUN_CODE_CHARS} characters: letters A-Z, digits, '.', '_' or '-', "
    "starting with a letter or digit"
)
