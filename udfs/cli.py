"""The ``compute-lab`` command line.

Subcommands here: ``estimate``, ``runs``, ``accelerators``. Other packages add theirs
(``templates``, ``report``, ``addin``, ``serve``, ``lite-bundle``) through a ``COMMANDS``
mapping in ``workbook_templates.commands`` and ``addin.commands``:
``{"name": (help, configure_parser(parser), run(args) -> int)}``.

Bad input exits with status 2 and one line naming the flag and the rule; no traceback
(set ``COMPUTE_LAB_DEBUG=1`` to see one for an internal error).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import re
import sys

import numpy as np

from . import __version__
from .quantities import SEED_PLAN
from .validation import InputError, is_blank

__all__ = ["main", "parse_number", "CommandError"]

PROG = "compute-lab"


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_GROUPED = re.compile(r"^[-+]?\d{1,3}(,\d{3})+(\.\d*)?(e[-+]?\d+)?\s*[kmbgtp%]?$", re.I)
_NUMBER = re.compile(r"^([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?)\s*([kmbgtp%]?)$", re.I)


def parse_number(text):
    """A number from the command line: ``671e9``, ``671B``, ``14.8T``, ``2,048``, ``40%``.

    Suffixes (any case): K 1e3, M 1e6, B or G 1e9, T 1e12, P 1e15; ``%`` divides by 100.

    >>> parse_number("14.8T"), parse_number("671B"), parse_number("2,048"), parse_number("40%")
    (14800000000000.0, 671000000000.0, 2048.0, 0.4)
    """
    cleaned = str(text).strip()
    if "," in cleaned and not _GROUPED.match(cleaned):
        raise argparse.ArgumentTypeError(
            f"must group thousands by three digits, as in 2,048 (got {text!r})"
        )
    cleaned = cleaned.replace(",", "").replace("_", "")
    m = _NUMBER.match(cleaned)
    if not m:
        raise argparse.ArgumentTypeError(
            f"must be a number such as 671e9, 671B or 14.8T (got {text!r})"
        )
    value = float(m.group(1))
    suffix = m.group(2).lower()
    if suffix == "%":
        value /= 100.0
    elif suffix:
        value *= _SUFFIXES[suffix]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number (got {text!r})")
    return value


# Engine argument name -> flag, where the flag is not simply --name-with-dashes.
_FLAG_OF = {
    "training_tokens": "--tokens",
    "tokens": "--tokens",
    "usd_per_accelerator_hour": "--usd-per-hour",
    "watts_per_accelerator": "--watts",
}


def _flag(name):
    if name.startswith("-"):
        return name
    return _FLAG_OF.get(name, "--" + name.replace("_", "-"))


def _describe(err: InputError):
    """The InputError's message with engine names turned into flags."""
    msg = err.describe(argument_label=_flag(err.argument))
    for name in ("total_params", "accelerators", "effective_tflops", "training_tokens"):
        msg = re.sub(rf"(?<![-\w]){name}(?!\w)", _flag(name), msg)
    return msg


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


def _configure_estimate(p):
    p.add_argument("--preset", metavar="NAME", help="start from a reference run (see `runs`)")
    p.add_argument("--accelerator", metavar="NAME", help="accelerator from the catalogue")
    p.add_argument(
        "--precision",
        choices=("bf16", "fp8"),
        default="bf16",
        help="peak TFLOP/s column with --accelerator (default bf16)",
    )
    for flag, dest, help_text in _ESTIMATE_FLAGS:
        p.add_argument(flag, dest=dest, metavar="N", help=help_text, type=parse_number)
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
# Inputs that derive throughput from a peak; the seed's sustained 400 TFLOP/s cannot take them.
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


def _base_plan(args, given, notes):
    """The plan the flags start from: a preset, the user's own model, or the seed's."""
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
                f"--preset {r['name']!r} does not disclose {', '.join(missing)}: "
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
        # The user's own model: nothing of the seed's model fills in behind it.
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
            "model: the seed's DeepSeek-V3-like plan (671B total, 37B active, 14.8T tokens"
            + ("" if "accelerators" in given else ", 2048 accelerators")
            + "); give --total-params and --tokens for your own"
        )
    return plan, args.accelerator


def _plan_from_args(args):
    """Engine keyword arguments from the flags, a preset, a catalogue accelerator, the seed.

    Nothing is filled in silently: every seed default behind a partly given plan is named in
    a note, and flags that contradict each other are an error.
    """
    from . import calibration, catalogue

    given = {dest: getattr(args, dest) for _, dest, _ in _ESTIMATE_FLAGS}
    given = {k: v for k, v in given.items() if v is not None}
    if args.accelerator is not None and not args.accelerator.strip():
        raise CommandError(
            "--accelerator must name an accelerator (see `compute-lab accelerators`)"
        )
    notes = []
    plan, accel_name = _base_plan(args, given, notes)
    plan.update(given)
    _node_rate_to_accelerator_rate(plan)
    quiet = not given and args.accelerator is None and args.preset is None  # the seed as is

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
            column = f"{args.precision}_tflops"
            if is_blank(accel[column]):
                raise CommandError(
                    f"--accelerator {accel['name']!r} has no published {args.precision.upper()} "
                    "peak: give --peak-tflops or --effective-tflops"
                )
            plan["peak_tflops"] = float(accel[column])
            notes.append(
                f"accelerator {accel['name']}: {plan['peak_tflops']:g} peak TFLOP/s "
                f"({args.precision.upper()})"
            )
        if "mfu" not in plan:
            plan["mfu"] = calibration.default_mfu()
            notes.append(f"MFU {plan['mfu']:.1%}: default, median of the disclosed runs")
    elif deriving:
        raise CommandError(
            f"{_flags(deriving)} need a peak throughput: give --accelerator or --peak-tflops"
        )
    else:
        plan["effective_tflops"] = SEED_PLAN["effective_tflops"]
        if not quiet:
            notes.append(
                "throughput: the seed's 400 effective TFLOP/s (give --effective-tflops "
                "or --accelerator)"
            )

    owned = [k for k in _OWNERSHIP_KEYS if k in given]
    if "purchase_usd_per_accelerator" in given:
        if "usd_per_accelerator_hour" in given:
            raise CommandError("give --usd-per-hour or --purchase-usd-per-accelerator, not both")
        plan.pop("usd_per_accelerator_hour", None)
    elif owned:
        raise CommandError(f"{_flags(owned)} go with --purchase-usd-per-accelerator")
    elif "usd_per_accelerator_hour" not in plan and args.preset is None:
        plan["usd_per_accelerator_hour"] = SEED_PLAN["usd_per_accelerator_hour"]
        if not quiet:
            notes.append("price: the seed's $2.0 per accelerator-hour (give --usd-per-hour)")
    return plan, notes


def _node_rate_to_accelerator_rate(plan):
    from . import engine

    per_node = plan.pop("failures_per_1000_node_days", None)
    per_node_size = plan.pop("accelerators_per_node", None)
    if per_node is None:
        if per_node_size is not None:
            raise CommandError("--accelerators-per-node goes with --failures-per-1000-node-days")
        return
    if "failures_per_accelerator_day" in plan:
        raise CommandError(
            "give --failures-per-accelerator-day or --failures-per-1000-node-days, not both"
        )
    plan["failures_per_accelerator_day"] = engine.failure_rate_from_node_days(
        per_node, 8.0 if per_node_size is None else per_node_size
    )


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
    result = engine.estimate(**plan)
    if args.target_days is not None:
        result["accelerators_for_target_days"] = engine.accelerators_for_days(
            result["accelerator_hours"], args.target_days
        )
    if args.json:
        out = {"inputs": plan, **{k: (None if math.isnan(v) else v) for k, v in result.items()}}
        print(json.dumps(out, indent=2))
        return 0
    r = result
    # The seed's six lines, in the seed's exact format.
    print(f"Training FLOPs: {r['training_flops']:.3e}")
    print(f"Accelerator-hours: {r['accelerator_hours']:,.0f}")
    print(
        f"Wall-clock at {_fmt_count(plan['accelerators'])} accelerators: "
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
        extra.append(
            (
                f"Accelerators for {args.target_days:g} days",
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


def _print_frame(df, args, formats=None):
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return
    if args.csv:
        print(df.to_csv(index=False), end="")
        return
    shown = df.copy()
    for col, fmt in (formats or {}).items():
        shown[col] = [("" if is_blank(v) else fmt.format(v)) for v in shown[col]]
    shown = shown.fillna("")
    print(shown.to_string(index=False))


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
    )
    if not (args.json or args.csv):
        print(
            f"\nModel: 6 x active x tokens at the accelerator's BF16 peak x default MFU "
            f"{mfu:.1%} (median implied MFU of the runs with disclosed hours)."
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
        "estimate one training run (default: the seed's DeepSeek-V3-like plan)",
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


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(command=None):
    """The parser, with the flags of ``command`` (all commands' flags when None).

    Building only the chosen command's flags keeps start-up light: the workbook and server
    commands import openpyxl, pandas or xlwings only when they are the one being run.
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
    return parser, handlers


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    command = next((a for a in argv if not a.startswith("-")), None)
    parser, handlers = build_parser(command)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    prog = f"{PROG} {args.command}"
    try:
        return handlers[args.command](args) or 0
    except InputError as err:
        print(f"{prog}: error: {_describe(err)}", file=sys.stderr)
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
