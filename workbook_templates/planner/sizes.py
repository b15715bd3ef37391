"""Parameters and tokens typed as text (``70B``, ``2T``, ``15.6T``, ``1.5e12``), read with native
formulas (Excel 2010 functions, the same in LibreOffice and Gnumeric).

The grammar is :mod:`udfs.numbers`' planner subset (:func:`udfs.numbers.parse_size`): a decimal
with an optional exponent, then an optional suffix from the ``size_suffixes`` list (Accelerators
sheet: K, M, B, G, T, P with their multipliers in ``size_multipliers``); spaces around them. The
value is ``VALUE(the decimal) x the multiplier``, as the Python function computes it, so the
report reads the same number the planner computed. The decimal point is swapped for the
spreadsheet's own (``MID(1/2&"",2,1)``: "." or ","), so the text reads the same in any locale.
"""

from __future__ import annotations

from udfs.numbers import SIZE_INPUTS, SUFFIXES

__all__ = ["SIZE_INPUTS", "SUFFIX_ROWS", "size_excel", "size_validation"]
#: The suffix list as the Accelerators sheet shows it: one capital letter each.
SUFFIX_ROWS = tuple((letter.upper(), value) for letter, value in SUFFIXES.items())
#: The spreadsheet's decimal separator, read from a number turned into text.
_POINT = 'MID(1/2&"",2,1)'
#: The largest double, exact (2 - 2^-52) x 2^1023: a literal of it, saved by LibreOffice with
#: 15 digits, would read back as another number.
_LARGEST = "(2-2^-52)*2^1023"
#: Characters a decimal with an exponent may hold (the text is in capitals).
_ALLOWED = "0123456789.E+-"


def _strip(text, chars):
    for ch in chars:
        text = f'SUBSTITUTE({text},"{ch}","")'
    return text


def _count(text, part):
    return f'(LEN({text})-LEN(SUBSTITUTE({text},"{part}","")))/{len(part)}'


def size_excel(ref):
    """Excel text of the number in text ``ref`` (``"70B"`` -> 7E+10), or "" when the text is not
    of the grammar: a decimal (digits, one point, an exponent ``E``, a sign only after ``E``)
    and an optional suffix of ``size_suffixes``, whose value is below the largest double (as
    :func:`udfs.numbers.parse_size` refuses a text past it as not finite)."""
    t = f"TRIM({ref})"
    k = f"MATCH(RIGHT({t},1),size_suffixes,0)"
    m = f"UPPER(IF(ISNUMBER({k}),TRIM(LEFT({t},LEN({t})-1)),{t}))"
    multiplier = f"IF(ISNUMBER({k}),INDEX(size_multipliers,{k},1),1)"
    shape = (
        f"AND(LEN({m})>0,LEN({_strip(m, _ALLOWED)})=0,"
        f'ISNUMBER(FIND(LEFT({m},1),"0123456789.")),'
        f"{_count(m, '+')}+{_count(m, '-')}={_count(m, 'E+')}+{_count(m, 'E-')},"
        f"{_count(m, '.')}<=1,{_count(m, 'E')}<=1)"
    )
    value = f'VALUE(SUBSTITUTE({m},".",{_POINT}))*{multiplier}'
    # text past the largest double (1e999, 9e999B) is not a finite number (udfs.numbers):
    # LibreOffice reads it as the largest double itself, Gnumeric as more
    return f'IFERROR(IF(AND({shape},{value}<{_LARGEST}),{value},""),"")'


def size_validation(cell, total=None):
    """Data-validation formula (at most 255 characters) of a size input: a number > 0 (<= the
    total parameters when ``total`` is given and a number), or text whose decimal part reads as
    a number before an optional suffix of ``size_suffixes``; the full grammar is the as-used
    row's, whose failure is an ERROR on Checks naming the cell."""
    t = f"TRIM({cell})"
    k = f"ISNUMBER(MATCH(RIGHT({t}),size_suffixes,0))"
    m = f"IF({k},LEFT({t},LEN({t})-1),{t})"
    limit = f",OR(NOT(ISNUMBER({total})),{cell}<={total})" if total else ""
    return (
        f"OR(AND(ISNUMBER({cell}),{cell}>0{limit}),"
        f'AND(ISTEXT({cell}),ISNUMBER(-SUBSTITUTE({m},".",{_POINT}))))'
    )
