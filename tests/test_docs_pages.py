"""docs/excel-functions.md's worked examples give what they say, and docs/windows.md's commands
are the project's real commands and flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import fenced_blocks

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


def test_the_plain_python_examples_run():
    import doctest

    block = "\n".join(fenced_blocks(FUNCTIONS.read_text(encoding="utf-8"), "python")[0])
    test = doctest.DocTestParser().get_doctest(block, {}, "excel-functions.md", None, 0)
    assert len(test.examples) >= 3
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0


def test_the_example_checker_catches_a_wrong_figure():
    assert _matches(46.42, "46.4") and not _matches(46.46, "46.4")
    assert _matches(3.2856e24, "3.2856E+24") and not _matches(3.29e24, "3.2856E+24")
    assert evaluate('TRAIN_QUANTILE("days", {0.1;0.9}, 671E9, 37E9, 14.8E12, 2048, "H100")')
    assert evaluate("TRAIN_KWH(37E9, 14.8E12, 400, , 1.2)") == excel.TRAIN_KWH(
        37e9, 14.8e12, 400, None, 1.2
    )


# ---------------------------------------------------------------------------------------------
# docs/windows.md: the classic route on Windows, checked against the code it describes
# ---------------------------------------------------------------------------------------------


def _powershell_lines():
    return [
        line.strip()
        for block in fenced_blocks(WINDOWS.read_text(encoding="utf-8"), "powershell")
        for line in block
        if line.strip()
    ]


def test_windows_page_compute_lab_commands_are_real_commands_and_flags():
    from compute_lab.cli import build_parser

    commands = [line for line in _powershell_lines() if line.startswith("compute-lab ")]
    assert {"compute-lab addin install", "compute-lab estimate"} <= set(commands)
    for line in commands:
        argv = line.split()[1:]
        parser, _ = build_parser(argv[0])
        args, extras = parser.parse_known_args(argv)  # exits 2 on an unknown command or flag
        assert not extras, (line, extras)
    # Full paths used without activation name the same commands.
    text = WINDOWS.read_text(encoding="utf-8")
    for exe in re.findall(r"\.venv\\Scripts\\([\w-]+)\.exe", text):
        assert exe in ("compute-lab", "pip", "python"), exe


def test_windows_page_installs_with_the_readmes_command_and_a_real_venv():
    lines = _powershell_lines()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    installs = [line for line in lines if line.startswith("pip install")]
    assert installs == ["pip install -e ."]
    classic = next(line for line in readme.splitlines() if "classic xlwings (free" in line)
    assert "`pip install -e .`" in classic
    assert "py -m venv .venv" in lines and ".venv\\Scripts\\Activate.ps1" in lines
    assert "Set-ExecutionPolicy -Scope CurrentUser -ExecutionPolicy RemoteSigned" in lines
    assert not [line for line in lines if line.startswith("make")]  # no make on Windows


def test_windows_page_states_what_addin_install_writes(tmp_path):
    """The settings the page names are those ``compute-lab addin install`` writes, and the
    lines it says the command prints are the command's own."""
    import sys

    from addin import classic

    text = " ".join(WINDOWS.read_text(encoding="utf-8").split())
    written = classic.update_config(tmp_path / "xlwings.conf", classic.config_settings())
    udf_line = next(line for line in written.splitlines() if line.startswith('"UDF MODULES"'))
    assert f"`{udf_line}`" in text
    assert '`"INTERPRETER_WIN","...\\compute-lab\\.venv\\Scripts\\python.exe"`' in text
    assert "%USERPROFILE%\\.xlwings\\xlwings.conf" in text
    printed = []
    classic.install(tmp_path / "xlwings.conf", config_only=True, out=printed.append)
    assert printed[0].startswith("wrote ") and "the `wrote ...` line" in text
    assert f"{sys.executable}" in printed[0]  # the Python that ran the command


def test_windows_page_quotes_the_real_messages():
    """Every message the troubleshooting list and the steps quote is the one the software
    shows: xlwings' own (its CLI and its add-in's VBA), Excel's setting, and ours."""
    import xlwings

    from udfs._cells import CellError

    text = " ".join(WINDOWS.read_text(encoding="utf-8").split())
    root = Path(xlwings.__file__).parent
    cli = " ".join((root / "cli.py").read_text(encoding="utf-8").split())
    ribbon = (root / "addin" / "RibbonXlwings.bas").read_text(encoding="utf-8", errors="replace")
    assert "If Excel is running, quit Excel and try again." in text
    assert '"Error: Failed to install the add-in: If Excel is running, " "quit Excel' in cli
    assert "Successfully installed the xlwings add-in!" in text
    assert "Successfully installed the xlwings add-in!" in cli
    assert '`Please save this workbook ("Book1") as a macro-enabled workbook first.`' in text
    assert '"Please save this workbook (""" + wb.Name + """) as a macro-enabled workbook' in ribbon
    assert "Sub ImportFunctions" in ribbon and "xlwings_udfs" in text
    main_bas = (root / "addin" / "Main.bas").read_text(encoding="utf-8", errors="replace")
    assert "`XLPy`" in text and "XLPy.CallUDF" in (root / "udfs.py").read_text()
    assert "Function XLPy()" in main_bas  # the add-in's code the imported functions call
    assert (
        "File > Options > Trust Center > Trust Center Settings... > Macro Settings" in text
        and "Trust access to the VBA project object model" in text
    )
    with pytest.raises(CellError) as err:
        excel.TRAIN_DAYS(37e9, 14.8e12, 2.5, 400)
    assert f"```text {err.value} ```" in text
    assert "```text =TRAIN_DAYS(37E9, 14.8E12, 2048, 400) ```" in text
    assert f"**{excel.TRAIN_DAYS(37e9, 14.8e12, 2048, 400):.8f}**" in text
    assert f"`xlwings_udfs` with the {len(excel.__all__)} functions" in text


def test_windows_page_shows_what_estimate_prints():
    import subprocess
    import sys

    shown = fenced_blocks(WINDOWS.read_text(encoding="utf-8"), "text")[0]
    out = subprocess.run(
        [str(Path(sys.executable).parent / "compute-lab"), "estimate"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.splitlines()[: len(shown)] == shown


def test_windows_page_has_five_troubleshooting_rows_and_is_linked():
    text = WINDOWS.read_text(encoding="utf-8")
    section = _section(text, "Troubleshooting: the five likeliest failures")
    rows = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 5  # the header and five failures: what you see, why, what to do
    assert all(line.count(" | ") == 2 for line in rows)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    classic = next(line for line in readme.split("\n- ") if "classic xlwings (free" in line)
    assert "(docs/windows.md)" in classic
    assert "(windows.md)" in (ROOT / "docs" / "excel-routes.md").read_text(encoding="utf-8")
