"""What ``compute-lab estimate`` prints: the notes, the figures and the P10-P90 lines, as
text or as one JSON object (a figure of 1e15 or more in scientific notation, a fraction
of a day with two significant digits)."""

from __future__ import annotations

import json
import math
import re

import numpy as np

from udfs.quantities import CHINCHILLA_TOKENS_PER_PARAM

from .flags import FLAG_OF

#: The tokens-per-parameter line's format: the figure, beside the compute-optimal one.
_CHINCHILLA = "{:,.1f} (Chinchilla-optimal ~" + f"{CHINCHILLA_TOKENS_PER_PARAM:g})"

_PERCENT_NOTES = ("mfu", "goodput", "throughput_range_pct", "price_range_pct")


def note_value(name, value):
    """A note's value for a person: 70B, 989.4, 31.4%, 0.08."""
    if value is None or isinstance(value, str):
        return value or ""
    value = float(value)
    if name in _PERCENT_NOTES:
        return f"{value:.1%}"
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= size:
            return f"{value / size:,.4g}{suffix}"
    return f"{value:,.4g}"


def note_text(note):
    """One ``note:`` line: ``--usd-per-kwh 0.08: not given: electricity priced at ...``."""
    why = re.sub(r"^blank\b", "not given", note.why)
    flag = FLAG_OF.get(note.name)
    if flag is None:
        return why
    return f"{flag} {note_value(note.name, note.value)}: {why}"


def _note_json(note):
    value = note.value
    if isinstance(value, (float, np.floating)):
        value = float(value)
    out = {"name": note.name, "value": value, "why": note.why}
    if note.name in FLAG_OF:
        out["flag"] = FLAG_OF[note.name]
    return out


#: A printed figure this large or larger is written in scientific notation (1.234e+20):
#: never a number of hundreds of digits.
SCIENTIFIC_FROM = 1e15
_SPEC = re.compile(r"\{:[^}]*\}")
_DECIMALS = re.compile(r"\.(\d+)f\}")


class _Figure(str):
    """A format string (``"${:,.0f}"``) whose ``format`` writes a figure of 1e15 or more (in
    size) in scientific notation, ``"$1.234e+20"``, and a figure above 0 that its fixed
    decimals would round to 0 (below 0.5 with none, below 0.05 with one) with two significant
    digits: ``"$0.034"``, ``"9.5e-05"`` days, never a misleading "$0" or "0.0"."""

    def __new__(cls, text):
        self = super().__new__(cls, text)
        decimals = _DECIMALS.search(text)
        self.rounds_to_zero_below = 0.5 * 10.0 ** -int(decimals.group(1)) if decimals else 0.0
        return self

    def format(self, value):
        v = float(value)
        if abs(v) >= SCIENTIFIC_FROM:
            return _SPEC.sub("{:.3e}", self).format(v)
        if 0 < abs(v) < self.rounds_to_zero_below:
            return _SPEC.sub("{:.2g}", self).format(v)
        return str.format(self, v)


_HOURS = _Figure("{:,.0f}")
_DAYS = _Figure("{:,.1f}")
_USD = _Figure("${:,.0f}")
_KWH = _Figure("{:,.0f} kWh")

#: The quantities given a P10-P90 range, their words and formats on the command line.
RANGE_LINES = {
    "accelerator_hours": ("Accelerator-hours", _HOURS),
    "wall_clock_days": ("Wall-clock days", _DAYS),
    "compute_cost_usd": ("Rental-equivalent cost", _USD),
    "electricity_kwh": ("Accelerator electricity", _KWH),
    "total_cost_usd": ("Total cost", _USD),
}


def range_figures(plan, result):
    """P10 / P50 / P90 of the range quantities (udfs.ranges), or None when no range applies."""
    from udfs.ranges import estimate_ranges

    r = plan.resolved
    if not (r.throughput_sigma > 0 or r.price_sigma > 0):
        return None
    ranges = estimate_ranges(result, r.throughput_sigma, r.price_sigma)
    return {q: {k: float(v) for k, v in ranges[q].items()} for q in RANGE_LINES}


def _fmt_count(n):
    return f"{int(n)}" if float(n).is_integer() else f"{n:g}"


def print_seed_lines(r, accelerators):
    """The example plan's six lines, in the methodology's exact format (a figure of 1e15 or
    more in scientific notation, a figure above 0 its decimals would round to 0 with two
    significant digits)."""
    accelerators = _fmt_count(accelerators)
    print(f"Training FLOPs: {r['training_flops']:.3e}")
    print(f"Accelerator-hours: {_HOURS.format(r['accelerator_hours'])}")
    print(
        f"Wall-clock at {accelerators} accelerator{'s' * (accelerators != '1')}: "
        f"{_DAYS.format(r['wall_clock_days'])} days"
    )
    print(f"BF16 checkpoint: {_Figure('{:.1f} GB').format(r['checkpoint_gb'])}")
    print(f"Rental-equivalent cost: {_USD.format(r['compute_cost_usd'])}")
    print(f"Accelerator electricity: {_KWH.format(r['electricity_kwh'])}")


def extended_lines(r, arguments, target_days):
    """(label, text) of the figures after the six lines; text None when it does not apply."""

    def text(key, fmt):
        return None if math.isnan(r[key]) else _Figure(fmt).format(r[key])

    mtbf = None
    if not math.isnan(r["cluster_mtbf_hours"]):
        minutes = r["checkpoint_interval_hours"] * 60
        mtbf = (f"{_Figure('{:,.2f}').format(r['cluster_mtbf_hours'])} h; checkpoint every "
                f"{_Figure('{:,.0f}').format(minutes)} min")  # fmt: skip
    runs_per_year = _Figure("{:,.1f}").format(r["iterations_per_year"])
    scaling = None
    if "global_batch_tokens" in arguments:
        scaling = f"{r['scaling_efficiency']:.1%}"
    lines = [
        ("Effective throughput", text("effective_tflops", "{:,.1f} TFLOP/s per accelerator")),
        ("Goodput", text("goodput", "{:.1%}")),
        ("Scaling efficiency", scaling),
        ("Job MTBF", mtbf),
        ("Electricity cost", text("electricity_cost_usd", "${:,.0f}")),
        ("Emissions", text("co2_tonnes", "{:,.0f} tCO2")),
        ("Total cost", text("total_cost_usd", "${:,.0f}")),
        ("Min. accelerators for training state",
         text("min_accelerators_for_memory", "{:,.0f} (activations excluded)")),
        ("Back-to-back runs per year", runs_per_year),
        ("Tokens per parameter", text("tokens_per_param", _CHINCHILLA)),
    ]  # fmt: skip
    if "accelerators_for_target_days" in r:
        lines.append(
            (
                f"Accelerators for {target_days:g} day{'s' * (target_days != 1)}",
                _Figure("{:,.0f}").format(math.ceil(r["accelerators_for_target_days"])),
            )
        )
    return lines


def range_lines(ranges):
    """One line per range quantity: ``Total cost, P10-P90: $1,234,567 to $2,345,678``."""
    lines = []
    for q, (label, fmt) in RANGE_LINES.items():
        p10, p90 = ranges[q]["p10"], ranges[q]["p90"]
        if math.isnan(p10) or math.isnan(p90):
            continue
        low, high = fmt.format(p10), fmt.format(p90)
        if fmt.endswith(" kWh"):
            low = low.removesuffix(" kWh")
        lines.append(f"{label}, P10-P90: {low} to {high}")
    return lines


def estimate_json(plan, result, ranges):
    r = plan.resolved
    out = {
        "inputs": plan.arguments,
        "plan_inputs": plan.inputs,
        "notes": [_note_json(n) for n in plan.notes],
        "throughput_source": r.throughput_source,
        "throughput_sigma": r.throughput_sigma,
        "price_sigma": r.price_sigma,
        **{k: (None if math.isnan(v) else v) for k, v in result.items()},
    }
    if ranges is not None:
        out["ranges"] = ranges
    return json.dumps(out, indent=2, allow_nan=False)  # strict JSON: never Infinity/NaN
