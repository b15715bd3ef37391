"""docs/excel-functions.md's worked examples give what they say, and docs/windows.md's commands
are the project's real commands and flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from udfs import excel

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS = ROOT / "docs" / "excel-functions.md"
WINDOWS = ROOT / "docs" / "windows.md"


# ---------------------------------------------------------------------------------------------
# docs/excel-functions.md: every example line, evaluated through udfs/excel.py
# ---------------------------------------------------------------------------------------------


def _section(text, heading):
    """The text of a ``## heading`` section, up to the next ``## ``."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _code_lines(text):
    """The lines of the fenced code blocks of ``text``."""
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


def _formula_end(line):
    """Where the formula at the start of ``line`` ends: after its outermost closing bracket."""
    depth, quoted = 0, False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "({":
            depth += 1
        elif not quoted and ch in ")}":
            depth -= 1
            if depth == 0:
                return i + 1
    raise AssertionError(f"unbalanced formula: {line}")


def examples():
    """``(formula, shown)`` of each example: the text after the formula, or the next line's."""
    lines = _code_lines(_section(FUNCTIONS.read_text(encoding="utf-8"), "Examples"))
    found = []
    for i, line in enumerate(lines):
        if not line.startswith("="):
            continue
        end = _formula_end(line)
        shown = line[end:].strip() or lines[i + 1].strip()
        found.append((line[1:end], shown))
    return found


def _unevaluable(formula):
    """A formula that refers to cells or leaves arguments out with ``...``."""
    bare = re.sub(r'"[^"]*"', '""', formula)
    return "..." in bare or re.search(r"\b[A-Z]{1,3}[0-9]+\b", bare) is not None


def evaluate(formula):
    """The value ``udfs/excel.py`` gives for an Excel formula of calls, numbers, text, array
    constants (``{0.1;0.9}``) and empty arguments."""
    parts = re.split(r'("[^"]*")', formula)
    for i in range(0, len(parts), 2):  # outside text constants
        p = parts[i]
        p = p.replace("{", "[[").replace("}", "]]").replace(";", "],[")  # array rows
        p = re.sub(r"(?<=[(,])(\s*)(?=[,)])", r"\1None", p)
        parts[i] = p
    names = {name: getattr(excel, name) for name in excel.__all__}
    return eval("".join(parts), {"__builtins__": {}, "None": None, **names})  # noqa: S307


_NUMBER = re.compile(r"[-+]?[\d,]*\.?\d+(?:E[-+]?\d+)?")


def _matches(value, text):
    """``value`` shown at the precision of ``text`` (``46.4``, ``2,281,667``, ``3.2856E+24``)."""
    mantissa = text.split("E")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    if "E" in text:
        return f"{value:.{decimals}E}" == f"{float(text.replace(',', '')):.{decimals}E}"
    return round(value, decimals) == float(text.replace(",", ""))


def _shape(value):
    return (len(value), len(value[0])) if isinstance(value, list) else (1, 1)


def test_every_function_has_a_worked_example():
    evaluated = " ".join(f for f, _ in examples() if not _unevaluable(f))
    missing = [n for n in excel.__all__ if not re.search(rf"\b{n}\(", evaluated)]
    assert not missing, f"no worked example in docs/excel-functions.md for {missing}"


@pytest.mark.parametrize(("formula", "shown"), examples())
def test_the_worked_example_gives_what_it_shows(formula, shown):
    if _unevaluable(formula):
        assert "A2:A5" in formula or "..." in formula  # the only ones that refer to a sheet
        return
    value = evaluate(formula)
    if shown.startswith('"'):
        assert value == shown.split('"')[1]
    elif m := re.match(r"spills (\d+) rows x (\d+) columns", shown):
        assert _shape(value) == (int(m.group(1)), int(m.group(2)))
    elif shown.startswith("spills "):
        numbers = _NUMBER.findall(shown)
        flat = [v for row in value for v in row]
        assert len(flat) == len(numbers) and all(map(_matches, flat, numbers)), (flat, shown)
    else:
        number = _NUMBER.match(shown)
        assert number, f"{formula}: shown {shown!r} is not a value"
        assert isinstance(value, float) and _matches(value, number.group()), (value, shown)


def test_the_example_checker_catches_a_wrong_figure():
    assert _matches(46.42, "46.4") and not _matches(46.46, "46.4")
    assert _matches(3.2856e24, "3.2856E+24") and not _matches(3.29e24, "3.2856E+24")
    assert evaluate('TRAIN_QUANTILE("days", {0.1;0.9}, 671E9, 37E9, 14.8E12, 2048, "H100")')
    assert evaluate("TRAIN_KWH(37E9, 14.8E12, 400, , 1.2)") == excel.TRAIN_KWH(
        37e9, 14.8e12, 400, None, 1.2
    )
