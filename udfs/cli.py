"""The ``compute-lab`` command line.

Subcommands here: ``estimate``, ``runs``, ``accelerators``. Other packages add theirs
(``templates``, ``report``, ``addin``, ``serve``, ``lite-bundle``) through a ``COMMANDS``
mapping in ``workbook_templates.commands`` and ``addin.commands``:
``{"name": (help, configure_parser(parser), run(args) -> int)}``.

Bad input exits with status 2 and one line naming the flag and the rule; no traceback
(set ``COMPUTE_LAB_DEBUG=1`` to see one for an internal error), no Python warning. Flags
are never abbreviated, never given twice (nor under two names), and a mistyped flag gets a
"did you mean" suggestion. A figure that would leave a float's range (infinity, NaN, a
denormal) is refused, naming the flags that drove it there.
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
    InputError,
    OutOfRangeError,
    check_at_least,
    check_fraction,
    check_non_negative,
    check_positive,
    check_result,
    check_whole,
    is_blank,
)

__all__ = ["main", "parse_number", "CommandError"]

PROG = "compute-lab"


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


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

#: (flag, engine argument, help). Numbers accept 671B / 14.8T forms.
_ESTIMATE_FLAGS = [
    ("--total-params", "total_params", "all parameters, e.g. 671B"),
    ("--active-params", "active_params", "parameters active per token (default: total)"),
    ("--tokens", "training_tokens", "training tokens, e.g. 14.8T"),
    ("--accelerators", "accelerators", "accelerators in the job"),
    ("--effective-tflops", "effective_tflops", "sustained TFLOP/s per accelerator, used as is"),
    ("--peak-tflops", "peak_tflops", "peak TFLOP/s per accelerator (default: catalogue)"),
    ("--mfu", "mfu", "model FLOPs utilisation, (0, 1] or 40%%"),
    ("--goodput", "goodput", "share of time training, (0, 1]"),
    ("--usd-per-hour", "usd_per_accelerator_hour", "US$ per accelerator-hour"),
    ("--watts", "watts_per_accelerator", "W per accelerator (default 700)"),
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
    ("--accelerators-per-node", "accelerators_per_node", "for the node-day rate (default 8)"),
    ("--checkpoint-write-minutes", "checkpoint_write_minutes", "stall per checkpoint (default 1)"),
    ("--restart-minutes", "restart_minutes", "failure to training again (default 10)"),
    ("--global-batch-tokens", "global_batch_tokens", "tokens per step; enables sub-linear scaling"),
    ("--tensor-parallel", "tensor_parallel", "tensor-parallel degree (scaling model)"),
    ("--pipeline-parallel", "pipeline_parallel", "pipeline-parallel degree (scaling model)"),
    ("--sequence-tokens", "sequence_tokens", "sequence length (scaling model, default 8192)"),
    ("--pipeline-interleave", "pipeline_interleave", "virtual pipeline stages (default 1)"),
    ("--interconnect-gb-per-s", "interconnect_gb_per_s", "scale-out GB/s per accelerator"),
    ("--comm-overlap", "comm_overlap", "share of all-reduce hidden, [0, 1)"),
    ("--hbm-gb", "hbm_gb", "HBM per accelerator, GB (default: catalogue)"),
    (
        "--training-state-bytes-per-param",
        "training_state_bytes_per_param",
        "16 = mixed-precision Adam",
    ),
    (
        "--purchase-usd-per-accelerator",
        "purchase_usd_per_accelerator",
        "owned hardware: capital cost per accelerator (instead of --usd-per-hour)",
    ),
    ("--amortisation-years", "amortisation_years", "owned hardware: years (default 4)"),
    ("--utilisation", "utilisation", "owned hardware: busy share, (0, 1]"),
    ("--other-costs-usd", "other_costs_usd", "other costs added to the total, US$"),
]


#: Engine argument -> the flag that sets it (hidden aliases included, in _flag_namer).
_FLAG_OF = {dest: flag for flag, dest, _ in _ESTIMATE_FLAGS} | {
    "tokens": "--tokens",
    "target_days": "--target-days",
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


def _configure_estimate(p):
    p.add_argument("--preset", metavar="NAME", help="start from a reference run (see `runs`)")
    p.add_argument("--accelerator", metavar="NAME", help="accelerator from the catalogue")
    p.add_argument(
        "--precision",
        choices=("bf16", "fp8"),
        help="peak TFLOP/s column with --accelerator (default bf16)",
    )
    for flag, dest, help_text in _ESTIMATE_FLAGS:
        kind = _accelerator_count if dest == "accelerators" else parse_number
        p.add_argument(flag, dest=dest, metavar="N", help=help_text, type=kind)
    p.add_argument(
        "--training-tokens",
        dest="training_tokens",
        metavar="N",
        type=parse_number,
        help=argparse.SUPPRESS,
    )
    p.add_argument(
        "--usd-per-accelerator-hour",
        dest="usd_per_accelerator_hour",
        metavar="N",
        type=parse_number,
        help=argparse.SUPPRESS,
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


def _flags(keys):
    return ", ".join(_flag(k) for k in keys)


def _verb(keys, singular, plural):
    """``--mfu needs``, ``--mfu, --goodput need``."""
    return f"{_flags(keys)} {singular if len(keys) == 1 else plural}"


def _base_plan(args, given, notes):
    """The plan the flags start from: a preset, the user's own model, or the example plan."""
    from . import calibration, catalogue

    if args.preset is not None:
        if not args.preset.strip():
            raise CommandError("--preset must name a reference run (see `compute-lab runs`)")
        r = catalogue.run(args.preset, argument="--preset")
        keys = ("total_params", "active_params", "training_tokens", "accelerators",
                "watts_per_accelerator", "usd_per_accelerator_hour", "pue")  # fmt: skip
        plan = {k: float(r[k]) for k in keys if not is_blank(r[k])}
        missing = [k for k in ("total_params", "training_tokens", "accelerators")
                   if k not in plan and k not in given]  # fmt: skip
        if missing:
            raise CommandError(
                f"--preset {r['name']!r} does not disclose its "
                f"{', '.join(k.replace('_', ' ') for k in missing)}: "
                f"give {_flags(missing)}"
            )
        accel_name = args.accelerator or r["accelerator"]
        if not any(k in given for k in ("effective_tflops", "mfu")) and not is_blank(accel_name):
            ref = calibration.reference_table().loc[r["name"]]
            if not is_blank(ref["implied_mfu"]):
                plan["mfu"] = float(ref["implied_mfu"])
                notes.append(f"MFU {plan['mfu']:.1%}: implied by {r['name']}'s disclosed hours")
        notes.append(f"preset {r['name']} ({catalogue.source('run', r['name'])})")
        return plan, accel_name
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
            "model: the DeepSeek-V3-like example plan (671B total, 37B active, 14.8T tokens"
            + ("" if "accelerators" in given else ", 2048 accelerators")
            + "); give --total-params and --tokens for your own"
        )
    return plan, args.accelerator


def _below_one(name, value):
    if check_fraction(name, value, allow_zero=True) >= 1:
        raise InputError(name, "must be less than 1", value=value)


#: The range rule of each number flag (the engine's), checked before anything else so that a
#: bad value is named even where the flag would not apply.
_RULES = {
    **dict.fromkeys(
        (
            "total_params",
            "active_params",
            "training_tokens",
            "effective_tflops",
            "peak_tflops",
            "watts_per_accelerator",
            "checkpoint_bytes_per_param",
            "failures_per_accelerator_day",
            "accelerators_per_node",
            "checkpoint_write_minutes",
            "global_batch_tokens",
            "sequence_tokens",
            "interconnect_gb_per_s",
            "hbm_gb",
            "training_state_bytes_per_param",
            "amortisation_years",
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
            "purchase_usd_per_accelerator",
            "other_costs_usd",
        ),
        check_non_negative,
    ),
    **dict.fromkeys(("mfu", "goodput", "utilisation"), check_fraction),
    **dict.fromkeys(
        ("server_overhead", "pue", "tensor_parallel", "pipeline_parallel", "pipeline_interleave"),
        lambda name, value: check_at_least(name, value, 1.0),
    ),
    "accelerators": check_whole,
    "comm_overlap": _below_one,
}


def _plan_from_args(args):
    """Engine keyword arguments from the flags, a preset, a catalogue accelerator, the example.

    Nothing is filled in silently: every default of the example plan behind a partly given
    plan is named in a note, a flag that does not change the result says so in a note, and
    flags that contradict each other are an error.
    """
    from . import calibration, catalogue

    given = {dest: getattr(args, dest) for _, dest, _ in _ESTIMATE_FLAGS}
    given = {k: v for k, v in given.items() if v is not None}
    for dest, value in [*given.items(), ("target_days", args.target_days)]:
        if value is not None:
            _RULES[dest](dest, value)
    if args.accelerator is not None and not args.accelerator.strip():
        raise CommandError(
            "--accelerator must name an accelerator (see `compute-lab accelerators`)"
        )
    notes = []
    plan, accel_name = _base_plan(args, given, notes)
    plan.update(given)
    if _node_rate_to_accelerator_rate(plan):
        args.engine_flags["failures_per_accelerator_day"] = "--failures-per-1000-node-days"
    quiet = not given and args.accelerator is None and args.preset is None  # the example as is
    precision = args.precision or "bf16"

    accel = None
    if not is_blank(accel_name):
        accel = catalogue.accelerator(accel_name, argument="--accelerator")
        if "hbm_gb" not in plan and not is_blank(accel["hbm_gb"]):
            plan["hbm_gb"] = float(accel["hbm_gb"])
        if "watts_per_accelerator" not in plan:
            if is_blank(accel["tdp_watts"]):
                notes.append(f"700 W assumed: the {accel['name']}'s TDP is not published")
            else:
                plan["watts_per_accelerator"] = float(accel["tdp_watts"])

    deriving = [k for k in _DERIVING_KEYS if k in given]
    if "effective_tflops" in given:
        if deriving:
            raise CommandError(f"--effective-tflops is used as is: leave out {_flags(deriving)}")
        plan.pop("mfu", None)
    elif accel is not None or "peak_tflops" in plan:
        if "peak_tflops" not in plan:
            column = f"{precision}_tflops"
            if is_blank(accel[column]):
                raise CommandError(
                    f"--accelerator {accel['name']!r} has no published {precision.upper()} "
                    "peak: give --peak-tflops or --effective-tflops"
                )
            plan["peak_tflops"] = float(accel[column])
            notes.append(
                f"accelerator {accel['name']}: {plan['peak_tflops']:g} peak TFLOP/s "
                f"({precision.upper()})"
            )
        if "mfu" not in plan:
            plan["mfu"] = calibration.default_mfu()
            notes.append(f"MFU {plan['mfu']:.1%}: default, median of the disclosed runs")
    elif deriving:
        raise CommandError(
            f"{_verb(deriving, 'needs', 'need')} a peak throughput: give --accelerator or "
            "--peak-tflops"
        )
    else:
        plan["effective_tflops"] = SEED_PLAN["effective_tflops"]
        if not quiet:
            notes.append(
                "throughput: the example plan's 400 effective TFLOP/s (give --effective-tflops "
                "or --accelerator)"
            )

    owned = [k for k in _OWNERSHIP_KEYS if k in given]
    if "purchase_usd_per_accelerator" in given:
        if "usd_per_accelerator_hour" in given:
            raise CommandError("give --usd-per-hour or --purchase-usd-per-accelerator, not both")
        plan.pop("usd_per_accelerator_hour", None)
    elif owned:
        raise CommandError(f"{_verb(owned, 'goes', 'go')} with --purchase-usd-per-accelerator")
    elif "usd_per_accelerator_hour" not in plan and args.preset is None:
        plan["usd_per_accelerator_hour"] = SEED_PLAN["usd_per_accelerator_hour"]
        if not quiet:
            notes.append(
                "price: the example plan's $2.0 per accelerator-hour (give --usd-per-hour)"
            )
    notes.extend(_unused_flag_notes(args, given, plan, accel))
    return plan, notes


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


def _unused_flag_notes(args, given, plan, accel):
    """A note for each valid flag that does not change this plan's result (the engine still
    checks its value)."""
    notes = []
    scaling = [k for k in _SCALING_KEYS if k in given]
    if scaling and "global_batch_tokens" not in plan:
        notes.append(
            f"{_verb(scaling, 'does', 'do')} not affect the result without --global-batch-tokens"
        )
    failure = [k for k in _FAILURE_KEYS if k in given]
    if failure and "failures_per_accelerator_day" not in plan:
        notes.append(
            f"{_verb(failure, 'does', 'do')} not affect the result without "
            "--failures-per-accelerator-day or --failures-per-1000-node-days"
        )
    if "training_state_bytes_per_param" in given and "hbm_gb" not in plan:
        notes.append(
            "--training-state-bytes-per-param does not affect the result without --hbm-gb "
            "(or an --accelerator with a published HBM size)"
        )
    if args.precision is not None and ("peak_tflops" in given or "peak_tflops" not in plan):
        notes.append(
            "--precision does not affect the result: it picks the --accelerator's peak, and "
            + ("--peak-tflops is given" if "peak_tflops" in given else "none is used")
        )
    return notes


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
    plan["failures_per_accelerator_day"] = engine.failure_rate_from_node_days(
        per_node, 8.0 if per_node_size is None else per_node_size
    )
    return "--failures-per-1000-node-days"


def _total_cost_text(r):
    if math.isnan(r["total_cost_usd"]):
        return None
    text = f"${r['total_cost_usd']:,.0f}"
    if math.isnan(r["electricity_cost_usd"]):
        text += " (compute and other costs; electricity not priced: give --usd-per-kwh)"
    return text


def _fmt_count(n):
    return f"{int(n)}" if float(n).is_integer() else f"{n:g}"


def _run_estimate(args):
    from . import engine

    plan, notes = _plan_from_args(args)
    result = engine.estimate(**plan)  # every output finite, or OutOfRangeError
    if args.target_days is not None:
        days = args.target_days
        result["accelerators_for_target_days"] = check_result(
            "accelerators_for_target_days",
            engine.accelerators_for_days(result["accelerator_hours"], days),
            {"target_days": days},
            result_label=f"accelerators for {days:g} day{'s' * (days != 1)}",
        )
    if args.json:
        out = {"inputs": plan, **{k: (None if math.isnan(v) else v) for k, v in result.items()}}
        print(json.dumps(out, indent=2, allow_nan=False))  # strict JSON: never Infinity/NaN
        return 0
    r = result
    # The example plan's six lines, in the methodology's exact format.
    accelerators = _fmt_count(plan["accelerators"])
    print(f"Training FLOPs: {r['training_flops']:.3e}")
    print(f"Accelerator-hours: {r['accelerator_hours']:,.0f}")
    print(
        f"Wall-clock at {accelerators} accelerator{'s' * (accelerators != '1')}: "
        f"{r['wall_clock_days']:,.1f} days"
    )
    print(f"BF16 checkpoint: {r['checkpoint_gb']:.1f} GB")
    if math.isnan(r["rental_cost_usd"]):
        print("Rental-equivalent cost: n/a (give --usd-per-hour or --purchase-usd-per-accelerator)")
    else:
        print(f"Rental-equivalent cost: ${r['rental_cost_usd']:,.0f}")
    print(f"Accelerator electricity: {r['electricity_kwh']:,.0f} kWh")
    extra = [
        ("Effective throughput", f"{r['effective_tflops']:,.1f} TFLOP/s per accelerator"),
        ("Goodput", None if math.isnan(r["goodput"]) else f"{r['goodput']:.1%}"),
        (
            "Scaling efficiency",
            None if "global_batch_tokens" not in plan else f"{r['scaling_efficiency']:.1%}",
        ),
        (
            "Job MTBF",
            None
            if math.isnan(r["cluster_mtbf_hours"])
            else f"{r['cluster_mtbf_hours']:,.2f} h; checkpoint every "
            f"{r['checkpoint_interval_hours'] * 60:,.0f} min",
        ),
        (
            "Electricity cost",
            None if math.isnan(r["electricity_cost_usd"]) else f"${r['electricity_cost_usd']:,.0f}",
        ),
        ("Emissions", None if math.isnan(r["co2_tonnes"]) else f"{r['co2_tonnes']:,.0f} tCO2"),
        ("Total cost", _total_cost_text(r)),
        (
            "Min. accelerators for training state",
            None
            if math.isnan(r["min_accelerators_for_memory"])
            else f"{r['min_accelerators_for_memory']:,.0f} (activations excluded)",
        ),
        ("Back-to-back runs per year", f"{r['iterations_per_year']:,.1f}"),
        ("Tokens per parameter", f"{r['tokens_per_param']:,.1f} (Chinchilla-optimal ~20)"),
    ]
    if "accelerators_for_target_days" in r:
        days = args.target_days
        extra.append(
            (
                f"Accelerators for {days:g} day{'s' * (days != 1)}",
                f"{math.ceil(r['accelerators_for_target_days']):,}",
            )
        )
    print()
    for label, value in extra:
        if value is not None:
            print(f"{label}: {value}")
    for note in notes:
        print(f"  note: {note}")
    return 0


# ---------------------------------------------------------------------------------------------
# runs, accelerators
# ---------------------------------------------------------------------------------------------


def _configure_table(p):
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records")
    fmt.add_argument("--csv", action="store_true", help="print CSV")


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


def _run_runs(args):
    from . import calibration, engine

    t = calibration.reference_table()
    mfu = calibration.default_mfu()
    est = np.full(len(t), np.nan)
    ok = np.isfinite(t["model_training_flops"]) & np.isfinite(t["peak_tflops"])
    est[ok.to_numpy()] = engine.accelerator_hours(
        t.loc[ok, "model_training_flops"].to_numpy(),
        engine.effective_tflops(t.loc[ok, "peak_tflops"].to_numpy(), mfu),
    )
    df = t[["run", "architecture", "accelerator"]].copy()
    df["disclosed_accelerator_hours"] = t["disclosed_accelerator_hours"]
    df["model_accelerator_hours"] = est
    df["model_error_pct"] = 100 * (est / t["disclosed_accelerator_hours"] - 1)
    df["implied_effective_tflops"] = t["implied_effective_tflops"]
    df["implied_mfu"] = t["implied_mfu"]
    df["disclosed_mfu"] = t["disclosed_mfu"]
    _print_frame(
        df,
        args,
        {
            "disclosed_accelerator_hours": "{:,.0f}",
            "model_accelerator_hours": "{:,.0f}",
            "model_error_pct": "{:+.0f}%",
            "implied_effective_tflops": "{:,.0f}",
            "implied_mfu": "{:.1%}",
            "disclosed_mfu": "{:.1%}",
        },
        {
            "architecture": ("arch.",),
            "disclosed_accelerator_hours": ("disclosed", "hours"),
            "model_accelerator_hours": ("model", "hours"),
            "model_error_pct": ("model", "error"),
            "implied_effective_tflops": ("implied", "TFLOP/s"),
            "implied_mfu": ("implied", "MFU"),
            "disclosed_mfu": ("disclosed", "MFU"),
        },
    )
    if not (args.json or args.csv):
        print()
        print(
            textwrap.fill(
                "Hours are accelerator-hours. Model: 6 x active x tokens at the accelerator's "
                f"BF16 peak x default MFU {mfu:.1%} (median implied MFU of the runs with "
                "disclosed hours); implied: from the disclosed hours.",
                WIDTH,
            )
        )
    return 0


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
        "reference runs: disclosed accelerator-hours beside the model",
        _configure_table,
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
        self.exit(2, f"{self.prog}: error: {message}\n")

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
            flag: listed.get(action.dest, flag)
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
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser, handlers = build_parser(command if command in _commands() else None)
    if command is not None and command not in handlers and not argv[0].startswith("-"):
        close = difflib.get_close_matches(command, list(handlers), n=1)
        hint = f"; did you mean {close[0]}?" if close else f" (commands: {', '.join(handlers)})"
        print(f"{PROG}: error: unknown command {command!r}{hint}", file=sys.stderr)
        return 2
    try:
        args, extras = parser.parse_known_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line usage error already printed
        return exc.code if isinstance(exc.code, int) else 2
    if extras:
        print(_unknown(_subparser_chain(parser, args), extras), file=sys.stderr)
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
        print(f"{prog}: error: {_describe(err, _flag_namer(args))}", file=sys.stderr)
    except CommandError as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
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
            f"{prog}: internal error: {type(err).__name__}: {err} "
            "(set COMPUTE_LAB_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
