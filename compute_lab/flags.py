"""The flags of ``compute-lab estimate``: their names, help texts and range rules, and the
flag names an error message speaks of (an engine argument turned into the flag that sets it).
"""

from __future__ import annotations

import re

from udfs.validation import (
    InputError,
    OutOfRangeError,
    check_at_least,
    check_count,
    check_fraction,
    check_non_negative,
    check_positive,
    check_whole,
)

from .numbers import accelerator_count, fraction, parse_number

# ---------------------------------------------------------------------------------------------
# estimate
# ---------------------------------------------------------------------------------------------

#: (flag, engine argument, help). Numbers accept 671B / 14.8T forms. What a flag left out
#: takes is not written here: ``_help`` adds it from udfs.plan.RULES (the planner's inputs)
#: or from the engine's own defaults (the engine-only inputs).
ESTIMATE_FLAGS = [
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
PLAN_NAME = {**{n: n for n in _SAME_NAME}, "effective_tflops": "effective_tflops_input"}


def _blank_rule_text(dest):
    """What a planner input left out takes, in words, from the one rule table."""
    from udfs.plan import RULES

    rule = RULES[PLAN_NAME[dest]]
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

    from udfs import engine

    if dest == "accelerators_per_node":
        fn = engine.failure_rate_from_node_days
    else:
        fn = engine.estimate
    param = inspect.signature(fn).parameters.get(dest)
    return None if param is None else param.default


def _help(dest, text):
    from udfs.plan import REQUIRED

    if dest in PLAN_NAME and PLAN_NAME[dest] not in REQUIRED:
        return f"{text} (not given: {_blank_rule_text(dest)})"
    default = _engine_default(dest)
    if isinstance(default, int | float) and not isinstance(default, bool) and default != 0:
        return f"{text} (not given: {default:g})"
    return text


#: Engine argument -> the flag that sets it (hidden aliases included, in flag_namer).
FLAG_OF = {dest: flag for flag, dest, _ in ESTIMATE_FLAGS} | {
    "tokens": "--tokens",
    "target_days": "--target-days",
    "effective_tflops_input": "--effective-tflops",
    "accelerator_name": "--accelerator",
}
_ENGINE_NAME = re.compile(
    r"(?<![-\w])(" + "|".join(sorted(map(re.escape, FLAG_OF), key=len, reverse=True)) + r")(?!\w)"
)


def flag_name(name, typed=None):
    """The flag for an engine argument (as the user typed it, when ``typed`` says so).

    A name that is not an argument (``tensor_parallel x pipeline_parallel``) has every engine
    name inside it turned into its flag.
    """
    typed = typed or {}
    if name in typed:
        return typed[name]
    if name in FLAG_OF:
        return FLAG_OF[name]
    return _ENGINE_NAME.sub(lambda m: typed.get(m.group(1), FLAG_OF[m.group(1)]), name)


def flag_namer(args):
    """``flag_name`` with the flags this command line actually used (aliases, node-day rates)."""
    typed = dict(getattr(args, "engine_flags", None) or {})
    return lambda name: flag_name(name, typed)


def describe_error(err: InputError, flag_of=flag_name):
    """The InputError's message with engine names turned into flags."""
    if isinstance(err, OutOfRangeError):
        return err.describe(label_of=flag_of)
    msg = err.describe(argument_label=flag_of(err.argument))
    return _ENGINE_NAME.sub(lambda m: flag_of(m.group(1)), msg)


def configure_estimate(p):
    p.add_argument("--preset", metavar="NAME", help="start from a reference run (see `runs`)")
    p.add_argument("--accelerator", metavar="NAME", help="accelerator from the catalogue")
    p.add_argument(
        "--precision",
        choices=("bf16", "fp8"),
        type=str.lower,
        help="peak TFLOP/s column with --accelerator: bf16 or fp8, any case (default bf16)",
    )
    for flag, dest, help_text in ESTIMATE_FLAGS:
        kind = accelerator_count if dest == "accelerators" else parse_number
        kind = fraction if dest.endswith("_pct") else kind
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
FLAG_RULES = {
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
