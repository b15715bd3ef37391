"""Cell values in, numpy out, and back: the one converter behind every Excel function.

Excel hands a custom function a single value (a float, an int, text, a boolean, None for a
blank cell, an error string such as ``"#N/A"``) or a range as a list of rows. This module
turns such a value into a float ``ndarray`` (0-d for a single cell, 2-D for a range), names
the first offending cell of a range, and converts results back: a float for a 1 x 1 result,
a list of rows otherwise.

Everything here raises :class:`CellError`, an ``xlwings.XlwingsError``, so every Excel route
shows the message in the cell (classic xlwings) or answers HTTP 400 (xlwings Server). It
needs xlwings only for that base class.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import numbers

import numpy as np
import xlwings as xw

from .speedups import gc_paused
from .validation import SMALLEST_NORMAL, InputError, OutOfRangeError

__all__ = [
    "EXCEL_ERRORS",
    "CellError",
    "is_blank",
    "to_array",
    "to_text",
    "to_coded_text",
    "distinct_texts",
    "broadcast_shape",
    "MAX_CELLS_PER_CALL",
    "check_call_size",
    "shape_of",
    "to_cells",
    "describe_position",
    "input_error",
    "rule_of",
    "DEFAULTS",
    "to_numbers",
]

#: Error values a cell can hold, as xlwings passes them with ``err_to_str=True``.
EXCEL_ERRORS = frozenset(
    {
        "#NULL!",
        "#DIV/0!",
        "#VALUE!",
        "#REF!",
        "#NAME?",
        "#NUM!",
        "#N/A",
        "#GETTING_DATA",
        "#SPILL!",
        "#CALC!",
        "#FIELD!",
        "#BLOCKED!",
        "#UNKNOWN!",
        "#CONNECT!",
        "#BUSY!",
        "#PYTHON!",
    }
)

_NUMBER_TYPES = frozenset({float, int})
_SCALARS = frozenset({float, np.float64})
_ROW_TYPES = frozenset({list, tuple})


class CellError(xw.XlwingsError, ValueError):
    """Bad input to an Excel function; the message names the argument, the cell and the rule.

    Attributes
    ----------
    function : str
        The Excel function ("TRAIN_DAYS").
    argument : str or None
        The Excel argument ("accelerators"), None for a problem of the call as a whole.
    position : tuple of int or None
        Zero-based (row, column) of the first bad cell of a range.
    rule : str
        What was wrong, as a phrase.
    """

    def __init__(self, function, argument, rule, position=None):
        self.function = function
        self.argument = argument
        self.position = position
        self.rule = rule
        where = f" at {describe_position(position)}" if position is not None else ""
        subject = f"{argument}{where} " if argument else ""
        super().__init__(f"{function}: {subject}{rule}")


def describe_position(position):
    """``(2, 0)`` -> ``"row 3, column 1"`` (one-based, relative to the range)."""
    if len(position) == 1:
        return f"row {position[0] + 1}"
    row, col = position[-2], position[-1]
    return f"row {row + 1}, column {col + 1}"


def _is_blank_cell(value):
    return value is None or (isinstance(value, str) and value == "")


def is_blank(value):
    """True for an empty cell: None, "", or a 1 x 1 range holding one of those.

    The Excel face's reading of :func:`udfs.validation.is_blank` (the core's one meaning of
    blank) for what xlwings hands over: an empty cell arrives as None (or ""), possibly as a
    1 x 1 range. NaN is not a blank cell here but a bad number (the face refuses it), since
    Excel has no NaN: it only reaches a function from a Python caller.
    """
    if _is_blank_cell(value):
        return True
    if isinstance(value, list | tuple) and len(value) == 1:
        inner = value[0]
        if isinstance(inner, list | tuple):
            return len(inner) == 1 and _is_blank_cell(inner[0])
        return _is_blank_cell(inner)
    return False


def _rows(function, argument, value):
    """A list or tuple of cells as a list of rows (a flat list is one column)."""
    if len(value) == 0:
        raise CellError(function, argument, "is an empty range")
    if all(isinstance(row, list | tuple) for row in value):
        widths = {len(row) for row in value}
        if len(widths) != 1 or 0 in widths:
            raise CellError(function, argument, "is not a rectangular range")
        for r, row in enumerate(value):
            for c, cell in enumerate(row):
                if isinstance(cell, list | tuple):
                    raise CellError(function, argument, "has a nested list in a cell", (r, c))
        return value
    if any(isinstance(cell, list | tuple) for cell in value):
        raise CellError(function, argument, "is not a rectangular range")
    return [[cell] for cell in value]


def _cell_problem(cell):
    """Why ``cell`` is not a number, or None if it is one."""
    if _is_blank_cell(cell):
        return "is blank"
    if isinstance(cell, bool | np.bool_):
        return "must be a number, not TRUE/FALSE"
    if isinstance(cell, str):
        text = cell.strip()
        if text.upper() in EXCEL_ERRORS:
            return f"is an Excel error ({text.upper()})"
        return f"must be a number, not text ({cell!r})"
    if isinstance(cell, numbers.Real):
        try:
            float(cell)
        except OverflowError:
            return "is too large to be a number (above 1.8E308)"
        return None
    return f"must be a number (got {type(cell).__name__})"


def _reject(function, argument, problem, position):
    raise CellError(function, argument, problem, position)


def to_array(function, argument, value, *, optional=False, flat=None):
    """A cell or range as a float ndarray: 0-d for one cell, 2-D (rows, columns) for a range.

    ``optional``: a blank single cell returns None (the caller applies its default).
    ``flat``: ``value``'s cells row by row as :func:`check_call_size` found them (its
    ``flats``): the rows are then not looked at again.
    A blank required cell, text, a boolean or an Excel error raises :class:`CellError`
    naming ``argument`` and, for a range, the first offending cell. The numeric rules
    (greater than 0, finite ...) are the engine's.
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fiu":
            arr = value.astype(float, copy=False)
            return arr.reshape(-1, 1) if arr.ndim == 1 else _squeeze(function, argument, arr)
        value = value.tolist()
    if is_blank(value):
        if optional:
            return None
        raise CellError(function, argument, "is required (the cell is blank)")
    if isinstance(value, list | tuple):
        arr = _fast_numbers(value, flat)
        if arr is not None:
            return _squeeze(function, argument, arr)
        rows = _rows(function, argument, value)
        arr = None
        if set(map(type, itertools.chain.from_iterable(rows))).issubset(_NUMBER_TYPES):
            with contextlib.suppress(OverflowError):  # an integer beyond float range
                arr = np.array(rows, dtype=float)
        if arr is None:
            one_cell = len(rows) == 1 and len(rows[0]) == 1
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    problem = _cell_problem(cell)
                    if problem is not None:
                        _reject(function, argument, problem, None if one_cell else (r, c))
            arr = np.array(rows, dtype=float)
        return _squeeze(function, argument, arr)
    problem = _cell_problem(value)
    if problem is not None:
        _reject(function, argument, problem, None)
    return np.asarray(float(value))


def _fast_numbers(rows, flat=None):
    """A list of rows holding only floats and ints as a 2-D array, else None (look closer).

    A few passes at C speed: the rows' cells (:func:`_row_cells`, unless ``flat`` gives
    them), then the cells' types (``bool`` is not accepted: ``type(True) is bool``), then one
    ``np.fromiter`` of them. Anything unusual (text, blanks, ragged rows, a flat list)
    returns None.
    """
    flat = _row_cells(rows) if flat is None else flat
    if flat is None:
        return None
    if not set(map(type, flat)).issubset(_NUMBER_TYPES):
        return None
    try:
        return np.fromiter(flat, dtype=float, count=len(flat)).reshape(len(rows), -1)
    except OverflowError:  # an integer beyond float range: the slow path names its cell
        return None


def _row_cells(rows):
    """The cells of ``rows``, row by row, as one list, when ``rows`` is a non-empty list of
    rows that are all lists or tuples of one width (at least one cell); else None.

    Two passes at C speed for a column (the rows' types, then each row unpacked as one cell,
    which fails for a row of another width); for wider rows, their lengths, then the rows
    chained.
    """
    if not rows or not set(map(type, rows)).issubset(_ROW_TYPES):
        return None
    try:
        return [cell for (cell,) in rows]  # a column: every row one cell
    except ValueError:
        pass
    widths = set(map(len, rows))
    if len(widths) != 1 or 0 in widths:
        return None
    return list(itertools.chain.from_iterable(rows))


def _squeeze(function, argument, arr):
    if arr.ndim > 2:
        raise CellError(function, argument, "must be a cell or a range of rows and columns")
    if arr.size == 1:
        return arr.reshape(())
    return arr


def to_text(function, argument, value, *, flat=None):
    """A cell or range of names as a 0-d or 2-D object array of stripped strings.

    ``flat``: as :func:`to_array`'s. :func:`to_coded_text` gives the distinct texts too.
    """
    return to_coded_text(function, argument, value, flat=flat)[0]


def to_coded_text(function, argument, value, *, flat=None):
    """:func:`to_text`'s cells, the distinct texts and where each cell's is among them.

    Returns (cells, distinct, codes): ``distinct`` a list of the stripped texts in order of
    first appearance, ``codes`` an intp array of the cells' shape with ``distinct[codes] ==
    cells``, so that a caller works once per distinct text and spreads back by index.
    """
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if is_blank(value):
        raise CellError(function, argument, "is required (the cell is blank)")
    if isinstance(value, list | tuple):
        got = _fast_text(value, flat)
        if got is not None:
            return got
    rows = _rows(function, argument, value) if isinstance(value, list | tuple) else [[value]]
    out = np.empty((len(rows), len(rows[0])), dtype=object)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            pos = (r, c) if len(rows) * len(row) > 1 else None
            if _is_blank_cell(cell):
                _reject(function, argument, "is blank", pos)
            if isinstance(cell, str) and cell.strip().upper() in EXCEL_ERRORS:
                _reject(function, argument, f"is an Excel error ({cell.strip().upper()})", pos)
            if not isinstance(cell, str):
                _reject(function, argument, "must be text (a name)", pos)
            out[r, c] = cell.strip()
    flat = out.ravel().tolist()
    distinct = list(dict.fromkeys(flat))
    codes = _codes(flat, {text: k for k, text in enumerate(distinct)})
    return _one_or_range(out, distinct, codes.reshape(out.shape))


def _codes(flat, index):
    """The index (``index[cell]``) of each of the cells ``flat``, as an intp array."""
    return np.fromiter(map(index.__getitem__, flat), dtype=np.intp, count=len(flat))


def _one_or_range(cells, distinct, codes):
    if cells.size == 1:
        return cells.reshape(()), distinct, codes.reshape(())
    return cells, distinct, codes


def distinct_texts(cells):
    """The distinct ``cells`` (in order of first appearance) and their stripped texts, when
    every cell is text, not blank and not an Excel error; else None (look closer, cell by
    cell). The one rule of the passes at C speed over names: :func:`to_coded_text`'s and the
    look-ups' column (``udfs.excel._lookup_column``)."""
    try:
        keys = list(dict.fromkeys(cells))
    except TypeError:  # an unhashable cell: not text
        return None
    if not all(map(isinstance, keys, itertools.repeat(str))):
        return None
    stripped = list(map(str.strip, keys))
    if not all(stripped) or not EXCEL_ERRORS.isdisjoint(map(str.upper, stripped)):
        return None
    return keys, stripped


def _fast_text(rows, flat=None):
    """:func:`to_coded_text` of a list of rows holding only non-blank text (no Excel error),
    else None (look closer, cell by cell): a few passes at C speed (the rows' cells, see
    :func:`_row_cells`, unless ``flat`` gives them; the cells into a dict), each distinct cell
    checked and stripped once, the cells spread back by index."""
    flat = _row_cells(rows) if flat is None else flat
    texts = None if flat is None else distinct_texts(flat)
    if texts is None:
        return None
    keys, stripped = texts
    distinct = list(dict.fromkeys(stripped))
    index = {text: k for k, text in enumerate(distinct)}
    codes = _codes(flat, {key: index[text] for key, text in zip(keys, stripped, strict=True)})
    cells = np.array(distinct, dtype=object)[codes]
    shape = (len(rows), len(flat) // len(rows))
    return _one_or_range(cells.reshape(shape), distinct, codes.reshape(shape))


#: The most cells one call of an Excel function may take in one argument or produce (its
#: broadcast result): 2**20 = 1,048,576, one full column of an Excel sheet, so any one-column
#: spill fits. A call of that size takes about 0.15 s and 60 MB for the point functions
#: (TRAIN_DAYS over a 1,024 x 1,024 table); without a bound a column of 8,000 against a row of
#: 8,000 asked for 64 million cells (143 s, 5.5 GB; issue 22). Checked from the arguments'
#: shapes before any cell is read. The range functions also have a bound on plans
#: (``udfs.excel.MAX_PLANS_PER_CALL``).
MAX_CELLS_PER_CALL = 2**20


def shape_of(value):
    """The shape ``to_array``/``to_text`` will give ``value``, read without converting a cell.

    ``()`` for one cell (or a 1 x 1 range), ``(rows, columns)`` for a range (a flat list is a
    column), None for what the conversion will refuse anyway (a ragged or empty range).
    """
    return _scan(value)[0]


def _scan(value):
    """(:func:`shape_of` ``value``, :func:`_row_cells` of its rows or None)."""
    flat = None
    if isinstance(value, np.ndarray):
        shape = value.shape if value.ndim != 1 else (value.shape[0], 1)
    elif isinstance(value, list | tuple):
        if not value:
            return None, None
        flat = _row_cells(value)
        if flat is not None:
            shape = (len(value), len(flat) // len(value))
        elif all(isinstance(row, list | tuple) for row in value):
            widths = set(map(len, value))
            if len(widths) != 1:
                return None, None
            shape = (len(value), widths.pop())
        else:
            shape = (len(value), 1)
    else:
        return (), None
    return () if math.prod(shape) == 1 else tuple(shape), flat


def _cells_phrase(shape):
    return f"{math.prod(shape):,} cells ({_size(shape)})"


def check_call_size(
    function,
    values,
    *,
    limit=MAX_CELLS_PER_CALL,
    what="cells",
    bound=None,
    memo=None,
    flats=None,
):
    """Refuse a call whose arguments or broadcast result hold over ``limit`` cells, at once.

    ``values`` maps argument names to the raw cell values (before any conversion). The shape
    of the result is computed from the arguments' shapes (Excel-style broadcasting); sizes
    that do not match are left to :func:`broadcast_shape` to report. The error names the bound:
    ``MAX_CELLS_PER_CALL``, or ``bound`` (with ``what`` the thing counted, e.g. "plans").
    ``memo``: a dict in which each argument's shape is kept (read from it when there), so
    that a second check of the same cells does not read them again. ``flats``: a dict in
    which the cells of each argument that is a list of rows (lists or tuples) of one width
    are kept, row by row as one list, for its conversion (``to_array(..., flat=)``) not to
    look at the rows again.
    Returns the broadcast shape (None if the sizes do not match).
    """
    bound = bound or "MAX_CELLS_PER_CALL"
    rule = f"over the limit of {limit:,} {what} per call ({bound}); split it into smaller ranges"
    shapes = {}
    known = {} if memo is None else memo
    for name, value in values.items():
        if name not in known:
            known[name], flat = _scan(value)
            if flat is not None and flats is not None:
                flats[name] = flat
        shape = known[name]
        if shape is None:
            continue
        if math.prod(shape) > MAX_CELLS_PER_CALL:
            limit_rule = (
                f"over the limit of {MAX_CELLS_PER_CALL:,} cells per call (MAX_CELLS_PER_CALL); "
                "split it into smaller ranges"
            )
            raise CellError(function, name, f"is a range of {_cells_phrase(shape)}, {limit_rule}")
        shapes[name] = shape
    try:
        shape = np.broadcast_shapes(*shapes.values())
    except ValueError:
        return None
    if math.prod(shape) > limit:
        verb = "produce" if what == "cells" else "compute"
        count = f"{math.prod(shape):,} {what} ({_size(shape)})"
        raise CellError(function, None, f"the call would {verb} {count}, {rule}")
    return shape


def broadcast_shape(function, arrays):
    """The common shape of named arrays (Excel-style broadcasting), or a clear error."""
    shaped = {k: v for k, v in arrays.items() if v is not None and np.ndim(v) > 0}
    try:
        return np.broadcast_shapes(*(np.shape(v) for v in shaped.values()))
    except ValueError:
        sizes = ", ".join(f"{k} is {_size(np.shape(v))}" for k, v in shaped.items())
        raise CellError(
            function,
            None,
            "ranges have sizes that do not match "
            f"({sizes}); give ranges of the same size, or single cells",
        ) from None


def _size(shape):
    rows, cols = (shape[0], 1) if len(shape) == 1 else shape[-2:]
    return f"{rows} row{'s' * (rows != 1)} x {cols} column{'s' * (cols != 1)}"


def to_cells(function, result):
    """An engine result as Excel shows it: a float for one cell, a list of rows otherwise.

    A NaN or infinite value is never returned silently: it raises :class:`CellError`. A
    non-zero value below Excel's smallest number (2.2E-308; only a cost or emissions figure
    can underflow, the others are refused by the engine's checks) is returned as 0.
    """
    if type(result) in _SCALARS and math.isfinite(result):  # one cell, a usable figure
        return 0.0 if abs(result) < SMALLEST_NORMAL else float(result)
    arr = np.asarray(result, dtype=float)
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(np.atleast_1d(arr)))[0]
        where = f" at {describe_position(tuple(int(i) for i in bad))}" if arr.ndim else ""
        raise CellError(
            function, None, f"the result{where} is not a finite number (inputs too large?)"
        )
    if arr.size and np.min(np.abs(arr)) < SMALLEST_NORMAL:
        # A cost that underflowed below Excel's smallest number (2.2E-308) is 0 in Excel.
        arr = np.where(np.abs(arr) < SMALLEST_NORMAL, 0.0, arr)
    if arr.ndim == 0:
        return float(arr)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    with gc_paused():  # udfs.speedups
        return arr.tolist()


def input_error(function, err: InputError, labels=None):
    """An engine :class:`~udfs.validation.InputError` as a :class:`CellError`.

    ``labels`` maps engine argument names to Excel argument names; an engine name that is
    not an Excel argument (an intermediate such as ``training_flops``) is called one.
    """
    labels = labels or {}
    if isinstance(err, OutOfRangeError):
        # "TRAIN_COST: the result at row 2, column 1 is out of range (above 1.8e308): lower
        # usd_per_accelerator_hour (1e+305)"; argument is the first driver's Excel name.
        position = tuple(int(i) for i in err.position) if err.position else None
        text = err.describe(
            position_label=describe_position(position) if position else None,
            label_of=lambda name: labels.get(name, f"the intermediate {name}"),
        )
        cell_error = CellError(function, None, text)
        if err.drivers:
            cell_error.argument = labels.get(err.argument, err.argument)
        cell_error.position = position
        return cell_error
    if err.argument in labels:
        argument = labels[err.argument]
    else:
        argument = f"the intermediate {err.argument}"
    position = tuple(int(i) for i in err.position) if err.position else None
    return CellError(function, argument, rule_of(err), position)


def rule_of(err: InputError):
    """The rule an InputError states, with the offending value, without argument or position."""
    bare = InputError(err.argument, err.rule, None, err.value)
    return bare.describe(argument_label="\x00").split("\x00", 1)[1].strip()


#: Defaults of each Excel function's optional arguments, by function name (registered by
#: ``udfs.excel``'s ``_cells_in`` as each function is defined).
DEFAULTS: dict[str, dict[str, object]] = {}


def to_numbers(function, values, flats=None):
    """Excel arguments as float arrays; a blank optional argument takes its default.

    ``flats``: :func:`check_call_size`'s, for ranges whose rows it has looked at already."""
    defaults = DEFAULTS[function]
    flats = flats or {}
    arrays = {}
    for name, value in values.items():
        if name in defaults:
            arr = to_array(function, name, value, optional=True, flat=flats.get(name))
            if arr is None:
                default = defaults[name]
                arr = None if default is None else np.asarray(float(default))
        else:
            arr = to_array(function, name, value, flat=flats.get(name))
        arrays[name] = arr
    return arrays
