"""The planner's scenario columns: the references, the DeepSeek-V3-like example, custom."""

from __future__ import annotations

import datetime as _dt

from udfs import calibration, catalogue
from udfs.plan import RULES
from udfs.quantities import PLAN_INPUTS, SEED_PLAN

from .layout import N_CUSTOM, blank_if_nan


def _start_default(generated):
    """First day of the month after ``generated``: the default run start date."""
    year, month = generated.year + generated.month // 12, generated.month % 12 + 1
    return _dt.datetime(year, month, 1)


def _defaults(generated):
    """The values a new column starts from (RULES' fixed defaults; power left blank)."""
    defaults = {q.name: q.default for q in PLAN_INPUTS if q.default is not None}
    # a blank MFU takes the calibrated default (by accelerator and size): left blank, as are
    # the throughput uncertainty (calibrated, else 0) and the budget status (Proposed)
    defaults["start_date"] = _start_default(generated)
    # Blank power: the accelerator's catalogue TDP (else 700 W), so that changing the
    # accelerator changes the power, as in udfs.plan.
    defaults.pop("watts_per_accelerator")
    return defaults


def _power_text(values, accel_name, tdp):
    if tdp is None:
        return (
            f"{values['watts_per_accelerator']:,.0f} W assumed: the "
            f"{accel_name.split()[0]}'s TDP is not published."
        )
    return f"Power {values['watts_per_accelerator']:,.0f} W, the {accel_name}'s TDP."


def _reference(run_name, kind, arch, defaults, ref):
    """A reference column: a disclosed run, with the MFU that reproduces its hours."""
    r = catalogue.run(run_name)
    values = dict(defaults)
    values.update(
        scenario_name=f"{r['name']} ({arch} reference)",
        budget_status="Reference",
        total_params=float(r["total_params"]),
        active_params=float(r["active_params"]),
        training_tokens=float(r["training_tokens"]),
        accelerators=float(r["accelerators"]),
        accelerator_name=r["accelerator"],
        mfu=float(ref.loc[r["name"], "implied_mfu"]),
        throughput_range_pct=0.0,  # a disclosed run: its hours are known, not estimated
    )
    for field in ("usd_per_accelerator_hour", "watts_per_accelerator"):
        if blank_if_nan(r[field]) is not None:
            values[field] = float(r[field])
    # The references keep a typed power figure (what the sources say, or the 700 W the
    # engine assumes when the accelerator's TDP is unpublished).
    tdp = blank_if_nan(catalogue.accelerator(r["accelerator"])["tdp_watts"])
    if "watts_per_accelerator" not in values:
        fallback = RULES["watts_per_accelerator"].default
        values["watts_per_accelerator"] = float(tdp) if tdp is not None else fallback
    sources = dict.fromkeys(
        catalogue.source("run", r["name"], f)
        for f in ("total_params", "training_tokens", "accelerator", "accelerators")
    )
    note = (
        f"{r['name']}: parameters, tokens, accelerator and count from "
        f"{'; '.join(sources)}; MFU is the implied MFU "
        f"({values['mfu']:.4f}) that reproduces the disclosed "
        f"{r['accelerator_hours']:,.0f} accelerator-hours "
        f"({catalogue.source('run', r['name'], 'accelerator_hours')}), so its throughput "
        "uncertainty is typed as 0%. "
        f"{_power_text(values, r['accelerator'], tdp)} Price, "
        "overhead, PUE, electricity price, grid intensity and start date are the planner's "
        "defaults unless the run disclosed them."
    )
    return {"kind": kind, "values": values, "note": note}


def _example(defaults):
    """The DeepSeek-V3-like example column (its six printed figures)."""
    seed = dict(defaults)
    seed.pop("goodput")
    seed.update(
        scenario_name=SEED_PLAN["scenario_name"],
        budget_status="Reference",
        total_params=SEED_PLAN["total_params"],
        active_params=SEED_PLAN["active_params"],
        training_tokens=SEED_PLAN["training_tokens"],
        accelerators=float(SEED_PLAN["accelerators"]),
        accelerator_name="H800 SXM",
        effective_tflops_input=SEED_PLAN["effective_tflops"],
        usd_per_accelerator_hour=SEED_PLAN["usd_per_accelerator_hour"],
        watts_per_accelerator=SEED_PLAN["watts_per_accelerator"],
        server_overhead=1.0,
        pue=1.0,
    )
    return {
        "kind": "Example",
        "values": seed,
        "note": "The DeepSeek-V3-like example plan (Compute Lab methodology): 400 sustained "
        "TFLOP/s typed as an override, $2.0/hour, 700 W, no server overhead, PUE 1; it gives "
        "3.286e+24 FLOPs, 2,281,667 accelerator-hours, 46.4 days, 1342.0 GB, $4,563,333 and "
        "1,597,167 kWh. The accelerator only sets the HBM for the memory check.",
    }


def scenarios(generated):
    """The planner's scenario columns: a list of dicts (kind, values, source note)."""
    ref = calibration.reference_table()
    defaults = _defaults(generated)
    out = [
        _reference("Llama 3.1 405B", "Dense reference", "dense", defaults, ref),
        _reference("DeepSeek-V3", "MoE reference", "MoE", defaults, ref),
        _example(defaults),
    ]
    for i in range(1, N_CUSTOM + 1):
        out.append({"kind": "Custom", "values": custom_start(i), "note": None})
    return out


#: The one input a custom column starts with besides its name: the accelerator, a choice from
#: the list (a blank accelerator means none, so the peak would have to be typed).
CUSTOM_START = {"accelerator_name": "H100 SXM"}


def custom_start(i):
    """What custom column ``i`` (1-5) holds before a user types: its name and the accelerator.

    Every other input starts blank, so a default is never mistaken for a team's figure: the
    value a blank takes is in Inputs column C and shows greyed on Calculations (issue 18).
    """
    return {"scenario_name": f"Custom {i}", **CUSTOM_START}
