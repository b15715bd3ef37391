"""The model, written once: every computed quantity's formula, rendered to numpy and Excel.

The formulas live in :mod:`udfs.quantities` (``PLAN_OUTPUTS``, ``RANGE_OUTPUTS`` and
``MODEL_EXTRAS``, field ``formula``), as expressions over other quantities' names. This
module parses each once
(:mod:`udfs.formula`) and renders it:

- :func:`function`: a numpy function that broadcasts like :mod:`udfs.engine`'s (its
  arguments are the names the formula reads);
- :func:`excel`: Excel formula text with ``{name}`` placeholders, which the workbook kit
  resolves to cells or defined names; ``bind`` puts other text in place of a name (a table
  column, an axis cell), ``through`` inlines the formulas of intermediate quantities;
- :func:`compute`: one quantity from given values (the engine's checked functions end here);
- :func:`evaluate`: every quantity reachable from given values, in dependency order.

To change the model, change a formula in :mod:`udfs.quantities`: the planner, cluster-sizing
and dense-versus-MoE workbooks follow, and ``tests/test_spec.py`` checks the result against
the engine and, through LibreOffice, the Excel text against the numpy rendering.

Adding a quantity, end to end (for instance ``cost_per_token_usd``):

1. add ``_out(name="cost_per_token_usd", label="Cost per token", unit="US$",
   formula="total_cost_usd / training_tokens", note="Total cost / training tokens")`` to
   ``PLAN_OUTPUTS`` (or ``MODEL_EXTRAS`` when the planner should not show it);
2. the planner's Calculations and Summary rows appear from ``PLAN_OUTPUTS`` with the Excel
   text rendered here; another template calls ``excel("cost_per_token_usd", bind=...)``;
3. the engine: write the validated function in :mod:`udfs.engine` (or call
   ``function("cost_per_token_usd")`` after the checks) and add it to ``ENGINE`` in
   ``tests/test_spec.py``, which then checks it against the spec on random plans and the
   Excel text through LibreOffice;
4. the Excel function (:mod:`udfs.excel`) and the hand-off's columns read the engine.

Examples
--------
>>> excel("wall_clock_days")
'{accelerator_hours}/{accelerators}/24'
>>> excel("wall_clock_days", bind={"accelerators": "$B7"}, through=("accelerator_hours",))
'{training_flops}/({effective_tflops}*1E+12)/3600/$B7/24'
>>> round(function("wall_clock_days")(30e6, 15_000), 1)
83.3
>>> round(evaluate({"active_params": 37e9, "training_tokens": 14.8e12, "effective_tflops": 400,
...     "accelerators": 2048})["wall_clock_days"], 1)
46.4
"""

from __future__ import annotations

from functools import cache

from . import formula as _f
from .quantities import MODEL_CONSTANTS, MODEL_EXTRAS, PLAN_OUTPUTS, RANGE_OUTPUTS

__all__ = ["SPEC", "CONSTANTS", "tree", "inputs_of", "function", "compute", "excel", "evaluate"]

#: Computed quantity name -> its Quantity (with ``formula``).
SPEC = {q.name: q for q in PLAN_OUTPUTS + RANGE_OUTPUTS + MODEL_EXTRAS}
#: Model constant name -> value (``flops_per_param_token`` ...).
CONSTANTS = {q.name: float(q.default) for q in MODEL_CONSTANTS}


@cache
def tree(name):
    """The parsed formula of ``name`` (parsed once)."""
    if name not in SPEC:
        raise KeyError(f"{name} is not a computed quantity of the model")
    return _f.parse(SPEC[name].formula)


def _expanded(name, through=(), fix=None):
    """``name``'s tree with the quantities in ``through`` inlined and ``fix`` values bound."""
    t = tree(name)
    for _ in range(len(SPEC)):
        inline = {n: tree(n) for n in _f.names(t) if n in through}
        if not inline:
            break
        t = _f.substitute(t, inline)
    return _f.substitute(t, fix) if fix else t


def inputs_of(name, through=()):
    """The names ``name``'s formula reads (after inlining ``through``)."""
    return _inputs_of(name, tuple(through))


@cache
def _inputs_of(name, through):
    return _f.names(_expanded(name, through))


@cache
def function(name, through=()):
    """``name`` as a numpy function of :func:`inputs_of` (in that order)."""
    return _f.to_numpy(_expanded(name, through), name)


def compute(name, **values):
    """``name`` computed by its numpy rendering (:func:`function`) from ``values``, the
    constants (:data:`CONSTANTS`) filling in the names not given.

    The engine's functions check their inputs and then call this (as ``_spec``): the formula
    is written once, in the spec, and the planner's Excel text is rendered from the same
    definition.
    """
    names = inputs_of(name)
    return function(name)(*[values[n] if n in values else CONSTANTS[n] for n in names])


def excel(name, bind=None, through=(), fix=None):
    """Excel formula text (no leading ``=``) for ``name``.

    Parameters
    ----------
    name : str
        A computed quantity.
    bind : dict, optional
        Name -> Excel text standing for it (``"$B7"``, ``"{total_params_used}"``). Other
        names render as ``{name}``.
    through : tuple of str
        Intermediate quantities to inline instead of referring to them.
    fix : dict, optional
        Name -> number to put in the formula (``{"pue": 1}``; a factor of 1 is dropped).
    """
    return _f.to_excel(_expanded(name, tuple(through), fix), bind)


@cache
def _compiled(name, text, plain=False):
    """(argument names, numpy function) of a formula given as text (compiled once); with
    ``plain``, the function for plain numbers (:func:`udfs.formula.to_scalar`)."""
    t = _f.parse(text)
    render = _f.to_scalar if plain else _f.to_numpy
    return _f.names(t), render(t, name)


@cache
def _scalar(name):
    """``name`` as a function of plain numbers (:func:`udfs.formula.to_scalar`)."""
    return _f.to_scalar(tree(name), name, inputs_of(name))


def evaluate(values, names=None, formulas=None):
    """Every computed quantity that ``values`` determine (missing constants from CONSTANTS).

    Parameters
    ----------
    values : dict
        Input name -> scalar or array. A computed quantity given here is used as is.
    names : iterable of str, optional
        Only these quantities (and what they need); default every one that can be computed.
    formulas : dict, optional
        Name -> formula text of further quantities for this call only (for instance a
        quantile at another probability, from ``quantities.RANGE_FORMULAS``).

    Returns
    -------
    dict
        The computed quantities (not the inputs).
    """
    plain = all(type(v) in _PLAIN for v in values.values())  # one plan: on float64 scalars
    key = (
        frozenset(values),
        None if names is None else tuple(names),
        tuple((formulas or {}).items()),
        plain,
    )
    known = {**CONSTANTS, **values}
    out = {}
    for n, fn, args in _steps(*key):  # the order of computation, worked out once per key
        known[n] = out[n] = fn(*[known[a] for a in args])
    return out


_PLAIN = frozenset({float, int})


@cache
def _steps(given, names, formulas, plain=False):
    """(name, function, argument names) of each quantity :func:`evaluate` computes from the
    names ``given``, in dependency order; ``plain``: the functions for plain numbers
    (:func:`udfs.formula.to_scalar`, the same operations on float64 scalars)."""
    known = set(CONSTANTS) | set(given)
    extra = {n: _compiled(n, text, plain) for n, text in formulas}
    steps = []

    def compute(n, stack=()):
        if n in known:
            return True
        if (n not in SPEC and n not in extra) or n in stack:
            return False
        args = extra[n][0] if n in extra else inputs_of(n)
        if not all(compute(a, (*stack, n)) for a in args):
            return False
        fn = extra[n][1] if n in extra else _scalar(n) if plain else function(n)
        known.add(n)
        steps.append((n, fn, tuple(args)))
        return True

    for n in names or (*SPEC, *extra):
        compute(n)
    return tuple(steps)
