"""The names, labels, units and defaults of a training plan's quantities.

One table that every face shares: the command line's flags (``--total-params``), the Excel
formulas' argument names, the planner workbook's rows and defined names, and the hand-off
reader. A computed quantity carries its ``formula``, an expression over other quantities'
names: the one place the model is written. :mod:`udfs.model` renders it to numpy and to
Excel formula text (every template's model rows); :mod:`udfs.engine` keeps the hand-written,
validated functions, and ``tests/test_spec.py`` checks the two agree.

``RANGE_OUTPUTS`` are the P10 / P90 rows (from ``RANGE_FORMULAS``) and the spreads they use;
``calibrated_mfu`` (in ``MODEL_EXTRAS``) is the default a blank MFU takes.

``PLAN_INPUTS`` rows are ``Quantity`` records; ``default`` is what a blank planner column
starts from (None: the user must type it, or the quantity is optional and off when blank).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Quantity",
    "PLAN_INPUTS",
    "MAX_RUN_CODE_CHARS",
    "RUN_CODE_RULE",
    "PLAN_OUTPUTS",
    "MODEL_CONSTANTS",
    "MODEL_EXTRAS",
    "MODEL_INPUTS",
    "ENGINE_INPUTS",
    "Flag",
    "ESTIMATE_FLAGS",
    "MAX_COUNT",
    "MAX_RUN_FIGURE",
    "MAX_TFLOPS",
    "MAX_PURCHASE_USD",
    "MAX_OTHER_COSTS_USD",
    "MIN_AMORTISATION_YEARS",
    "MAX_AMORTISATION_YEARS",
    "MIN_UTILISATION",
    "RANGE_QUANTITIES",
    "RANGE_FORMULAS",
    "RANGE_OUTPUTS",
    "BUDGET_STATUSES",
    "PRICING_BASES",
    "PLAUSIBILITY_FLOORS",
    "MIN_PLAUSIBLE",
    "PLAUSIBLE_SLIPS",
    "SEED_PLAN",
    "SEED_OUTPUT_LINES",
]


@dataclass(frozen=True)
class Quantity:
    name: str
    label: str
    unit: str
    default: object = None
    rule: str = ""
    note: str = ""
    required: bool = False
    kind: str = "number"  # "number", "text" or "date"
    formula: str = ""  # for a computed quantity: an expression over other names (udfs.model)


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

PLAN_INPUTS = (
    Quantity(
        "scenario_name", "Scenario", "", None, "text", "A short name for the plan", kind="text"
    ),
    Quantity(
        name="run_code",
        label="Run code",
        unit="",
        default=None,
        rule=RUN_CODE_RULE,
        note="The run's key in the hand-off and its actuals, unique per hand-off; kept when "
        "the status, dates, price or plan change. Blank: the owner and the scenario name",
        kind="text",
    ),
    Quantity(
        "budget_status",
        "Budget status",
        "",
        None,
        "Reference, Proposed, Approved or Excluded",
        "For the budget view; blank in a filled column counts as Proposed",
        kind="text",
    ),
    Quantity(
        "owner", "Owner", "", None, "text", "Team or person owning the plan (optional)", kind="text"
    ),
    Quantity(
        "approval_ref",
        "Approval reference",
        "",
        None,
        "text",
        "For Approved: the approval's reference (decision, minute, ticket); without it and the "
        "date, Approved is a WARN",
        kind="text",
    ),
    Quantity(
        "approval_date",
        "Approval date",
        "date",
        None,
        "a date",
        "For Approved: the day the budget was approved",
        kind="date",
    ),
    Quantity(
        "total_params",
        "Total parameters",
        "parameters",
        None,
        "> 0",
        "All stored parameters (every expert of an MoE model)",
        required=True,
    ),
    Quantity(
        "active_params",
        "Active parameters per token",
        "parameters",
        None,
        "> 0 and <= total parameters",
        "Parameters used per token; blank means dense (= total)",
    ),
    Quantity("training_tokens", "Training tokens", "tokens", None, "> 0", required=True),
    Quantity(
        "accelerators",
        "Accelerators",
        "accelerators",
        None,
        "> 0",
        "Accelerators working on the run at once",
        required=True,
    ),
    Quantity(
        "accelerator_name",
        "Accelerator",
        "",
        "H100 SXM",
        "a catalogue name",
        "Sets the peak TFLOP/s, HBM and default watts",
        kind="text",
    ),
    Quantity(
        "peak_tflops",
        "Peak TFLOP/s per accelerator",
        "TFLOP/s",
        None,
        "> 0",
        "Dense BF16 peak; blank takes the catalogue figure",
    ),
    Quantity(
        "mfu",
        "Model FLOPs utilisation (MFU)",
        "fraction",
        None,
        "> 0 and <= 1",
        "Blank: the calibrated default for the accelerator's generation and the active "
        "parameters (Accelerators sheet; see the Compute Lab calibration notes)",
    ),
    Quantity(
        "goodput",
        "Goodput",
        "fraction",
        1.0,
        "> 0 and <= 1",
        "Share of time doing useful training (failures, checkpoints, restarts)",
    ),
    Quantity(
        "effective_tflops_input",
        "Effective TFLOP/s (override)",
        "TFLOP/s",
        None,
        "> 0",
        "Sustained TFLOP/s per accelerator; when typed, used as is instead of peak x MFU x goodput",
    ),
    Quantity(
        "throughput_range_pct",
        "Throughput uncertainty (P90 / P50 - 1)",
        "fraction",
        None,
        ">= 0",
        "Spread of accelerator-hours: 0.15 puts P90 15% above P50 and P10 at P50 / 1.15. "
        "Blank: the calibrated spread, with a typed MFU or throughput too (0 = exact)",
    ),
    Quantity(
        "usd_per_accelerator_hour",
        "Price per accelerator-hour",
        "US$/accelerator-hour",
        2.0,
        ">= 0",
        "Rental, or the ownership equivalent (see the pricing basis). Blank: US$2.00, the H800 "
        "rental price the DeepSeek-V3 report assumed (arXiv 2412.19437, Dec 2024), not a quote",
    ),
    Quantity(
        "pricing_basis",
        "Pricing basis",
        "",
        None,
        "rental all-in, rental plus power or owned",
        "What the price covers. Rental all-in: power included, no electricity added. Rental "
        "plus power, or owned (the price is the ownership equivalent): electricity added. "
        "Blank: rental plus power",
        kind="text",
    ),
    Quantity(
        "price_range_pct",
        "Price uncertainty (P90 / P50 - 1)",
        "fraction",
        0.0,
        ">= 0",
        "Spread of the price per accelerator-hour, independent of the throughput uncertainty",
    ),
    Quantity(
        "watts_per_accelerator",
        "Power per accelerator",
        "W",
        700.0,
        "> 0",
        "Average draw; blank: the accelerator's TDP from the catalogue, else 700 W (H100 SXM)",
    ),
    Quantity(
        "server_overhead",
        "Server power overhead",
        "ratio",
        1.0,
        ">= 1",
        "Server power over accelerator power. Blank: 1.00, a lower bound (the accelerators "
        "only); Epoch AI uses ~1.82 for H100 servers",
    ),
    Quantity(
        "pue",
        "Data-centre PUE",
        "ratio",
        1.0,
        ">= 1",
        "Power usage effectiveness. Blank: 1.00, a lower bound (no cooling); Uptime Institute "
        "average 1.56 (2024), hyperscalers ~1.1",
    ),
    Quantity(
        "usd_per_kwh",
        "Electricity price",
        "US$/kWh",
        0.08,
        ">= 0",
        "Blank: US$0.08, a placeholder without a source: type your contract's price. Not "
        "used with a rental all-in price",
    ),
    Quantity(
        "other_costs_usd",
        "Other costs of the run",
        "US$",
        0.0,
        ">= 0",
        "Storage, data, networking, staff... added to the total as they are (no range). "
        "Blank: none",
    ),
    Quantity(
        "grams_co2_per_kwh",
        "Grid carbon intensity",
        "gCO2/kWh",
        481.0,
        ">= 0",
        "World average 2023 (Ember)",
    ),
    Quantity(
        "checkpoint_bytes_per_param",
        "Checkpoint bytes per parameter",
        "bytes",
        2.0,
        "> 0",
        "2 = BF16 weights only; ~13 with optimizer state",
    ),
    Quantity(
        "start_date",
        "Run start date",
        "date",
        None,
        "a date",
        "First day of training, for the monthly spend schedule",
        kind="date",
    ),
)

#: Fixed figures of the model, as named constants the formulas read (and the workbooks show).
MODEL_CONSTANTS = (
    Quantity("flops_per_param_token", "FLOPs per active parameter per token", "", 6.0,
             note="Forward + backward pass, the 6N heuristic (Kaplan et al. 2020)"),
    Quantity("training_state_bytes_per_param", "Training state bytes per parameter", "bytes",
             16.0, note="Mixed-precision Adam, fully sharded (EleutherAI Transformer Math 101)"),
    Quantity("days_per_year", "Days per year", "days", 365.0,
             note="For research iterations per year"),
    Quantity("mfu_min", "Lowest calibrated default MFU", "fraction", 0.10,
             note="One calibration run sits below 10% (Llama 3.2 1B, distilled; Compute Lab "
             "calibration)"),
    Quantity("mfu_max", "Highest calibrated default MFU", "fraction", 0.55,
             note="No large run reports above ~46% (PaLM); one small run implies 63% (Phi-2)"),
    Quantity("small_model_active_params", "Small model: active parameters below", "parameters",
             5e9, note="Below it the calibrated spread widens (Compute Lab calibration)"),
    Quantity("small_model_full_params", "Small model: full extra spread at or below",
             "parameters", 1e9,
             note="The small-model spread ramps in over LN(active) from none at the "
             "small-model size to all of it here (Compute Lab calibration)"),
    Quantity("p10_level", "Low percentile of the ranges (P10)", "fraction", 0.1,
             note="One run in ten comes in below"),
    Quantity("p90_level", "High percentile of the ranges (P90)", "fraction", 0.9,
             note="One run in ten comes in above: the contingency line"),
)  # fmt: skip


#: The fewest parameters and tokens a plan for a cluster can hold: below, the figure was typed
#: in the wrong unit (70 for 70 billion). An ERROR in the planner's Checks and the hand-off.
PLAUSIBILITY_FLOORS = (
    Quantity("min_plausible_params", "Fewest plausible parameters",
             "parameters", 1e6,
             note="The smallest models trained on a cluster have tens of millions; below 1E6 "
             "the figure was typed in billions (type the full number, e.g. 70E9)"),
    Quantity("min_plausible_tokens", "Fewest plausible training tokens", "tokens", 1e9,
             note="Runs on a cluster see billions of tokens; below 1E9 the figure was typed "
             "in billions or trillions (type the full number, e.g. 14.8E12)"),
)  # fmt: skip
#: Input name -> its plausibility floor: one rule for every face (the engine's estimate, the
#: Excel functions, the command line, the planner's Checks and the hand-off; the advice in
#: :func:`udfs.validation.implausible_rule`).
MIN_PLAUSIBLE = {
    "total_params": PLAUSIBILITY_FLOORS[0].default,
    "active_params": PLAUSIBILITY_FLOORS[0].default,
    "training_tokens": PLAUSIBILITY_FLOORS[1].default,
}
#: Input name -> the units a figure below its floor was likely typed in (word, size) and an
#: example of the full number: parameters are quoted in billions (70B), tokens in billions or
#: trillions (300B, 15T).
PLAUSIBLE_SLIPS = {
    "total_params": ((("billion", 1e9),), "70E9"),
    "active_params": ((("billion", 1e9),), "37E9"),
    "training_tokens": ((("billion", 1e9), ("trillion", 1e12)), "14.8E12"),
}


def _out(name, label, unit, formula, note):
    return Quantity(name, label, unit, note=note, formula=formula)


#: The plan's outputs, each with its formula: the one definition every face renders
#: (numpy in :mod:`udfs.model`, Excel text in the workbook templates).
PLAN_OUTPUTS = (
    _out("effective_tflops", "Effective TFLOP/s per accelerator", "TFLOP/s",
         "peak_tflops * mfu * goodput", "Override if typed, else peak x MFU x goodput"),
    _out("training_flops", "Training compute", "FLOPs",
         "flops_per_param_token * active_params * training_tokens",
         "6 x active parameters x tokens"),
    _out("accelerator_hours", "Accelerator-hours", "accelerator-hours",
         "training_flops / (effective_tflops * 1e12) / 3600",
         "FLOPs / (effective TFLOP/s x 1e12) / 3600"),
    _out("wall_clock_days", "Wall-clock time", "days",
         "accelerator_hours / accelerators / 24",
         "Accelerator-hours / accelerators / 24 (linear scaling)"),
    _out("checkpoint_gb", "Checkpoint size", "GB",
         "total_params * checkpoint_bytes_per_param / 1e9",
         "Total parameters x checkpoint bytes per parameter / 1e9"),
    _out("compute_cost_usd", "Compute cost", "US$",
         "accelerator_hours * usd_per_accelerator_hour",
         "Accelerator-hours x price per accelerator-hour"),
    _out("electricity_kwh", "Electricity", "kWh",
         "accelerator_hours * watts_per_accelerator * server_overhead * pue / 1000",
         "Accelerator-hours x W x server overhead x PUE / 1000"),
    _out("electricity_cost_usd", "Electricity cost", "US$",
         "electricity_kwh * usd_per_kwh", "kWh x price per kWh"),
    _out("co2_tonnes", "Operational emissions", "tCO2",
         "electricity_kwh * grams_co2_per_kwh / 1e6", "kWh x gCO2/kWh / 1e6"),
    _out("total_cost_usd", "Total cost", "US$",
         "compute_cost_usd + electricity_cost_usd", "Compute cost + electricity cost"),
    _out("min_accelerators_for_memory", "Min. accelerators for training state", "accelerators",
         "ceil(round(total_params * training_state_bytes_per_param / (hbm_gb * 1e9), 9))",
         "Total parameters x 16 bytes / HBM, rounded up (ZeRO-3)"),
    _out("iterations_per_year", "Back-to-back runs per year", "runs/year",
         "days_per_year / wall_clock_days", "365 / wall-clock days"),
)  # fmt: skip

#: A run's days in a calendar month: its overlap [start, start + days) with the month, in
#: days counted from the start (dates as day numbers).
_RUN_DAYS = ("maximum(0, minimum(wall_clock_days, next_month - run_start)"
             " - maximum(0, month_start - run_start))")  # fmt: skip

#: Further computed quantities the workbooks show (sizing, reference runs, comparison).
MODEL_EXTRAS = (
    _out("accelerators_for_days", "Accelerators needed", "accelerators",
         "accelerator_hours / (24 * target_days)",
         "Accelerator-hours / (24 x target days), linear scaling, not rounded"),
    _out("implied_effective_tflops", "Implied TFLOP/s", "TFLOP/s",
         "training_flops / (accelerator_hours * 3600) / 1e12",
         "FLOPs / (disclosed accelerator-hours x 3600) / 1e12"),
    _out("implied_mfu", "Implied MFU", "fraction",
         "implied_effective_tflops / peak_tflops", "Implied TFLOP/s / peak TFLOP/s"),
    # One calendar month of the spend schedule (udfs.engine.month_shares), dates as day numbers.
    _out("run_days_in_month", "Run days in month", "days", _RUN_DAYS,
         "Overlap of the run [start, start + days) with the month [month, next month), "
         "in days counted from the start"),
    _out("month_share", "Share of run", "fraction", "run_days_in_month / wall_clock_days",
         "Run days in the month / wall-clock days"),
    # The P90 schedule is the P90 run (udfs.schedule): the same overlap over the P90 days,
    # its compute and electricity P90 spread over it; other costs keep the P50 schedule.
    _out("run_days_in_month_p90", "P90 run days in month", "days",
         _RUN_DAYS.replace("wall_clock_days", "wall_clock_days_p90"),
         "Overlap of the P90 run [start, start + P90 days) with the month"),
    _out("month_share_p90", "Share of the P90 run", "fraction",
         "run_days_in_month_p90 / wall_clock_days_p90", "P90 run days in the month / P90 days"),
    _out("month_total_cost_usd_p90", "Total cost in the month, P90", "US$",
         "(total_cost_usd_p90 - other_costs_usd) * month_share_p90"
         " + other_costs_usd * month_share",
         "(P90 total - other costs) x share of the P90 run + other costs x share of the run: "
         "the accelerators bill at their capacity for longer, at most at the P90 price"),
    # The calibrated default MFU (udfs.calibration.predicted_mfu), for a blank MFU.
    _out("calibrated_mfu_raw", "Default MFU before its bounds", "fraction",
         "exp(mfu_ln_intercept + mfu_ln_slope"
         " * log(minimum(active_params, small_model_active_params) / small_model_active_params))",
         "EXP(intercept of the generation + slope x LN(MIN(active, small-model threshold) / "
         "small-model threshold)): the size effect only below the threshold"),
    _out("calibrated_mfu", "Calibrated default MFU", "fraction",
         "minimum(mfu_max, maximum(mfu_min, calibrated_mfu_raw))",
         "The default before its bounds, kept within the lowest and highest default MFU"),
    # Its spread: wider for a small model and for an accelerator outside the calibrated
    # generations (udfs.calibration.throughput_sigma_for).
    _out("small_model", "Share of the small-model spread", "fraction",
         "minimum(1, maximum(0, log(small_model_active_params / active_params)"
         " / log(small_model_active_params / small_model_full_params)))",
         "0 from the small-model size up, 1 at or below the full-spread size, in between "
         "linear in LN(active): a bigger model never gets a narrower P90"),
    _out("calibrated_plan_sigma", "Calibrated throughput spread of the plan", "ln units",
         "sqrt(calibrated_throughput_sigma ** 2 + small_model * calibrated_small_model_sigma ** 2"
         " + accelerator_extra_sigma ** 2)",
         "SQRT(sigma^2 + small-model share (0..1) x small-model sigma^2 + accelerator's extra "
         "sigma^2)"),
    # Narrowed by a team's own runs (udfs.own_runs.OwnRuns.sigma; the planner's Our runs):
    # the spread at and above the small-model size loses pull x (team-to-team variance + the
    # accelerator's extra variance), but never below the narrowest spread there for which
    # the small-model ramp keeps P90 hours from falling as a model grows past it at a given
    # pull (a size-weighted pull that grows toward faster runs can still lower them; the ramp
    # adds NORM.S.INV(0.9) x small-model sigma^2 / (2 x sigma x LN(5B / 1B)) per LN(active)
    # at the knee, where the work falls by 1 - slope); the small-model part is added after.
    _out("own_runs_narrowest_sigma", "Narrowest spread own runs leave", "ln units",
         "norm_s_inv(p90_level) * calibrated_small_model_sigma ** 2"
         " / (2 * log(small_model_active_params / small_model_full_params)"
         " * (1 - maximum(0, mfu_ln_slope)))",
         "NORM.S.INV(0.9) x small-model sigma^2 / (2 x LN(small-model size / full-spread "
         "size) x (1 - MAX(0, slope))): below it P90 hours would fall as a model grows past "
         "the small-model size"),
    _out("own_runs_plan_sigma", "Throughput spread narrowed by your own runs", "ln units",
         "sqrt(maximum(minimum(calibrated_throughput_sigma ** 2 + accelerator_extra_sigma ** 2,"
         " own_runs_narrowest_sigma ** 2),"
         " calibrated_throughput_sigma ** 2 + accelerator_extra_sigma ** 2"
         " - own_runs_pull * (team_between_sd ** 2 + accelerator_extra_sigma ** 2))"
         " + small_model * calibrated_small_model_sigma ** 2)",
         "SQRT(MAX(MIN(sigma^2 + extra^2, narrowest^2), sigma^2 + extra^2 - pull x "
         "(team-to-team^2 + extra^2)) + small-model share x small-model sigma^2)"),
    _out("calibrated_range_pct", "Calibrated throughput uncertainty", "fraction",
         "exp(norm_s_inv(p90_level) * calibrated_plan_sigma) - 1",
         "P90 / P50 - 1 of the calibrated default: EXP(NORM.S.INV(0.9) x sigma) - 1"),
)  # fmt: skip

#: The quantities that get a P10 / P90 range (udfs.ranges), P50 being the point estimate.
RANGE_QUANTITIES = ("accelerator_hours", "wall_clock_days", "compute_cost_usd",
                    "electricity_kwh", "electricity_cost_usd", "total_cost_usd")  # fmt: skip

_TP_QUANTILE = "{q} * exp(norm_s_inv({p}) * throughput_sigma)"
#: Quantity -> formula of its p-quantile, ``{p}`` the probability and ``{k}`` the key
#: ("p10"): lognormal around the point; hours, days and electricity spread with the
#: throughput, the rental cost with the throughput and the price (independent), the total
#: cost is the point total plus the parts' moves (comonotone). See udfs.ranges.
RANGE_FORMULAS = {
    "accelerator_hours": _TP_QUANTILE.replace("{q}", "accelerator_hours"),
    "wall_clock_days": _TP_QUANTILE.replace("{q}", "wall_clock_days"),
    "compute_cost_usd": "compute_cost_usd * exp(norm_s_inv({p}) * "
    "sqrt(throughput_sigma ** 2 + price_sigma ** 2))",
    "electricity_kwh": _TP_QUANTILE.replace("{q}", "electricity_kwh"),
    "electricity_cost_usd": _TP_QUANTILE.replace("{q}", "electricity_cost_usd"),
    "total_cost_usd": "total_cost_usd + (compute_cost_usd_{k} - compute_cost_usd) "
    "+ (electricity_cost_usd_{k} - electricity_cost_usd)",
}


def _range_outputs():
    labels = {q.name: (q.label, q.unit) for q in PLAN_OUTPUTS}
    out = [
        _out("throughput_sigma", "Throughput spread (sigma of ln)", "ln units",
             "log(1 + throughput_range_pct) / norm_s_inv(p90_level)",
             "LN(1 + throughput uncertainty) / NORM.S.INV(0.9)"),
        _out("price_sigma", "Price spread (sigma of ln)", "ln units",
             "log(1 + price_range_pct) / norm_s_inv(p90_level)",
             "LN(1 + price uncertainty) / NORM.S.INV(0.9)"),
    ]  # fmt: skip
    for p, k in ((0.1, "p10"), (0.9, "p90")):
        for q in RANGE_QUANTITIES:
            label, unit = labels[q]
            how = ("P50 + the rental and electricity moves" if q == "total_cost_usd"
                   else f"P50 x EXP(NORM.S.INV({p:g}) x sigma)")  # fmt: skip
            out.append(_out(f"{q}_{k}", f"{label}, {k.upper()}", unit,
                            RANGE_FORMULAS[q].format(p=f"{k}_level", k=k), how))  # fmt: skip
    return tuple(out)


#: The range outputs: the spreads used and each range quantity's P10 and P90.
RANGE_OUTPUTS = _range_outputs()

#: Inputs the formulas read that are not planner inputs.
MODEL_INPUTS = (
    Quantity("hbm_gb", "HBM per accelerator", "GB", None, "> 0", "From the catalogue"),
    Quantity("target_days", "Target wall-clock days", "days", None, "> 0"),
    Quantity("run_start", "Run start (midnight)", "date", kind="date"),
    Quantity("month_start", "First day of a month", "date", kind="date"),
    Quantity("next_month", "First day of the next month", "date", kind="date"),
    Quantity(
        "mfu_ln_intercept",
        "ln-MFU intercept of the accelerator's generation",
        "ln units",
        None,
        "",
        "Fitted per generation (Compute Lab calibration); 'other' outside them",
    ),
    Quantity(
        "mfu_ln_slope",
        "ln-MFU slope per ln(active / small_model_active_params), below it",
        "",
        None,
        "",
        "Fitted (Compute Lab calibration)",
    ),
    Quantity(
        "calibrated_throughput_sigma",
        "Spread of the calibrated default",
        "ln units",
        None,
        "",
        "Grouped-validation sigma of ln hours, a model of at least small_model_active_params "
        "on a calibrated generation (udfs.calibration.throughput_sigma)",
    ),
    Quantity(
        "calibrated_small_model_sigma",
        "Extra spread of a small model",
        "ln units",
        None,
        "",
        "Added in quadrature, in full at or below small_model_full_params, ramping to 0 at "
        "small_model_active_params (udfs.calibration)",
    ),
    Quantity(
        "own_runs_pull",
        "Pull of your own runs",
        "fraction",
        None,
        "",
        "n_w / (n_w + k), n_w the summed size weights of your own runs in the plan's pooling "
        "group (udfs.own_runs)",
    ),
    Quantity(
        "team_between_sd",
        "Team-to-team spread",
        "ln units",
        None,
        "",
        "Sigma of an organisation's effect on a generation (udfs/data/calibration.toml)",
    ),
    Quantity(
        "accelerator_extra_sigma",
        "Extra spread of the accelerator",
        "ln units",
        None,
        "",
        "0 on a calibrated generation; outside them the spread of the generations' intercepts "
        "(udfs.calibration)",
    ),
)

#: The engine's inputs beyond the planner's and the formulas' (failures, scaling, ownership,
#: other costs), with the engine's defaults: :class:`udfs.engine.Plan` takes its defaults
#: from here, and the command line sets them with flags (``accelerators_per_node`` and the
#: node-day rate are turned into ``failures_per_accelerator_day`` before the engine).
ENGINE_INPUTS = (
    Quantity("failures_per_accelerator_day", "Failures per accelerator-day",
             "failures/accelerator-day", None, "> 0",
             "Derives goodput from Young/Daly checkpointing"),
    Quantity("failures_per_1000_node_days", "Failures per 1,000 node-days",
             "failures/1,000 node-days", None, ">= 0", "Meta RSC: 2.34 and 6.50"),
    Quantity("accelerators_per_node", "Accelerators per node", "accelerators", 8,
             "a whole number >= 1"),
    Quantity("checkpoint_write_minutes", "Checkpoint write", "minutes", 1.0, "> 0"),
    Quantity("restart_minutes", "Restart", "minutes", 10.0, ">= 0"),
    Quantity("global_batch_tokens", "Global batch", "tokens", None, "> 0",
             "Enables the sub-linear scaling model"),
    Quantity("tensor_parallel", "Tensor-parallel degree", "", 1.0, "a whole number >= 1"),
    Quantity("pipeline_parallel", "Pipeline-parallel degree", "", 1.0, "a whole number >= 1"),
    Quantity("sequence_tokens", "Sequence length", "tokens", 8192.0, "a whole number >= 1"),
    Quantity("pipeline_interleave", "Virtual pipeline stages", "", 1.0, "a whole number >= 1"),
    Quantity("interconnect_gb_per_s", "Scale-out bandwidth per accelerator", "GB/s", 50.0,
             "> 0"),
    Quantity("comm_overlap", "Share of all-reduce hidden", "fraction", 0.0, ">= 0 and < 1"),
    Quantity("purchase_usd_per_accelerator", "Capital cost per accelerator", "US$", None,
             ">= 0", "Owned hardware, instead of a price per accelerator-hour"),
    Quantity("amortisation_years", "Amortisation", "years", 4.0, "1/365 to 100"),
    Quantity("utilisation", "Utilisation of owned hardware", "fraction", 1.0, "0.01 to 1"),
    Quantity("other_costs_usd", "Other costs", "US$", 0.0, ">= 0", "Added to the total cost"),
)  # fmt: skip

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


@dataclass(frozen=True)
class Flag:
    """One number flag of ``compute-lab estimate``: the quantity it sets and its rule.

    Attributes
    ----------
    flag : str
        The flag, ``--total-params``.
    quantity : str
        The quantity it sets (a ``PLAN_INPUTS``, ``MODEL_INPUTS``, ``MODEL_CONSTANTS`` or
        ``ENGINE_INPUTS`` name): its default is what the flag left out takes.
    help : str
        The help text; the command line adds what the flag left out takes.
    check : str
        The range rule checked before anything else, by name: ``positive``, ``plausible``
        (above 0 and at least the quantity's :data:`MIN_PLAUSIBLE` floor), ``non_negative``,
        ``fraction``, ``at_least_one``, ``below_one``, ``range_pct``, ``count``, ``whole``,
        ``years``, ``utilisation`` (``compute_lab.flags`` holds the functions).
    maximum : float or None
        A bound of the command line on top (``MAX_COUNT``...), named in ``maximum_text``.
    argument : str
        The engine's name for it, when not the quantity's (``effective_tflops``).
    """

    flag: str
    quantity: str
    help: str
    check: str
    maximum: float | None = None
    maximum_text: str = ""
    argument: str = ""

    @property
    def name(self):
        """The engine's argument (a :class:`udfs.engine.Plan` field) this flag sets."""
        return self.argument or self.quantity


def _flag(flag, quantity, help, check, maximum=None, maximum_text="", argument=""):
    return Flag(flag, quantity, help, check, maximum, maximum_text, argument)


def _sci(x):
    """A bound as the help and messages spell it: 1e9, not 1e+09 or 1000000000.0."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


_COUNT = {"maximum": MAX_COUNT, "maximum_text": _sci(MAX_COUNT)}
_TFLOPS = {"maximum": MAX_TFLOPS, "maximum_text": f"{_sci(MAX_TFLOPS)} TFLOP/s per accelerator"}

#: The number flags of ``compute-lab estimate``, in the order ``--help`` lists them. Numbers
#: accept the 671B / 14.8T forms; a ``*_pct`` quantity takes a fraction or a percentage.
ESTIMATE_FLAGS = (
    _flag("--total-params", "total_params", "all parameters, e.g. 671B", "plausible"),
    _flag("--active-params", "active_params", "parameters active per token", "plausible"),
    _flag("--tokens", "training_tokens", "training tokens, e.g. 14.8T", "plausible"),
    _flag("--accelerators", "accelerators",
          f"accelerators in the job, a whole number up to {_sci(MAX_COUNT)}", "whole", **_COUNT),
    _flag("--effective-tflops", "effective_tflops_input",
          f"sustained TFLOP/s per accelerator, used as is (at most {_sci(MAX_TFLOPS)})",
          "positive", **_TFLOPS, argument="effective_tflops"),
    _flag("--peak-tflops", "peak_tflops",
          f"peak TFLOP/s per accelerator (at most {_sci(MAX_TFLOPS)})", "positive", **_TFLOPS),
    _flag("--mfu", "mfu", "model FLOPs utilisation, (0, 1] or 40%", "fraction"),
    _flag("--goodput", "goodput", "share of time training, (0, 1]", "fraction"),
    _flag("--throughput-range", "throughput_range_pct",
          "uncertainty of the throughput: P90 / P50 - 1 of accelerator-hours, e.g. 15% "
          "(P90 15% above P50, P10 at P50 / 1.15)", "range_pct"),
    _flag("--usd-per-hour", "usd_per_accelerator_hour", "US$ per accelerator-hour",
          "non_negative"),
    _flag("--price-range", "price_range_pct",
          "uncertainty of the price per accelerator-hour, P90 / P50 - 1, e.g. 10%", "range_pct"),
    _flag("--watts", "watts_per_accelerator", "W per accelerator", "positive"),
    _flag("--server-overhead", "server_overhead", "server power / accelerator power, >= 1",
          "at_least_one"),
    _flag("--pue", "pue", "data-centre PUE, >= 1", "at_least_one"),
    _flag("--usd-per-kwh", "usd_per_kwh", "electricity price, US$/kWh", "non_negative"),
    _flag("--grams-co2-per-kwh", "grams_co2_per_kwh", "grid carbon intensity, gCO2/kWh",
          "non_negative"),
    _flag("--checkpoint-bytes-per-param", "checkpoint_bytes_per_param", "2 = BF16 weights only",
          "positive"),
    _flag("--failures-per-accelerator-day", "failures_per_accelerator_day",
          "failure rate; derives goodput from Young/Daly checkpointing", "positive"),
    _flag("--failures-per-1000-node-days", "failures_per_1000_node_days",
          "failure rate per 1,000 node-days instead (Meta RSC: 2.34 and 6.50)", "non_negative"),
    _flag("--accelerators-per-node", "accelerators_per_node",
          "for the node-day rate, a whole number", "count", **_COUNT),
    _flag("--checkpoint-write-minutes", "checkpoint_write_minutes", "stall per checkpoint",
          "positive"),
    _flag("--restart-minutes", "restart_minutes", "failure to training again", "non_negative"),
    _flag("--global-batch-tokens", "global_batch_tokens",
          "tokens per step, at most the training tokens; enables sub-linear scaling",
          "positive"),
    _flag("--tensor-parallel", "tensor_parallel",
          "tensor-parallel degree, a whole number (scaling model)", "count", **_COUNT),
    _flag("--pipeline-parallel", "pipeline_parallel",
          "pipeline-parallel degree, a whole number (scaling model)", "count", **_COUNT),
    _flag("--sequence-tokens", "sequence_tokens",
          "sequence length in tokens, a whole number (scaling model)", "count", **_COUNT),
    _flag("--pipeline-interleave", "pipeline_interleave",
          "virtual pipeline stages, a whole number", "count", **_COUNT),
    _flag("--interconnect-gb-per-s", "interconnect_gb_per_s", "scale-out GB/s per accelerator",
          "positive"),
    _flag("--comm-overlap", "comm_overlap", "share of all-reduce hidden, [0, 1)", "below_one"),
    _flag("--hbm-gb", "hbm_gb", "HBM per accelerator, GB", "positive"),
    _flag("--training-state-bytes-per-param", "training_state_bytes_per_param",
          "16 = mixed-precision Adam", "positive"),
    _flag("--purchase-usd-per-accelerator", "purchase_usd_per_accelerator",
          f"owned hardware: capital cost per accelerator, at most US${_sci(MAX_PURCHASE_USD)} "
          "(instead of --usd-per-hour)", "non_negative", MAX_PURCHASE_USD,
          f"US${_sci(MAX_PURCHASE_USD)} per accelerator"),
    _flag("--amortisation-years", "amortisation_years",
          f"owned hardware: years, 1/365 (a day) to {MAX_AMORTISATION_YEARS:g}", "years"),
    _flag("--utilisation", "utilisation",
          f"owned hardware: busy share, {MIN_UTILISATION:g} ({MIN_UTILISATION:.0%}) to 1",
          "utilisation"),
    _flag("--other-costs-usd", "other_costs_usd",
          f"other costs added to the total, US$, at most {_sci(MAX_OTHER_COSTS_USD)}",
          "non_negative", MAX_OTHER_COSTS_USD, f"US${_sci(MAX_OTHER_COSTS_USD)}"),
)  # fmt: skip

#: The seed's DeepSeek-V3-like configuration (shared/seeds/003): its printed output is the
#: contract ``compute-lab estimate`` reproduces.
SEED_PLAN = {
    "scenario_name": "Example: DeepSeek-V3-like",
    "total_params": 671e9,
    "active_params": 37e9,
    "training_tokens": 14.8e12,
    "accelerators": 2048,
    "effective_tflops": 400.0,
    "usd_per_accelerator_hour": 2.0,
    "watts_per_accelerator": 700.0,
}

#: The seed's executed output for SEED_PLAN, verbatim.
SEED_OUTPUT_LINES = (
    "Training FLOPs: 3.286e+24",
    "Accelerator-hours: 2,281,667",
    "Wall-clock at 2048 accelerators: 46.4 days",
    "BF16 checkpoint: 1342.0 GB",
    "Rental-equivalent cost: $4,563,333",
    "Accelerator electricity: 1,597,167 kWh",
)
