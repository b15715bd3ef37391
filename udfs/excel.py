"""Excel functions: ``=TRAIN_DAYS(...)`` and the rest, thin wrappers over :mod:`udfs.engine`.

One module serves every route into Excel: classic xlwings on Windows (``UDF_MODULES``),
xlwings Server's Office.js custom functions (``addin/server``) and xlwings Lite (the bundle
written by ``compute-lab lite-bundle``). Each function is decorated once with ``@xw.func``;
without Excel (Linux, macOS, tests) the decorators do nothing and the functions are plain
Python, so ``udfs.TRAIN_DAYS(37e9, 14.8e12, 2048, 400)`` works anywhere.

Arguments take what a cell holds: a number, a blank (None), text, TRUE/FALSE, an error
value ("#N/A"), or a range as a list of rows. Ranges broadcast against each other and against
single cells like numpy (and like Excel's own array formulas), so one formula over a
10,000-row column is one call that spills 10,000 results. A 1 x 1 result is a float; a
larger one a list of rows.

Bad input raises :class:`udfs._cells.CellError` (an ``xw.XlwingsError``) naming the
function, the argument, for a range the cell ("row 3, column 1"), and the rule. A blank
optional argument takes its default. A result beyond a float's range (above 1.8E308, or
underflowed below 2.2E-308) is never returned as infinity, 0 or #NUM!: it is a CellError
naming the arguments that drove it there ("TRAIN_COST: the result is out of range (above
1.8e308): lower usd_per_accelerator_hour (1e+305)"). A figure the catalogue does not have
(an unpublished TDP) is returned as the string ``"#N/A"``. Office.js routes (xlwings
Server, xlwings Lite) turn it into Excel's real #N/A error. Classic xlwings cannot return
an error value (a returned string is text, NaN an empty cell; xlwings issue #776), so
there the cell holds the text "#N/A": ISNA() is FALSE and arithmetic on it gives #VALUE!.
ISNUMBER() and IFERROR(cell * 1, fallback) behave the same on every route.
"""

from __future__ import annotations

import inspect

import numpy as np
import xlwings as xw

from . import catalogue, engine, quantities
from ._cells import (
    CellError,
    broadcast_shape,
    input_error,
    rule_of,
    to_array,
    to_cells,
    to_text,
)
from .validation import InputError, OutOfRangeError, check_result, out_of_range

__all__ = [
    "TRAIN_FLOPS",
    "TRAIN_ACCEL_HOURS",
    "TRAIN_DAYS",
    "TRAIN_COST",
    "TRAIN_KWH",
    "CHECKPOINT_GB",
    "EFFECTIVE_TFLOPS",
    "TRAIN_GOODPUT",
    "ACCELS_FOR_DAYS",
    "IMPLIED_MFU",
    "MIN_ACCELS_FOR_MEMORY",
    "CHINCHILLA_TOKENS",
    "TRAIN_CO2_T",
    "ACCEL_SPEC",
    "REF_RUN",
    "TRAIN_PLAN",
]

#: What Excel shows for a figure that is not available: a real #N/A error on Office.js routes,
#: the text "#N/A" on classic xlwings (which cannot return error values).
NOT_AVAILABLE = "#N/A"

# ---------------------------------------------------------------------------------------------
# Argument help, shown by Excel's function wizard (classic) and formula tooltips (Office.js).
# ---------------------------------------------------------------------------------------------

#: Help text of each Excel argument (at most 255 characters: Excel's limit).
ARG_DOCS = {
    "active_params": "Parameters used per token (all of them for a dense model), e.g. 37E9. > 0.",
    "total_params": "All stored parameters (every expert of an MoE model), e.g. 671E9. > 0.",
    "params": "Model parameters, e.g. 70E9. > 0.",
    "tokens": "Training tokens, e.g. 14.8E12. > 0.",
    "accelerators": "Accelerators (GPUs) training at once, e.g. 2048. A whole number > 0.",
    "effective_tflops": "Sustained (not peak) TFLOP/s per accelerator, e.g. 400. > 0.",
    "usd_per_accelerator_hour": "Price of one accelerator for one hour, US$, e.g. 2. >= 0.",
    "watts_per_accelerator": "Average draw of one accelerator, W. > 0. Blank: 700 (H100 SXM TDP).",
    "pue": "Data-centre power usage effectiveness, >= 1. Blank: 1 (accelerators only).",
    "bytes_per_param": "Bytes stored per parameter. Blank: 2 (BF16 weights only; ~13 with "
    "optimizer state). > 0.",
    "peak_tflops": "Dense peak TFLOP/s per accelerator at the training precision (H100 BF16: "
    "989.4). > 0.",
    "mfu": "Model FLOPs utilisation, a fraction in (0, 1], e.g. 0.4.",
    "goodput": "Share of wall-clock time spent training, in (0, 1]. Blank: 1.",
    "mtbf_hours": "Mean time between failures of the whole job, hours. > 0.",
    "checkpoint_write_hours": "Time the job stalls to write one checkpoint, hours (1 minute = "
    "1/60). > 0.",
    "restart_hours": "Time from a failure to training again, hours. >= 0.",
    "interval_hours": "Time between checkpoints, hours. Blank: the Young/Daly optimum. > 0.",
    "accelerator_hours": "Accelerator-hours (GPU-hours) of the run. > 0.",
    "target_days": "Wall-clock days the run should take. > 0.",
    "training_flops": "Training compute, FLOPs (6 x active parameters x tokens). > 0.",
    "hbm_gb": "HBM per accelerator, GB (H100: 80). > 0.",
    "usable_fraction": "Share of HBM available to the training state, in (0, 1]. Blank: 1.",
    "tokens_per_param": "Training tokens per parameter. Blank: 20 (Chinchilla). > 0.",
    "electricity_kwh": "Electricity drawn, kWh. >= 0.",
    "grams_co2_per_kwh": "Grid carbon intensity, gCO2 per kWh (world average 2023: 481). >= 0.",
    "usd_per_kwh": "Electricity price, US$ per kWh. >= 0. Blank: electricity cost is #N/A.",
    "accelerator_name": 'Accelerator name or alias, e.g. "H100" (any case).',
    "run_name": 'Reference run name or alias, e.g. "deepseek-v3" (any case).',
    "field": 'The figure to look up, e.g. "bf16_tflops", or "source".',
}

#: Help text that differs for one function.
_FUNCTION_ARG_DOCS = {
    ("MIN_ACCELS_FOR_MEMORY", "bytes_per_param"): "Training-state bytes per parameter. Blank: "
    "16 (mixed-precision Adam; 20 with FP32 gradients). > 0.",
    ("TRAIN_PLAN", "grams_co2_per_kwh"): "Grid carbon intensity, gCO2 per kWh. >= 0. Blank: "
    "emissions are #N/A.",
    ("TRAIN_PLAN", "hbm_gb"): "HBM per accelerator, GB. > 0. Blank: the memory row is #N/A.",
    (
        "ACCEL_SPEC",
        "accelerator_name",
    ): 'Accelerator name or alias, e.g. "H100" (any case); a range gives one row per name.',
    ("ACCEL_SPEC", "field"): "bf16_tflops, fp8_tflops, hbm_gb, hbm_tb_per_s, scale_up_gb_per_s, "
    "tdp_watts, name or source.",
    ("REF_RUN", "run_name"): 'Reference run name or alias, e.g. "deepseek-v3" (any case).',
    ("REF_RUN", "field"): "total_params, active_params, training_tokens, accelerator, "
    "accelerators, accelerator_hours, source, ...",
}

#: Defaults of each Excel function's optional arguments (filled in by ``_cells_in``).
_DEFAULTS: dict[str, dict[str, object]] = {}


def _summary(doc):
    """The first paragraph of a docstring, on one line: Excel's function description."""
    first = inspect.cleandoc(doc or "").split("\n\n", 1)[0]
    return " ".join(first.split())


def _cells_in(f):
    """Register ``f``'s defaults and tell xlwings how to pass its arguments.

    Every argument arrives as a list of rows (``ndim=2``) with error cells as text
    (``err_to_str=True``), so ranges keep their orientation and ``#N/A`` is never mistaken
    for a blank; ``to_array`` turns a 1 x 1 list back into one cell.
    """
    params = inspect.signature(f).parameters
    _DEFAULTS[f.__name__] = {
        name: p.default for name, p in params.items() if p.default is not inspect.Parameter.empty
    }
    for name in params:
        doc = _FUNCTION_ARG_DOCS.get((f.__name__, name), ARG_DOCS[name])
        f = xw.arg(name, ndim=2, err_to_str=True, doc=doc)(f)
    return f


def _excel_description(f):
    """Excel shows the docstring's first paragraph (classic Excel keeps 255 characters)."""
    info = getattr(f, "__xlfunc__", None)
    if info is not None:
        info["ret"]["doc"] = _summary(f.__doc__)
    return f


def _document_parameters(f):
    """Add a numpydoc Parameters section, from the help Excel shows, to ``f``'s docstring."""
    lines = ["Parameters", "----------"]
    for name, p in inspect.signature(f).parameters.items():
        kind = (
            "cell or range"
            if name not in ("accelerator_name", "run_name", "field")
            else "text cell or range"
        )
        if p.default is not inspect.Parameter.empty:
            kind += ", optional"
        lines.append(f"{name} : {kind}")
        lines.append("    " + _FUNCTION_ARG_DOCS.get((f.__name__, name), ARG_DOCS[name]))
    section = "".join(f"    {line}\n" for line in lines)
    f.__doc__ = f.__doc__.replace("\n    Examples\n", f"\n{section}\n    Examples\n", 1)
    return f


def _numbers(function, values):
    """Excel arguments as float arrays; a blank optional argument takes its default."""
    defaults = _DEFAULTS[function]
    arrays = {}
    for name, value in values.items():
        if name in defaults:
            arr = to_array(function, name, value, optional=True)
            if arr is None:
                default = defaults[name]
                arr = None if default is None else np.asarray(float(default))
        else:
            arr = to_array(function, name, value)
        arrays[name] = arr
    return arrays


#: Functions whose result may be 0 (a free price, a carbon-free grid); others must be > 0.
_MAY_BE_ZERO = frozenset({"TRAIN_COST", "TRAIN_CO2_T"})


def _compute(function, compute, values, labels=None):
    """Convert ``values``, check their sizes, run ``compute(**arrays)``, convert back.

    A result (or an intermediate figure) out of a float's range is a CellError naming the
    arguments that drove it there; numpy's floating-point warnings are silenced, as every
    result is checked.
    """
    arrays = _numbers(function, values)
    shape = broadcast_shape(function, arrays)
    names = {name: name for name in values}
    names.update(labels or {})
    try:
        with np.errstate(all="ignore"):  # out-of-range results are caught below
            result = compute(**arrays)
        check_result(
            "result",
            result,
            arrays,
            allow_zero=function in _MAY_BE_ZERO,
            result_label="the result",
        )
    except InputError as err:
        if (
            not isinstance(err, OutOfRangeError)
            and err.argument not in names
            and err.value is not None
        ):
            # An intermediate figure (training_flops...) that an inner check refused.
            err = out_of_range(
                "result",
                err.value,
                arrays,
                shape=shape,
                position=err.position,
                result_label="the result",
            )
        raise input_error(function, err, names) from None
    return to_cells(function, result)


# ---------------------------------------------------------------------------------------------
# The linear model
# ---------------------------------------------------------------------------------------------


@xw.func
@_cells_in
def TRAIN_FLOPS(active_params, tokens):
    """Training compute in FLOPs: 6 x active parameters x training tokens.

    Examples
    --------
    >>> f"{TRAIN_FLOPS(37e9, 14.8e12):.4e}"
    '3.2856e+24'
    >>> TRAIN_FLOPS([[1e9], [2e9]], 1e12)
    [[6e+21], [1.2e+22]]
    """
    return _compute(
        "TRAIN_FLOPS",
        engine.training_flops,
        {"active_params": active_params, "tokens": tokens},
    )


def _hours(active_params, tokens, effective_tflops):
    return engine.accelerator_hours(engine.training_flops(active_params, tokens), effective_tflops)


@xw.func
@_cells_in
def TRAIN_ACCEL_HOURS(active_params, tokens, effective_tflops):
    """Accelerator-hours (GPU-hours): 6 x active parameters x tokens / sustained FLOP/s / 3600.

    Examples
    --------
    >>> round(TRAIN_ACCEL_HOURS(37e9, 14.8e12, 400))
    2281667
    """
    return _compute(
        "TRAIN_ACCEL_HOURS",
        _hours,
        {"active_params": active_params, "tokens": tokens, "effective_tflops": effective_tflops},
    )


@xw.func
@_cells_in
def TRAIN_DAYS(active_params, tokens, accelerators, effective_tflops):
    """Wall-clock days of a training run at linear scaling: accelerator-hours / accelerators / 24.

    Examples
    --------
    The seed's DeepSeek-V3-like run on 2,048 accelerators at 400 TFLOP/s:

    >>> round(TRAIN_DAYS(37e9, 14.8e12, 2048, 400), 1)
    46.4
    >>> [round(d[0], 1) for d in TRAIN_DAYS(37e9, 14.8e12, [[1024], [2048]], 400)]
    [92.8, 46.4]
    """

    def days(active_params, tokens, accelerators, effective_tflops):
        return engine.wall_clock_days(_hours(active_params, tokens, effective_tflops), accelerators)

    return _compute(
        "TRAIN_DAYS",
        days,
        {
            "active_params": active_params,
            "tokens": tokens,
            "accelerators": accelerators,
            "effective_tflops": effective_tflops,
        },
    )


@xw.func
@_cells_in
def TRAIN_COST(active_params, tokens, effective_tflops, usd_per_accelerator_hour):
    """Rental-equivalent compute cost in US$: accelerator-hours x price per accelerator-hour.

    Examples
    --------
    >>> round(TRAIN_COST(37e9, 14.8e12, 400, 2))
    4563333
    """

    def cost(active_params, tokens, effective_tflops, usd_per_accelerator_hour):
        hours = _hours(active_params, tokens, effective_tflops)
        return engine.rental_cost_usd(hours, usd_per_accelerator_hour)

    return _compute(
        "TRAIN_COST",
        cost,
        {
            "active_params": active_params,
            "tokens": tokens,
            "effective_tflops": effective_tflops,
            "usd_per_accelerator_hour": usd_per_accelerator_hour,
        },
    )


@xw.func
@_cells_in
def TRAIN_KWH(active_params, tokens, effective_tflops, watts_per_accelerator=700.0, pue=1.0):
    """Electricity in kWh: accelerator-hours x watts per accelerator x PUE / 1000.

    Examples
    --------
    >>> round(TRAIN_KWH(37e9, 14.8e12, 400))
    1597167
    >>> round(TRAIN_KWH(37e9, 14.8e12, 400, None, 1.1))
    1756883
    """

    def kwh(active_params, tokens, effective_tflops, watts_per_accelerator, pue):
        hours = _hours(active_params, tokens, effective_tflops)
        return engine.electricity_kwh(hours, watts_per_accelerator, pue=pue)

    return _compute(
        "TRAIN_KWH",
        kwh,
        {
            "active_params": active_params,
            "tokens": tokens,
            "effective_tflops": effective_tflops,
            "watts_per_accelerator": watts_per_accelerator,
            "pue": pue,
        },
    )


@xw.func
@_cells_in
def CHECKPOINT_GB(total_params, bytes_per_param=2.0):
    """Checkpoint size in GB (1E9 bytes): total parameters x bytes per parameter.

    Examples
    --------
    >>> CHECKPOINT_GB(671e9)
    1342.0
    >>> CHECKPOINT_GB(176e9, 13)
    2288.0
    """
    return _compute(
        "CHECKPOINT_GB",
        engine.checkpoint_gb,
        {"total_params": total_params, "bytes_per_param": bytes_per_param},
    )


@xw.func
@_cells_in
def EFFECTIVE_TFLOPS(peak_tflops, mfu, goodput=1.0):
    """Sustained TFLOP/s per accelerator: peak TFLOP/s x MFU x goodput.

    Examples
    --------
    >>> round(EFFECTIVE_TFLOPS(989.4, 0.4), 2)
    395.76
    """
    return _compute(
        "EFFECTIVE_TFLOPS",
        engine.effective_tflops,
        {"peak_tflops": peak_tflops, "mfu": mfu, "goodput": goodput},
    )


# ---------------------------------------------------------------------------------------------
# The extended model
# ---------------------------------------------------------------------------------------------


@xw.func
@_cells_in
def TRAIN_GOODPUT(mtbf_hours, checkpoint_write_hours, restart_hours, interval_hours=None):
    """Share of wall-clock time that advances training, given failures and checkpoints (Daly).

    Examples
    --------
    Llama 3's failure rate on 16,384 GPUs (MTBF ~3.09 h), 1-minute checkpoint writes and
    5-minute restarts:

    >>> round(TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60), 3)
    0.869
    """
    return _compute(
        "TRAIN_GOODPUT",
        engine.goodput,
        {
            "mtbf_hours": mtbf_hours,
            "checkpoint_write_hours": checkpoint_write_hours,
            "restart_hours": restart_hours,
            "interval_hours": interval_hours,
        },
    )


@xw.func
@_cells_in
def ACCELS_FOR_DAYS(accelerator_hours, target_days):
    """Accelerators needed to finish in target_days at linear scaling (not rounded up).

    Examples
    --------
    >>> ACCELS_FOR_DAYS(2_400_000, 50)
    2000.0
    """
    return _compute(
        "ACCELS_FOR_DAYS",
        engine.accelerators_for_days,
        {"accelerator_hours": accelerator_hours, "target_days": target_days},
    )


@xw.func
@_cells_in
def IMPLIED_MFU(training_flops, accelerator_hours, peak_tflops):
    """MFU implied by disclosed figures: FLOPs / accelerator-hours / 3600 / peak FLOP/s.

    Examples
    --------
    Llama 3.1 405B: 6 x 405E9 x 15.6E12 FLOPs in 30.84M H100-hours.

    >>> round(IMPLIED_MFU(6 * 405e9 * 15.6e12, 30.84e6, 989.4), 3)
    0.345
    """
    return _compute(
        "IMPLIED_MFU",
        engine.implied_mfu,
        {
            "training_flops": training_flops,
            "accelerator_hours": accelerator_hours,
            "peak_tflops": peak_tflops,
        },
    )


@xw.func
@_cells_in
def MIN_ACCELS_FOR_MEMORY(total_params, hbm_gb, bytes_per_param=16.0, usable_fraction=1.0):
    """Fewest accelerators whose HBM holds the fully sharded training state (activations excluded).

    Examples
    --------
    >>> MIN_ACCELS_FOR_MEMORY(405e9, 80)
    81.0
    """

    def accelerators(total_params, hbm_gb, bytes_per_param, usable_fraction):
        return engine.min_accelerators_for_memory(
            total_params, hbm_gb, bytes_per_param, usable_fraction
        )

    return _compute(
        "MIN_ACCELS_FOR_MEMORY",
        accelerators,
        {
            "total_params": total_params,
            "hbm_gb": hbm_gb,
            "bytes_per_param": bytes_per_param,
            "usable_fraction": usable_fraction,
        },
    )


@xw.func
@_cells_in
def CHINCHILLA_TOKENS(params, tokens_per_param=20.0):
    """Compute-optimal training tokens: parameters x tokens per parameter (Chinchilla: 20).

    Examples
    --------
    >>> CHINCHILLA_TOKENS(70e9)
    1400000000000.0
    """
    return _compute(
        "CHINCHILLA_TOKENS",
        engine.chinchilla_tokens,
        {"params": params, "tokens_per_param": tokens_per_param},
    )


@xw.func
@_cells_in
def TRAIN_CO2_T(electricity_kwh, grams_co2_per_kwh):
    """Operational emissions in tonnes of CO2: kWh x grams CO2 per kWh / 1E6.

    Examples
    --------
    >>> TRAIN_CO2_T(1_000_000, 481)
    481.0
    """
    return _compute(
        "TRAIN_CO2_T",
        engine.co2_tonnes,
        {"electricity_kwh": electricity_kwh, "grams_co2_per_kwh": grams_co2_per_kwh},
    )


# ---------------------------------------------------------------------------------------------
# Catalogue look-ups
# ---------------------------------------------------------------------------------------------


def _lookup(function, look_up, name_argument, name, field):
    """Broadcast look-ups over a range of names and a range of fields."""
    names = to_text(function, name_argument, name)
    fields = to_text(function, "field", field)
    broadcast_shape(function, {name_argument: names, "field": fields})
    # Check every name and field once, naming the offending cell of its own range.
    for argument, cells, probe in (
        (name_argument, names, lambda v: look_up(v, "name")),
        ("field", fields, lambda v: look_up(names.flat[0], v)),
    ):
        for index, value in np.ndenumerate(cells):
            try:
                probe(value)
            except InputError as err:
                raise CellError(function, argument, rule_of(err), index or None) from None
    names, fields = np.broadcast_arrays(names, fields)
    out = np.empty(names.shape, dtype=object)
    for index in np.ndindex(names.shape):
        value = look_up(names[index], fields[index])
        if value is None or (isinstance(value, float) and np.isnan(value)):
            value = NOT_AVAILABLE
        elif isinstance(value, int | float):
            value = float(value)
        out[index] = value
    return out.item() if out.ndim == 0 else out.tolist()


@xw.func
@_cells_in
def ACCEL_SPEC(accelerator_name, field):
    """One figure of an accelerator from the catalogue (dense peak TFLOP/s, HBM GB, TDP W ...).

    A figure the vendor has not published is "#N/A": Excel's #N/A error through xlwings
    Server and xlwings Lite, but the text "#N/A" in classic Windows Excel (ISNA() is FALSE
    there and arithmetic on it gives #VALUE!; test with ISNUMBER()). Field units: bf16_tflops
    and fp8_tflops TFLOP/s, hbm_gb GB, hbm_tb_per_s TB/s, scale_up_gb_per_s GB/s, tdp_watts W.

    Examples
    --------
    >>> ACCEL_SPEC("h100", "bf16_tflops")
    989.4
    >>> ACCEL_SPEC([["H100"], ["MI300X"]], [["hbm_gb", "tdp_watts"]])
    [[80.0, 700.0], [192.0, 750.0]]
    """
    return _lookup(
        "ACCEL_SPEC", catalogue.accelerator_field, "accelerator_name", accelerator_name, field
    )


@xw.func
@_cells_in
def REF_RUN(run_name, field):
    """One disclosed figure of a reference training run (parameters, tokens, accelerator-hours ...).

    A figure the authors did not disclose is "#N/A" (the text "#N/A" in classic Windows
    Excel, a real #N/A error through xlwings Server and xlwings Lite; see ACCEL_SPEC).

    Examples
    --------
    >>> REF_RUN("deepseek-v3", "active_params")
    37000000000.0
    >>> REF_RUN("Llama 3.1 405B", "accelerator")
    'H100 SXM'
    """
    return _lookup("REF_RUN", catalogue.run_field, "run_name", run_name, field)


# ---------------------------------------------------------------------------------------------
# The whole plan
# ---------------------------------------------------------------------------------------------


def _plan_row_label(q):
    return f"{q.label} ({q.unit})"


#: TRAIN_PLAN's rows: the plan outputs of :mod:`udfs.quantities`, in order.
PLAN_ROWS = tuple((q.name, _plan_row_label(q)) for q in quantities.PLAN_OUTPUTS)


@xw.func
@_cells_in
def TRAIN_PLAN(
    total_params,
    active_params,
    tokens,
    accelerators,
    effective_tflops,
    usd_per_accelerator_hour,
    watts_per_accelerator=700.0,
    pue=1.0,
    usd_per_kwh=None,
    grams_co2_per_kwh=None,
    hbm_gb=None,
):
    """Every output of one training plan as a two-column table (quantity with unit, value).

    Spills one row per output: effective TFLOP/s, FLOPs, accelerator-hours, days, checkpoint
    GB, costs, kWh, tCO2, memory. A row whose optional input is blank shows #N/A (as text in
    classic Windows Excel; see ACCEL_SPEC).

    Examples
    --------
    >>> plan = TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2)
    >>> plan[3][0], round(plan[3][1], 1)
    ('Wall-clock time (days)', 46.4)
    >>> plan[7]
    ['Electricity cost (US$)', '#N/A']
    """
    function = "TRAIN_PLAN"
    values = {
        "total_params": total_params,
        "active_params": active_params,
        "tokens": tokens,
        "accelerators": accelerators,
        "effective_tflops": effective_tflops,
        "usd_per_accelerator_hour": usd_per_accelerator_hour,
        "watts_per_accelerator": watts_per_accelerator,
        "pue": pue,
        "usd_per_kwh": usd_per_kwh,
        "grams_co2_per_kwh": grams_co2_per_kwh,
        "hbm_gb": hbm_gb,
    }
    arrays = _numbers(function, values)
    for name, arr in arrays.items():
        if arr is not None and arr.ndim:
            raise CellError(function, name, "must be a single cell (TRAIN_PLAN is for one plan)")
    plan = {k: (None if v is None else float(v)) for k, v in arrays.items()}
    plan["training_tokens"] = plan.pop("tokens")
    try:
        with np.errstate(all="ignore"):  # every output is checked by the engine
            out = engine.estimate(**plan)
    except InputError as err:
        labels = {k: k for k in values} | {"training_tokens": "tokens"}
        raise input_error(function, err, labels) from None
    rows = []
    for key, label in PLAN_ROWS:
        value = out[key]
        rows.append([label, NOT_AVAILABLE if np.isnan(value) else to_cells(function, value)])
    return rows


for _name in __all__:
    _excel_description(globals()[_name])
    _document_parameters(globals()[_name])
del _name
