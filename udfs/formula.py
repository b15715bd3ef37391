"""Formulas written once: an expression over named quantities, rendered to numpy and to Excel.

A model formula is a Python arithmetic expression over other quantities' names, such as
``"accelerator_hours / accelerators / 24"``. :func:`parse` reads it once with :mod:`ast`
(only the operations below are allowed) and the result renders two ways:

- :func:`to_numpy`: a Python function over numpy arrays that broadcasts like the engine's
  functions (scalar in, ``float`` out; arrays in, ``ndarray`` out);
- :func:`to_excel`: Excel formula text in which every name is a ``{name}`` placeholder that the
  workbook kit (:meth:`workbook_templates.sheetkit.Book.formula`) resolves to a cell, a
  defined name or a table column.

Allowed: numbers, names, ``+ - * / **``, unary minus, comparisons (inside ``where``), and the
functions in :data:`FUNCTIONS` (each an Excel 2010 function that LibreOffice computes the same;
``norm_s_inv`` is NORM.S.INV, :func:`norm_s_inv` in numpy).

Examples
--------
>>> tree = parse("maximum(accelerator_hours, 1) / accelerators / 24")
>>> to_excel(tree)
'MAX({accelerator_hours},1)/{accelerators}/24'
>>> to_numpy(tree, "days")(48.0, 2)
1.0
"""

from __future__ import annotations

import ast
import functools
import re
from statistics import NormalDist

import numpy as np

__all__ = [
    "FUNCTIONS",
    "FormulaError",
    "norm_s_inv",
    "parse",
    "names",
    "substitute",
    "to_numpy",
    "to_excel",
]

_STD_NORMAL = NormalDist()


def norm_s_inv(p):
    """Excel's NORM.S.INV: the standard normal quantile of ``p``; vectorised.

    NaN where ``p`` is not strictly between 0 and 1 (Excel: #NUM!). Each distinct value is
    computed once with :meth:`statistics.NormalDist.inv_cdf`.

    Examples
    --------
    >>> round(norm_s_inv(0.9), 6)
    1.281552
    >>> norm_s_inv(np.array([0.5, 1.0])).tolist()
    [0.0, nan]
    """
    arr = np.asarray(p, dtype=float)
    if arr.ndim == 0:
        return _inv_cdf(float(arr))
    if arr.size <= 256:  # a few cells: each value's quantile remembered, no sort
        return np.array([_inv_cdf(x) for x in arr.ravel().tolist()]).reshape(arr.shape)
    uniq, inverse = np.unique(arr, return_inverse=True)
    z = np.array([_STD_NORMAL.inv_cdf(u) if 0.0 < u < 1.0 else np.nan for u in uniq.tolist()])
    return z[inverse].reshape(arr.shape)


@functools.lru_cache(maxsize=1024)
def _inv_cdf(x):
    return _STD_NORMAL.inv_cdf(x) if 0.0 < x < 1.0 else float("nan")


#: Function of a spec formula -> (numpy function, Excel template over its arguments).
#: ``ceil`` renders as ROUNDUP(x,0), which equals the ceiling for x >= 0 only.
FUNCTIONS = {
    "maximum": (np.maximum, "MAX({0},{1})"),
    "minimum": (np.minimum, "MIN({0},{1})"),
    "where": (np.where, "IF({0},{1},{2})"),
    "log": (np.log, "LN({0})"),
    "exp": (np.exp, "EXP({0})"),
    "sqrt": (np.sqrt, "SQRT({0})"),
    "ceil": (np.ceil, "ROUNDUP({0},0)"),
    "round": (np.round, "ROUND({0},{1})"),
    # Excel 2010's NORM.S.INV, stored with the _xlfn. prefix the file format gives it
    "norm_s_inv": (norm_s_inv, "_xlfn.NORM.S.INV({0})"),
}

_BINARY = {
    ast.Add: ("+", 2),
    ast.Sub: ("-", 2),
    ast.Mult: ("*", 3),
    ast.Div: ("/", 3),
    ast.Pow: ("^", 4),
}
_COMPARE = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "=", ast.NotEq: "<>"}
_ATOM = 9  # precedence of a number, a name or a function call


class FormulaError(ValueError):
    """A model formula uses something outside the allowed arithmetic."""


def parse(text):
    """Parse a model formula into an :class:`ast.expr`, checking every node is allowed."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError as err:
        raise FormulaError(f"formula {text!r} is not an expression: {err.msg}") from None
    for node in ast.walk(tree):
        _check(node, text)
    return tree


def _check(node, text):
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
            raise FormulaError(f"formula {text!r}: unknown function {ast.unparse(node.func)}")
    elif isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
        raise FormulaError(f"formula {text!r}: operator {type(node.op).__name__} not allowed")
    elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.USub):
        raise FormulaError(f"formula {text!r}: only unary minus is allowed")
    elif isinstance(node, ast.Compare):
        if len(node.ops) != 1 or type(node.ops[0]) not in _COMPARE:
            raise FormulaError(f"formula {text!r}: one comparison at a time")
    elif isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
        raise FormulaError(f"formula {text!r}: only numbers are allowed as constants")
    elif not isinstance(
        node,
        (
            ast.Call,
            ast.BinOp,
            ast.UnaryOp,
            ast.Compare,
            ast.Constant,
            ast.Name,
            ast.Load,
            ast.operator,
            ast.unaryop,
            ast.cmpop,
        ),
    ):
        raise FormulaError(f"formula {text!r}: {type(node).__name__} not allowed")


def names(tree):
    """The quantity names a formula reads, in order of first appearance."""
    seen = {}

    def walk(node):
        if isinstance(node, ast.Name):
            seen.setdefault(node.id, None)
        for child in ast.iter_child_nodes(node):
            if not (isinstance(node, ast.Call) and child is node.func):
                walk(child)

    walk(tree)
    return tuple(seen)


def substitute(tree, values):
    """A copy of ``tree`` with names replaced: by another tree, or by a number.

    Multiplying or dividing by a substituted 1 is dropped, so binding ``pue`` to 1 turns
    ``kwh * pue`` into ``kwh``.
    """

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id not in values:
                return node
            value = values[node.id]
            return value if isinstance(value, ast.AST) else ast.Constant(float(value))

        def visit_BinOp(self, node):
            self.generic_visit(node)
            one = _is_one(node.right) or (isinstance(node.op, ast.Mult) and _is_one(node.left))
            if isinstance(node.op, (ast.Mult, ast.Div)) and one:
                return node.left if _is_one(node.right) else node.right
            return node

    return _Sub().visit(_copy(tree))


def _copy(tree):
    return ast.parse(ast.unparse(tree), mode="eval").body


def _is_one(node):
    return isinstance(node, ast.Constant) and node.value == 1


def to_numpy(tree, name="formula", args=None):
    """A function over numpy arrays computing ``tree``; its arguments are ``args`` (in order).

    ``args`` defaults to :func:`names`. Scalar in, float out; array in, array out.
    """
    args = tuple(args or names(tree))
    body = ast.unparse(tree)
    source = (
        f"def {name}({', '.join(args)}):\n"
        + "".join(f"    {a} = _asarray({a}, dtype=_float)\n" for a in args)
        + f"    return _ret({body})\n"
    )
    namespace = {fn: numpy_fn for fn, (numpy_fn, _) in FUNCTIONS.items()}
    namespace.update(_asarray=np.asarray, _float=float, _ret=_ret, __builtins__={})
    exec(compile(source, f"<formula {name}>", "exec"), namespace)  # noqa: S102 (parsed above)
    function = namespace[name]
    function.__doc__ = f"``{name} = {body}`` (generated from the model spec)."
    return function


def to_scalar(tree, name="formula", args=None):
    """:func:`to_numpy` for one plan: the same operations on numpy float64 scalars (no arrays
    made), so the figures are the same to the bit; returns a float. For plain numbers only."""
    args = tuple(args or names(tree))
    body = ast.unparse(tree)
    source = (
        f"def {name}({', '.join(args)}):\n"
        + "".join(f"    {a} = _float64({a})\n" for a in args)
        + f"    return _float({body})\n"
    )
    namespace = {fn: numpy_fn for fn, (numpy_fn, _) in FUNCTIONS.items()}
    namespace.update(_float64=np.float64, _float=float, __builtins__={})
    exec(compile(source, f"<formula {name}>", "exec"), namespace)  # noqa: S102 (parsed above)
    return namespace[name]


def _ret(x):
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


#: Text that needs no brackets as an operand: a {placeholder}, a <column> of a table, a cell,
#: a defined name or a number.
_SIMPLE = re.compile(
    r"^(\{[\w.:]+\}|<\w+>|\$?[A-Z]{1,3}\$?\d+"  # {placeholder}, <column>, cell
    r"|[A-Za-z_][\w.]*|[\d.]+(E[+-]\d+)?)$"  # defined name, number
)


def to_excel(tree, bind=None):
    """Excel formula text (without the leading ``=``) for ``tree``.

    ``bind`` maps a name to the Excel text that stands for it (a cell such as ``$B7``, or a
    ``{placeholder}`` of another name); any other name ``x`` becomes ``{x}``.
    """
    return _excel(tree, bind or {})[0]


def _excel(node, bind):
    """(text, precedence) of ``node``."""
    if isinstance(node, ast.Constant):
        return _number(node.value), _ATOM
    if isinstance(node, ast.Name):
        text = bind.get(node.id, f"{{{node.id}}}")
        return (text, _ATOM) if _SIMPLE.match(text) else (f"({text})", _ATOM)
    if isinstance(node, ast.Call):
        parts = [_excel(a, bind)[0] for a in node.args]
        return FUNCTIONS[node.func.id][1].format(*parts), _ATOM
    if isinstance(node, ast.UnaryOp):  # Excel's unary minus binds tighter than ^: bracket it
        text, prec = _excel(node.operand, bind)
        return f"(-{text if prec == _ATOM else f'({text})'})", _ATOM
    if isinstance(node, ast.Compare):
        left, right = _excel(node.left, bind)[0], _excel(node.comparators[0], bind)[0]
        return f"{left}{_COMPARE[type(node.ops[0])]}{right}", 1
    symbol, prec = _BINARY[type(node.op)]
    left, lp = _excel(node.left, bind)
    right, rp = _excel(node.right, bind)
    if lp < prec:
        left = f"({left})"
    if rp < prec or (rp == prec and not isinstance(node.op, (ast.Add, ast.Mult))):
        right = f"({right})"
    return f"{left}{symbol}{right}", prec


def _number(value):
    """A number as Excel formula text: 24, 0.5, 1E+12."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e6:
        return str(int(value))
    if 1e-4 <= abs(value) < 1e6:
        return repr(value)
    mantissa, exponent = f"{value:.15E}".split("E")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}E{int(exponent):+d}"
