"""The fast path: a well-formed call of one of our functions, answered without xlwings' cell-by-cell
conversion.

xlwings Server answers a call by parsing the body (FastAPI), converting every argument cell by
cell (``conversion.read``), calling the function, converting every result cell
(``conversion.async_write``), walking the answer again (``jsonable_encoder``) and serialising
it. :func:`answer` does what those steps do *for our functions' decorators* (every argument
``ndim=2, err_to_str=True``, the default return conversion), on the body the guard has already
parsed: one parse, the function through its public entry point (``udfs.excel``, vectorised
with numpy), one look over the result, one serialisation.

The rules reproduced, from xlwings :data:`XLWINGS_VERSION` (``xlwings/pro/udfs_officejs.py``,
``_xlofficejs.py``):

- an argument ``[[x]]`` is the scalar ``x``, a one-row ``[[a, b]]`` the row ``[a, b]``
  (``to_scalar``); a blank argument (``None``) takes the parameter's default; otherwise the
  value becomes a 2-D list in which an empty string ``""`` is ``None``;
- in the result, ``None`` is ``""``; NaN is the ``#NUM!`` error; a text starting with ``#`` is
  that error (an error object at runtime 1.4 and later, the text below); a scalar is
  ``[[x]]`` and a flat list one row.

Anything else (an argument cell that is an object such as an error or an entity, a result
cell that is not a float, int, text, bool or None, a function whose decorators differ) is
handed to xlwings' own code: the whole call to ``custom_functions_call`` (:meth:`answer`
returns ``NOT_HANDLED``), or the result to its ``convert``; so the answer is always
xlwings'. ``tests/test_fast_path.py`` checks that byte for byte.
"""

from __future__ import annotations

import inspect
import itertools
import math
import operator

__all__ = ["FastPath", "XLWINGS_VERSION"]

#: The xlwings release whose reading and result rules :class:`FastPath` reproduces (the server
#: extra pins it in pyproject.toml).
XLWINGS_VERSION = "0.37.8"

_ARG_OPTIONS = {"ndim": 2, "err_to_str": True}
_PLAIN = frozenset({float, int, str, bool, type(None)})
_NO_CHANGE = frozenset({float, int, bool})


class FastPath:
    """The functions of ``module`` whose decorators :func:`answer` reproduces exactly."""

    def __init__(self, module):
        from xlwings.pro._xlofficejs import errorstr_to_errortype

        self._error = errorstr_to_errortype
        self.functions = {}
        for name, function in inspect.getmembers(module):
            info = getattr(function, "__xlfunc__", None)
            if info is None or not _reproducible(function, info):
                continue
            defaults = [arg.get("optional", None) for arg in info["args"]]
            self.functions[name] = (function, info, defaults)

    #: What :meth:`answer` returns when xlwings' own dispatch must answer the call.
    NOT_HANDLED = object()

    def answer(self, body, loop):
        """The result (already converted for Excel) of the call ``body``, or
        :data:`NOT_HANDLED` before anything is computed when an argument is not one the fast
        path reads as xlwings does. Raises what the function raises. A result the fast path
        does not convert itself goes through xlwings' own conversion (on ``loop``; with
        ``loop=None``, the function's result is dropped and :data:`NOT_HANDLED` returned)."""
        entry = self.functions.get(body["func_name"])
        if entry is None:
            return self.NOT_HANDLED
        function, info, defaults = entry
        args = []
        for arg, default in zip(body["args"], defaults, strict=False):
            value = self._read(arg, default)
            if value is _FALL_BACK:
                return self.NOT_HANDLED
            args.append(value)
        result = function(*args)
        written = self._write(result, body["runtime"])
        if written is _FALL_BACK:
            if loop is None:  # no loop to run xlwings' conversion on: xlwings' dispatch
                return self.NOT_HANDLED
            from xlwings.pro.udfs_officejs import convert

            return loop.run_until_complete(convert(result, info["ret"], body))
        return written

    def _read(self, arg, default):
        if arg is None:  # an omitted optional argument
            return default
        if type(arg) is not list or not arg or set(map(type, arg)) != {list}:
            return _FALL_BACK
        widths = set(map(len, arg))
        kinds = _kinds(arg, widths)
        if not kinds <= _PLAIN:
            return _FALL_BACK  # an error or entity object: xlwings' own reading
        # xlwings' to_scalar (its JsNull probe aside: no Pyodide here, JSON has no JsNull)
        value = arg[0] if len(arg) == 1 else arg
        if len(arg) == 1 and len(value) == 1:
            value = value[0]
        if value is None:
            return default
        if type(value) is not list:
            return [[None if value == "" else value]]
        rows = value if type(value[0]) is list else [value]
        if len(widths if rows is arg else set(map(len, rows))) != 1:
            return _FALL_BACK
        if str in kinds and any("" in row for row in rows):
            return [[None if cell == "" else cell for cell in row] for row in rows]
        return rows

    def _write(self, result, runtime):
        if type(result) in _PLAIN:  # a scalar is [[x]]
            return [[self._cell(result, runtime)]]
        if type(result) is not list or not result or set(map(type, result)) != {list}:
            return _FALL_BACK
        rows = result
        widths = set(map(len, rows))
        if len(widths) != 1 or not rows[0]:
            return _FALL_BACK
        kinds = _kinds(rows, widths)
        if not kinds <= _PLAIN:
            return _FALL_BACK
        if kinds <= _NO_CHANGE and not _has_nan(rows, kinds, widths):
            return rows  # the common case: numbers only, nothing to convert
        return [[self._cell(cell, runtime) for cell in row] for row in rows]

    def _cell(self, cell, runtime):
        if cell is None:
            return ""
        if type(cell) is float and math.isnan(cell):
            return self._error("#NUM!", runtime)
        if type(cell) is str and cell.startswith("#"):
            return self._error(cell, runtime)
        return cell


def _kinds(rows, widths):
    """The types of the cells of ``rows`` (lists of widths ``widths``); a column (the common
    shape) is looked over without chaining."""
    if widths == {1}:
        return {type(cell) for (cell,) in rows}
    return set(map(type, itertools.chain.from_iterable(rows)))


_FIRST = operator.itemgetter(0)


def _has_nan(rows, kinds, widths):
    """Whether a float cell may be NaN: a sum is NaN when a cell is (when it is NaN for another
    reason, +inf and -inf, the cell-by-cell conversion that follows is merely slower)."""
    if float not in kinds:
        return False
    cells = map(_FIRST, rows) if widths == {1} else itertools.chain.from_iterable(rows)
    return math.isnan(sum(cells))


_FALL_BACK = object()


def _reproducible(function, info):
    """True when the function's decorators are those :class:`FastPath` reproduces."""
    if info.get("required_roles") or info["ret"]["options"] != {}:
        return False
    if inspect.iscoroutinefunction(function) or inspect.isasyncgenfunction(function):
        return False
    if any(a["vararg"] or a["options"] != _ARG_OPTIONS for a in info["args"]):
        return False
    # Every parameter comes from Excel (none is injected: no CurrentUser, no Caller).
    return len(inspect.signature(function).parameters) == len(info["args"])
