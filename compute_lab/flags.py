"""The flags of ``compute-lab estimate``: their names, help texts and range rules, and the
flag names an error message speaks of (an engine argument turned into the flag that sets it).
"""

from __future__ import annotations

import re

from udfs import quantities
from udfs.quantities import (
    ENGINE_INPUTS,
    MAX_AMORTISATION_YEARS,
    MIN_AMORTISATION_YEARS,
    MIN_UTILISATION,
    MODEL_CONSTANTS,
    MODEL_INPUTS,
    PLAN_INPUTS,
)
from udfs.validation import (
    InputError,
    OutOfRangeError,
    check_at_least,
    check_count,
    check_fraction,
    check_non_negative,
    check_plausible,
    check_positive,
    check_whole,
)

from .numbers import accelerator_count, fraction, parse_number

SPEC_FLAGS = quantities.ESTIMATE_FLAGS
_SPEC_BY_NAME = {f.name: f for f in SPEC_FLAGS}

#: (flag, engine argument, help) of every number flag, from the quantities spec
#: (:data:`udfs.quantities.ESTIMATE_FLAGS`). Numbers accept 671B / 14.8T forms. What a flag
#: left out takes is not written there: ``_help`` adds it from udfs.plan's rule table (the planner's
#: inputs) or from the spec's defaults (the engine's own inputs).
ESTIMATE_FLAGS = [(f.flag, f.name, f.help) for f in SPEC_FLAGS]

_QUANTITIES = {q.name: q for q in (*PLAN_INPUTS, *MODEL_INPUTS, *MODEL_CONSTANTS, *ENGINE_INPUTS)}
#: Flag destination -> the planner input (udfs.quantities.PLAN_INPUTS) it fills; the other
#: flags are the engine's own inputs, beyond the planner (failures, scaling, ownership...).
PLAN_NAME = {f.name: f.quantity for f in SPEC_FLAGS if f.quantity in {q.name for q in PLAN_INPUTS}}


def _blank_rule_text(dest):
    """What a planner input left out takes, in words, from the one rule table."""
    from udfs.plan import RULE_BLANK_TEXT, RULE_DEFAULTS

    default, blank_text = RULE_DEFAULTS[PLAN_NAME[dest]], RULE_BLANK_TEXT[PLAN_NAME[dest]]
    if dest == "watts_per_accelerator":
        return f"the --accelerator's TDP, else {default:g} W"
    if dest == "peak_tflops":
        return "the --accelerator's catalogue peak at --precision"
    if dest == "active_params":
        return "total, a dense model"
    if blank_text:
        return blank_text.replace("%", "%%")
    return f"{default:g}"


def _spec_default(dest):
    """The spec's default of an input beyond the planner's (None when it is off when left out)."""
    return _QUANTITIES[_SPEC_BY_NAME[dest].quantity].default


def _help(dest, text):
    from udfs.plan import REQUIRED

    if dest in PLAN_NAME and PLAN_NAME[dest] not in REQUIRED:
        return f"{text} (not given: {_blank_rule_text(dest)})"
    default = _spec_default(dest)
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


OWN_RUNS_HELP = (
    "CSV of your completed runs (name,organisation,active_params,total_params,tokens,"
    "accelerator,accelerators,accelerator_hours): a blank MFU and spread are pulled toward them"
)


def read_own_runs(args):
    """The ``--own-runs`` file read (:func:`udfs.own_runs.read_given`), or None; udfs.own_runs
    is imported only when the flag is given (a plain ``estimate`` starts without it)."""
    if getattr(args, "own_runs", None) is None:
        return None
    from udfs import own_runs

    return own_runs.read_given(args, parse_number)


#: The groups of ``estimate --help``, titled and ordered as docs/command-line.md's three flag
#: tables (tests/test_help.py checks they match): flag destination names.
FLAG_GROUPS = {
    "Model and cluster": ("preset", "run_code", "accelerator", "precision", "total_params",
                          "active_params", "training_tokens", "accelerators", "target_days"),
    "Throughput": ("effective_tflops", "peak_tflops", "mfu", "goodput", "throughput_range_pct",
                   "own_runs", "failures_per_accelerator_day", "failures_per_1000_node_days",
                   "accelerators_per_node", "checkpoint_write_minutes", "restart_minutes",
                   "global_batch_tokens", "tensor_parallel", "pipeline_parallel",
                   "sequence_tokens", "pipeline_interleave", "interconnect_gb_per_s",
                   "comm_overlap"),
    "Cost, energy, memory": ("usd_per_accelerator_hour", "price_range_pct",
                             "purchase_usd_per_accelerator", "amortisation_years", "utilisation",
                             "other_costs_usd", "watts_per_accelerator", "server_overhead", "pue",
                             "usd_per_kwh", "grams_co2_per_kwh", "checkpoint_bytes_per_param",
                             "hbm_gb", "training_state_bytes_per_param"),
}  # fmt: skip


def _add_estimate_flags(add):
    """Every flag of ``estimate``, each through ``add(key, *flags, **argparse keywords)``,
    ``key`` the destination it is grouped by (:data:`FLAG_GROUPS`)."""
    add("preset", "--preset", metavar="NAME", help="start from a reference run (see `runs`)")
    add("run_code", "--run-code", metavar="CODE",
        help="the run's key, as the planner's Run code row (1 to 40 characters: A-Z, digits, "
        "'.', '_', '-'): in --json and the last line")  # fmt: skip
    add("own_runs", "--own-runs", metavar="FILE", help=OWN_RUNS_HELP)
    add("accelerator", "--accelerator", metavar="NAME", help="accelerator from the catalogue")
    add(
        "precision",
        "--precision",
        choices=("bf16", "fp8"),
        type=str.lower,
        help="peak TFLOP/s column with --accelerator: bf16 or fp8, any case (default bf16)",
    )
    for flag, dest, help_text in ESTIMATE_FLAGS:
        kind = accelerator_count if dest == "accelerators" else parse_number
        kind = fraction if dest.endswith("_pct") else kind
        metavar = "PCT" if dest.endswith("_pct") else "N"
        help_text = _help(dest, help_text.replace("%", "%%"))
        add(dest, flag, dest=dest, metavar=metavar, help=help_text, type=kind)
    # Aliases, listed in --help beside their flag: the planner's names. Giving both names of
    # one setting is refused ("set the same thing"), like a repeated flag.
    add(
        "training_tokens",
        "--training-tokens",
        dest="training_tokens",
        metavar="N",
        type=parse_number,
        help="the same as --tokens (give one of them)",
    )
    add(
        "usd_per_accelerator_hour",
        "--usd-per-accelerator-hour",
        dest="usd_per_accelerator_hour",
        metavar="N",
        type=parse_number,
        help="the same as --usd-per-hour (give one of them)",
    )
    add(
        "target_days",
        "--target-days",
        metavar="N",
        type=parse_number,
        help="also solve for the accelerators that finish in N days",
    )


def configure_estimate(p):
    """The flags of ``estimate`` in the three groups of :data:`FLAG_GROUPS` (each group in
    that order; an alias beside its flag), and ``--json`` among the general options."""
    added = {}

    def add(key, /, *flags, **kw):
        added.setdefault(key, []).append((flags, kw))

    _add_estimate_flags(add)
    grouped = [d for g in FLAG_GROUPS.values() for d in g]
    if sorted(added) != sorted(grouped):  # a flag added to the spec needs its group here
        raise RuntimeError(f"FLAG_GROUPS misses {sorted(set(added) - set(grouped))}")
    for title, dests in FLAG_GROUPS.items():
        group = p.add_argument_group(title)
        for dest in dests:
            for flags, kw in added[dest]:
                group.add_argument(*flags, **kw)
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


def _at_most(check, maximum, text=None):
    """``check``, then at most ``maximum`` ("must be at most 1e+09 ...")."""

    def rule(name, value):
        if check(name, value) > maximum:
            raise InputError(name, f"must be at most {text or format(maximum, 'g')}", value=value)

    return rule


def _amortisation_years(name, value):
    years = check_positive(name, value)
    if not MIN_AMORTISATION_YEARS <= years <= MAX_AMORTISATION_YEARS:
        raise InputError(name, "must be from 1/365 (one day) to 100 years", value=value)


def _utilisation(name, value):
    if check_fraction(name, value) < MIN_UTILISATION:
        raise InputError(name, "must be at least 0.01 (1%) and at most 1", value=value)


def _at_least_one(name, value):
    return check_at_least(name, value, 1.0)


#: The spec's rule names (:class:`udfs.quantities.Flag`'s ``check``) and their functions.
CHECKS = {
    "positive": check_positive,
    "plausible": check_plausible,
    "non_negative": check_non_negative,
    "fraction": check_fraction,
    "at_least_one": _at_least_one,
    "below_one": _below_one,
    "range_pct": _range_pct,
    "count": check_count,
    "whole": check_whole,
    "years": _amortisation_years,
    "utilisation": _utilisation,
}


def _rule(flag):
    check = CHECKS[flag.check]
    if flag.maximum is None:
        return check
    return _at_most(check, flag.maximum, flag.maximum_text)


#: The range rule of each number flag (the engine's, and the command line's bounds of the
#: spec), checked before anything else so that a bad value is named even where the flag
#: would not apply.
FLAG_RULES = {f.name: _rule(f) for f in SPEC_FLAGS} | {"target_days": check_positive}
