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

A number input's range is a :class:`udfs.bounds.Bound` made of the named limits in
:mod:`udfs.bounds`; the command line's flags are in :mod:`udfs.estimate_flags`. Both modules' names
are importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from .bounds import (
    ACCELERATOR_COUNT,
    AT_LEAST_ONE,
    BUDGET_STATUSES,
    COUNT,
    FRACTION,
    MAX_AMORTISATION_YEARS,
    MAX_COUNT,
    MAX_OTHER_COSTS_USD,
    MAX_PURCHASE_USD,
    MAX_RANGE_PCT,
    MAX_RUN_CODE_CHARS,
    MAX_RUN_FIGURE,
    MAX_TFLOPS,
    MIN_AMORTISATION_YEARS,
    MIN_UTILISATION,
    NON_NEGATIVE,
    POSITIVE,
    PRICING_BASES,
    RANGE_PCT,
    RUN_CODE_RULE,
    Bound,
)
from .estimate_flags import ESTIMATE_FLAGS, SEED_OUTPUT_LINES, SEED_PLAN, Flag

__all__ = [
    "Bound",
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
    "MAX_RANGE_PCT",
    "CHINCHILLA_TOKENS_PER_PARAM",
    "POSITIVE",
    "NON_NEGATIVE",
    "AT_LEAST_ONE",
    "FRACTION",
    "COUNT",
    "ACCELERATOR_COUNT",
    "RANGE_PCT",
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
    """One quantity of the model: an input (with its ``bound`` when it is a number, from
    which its ``rule`` text is made), a constant or a computed output (its ``formula``)."""

    name: str
    label: str
    unit: str
    default: object = None
    rule: str = ""  # the allowed values in words; a number's comes from its bound
    note: str = ""
    required: bool = False
    kind: str = "number"  # "number", "text" or "date"
    formula: str = ""  # for a computed quantity: an expression over other names (udfs.model)
    bound: Bound | None = None  # the values a number input may take

    def __post_init__(self):
        if self.bound is not None and not self.rule:
            object.__setattr__(self, "rule", self.bound.text)


#: Compute-optimal training tokens per parameter (Hoffmann et al. 2022, "Chinchilla").
CHINCHILLA_TOKENS_PER_PARAM = 20.0

_TFLOPS = Bound(
    low=0, low_inclusive=False, ceiling=MAX_TFLOPS, ceiling_text="{} TFLOP/s per accelerator"
)
_OTHER_COSTS = Bound(low=0, ceiling=MAX_OTHER_COSTS_USD, ceiling_text="US${}")


PLAN_INPUTS = (
    Quantity(
        name="scenario_name",
        label="Scenario",
        unit="",
        rule="text",
        note="A short name for the plan",
        kind="text",
    ),
    Quantity(
        name="run_code",
        label="Run code",
        unit="",
        rule=RUN_CODE_RULE,
        note="The run's key in the hand-off and its actuals, unique per hand-off; kept when "
        "the status, dates, price or plan change. Blank: the owner and the scenario name",
        kind="text",
    ),
    Quantity(
        name="budget_status",
        label="Budget status",
        unit="",
        rule="Reference, Proposed, Approved or Excluded",
        note="For the budget view; blank in a filled column counts as Proposed",
        kind="text",
    ),
    Quantity(
        name="owner",
        label="Owner",
        unit="",
        rule="text",
        note="Team or person owning the plan (optional)",
        kind="text",
    ),
    Quantity(
        name="approval_ref",
        label="Approval reference",
        unit="",
        rule="text",
        note="For Approved: the approval's reference (decision, minute, ticket). Approved without "
        "it, the date, the approver or the approved amount counts as Proposed (a WARN)",
        kind="text",
    ),
    Quantity(
        name="approval_date",
        label="Approval date",
        unit="date",
        rule="a date",
        note="For Approved: the day the budget was approved",
        kind="date",
    ),
    Quantity(
        name="approver",
        label="Approver",
        unit="",
        rule="text",
        note="For Approved: who approved the budget (a person or a committee)",
        kind="text",
    ),
    Quantity(
        name="approved_amount_usd",
        label="Approved amount",
        unit="US$",
        bound=POSITIVE,
        note="For Approved: the amount approved; a P50 total cost above it is a WARN",
    ),
    Quantity(
        name="cost_centre",
        label="Cost centre",
        unit="",
        rule="text",
        note="The cost centre the run is charged to (finance's code; optional)",
        kind="text",
    ),
    Quantity(
        name="gl_account",
        label="GL account",
        unit="",
        rule="text",
        note="The general-ledger account the run's compute cost is booked to (finance's code; "
        "optional)",
        kind="text",
    ),
    Quantity(
        name="total_params",
        label="Total parameters",
        unit="parameters",
        bound=POSITIVE,
        note="All stored parameters (every expert of an MoE model)",
        required=True,
    ),
    Quantity(
        name="active_params",
        label="Active parameters per token",
        unit="parameters",
        bound=Bound(low=0, low_inclusive=False, not_above="total parameters"),
        note="Parameters used per token; blank means dense (= total)",
    ),
    Quantity(
        name="training_tokens",
        label="Training tokens",
        unit="tokens",
        bound=POSITIVE,
        required=True,
    ),
    Quantity(
        name="accelerators",
        label="Accelerators",
        unit="accelerators",
        bound=ACCELERATOR_COUNT,
        note="Accelerators working on the run at once",
        required=True,
    ),
    Quantity(
        name="accelerator_name",
        label="Accelerator",
        unit="",
        default="H100 SXM",
        rule="a catalogue name",
        note="Sets the peak TFLOP/s, HBM and default watts",
        kind="text",
    ),
    Quantity(
        name="peak_tflops",
        label="Peak TFLOP/s per accelerator",
        unit="TFLOP/s",
        bound=_TFLOPS,
        note="Dense BF16 peak; blank takes the catalogue figure",
    ),
    Quantity(
        name="mfu",
        label="Model FLOPs utilisation (MFU)",
        unit="fraction",
        bound=FRACTION,
        note="Blank: the calibrated default for the accelerator's generation and the active "
        "parameters (Accelerators sheet; see the Compute Lab calibration notes)",
    ),
    Quantity(
        name="goodput",
        label="Goodput",
        unit="fraction",
        default=1.0,
        bound=FRACTION,
        note="Share of time doing useful training (failures, checkpoints, restarts)",
    ),
    Quantity(
        name="effective_tflops_input",
        label="Effective TFLOP/s (override)",
        unit="TFLOP/s",
        bound=_TFLOPS,
        note="Sustained TFLOP/s per accelerator; when typed, used as is instead of peak x MFU x "
        "goodput",
    ),
    Quantity(
        name="throughput_range_pct",
        label="Throughput uncertainty (P90 / P50 - 1)",
        unit="fraction",
        bound=RANGE_PCT,
        note="Spread of accelerator-hours: 0.15 puts P90 15% above P50 and P10 at P50 / 1.15. "
        "Blank: the calibrated spread, with a typed MFU or throughput too (0 = exact)",
    ),
    Quantity(
        name="usd_per_accelerator_hour",
        label="Price per accelerator-hour",
        unit="US$/accelerator-hour",
        default=2.0,
        bound=NON_NEGATIVE,
        note="Rental, or the ownership equivalent (see the pricing basis). Blank: US$2.00, the "
        "H800 rental price the DeepSeek-V3 report assumed (arXiv 2412.19437, Dec 2024), not a "
        "quote",
    ),
    Quantity(
        name="pricing_basis",
        label="Pricing basis",
        unit="",
        rule="rental all-in, rental plus power or owned",
        note="What the price covers. Rental all-in: power included, no electricity added. Rental "
        "plus power, or owned (the price is the ownership equivalent): electricity added. "
        "Blank: rental plus power",
        kind="text",
    ),
    Quantity(
        name="price_range_pct",
        label="Price uncertainty (P90 / P50 - 1)",
        unit="fraction",
        default=0.0,
        bound=RANGE_PCT,
        note="Spread of the price per accelerator-hour, independent of the throughput uncertainty",
    ),
    Quantity(
        name="watts_per_accelerator",
        label="Power per accelerator",
        unit="W",
        default=700.0,
        bound=POSITIVE,
        note="Average draw; blank: the accelerator's TDP from the catalogue, else 700 W (H100 SXM)",
    ),
    Quantity(
        name="server_overhead",
        label="Server power overhead",
        unit="ratio",
        default=1.0,
        bound=AT_LEAST_ONE,
        note="Server power over accelerator power. Blank: 1.00, a lower bound (the accelerators "
        "only); Epoch AI uses ~1.82 for H100 servers",
    ),
    Quantity(
        name="pue",
        label="Data-centre PUE",
        unit="ratio",
        default=1.0,
        bound=AT_LEAST_ONE,
        note="Power usage effectiveness. Blank: 1.00, a lower bound (no cooling); Uptime Institute "
        "average 1.56 (2024), hyperscalers ~1.1",
    ),
    Quantity(
        name="usd_per_kwh",
        label="Electricity price",
        unit="US$/kWh",
        default=0.08,
        bound=NON_NEGATIVE,
        note="Blank: US$0.08, a placeholder without a source: type your contract's price. Not "
        "used with a rental all-in price",
    ),
    Quantity(
        name="other_costs_usd",
        label="Other costs of the run",
        unit="US$",
        default=0.0,
        bound=_OTHER_COSTS,
        note="Storage, data, networking, staff... added to the total as they are (no range). "
        "Blank: none",
    ),
    Quantity(
        name="grams_co2_per_kwh",
        label="Grid carbon intensity",
        unit="gCO2/kWh",
        default=481.0,
        bound=NON_NEGATIVE,
        note="World average 2023 (Ember)",
    ),
    Quantity(
        name="checkpoint_bytes_per_param",
        label="Checkpoint bytes per parameter",
        unit="bytes",
        default=2.0,
        bound=POSITIVE,
        note="2 = BF16 weights only; ~13 with optimizer state",
    ),
    Quantity(
        name="start_date",
        label="Run start date",
        unit="date",
        rule="a date",
        note="First day of training, for the monthly spend schedule",
        kind="date",
    ),
)

#: Fixed figures of the model, as named constants the formulas read (and the workbooks show).
MODEL_CONSTANTS = (
    Quantity(
        name="flops_per_param_token",
        label="FLOPs per active parameter per token",
        unit="",
        default=6.0,
        note="Forward + backward pass, the 6N heuristic (Kaplan et al. 2020)",
    ),
    Quantity(
        name="training_state_bytes_per_param",
        label="Training state bytes per parameter",
        unit="bytes",
        default=16.0,
        note="Mixed-precision Adam, fully sharded (EleutherAI Transformer Math 101)",
        bound=POSITIVE,
    ),
    Quantity(
        name="days_per_year",
        label="Days per year",
        unit="days",
        default=365.0,
        note="For research iterations per year",
    ),
    Quantity(
        name="mfu_min",
        label="Lowest calibrated default MFU",
        unit="fraction",
        default=0.10,
        note="One calibration run sits below 10% (Llama 3.2 1B, distilled; Compute Lab "
        "calibration)",
    ),
    Quantity(
        name="mfu_max",
        label="Highest calibrated default MFU",
        unit="fraction",
        default=0.55,
        note="No large run reports above ~46% (PaLM); one small run implies 63% (Phi-2)",
    ),
    Quantity(
        name="small_model_active_params",
        label="Small model: active parameters below",
        unit="parameters",
        default=5e9,
        note="Below it the calibrated spread widens (Compute Lab calibration)",
    ),
    Quantity(
        name="small_model_full_params",
        label="Small model: full extra spread at or below",
        unit="parameters",
        default=1e9,
        note="The small-model spread ramps in over LN(active) from none at the "
        "small-model size to all of it here (Compute Lab calibration)",
    ),
    Quantity(
        name="p10_level",
        label="Low percentile of the ranges (P10)",
        unit="fraction",
        default=0.1,
        note="One run in ten comes in below",
    ),
    Quantity(
        name="p90_level",
        label="High percentile of the ranges (P90)",
        unit="fraction",
        default=0.9,
        note="One run in ten comes in above: the contingency line",
    ),
)


#: The fewest parameters and tokens a plan for a cluster can hold: below, the figure was typed
#: in the wrong unit (70 for 70 billion). An ERROR in the planner's Checks and the hand-off.
PLAUSIBILITY_FLOORS = (
    Quantity(
        name="min_plausible_params",
        label="Fewest plausible parameters",
        unit="parameters",
        default=1e6,
        note="The smallest models trained on a cluster have tens of millions; below 1E6 "
        "the figure was typed in billions (type the full number, e.g. 70E9)",
    ),
    Quantity(
        name="min_plausible_tokens",
        label="Fewest plausible training tokens",
        unit="tokens",
        default=1e9,
        note="Runs on a cluster see billions of tokens; below 1E9 the figure was typed "
        "in billions or trillions (type the full number, e.g. 14.8E12)",
    ),
)
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
    return Quantity(name=name, label=label, unit=unit, note=note, formula=formula)


#: The plan's outputs, each with its formula: the one definition every face renders
#: (numpy in :mod:`udfs.model`, Excel text in the workbook templates).
PLAN_OUTPUTS = (
    _out(
        name="effective_tflops",
        label="Effective TFLOP/s per accelerator",
        unit="TFLOP/s",
        formula="peak_tflops * mfu * goodput",
        note="Override if typed, else peak x MFU x goodput",
    ),
    _out(
        name="training_flops",
        label="Training compute",
        unit="FLOPs",
        formula="flops_per_param_token * active_params * training_tokens",
        note="6 x active parameters x tokens",
    ),
    _out(
        name="accelerator_hours",
        label="Accelerator-hours",
        unit="accelerator-hours",
        formula="training_flops / (effective_tflops * 1e12) / 3600",
        note="FLOPs / (effective TFLOP/s x 1e12) / 3600",
    ),
    _out(
        name="wall_clock_days",
        label="Wall-clock time",
        unit="days",
        formula="accelerator_hours / accelerators / 24",
        note="Accelerator-hours / accelerators / 24 (linear scaling)",
    ),
    _out(
        name="checkpoint_gb",
        label="Checkpoint size",
        unit="GB",
        formula="total_params * checkpoint_bytes_per_param / 1e9",
        note="Total parameters x checkpoint bytes per parameter / 1e9",
    ),
    _out(
        name="compute_cost_usd",
        label="Compute cost",
        unit="US$",
        formula="accelerator_hours * usd_per_accelerator_hour",
        note="Accelerator-hours x price per accelerator-hour",
    ),
    _out(
        name="electricity_kwh",
        label="Electricity",
        unit="kWh",
        formula="accelerator_hours * watts_per_accelerator * server_overhead * pue / 1000",
        note="Accelerator-hours x W x server overhead x PUE / 1000",
    ),
    _out(
        name="electricity_cost_usd",
        label="Electricity cost",
        unit="US$",
        formula="electricity_kwh * usd_per_kwh",
        note="kWh x price per kWh",
    ),
    _out(
        name="co2_tonnes",
        label="Operational emissions",
        unit="tCO2",
        formula="electricity_kwh * grams_co2_per_kwh / 1e6",
        note="kWh x gCO2/kWh / 1e6",
    ),
    _out(
        name="total_cost_usd",
        label="Total cost",
        unit="US$",
        formula="compute_cost_usd + electricity_cost_usd",
        note="Compute cost + electricity cost",
    ),
    _out(
        name="min_accelerators_for_memory",
        label="Min. accelerators for training state",
        unit="accelerators",
        formula="ceil(round(total_params * training_state_bytes_per_param / (hbm_gb * 1e9), 9))",
        note="Total parameters x 16 bytes / HBM, rounded up (ZeRO-3)",
    ),
    _out(
        name="iterations_per_year",
        label="Back-to-back runs per year",
        unit="runs/year",
        formula="days_per_year / wall_clock_days",
        note="365 / wall-clock days",
    ),
)

#: A run's days in a calendar month: its overlap [start, start + days) with the month, in
#: days counted from the start (dates as day numbers).
_RUN_DAYS = (
    "maximum(0, minimum(wall_clock_days, next_month - run_start)"
    " - maximum(0, month_start - run_start))"
)

#: Further computed quantities the workbooks show (sizing, reference runs, comparison).
MODEL_EXTRAS = (
    _out(
        name="accelerators_for_days",
        label="Accelerators needed",
        unit="accelerators",
        formula="accelerator_hours / (24 * target_days)",
        note="Accelerator-hours / (24 x target days), linear scaling, not rounded",
    ),
    _out(
        name="implied_effective_tflops",
        label="Implied TFLOP/s",
        unit="TFLOP/s",
        formula="training_flops / (accelerator_hours * 3600) / 1e12",
        note="FLOPs / (disclosed accelerator-hours x 3600) / 1e12",
    ),
    _out(
        name="implied_mfu",
        label="Implied MFU",
        unit="fraction",
        formula="implied_effective_tflops / peak_tflops",
        note="Implied TFLOP/s / peak TFLOP/s",
    ),
    # One calendar month of the spend schedule (udfs.engine.month_shares), dates as day numbers.
    _out(
        name="run_days_in_month",
        label="Run days in month",
        unit="days",
        formula=_RUN_DAYS,
        note="Overlap of the run [start, start + days) with the month [month, next month), "
        "in days counted from the start",
    ),
    _out(
        name="month_share",
        label="Share of run",
        unit="fraction",
        formula="run_days_in_month / wall_clock_days",
        note="Run days in the month / wall-clock days",
    ),
    # The P90 schedule is the P90 run (udfs.schedule): the same overlap over the P90 days,
    # its compute and electricity P90 spread over it; other costs keep the P50 schedule.
    _out(
        name="run_days_in_month_p90",
        label="P90 run days in month",
        unit="days",
        formula=_RUN_DAYS.replace("wall_clock_days", "wall_clock_days_p90"),
        note="Overlap of the P90 run [start, start + P90 days) with the month",
    ),
    _out(
        name="month_share_p90",
        label="Share of the P90 run",
        unit="fraction",
        formula="run_days_in_month_p90 / wall_clock_days_p90",
        note="P90 run days in the month / P90 days",
    ),
    _out(
        name="month_total_cost_usd_p90",
        label="Total cost in the month, P90",
        unit="US$",
        formula="(total_cost_usd_p90 - other_costs_usd) * month_share_p90"
        " + other_costs_usd * month_share",
        note="(P90 total - other costs) x share of the P90 run + other costs x share of the run: "
        "the accelerators bill at their capacity for longer, at most at the P90 price",
    ),
    # The calibrated default MFU (udfs.calibration.predicted_mfu), for a blank MFU.
    _out(
        name="calibrated_mfu_raw",
        label="Default MFU before its bounds",
        unit="fraction",
        formula="exp(mfu_ln_intercept + mfu_ln_slope"
        " * log(minimum(active_params, small_model_active_params) / small_model_active_params))",
        note="EXP(intercept of the generation + slope x LN(MIN(active, small-model threshold) / "
        "small-model threshold)): the size effect only below the threshold",
    ),
    _out(
        name="calibrated_mfu",
        label="Calibrated default MFU",
        unit="fraction",
        formula="minimum(mfu_max, maximum(mfu_min, calibrated_mfu_raw))",
        note="The default before its bounds, kept within the lowest and highest default MFU",
    ),
    # Its spread: wider for a small model and for an accelerator outside the calibrated
    # generations (udfs.calibration.throughput_sigma_for).
    _out(
        name="small_model",
        label="Share of the small-model spread",
        unit="fraction",
        formula="minimum(1, maximum(0, log(small_model_active_params / active_params)"
        " / log(small_model_active_params / small_model_full_params)))",
        note="0 from the small-model size up, 1 at or below the full-spread size, in between "
        "linear in LN(active): a bigger model never gets a narrower P90",
    ),
    _out(
        name="calibrated_plan_sigma",
        label="Calibrated throughput spread of the plan",
        unit="ln units",
        formula="sqrt(calibrated_throughput_sigma ** 2"
        " + small_model * calibrated_small_model_sigma ** 2"
        " + accelerator_extra_sigma ** 2)",
        note="SQRT(sigma^2 + small-model share (0..1) x small-model sigma^2 + accelerator's extra "
        "sigma^2)",
    ),
    # Narrowed by a team's own runs (udfs.own_runs.OwnRuns.sigma; the planner's Our runs):
    # each part of the spread loses pull x the share of it own runs remove (fitted with whole
    # organisations held out, udfs.refit.narrowing_design; the accelerator's extra variance
    # all of it); the spread at and above the small-model size never below the narrowest for which
    # the small-model ramp keeps P90 hours from falling as a model grows past it at a given
    # pull (a size-weighted pull that grows toward faster runs can still lower them; the ramp
    # adds NORM.S.INV(0.9) x small-model sigma^2 / (2 x sigma x LN(5B / 1B)) per LN(active)
    # at the knee, where the work falls by 1 - slope); the small-model part is added after.
    _out(
        name="own_runs_narrowest_sigma",
        label="Narrowest spread own runs leave",
        unit="ln units",
        formula="norm_s_inv(p90_level) * calibrated_small_model_sigma ** 2"
        " / (2 * log(small_model_active_params / small_model_full_params)"
        " * (1 - maximum(0, mfu_ln_slope)))",
        note="NORM.S.INV(0.9) x small-model sigma^2 / (2 x LN(small-model size / full-spread "
        "size) x (1 - MAX(0, slope))): below it P90 hours would fall as a model grows past "
        "the small-model size",
    ),
    _out(
        name="own_runs_plan_sigma",
        label="Throughput spread narrowed by your own runs",
        unit="ln units",
        formula="sqrt(maximum(minimum(calibrated_throughput_sigma ** 2"
        " + accelerator_extra_sigma ** 2,"
        " own_runs_narrowest_sigma ** 2),"
        " calibrated_throughput_sigma ** 2 + accelerator_extra_sigma ** 2"
        " - own_runs_pull * (own_runs_base_narrowing * calibrated_throughput_sigma ** 2"
        " + accelerator_extra_sigma ** 2))"
        " + small_model * (1 - own_runs_pull * own_runs_small_narrowing)"
        " * calibrated_small_model_sigma ** 2)",
        note="SQRT(MAX(MIN(sigma^2 + extra^2, narrowest^2), sigma^2 x (1 - pull x base share) + "
        "extra^2 x (1 - pull)) + small-model share x (1 - pull x small share) x small-model "
        "sigma^2)",
    ),
    _out(
        name="calibrated_range_pct",
        label="Calibrated throughput uncertainty",
        unit="fraction",
        formula="exp(norm_s_inv(p90_level) * calibrated_plan_sigma) - 1",
        note="P90 / P50 - 1 of the calibrated default: EXP(NORM.S.INV(0.9) x sigma) - 1",
    ),
)

#: The quantities that get a P10 / P90 range (udfs.ranges), P50 being the point estimate.
RANGE_QUANTITIES = (
    "accelerator_hours",
    "wall_clock_days",
    "compute_cost_usd",
    "electricity_kwh",
    "electricity_cost_usd",
    "total_cost_usd",
)

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
        _out(
            name="throughput_sigma",
            label="Throughput spread (sigma of ln)",
            unit="ln units",
            formula="log(1 + throughput_range_pct) / norm_s_inv(p90_level)",
            note="LN(1 + throughput uncertainty) / NORM.S.INV(0.9)",
        ),
        _out(
            name="price_sigma",
            label="Price spread (sigma of ln)",
            unit="ln units",
            formula="log(1 + price_range_pct) / norm_s_inv(p90_level)",
            note="LN(1 + price uncertainty) / NORM.S.INV(0.9)",
        ),
    ]
    for p, k in ((0.1, "p10"), (0.9, "p90")):
        for q in RANGE_QUANTITIES:
            label, unit = labels[q]
            how = (
                "P50 + the rental and electricity moves"
                if q == "total_cost_usd"
                else f"P50 x EXP(NORM.S.INV({p:g}) x sigma)"
            )
            out.append(
                _out(
                    name=f"{q}_{k}",
                    label=f"{label}, {k.upper()}",
                    unit=unit,
                    formula=RANGE_FORMULAS[q].format(p=f"{k}_level", k=k),
                    note=how,
                )
            )
    return tuple(out)


#: The range outputs: the spreads used and each range quantity's P10 and P90.
RANGE_OUTPUTS = _range_outputs()

#: Inputs the formulas read that are not planner inputs.
MODEL_INPUTS = (
    Quantity(
        name="hbm_gb",
        label="HBM per accelerator",
        unit="GB",
        bound=POSITIVE,
        note="From the catalogue",
    ),
    Quantity(name="target_days", label="Target wall-clock days", unit="days", bound=POSITIVE),
    Quantity(name="run_start", label="Run start (midnight)", unit="date", kind="date"),
    Quantity(name="month_start", label="First day of a month", unit="date", kind="date"),
    Quantity(name="next_month", label="First day of the next month", unit="date", kind="date"),
    Quantity(
        name="mfu_ln_intercept",
        label="ln-MFU intercept of the accelerator's generation",
        unit="ln units",
        note="Fitted per generation (Compute Lab calibration); 'other' outside them",
    ),
    Quantity(
        name="mfu_ln_slope",
        label="ln-MFU slope per ln(active / small_model_active_params), below it",
        unit="",
        note="Fitted (Compute Lab calibration)",
    ),
    Quantity(
        name="calibrated_throughput_sigma",
        label="Spread of the calibrated default",
        unit="ln units",
        note="Grouped-validation sigma of ln hours, a model of at least small_model_active_params "
        "on a calibrated generation (udfs.calibration.throughput_sigma)",
    ),
    Quantity(
        name="calibrated_small_model_sigma",
        label="Extra spread of a small model",
        unit="ln units",
        note="Added in quadrature, in full at or below small_model_full_params, ramping to 0 at "
        "small_model_active_params (udfs.calibration)",
    ),
    Quantity(
        name="own_runs_pull",
        label="Pull of your own runs",
        unit="fraction",
        note="n_w / (n_w + k), n_w the summed size weights of your own runs in the plan's pooling "
        "group (udfs.own_runs)",
    ),
    Quantity(
        name="own_runs_base_narrowing",
        label="Share of the spread your runs remove",
        unit="fraction",
        note="Of sigma^2, at a pull of 1; fitted with whole organisations held out "
        "(udfs/data/calibration.toml)",
    ),
    Quantity(
        name="own_runs_small_narrowing",
        label="Share of the small-model spread your runs remove",
        unit="fraction",
        note="Of the small-model sigma^2, at a pull of 1; fitted with whole organisations held "
        "out (udfs/data/calibration.toml)",
    ),
    Quantity(
        name="accelerator_extra_sigma",
        label="Extra spread of the accelerator",
        unit="ln units",
        note="0 on a calibrated generation; outside them the spread of the generations' intercepts "
        "(udfs.calibration)",
    ),
)

#: The engine's inputs beyond the planner's and the formulas' (failures, scaling, ownership,
#: other costs), with the engine's defaults: :class:`udfs.engine.Plan` takes its defaults
#: from here, and the command line sets them with flags (``accelerators_per_node`` and the
#: node-day rate are turned into ``failures_per_accelerator_day`` before the engine).
ENGINE_INPUTS = (
    Quantity(
        name="failures_per_accelerator_day",
        label="Failures per accelerator-day",
        unit="failures/accelerator-day",
        bound=POSITIVE,
        note="Derives goodput from Young/Daly checkpointing",
    ),
    Quantity(
        name="failures_per_1000_node_days",
        label="Failures per 1,000 node-days",
        unit="failures/1,000 node-days",
        bound=NON_NEGATIVE,
        note="Meta RSC: 2.34 and 6.50",
    ),
    Quantity(
        name="accelerators_per_node",
        label="Accelerators per node",
        unit="accelerators",
        default=8,
        bound=COUNT,
    ),
    Quantity(
        name="checkpoint_write_minutes",
        label="Checkpoint write",
        unit="minutes",
        default=1.0,
        bound=POSITIVE,
    ),
    Quantity(
        name="restart_minutes", label="Restart", unit="minutes", default=10.0, bound=NON_NEGATIVE
    ),
    Quantity(
        name="global_batch_tokens",
        label="Global batch",
        unit="tokens",
        bound=POSITIVE,
        note="Enables the sub-linear scaling model",
    ),
    Quantity(
        name="tensor_parallel",
        label="Tensor-parallel degree",
        unit="",
        default=1.0,
        bound=COUNT,
    ),
    Quantity(
        name="pipeline_parallel",
        label="Pipeline-parallel degree",
        unit="",
        default=1.0,
        bound=COUNT,
    ),
    Quantity(
        name="sequence_tokens",
        label="Sequence length",
        unit="tokens",
        default=8192.0,
        bound=COUNT,
    ),
    Quantity(
        name="pipeline_interleave",
        label="Virtual pipeline stages",
        unit="",
        default=1.0,
        bound=COUNT,
    ),
    Quantity(
        name="interconnect_gb_per_s",
        label="Scale-out bandwidth per accelerator",
        unit="GB/s",
        default=50.0,
        bound=POSITIVE,
    ),
    Quantity(
        name="comm_overlap",
        label="Share of all-reduce hidden",
        unit="fraction",
        default=0.0,
        bound=Bound(low=0, high=1, high_inclusive=False),
    ),
    Quantity(
        name="purchase_usd_per_accelerator",
        label="Capital cost per accelerator",
        unit="US$",
        bound=Bound(low=0, ceiling=MAX_PURCHASE_USD, ceiling_text="US${} per accelerator"),
        note="Owned hardware, instead of a price per accelerator-hour",
    ),
    Quantity(
        name="amortisation_years",
        label="Amortisation",
        unit="years",
        default=4.0,
        bound=Bound(
            low=MIN_AMORTISATION_YEARS,
            high=MAX_AMORTISATION_YEARS,
            unit="years",
            low_text="1/365 (one day)",
        ),
    ),
    Quantity(
        name="utilisation",
        label="Utilisation of owned hardware",
        unit="fraction",
        default=1.0,
        bound=Bound(low=MIN_UTILISATION, high=1, low_text="{0:g} ({0:.0%})"),
    ),
    Quantity(
        name="other_costs_usd",
        label="Other costs",
        unit="US$",
        default=0.0,
        bound=_OTHER_COSTS,
        note="Added to the total cost",
    ),
)
