"""The names, labels, units and defaults of a training plan's quantities.

One table that every face shares: the command line's flags (``--total-params``), the Excel
formulas' argument names, the planner workbook's rows and defined names, and the hand-off
reader. The math lives in :mod:`udfs.engine`; this module only describes.

``PLAN_INPUTS`` rows are ``Quantity`` records; ``default`` is what a blank planner column
starts from (None: the user must type it, or the quantity is optional and off when blank).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Quantity", "PLAN_INPUTS", "PLAN_OUTPUTS", "SEED_PLAN", "SEED_OUTPUT_LINES"]


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


PLAN_INPUTS = (
    Quantity(
        "scenario_name", "Scenario", "", None, "text", "A short name for the plan", kind="text"
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
        "Default: udfs.calibration.default_mfu(), the median implied MFU of the "
        "catalogue's disclosed runs",
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
        "usd_per_accelerator_hour",
        "Price per accelerator-hour",
        "US$/accelerator-hour",
        2.0,
        ">= 0",
        "Rental, or the ownership equivalent",
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
        "Server power over accelerator power (Epoch AI uses ~1.82 for H100 servers)",
    ),
    Quantity(
        "pue",
        "Data-centre PUE",
        "ratio",
        1.0,
        ">= 1",
        "Power usage effectiveness (Uptime Institute average 1.56 in 2024)",
    ),
    Quantity("usd_per_kwh", "Electricity price", "US$/kWh", 0.08, ">= 0"),
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

PLAN_OUTPUTS = (
    Quantity("effective_tflops", "Effective TFLOP/s per accelerator", "TFLOP/s"),
    Quantity("training_flops", "Training compute", "FLOPs"),
    Quantity("accelerator_hours", "Accelerator-hours", "accelerator-hours"),
    Quantity("wall_clock_days", "Wall-clock time", "days"),
    Quantity("checkpoint_gb", "Checkpoint size", "GB"),
    Quantity("rental_cost_usd", "Compute cost", "US$"),
    Quantity("electricity_kwh", "Electricity", "kWh"),
    Quantity("electricity_cost_usd", "Electricity cost", "US$"),
    Quantity("co2_tonnes", "Operational emissions", "tCO2"),
    Quantity("total_cost_usd", "Total cost", "US$"),
    Quantity("min_accelerators_for_memory", "Min. accelerators for training state", "accelerators"),
    Quantity("iterations_per_year", "Back-to-back runs per year", "runs/year"),
)

#: The seed's DeepSeek-V3-like configuration (shared/seeds/003): its printed output is the
#: contract ``compute-lab estimate`` reproduces.
SEED_PLAN = {
    "scenario_name": "Seed: DeepSeek-V3-like",
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
