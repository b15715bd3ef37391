"""One plan resolution: a partly given plan turned into the engine's arguments, with notes.

A plan is a mapping of the input names in :data:`udfs.quantities.PLAN_INPUTS` to values, a
blank input being None or "" (:func:`udfs.validation.is_blank`). :func:`resolve` fills every
blank from one rule table, :data:`RULES`, and returns the engine arguments together with one
:class:`Note` per default it applied (the input, the value used and why). The same table
gives the planner workbook its "Used when blank" column and its "as used" formulas
(``workbook_templates.planner``), so a default is changed in one place. Each rule computes
the value a blank takes (:meth:`Rule.blank_value`, on one plan's numbers or on arrays of plans)
and says why (:meth:`Rule.why`); :func:`resolve` (one plan, with notes) and
:func:`resolve_many` (arrays of plans) ask the same rules:

- ``active_params`` blank: the model is dense, active = total;
- ``effective_tflops_input`` typed: the sustained throughput, used as is; otherwise
  ``peak_tflops x mfu x goodput``, where a blank ``peak_tflops`` is the catalogue's BF16 peak
  of ``accelerator_name``, a blank ``mfu`` is the calibrated default
  (:func:`udfs.calibration.predicted_mfu`: by the accelerator's generation and the active
  parameters, the spec's ``calibrated_mfu``) and a blank ``goodput`` is 1;
- ``throughput_range_pct`` blank: the calibrated spread of the plan
  (:func:`udfs.calibration.default_range_pct`: wider for a small model and for an
  accelerator outside the calibrated generations), with the calibrated default MFU and with a
  typed MFU or throughput alike (a typed number is an estimate too; the team types its own
  range to change the spread); ``price_range_pct`` blank: 0;
- ``budget_status`` blank: counts as "Proposed"; ``owner`` blank: none; ``run_code`` blank:
  derived by the hand-off from the owner and the scenario name;
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

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from . import catalogue, engine, model
from .engine import Plan
from .quantities import BUDGET_STATUSES, PLAN_INPUTS, PRICING_BASES
from .validation import InputError, is_blank

__all__ = [
    "Plan",
    "Note",
    "Rule",
    "Accelerator",
    "Resolved",
    "RULES",  # noqa: F822 (built on first use: __getattr__)
    "RULE_DEFAULTS",
    "RULE_BLANK_TEXT",
    "REQUIRED",
    "PASS_THROUGH",
    "THROUGHPUT_SOURCES",
    "THROUGHPUT_SOURCE_EXCEL",
    "CALIBRATED_MFU_EXCEL",
    "OWN_RUNS_MFU_EXCEL",
    "CALIBRATED_RANGE_EXCEL",
    "resolve",
    "resolve_many",
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


#: Where a plan's throughput comes from (``Resolved.throughput_source``).
THROUGHPUT_SOURCES = ("typed throughput", "typed MFU", "calibrated default")
#: The same in Excel formula text over the planner's inputs.
THROUGHPUT_SOURCE_EXCEL = (
    f'IF(ISNUMBER({{effective_tflops_input}}),"{THROUGHPUT_SOURCES[0]}",'
    f'IF(ISNUMBER({{mfu}}),"{THROUGHPUT_SOURCES[1]}","{THROUGHPUT_SOURCES[2]}"))'
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
    text : bool
        A text input: typed means not empty (else a number).
    """

    name: str
    default: float | None = None
    blank_text: str = ""
    excel_blank: str = "{default}"
    sheet_note: str = "Input, or column C of Inputs when blank"
    text: bool = False

    def excel_used(self, default_ref):
        """Excel text of the value used: the typed value, else the blank rule."""
        blank = self.excel_blank.replace("{default}", default_ref)
        typed = f"LEN({{{self.name}}})>0" if self.text else f"ISNUMBER({{{self.name}}})"
        return f"IF({typed},{{{self.name}}},{blank})"

    def blank_value(self, used, accel):
        """The value a blank takes (a float, or an array over many plans): the fixed default.

        ``used``: the plan's inputs resolved so far (``total_params``, then
        ``active_params``); ``accel``: the :class:`Accelerator` figures of the plan."""
        return self.default

    def why(self, value, used, accel):
        """Why a blank took ``value``, for one plan's :class:`Note`."""
        unit = _Q[self.name].unit
        shown = f" {unit}" if unit not in ("", "fraction", "ratio") else ""
        return f"blank: the default {value:g}{shown}"

    def refuse_missing(self, value, accel):
        """Raise when one plan's blank value is missing (the default: nothing is missing)."""


@dataclass(frozen=True)
class Accelerator:
    """The catalogue figures a blank input may take, of one plan's accelerator (floats) or of
    many plans' (arrays over the plans): NaN where the catalogue has no figure.

    ``name`` and ``generation`` (the calibrated one, or "other") are for one plan's notes;
    ``name`` is None when no accelerator is named. ``peak_tflops`` is at ``precision``."""

    name: str | None
    generation: str
    peak_tflops: float | np.ndarray
    tdp_watts: float | np.ndarray
    hbm_gb: float | np.ndarray
    mfu_ln_intercept: float | np.ndarray
    precision: str = "bf16"


class _DenseRule(Rule):
    """A blank ``active_params``: the model is dense, active = total."""

    def blank_value(self, used, accel):
        return used["total_params"]

    def why(self, value, used, accel):
        return "blank: dense, = total parameters"


class _CataloguePeakRule(Rule):
    """A blank ``peak_tflops``: the catalogue peak of the accelerator at the precision."""

    def blank_value(self, used, accel):
        return accel.peak_tflops

    def refuse_missing(self, value, accel):
        if math.isnan(value):
            raise InputError(
                "peak_tflops",
                "is required when effective_tflops_input is blank and accelerator_name "
                f"has no catalogue {accel.precision.upper()} peak",
            )

    def why(self, value, used, accel):
        return f"blank: the {accel.name}'s dense {accel.precision.upper()} peak from the catalogue"


class _CalibratedMfuRule(Rule):
    """A blank ``mfu``: the calibrated default for the accelerator's generation and the
    active parameters (the spec's ``calibrated_mfu``)."""

    def blank_value(self, used, accel):
        mfu_model = _calibration().default_mfu_model()
        return mfu_model.predict_from_intercept(accel.mfu_ln_intercept, used["active_params"])

    def why(self, value, used, accel):
        size = f"at {used['active_params'] / 1e9:,.4g}B active parameters"
        if accel.generation != "other":
            return f"blank: the calibrated default for the {accel.generation} generation {size}"
        why = "no accelerator named" if accel.name is None else f"the {accel.name} is uncalibrated"
        return f"blank: the calibrated default of the 'other' generation ({why}) {size}"


class _TdpRule(Rule):
    """A blank ``watts_per_accelerator``: the accelerator's TDP where published, else the
    default."""

    def blank_value(self, used, accel):
        tdp = accel.tdp_watts
        value = np.where(np.isnan(tdp), self.default, tdp)
        return float(value) if value.ndim == 0 else value

    def why(self, value, used, accel):
        if accel.name is None:
            return f"blank: {value:,.0f} W, the H100 SXM's TDP"
        if math.isnan(accel.tdp_watts):
            return f"blank: {value:,.0f} W assumed (the {accel.name}'s TDP is not published)"
        return f"blank: the {accel.name}'s TDP from the catalogue"


class _StatusRule(Rule):
    """A blank ``budget_status``: counts as Proposed."""

    def blank_value(self, used, accel):
        return "Proposed"

    def why(self, value, used, accel):
        return "blank: counts as Proposed"


class _ElectricityPriceRule(Rule):
    """A blank ``usd_per_kwh``: electricity priced at the default (never left unpriced)."""

    def why(self, value, used, accel):
        return f"blank: electricity priced at the default US${value:g}/kWh"


class _ExactPriceRule(Rule):
    """A blank ``price_range_pct``: 0, the price taken as exact."""

    def why(self, value, used, accel):
        return "blank: 0, the price is taken as exact"


_TDP = "INDEX(accel_tdp_watts,{catalogue_row},1)"
#: Excel text of the blank MFU: the spec's calibrated_mfu over the accelerator's intercept
#: (Accelerators sheet, ``accel_mfu_intercept``; the "other" one without a catalogue row).
_MFU_BLANK = model.excel(
    "calibrated_mfu",
    bind={
        "mfu_ln_intercept": "IF({catalogue_row}>0,INDEX(accel_mfu_intercept,{catalogue_row},1),"
        "{mfu_ln_intercept_other})",
        "active_params": "{active_params_used}",
    },
    through=("calibrated_mfu_raw",),
)

#: Excel text of the calibrated default MFU of a column (placeholders as in the rules), for
#: the planner check of a typed MFU against the calibrated P90 MFU.
CALIBRATED_MFU_EXCEL = _MFU_BLANK
#: Excel text of the calibrated spread (P90 / P50 - 1) of a column: the spec's
#: calibrated_range_pct, wider for a small model and an accelerator outside the calibrated
#: generations (Accelerators sheet, ``accel_sigma_extra``; the 'other' one without a row).
_RANGE_BIND = {
    "active_params": "{active_params_used}",
    "accelerator_extra_sigma": "IF({catalogue_row}>0,INDEX(accel_sigma_extra,"
    "{catalogue_row},1),{accelerator_extra_sigma_other})",
}
CALIBRATED_RANGE_EXCEL = model.excel(
    "calibrated_range_pct", through=("calibrated_plan_sigma", "small_model"), bind=_RANGE_BIND
)

#: The planner's own-runs pooling ("Our runs" sheet, workbook_templates.planner.own_runs), as
#: udfs.own_runs.own_runs_pull: each run in the plan's pooling group weighs
#: EXP(-|LN(its active / the plan's)| / own_runs_size_h); the weighted sum of their residuals
#: over (their summed weight n_w + k) is the plan's ln-MFU shift, n_w / (n_w + k) its pull. The
#: runs of a calibrated generation share its intercept (and accelerator group 0); an
#: accelerator outside those generations has the 'other' intercept and is a group of its own
#: (its catalogue row; a plan on no catalogue accelerator matches no run). The Our runs
#: columns ``own_runs_ln_active`` and ``own_runs_counted_residual`` are 0 on a row that does
#: not count (SUMPRODUCT takes no blank in a product). The weight is written with operators
#: only, EXP(-1/h)^|difference| with |d| as ((d)^2)^0.5: inside SUMPRODUCT Gnumeric gives a
#: function of a range (EXP, ABS) one cell of it, and every engine takes operators on arrays.
_OWN_GROUP = "IF({mfu_ln_intercept_used}={mfu_ln_intercept_other},{catalogue_row},0)"
_OWN_WEIGHTS = (
    "(own_runs_intercept={mfu_ln_intercept_used})"
    f"*(own_runs_accelerator_group={_OWN_GROUP})"
    "*EXP(-1/own_runs_size_h)"
    "^(((own_runs_ln_active-LN({active_params_used}))^2)^0.5)"
)
_OWN_SUM = f"SUMPRODUCT({_OWN_WEIGHTS}*own_runs_counted_residual)"
_OWN_N = f"SUMPRODUCT({_OWN_WEIGHTS})"
#: Excel text of the default MFU moved toward the team's runs (the planner's Calculations row
#: ``own_runs_mfu``, which a blank MFU takes).
OWN_RUNS_MFU_EXCEL = (
    "IF(ISNUMBER({calibrated_mfu}),MIN({mfu_max},MAX({mfu_min},{calibrated_mfu}"
    f'*EXP({_OWN_SUM}/({_OWN_N}+own_runs_k)))),"")'
)
#: The spread narrowed by the runs: the spec's ``own_runs_plan_sigma`` (udfs.own_runs.OwnRuns
#: .sigma), the pull n_w / (n_w + k) of the runs in the plan's pooling group.
_OWN_SIGMA = model.excel(
    "own_runs_plan_sigma",
    bind={
        **_RANGE_BIND,
        "own_runs_pull": f"{_OWN_N}/({_OWN_N}+own_runs_k)",
        **{n: n for n in ("own_runs_base_narrowing", "own_runs_small_narrowing")},
    },
    through=("small_model", "own_runs_narrowest_sigma"),
)
_OWN_RANGE = model.excel("calibrated_range_pct", bind={"calibrated_plan_sigma": _OWN_SIGMA})


@functools.cache
def _calibration():
    """:mod:`udfs.calibration`, imported when a plan is resolved (the calibrated MFU and
    spread, from the stored fitted numbers: no fit, no pandas); importing this module, or
    reading :data:`RULE_DEFAULTS`, does not import it."""
    from . import calibration

    return calibration


def _record_rules():
    """The rules of the plan's record fields (status, owner, run code, approval, accounts):
    text or a date kept as typed, blank when not."""
    return [
        _StatusRule(
            "budget_status",
            None,
            "Proposed",
            '""',
            "Typed, or Proposed in a filled column",
            text=True,
        ),
        Rule("owner", None, "none", '""', "Typed, or none", text=True),
        Rule(
            "run_code",
            None,
            "OWNER-SCENARIO",
            '""',
            "Typed, or the hand-off derives it from the owner and the scenario name",
            text=True,
        ),
        Rule("approval_ref", None, "none", '""', "Typed, or none", text=True),
        Rule("approval_date", None, "none", '""', "Typed, or none"),
        Rule("approver", None, "none", '""', "Typed, or none", text=True),
        Rule("approved_amount_usd", None, "none", '""', "Typed, or none"),
        Rule("cost_centre", None, "none", '""', "Typed, or none", text=True),
        Rule("gl_account", None, "none", '""', "Typed, or none", text=True),
    ]


def _rules(spread=None):
    """The rule table; ``spread`` (the calibrated throughput spread, shown in a rule's text)
    is computed when not given."""
    watts = float(_Q["watts_per_accelerator"].default)
    if spread is None:
        spread = _calibration().default_range_pct()
    rules = [
        *_record_rules(),
        _DenseRule(
            "active_params",
            None,
            "= total (dense)",
            "{total_params_used}",
            "Blank: dense, = total parameters",
        ),
        _CataloguePeakRule(
            "peak_tflops",
            None,
            "catalogue",
            'IF({catalogue_row}>0,INDEX(accel_bf16_tflops,{catalogue_row},1),"")',
            "Typed, or the catalogue's dense BF16 peak",
        ),
        _CalibratedMfuRule(
            "mfu",
            None,
            "calibrated",
            "{own_runs_mfu}",
            "Typed, or the calibrated default for the accelerator's generation and the active "
            "parameters (Accelerators sheet), moved toward your runs on that generation (an "
            "uncalibrated accelerator: on it) within the default's bounds (Our runs sheet)",
        ),
        Rule("goodput", float(_Q["goodput"].default)),
        _TdpRule(
            "watts_per_accelerator",
            watts,
            "",
            f"IF({{catalogue_row}}>0,IF(ISNUMBER({_TDP}),{_TDP},{{default}}),{{default}})",
            f"Typed, or the accelerator's TDP (Accelerators sheet), else {watts:,.0f} W",
        ),
    ]
    kind = {"usd_per_kwh": _ElectricityPriceRule}  # the others: Rule, a fixed default
    rules += [
        kind.get(n, Rule)(n, float(_Q[n].default))
        for n in PASS_THROUGH
        if n != "watts_per_accelerator"
    ]
    rules += [
        Rule(
            "effective_tflops_input", None, "peak x MFU x goodput", '""', "When typed, used as is"
        ),
        Rule(
            "throughput_range_pct",
            None,
            "calibrated",
            f'IF(ISNUMBER({{active_params_used}}),{_OWN_RANGE},"")',
            f"Typed (your own P90 / P50 - 1), or the calibrated spread ({spread:.1%}; wider for "
            "a small model or an uncalibrated accelerator), also with a typed MFU or "
            "throughput: a typed number is an estimate too",
        ),
        _ExactPriceRule("price_range_pct", float(_Q["price_range_pct"].default)),
        Rule(
            "pricing_basis",
            None,
            PRICING_BASES[1],
            f'"{PRICING_BASES[1]}"',
            f"Typed, or {PRICING_BASES[1]} (electricity added)",
            text=True,
        ),
        Rule("other_costs_usd", float(_Q["other_costs_usd"].default)),
        Rule("accelerator_name", None, "none"),
        Rule("start_date", None, "no schedule"),
    ]
    return {r.name: r for r in rules}


_LIGHT_RULES = _rules(spread=0.0)  # the table but for one note's figure (no calibration)
#: Input name -> the fixed default a blank takes (:data:`RULES`' ``default``); available
#: without the calibration, which :data:`RULES`' notes need (RULES is built on first use).
RULE_DEFAULTS = {name: rule.default for name, rule in _LIGHT_RULES.items()}
#: Input name -> what a blank means in words (:data:`RULES`' ``blank_text``), likewise.
RULE_BLANK_TEXT = {name: rule.blank_text for name, rule in _LIGHT_RULES.items()}


def __getattr__(name):
    """``RULES`` (input name -> its blank rule), built on first use (PEP 562)."""
    if name == "RULES":
        globals()["RULES"] = rules = _rules()
        return rules
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass
class Resolved:
    """One plan, resolved: the engine's :class:`~udfs.engine.Plan`, and the defaults applied.

    Attributes
    ----------
    plan : udfs.engine.Plan
        The frozen record :func:`udfs.engine.estimate` takes.
    arguments : dict
        The same inputs as keyword arguments (those set; the others take the engine's
        defaults).
    notes : list of Note
        One per blank input that took a default, in input order.
    throughput_source : str
        One of :data:`THROUGHPUT_SOURCES`.
    throughput_sigma, price_sigma : float
        The spreads (ln units) for :func:`udfs.ranges.estimate_ranges`, from the
        ``throughput_range_pct`` and ``price_range_pct`` used (the spec's formulas).
    budget_status : str
        One of :data:`udfs.quantities.BUDGET_STATUSES` ("Proposed" when blank).
    """

    plan: Plan
    arguments: dict
    notes: list = field(default_factory=list)
    throughput_source: str = THROUGHPUT_SOURCES[2]
    throughput_sigma: float = 0.0
    price_sigma: float = 0.0
    budget_status: str = "Proposed"


def _accelerator_of(name, precision="bf16"):
    """The :class:`Accelerator` of one plan: the catalogue figures of the accelerator named
    (``precision`` chooses the peak), or none."""
    intercepts = _calibration().default_mfu_model().intercepts
    if is_blank(name):
        nan = math.nan
        return Accelerator(None, "other", nan, nan, nan, intercepts["other"], precision)
    record = catalogue.accelerator_record(name, argument="accelerator_name")
    generation = _calibration().generation_of(record["name"])
    return Accelerator(
        record["name"],
        generation,
        float(record[f"{precision}_tflops"]),
        float(record["tdp_watts"]),
        float(record["hbm_gb"]),
        intercepts[generation],
        precision,
    )


def _typed_or_blank(name, inputs, used, accel, notes=None):
    """The typed value of input ``name``, else the value its rule gives a blank (for one plan,
    ``notes`` given: checked, with a :class:`Note` appended saying why)."""
    value = inputs.get(name)
    if not is_blank(value):
        return value
    rule = _LIGHT_RULES[name]
    value = rule.blank_value(used, accel)
    if notes is not None:
        rule.refuse_missing(value, accel)
        notes.append(Note(name, value, rule.why(value, used, accel)))
    return value


def resolve(inputs, precision="bf16", own_runs=None, engine_inputs=None):
    """The engine's :class:`~udfs.engine.Plan` for one plan, and a :class:`Note` for every
    default applied.

    Parameters
    ----------
    inputs : mapping
        Input name (as in ``PLAN_INPUTS``) to value; blank cells are None or "".
    precision : {"bf16", "fp8"}
        Which catalogue peak a blank ``peak_tflops`` takes (the planner: always BF16).
    own_runs : udfs.own_runs.OwnRuns or None
        A team's own runs: a blank MFU and a blank throughput uncertainty are pulled toward
        them (:mod:`udfs.own_runs`).
    engine_inputs : mapping, optional
        The engine's own inputs beyond the planner's (failures, scaling, ownership, memory,
        other costs: the command line's flags), by :class:`~udfs.engine.Plan` field name.
        A failure rate derives the goodput, so a blank goodput takes no default; a purchase
        price gives the hourly price, so the plan's price per accelerator-hour is left out.

    Returns
    -------
    Resolved
        ``plan`` for :func:`udfs.engine.estimate` (and the same as keyword ``arguments``);
        ``notes`` in input order;
        ``throughput_source``; ``throughput_sigma`` and ``price_sigma`` for
        :func:`udfs.ranges.estimate_ranges`; ``budget_status``.

    Raises
    ------
    InputError
        A required input is blank, a catalogue name is unknown, a budget status is not one of
        the four, or an uncertainty is not a number >= 0 (``argument`` is the input name, so
        a face can point at the cell).
    """
    for name in REQUIRED:
        if is_blank(inputs.get(name)):
            raise InputError(name, "is required (the cell is blank)")
    kwargs = {n: inputs[n] for n in ("total_params", "training_tokens", "accelerators")}
    accel = _accelerator_of(inputs.get("accelerator_name"), precision)
    if not math.isnan(accel.hbm_gb):
        kwargs["hbm_gb"] = accel.hbm_gb
    notes = []
    status = _budget_status(inputs.get("budget_status"))
    if status is None:
        status = _typed_or_blank("budget_status", inputs, kwargs, accel, notes)
    kwargs["active_params"] = _typed_or_blank("active_params", inputs, kwargs, accel, notes)
    if not is_blank(inputs.get("effective_tflops_input")):
        kwargs["effective_tflops"] = inputs["effective_tflops_input"]
        source = THROUGHPUT_SOURCES[0]
    else:
        source = THROUGHPUT_SOURCES[2] if is_blank(inputs.get("mfu")) else THROUGHPUT_SOURCES[1]
        for name in ("peak_tflops", "mfu", "goodput"):
            kwargs[name] = _typed_or_blank(name, inputs, kwargs, accel, notes)
        if own_runs is not None and source == THROUGHPUT_SOURCES[2]:  # pulled toward the runs
            (k,) = [k for k, note in enumerate(notes) if note.name == "mfu"]
            kwargs["mfu"], why = _own_runs_mfu(
                own_runs, accel.name, kwargs["active_params"], notes[k].why
            )
            notes[k] = Note("mfu", kwargs["mfu"], why)
    for name in PASS_THROUGH:
        kwargs[name] = _typed_or_blank(name, inputs, kwargs, accel, notes)
    _pricing(inputs, kwargs, notes)
    spreads = _spreads(inputs, kwargs, accel, notes, source, own_runs)
    notes.sort(key=lambda n: _ORDER[n.name])
    kwargs, notes = _with_engine_inputs(kwargs, notes, inputs, engine_inputs or {})
    sigmas = model.evaluate(spreads, ["throughput_sigma", "price_sigma"])
    return Resolved(
        Plan(**kwargs),
        kwargs,
        notes,
        source,
        sigmas["throughput_sigma"],
        sigmas["price_sigma"],
        status,
    )


def _spreads(inputs, kwargs, accel, notes, source, own_runs):
    """The plan's throughput and price uncertainties (P90 / P50 - 1): typed, or the blank's
    rule, whose note is added to ``notes``."""
    spreads = {n: _range_pct(inputs, n) for n in ("throughput_range_pct", "price_range_pct")}
    if spreads["throughput_range_pct"] is None:
        note = _blank_throughput_range(accel.name, kwargs["active_params"], source, own_runs)
        notes.append(note)
        spreads["throughput_range_pct"] = note.value
    if spreads["price_range_pct"] is None:
        spreads["price_range_pct"] = _typed_or_blank(
            "price_range_pct", inputs, kwargs, accel, notes
        )
    return spreads


def _own_runs_group(accelerator):
    """Where a plan's own runs are, in words: its pooling group
    (:func:`udfs.calibration.pooling_group`), its calibrated generation, else its accelerator
    (the catalogue name, or None)."""
    if accelerator is None:
        return "on its accelerator"
    group = _calibration().pooling_group(accelerator)
    if group.startswith("other: "):  # outside the calibrated generations: a group of its own
        return f"on the {accelerator}"
    return f"on the {group} generation"


#: A pull below this (it rounds to 0%) is no pull in the notes: the team's runs are too far
#: from the plan in size to move its MFU or narrow its spread.
_NO_PULL = 0.005


def _own_runs_mfu(own_runs, accelerator, active, why):
    """The blank MFU pulled toward the team's runs in the plan's pooling group, and the note
    saying so: the pull, the runs, and the bound the moved MFU is kept at when it leaves the
    calibrated default's range (the value used is what the note says)."""
    name = accelerator or ""
    n, pull = own_runs.count_for(name), own_runs.pull_for(name, active)
    where = _own_runs_group(accelerator)
    if n == 0:
        return float(own_runs.mfu(name, active)), f"{why}; none of your own runs is {where}"
    moved = float(own_runs.moved_mfu(name, active))
    value = float(own_runs.kept(moved))
    if pull < _NO_PULL:
        return value, f"{why}; your {n} own run(s) {where} are too far in size to pull it"
    why += f", pulled {pull:.0%} toward your {n} own run(s) {where}"
    if value < moved:
        why += f" to {moved:.1%}, kept at the highest default MFU {value:.0%} (mfu_max)"
    elif value > moved:
        why += f" to {moved:.1%}, kept at the lowest default MFU {value:.0%} (mfu_min)"
    return value, why


def _blank_throughput_range(accelerator, active, source, own_runs):
    """The note of a blank ``throughput_range_pct``: the calibrated spread (narrowed by the
    team's own runs, when given), and why; ``accelerator`` is the catalogue name, or None."""
    name = accelerator or ""
    value = float(_calibration().default_range_pct(name, active))
    if own_runs is not None:
        sigma = own_runs.sigma(name, active)
        pct = model.evaluate({"calibrated_plan_sigma": sigma}, ["calibrated_range_pct"])
        value = float(pct["calibrated_range_pct"])
    why = (
        "blank: the calibrated spread of the default MFU"
        if source == THROUGHPUT_SOURCES[2]
        else f"blank: the calibrated spread, kept with a {source} (an estimate too)"
    )
    if own_runs is not None:
        n = own_runs.count_for(name)
        told = n and own_runs.pull_for(name, active) >= _NO_PULL
        why += f", narrowed by your {n} own run(s) {_own_runs_group(accelerator)}" if told else ""
    return Note("throughput_range_pct", value, why)


def _with_engine_inputs(kwargs, notes, inputs, engine_inputs):
    """The plan's arguments with the engine-only inputs on top, and the notes still true."""
    dropped = set()
    if "failures_per_accelerator_day" in engine_inputs and is_blank(inputs.get("goodput")):
        dropped.add("goodput")  # derived from the failure rate instead
    if "purchase_usd_per_accelerator" in engine_inputs:
        dropped.add("usd_per_accelerator_hour")  # the ownership price instead
    kwargs = {k: v for k, v in kwargs.items() if k not in dropped} | dict(engine_inputs)
    return kwargs, [n for n in notes if n.name not in dropped]


_ORDER = {q.name: i for i, q in enumerate(PLAN_INPUTS)}


def _pricing(inputs, kwargs, notes):
    """The pricing basis and the other costs: a rental all-in price includes the power, so no
    electricity is added (``usd_per_kwh`` 0, with a note); other costs go to the total. A
    typed approved amount is checked (a number > 0); the engine does not use it."""
    basis = inputs.get("pricing_basis")
    if not is_blank(basis):
        typed = [b for b in PRICING_BASES if isinstance(basis, str) and basis.strip().lower() == b]
        if not typed:
            raise InputError("pricing_basis", f"must be one of {', '.join(PRICING_BASES)}")
        if typed[0] == PRICING_BASES[0]:
            notes[:] = [n for n in notes if n.name != "usd_per_kwh"]
            notes.append(
                Note(
                    "usd_per_kwh",
                    0.0,
                    "pricing basis rental all-in: the power is in the price, no electricity added",
                )
            )
            kwargs["usd_per_kwh"] = 0.0
    other = inputs.get("other_costs_usd")
    if not is_blank(other):
        ok = isinstance(other, (int, float)) and not isinstance(other, bool)
        if not ok or not math.isfinite(other) or not _Q["other_costs_usd"].bound.contains(other):
            raise InputError(
                "other_costs_usd", f"must be a number {_Q['other_costs_usd'].rule} (US$)"
            )
        kwargs["other_costs_usd"] = float(other)
    amount = inputs.get("approved_amount_usd")
    if not is_blank(amount):
        ok = isinstance(amount, (int, float)) and not isinstance(amount, bool)
        if not ok or not math.isfinite(amount) or amount <= 0:
            raise InputError("approved_amount_usd", "must be a number > 0 (US$)")


def _budget_status(value):
    """The typed budget status, spelled as in BUDGET_STATUSES; None when blank."""
    if is_blank(value):
        return None
    for status in BUDGET_STATUSES:
        if isinstance(value, str) and value.strip().lower() == status.lower():
            return status
    raise InputError("budget_status", f"must be one of {', '.join(BUDGET_STATUSES)}")


def _range_pct(inputs, name):
    """A typed uncertainty (a fraction >= 0), or None when blank."""
    value = inputs.get(name)
    if is_blank(value):
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not _Q[name].bound.contains(value):
        raise InputError(
            name, f"must be a number {_Q[name].rule} (a fraction: 0.15 = P90 15% above P50)"
        )
    return float(value)


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
    >>> round(r["compute_cost_usd"])
    4563333
    """
    return engine.estimate(resolve(inputs).plan)


#: The inputs :func:`resolve_many` takes: the plan inputs of TRAIN_QUANTILE and
#: TRAIN_PLAN_RANGE (the Excel range functions).
MANY_INPUTS = frozenset(
    {
        "total_params",
        "active_params",
        "training_tokens",
        "accelerators",
        "mfu",
        "usd_per_accelerator_hour",
        "throughput_range_pct",
        "price_range_pct",
        "watts_per_accelerator",
        "pue",
        "usd_per_kwh",
        "effective_tflops_input",
    }
)


@dataclass
class ResolvedMany:
    """Many plans resolved at once (:func:`resolve_many`), as arrays over the plans.

    Attributes
    ----------
    fields : dict
        :class:`~udfs.engine.Plan` field -> a float, a 1-D array (one value per plan) or None
        (not given in any plan). ``hbm_gb`` is NaN for a plan whose accelerator has no
        published HBM (that plan's field is None: see ``hbm_known``).
    hbm_known : ndarray of bool or bool
        Plans whose ``hbm_gb`` is given.
    unresolved : ndarray of bool or bool
        Plans :func:`resolve` refuses (a blank throughput and no catalogue peak).
    throughput_sigma, price_sigma : float or ndarray
        The spreads, as :attr:`Resolved.throughput_sigma` and :attr:`Resolved.price_sigma`.
    """

    fields: dict
    hbm_known: object
    unresolved: object
    throughput_sigma: object
    price_sigma: object


def _accelerator_columns(names):
    """Catalogue figures of accelerator name(s): one record per distinct name, spread back by
    index (a name's figures are looked up once, not once per plan)."""
    if isinstance(names, str):
        codes, distinct = None, [names]
    elif isinstance(names, tuple):  # (distinct names, the index of each plan's name)
        distinct, codes = names
    else:
        flat = names.tolist()
        distinct = list(dict.fromkeys(flat))  # in order of first appearance
        lut = {name: k for k, name in enumerate(distinct)}
        codes = np.fromiter(map(lut.__getitem__, flat), dtype=np.intp, count=len(flat))
    keys = ("peak", "hbm", "tdp", "intercept", "extra_sigma")
    calibration = _calibration()
    intercepts = calibration.default_mfu_model().intercepts
    extra = float(calibration.fitted()["other_accelerator_sigma"])
    rows = []
    for name in distinct:
        *figures, generation = _accelerator_row(name)
        rows.append(
            (*figures, float(intercepts[generation]), extra if generation == "other" else 0.0)
        )
    if codes is None:
        return dict(zip(keys, rows[0], strict=True))
    columns = np.array(rows, dtype=float).T.copy()  # one contiguous array per figure
    return {key: column[codes] for key, column in zip(keys, columns, strict=True)}


@functools.lru_cache(maxsize=256)
def _accelerator_row(name):
    """(BF16 peak, HBM GB, TDP W, calibrated generation) of a catalogue accelerator name, NaN
    where the catalogue has no figure (the catalogue read once per name)."""
    accel = catalogue.accelerator_record(name, argument="accelerator_name")
    generation = _calibration().GENERATIONS.get(accel["name"], "other")
    return (
        float(accel["bf16_tflops"]),
        float(accel["hbm_gb"]),
        float(accel["tdp_watts"]),
        generation,
    )


def resolve_many(inputs, accelerator_name):
    """:func:`resolve` of many plans at once, on arrays: the engine's fields and the spreads.

    The rules (:data:`RULES`) are :func:`resolve`'s, for the inputs of the Excel range
    functions (:data:`MANY_INPUTS`; bf16 peaks, no own runs, no engine-only inputs): the
    catalogue is read once per distinct accelerator and spread back by index, and each blank
    takes its rule's value for every plan at once. Notes are not made (the Excel functions
    show none). The figures equal those of :func:`resolve` plan by plan
    (``tests/test_vector_paths.py``).

    Parameters
    ----------
    inputs : mapping
        Input name (:data:`MANY_INPUTS`) -> a float or a 1-D float array (one value per plan,
        all of one length), or None (blank in every plan). ``total_params``,
        ``training_tokens`` and ``accelerators`` are required.
    accelerator_name : str, ndarray of str, or tuple
        Known catalogue names (checked by the caller), one or one per plan; or the pair
        (distinct names, an intp array of the index of each plan's name among them).

    Returns
    -------
    ResolvedMany
    """
    unknown = set(inputs) - MANY_INPUTS
    if unknown:
        raise ValueError(f"resolve_many does not take {sorted(unknown)}")
    columns = _accelerator_columns(accelerator_name)
    accel = Accelerator(
        None, "other", columns["peak"], columns["tdp"], columns["hbm"], columns["intercept"]
    )
    fields = {n: inputs[n] for n in ("total_params", "training_tokens", "accelerators")}
    fields["active_params"] = _typed_or_blank("active_params", inputs, fields, accel)
    fields["hbm_gb"] = columns["hbm"]
    unresolved = False
    if inputs.get("effective_tflops_input") is not None:
        fields["effective_tflops"] = inputs["effective_tflops_input"]
    else:
        unresolved = np.isnan(columns["peak"])
        for name in ("peak_tflops", "mfu", "goodput"):
            fields[name] = _typed_or_blank(name, inputs, fields, accel)
    for name in PASS_THROUGH:
        fields[name] = _typed_or_blank(name, inputs, fields, accel)
    price = _typed_or_blank("price_range_pct", inputs, fields, accel)
    price_sigma = model.evaluate({"price_range_pct": price}, ["price_sigma"])["price_sigma"]
    throughput_sigma = _throughput_sigma(
        columns, fields["active_params"], inputs.get("throughput_range_pct")
    )
    hbm_known = ~np.isnan(columns["hbm"])
    return ResolvedMany(fields, hbm_known, unresolved, throughput_sigma, price_sigma)


def _throughput_sigma(accel, active, range_pct):
    """The spec's ``throughput_sigma`` of the plans: from ``range_pct`` when given, else from
    the calibrated spread (:func:`_calibrated_range_pct`), which depends on the name and, through
    the small-model ramp, continuously on the active parameters: computed for every plan."""
    if range_pct is None:
        range_pct = _calibrated_range_pct(accel, active)
    values = {"throughput_range_pct": range_pct}
    return model.evaluate(values, ["throughput_sigma"])["throughput_sigma"]


def _calibrated_range_pct(accel, active):
    """:func:`udfs.calibration.default_range_pct` of the plans, from the looked-up columns."""
    values = _calibration().spread_inputs(accel["extra_sigma"], active)
    return model.evaluate(values, ["calibrated_range_pct"])["calibrated_range_pct"]
