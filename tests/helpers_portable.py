"""The formula lint: forms that every spreadsheet engine reads the same way, as named rules.

Each rule is a :class:`Rule` with a name and the message a test prints when a formula breaks
it; :func:`lint` returns the broken rules of one formula. The workbooks are tested in Excel's
file format with LibreOffice and Gnumeric (tests/test_engines.py), and must open in Excel 2010
and later, so a form is refused when an engine is known to read it differently, when it works
only through an engine's leniency, or when Excel 2010 lacks it.

The formula is split with openpyxl's tokenizer into calls with their arguments, so a rule sees
which function an operand is an argument of. ``ranges`` are the defined names that cover more
than one cell (a row of the planner, a column of a catalogue).

Examples
--------
>>> [r.name for r in lint("=INDEX(scenario_name,2)", {"scenario_name"})]
['index-row-and-column']
>>> lint("=INDEX(scenario_name,1,2)", {"scenario_name"})
[]
>>> [r.name for r in lint("=total_cost_usd*2", {"total_cost_usd"})]
['range-where-one-value-is-wanted']
>>> [r.name for r in lint("=SUM(IF(A1:A3>0,1,0))", set())]
['range-where-one-value-is-wanted']
>>> [r.name for r in lint("=XLOOKUP(1,A1,B1)+NORM.S.INV(0.9)", set())]
['excel-2010-functions', 'xlfn-prefix']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from openpyxl.formula import Tokenizer
from openpyxl.utils import FORMULAE


@dataclass(frozen=True)
class Rule:
    name: str
    message: str


INDEX_ROW_AND_COLUMN = Rule(
    "index-row-and-column",
    "INDEX needs an explicit row and column, INDEX(range,row,column): on a one-row range "
    "Excel and LibreOffice read a lone INDEX(range,k) as the column, Gnumeric as the row",
)
RANGE_AS_VALUE = Rule(
    "range-where-one-value-is-wanted",
    "a range of several cells where one value is wanted: Excel takes the cell in the formula's "
    "row or column (implicit intersection) or spills it (dynamic arrays), other engines "
    "evaluate it as an array or give #VALUE!; pick the cell with INDEX(range,row,column), or "
    "pass the range straight to a function that takes ranges (SUM, MATCH, COUNTIF...)",
)
EXCEL_2010 = Rule(
    "excel-2010-functions",
    "a function Excel 2010 does not have (a later or dynamic-array function), or no "
    "spreadsheet function at all: Excel 2010 and the other engines show #NAME?",
)
XLFN_PREFIX = Rule(
    "xlfn-prefix",
    "a function that Excel 2010 added is stored with the _xlfn. prefix (_xlfn.NORM.S.INV): "
    "without it Excel shows #NAME?",
)
ENGINE_SPECIFIC = Rule(
    "engine-specific-function",
    "INDIRECT, OFFSET, CELL and INFO answer differently per engine (address syntax, "
    "volatility, what the engine knows about itself); refer to the cells directly",
)
ARRAY_FORMULA = Rule(
    "no-array-formula",
    "an array (CSE) formula: engines differ in how they size and spill it; write one scalar "
    "formula per cell",
)
MISSING_IN_AN_ENGINE = Rule(
    "function-every-engine-has",
    "an Excel 2010 function Gnumeric 1.12 does not have (NORM.S.DIST, AGGREGATE, "
    "CEILING.PRECISE, FLOOR.PRECISE, T.DIST: #NAME?); use an older equivalent (NORMSDIST...)",
)
STRUCTURED_REFERENCE = Rule(
    "no-structured-reference",
    "a Table reference (Table[column]) or an external-book reference: Gnumeric 1.12 cannot "
    "read it (the cell becomes an error) and drops the Table; refer to the cell range",
)
SUBTOTAL_NUMBER = Rule(
    "subtotal-function-number",
    "SUBTOTAL's function number must be a literal 1 to 11: Gnumeric gives #NUM! for the "
    "101-111 forms (those that skip hidden rows, Excel's Table default)",
)
TEXT_ARITHMETIC = Rule(
    "no-text-arithmetic",
    'text in arithmetic ("5"*1): Excel converts it, LibreOffice converts it or gives #VALUE! '
    "depending on its settings; use numbers",
)
RULES = (
    INDEX_ROW_AND_COLUMN,
    RANGE_AS_VALUE,
    EXCEL_2010,
    XLFN_PREFIX,
    ENGINE_SPECIFIC,
    MISSING_IN_AN_ENGINE,
    STRUCTURED_REFERENCE,
    SUBTOTAL_NUMBER,
    ARRAY_FORMULA,
    TEXT_ARITHMETIC,
)

#: Functions Excel 2010 added, stored in the file as ``_xlfn.NAME``. Each was recalculated in
#: LibreOffice and Gnumeric 1.12.55 (the same value to 1e-15), except those in
#: :data:`MISSING_IN_GNUMERIC`.
XLFN_2010 = {
    "NORM.S.INV", "NORM.S.DIST", "NORM.INV", "NORM.DIST", "LOGNORM.INV", "LOGNORM.DIST",
    "PERCENTILE.INC", "PERCENTILE.EXC", "QUARTILE.INC", "QUARTILE.EXC", "STDEV.S", "STDEV.P",
    "VAR.S", "VAR.P", "MODE.SNGL", "RANK.EQ", "RANK.AVG", "CEILING.PRECISE", "FLOOR.PRECISE",
    "AGGREGATE", "T.DIST", "T.INV", "CHISQ.DIST", "EXPON.DIST", "GAMMA.DIST", "BINOM.DIST",
    "CONFIDENCE.NORM",
}  # fmt: skip
#: Excel 2010 functions Gnumeric 1.12.55 answers with #NAME?.
MISSING_IN_GNUMERIC = {"NORM.S.DIST", "AGGREGATE", "CEILING.PRECISE", "FLOOR.PRECISE", "T.DIST"}
#: Functions that exist only after Excel 2010, or only as dynamic arrays.
LATE_FUNCTIONS = {
    "XLOOKUP", "XMATCH", "LET", "LAMBDA", "FILTER", "SORT", "SORTBY", "UNIQUE", "SEQUENCE",
    "RANDARRAY", "IFS", "SWITCH", "MAXIFS", "MINIFS", "CONCAT", "TEXTJOIN", "IFNA",
}  # fmt: skip
_ENGINE_SPECIFIC = {"INDIRECT", "OFFSET", "CELL", "INFO"}

#: Function -> which arguments (0-based) take a range; ``"all"``: every argument.
RANGE_ARGUMENTS = {
    **dict.fromkeys(
        (
            "SUM",
            "MIN",
            "MAX",
            "AVERAGE",
            "COUNT",
            "COUNTA",
            "COUNTBLANK",
            "AND",
            "OR",
            "PRODUCT",
            "MEDIAN",
            "SUMPRODUCT",
            "SUMSQ",
            "ROWS",
            "COLUMNS",
        ),
        "all",
    ),  # fmt: skip
    "INDEX": {0},
    "MATCH": {1},
    "COUNTIF": {0},
    "SUMIF": {0, 2},
    "AVERAGEIF": {0, 2},
    "COUNTIFS": {0, 2, 4, 6, 8},
    "SUMIFS": {0, 1, 3, 5, 7},
    "VLOOKUP": {1},
    "HLOOKUP": {1},
    "LOOKUP": {1, 2},
    "LARGE": {0},
    "SMALL": {0},
    "SUBTOTAL": "from 1",
}

_CELL_RANGE = re.compile(r"^(?:.+!)?\$?[A-Z]{1,3}\$?\d+:\$?[A-Z]{1,3}\$?\d+$")
_WHOLE = re.compile(r"^(?:.+!)?(\$?[A-Z]{1,3}:\$?[A-Z]{1,3}|\$?\d+:\$?\d+)$")
_ARITHMETIC = {"+", "-", "*", "/", "^"}


@dataclass
class _Call:
    """A function call: its name and its arguments, each a list of tokens and calls."""

    name: str
    args: list = field(default_factory=lambda: [[]])


def _parse(formula):
    """The formula as a top-level argument list of tokens and :class:`_Call` objects."""
    root = _Call("")
    stack = [root]
    for tok in Tokenizer(formula).items:
        if tok.type == "FUNC" and tok.subtype == "OPEN":
            call = _Call(tok.value.lstrip(":")[:-1].upper())
            if tok.value.startswith(":"):  # INDEX(...):INDEX(...), a range built of two refs
                stack[-1].args[-1].append(_Token("OPERATOR-INFIX", "", ":"))
            stack[-1].args[-1].append(call)
            stack.append(call)
        elif tok.type == "FUNC" and tok.subtype == "CLOSE":
            stack.pop()
        elif tok.type == "SEP" and tok.subtype == "ARG" and len(stack) > 1:
            stack[-1].args.append([])
        elif tok.type == "WHITE-SPACE":
            continue
        else:
            stack[-1].args[-1].append(_Token(tok.type, tok.subtype, tok.value))
    return root


@dataclass
class _Token:
    type: str
    subtype: str
    value: str


def _is_range(item, ranges):
    """Whether an argument item stands for several cells."""
    if isinstance(item, _Token) and item.type == "OPERAND" and item.subtype == "RANGE":
        text = item.value
        return bool(_CELL_RANGE.match(text) or _WHOLE.match(text)) or text in ranges
    return False


def _check_operand(item, found):
    if item.type == "OPERAND" and item.subtype == "RANGE" and "[" in item.value:
        found.add(STRUCTURED_REFERENCE)


def _takes_range(call, position):
    spec = RANGE_ARGUMENTS.get(call.name.removeprefix("_XLFN."))
    if spec == "all":
        return True
    if spec == "from 1":
        return position >= 1
    return bool(spec) and position in spec


#: Functions whose range arguments stay arrays inside SUMPRODUCT in Excel, LibreOffice and
#: Gnumeric (tried): SUMPRODUCT((A1:A9=B1)*(ROW(A1:A9)<5)) counts the same in each. Gnumeric
#: takes one cell of a range given to TRIM, UPPER or ISERROR there, so those stay refused.
ARRAY_KEEPING = {"ROW"}


def _walk(call, ranges, found, array=False):
    """Check ``call``'s arguments; ``array``: inside SUMPRODUCT, where a range compared or
    multiplied is evaluated as an array by every engine."""
    array = array or call.name == "SUMPRODUCT"
    for position, arg in enumerate(call.args):
        built = any(isinstance(i, _Token) and i.value == ":" for i in arg)  # ref:ref
        alone = len(arg) == 1 or (built and len(arg) == 3)
        for i, item in enumerate(arg):
            if isinstance(item, _Call):
                _check_call(item, found)
                _walk(item, ranges, found, array and item.name in ARRAY_KEEPING)
            elif _is_range(item, ranges) or (built and item.value == ":"):
                if not (array or (alone and _takes_range(call, position))):
                    found.add(RANGE_AS_VALUE)
                _check_operand(item, found)
            elif isinstance(item, _Token) and item.subtype == "RANGE":
                _check_operand(item, found)
            elif isinstance(item, _Token) and item.subtype == "TEXT":
                near = [arg[j] for j in (i - 1, i + 1) if 0 <= j < len(arg)]
                if any(isinstance(n, _Token) and n.value in _ARITHMETIC for n in near):
                    found.add(TEXT_ARITHMETIC)


def _check_call(call, found):
    name = call.name
    if name == "INDEX" and len(call.args) != 3:
        found.add(INDEX_ROW_AND_COLUMN)
    bare = name.removeprefix("_XLFN.")
    if bare in _ENGINE_SPECIFIC:
        found.add(ENGINE_SPECIFIC)
    if name == "SUBTOTAL":
        first = call.args[0]
        number = first[0].value if len(first) == 1 and isinstance(first[0], _Token) else ""
        if not (number.isdigit() and 1 <= int(number) <= 11):
            found.add(SUBTOTAL_NUMBER)
    if name.startswith("_XLFN."):
        if bare not in XLFN_2010:
            found.add(EXCEL_2010)
        elif bare in MISSING_IN_GNUMERIC:
            found.add(MISSING_IN_AN_ENGINE)
    elif name in XLFN_2010:
        found.add(XLFN_PREFIX)
    elif name in LATE_FUNCTIONS or name not in FORMULAE:
        found.add(EXCEL_2010)


def lint(formula, ranges=frozenset()):
    """The rules ``formula`` (text with its leading ``=``) breaks, in the order of RULES.

    ``ranges``: defined names that cover more than one cell.
    """
    found = set()
    _walk(_parse(str(formula)), set(ranges), found)
    return [r for r in RULES if r in found]


def multi_cell_names(wb):
    """The workbook's defined names that cover more than one cell."""
    out = set()
    for name, dn in wb.defined_names.items():
        if any(":" in ref for _, ref in dn.destinations):
            out.add(name)
    return out


def lint_workbook(wb):
    """Every broken rule of an openpyxl workbook (formulas, not values): a list of
    ``"sheet!cell: rule-name: message (formula)"`` lines, empty when all is portable."""
    from openpyxl.worksheet.formula import ArrayFormula

    ranges = multi_cell_names(wb)
    out = []
    for ws in wb:
        for row in ws.iter_rows():
            for c in row:
                if isinstance(c.value, ArrayFormula):
                    out.append(f"{ws.title}!{c.coordinate}: {ARRAY_FORMULA.name}: "
                               f"{ARRAY_FORMULA.message}")  # fmt: skip
                elif c.data_type == "f":
                    for rule in lint(c.value, ranges):
                        out.append(f"{ws.title}!{c.coordinate}: {rule.name}: {rule.message} "
                                   f"({c.value})")  # fmt: skip
    return out


def lint_rules_of_sheets(wb):
    """Broken rules of conditional-format and custom validation formulas (stored without the
    leading ``=``), as lines like :func:`lint_workbook`'s."""
    ranges = multi_cell_names(wb)
    out = []
    for ws in wb:
        texts = [(str(cf.sqref), f) for cf in ws.conditional_formatting for r in cf.rules
                 for f in (r.formula or [])]  # fmt: skip
        texts += [(str(dv.sqref), dv.formula1) for dv in ws.data_validations.dataValidation
                  if dv.type == "custom" and dv.formula1]  # fmt: skip
        for where, text in texts:
            for rule in lint("=" + text, ranges):
                out.append(f"{ws.title}!{where}: {rule.name}: {rule.message} ({text})")
    return out
