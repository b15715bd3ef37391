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

import functools
import inspect

import numpy as np
import xlwings as xw

from . import catalogue, engine, plan, quantities, ranges
from ._cells import (
    _ROW_TYPES,
    DEFAULTS,
    MAX_CELLS_PER_CALL,
    CellError,
    broadcast_shape,
    check_call_size,
    distinct_texts,
    input_error,
    rule_of,
    to_array,
    to_cells,
    to_numbers,
    to_text,
)
from ._quantile_cells import (  # the bound and aliases importable from here too
    MAX_PLANS_PER_CALL,  # noqa: F401
    QUANTILE_QUANTITIES,
    QUANTITY_ALIASES,  # noqa: F401
    plan_quantiles,
)
from .validation import (
    InputError,
    OutOfRangeError,
    check_plausible,
    check_result,
    out_of_range,
)

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
    "TRAIN_QUANTILE",
    "TRAIN_PLAN_RANGE",
]

#: What Excel shows for a figure that is not available: a real #N/A error on Office.js routes,
#: the text "#N/A" on classic xlwings (which cannot return error values).
NOT_AVAILABLE = "#N/A"

#: What a blank electricity price and grid carbon intensity take: the planner's defaults, from
#: the one rule table (udfs.plan.RULES), so every face prices electricity the same way.
_BLANK_USD_PER_KWH = plan.RULE_DEFAULTS["usd_per_kwh"]
_BLANK_GRAMS_CO2_PER_KWH = plan.RULE_DEFAULTS["grams_co2_per_kwh"]
_GRID_NOTE = next(q.note for q in quantities.PLAN_INPUTS if q.name == "grams_co2_per_kwh")
#: Input name -> its rule text (the quantity's bound: "> 0", ">= 0"...), for the help below.
_RULE = {q.name: q.rule for q in (*quantities.PLAN_INPUTS, *quantities.MODEL_INPUTS)}
#: Input name -> its bound (the range its checks keep).
_BOUND = {q.name: q.bound for q in quantities.PLAN_INPUTS if q.bound is not None}
#: Input name -> its range as an interval ("(0, 1]").
_INTERVAL = {name: bound.interval for name, bound in _BOUND.items()}
_USD_PER_KWH_DOC = (
    f"Electricity price, US$ per kWh. {_RULE['usd_per_kwh']}. Blank: "
    f"US${_BLANK_USD_PER_KWH:g} (the planner's default)."
)

# ---------------------------------------------------------------------------------------------
# Argument help, shown by Excel's function wizard (classic) and formula tooltips (Office.js).
# ---------------------------------------------------------------------------------------------

#: Help text of each Excel argument (at most 255 characters: Excel's limit).
ARG_DOCS = {
    "active_params": "Parameters used per token (all of them for a dense model), e.g. 37E9. "
    "At least 1E6 (fewer: typed in billions).",
    "total_params": "All stored parameters (every expert of an MoE model), e.g. 671E9. At least "
    "1E6 (fewer: typed in billions).",
    "params": "Model parameters, e.g. 70E9. At least 1E6 (fewer: typed in billions).",
    "tokens": "Training tokens, e.g. 14.8E12. At least 1E9 (fewer: typed in billions or "
    "trillions).",
    "accelerators": "Accelerators (GPUs) training at once, e.g. 2048. "
    f"{_RULE['accelerators'].capitalize()}.",
    "effective_tflops": "Sustained (not peak) TFLOP/s per accelerator, e.g. 400. "
    f"{_RULE['effective_tflops_input']}.",
    "usd_per_accelerator_hour": "Price of one accelerator for one hour, US$, e.g. 2. "
    f"{_RULE['usd_per_accelerator_hour']}.",
    "watts_per_accelerator": "Average draw of one accelerator, W. "
    f"{_RULE['watts_per_accelerator']}. Blank: 700 (H100 SXM TDP).",
    "pue": f"Data-centre power usage effectiveness, {_RULE['pue']}. Blank: 1 (accelerators only).",
    "bytes_per_param": "Bytes stored per parameter. Blank: 2 (BF16 weights only; ~13 with "
    "optimizer state). > 0.",
    "peak_tflops": "Dense peak TFLOP/s per accelerator at the training precision (H100 BF16: "
    f"989.4). {_RULE['peak_tflops']}.",
    "mfu": f"Model FLOPs utilisation, a fraction in {_INTERVAL['mfu']}, e.g. 0.4.",
    "goodput": f"Share of wall-clock time spent training, in {_INTERVAL['goodput']}. Blank: 1.",
    "mtbf_hours": "Mean time between failures of the whole job, hours. > 0.",
    "checkpoint_write_hours": "Time the job stalls to write one checkpoint, hours (1 minute = "
    "1/60). > 0.",
    "restart_hours": "Time from a failure to training again, hours. >= 0.",
    "interval_hours": "Time between checkpoints, hours. Blank: the Young/Daly optimum. > 0.",
    "accelerator_hours": "Accelerator-hours (GPU-hours) of the run. > 0.",
    "target_days": f"Wall-clock days the run should take. {_RULE['target_days']}.",
    "training_flops": "Training compute, FLOPs (6 x active parameters x tokens). > 0.",
    "hbm_gb": f"HBM per accelerator, GB (H100: 80). {_RULE['hbm_gb']}.",
    "usable_fraction": "Share of HBM available to the training state, in (0, 1]. Blank: 1.",
    "tokens_per_param": "Training tokens per parameter. Blank: "
    f"{quantities.CHINCHILLA_TOKENS_PER_PARAM:g} (Chinchilla). > 0.",
    "electricity_kwh": "Electricity drawn, kWh. >= 0.",
    "grams_co2_per_kwh": "Grid carbon intensity, gCO2 per kWh (world average 2023: 481). "
    f"{_RULE['grams_co2_per_kwh']}.",
    "usd_per_kwh": _USD_PER_KWH_DOC,
    "accelerator_name": 'Accelerator name or alias, e.g. "H100" (any case).',
    "run_name": 'Reference run name or alias, e.g. "deepseek-v3" (any case).',
    "field": 'The figure to look up, e.g. "bf16_tflops", or "source".',
    "quantity": 'What to estimate: "accelerator_hours", "wall_clock_days", "compute_cost_usd", '
    '"electricity_kwh", "electricity_cost_usd" or "total_cost_usd" (or "hours", "days", '
    '"cost" = total cost).',
    "p": "Probability of the quantile, strictly between 0 and 1: 0.1 for P10, 0.5 for P50 (the "
    "point estimate), 0.9 for P90.",
    "throughput_range_pct": "Throughput uncertainty, a fraction >= 0: P90 / P50 - 1 of the "
    "hours (0.15: P90 15% above P50). Blank: the calibrated spread, also with a typed MFU or "
    "throughput (an estimate too); 0 makes it exact.",
    "price_range_pct": "Price uncertainty, a fraction >= 0: P90 / P50 - 1 of the price per "
    "accelerator-hour, independent of the throughput uncertainty. Blank: 0 (exact).",
}

#: Help text that differs for one function.
_FUNCTION_ARG_DOCS = {
    ("MIN_ACCELS_FOR_MEMORY", "bytes_per_param"): "Training-state bytes per parameter. Blank: "
    "16 (mixed-precision Adam; 20 with FP32 gradients). > 0.",
    ("TRAIN_PLAN", "grams_co2_per_kwh"): "Grid carbon intensity, gCO2 per kWh. >= 0. Blank: "
    f"{_BLANK_GRAMS_CO2_PER_KWH:g}, the planner's default ({_GRID_NOTE}).",
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

#: Help of the plan arguments of TRAIN_QUANTILE and TRAIN_PLAN_RANGE: blanks follow the
#: planner's rules (udfs.plan.RULES), which differ from TRAIN_PLAN's.
_RANGE_ARG_DOCS = {
    "accelerator_name": 'Accelerator name or alias, e.g. "H100" (any case): its peak TFLOP/s, '
    "TDP and calibrated MFU.",
    "mfu": "Model FLOPs utilisation, in (0, 1], e.g. 0.4 (it keeps the calibrated spread unless "
    "throughput_range_pct is given). Blank: the calibrated default for the accelerator and the "
    "active parameters, with its spread.",
    "usd_per_accelerator_hour": "Price of one accelerator for one hour, US$. >= 0. Blank: "
    "US$2 (the planner's default).",
    "watts_per_accelerator": "Average draw of one accelerator, W. > 0. Blank: the "
    "accelerator's TDP from the catalogue, else 700 W.",
    "usd_per_kwh": _USD_PER_KWH_DOC,
    "effective_tflops": "Sustained TFLOP/s per accelerator; when given, used instead of peak x "
    "MFU, with the calibrated spread unless throughput_range_pct is given. > 0. Blank: peak "
    "x MFU.",
}
for _function in ("TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"):
    _FUNCTION_ARG_DOCS.update({(_function, k): v for k, v in _RANGE_ARG_DOCS.items()})
_FUNCTION_ARG_DOCS[("TRAIN_QUANTILE", "accelerator_name")] += " A range gives one result per name."
del _function


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
    DEFAULTS[f.__name__] = {
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
            if name not in ("accelerator_name", "run_name", "field", "quantity")
            else "text cell or range"
        )
        if p.default is not inspect.Parameter.empty:
            kind += ", optional"
        lines.append(f"{name} : {kind}")
        lines.append("    " + _FUNCTION_ARG_DOCS.get((f.__name__, name), ARG_DOCS[name]))
    section = "".join(f"    {line}\n" for line in lines)
    f.__doc__ = f.__doc__.replace("\n    Examples\n", f"\n{section}\n    Examples\n", 1)
    return f


def _cell_function(f=None, *, may_be_zero=False):
    """Make ``f``, a formula over numbers, an Excel function over cells.

    The Excel function takes ``f``'s arguments (bound from its signature, so a blank optional
    argument takes ``f``'s default), converts each to numbers, checks their sizes, computes
    ``f`` on them and converts the result back to cells (:func:`_compute`). The result must be
    positive, or with ``may_be_zero`` at least 0 (a free price, a carbon-free grid).
    """
    if f is None:
        return functools.partial(_cell_function, may_be_zero=may_be_zero)
    signature = inspect.signature(f)

    @functools.wraps(f)
    def excel_function(*args, **kwargs):
        cells = signature.bind(*args, **kwargs)
        cells.apply_defaults()
        return _compute(f.__name__, f, cells.arguments, may_be_zero=may_be_zero)

    return _cells_in(excel_function)


#: Argument -> the plan quantity whose plausibility floor it keeps (a parameter count or the
#: training tokens: below the floor, a unit slip such as 70 for 70 billion), as the planner,
#: the command line and the engine's estimate keep it (:func:`udfs.validation.check_plausible`).
_PLAUSIBLE = {
    "active_params": "active_params",
    "total_params": "total_params",
    "params": "total_params",
    "tokens": "training_tokens",
}


def _plan_function(compute):
    """Make the decorated definition, which gives an Excel function's arguments and help, an
    Excel function computing ``compute(name, cells)``: ``cells`` its arguments by name, bound
    from its signature (defaults filled in), ``name`` the function's."""

    def decorate(f):
        signature = inspect.signature(f)

        @functools.wraps(f)
        def excel_function(*args, **kwargs):
            cells = signature.bind(*args, **kwargs)
            cells.apply_defaults()
            return compute(f.__name__, dict(cells.arguments))

        return _cells_in(excel_function)

    return decorate


def _compute(function, compute, values, may_be_zero=False):
    """Convert ``values``, check their sizes, run ``compute(**arrays)``, convert back.

    A result (or an intermediate figure) out of a float's range is a CellError naming the
    arguments that drove it there; numpy's floating-point warnings are silenced, as every
    result is checked.
    """
    flats = {}
    check_call_size(function, values, flats=flats)
    arrays = to_numbers(function, values, flats)
    shape = broadcast_shape(function, arrays)
    names = {name: name for name in values}
    single = {k: float(v) if v is not None and v.ndim == 0 else v for k, v in arrays.items()}
    try:
        for name, quantity in _PLAUSIBLE.items():
            if name in arrays:
                check_plausible(name, arrays[name], quantity)
        with np.errstate(all="ignore"):  # out-of-range results are caught below
            result = compute(**single)
        check_result("result", result, arrays, allow_zero=may_be_zero, result_label="the result")
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
@_cell_function
def TRAIN_FLOPS(active_params, tokens):
    """Training compute in FLOPs: 6 x active parameters x training tokens.

    Examples
    --------
    >>> f"{TRAIN_FLOPS(37e9, 14.8e12):.4e}"
    '3.2856e+24'
    >>> TRAIN_FLOPS([[1e9], [2e9]], 1e12)
    [[6e+21], [1.2e+22]]
    """
    return engine.training_flops(active_params, tokens)


def _hours(active_params, tokens, effective_tflops):
    return engine.accelerator_hours(engine.training_flops(active_params, tokens), effective_tflops)


@xw.func
@_cell_function
def TRAIN_ACCEL_HOURS(active_params, tokens, effective_tflops):
    """Accelerator-hours (GPU-hours): 6 x active parameters x tokens / sustained FLOP/s / 3600.

    Examples
    --------
    >>> round(TRAIN_ACCEL_HOURS(37e9, 14.8e12, 400))
    2281667
    """
    return _hours(active_params, tokens, effective_tflops)


@xw.func
@_cell_function
def TRAIN_DAYS(active_params, tokens, accelerators, effective_tflops):
    """Wall-clock days of a training run at linear scaling: accelerator-hours / accelerators / 24.

    Examples
    --------
    The DeepSeek-V3-like example plan on 2,048 accelerators at 400 TFLOP/s:

    >>> round(TRAIN_DAYS(37e9, 14.8e12, 2048, 400), 1)
    46.4
    >>> [round(d[0], 1) for d in TRAIN_DAYS(37e9, 14.8e12, [[1024], [2048]], 400)]
    [92.8, 46.4]
    """
    return engine.wall_clock_days(_hours(active_params, tokens, effective_tflops), accelerators)


@xw.func
@_cell_function(may_be_zero=True)
def TRAIN_COST(active_params, tokens, effective_tflops, usd_per_accelerator_hour):
    """Rental-equivalent compute cost in US$: accelerator-hours x price per accelerator-hour.

    Examples
    --------
    >>> round(TRAIN_COST(37e9, 14.8e12, 400, 2))
    4563333
    """
    return engine.compute_cost_usd(
        _hours(active_params, tokens, effective_tflops), usd_per_accelerator_hour
    )


@xw.func
@_cell_function
def TRAIN_KWH(active_params, tokens, effective_tflops, watts_per_accelerator=700.0, pue=1.0):
    """Electricity in kWh: accelerator-hours x watts per accelerator x PUE / 1000.

    Examples
    --------
    >>> round(TRAIN_KWH(37e9, 14.8e12, 400))
    1597167
    >>> round(TRAIN_KWH(37e9, 14.8e12, 400, None, 1.1))
    1756883
    """
    return engine.electricity_kwh(
        _hours(active_params, tokens, effective_tflops), watts_per_accelerator, pue=pue
    )


@xw.func
@_cell_function
def CHECKPOINT_GB(total_params, bytes_per_param=2.0):
    """Checkpoint size in GB (1E9 bytes): total parameters x bytes per parameter.

    Examples
    --------
    >>> CHECKPOINT_GB(671e9)
    1342.0
    >>> CHECKPOINT_GB(176e9, 13)
    2288.0
    """
    return engine.checkpoint_gb(total_params, bytes_per_param)


@xw.func
@_cell_function
def EFFECTIVE_TFLOPS(peak_tflops, mfu, goodput=1.0):
    """Sustained TFLOP/s per accelerator: peak TFLOP/s x MFU x goodput.

    Examples
    --------
    >>> round(EFFECTIVE_TFLOPS(989.4, 0.4), 2)
    395.76
    """
    return engine.effective_tflops(peak_tflops, mfu, goodput)


# ---------------------------------------------------------------------------------------------
# The extended model
# ---------------------------------------------------------------------------------------------


@xw.func
@_cell_function
def TRAIN_GOODPUT(mtbf_hours, checkpoint_write_hours, restart_hours, interval_hours=None):
    """Share of wall-clock time that advances training, given failures and checkpoints (Daly).

    Examples
    --------
    Llama 3's failure rate on 16,384 GPUs (MTBF ~3.09 h), 1-minute checkpoint writes and
    5-minute restarts:

    >>> round(TRAIN_GOODPUT(3.09, 1 / 60, 5 / 60), 3)
    0.869
    """
    return engine.goodput(mtbf_hours, checkpoint_write_hours, restart_hours, interval_hours)


@xw.func
@_cell_function
def ACCELS_FOR_DAYS(accelerator_hours, target_days):
    """Accelerators needed to finish in target_days at linear scaling (not rounded up).

    Examples
    --------
    >>> ACCELS_FOR_DAYS(2_400_000, 50)
    2000.0
    """
    return engine.accelerators_for_days(accelerator_hours, target_days)


@xw.func
@_cell_function
def IMPLIED_MFU(training_flops, accelerator_hours, peak_tflops):
    """MFU implied by disclosed figures: FLOPs / accelerator-hours / 3600 / peak FLOP/s.

    Examples
    --------
    Llama 3.1 405B: 6 x 405E9 x 15.6E12 FLOPs in 30.84M H100-hours.

    >>> round(IMPLIED_MFU(6 * 405e9 * 15.6e12, 30.84e6, 989.4), 3)
    0.345
    """
    return engine.implied_mfu(training_flops, accelerator_hours, peak_tflops)


@xw.func
@_cell_function
def MIN_ACCELS_FOR_MEMORY(total_params, hbm_gb, bytes_per_param=16.0, usable_fraction=1.0):
    """Fewest accelerators whose HBM holds the fully sharded training state (activations excluded).

    Examples
    --------
    >>> MIN_ACCELS_FOR_MEMORY(405e9, 80)
    81.0
    """
    return engine.min_accelerators_for_memory(
        total_params, hbm_gb, bytes_per_param, usable_fraction
    )


@xw.func
@_cell_function
def CHINCHILLA_TOKENS(params, tokens_per_param=quantities.CHINCHILLA_TOKENS_PER_PARAM):
    """Compute-optimal training tokens: parameters x tokens per parameter (Chinchilla: 20).

    Examples
    --------
    >>> CHINCHILLA_TOKENS(70e9)
    1400000000000.0
    """
    return engine.chinchilla_tokens(params, tokens_per_param)


@xw.func
@_cell_function(may_be_zero=True)
def TRAIN_CO2_T(electricity_kwh, grams_co2_per_kwh):
    """Operational emissions in tonnes of CO2: kWh x grams CO2 per kWh / 1E6.

    Examples
    --------
    >>> TRAIN_CO2_T(1_000_000, 481)
    481.0
    """
    return engine.co2_tonnes(electricity_kwh, grams_co2_per_kwh)


# ---------------------------------------------------------------------------------------------
# Catalogue look-ups
# ---------------------------------------------------------------------------------------------


def _lookup(function, look_up, name_argument, name, field):
    """Broadcast look-ups over a range of names and a range of fields: each distinct name and
    field checked once, each distinct (name, field) looked up once and spread back."""
    column = _lookup_column(look_up, name, field)
    if column is not None:
        return column
    check_call_size(function, {name_argument: name, "field": field})
    names = to_text(function, name_argument, name)
    fields = to_text(function, "field", field)
    broadcast_shape(function, {name_argument: names, "field": fields})
    name_list = names.ravel().tolist()
    distinct_names = dict.fromkeys(name_list)
    distinct_fields = dict.fromkeys(fields.ravel().tolist())
    try:
        for value in distinct_names:
            look_up(value, "name")
        for value in distinct_fields:
            look_up(names.flat[0], value)
    except InputError:
        _name_bad_cell(function, look_up, name_argument, names, fields)
    if fields.ndim == 0:  # one field: one look-up per distinct name, spread by a dict
        field = fields.item()
        by_name = {n: _shown(look_up(n, field)) for n in distinct_names}
        if names.ndim == 0:
            return by_name[names.item()]
        flat, shape = list(map(by_name.__getitem__, name_list)), names.shape
    else:
        names, fields = np.broadcast_arrays(names, fields)
        pairs = list(zip(names.ravel().tolist(), fields.ravel().tolist(), strict=True))
        found = {pair: _shown(look_up(*pair)) for pair in dict.fromkeys(pairs)}
        flat, shape = list(map(found.__getitem__, pairs)), names.shape
    rows, width = shape
    if width == 1:
        return [[value] for value in flat]
    return [flat[r * width : (r + 1) * width] for r in range(rows)]


def _lookup_column(look_up, names, field):
    """:func:`_lookup` of a column of names (two or more rows of one cell each, as a sheet
    fills a column) and one field cell: the cells checked by :func:`udfs._cells.distinct_texts`
    (as :func:`to_coded_text` checks them), each distinct cell looked up once, the column built
    from a dict in one pass. None for any other cells, or when a cell is refused (then
    :func:`_lookup` looks closer and names the cell)."""
    if not isinstance(names, list | tuple) or not 1 < len(names) <= MAX_CELLS_PER_CALL:
        return None
    if not set(map(type, names)) <= _ROW_TYPES:
        return None
    try:
        cells = [cell for (cell,) in names]  # every row one cell
    except ValueError:  # a row of another width
        return None
    while isinstance(field, list | tuple) and len(field) == 1:  # a 1 x 1 range: its cell
        field = field[0]
    texts, fields = distinct_texts(cells), distinct_texts((field,))
    if texts is None or fields is None:
        return None
    field = fields[1][0]
    try:
        found = {cell: _shown(look_up(text, field)) for cell, text in zip(*texts, strict=True)}
    except InputError:
        return None
    return [[found[cell]] for cell in cells]


def _shown(value):
    """A catalogue figure as a cell shows it: a float, text, or NOT_AVAILABLE."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return NOT_AVAILABLE
    if isinstance(value, int | float):
        return float(value)
    return value


def _name_bad_cell(function, look_up, name_argument, names, fields):
    """Raise the CellError of the first bad name (then field), at its own cell."""
    for argument, cells, probe in (
        (name_argument, names, lambda v: look_up(v, "name")),
        ("field", fields, lambda v: look_up(names.flat[0], v)),
    ):
        for index, value in np.ndenumerate(cells):
            try:
                probe(value)
            except InputError as err:
                raise CellError(function, argument, rule_of(err), index or None) from None


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


def _plan_table(function, values):
    """TRAIN_PLAN of its cells ``values``: every output of one plan, one row each."""
    check_call_size(function, values)
    arrays = to_numbers(function, values)
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


@xw.func
@_plan_function(_plan_table)
def TRAIN_PLAN(
    total_params,
    active_params,
    tokens,
    accelerators,
    effective_tflops,
    usd_per_accelerator_hour,
    watts_per_accelerator=700.0,
    pue=1.0,
    usd_per_kwh=_BLANK_USD_PER_KWH,
    grams_co2_per_kwh=_BLANK_GRAMS_CO2_PER_KWH,
    hbm_gb=None,
):
    """Every output of one training plan as a two-column table (quantity with unit, value).

    Spills one row per output: effective TFLOP/s, FLOPs, accelerator-hours, days, checkpoint
    GB, costs, kWh, tCO2, memory. A blank electricity price or grid intensity takes the
    planner's default (udfs.plan.RULES), so the total cost is the planner's; the memory row
    shows #N/A without hbm_gb (as text in classic Windows Excel; see ACCEL_SPEC).

    Examples
    --------
    >>> plan = TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2)
    >>> plan[3][0], round(plan[3][1], 1)
    ('Wall-clock time (days)', 46.4)
    >>> plan[7][0], round(plan[7][1])
    ('Electricity cost (US$)', 127773)
    >>> plan[9][0], round(plan[9][1])
    ('Total cost (US$)', 4691107)
    >>> plan[10]
    ['Min. accelerators for training state (accelerators)', '#N/A']
    """


# ---------------------------------------------------------------------------------------------
# Ranges: quantiles of a plan (their cells to plans to quantiles: udfs._quantile_cells)
# ---------------------------------------------------------------------------------------------


def _quantile_of_cells(function, cells):
    """TRAIN_QUANTILE of its cells: the quantity and p, and the plan inputs."""
    quantity, p = cells.pop("quantity"), cells.pop("p")
    return plan_quantiles(function, quantity, p, cells)


@xw.func
@_plan_function(_quantile_of_cells)
def TRAIN_QUANTILE(
    quantity,
    p,
    total_params,
    active_params,
    tokens,
    accelerators,
    accelerator_name,
    mfu=None,
    usd_per_accelerator_hour=None,
    throughput_range_pct=None,
    price_range_pct=None,
    watts_per_accelerator=None,
    pue=None,
    usd_per_kwh=None,
    effective_tflops=None,
):
    """The p-quantile of a plan's accelerator-hours, days, kWh or cost (P10: p = 0.1; P90: 0.9).

    Lognormal around the point estimate (P50 = the estimate): P = P50 x EXP(NORM.S.INV(p) x
    sigma). A blank MFU takes the calibrated default (by the accelerator's generation and the
    active parameters) and its calibrated spread; a typed MFU or throughput keeps the
    calibrated spread (an estimate too) unless throughput_range_pct says otherwise. Blank
    inputs follow the planner's rules. Every argument broadcasts: a column of p gives a
    column of quantiles, a row of quantities a table.

    Examples
    --------
    The DeepSeek-V3-like example plan at 400 TFLOP/s (P50), then with 15% throughput
    uncertainty (P90 15% above P50):

    >>> round(TRAIN_QUANTILE("hours", 0.5, 671e9, 37e9, 14.8e12, 2048, "H100", None, 2,
    ...                      None, None, 700, None, None, 400))
    2281667

    From Python the optional plan inputs (those after accelerator_name) may be given by name,
    as Excel's argument help names them; Excel takes them by position:

    >>> round(TRAIN_QUANTILE("days", 0.9, 671e9, 37e9, 14.8e12, 2048, "H100",
    ...                      usd_per_accelerator_hour=2, throughput_range_pct=0.15,
    ...                      watts_per_accelerator=700, effective_tflops=400), 1)
    53.4

    With a blank MFU (the calibrated default and its spread), a column of p spills a column:

    >>> days = TRAIN_QUANTILE("days", [[0.1], [0.5], [0.9]], 671e9, 37e9, 14.8e12, 2048, "H100")
    >>> days[0][0] < days[1][0] < days[2][0]
    True
    """


def _range_row_label(name):
    return _plan_row_label(next(q for q in quantities.PLAN_OUTPUTS if q.name == name))


#: TRAIN_PLAN_RANGE's header and rows: the quantities with a range, P10 | P50 | P90.
PLAN_RANGE_HEADER = ("Quantity (unit)", "P10", "P50", "P90")
PLAN_RANGE_ROWS = tuple((q, _range_row_label(q)) for q in QUANTILE_QUANTITIES)


def _plan_range_table(function, values):
    """TRAIN_PLAN_RANGE of its cells ``values``: a header and P10, P50, P90 of each quantity."""
    check_call_size(function, values)
    for name, value in values.items():
        if name == "accelerator_name":
            cells = to_text(function, name, value)
        else:
            cells = to_array(function, name, value, optional=name in DEFAULTS[function])
        if cells is not None and cells.ndim:
            raise CellError(function, name, f"must be a single cell ({function} is for one plan)")
    table = plan_quantiles(
        function,
        [[q] for q, _ in PLAN_RANGE_ROWS],
        [[p for p in ranges.DEFAULT_PS]],
        values,
    )
    return [list(PLAN_RANGE_HEADER)] + [
        [label, *row] for (_, label), row in zip(PLAN_RANGE_ROWS, table, strict=True)
    ]


@xw.func
@_plan_function(_plan_range_table)
def TRAIN_PLAN_RANGE(
    total_params,
    active_params,
    tokens,
    accelerators,
    accelerator_name,
    mfu=None,
    usd_per_accelerator_hour=None,
    throughput_range_pct=None,
    price_range_pct=None,
    watts_per_accelerator=None,
    pue=None,
    usd_per_kwh=None,
    effective_tflops=None,
):
    """P10, P50 (the point estimate) and P90 of a plan's hours, days, kWh and costs, as a table.

    Spills a header row and one row per quantity: accelerator-hours, wall-clock days, compute
    cost, electricity (kWh), electricity cost, total cost; columns quantity (with unit), P10,
    P50, P90. The arguments and their blanks are TRAIN_QUANTILE's, for one plan.

    Examples
    --------
    The DeepSeek-V3-like example plan at 400 TFLOP/s with 15% throughput uncertainty:

    >>> table = TRAIN_PLAN_RANGE(671e9, 37e9, 14.8e12, 2048, "H100", None, 2, 0.15, None, 700,
    ...                          None, None, 400)
    >>> table[0]
    ['Quantity (unit)', 'P10', 'P50', 'P90']
    >>> table[2][0], [round(v, 1) for v in table[2][1:]]
    ('Wall-clock time (days)', [40.4, 46.4, 53.4])
    """


for _name in __all__:
    _excel_description(globals()[_name])
    _document_parameters(globals()[_name])
del _name
