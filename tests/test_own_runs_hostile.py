"""Hostile own-runs files: formula-like text, huge fields, control characters, FIFOs.

An own-runs file's text reaches the planner's Our runs sheet (``templates --own-runs``), the
tables and messages of every command: formula-like names stay text in every workbook, every
field is plain text of at most ``MAX_TEXT_CHARS`` characters, and only a regular file is read.
"""

from __future__ import annotations

import os
import re
import threading
import zipfile
from xml.etree import ElementTree

import openpyxl
import pytest
from helpers import require_soffice
from test_own_runs import HEADER, OWN_RUNS_COMMANDS, _argv, refused_own_runs, write

from compute_lab.cli import main, parse_number
from udfs import own_runs, validation
from udfs.validation import CommandError
from workbook_templates import reader
from workbook_templates.planner import own_runs as sheet
from workbook_templates.reader import MAX_TEXT_CHARS

#: Text a spreadsheet would run as a formula if it were written as one (and the fullwidth
#: lookalike an East Asian input method types).
FORMULAS = (
    "=cmd|' /C calc'!A0",
    '=HYPERLINK("http://x","click")',
    "@SUM(1+1)",
    "+1+2",
    "-1+2",
    "\uff1d1+3",
)
ORGANISATION = '=HYPERLINK("http://x")'


def _csv_field(text):
    return '"' + text.replace('"', '""') + '"'


def _formula_file(tmp_path):
    rows = "".join(
        f"{_csv_field(name)},{_csv_field(ORGANISATION)},7B,7B,2T,H100,512,{120000 + k}\n"
        for k, name in enumerate(FORMULAS)
    )
    return write(tmp_path, HEADER + rows, "formulas.csv")


_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _sheet_cells(path, title):
    """{coordinate: (its t attribute, whether it holds a formula)} of sheet ``title``, from
    the saved XML."""
    with zipfile.ZipFile(path) as z:
        book = ElementTree.fromstring(z.read("xl/workbook.xml"))
        rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
        (rid,) = [s.get(_REL) for s in book.iter(f"{_MAIN}sheet") if s.get("name") == title]
        (target,) = [r.get("Target") for r in rels if r.get("Id") == rid]
        part = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
        xml = ElementTree.fromstring(z.read(part))
    return {
        c.get("r"): (c.get("t", "n"), c.find(f"{_MAIN}f") is not None)
        for c in xml.iter(f"{_MAIN}c")
    }


def _every_formula(path):
    """The text of every formula of every sheet of the workbook ``path``."""
    with zipfile.ZipFile(path) as z:
        return [
            f
            for n in z.namelist()
            if n.startswith("xl/worksheets/") and n.endswith(".xml")
            for f in re.findall(r"<f[^>]*>(.*?)</f>", z.read(n).decode(), re.S)
        ]


@pytest.mark.libreoffice
def test_formula_like_names_and_organisation_are_written_as_text_and_read_back(tmp_path):
    """templates --own-runs with names and an organisation that are formulas: stored as text
    (inline or shared strings, no formula) on the Our runs sheet, shown as typed after
    LibreOffice recalculates, and read back as typed by the report."""
    out = tmp_path / "out"
    assert main(["templates", "--out", str(out), "--own-runs", str(_formula_file(tmp_path))]) == 0
    planner = out / "training-run-planner.xlsx"
    cells = _sheet_cells(planner, sheet.TITLE)
    for k in range(len(FORMULAS)):
        for letter in (sheet.LETTERS["name"], sheet.LETTERS["organisation"]):
            kind, formula = cells[f"{letter}{sheet.FIRST_ROW + k}"]
            assert kind in ("inlineStr", "s") and not formula, (letter, k, kind)
    for written in sorted(out.glob("*.xlsx")):  # no formula of any workbook holds the text
        assert not [f for f in _every_formula(written) if "calc" in f or "http://x" in f]
        assert not [f for f in _every_formula(written) if "SUM(1+1)" in f]
    require_soffice()
    from workbook_templates.recalc import recalculate

    (done,) = recalculate([planner], tmp_path / "lo")
    ws = openpyxl.load_workbook(done, data_only=True)[sheet.TITLE]
    shown = [ws.cell(sheet.FIRST_ROW + k, 1).value for k in range(len(FORMULAS))]
    assert shown == list(FORMULAS)
    assert {ws.cell(sheet.FIRST_ROW + k, 2).value for k in range(len(FORMULAS))} == {ORGANISATION}
    read = reader.read_planner(done).own_runs
    assert list(read["name"]) == list(FORMULAS)
    assert set(read["organisation"]) == {ORGANISATION}
    hand_off = tmp_path / "handoff.xlsx"
    assert main(["report", str(done), "--out", str(hand_off)]) == 0
    assert not [f for f in _every_formula(hand_off) if "calc" in f or "http://x" in f]


def test_the_planners_text_bound_is_the_own_runs_one():
    """One named bound of typed text: the planner's input cells and own-runs fields."""
    assert reader.MAX_TEXT_CHARS is validation.MAX_TEXT_CHARS == 255


#: Each hostile field -> (the file, the row and column its one line names, the rule's words).
HOSTILE = {
    "200,000-character name": (
        HEADER + "a" * 200_000 + ",Acme,7B,7B,2T,H100,512,120000\n",
        "row 2, column name: is 200,000 characters long, over the limit of 255",
    ),
    "200,000-character tokens": (
        HEADER + "a,Acme,7B,7B," + "9" * 200_000 + ",H100,512,120000\n",
        "row 2, column tokens: is 200,000 characters long",
    ),
    "100,000-character organisation, quoted, on row 3": (
        HEADER + f'a,,7B,7B,2T,H100,512,120000\nb,"{"o" * 100_000}",7B,7B,2T,H100,512,120000\n',
        "row 3, column organisation: is 100,000 characters long",
    ),
    "a name one over the bound": (
        HEADER + "n" * (MAX_TEXT_CHARS + 1) + ",Acme,7B,7B,2T,H100,512,120000\n",
        f"row 2, column name: is {MAX_TEXT_CHARS + 1} characters long",
    ),
    "control character in a name": (
        HEADER + "ab\x01c,Acme,7B,7B,2T,H100,512,120000\n",
        "row 2, column name: holds the control character \\x01",
    ),
    "NUL in an organisation": (
        HEADER + "a,Ac\x00me,7B,7B,2T,H100,512,120000\n",
        "row 2, column organisation: holds the control character \\x00",
    ),
    "quoted line break in a name": (
        HEADER + '"two\nlines",Acme,7B,7B,2T,H100,512,120000\n',
        "row 2, column name: holds the control character \\n",
    ),
    "tab before a formula": (
        HEADER + '"\t=1+1",Acme,7B,7B,2T,H100,512,120000\n',
        "row 2, column name: holds the control character \\t",
    ),
    "bidirectional override in a name": (
        HEADER + "abc\u202eexe.txt,Acme,7B,7B,2T,H100,512,120000\n",
        "row 2, column name: holds the control character \\u202e",
    ),
    "control character in an accelerator": (
        HEADER + "a,Acme,7B,7B,2T,H1\x0700,512,120000\n",
        "row 2, column accelerator: holds the control character \\x07",
    ),
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_field_is_refused_naming_its_row_and_column(tmp_path, kind):
    text, where = HOSTILE[kind]
    path = write(tmp_path, text)
    with pytest.raises(CommandError) as err:
        own_runs.read(path, parse_number)
    line = validation.console_line(str(err.value))
    assert line.startswith(f"{path}: {where}"), line
    assert "\n" not in line and len(line) < 500


@pytest.mark.parametrize("command", OWN_RUNS_COMMANDS)
@pytest.mark.parametrize(
    "kind", ["200,000-character name", "control character in a name", "a name one over the bound"]
)
def test_each_command_refuses_a_hostile_field_in_one_line_writing_nothing(
    tmp_path, command, kind, capsys
):
    """Exit 2, one line naming the file, row and column (not an internal error, exit 1), and
    nothing written."""
    text, where = HOSTILE[kind]
    path, line = refused_own_runs(capsys, tmp_path, command, text)
    assert line.startswith(f"compute-lab {command}: error: {path}: {where}"), line


def test_a_name_at_the_bound_is_written_in_full(tmp_path):
    """A name of MAX_TEXT_CHARS characters is taken and written whole to the planner."""
    name = "n" * MAX_TEXT_CHARS
    path = write(tmp_path, HEADER + name + ",Acme,7B,7B,2T,H100,512,120000\n")
    out = tmp_path / "out"
    assert main(["templates", "--out", str(out), "--own-runs", str(path)]) == 0
    ws = openpyxl.load_workbook(out / "training-run-planner.xlsx")[sheet.TITLE]
    assert ws.cell(sheet.FIRST_ROW, 1).value == name


def test_a_planner_row_with_a_long_or_control_character_name_is_refused_at_its_cell(
    tmp_path, capsys
):
    """The report reads the Our runs sheet by the file's rules: a name past the bound is one
    line naming the sheet, row and column."""
    from workbook_templates.planner import build

    wb = build()
    ws = wb[sheet.TITLE]
    for j, value in enumerate(("x" * 300, "Acme", "7B", "7B", "2T", "H100 SXM", 512, 120000)):
        ws.cell(sheet.FIRST_ROW, 1 + j).value = value
    path = tmp_path / "planner.xlsx"
    wb.save(path)
    assert main(["report", str(path), "--csv", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"sheet 'Our runs': row {sheet.FIRST_ROW}, column A (name): is 300 characters" in line
    assert not (tmp_path / "out").exists()


def _not_regular(tmp_path, kind):
    if kind == "FIFO":
        path = tmp_path / "runs.fifo"
        os.mkfifo(path)
        return path
    if kind == "empty name":
        return ""
    if kind == "folder":
        path = tmp_path / "runs.d"
        path.mkdir()
        return path
    return "/dev/null"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("command", OWN_RUNS_COMMANDS)
@pytest.mark.parametrize("kind", ["FIFO", "folder", "device", "empty name"])
def test_only_a_regular_file_is_read_and_a_fifo_does_not_hang(tmp_path, command, kind, capsys):
    """A FIFO, a folder or a device given to --own-runs: one line, exit 2, before any wait
    for a writer. The command runs in a thread so that a wait fails the test (the FIFO is
    then opened for writing, which ends the wait) instead of hanging it."""
    path = _not_regular(tmp_path, kind)
    argv = [*_argv(command, tmp_path), "--own-runs", str(path)]
    result = []
    run = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    run.start()
    run.join(120)  # a guard against a hang, not a measure of speed
    waited = run.is_alive()
    if waited:
        os.close(os.open(path, os.O_WRONLY))  # the writer it waits for: it reads nothing
        run.join()
    assert not waited, "the command waited for a writer on the FIFO"
    assert result == [2]
    (line,) = capsys.readouterr().err.strip().splitlines()
    if kind == "empty name":
        assert line.endswith(
            "error: --own-runs is empty; give the own-runs CSV file, e.g. runs.csv"
        ), line
    else:
        assert f"{path}: is a " in line and "not a regular file" in line, line
    assert not (tmp_path / "out").exists()


def _runs_in_a_thread(target):
    """(finished, result) of ``target()`` run in a thread; a call still waiting after the
    guard is released by opening the FIFO for writing (the guard stops a hang, it does not
    measure speed)."""
    result = []
    run = threading.Thread(target=lambda: result.append(target()), daemon=True)
    run.start()
    run.join(120)
    return not run.is_alive(), result


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("face", ["own runs", "planner"])
def test_a_path_made_a_fifo_after_its_stat_is_refused_without_waiting(tmp_path, face, monkeypatch):
    """The opened file's own stat is checked too: a path whose stat said regular file (a
    file replaced by a FIFO in between, simulated here) is refused, not waited on."""
    regular = write(tmp_path, "x")
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    real_stat = os.stat
    monkeypatch.setattr(
        os, "stat", lambda p, *a, **k: real_stat(regular if str(p) == str(fifo) else p, *a, **k)
    )

    def call():
        try:
            if face == "own runs":
                own_runs.read(fifo, parse_number)
            else:
                reader.read_planner(fifo)
        except (CommandError, reader.PlannerError) as err:
            return str(err)
        return None

    finished, result = _runs_in_a_thread(call)
    if not finished:
        os.close(os.open(fifo, os.O_WRONLY))
    assert finished, "the reader waited for a writer on the FIFO"
    assert result and "not a regular file" in result[0], result
