"""The ``compute-lab`` command line.

Subcommands here: ``estimate``, ``runs``, ``accelerators``. Other packages add theirs
(``templates``, ``report``, ``addin``, ``serve``, ``lite-bundle``) through a ``COMMANDS``
mapping in ``workbook_templates.commands`` and ``addin.commands``:
``{"name": (help, configure_parser(parser), run(args) -> int)}``.

Bad input exits with status 2 and one line naming the flag and the rule; no traceback
(set ``COMPUTE_LAB_DEBUG=1`` to see one for an internal error), no Python warning. Flags
are never abbreviated, never given twice (nor under two names), and a mistyped flag gets a
"did you mean" suggestion. A figure that would leave a float's range (infinity, NaN, a
denormal) is refused, naming the flags that drove it there; ``estimate`` also bounds the
values no plan has (``MAX_COUNT``...: docs/command-line.md, "Bounds"), writes a figure of 1e15
or more in scientific notation and a fraction of a day with two significant digits (never a
number of hundreds of digits, never "0.0 days"). :class:`CommandError` lives in
:mod:`udfs.validation` (the core) and is re-exported here.

``estimate`` turns its flags (or a preset, or the DeepSeek-V3-like example plan) into the
planner's inputs and resolves them with :func:`udfs.plan.resolve`, the one rule table for
inputs left out: each default applied is a ``note:`` line (``"notes"`` in ``--json``), and the
total equals the planner's and the hand-off's for the same inputs. P10-P90 ranges come from
:func:`udfs.ranges.estimate_ranges` with resolve's spreads. ``runs`` prints the default MFU's
grouped-validation table (:func:`udfs.calibration.grouped_validation`: each run predicted with
its whole organisation left out), with the leave-one-out figures below it. See
``docs/command-line.md``.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import math
import os
import re
import sys
import textwrap
import warnings

import numpy as np

from . import __version__
from .quantities import SEED_PLAN
from .validation import (
    SMALLEST_NORMAL,
    CommandError,
    InputError,
    OutOfRangeError,
    check_at_least,
    check_count,
    check_fraction,
    check_non_negative,
    check_positive,
    check_result,
    check_whole,
    console_line,
    is_blank,
)

__all__ = ["main", "parse_number", "CommandError"]

PROG = "compute-lab"


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


def _fraction(text):
    """``--throughput-range``, ``--price-range``: a fraction such as 0.15 or 15%."""
    return parse_number(text, "a fraction such as 0.15 or 15% (P90 15% above P50)")


def _accelerator_count(text):
    """``--accelerators``: a count, told apart from an accelerator's name."""
    return parse_number(
        text,
        "a whole number of accelerators, e.g. 2048 or 16k (the accelerator's type goes in "
        "--accelerator)",
    )


# ---------------------------------------------------------------------------------------------
# estimate
# ---------------------------------------------------------------------------------------------

#: (flag, engine argument, help). Numbers accept 671B / 14.8T forms. What a flag left out
#: takes is not written here: ``_help`` adds it from udfs.plan.RULES (the planner's inputs)
#: or from the engine's own defaults (the engine-only inputs).
_ESTIMATE_FLAGS = [
    ("--total-params", "total_params", "all parameters, e.g. 671B"),
    ("--active-params", "active_params", "parameters active per token"),
    ("--tokens", "training_tokens", "training tokens, e.g. 14.8T"),
    ("--accelerators", "accelerators", "accelerators in the job, a whole number up to 1e9"),
    (
        "--effective-tflops",
        "effective_tflops",
        "sustained TFLOP/s per accelerator, used as is (at most 1e6)",
    ),
    ("--peak-tflops", "peak_tflops", "peak TFLOP/s per accelerator (at most 1e6)"),
    ("--mfu", "mfu", "model FLOPs utilisation, (0, 1] or 40%%"),
    ("--goodput", "goodput", "share of time training, (0, 1]"),
    (
        "--throughput-range",
        "throughput_range_pct",
        "uncertainty of the throughput: P90 / P50 - 1 of accelerator-hours, e.g. 15%% "
        "(P90 15%% above P50, P10 at P50 / 1.15)",
    ),
    ("--usd-per-hour", "usd_per_accelerator_hour", "US$ per accelerator-hour"),
    (
        "--price-range",
        "price_range_pct",
        "uncertainty of the price per accelerator-hour, P90 / P50 - 1, e.g. 10%%",
    ),
    ("--watts", "watts_per_accelerator", "W per accelerator"),
    ("--server-overhead", "server_overhead", "server power / accelerator power, >= 1"),
    ("--pue", "pue", "data-centre PUE, >= 1"),
    ("--usd-per-kwh", "usd_per_kwh", "electricity price, US$/kWh"),
    ("--grams-co2-per-kwh", "grams_co2_per_kwh", "grid carbon intensity, gCO2/kWh"),
    ("--checkpoint-bytes-per-param", "checkpoint_bytes_per_param", "2 = BF16 weights only"),
    (
        "--failures-per-accelerator-day",
        "failures_per_accelerator_day",
        "failure rate; derives goodput from Young/Daly checkpointing",
    ),
    (
        "--failures-per-1000-node-days",
        "failures_per_1000_node_days",
        "failure rate per 1,000 node-days instead (Meta RSC: 2.34 and 6.50)",
    ),
    ("--accelerators-per-node", "accelerators_per_node", "for the node-day rate, a whole number"),
    ("--checkpoint-write-minutes", "checkpoint_write_minutes", "stall per checkpoint"),
    ("--restart-minutes", "restart_minutes", "failure to training again"),
    (
        "--global-batch-tokens",
        "global_batch_tokens",
        "tokens per step, at most the training tokens; enables sub-linear scaling",
    ),
    (
        "--tensor-parallel",
        "tensor_parallel",
        "tensor-parallel degree, a whole number (scaling model)",
    ),
    (
        "--pipeline-parallel",
        "pipeline_parallel",
        "pipeline-parallel degree, a whole number (scaling model)",
    ),
    (
        "--sequence-tokens",
        "sequence_tokens",
        "sequence length in tokens, a whole number (scaling model)",
    ),
    ("--pipeline-interleave", "pipeline_interleave", "virtual pipeline stages, a whole number"),
    ("--interconnect-gb-per-s", "interconnect_gb_per_s", "scale-out GB/s per accelerator"),
    ("--comm-overlap", "comm_overlap", "share of all-reduce hidden, [0, 1)"),
    ("--hbm-gb", "hbm_gb", "HBM per accelerator, GB"),
    (
        "--training-state-bytes-per-param",
        "training_state_bytes_per_param",
        "16 = mixed-precision Adam",
    ),
    (
        "--purchase-usd-per-accelerator",
        "purchase_usd_per_accelerator",
        "owned hardware: capital cost per accelerator, at most US$1e9 (instead of --usd-per-hour)",
    ),
    ("--amortisation-years", "amortisation_years", "owned hardware: years, 1/365 (a day) to 100"),
    ("--utilisation", "utilisation", "owned hardware: busy share, 0.01 (1%%) to 1"),
    ("--other-costs-usd", "other_costs_usd", "other costs added to the total, US$, at most 1e15"),
]

#: Flag destination -> the planner input (udfs.quantities.PLAN_INPUTS) it fills; the other
#: flags are the engine's own inputs, beyond the planner (failures, scaling, ownership...).
_SAME_NAME = ("total_params", "active_params", "training_tokens", "accelerators",
              "peak_tflops", "mfu", "goodput", "throughput_range_pct",
              "usd_per_accelerator_hour", "price_range_pct", "watts_per_accelerator",
              "server_overhead", "pue", "usd_per_kwh", "grams_co2_per_kwh",
              "checkpoint_bytes_per_param")  # fmt: skip
_PLAN_NAME = {**{n: n for n in _SAME_NAME}, "effective_tflops": "effective_tflops_input"}


def _blank_rule_text(dest):
    """What a planner input left out takes, in words, from the one rule table."""
    from .plan import RULES

    rule = RULES[_PLAN_NAME[dest]]
    if dest == "watts_per_accelerator":
        return f"the --accelerator's TDP, else {rule.default:g} W"
    if dest == "peak_tflops":
        return "the --accelerator's catalogue peak at --precision"
    if dest == "active_params":
        return "total, a dense model"
    if rule.blank_text:
        return rule.blank_text.replace("%", "%%")
    return f"{rule.default:g}"


def _engine_default(dest):
    """The engine's default for an engine-only input (None when the input is off when left out)."""
    import inspect

    from . import engine

    if dest == "accelerators_per_node":
        fn = engine.failure_rate_from_node_days
    else:
        fn = engine.estimate
    param = inspect.signature(fn).parameters.get(dest)
    return None if param is None else param.default


def _help(dest, text):
    from .plan import REQUIRED

    if dest in _PLAN_NAME and _PLAN_NAME[dest] not in REQUIRED:
        return f"{text} (not given: {_blank_rule_text(dest)})"
    default = _engine_default(dest)
    if isinstance(default, int | float) and not isinstance(default, bool) and default != 0:
        return f"{text} (not given: {default:g})"
    return text


#: Engine argument -> the flag that sets it (hidden aliases included, in _flag_namer).
_FLAG_OF = {dest: flag for flag, dest, _ in _ESTIMATE_FLAGS} | {
    "tokens": "--tokens",
    "target_days": "--target-days",
    "effective_tflops_input": "--effective-tflops",
    "accelerator_name": "--accelerator",
}
_ENGINE_NAME = re.compile(
    r"(?<![-\w])(" + "|".join(sorted(map(re.escape, _FLAG_OF), key=len, reverse=True)) + r")(?!\w)"
)


def _flag(name, typed=None):
    """The flag for an engine argument (as the user typed it, when ``typed`` says so).

    A name that is not an argument (``tensor_parallel x pipeline_parallel``) has every engine
    name inside it turned into its flag.
    """
    typed = typed or {}
    if name in typed:
        return typed[name]
    if name in _FLAG_OF:
        return _FLAG_OF[name]
    return _ENGINE_NAME.sub(lambda m: typed.get(m.group(1), _FLAG_OF[m.group(1)]), name)


def _flag_namer(args):
    """``_flag`` with the flags this command line actually used (aliases, node-day rates)."""
    typed = dict(getattr(args, "engine_flags", None) or {})
    return lambda name: _flag(name, typed)


def _describe(err: InputError, flag_of=_flag):
    """The InputError's message with engine names turned into flags."""
    if isinstance(err, OutOfRangeError):
        return err.describe(label_of=flag_of)
    msg = err.describe(argument_label=flag_of(err.argument))
    return _ENGINE_NAME.sub(lambda m: flag_of(m.group(1)), msg)


_OWN_RUNS_HELP = (
    "CSV of your completed runs (name,organisation,active_params,total_params,tokens,"
    "accelerator,accelerators,accelerator_hours): a blank MFU and spread are pulled toward them"
)


def _own_runs(args):
    """The ``--own-runs`` file read (udfs.own_runs), or None."""
    if getattr(args, "own_runs", None) is None:
        return None
    from . import own_runs

    return own_runs.read(args.own_runs, parse_number)


def _configure_estimate(p):
    p.add_argument("--preset", metavar="NAME", help="start from a reference run (see `runs`)")
    p.add_argument("--own-runs", metavar="FILE", help=_OWN_RUNS_HELP)
    p.add_argument("--accelerator", metavar="NAME", help="accelerator from the catalogue")
    p.add_argument(
        "--precision",
        choices=("bf16", "fp8"),
        type=str.lower,
        help="peak TFLOP/s column with --accelerator: bf16 or fp8, any case (default bf16)",
    )
    for flag, dest, help_text in _ESTIMATE_FLAGS:
        kind = _accelerator_count if dest == "accelerators" else parse_number
        kind = _fraction if dest.endswith("_pct") else kind
        metavar = "PCT" if dest.endswith("_pct") else "N"
        p.add_argument(flag, dest=dest, metavar=metavar, help=_help(dest, help_text), type=kind)
    # Aliases, listed in --help: the planner's names. Giving both names of one setting is
    # refused ("set the same thing"), like a repeated flag.
    p.add_argument(
        "--training-tokens",
        dest="training_tokens",
        metavar="N",
        type=parse_number,
        help="the same as --tokens (give one of them)",
    )
    p.add_argument(
        "--usd-per-accelerator-hour",
        dest="usd_per_accelerator_hour",
        metavar="N",
        type=parse_number,
        help="the same as --usd-per-hour (give one of them)",
    )
    p.add_argument(
        "--target-days",
        metavar="N",
        type=parse_number,
        help="also solve for the accelerators that finish in N days",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


_MODEL_KEYS = ("total_params", "active_params", "training_tokens")
# Inputs that derive throughput from a peak; the example's sustained 400 TFLOP/s cannot take them.
_DERIVING_KEYS = (
    "peak_tflops",
    "mfu",
    "goodput",
    "failures_per_accelerator_day",
    "failures_per_1000_node_days",
    "global_batch_tokens",
)
_OWNERSHIP_KEYS = ("purchase_usd_per_accelerator", "amortisation_years", "utilisation")
#: What a preset takes from its reference run (as planner inputs).
_PRESET_KEYS = ("total_params", "active_params", "training_tokens", "accelerators",
                "watts_per_accelerator", "usd_per_accelerator_hour", "pue",
                "grams_co2_per_kwh")  # fmt: skip
#: Notes of udfs.plan.resolve that say nothing on the command line (it has no budget view).
_SILENT_NOTES = ("budget_status", "owner")


def _note(name, value, why):
    """A :class:`udfs.plan.Note` (imported when an estimate is run: start-up stays light)."""
    from .plan import Note

    return Note(name, value, why)


def _flags(keys):
    return ", ".join(_flag(k) for k in keys)


def _verb(keys, singular, plural):
    """``--mfu needs``, ``--mfu, --goodput need``."""
    return f"{_flags(keys)} {singular if len(keys) == 1 else plural}"


def _preset_plan(args, given, notes):
    """The planner inputs of ``--preset``: the reference run's disclosed figures."""
    from . import calibration, catalogue

    if not args.preset.strip():
        raise CommandError("--preset must name a reference run (see `compute-lab runs`)")
    r = catalogue.run(args.preset, argument="--preset")
    plan = {k: float(r[k]) for k in _PRESET_KEYS if not is_blank(r[k])}
    missing = [k for k in ("total_params", "training_tokens", "accelerators")
               if k not in plan and k not in given]  # fmt: skip
    if missing:
        raise CommandError(
            f"--preset {r['name']!r} does not disclose its "
            f"{', '.join(k.replace('_', ' ') for k in missing)}: give {_flags(missing)}"
        )
    accel_name = args.accelerator or r["accelerator"]
    if not any(k in given for k in ("effective_tflops", "mfu")) and not is_blank(accel_name):
        ref = calibration.reference_table().loc[r["name"]]
        if not is_blank(ref["implied_mfu"]):
            plan["mfu"] = float(ref["implied_mfu"])
            notes.append(_note("mfu", plan["mfu"], f"implied by {r['name']}'s disclosed hours"))
    source = catalogue.source("run", r["name"])
    notes.append(_note("preset", r["name"], f"preset {r['name']} ({source})"))
    return plan, accel_name


def _base_plan(args, given, notes):
    """The plan the flags start from: a preset, the user's own model, or the example plan.

    Returns planner inputs (``udfs.quantities.PLAN_INPUTS`` names) and the accelerator's name.
    """
    if args.preset is not None:
        return _preset_plan(args, given, notes)
    if any(k in given for k in _MODEL_KEYS):
        # The user's own model: nothing of the example plan's model fills in behind it.
        missing = [k for k in ("total_params", "training_tokens", "accelerators") if k not in given]
        if missing:
            raise CommandError(
                f"describing your own model needs {_flags(missing)} too "
                "(or start from --preset NAME)"
            )
        return {}, args.accelerator
    plan = {k: SEED_PLAN[k] for k in (*_MODEL_KEYS, "accelerators")}
    if given or args.accelerator is not None:
        notes.append(
            _note(
                "example_plan",
                "DeepSeek-V3-like",
                "model: the DeepSeek-V3-like example plan (671B total, 37B active, 14.8T tokens"
                + ("" if "accelerators" in given else ", 2048 accelerators")
                + "); give --total-params and --tokens for your own",
            )
        )
    return plan, args.accelerator


def _below_one(name, value):
    if check_fraction(name, value, allow_zero=True) >= 1:
        raise InputError(name, "must be less than 1", value=value)


def _range_pct(name, value):
    """An uncertainty: a fraction >= 0 (P90 / P50 - 1), at most 10 (P90 = 11 x P50)."""
    if check_non_negative(name, value) > 10:
        raise InputError(
            name, "must be at most 10 (1000%): a fraction such as 0.15 or 15%", value=value
        )


#: Bounds of the command line beyond the engine's rules: a value past them is a typo or a test
#: of the tool, never a plan, and would print figures of hundreds of digits (docs/refused.md).
MAX_COUNT = 1e9  # accelerators, parallel degrees, sequence tokens, accelerators per node
MAX_TFLOPS = 1e6  # per accelerator: an H100 SXM peaks at 989 dense BF16 TFLOP/s
MAX_PURCHASE_USD = 1e9  # per accelerator
MAX_OTHER_COSTS_USD = 1e15
MIN_AMORTISATION_YEARS = 1 / 365  # one day
MAX_AMORTISATION_YEARS = 100.0
MIN_UTILISATION = 0.01  # 1%


def _at_most(check, maximum, text=None):
    """``check``, then at most ``maximum`` ("must be at most 1e+09 ...")."""

    def rule(name, value):
        if check(name, value) > maximum:
            raise InputError(name, f"must be at most {text or format(maximum, 'g')}", value=value)

    return rule


def _count(name, value):
    """A count: a whole number from 1 to 1e9 (``check_count``, ``check_whole``)."""
    check = check_whole if name == "accelerators" else check_count
    _at_most(check, MAX_COUNT, "1e9")(name, value)


def _amortisation_years(name, value):
    years = check_positive(name, value)
    if not MIN_AMORTISATION_YEARS <= years <= MAX_AMORTISATION_YEARS:
        raise InputError(name, "must be from 1/365 (one day) to 100 years", value=value)


def _utilisation(name, value):
    if check_fraction(name, value) < MIN_UTILISATION:
        raise InputError(name, "must be at least 0.01 (1%) and at most 1", value=value)


#: The range rule of each number flag (the engine's, and the command line's bounds above),
#: checked before anything else so that a bad value is named even where the flag would not
#: apply.
_RULES = {
    **dict.fromkeys(
        (
            "total_params",
            "active_params",
            "training_tokens",
            "watts_per_accelerator",
            "checkpoint_bytes_per_param",
            "failures_per_accelerator_day",
            "checkpoint_write_minutes",
            "global_batch_tokens",
            "interconnect_gb_per_s",
            "hbm_gb",
            "training_state_bytes_per_param",
            "target_days",
        ),
        check_positive,
    ),
    **dict.fromkeys(
        (
            "usd_per_accelerator_hour",
            "usd_per_kwh",
            "grams_co2_per_kwh",
            "failures_per_1000_node_days",
            "restart_minutes",
        ),
        check_non_negative,
    ),
    **dict.fromkeys(("mfu", "goodput"), check_fraction),
    **dict.fromkeys(
        ("server_overhead", "pue"), lambda name, value: check_at_least(name, value, 1.0)
    ),
    **dict.fromkeys(("throughput_range_pct", "price_range_pct"), _range_pct),
    **dict.fromkeys(
        (
            "accelerators",
            "tensor_parallel",
            "pipeline_parallel",
            "pipeline_interleave",
            "sequence_tokens",
            "accelerators_per_node",
        ),
        _count,
    ),
    **dict.fromkeys(
        ("effective_tflops", "peak_tflops"),
        _at_most(check_positive, MAX_TFLOPS, "1e6 TFLOP/s per accelerator"),
    ),
    "purchase_usd_per_accelerator": _at_most(
        check_non_negative, MAX_PURCHASE_USD, "US$1e9 per accelerator"
    ),
    "other_costs_usd": _at_most(check_non_negative, MAX_OTHER_COSTS_USD, "US$1e15"),
    "amortisation_years": _amortisation_years,
    "utilisation": _utilisation,
    "comm_overlap": _below_one,
}


class _Plan:
    """One command line's plan: the planner inputs, resolve's answer, the engine's arguments.

    Attributes
    ----------
    inputs : dict
        Planner inputs (``PLAN_INPUTS`` names) handed to :func:`udfs.plan.resolve`.
    resolved : udfs.plan.Resolved
        What resolve made of them.
    arguments : dict
        Keyword arguments for :func:`udfs.engine.estimate`: resolve's, with the engine-only
        flags (failures, scaling, ownership, memory, other costs) on top.
    notes : list of Note
        Every default applied (resolve's) and every note of the command line's own.
    """

    def __init__(self, inputs, resolved, arguments, notes):
        self.inputs = inputs
        self.resolved = resolved
        self.arguments = arguments
        self.notes = notes


def _given_flags(args):
    """The estimate flags given (engine names), each checked against its range rule."""
    given = {dest: getattr(args, dest) for _, dest, _ in _ESTIMATE_FLAGS}
    given = {k: v for k, v in given.items() if v is not None}
    for dest, value in [*given.items(), ("target_days", args.target_days)]:
        if value is not None:
            _RULES[dest](dest, value)
    if args.accelerator is not None and not args.accelerator.strip():
        raise CommandError(
            "--accelerator must name an accelerator (see `compute-lab accelerators`)"
        )
    return given


def _throughput_inputs(args, given, inputs, accel):
    """Check the throughput flags fit together; the example's throughput when nothing sets one.

    Returns a note when the example plan's sustained TFLOP/s fills in (else None).
    """
    deriving = [k for k in _DERIVING_KEYS if k in given]
    if "effective_tflops" in given:
        if deriving:
            raise CommandError(f"--effective-tflops is used as is: leave out {_flags(deriving)}")
        inputs.pop("mfu", None)
        return None
    if accel is not None or "peak_tflops" in inputs:
        precision = args.precision or "bf16"
        if "peak_tflops" not in inputs and is_blank(accel[f"{precision}_tflops"]):
            raise CommandError(
                f"--accelerator {accel['name']!r} has no published {precision.upper()} "
                "peak: give --peak-tflops or --effective-tflops"
            )
        return None
    if deriving:
        raise CommandError(
            f"{_verb(deriving, 'needs', 'need')} a peak throughput: give --accelerator or "
            "--peak-tflops"
        )
    inputs["effective_tflops_input"] = SEED_PLAN["effective_tflops"]
    return _note(
        "effective_tflops_input",
        SEED_PLAN["effective_tflops"],
        "not given: the example plan's sustained throughput (give --effective-tflops or "
        "--accelerator)",
    )


def _engine_only(args, given):
    """The engine's inputs beyond the planner's: failures, scaling, ownership, memory, other."""
    extras = {k: v for k, v in given.items() if k not in _PLAN_NAME}
    if _node_rate_to_accelerator_rate(extras):
        args.engine_flags["failures_per_accelerator_day"] = "--failures-per-1000-node-days"
    owned = [k for k in _OWNERSHIP_KEYS if k in given]
    if "purchase_usd_per_accelerator" in given:
        if "usd_per_accelerator_hour" in given:
            raise CommandError("give --usd-per-hour or --purchase-usd-per-accelerator, not both")
    elif owned:
        raise CommandError(f"{_verb(owned, 'goes', 'go')} with --purchase-usd-per-accelerator")
    return extras


def _plan_from_args(args):
    """The plan of the flags: planner inputs resolved by :func:`udfs.plan.resolve`.

    The flags, a preset or the DeepSeek-V3-like example plan give the planner inputs;
    ``udfs.plan.resolve`` fills every input left out by its one rule table (``RULES``) and
    says so in a note; the engine-only flags (failures, scaling, ownership) go to the engine
    beside resolve's arguments. Nothing is filled in silently, a flag that does not change
    the result says so in a note, and flags that contradict each other are an error.
    """
    from . import catalogue
    from .plan import resolve

    given = _given_flags(args)
    notes = []
    inputs, accel_name = _base_plan(args, given, notes)
    inputs.update({_PLAN_NAME[k]: v for k, v in given.items() if k in _PLAN_NAME})
    extras = _engine_only(args, given)
    accel = None
    if not is_blank(accel_name):
        accel = catalogue.accelerator(accel_name, argument="--accelerator")
        inputs["accelerator_name"] = accel["name"]
    example_throughput = _throughput_inputs(args, given, inputs, accel)
    resolved = resolve(inputs, precision=args.precision or "bf16", own_runs=_own_runs(args))
    arguments = dict(resolved.arguments)
    applied = [n for n in resolved.notes if n.name not in _SILENT_NOTES]
    if "failures_per_accelerator_day" in extras and "goodput" not in given:
        arguments.pop("goodput", None)  # derived from the failure rate instead
        applied = [n for n in applied if n.name != "goodput"]
    if "purchase_usd_per_accelerator" in extras:
        arguments.pop("usd_per_accelerator_hour", None)  # the ownership price instead
        applied = [n for n in applied if n.name != "usd_per_accelerator_hour"]
    arguments.update(extras)
    example_model = args.preset is None and not any(k in given for k in _MODEL_KEYS)
    if example_model and accel is None and "watts_per_accelerator" not in given:
        # The example plan's own draw (its planner column names an H800 SXM, whose TDP is not
        # published), not a catalogue accelerator's TDP.
        applied = [
            _note(
                n.name,
                n.value,
                "not given: the example plan's 700 W (give --watts or --accelerator)",
            )  # fmt: skip
            if n.name == "watts_per_accelerator" and n.value == SEED_PLAN["watts_per_accelerator"]
            else n
            for n in applied
        ]
    _check_batch_within_run(arguments)
    if "active_params" not in inputs:  # dense: the active parameters are --total-params
        args.engine_flags.setdefault("active_params", "--total-params")
    notes = [*notes, *([example_throughput] if example_throughput else []), *applied]
    notes.extend(_unused_flag_notes(args, given, arguments))
    return _Plan(inputs, resolved, arguments, notes)


def _check_batch_within_run(arguments):
    """--global-batch-tokens at most the run's training tokens: one step cannot take more."""
    batch = arguments.get("global_batch_tokens")
    tokens = arguments.get("training_tokens")
    if batch is not None and tokens is not None and batch > tokens:
        raise InputError(
            "global_batch_tokens",
            f"must not exceed training_tokens ({_note_value('tokens', tokens)}): one step "
            "cannot take more than the whole run",
            value=batch,
        )


#: Flags of the scaling model, used only with --global-batch-tokens.
_SCALING_KEYS = (
    "tensor_parallel",
    "pipeline_parallel",
    "sequence_tokens",
    "pipeline_interleave",
    "interconnect_gb_per_s",
    "comm_overlap",
)
_FAILURE_KEYS = ("checkpoint_write_minutes", "restart_minutes")


def _unused_flag_notes(args, given, plan):
    """A note for each valid flag that does not change this plan's result (the engine still
    checks its value)."""
    texts = []
    scaling = [k for k in _SCALING_KEYS if k in given]
    if scaling and "global_batch_tokens" not in plan:
        texts.append(
            f"{_verb(scaling, 'does', 'do')} not affect the result without --global-batch-tokens"
        )
    failure = [k for k in _FAILURE_KEYS if k in given]
    if failure and "failures_per_accelerator_day" not in plan:
        texts.append(
            f"{_verb(failure, 'does', 'do')} not affect the result without "
            "--failures-per-accelerator-day or --failures-per-1000-node-days"
        )
    if "training_state_bytes_per_param" in given and "hbm_gb" not in plan:
        texts.append(
            "--training-state-bytes-per-param does not affect the result without --hbm-gb "
            "(or an --accelerator with a published HBM size)"
        )
    if args.precision is not None and ("peak_tflops" in given or "peak_tflops" not in plan):
        texts.append(
            "--precision does not affect the result: it picks the --accelerator's peak, and "
            + ("--peak-tflops is given" if "peak_tflops" in given else "none is used")
        )
    return [_note("flags", None, text) for text in texts]


def _node_rate_to_accelerator_rate(plan):
    from . import engine

    per_node = plan.pop("failures_per_1000_node_days", None)
    per_node_size = plan.pop("accelerators_per_node", None)
    if per_node is None:
        if per_node_size is not None:
            raise CommandError("--accelerators-per-node goes with --failures-per-1000-node-days")
        return None
    if "failures_per_accelerator_day" in plan:
        raise CommandError(
            "give --failures-per-accelerator-day or --failures-per-1000-node-days, not both"
        )
    if per_node_size is None:
        plan["failures_per_accelerator_day"] = engine.failure_rate_from_node_days(per_node)
    else:
        plan["failures_per_accelerator_day"] = engine.failure_rate_from_node_days(
            per_node, per_node_size
        )
    return "--failures-per-1000-node-days"


# -- notes, ranges and the printed figures ----------------------------------------------------

_PERCENT_NOTES = ("mfu", "goodput", "throughput_range_pct", "price_range_pct")


def _note_value(name, value):
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


def _note_text(note):
    """One ``note:`` line: ``--usd-per-kwh 0.08: not given: electricity priced at ...``."""
    why = re.sub(r"^blank\b", "not given", note.why)
    flag = _FLAG_OF.get(note.name)
    if flag is None:
        return why
    return f"{flag} {_note_value(note.name, note.value)}: {why}"


def _note_json(note):
    value = note.value
    if isinstance(value, (float, np.floating)):
        value = float(value)
    out = {"name": note.name, "value": value, "why": note.why}
    if note.name in _FLAG_OF:
        out["flag"] = _FLAG_OF[note.name]
    return out


#: A printed figure this large or larger is written in scientific notation (1.234e+20):
#: never a number of hundreds of digits.
SCIENTIFIC_FROM = 1e15
#: A figure of days below this is written with two significant digits (9.5e-05), not "0.0".
SHORT_DAYS_BELOW = 0.05
_SPEC = re.compile(r"\{:[^}]*\}")


class _Figure(str):
    """A format string (``"${:,.0f}"``) whose ``format`` writes a figure of 1e15 or more (in
    size) in scientific notation, ``"$1.234e+20"``, and, with ``short=True``, a positive figure
    below 0.05 with two significant digits (days: ``"9.5e-05"``, never a misleading "0.0")."""

    def __new__(cls, text, short=False):
        self = super().__new__(cls, text)
        self.short = short
        return self

    def format(self, value):
        v = float(value)
        if abs(v) >= SCIENTIFIC_FROM:
            return _SPEC.sub("{:.3e}", self).format(v)
        if self.short and 0 < abs(v) < SHORT_DAYS_BELOW:
            return _SPEC.sub("{:.2g}", self).format(v)
        return str.format(self, v)


_HOURS = _Figure("{:,.0f}")
_DAYS = _Figure("{:,.1f}", short=True)
_USD = _Figure("${:,.0f}")
_KWH = _Figure("{:,.0f} kWh")

#: The quantities given a P10-P90 range, their words and formats on the command line.
RANGE_LINES = {
    "accelerator_hours": ("Accelerator-hours", _HOURS),
    "wall_clock_days": ("Wall-clock days", _DAYS),
    "rental_cost_usd": ("Rental-equivalent cost", _USD),
    "electricity_kwh": ("Accelerator electricity", _KWH),
    "total_cost_usd": ("Total cost", _USD),
}


def _ranges(plan, result):
    """P10 / P50 / P90 of the range quantities (udfs.ranges), or None when no range applies."""
    from .ranges import estimate_ranges

    r = plan.resolved
    if not (r.throughput_sigma > 0 or r.price_sigma > 0):
        return None
    ranges = estimate_ranges(result, r.throughput_sigma, r.price_sigma)
    return {q: {k: float(v) for k, v in ranges[q].items()} for q in RANGE_LINES}


def _fmt_count(n):
    return f"{int(n)}" if float(n).is_integer() else f"{n:g}"


def _print_seed_lines(r, accelerators):
    """The example plan's six lines, in the methodology's exact format (a figure of 1e15 or
    more in scientific notation, days below 0.05 with two significant digits)."""
    accelerators = _fmt_count(accelerators)
    print(f"Training FLOPs: {r['training_flops']:.3e}")
    print(f"Accelerator-hours: {_HOURS.format(r['accelerator_hours'])}")
    print(
        f"Wall-clock at {accelerators} accelerator{'s' * (accelerators != '1')}: "
        f"{_DAYS.format(r['wall_clock_days'])} days"
    )
    print(f"BF16 checkpoint: {_Figure('{:.1f} GB').format(r['checkpoint_gb'])}")
    print(f"Rental-equivalent cost: {_USD.format(r['rental_cost_usd'])}")
    print(f"Accelerator electricity: {_KWH.format(r['electricity_kwh'])}")


def _extended_lines(r, arguments, target_days):
    """(label, text) of the figures after the six lines; text None when it does not apply."""

    def text(key, fmt):
        return None if math.isnan(r[key]) else _Figure(fmt).format(r[key])

    mtbf = None
    if not math.isnan(r["cluster_mtbf_hours"]):
        minutes = r["checkpoint_interval_hours"] * 60
        mtbf = (f"{_Figure('{:,.2f}').format(r['cluster_mtbf_hours'])} h; checkpoint every "
                f"{_Figure('{:,.0f}').format(minutes)} min")  # fmt: skip
    runs_per_year = _Figure("{:,.1f}", short=True).format(r["iterations_per_year"])
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
        ("Tokens per parameter", text("tokens_per_param", "{:,.1f} (Chinchilla-optimal ~20)")),
    ]  # fmt: skip
    if "accelerators_for_target_days" in r:
        lines.append(
            (
                f"Accelerators for {target_days:g} day{'s' * (target_days != 1)}",
                _Figure("{:,.0f}").format(math.ceil(r["accelerators_for_target_days"])),
            )
        )
    return lines


def _range_lines(ranges):
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


def _estimate_json(plan, result, ranges):
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


def _run_estimate(args):
    from . import engine

    plan = _plan_from_args(args)
    result = engine.estimate(**plan.arguments)  # every output finite, or OutOfRangeError
    if args.target_days is not None:
        days = args.target_days
        result["accelerators_for_target_days"] = check_result(
            "accelerators_for_target_days",
            engine.accelerators_for_days(result["accelerator_hours"], days),
            {"target_days": days},
            result_label=f"accelerators for {days:g} day{'s' * (days != 1)}",
        )
    ranges = _ranges(plan, result)
    if args.json:
        print(_estimate_json(plan, result, ranges))
        return 0
    _print_seed_lines(result, plan.arguments["accelerators"])
    print()
    for label, value in _extended_lines(result, plan.arguments, args.target_days):
        if value is not None:
            print(f"{label}: {value}")
    if ranges is not None:
        print()
        for line in _range_lines(ranges):
            print(line)
    for note in plan.notes:
        print(f"  note: {_note_text(note)}")
    return 0


# ---------------------------------------------------------------------------------------------
# runs, accelerators
# ---------------------------------------------------------------------------------------------


def _configure_table(p):
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records")
    fmt.add_argument("--csv", action="store_true", help="print CSV")


def _configure_runs(p):
    _configure_table(p)
    p.add_argument("--own-runs", metavar="FILE", help=_OWN_RUNS_HELP + " (listed after)")


#: Text tables fit a terminal this wide.
WIDTH = 100


def _print_frame(df, args, formats=None, headers=None):
    """``df`` as JSON records, CSV, or a text table (``headers``: column -> header lines)."""
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return
    if args.csv:
        print(df.to_csv(index=False), end="")
        return
    formats = formats or {}
    headers = headers or {}
    columns = []
    for col in df.columns:
        fmt = formats.get(col)
        cells = [
            "" if is_blank(v) else (fmt.format(v) if fmt else str(v)) for v in df[col].tolist()
        ]
        numeric = fmt is not None
        columns.append((headers.get(col, (col,)), cells, numeric))
    depth = max(len(h) for h, _, _ in columns)
    lines = [[] for _ in range(depth + len(df))]
    for head, cells, numeric in columns:
        head = ("",) * (depth - len(head)) + tuple(head)
        width = max(map(len, (*head, *cells)))
        for i, text in enumerate((*head, *cells)):
            lines[i].append(text.rjust(width) if numeric else text.ljust(width))
    for line in lines:
        print("  ".join(line).rstrip())


#: The columns of ``runs`` (all three formats): the grouped-validation table of the default MFU.
RUNS_COLUMNS = {
    # column: (format in the text table, header lines)
    "run": (None, ("run",)),
    "organisation": (None, ("organisation",)),
    "generation": (None, ("gen.",)),
    "implied_mfu": ("{:.1%}", ("implied", "MFU")),
    "predicted_mfu": ("{:.1%}", ("predicted", "MFU")),
    "disclosed_accelerator_hours": ("{:,.0f}", ("disclosed", "hours")),
    "predicted_accelerator_hours": ("{:,.0f}", ("predicted", "hours")),
    "error_pct": ("{:+.0f}%", ("error",)),
    "inside_p10_p90": (None, ("inside", "P10-P90")),
}


def runs_table():
    """The grouped-validation table ``compute-lab runs`` prints (a DataFrame, RUNS_COLUMNS).

    One row per calibration run: its organisation, implied MFU, the MFU the default model
    predicts for it when fitted without every run of its organisation, the disclosed and
    predicted accelerator-hours, the error (predicted / disclosed - 1, in %) and whether the
    disclosed hours fall inside P10..P90.
    """
    from . import calibration

    return calibration.grouped_validation()[list(RUNS_COLUMNS)].reset_index(drop=True)


def runs_summary():
    """The figures printed under the runs table: the default's under grouped validation and
    leave-one-out, the best constant's and the former constant's (grouped validation)."""
    from . import calibration

    table = calibration.model_comparison()
    grouped, loo = calibration.grouped_summary(), calibration.loo_summary()
    constants = table.loc[["constant", "constant (organisations)"]]
    best = constants["mean_log_score"].idxmax()
    legacy = table.loc[f"legacy constant {calibration.LEGACY_DEFAULT_MFU:.1%}"]
    return {
        "model": calibration.chosen_model(),
        "runs": grouped["runs"],
        "organisations": grouped["organisations"],
        "fitted_numbers": grouped["fitted_numbers"],
        "median_abs_error_pct": grouped["median_abs_error_pct"],
        "mean_log_error": grouped["mean_log_error"],
        "share_inside_p10_p90": grouped["share_inside_p10_p90"],
        "nested_share_inside_p10_p90": grouped["nested_share_inside_p10_p90"],
        "mean_log_score": grouped["mean_log_score"],
        "throughput_sigma": grouped["sigma_ln"],
        "loo_median_abs_error_pct": loo["median_abs_error_pct"],
        "loo_share_inside_p10_p90": loo["share_inside_p10_p90"],
        "constant_model": best,
        "constant_median_abs_error_pct": float(constants.loc[best, "median_abs_error_pct"]),
        "constant_mean_log_score": float(constants.loc[best, "mean_log_score"]),
        "legacy_mfu": calibration.LEGACY_DEFAULT_MFU,
        "legacy_median_abs_error_pct": float(legacy["median_abs_error_pct"]),
        "legacy_share_inside_p10_p90": float(legacy["share_inside_p10_p90"]),
    }


def _runs_paragraphs(s):
    return [
        "Grouped validation (leave one organisation out): each run's accelerator-hours "
        f"predicted at the default MFU ({s['model']} model, {s['fitted_numbers']} fitted "
        "numbers) fitted without every run of its organisation; error: predicted over "
        "disclosed hours, minus 1.",
        f"Default MFU, grouped validation: median |error| {s['median_abs_error_pct']:.1f}%, "
        f"mean ln(disclosed / predicted) {s['mean_log_error']:+.3f}, disclosed hours inside "
        f"P10..P90 for {s['share_inside_p10_p90']:.0%} of the {s['runs']} runs from "
        f"{s['organisations']} organisations ({s['nested_share_inside_p10_p90']:.0%} with the "
        "spread sized without the run's organisation), mean log score "
        f"{s['mean_log_score']:.3f}. "
        f"Leave-one-out (a run's organisation stays in the fit): median |error| "
        f"{s['loo_median_abs_error_pct']:.1f}%, inside P10..P90 "
        f"{s['loo_share_inside_p10_p90']:.0%}.",
        f"Best constant MFU ({s['constant_model']}), grouped validation: median |error| "
        f"{s['constant_median_abs_error_pct']:.1f}%, mean log score "
        f"{s['constant_mean_log_score']:.3f}. The former constant MFU {s['legacy_mfu']:.1%}: "
        f"median |error| {s['legacy_median_abs_error_pct']:.1f}%, inside P10..P90 "
        f"{s['legacy_share_inside_p10_p90']:.0%}.",
    ]


def _run_runs(args):
    from . import calibration

    if getattr(args, "own_runs", None) is not None and (args.json or args.csv):
        raise CommandError("--own-runs lists your runs in the text table only: drop --json/--csv")
    df = runs_table()
    if args.json or args.csv:
        _print_frame(df, args)
        return 0
    text = df.astype({"inside_p10_p90": object})
    text["inside_p10_p90"] = ["yes" if v else "no" for v in df["inside_p10_p90"]]
    _print_frame(
        text,
        args,
        {c: fmt for c, (fmt, _) in RUNS_COLUMNS.items() if fmt},
        {c: head for c, (_, head) in RUNS_COLUMNS.items()},
    )
    others = calibration.reference_table()
    others = others.loc[~others["in_calibration"], "run"].tolist()
    print()
    paragraphs = _runs_paragraphs(runs_summary())
    if others:
        paragraphs.append(
            "Also presets (estimate --preset NAME), not in the calibration set: "
            f"{', '.join(others)}."
        )
    for paragraph in paragraphs:
        print(textwrap.fill(paragraph, WIDTH))
    own = _own_runs(args)
    if own is not None:
        print()
        _print_own_runs(own, args)
    return 0


def _print_own_runs(own, args):
    """Each own run's implied MFU beside the calibrated default and the default pulled toward
    the other own runs (the run itself left out)."""
    from . import own_runs

    t = own.table
    pooled = []
    for i in range(len(t)):
        others = own_runs.OwnRuns(t.drop(index=t.index[i]))
        pooled.append(float(others.mfu(t["accelerator"].iloc[i], t["active_params"].iloc[i])))
    df = t[["name", "accelerator", "implied_mfu", "calibrated_mfu"]].assign(pooled_mfu=pooled)
    print(f"Your {own.count} own run(s): pull toward them {own.pull:.0%} (more runs, more pull).")
    _print_frame(df, args, {c: "{:.1%}" for c in ("implied_mfu", "calibrated_mfu", "pooled_mfu")},
                 {"implied_mfu": ("implied", "MFU"), "calibrated_mfu": ("calibrated", "MFU"),
                  "pooled_mfu": ("with your", "other runs")})  # fmt: skip


def _run_accelerators(args):
    from . import catalogue

    df = catalogue.accelerators()
    if not (args.json or args.csv):
        df = df.drop(columns=["source"])
    _print_frame(df, args, {c: "{:,g}" for c in df.columns if c not in ("name", "source")})
    return 0


# ---------------------------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------------------------

_BUILTIN = {
    "estimate": (
        "estimate one training run (default: the DeepSeek-V3-like example plan)",
        _configure_estimate,
        _run_estimate,
    ),
    "runs": (
        "the default MFU checked run by run: disclosed accelerator-hours beside the predicted",
        _configure_runs,
        _run_runs,
    ),
    "accelerators": ("the accelerator catalogue", _configure_table, _run_accelerators),
}


def _commands():
    commands = dict(_BUILTIN)
    for module in ("workbook_templates.commands", "addin.commands"):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        commands.update(mod.COMMANDS)
    return commands


#: Actions that may legitimately be given more than once (none of ours, but kept possible).
_REPEATABLE = (
    argparse._AppendAction,
    argparse._AppendConstAction,
    argparse._CountAction,
    argparse._HelpAction,
    argparse._VersionAction,
)
_ONCE = {}


def _once(cls):
    """A subclass of the action class ``cls`` that refuses a second value for its setting:
    the same flag twice, or two flags of one setting (``--tokens`` and ``--training-tokens``)."""
    if cls not in _ONCE:

        class Once(cls):
            def __call__(self, parser, namespace, values, option_string=None):
                if self.nargs is None and isinstance(values, list):  # argparse's --flag=--
                    parser.error(f"argument {option_string}: expected one value, not '--'")
                given = parser.given_flags
                first = given.get(self.dest)
                if first is not None:
                    if first == option_string:
                        parser.error(f"{option_string} is given twice; give it once")
                    parser.error(
                        f"{option_string} and {first} set the same thing; give one of them"
                    )
                given[self.dest] = option_string
                super().__call__(parser, namespace, values, option_string)

        Once.__name__ = Once.__qualname__ = f"Once{cls.__name__}"
        _ONCE[cls] = Once
    return _ONCE[cls]


class _Parser(argparse.ArgumentParser):
    """One-line errors (exit 2), no abbreviated flags, no flag given twice."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False  # --tok is not --tokens
        super().__init__(*args, **kwargs)
        self.given_flags = {}
        # A value such as -1e-315 or -2.5k is a (negative) value, not a flag: argparse's own
        # pattern knows only -1 and -1.5, and would answer "expected one argument".
        self._negative_number_matcher = re.compile(
            r"^-(\d[\d,_]*(\.\d*)?|\.\d+)(e[-+]?\d+)?\s*[kmbgtp%]?$", re.I | re.ASCII
        )

    def error(self, message):  # one line, exit 2
        m = re.fullmatch(r"argument (\S+): ignored explicit argument (.*)", message, re.S)
        if m:  # argparse's words for --json=1
            flag = m.group(1).split("/")[0]
            message = (
                f"{flag} takes no value (got {flag}={m.group(2).strip(chr(39))}): give {flag} alone"
            )
        self.exit(2, console_line(f"{self.prog}: error: {message}") + "\n")

    def parse_known_args(self, args=None, namespace=None):
        self.given_flags = {}
        return super().parse_known_args(args, namespace)

    def _add_action(self, action):
        if action.option_strings and not isinstance(action, _REPEATABLE):
            action.__class__ = _once(type(action))
        return super()._add_action(action)

    def known_flags(self):
        """Every long flag -> the flag to suggest for it (a hidden alias -> its listed name)."""
        listed = {}
        for action in self._actions:
            if action.help is not argparse.SUPPRESS and action.option_strings:
                listed.setdefault(action.dest, action.option_strings[-1])
        return {
            flag: flag if action.help is not argparse.SUPPRESS else listed.get(action.dest, flag)
            for action in self._actions
            for flag in action.option_strings
            if flag.startswith("--")
        }


def build_parser(command=None):
    """The parser, with the flags of ``command`` (all commands' flags when None).

    Building only the chosen command's flags keeps start-up light: the workbook and server
    commands import openpyxl, pandas or xlwings only when they are the one being run.
    Returns ``(parser, handlers)``; ``parser.commands`` maps each name to its subparser.
    """
    parser = _Parser(prog=PROG, description="Plan large-model training runs: time, cost, energy.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    handlers = {}
    for name, (help_text, configure, run) in _commands().items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if command is None or name == command:
            configure(p)
        handlers[name] = run
    parser.commands = sub.choices
    return parser, handlers


def _suggest(typed, flags):
    """``; did you mean --tokens?`` for a mistyped flag (``flags``: see ``known_flags``)."""
    name = typed.split("=", 1)[0]
    starts = sorted({flags[f] for f in flags if f.startswith(name)})
    if not 0 < len(starts) <= 3:
        starts = [flags[f] for f in difflib.get_close_matches(name, list(flags), n=1)]
    return f"; did you mean {' or '.join(starts)}?" if starts else ""


def _unknown(chain, extras):
    """One line for arguments no parser took: a mistyped flag or a stray value.

    ``chain`` is the parsers that took part (see ``_subparser_chain``); the message is in the
    name of the innermost, and suggests the flags of all of them.
    """
    prog = chain[-1].prog
    flags = [a for a in extras if a.startswith("--") or (a.startswith("-") and a[1:2].isalpha())]
    if flags:
        typed = flags[0].split("=", 1)[0]
        known = {f: g for p in chain for f, g in p.known_flags().items()}
        return f"{prog}: error: unknown flag {typed}{_suggest(typed, known)}"
    return f"{prog}: error: unexpected argument {extras[0]!r} (flags take one value each)"


def _subparser_chain(parser, args):
    """The parsers that took part: the top one, the command's, a nested action's."""
    chain = [parser]
    command = getattr(args, "command", None)
    if command is not None:
        sub = parser.commands[command]
        chain.append(sub)
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                nested = getattr(args, action.dest, None)
                if nested in action.choices:
                    chain.append(action.choices[nested])
    return chain


def main(argv=None):
    """Run the command line; returns the exit status (0, 1 internal error, 2 bad input)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C while the parser and the commands load
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser, handlers = build_parser(command if command in _commands() else None)
    if command is not None and command not in handlers and not argv[0].startswith("-"):
        close = difflib.get_close_matches(command, list(handlers), n=1)
        hint = f"; did you mean {close[0]}?" if close else f" (commands: {', '.join(handlers)})"
        print(console_line(f"{PROG}: error: unknown command {command!r}{hint}"), file=sys.stderr)
        return 2
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error already printed
        return exc.code if isinstance(exc.code, int) else 2
    if extras:
        print(console_line(_unknown(_subparser_chain(parser, args), extras)), file=sys.stderr)
        return 2
    if args.command is None:
        parser.print_help()
        return 2
    args.engine_flags = {}
    for p in _subparser_chain(parser, args):
        args.engine_flags.update(p.given_flags)
    prog = f"{PROG} {args.command}"
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # never a Python warning in front of a user
            return handlers[args.command](args) or 0
    except InputError as err:
        print(console_line(f"{prog}: error: {_describe(err, _flag_namer(args))}"), file=sys.stderr)
    except CommandError as err:
        print(console_line(f"{prog}: error: {err}"), file=sys.stderr)
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # never a traceback in front of a user
        if os.environ.get("COMPUTE_LAB_DEBUG"):
            raise
        print(
            console_line(f"{prog}: internal error: {type(err).__name__}: {err} ")
            + "(set COMPUTE_LAB_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
