"""One plan resolution: a partly given plan turned into the engine's arguments, with notes.

A plan is a mapping of the input names in :data:`udfs.quantities.PLAN_INPUTS` to values, a
blank input being None or "" (:func:`udfs.validation.is_blank`). :func:`resolve` fills every
blank from one rule table, :data:`RULES`, and returns the engine arguments together with one
:class:`Note` per default it applied (the input, the value used and why). The same table
gives the planner workbook its "Used when blank" column and its "as used" formulas
(``workbook_templates.planner``), so a default is changed in one place:

- ``active_params`` blank: the model is dense, active = total;
- ``effective_tflops_input`` typed: the sustained throughput, used as is; otherwise
  ``peak_tflops x mfu x goodput``, where a blank ``peak_tflops`` is the catalogue's BF16 peak
  of ``accelerator_name``, a blank ``mfu`` is :func:`udfs.calibration.default_mfu` and a blank
  ``goodput`` is 1;
- ``hbm_gb`` (for the memory fit) comes from the catalogue accelerator, when there is one;
- ``watts_per_accelerator`` blank is the catalogue accelerator's TDP where published, else
  700 W (the H100 SXM's TDP);
- ``usd_per_kwh`` blank: electricity is priced at US$0.08/kWh (never left unpriced);
- any other blank input takes its ``PLAN_INPUTS`` default.

Examples
--------
>>> r = resolve({"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024,
...              "accelerator_name": "H100 SXM"})
>>> r.arguments["watts_per_accelerator"], r.arguments["usd_per_kwh"]
(700.0, 0.08)
>>> print(r.notes[-3].text())
usd_per_kwh = 0.08: blank: electricity priced at the default US$0.08/kWh
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import calibration, catalogue, engine
from .quantities import PLAN_INPUTS
from .validation import InputError, is_blank

__all__ = [
    "Note",
    "Rule",
    "Resolved",
    "RULES",
    "REQUIRED",
    "PASS_THROUGH",
    "resolve",
    "engine_arguments",
    "estimate_scenario",
]

REQUIRED = tuple(q.name for q in PLAN_INPUTS if q.required)
_Q = {q.name: q for q in PLAN_INPUTS}

#: Inputs handed to the engine under the same name, defaulted from PLAN_INPUTS when blank.
PASS_THROUGH = (
    "usd_per_accelerator_hour",
    "watts_per_accelerator",
    "server_overhead",
    "pue",
    "usd_per_kwh",
    "grams_co2_per_kwh",
    "checkpoint_bytes_per_param",
)


@dataclass(frozen=True)
class Note:
    """A default applied to a blank input: the input's name, the value used, and why."""

    name: str
    value: object
    why: str

    def text(self):
        """One line for a person: ``usd_per_kwh = 0.08: blank: ...``."""
        value = f"{self.value:.4g}" if isinstance(self.value, float) else self.value
        return f"{self.name} = {value}: {self.why}"


@dataclass(frozen=True)
class Rule:
    """How one blank input is resolved, on every face.

    Attributes
    ----------
    name : str
        The input (a ``PLAN_INPUTS`` name).
    default : float or None
        The fixed default, shown in the planner's "Used when blank" column; None when the
        blank value depends on the plan (``blank_text`` says how).
    blank_text : str
        What a blank means, in the planner's column C when there is no fixed default.
    excel_blank : str
        Excel formula text (``{name}`` placeholders) of the value a blank takes; ``{default}``
        stands for the default cell.
    sheet_note : str
        The planner's note beside the "as used" row.
    """

    name: str
    default: float | None = None
    blank_text: str = ""
    excel_blank: str = "{default}"
    sheet_note: str = "Input, or column C of Inputs when blank"

    def excel_used(self, default_ref):
        """Excel text of the value used: the typed number, else the blank rule."""
        blank = self.excel_blank.replace("{default}", default_ref)
        return f"IF(ISNUMBER({{{self.name}}}),{{{self.name}}},{blank})"


_TDP = "INDEX(accel_tdp_watts,{catalogue_row})"


def _rules():
    watts = float(_Q["watts_per_accelerator"].default)
    rules = [
        Rule("active_params", None, "= total (dense)", "{total_params_used}",
             "Blank: dense, = total parameters"),
        Rule("peak_tflops", None, "catalogue",
             'IF({catalogue_row}>0,INDEX(accel_bf16_tflops,{catalogue_row}),"")',
             "Typed, or the catalogue's dense BF16 peak"),
        Rule("mfu", calibration.default_mfu(), sheet_note="Typed, or the default MFU (median "
             "implied MFU of the reference runs)"),
        Rule("goodput", float(_Q["goodput"].default)),
        Rule("watts_per_accelerator", watts, "",
             f"IF({{catalogue_row}}>0,IF(ISNUMBER({_TDP}),{_TDP},{{default}}),{{default}})",
             f"Typed, or the accelerator's TDP (Accelerators sheet), else {watts:,.0f} W"),
    ]  # fmt: skip
    rules += [Rule(n, float(_Q[n].default)) for n in PASS_THROUGH if n != "watts_per_accelerator"]
    rules += [
        Rule(
            "effective_tflops_input", None, "peak x MFU x goodput", '""', "When typed, used as is"
        ),
        Rule("accelerator_name", None, "none"),
        Rule("start_date", None, "no schedule"),
    ]
    return {r.name: r for r in rules}


#: Input name -> its blank rule.
RULES = _rules()


@dataclass
class Resolved:
    """Engine keyword arguments for :func:`udfs.engine.estimate`, and the defaults applied."""

    arguments: dict
    notes: list = field(default_factory=list)


def _why(name, value, accel, precision="bf16"):
    """Why a blank ``name`` took ``value`` (``accel`` is the catalogue row or None)."""
    if name == "active_params":
        return "blank: dense, = total parameters"
    if name == "peak_tflops":
        return f"blank: the {accel['name']}'s dense {precision.upper()} peak from the catalogue"
    if name == "mfu":
        return "blank: the median implied MFU of the catalogue's disclosed runs"
    if name == "watts_per_accelerator" and accel is not None:
        if is_blank(accel["tdp_watts"]):
            return f"blank: {value:,.0f} W assumed (the {accel['name']}'s TDP is not published)"
        return f"blank: the {accel['name']}'s TDP from the catalogue"
    if name == "watts_per_accelerator":
        return f"blank: {value:,.0f} W, the H100 SXM's TDP"
    if name == "usd_per_kwh":
        return f"blank: electricity priced at the default US${value:g}/kWh"
    unit = _Q[name].unit
    shown = f" {unit}" if unit not in ("", "fraction", "ratio") else ""
    return f"blank: the default {value:g}{shown}"


def _accelerator(inputs, kwargs):
    name = inputs.get("accelerator_name")
    if is_blank(name):
        return None
    accel = catalogue.accelerator(name, argument="accelerator_name")
    if not math.isnan(accel["hbm_gb"]):
        kwargs["hbm_gb"] = float(accel["hbm_gb"])
    return accel


def _blank_value(name, kwargs, accel, precision="bf16"):
    """The value a blank ``name`` takes (RULES, with the plan and the catalogue row)."""
    if name == "active_params":
        return kwargs["total_params"]
    if name == "peak_tflops":
        column = f"{precision}_tflops"
        if accel is None or math.isnan(accel[column]):
            raise InputError(
                "peak_tflops",
                "is required when effective_tflops_input is blank and accelerator_name "
                f"has no catalogue {precision.upper()} peak",
            )
        return float(accel[column])
    if name == "watts_per_accelerator" and accel is not None:
        if not math.isnan(accel["tdp_watts"]):
            return float(accel["tdp_watts"])
    return RULES[name].default


def resolve(inputs, precision="bf16"):
    """Engine arguments for one plan, and a :class:`Note` for every default applied.

    Parameters
    ----------
    inputs : mapping
        Input name (as in ``PLAN_INPUTS``) to value; blank cells are None or "".
    precision : {"bf16", "fp8"}
        Which catalogue peak a blank ``peak_tflops`` takes (the planner: always BF16).

    Returns
    -------
    Resolved
        ``arguments`` for :func:`udfs.engine.estimate`; ``notes`` in input order.

    Raises
    ------
    InputError
        A required input is blank, or a catalogue name is unknown (``argument`` is the input
        name, so a face can point at the cell).
    """
    for name in REQUIRED:
        if is_blank(inputs.get(name)):
            raise InputError(name, "is required (the cell is blank)")
    kwargs = {n: inputs[n] for n in ("total_params", "training_tokens", "accelerators")}
    notes = []
    accel = _accelerator(inputs, kwargs)

    def use(name, into=None):
        value = inputs.get(name)
        if is_blank(value):
            value = _blank_value(name, kwargs, accel, precision)
            notes.append(Note(name, value, _why(name, value, accel, precision)))
        kwargs[into or name] = value

    use("active_params")
    if not is_blank(inputs.get("effective_tflops_input")):
        kwargs["effective_tflops"] = inputs["effective_tflops_input"]
    else:
        for name in ("peak_tflops", "mfu", "goodput"):
            use(name)
    for name in PASS_THROUGH:
        use(name)
    return Resolved(kwargs, notes)


def engine_arguments(inputs):
    """Keyword arguments for :func:`udfs.engine.estimate` from one scenario's inputs.

    ``resolve(inputs).arguments``; see :func:`resolve`.
    """
    return resolve(inputs).arguments


def estimate_scenario(inputs):
    """Every engine output for one scenario's inputs (see :func:`resolve`).

    Examples
    --------
    >>> r = estimate_scenario({"total_params": 671e9, "active_params": 37e9,
    ...     "training_tokens": 14.8e12, "accelerators": 2048, "effective_tflops_input": 400,
    ...     "usd_per_accelerator_hour": 2.0, "watts_per_accelerator": 700})
    >>> round(r["rental_cost_usd"])
    4563333
    """
    return engine.estimate(**engine_arguments(inputs))
