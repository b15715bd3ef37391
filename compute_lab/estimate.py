"""``compute-lab estimate``: the flags (or a preset, or the DeepSeek-V3-like example plan)
turned into one plan, resolved by :func:`udfs.plan.resolve`, estimated by the engine and
printed (:mod:`compute_lab.figures`)."""

from __future__ import annotations

from udfs.quantities import SEED_PLAN
from udfs.result_checks import FAILURE_INPUTS, SCALING_INPUTS
from udfs.validation import CommandError, InputError, check_result, echo, is_blank

from .figures import (
    estimate_json,
    extended_lines,
    note_text,
    note_value,
    print_seed_lines,
    range_figures,
    range_lines,
)
from .flags import ESTIMATE_FLAGS, FLAG_RULES, PLAN_NAME, flag_name, read_own_runs

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
    from udfs.plan import Note

    return Note(name, value, why)


def _flags(keys):
    return ", ".join(flag_name(k) for k in keys)


def _verb(keys, singular, plural):
    """``--mfu needs``, ``--mfu, --goodput need``."""
    return f"{_flags(keys)} {singular if len(keys) == 1 else plural}"


def _preset_plan(args, given, notes):
    """The planner inputs of ``--preset``: the reference run's disclosed figures."""
    from udfs import calibration, catalogue

    if not args.preset.strip():
        raise CommandError("--preset must name a reference run (see `compute-lab runs`)")
    r = catalogue.run_record(args.preset, argument="--preset")
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
        implied = calibration.implied_mfu_of(r["name"])
        if not is_blank(implied):
            plan["mfu"] = float(implied)
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


class _Estimate:
    """One command line's plan: the planner inputs, resolve's answer, the notes.

    Attributes
    ----------
    inputs : dict
        Planner inputs (``PLAN_INPUTS`` names) handed to :func:`udfs.plan.resolve`.
    resolved : udfs.plan.Resolved
        What resolve made of them, with the engine-only flags (failures, scaling, ownership,
        memory, other costs): ``resolved.plan`` is the :class:`udfs.engine.Plan` estimated.
    notes : list of Note
        Every default applied (resolve's) and every note of the command line's own.
    """

    def __init__(self, inputs, resolved, notes):
        self.inputs = inputs
        self.resolved = resolved
        self.notes = notes

    @property
    def arguments(self):
        """The plan's inputs set, by engine name (``--json``'s ``"inputs"``)."""
        return self.resolved.arguments


def _given_flags(args):
    """The estimate flags given (engine names), each checked against its range rule."""
    given = {dest: getattr(args, dest) for _, dest, _ in ESTIMATE_FLAGS}
    given = {k: v for k, v in given.items() if v is not None}
    for dest, value in [*given.items(), ("target_days", args.target_days)]:
        if value is not None:
            FLAG_RULES[dest](dest, value)
    _check_run_code(getattr(args, "run_code", None))
    if args.accelerator is not None and not args.accelerator.strip():
        raise CommandError(
            "--accelerator must name an accelerator (see `compute-lab accelerators`)"
        )
    return given


def _check_run_code(code):
    """Refuse a --run-code that breaks the planner's rule (udfs.quantities.RUN_CODE_RULE)."""
    if code is None:
        return
    from workbook_templates.run_codes import RUN_CODE_RULE, valid_run_code

    if not valid_run_code(code):
        raise CommandError(f"--run-code must be a run code: {RUN_CODE_RULE} (got {echo(code)})")


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
    extras = {k: v for k, v in given.items() if k not in PLAN_NAME}
    if _node_rate_to_accelerator_rate(extras):
        args.engine_flags["failures_per_accelerator_day"] = "--failures-per-1000-node-days"
    owned = [k for k in _OWNERSHIP_KEYS if k in given]
    if "purchase_usd_per_accelerator" in given:
        if "usd_per_accelerator_hour" in given:
            raise CommandError("give --usd-per-hour or --purchase-usd-per-accelerator, not both")
    elif owned:
        raise CommandError(f"{_verb(owned, 'goes', 'go')} with --purchase-usd-per-accelerator")
    return extras


def _example_plan_notes(applied, example_watts, example_throughput):
    """The notes of figures the example plan filled in say so, not "typed" nor a catalogue
    accelerator's TDP: its draw (its planner column names an H800 SXM, whose TDP is not
    published) and the spread kept with its sustained throughput, which nobody typed."""

    def reworded(n):
        if (
            example_watts
            and n.name == "watts_per_accelerator"
            and n.value == SEED_PLAN["watts_per_accelerator"]
        ):
            return _note(
                n.name,
                n.value,
                "not given: the example plan's 700 W (give --watts or --accelerator)",
            )
        if example_throughput and n.name == "throughput_range_pct" and "typed" in n.why:
            return _note(
                n.name,
                n.value,
                "not given: the calibrated spread, kept with the example plan's throughput "
                "(an estimate too)",
            )
        return n

    return [reworded(n) for n in applied]


def _plan_from_args(args):
    """The plan of the flags: planner inputs resolved by :func:`udfs.plan.resolve`.

    The flags, a preset or the DeepSeek-V3-like example plan give the planner inputs;
    ``udfs.plan.resolve`` fills every input left out by its one rule table (``RULES``) and
    says so in a note, and adds the engine-only flags (failures, scaling, ownership) to the
    :class:`udfs.engine.Plan` it builds. Nothing is filled in silently, a flag that does not change
    the result says so in a note, and flags that contradict each other are an error.
    """
    from udfs import catalogue
    from udfs.plan import resolve

    given = _given_flags(args)
    notes = []
    inputs, accel_name = _base_plan(args, given, notes)
    inputs.update({PLAN_NAME[k]: v for k, v in given.items() if k in PLAN_NAME})
    if getattr(args, "run_code", None) is not None:  # the planner's Run code row
        inputs["run_code"] = args.run_code
    extras = _engine_only(args, given)
    accel = None
    if not is_blank(accel_name):
        accel = catalogue.accelerator_record(accel_name, argument="--accelerator")
        inputs["accelerator_name"] = accel["name"]
    example_throughput = _throughput_inputs(args, given, inputs, accel)
    resolved = resolve(
        inputs,
        precision=args.precision or "bf16",
        own_runs=read_own_runs(args),
        engine_inputs=extras,
    )
    arguments = resolved.arguments
    applied = [n for n in resolved.notes if n.name not in _SILENT_NOTES]
    example_model = args.preset is None and not any(k in given for k in _MODEL_KEYS)
    example_watts = example_model and accel is None and "watts_per_accelerator" not in given
    applied = _example_plan_notes(applied, example_watts, example_throughput is not None)
    _check_batch_within_run(arguments)
    if "active_params" not in inputs:  # dense: the active parameters are --total-params
        args.engine_flags.setdefault("active_params", "--total-params")
    notes = [*notes, *([example_throughput] if example_throughput else []), *applied]
    notes.extend(_unused_flag_notes(args, given, arguments))
    return _Estimate(inputs, resolved, notes)


def _check_batch_within_run(arguments):
    """--global-batch-tokens at most the run's training tokens: one step cannot take more."""
    batch = arguments.get("global_batch_tokens")
    tokens = arguments.get("training_tokens")
    if batch is not None and tokens is not None and batch > tokens:
        raise InputError(
            "global_batch_tokens",
            f"must not exceed training_tokens ({note_value('tokens', tokens)}): one step "
            "cannot take more than the whole run",
            value=batch,
        )


def _unused_flag_notes(args, given, plan):
    """A note for each valid flag that does not change this plan's result (the engine still
    checks its value)."""
    texts = []
    scaling = [k for k in SCALING_INPUTS if k in given]
    if scaling and "global_batch_tokens" not in plan:
        texts.append(
            f"{_verb(scaling, 'does', 'do')} not affect the result without --global-batch-tokens"
        )
    failure = [k for k in FAILURE_INPUTS if k in given]
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
    from udfs import engine

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


def run_estimate(args):
    from udfs import engine

    plan = _plan_from_args(args)
    result = engine.estimate(plan.resolved.plan)  # every output finite, or OutOfRangeError
    if args.target_days is not None:
        days = args.target_days
        result["accelerators_for_target_days"] = check_result(
            "accelerators_for_target_days",
            engine.accelerators_for_days(result["accelerator_hours"], days),
            {"target_days": days},
            result_label=f"accelerators for {days:g} day{'s' * (days != 1)}",
        )
    ranges = range_figures(plan, result)
    if args.json:
        print(estimate_json(plan, result, ranges))
        return 0
    print_seed_lines(result, plan.arguments["accelerators"])
    print()
    for label, value in extended_lines(result, plan.arguments, args.target_days):
        if value is not None:
            print(f"{label}: {value}")
    if ranges is not None:
        print()
        for line in range_lines(ranges):
            print(line)
    for note in plan.notes:
        print(f"  note: {note_text(note)}")
    if plan.inputs.get("run_code"):
        print(f"Run code: {plan.inputs['run_code']}")
    return 0
