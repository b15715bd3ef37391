"""The flags of ``compute-lab estimate``: their names, help texts and range rules, and the
flag names an error message speaks of (an engine argument turned into the flag that sets it).
"""

from __future__ import annotations

import functools
import re

from udfs import quantities
from udfs.quantities import (
    ENGINE_INPUTS,
    MIN_PLAUSIBLE,
    MODEL_CONSTANTS,
    MODEL_INPUTS,
    PLAN_INPUTS,
)
from udfs.validation import InputError, OutOfRangeError, bound_check, check_plausible

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

    quantity = _QUANTITIES[_SPEC_BY_NAME[dest].quantity]
    if quantity.name not in MIN_PLAUSIBLE:
        text = f"{text}, {quantity.bound.interval.replace('%', '%%')}"
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


def _flag_check(flag):
    """The range rule of a flag: its quantity's bound, with the command line's ceiling (a
    parameter count or the tokens: at least its plausibility floor)."""
    if flag.quantity in MIN_PLAUSIBLE:
        return functools.partial(_plausible, quantity=flag.quantity)
    return bound_check(_QUANTITIES[flag.quantity].bound, ceiling=True)


def _plausible(name, value, quantity):
    return check_plausible(name, value, quantity)


#: The range rule of each number flag (its quantity's bound in the spec, and the command
#: line's ceiling on top), checked before anything else so that a bad value is named even
#: where the flag would not apply.
FLAG_RULES = {f.name: _flag_check(f) for f in SPEC_FLAGS} | {
    "target_days": bound_check(_QUANTITIES["target_days"].bound)
}
