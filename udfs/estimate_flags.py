"""The number flags of ``compute-lab estimate`` and the example plan whose output it prints.

Each :class:`Flag` names the quantity (in :mod:`udfs.quantities`) it sets: its rule, range,
default and unit come from there. :mod:`udfs.quantities` re-exports every name here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Flag", "ESTIMATE_FLAGS", "SEED_PLAN", "SEED_OUTPUT_LINES"]


@dataclass(frozen=True)
class Flag:
    """One number flag of ``compute-lab estimate``: the quantity it sets.

    The flag's range rule, checked before anything else, and the range its help shows are the
    quantity's :class:`udfs.bounds.Bound` (a parameter count or the tokens: its
    :data:`udfs.quantities.MIN_PLAUSIBLE` floor as well).

    Attributes
    ----------
    flag : str
        The flag, ``--total-params``.
    quantity : str
        The quantity it sets (a ``PLAN_INPUTS``, ``MODEL_INPUTS``, ``MODEL_CONSTANTS`` or
        ``ENGINE_INPUTS`` name): its default is what the flag left out takes.
    help : str
        The help text; the command line adds the quantity's range and what the flag left out
        takes.
    argument : str
        The engine's name for it, when not the quantity's (``effective_tflops``).
    """

    flag: str
    quantity: str
    help: str
    argument: str = ""

    @property
    def name(self):
        """The engine's argument (a :class:`udfs.engine.Plan` field) this flag sets."""
        return self.argument or self.quantity


#: The number flags of ``compute-lab estimate``, in the order ``--help`` lists them. Numbers
#: accept the 671B / 14.8T forms; a ``*_pct`` quantity takes a fraction or a percentage.
ESTIMATE_FLAGS = (
    Flag(flag="--total-params", quantity="total_params", help="all parameters, e.g. 671B"),
    Flag(flag="--active-params", quantity="active_params", help="parameters active per token"),
    Flag(flag="--tokens", quantity="training_tokens", help="training tokens, e.g. 14.8T"),
    Flag(flag="--accelerators", quantity="accelerators", help="accelerators in the job"),
    Flag(
        flag="--effective-tflops",
        quantity="effective_tflops_input",
        help="sustained TFLOP/s per accelerator, used as is",
        argument="effective_tflops",
    ),
    Flag(flag="--peak-tflops", quantity="peak_tflops", help="peak TFLOP/s per accelerator"),
    Flag(flag="--mfu", quantity="mfu", help="model FLOPs utilisation (0.4 or 40%)"),
    Flag(flag="--goodput", quantity="goodput", help="share of time training"),
    Flag(
        flag="--throughput-range",
        quantity="throughput_range_pct",
        help="uncertainty of the throughput: P90 / P50 - 1 of accelerator-hours, e.g. 15% "
        "(P90 15% above P50, P10 at P50 / 1.15)",
    ),
    Flag(
        flag="--usd-per-hour", quantity="usd_per_accelerator_hour", help="US$ per accelerator-hour"
    ),
    Flag(
        flag="--price-range",
        quantity="price_range_pct",
        help="uncertainty of the price per accelerator-hour, P90 / P50 - 1, e.g. 10%",
    ),
    Flag(flag="--watts", quantity="watts_per_accelerator", help="W per accelerator"),
    Flag(
        flag="--server-overhead",
        quantity="server_overhead",
        help="server power / accelerator power",
    ),
    Flag(flag="--pue", quantity="pue", help="data-centre PUE"),
    Flag(flag="--usd-per-kwh", quantity="usd_per_kwh", help="electricity price, US$/kWh"),
    Flag(
        flag="--grams-co2-per-kwh",
        quantity="grams_co2_per_kwh",
        help="grid carbon intensity, gCO2/kWh",
    ),
    Flag(
        flag="--checkpoint-bytes-per-param",
        quantity="checkpoint_bytes_per_param",
        help="2 = BF16 weights only",
    ),
    Flag(
        flag="--failures-per-accelerator-day",
        quantity="failures_per_accelerator_day",
        help="failure rate; derives goodput from Young/Daly checkpointing",
    ),
    Flag(
        flag="--failures-per-1000-node-days",
        quantity="failures_per_1000_node_days",
        help="failure rate per 1,000 node-days instead (Meta RSC: 2.34 and 6.50)",
    ),
    Flag(
        flag="--accelerators-per-node",
        quantity="accelerators_per_node",
        help="for the node-day rate",
    ),
    Flag(
        flag="--checkpoint-write-minutes",
        quantity="checkpoint_write_minutes",
        help="stall per checkpoint",
    ),
    Flag(flag="--restart-minutes", quantity="restart_minutes", help="failure to training again"),
    Flag(
        flag="--global-batch-tokens",
        quantity="global_batch_tokens",
        help="tokens per step, at most the training tokens; enables sub-linear scaling",
    ),
    Flag(
        flag="--tensor-parallel",
        quantity="tensor_parallel",
        help="tensor-parallel degree (scaling model)",
    ),
    Flag(
        flag="--pipeline-parallel",
        quantity="pipeline_parallel",
        help="pipeline-parallel degree (scaling model)",
    ),
    Flag(
        flag="--sequence-tokens",
        quantity="sequence_tokens",
        help="sequence length in tokens (scaling model)",
    ),
    Flag(
        flag="--pipeline-interleave", quantity="pipeline_interleave", help="virtual pipeline stages"
    ),
    Flag(
        flag="--interconnect-gb-per-s",
        quantity="interconnect_gb_per_s",
        help="scale-out GB/s per accelerator",
    ),
    Flag(flag="--comm-overlap", quantity="comm_overlap", help="share of all-reduce hidden"),
    Flag(flag="--hbm-gb", quantity="hbm_gb", help="HBM per accelerator, GB"),
    Flag(
        flag="--training-state-bytes-per-param",
        quantity="training_state_bytes_per_param",
        help="16 = mixed-precision Adam",
    ),
    Flag(
        flag="--purchase-usd-per-accelerator",
        quantity="purchase_usd_per_accelerator",
        help="owned hardware: capital cost per accelerator (instead of --usd-per-hour)",
    ),
    Flag(flag="--amortisation-years", quantity="amortisation_years", help="owned hardware: years"),
    Flag(flag="--utilisation", quantity="utilisation", help="owned hardware: busy share"),
    Flag(
        flag="--other-costs-usd",
        quantity="other_costs_usd",
        help="other costs added to the total, US$",
    ),
)

#: The DeepSeek-V3-like example plan of the original linear model: its printed output
#: (SEED_OUTPUT_LINES) is the contract ``compute-lab estimate`` reproduces.
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

#: The original linear model's printed output for SEED_PLAN, verbatim.
SEED_OUTPUT_LINES = (
    "Training FLOPs: 3.286e+24",
    "Accelerator-hours: 2,281,667",
    "Wall-clock at 2048 accelerators: 46.4 days",
    "BF16 checkpoint: 1342.0 GB",
    "Rental-equivalent cost: $4,563,333",
    "Accelerator electricity: 1,597,167 kWh",
)
