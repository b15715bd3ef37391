"""Issue 19 item 4: a report that scales.

Each planner is parsed once (the bounded scan reads the named cells' rows, formulas and saved
values from one parse; openpyxl never loads a worksheet), the files are read in a bounded
pool of processes (``--jobs``) with the same result, messages and Ctrl-C behaviour as one
process, and a long report shows a progress line on a terminal (never in a pipe). Speed and
memory are measured in ``benchmarks/bench_report.py``, not asserted here.
"""

from __future__ import annotations

import collections
import datetime as dt
import importlib
import io
import multiprocessing
import os
import pty
import signal
import subprocess
import sys
import time
import zipfile

import openpyxl
import pytest
from helpers import planner_cell
from helpers_report import CLI, READY, run_report, team_planners, tree
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill, rezip

from compute_lab.cli import main
from workbook_templates import named_cells, reader, xlsx_safety
from workbook_templates.files import NOTHING_WRITTEN
from workbook_templates.recalc import find_soffice, recalculate
from workbook_templates.report.command import PROGRESS_FROM_FILES
from workbook_templates.report.pool import MAX_JOBS
from workbook_templates.report.tables import consolidate

consolidate_module = importlib.import_module("workbook_templates.report.consolidate")


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def odd(template, tmp_path_factory):
    """A planner with cells of every kind the reader meets: a date, a formula input with and
    without a saved value, TRUE typed as =TRUE(), text over an output, a number as text."""
    path = tmp_path_factory.mktemp("odd") / "odd.xlsx"
    fill(template, path, [PLAN_A, dict(PLAN_B, start_date=dt.date(2027, 3, 31))])
    wb = openpyxl.load_workbook(path)
    for name, k, value in (
        ("pue", 1, "=1.1+0.1"),
        ("owner", 0, "=TRUE()"),
        ("compute_cost_usd", 1, "typed over"),
        ("scenario_name", 1, 12345),
    ):
        ws, coord = planner_cell(wb, name, k)
        ws[coord] = value
    wb.save(path)
    return path


def _two_loads(path, wanted):
    """The cells as the reader read them before: two read-only openpyxl loads, the named
    cells' box walked in each (formulas, then the values last saved)."""
    out = []
    for data_only in (False, True):
        wb = openpyxl.load_workbook(path, read_only=True, data_only=data_only)
        cells = {}
        for sheet, wanted_cells in wanted.items():
            rows = [r for r, _ in wanted_cells]
            cols = [c for _, c in wanted_cells]
            found = {}
            for r, row in enumerate(
                wb[sheet].iter_rows(min_row=min(rows), max_row=max(rows),
                                    min_col=min(cols), max_col=max(cols)),
                start=min(rows),
            ):  # fmt: skip
                for c, cell in enumerate(row, start=min(cols)):
                    if (r, c) in wanted_cells and cell.value is not None:
                        found[(r, c)] = (
                            cell.value if data_only else (cell.value, cell.data_type == "f")
                        )
            cells[sheet] = found
        wb.close()
        out.append(cells)
    return out


def _one_pass(path):
    data = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        parts = list(xlsx_safety.xml_parts(zf))
        styles, strings = named_cells.check_xml_parts(
            path, zf, [p for p in parts if not xlsx_safety.is_worksheet(p[0].filename)]
        )
        book = named_cells.read_book(data, styles, strings)
        optional = reader._check_names(path, book)
        names = [n for n in (*reader.INPUT_NAMES, *reader.OUTPUT_NAMES) if n not in optional]
        cells = reader._Cells(path, book, names)
        later = [p for p in parts if xlsx_safety.is_worksheet(p[0].filename)]
        typed, saved = named_cells.grab(path, zf, book, cells.wanted, later)
    typed = {s: {rc: v for rc, v in cs.items() if v[0] is not None} for s, cs in typed.items()}
    saved = {s: {rc: v for rc, v in cs.items() if v is not None} for s, cs in saved.items()}
    return cells.wanted, typed, saved


def _saved_by_libreoffice(path, folder):
    if find_soffice() is None:
        if os.environ.get("CI"):
            pytest.fail("LibreOffice (soffice) is required under CI")
        pytest.skip("LibreOffice not installed")
    (done,) = recalculate([path], folder)
    return done


@pytest.mark.libreoffice
@pytest.mark.parametrize("saved_by", ["openpyxl", "LibreOffice"])
def test_one_pass_reads_what_two_openpyxl_loads_read(odd, tmp_path, saved_by):
    """Every named cell: the same typed value, formula flag and saved value as the two
    read-only loads of the old reader (dates, formulas, booleans, text, saved values)."""
    path = odd if saved_by == "openpyxl" else _saved_by_libreoffice(odd, tmp_path)
    wanted, typed, saved = _one_pass(path)
    old_typed, old_saved = _two_loads(path, wanted)
    assert typed == old_typed
    assert saved == old_saved
    if saved_by == "LibreOffice":  # saved values were there to compare
        formulas = [(s, rc) for s, cells in typed.items() for rc, (_, f) in cells.items() if f]
        numbers = [saved[s].get(rc) for s, rc in formulas]
        assert sum(isinstance(v, int | float) for v in numbers) >= 20
    values = [v for cells in typed.values() for v, _ in cells.values()]
    assert dt.datetime(2027, 3, 31) in values and "=1.1+0.1" in values


def test_each_planner_is_parsed_once(teams, monkeypatch):
    """One bounded scan per part, worksheets, styles and shared strings included; openpyxl
    never loads the workbook, never parses a worksheet, the stylesheet or the strings."""
    scanned = collections.Counter()
    scan = xlsx_safety.scan_part

    def counting(path, zf, info, rows=None, tally=None):
        scanned[info.filename] += 1
        return scan(path, zf, info, rows, tally)

    def never(*args, **kwargs):
        raise AssertionError("parsed a second time")

    monkeypatch.setattr(xlsx_safety, "scan_part", counting)
    monkeypatch.setattr(openpyxl, "load_workbook", never)
    monkeypatch.setattr("openpyxl.worksheet._reader.WorkSheetParser.parse", never)
    monkeypatch.setattr("openpyxl.worksheet._reader.WorkSheetParser.parse_dimensions", never)
    monkeypatch.setattr("openpyxl.styles.stylesheet.apply_stylesheet", never)
    monkeypatch.setattr("openpyxl.reader.excel.read_string_table", never)
    planner = reader.read_planner(teams[0])
    assert [s.name for s in planner.scenarios] == ["NAME0000", PLAN_B["scenario_name"]]
    with zipfile.ZipFile(teams[0]) as z:
        xml = [n for n in z.namelist() if n.endswith((".xml", ".rels"))]
    assert set(scanned) == set(xml)
    assert set(scanned.values()) == {1}
    assert any(xlsx_safety.is_worksheet(n) for n in scanned)


@pytest.fixture(scope="module")
def teams(template, tmp_path_factory):
    folder = tmp_path_factory.mktemp("teams")
    return team_planners(template, folder, max(PROGRESS_FROM_FILES, 6))


@pytest.fixture(scope="module")
def bad(template, tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "bad.xlsx"
    fill(template, path, [dict(PLAN_A, scenario_name="bad one", accelerators=-4)])
    return path


def test_jobs_give_the_consolidation_of_one_process(teams, bad):
    files = [*teams[:3], bad, *teams[3:6]]
    one = consolidate(files, jobs=1)
    two = consolidate(files, jobs=2)
    assert [p.path for p in two.planners] == [p.path for p in one.planners]
    assert [e.describe() for e in two.bad] == [e.describe() for e in one.bad]
    assert set(two.tables) == set(one.tables)
    for name, table in one.tables.items():
        assert table.equals(two.tables[name]), name


def test_an_error_with_jobs_is_one_line_naming_file_and_cell(teams, bad, tmp_path):
    lines = []
    for jobs in ("1", "2"):
        rc, out, err = run_report(teams[0], bad, teams[1], "--out", tmp_path / f"h{jobs}.xlsx",
                                  "--jobs", jobs)  # fmt: skip
        assert rc == 2 and out == ""
        lines.append(err.splitlines())
    assert lines[0] == lines[1] and len(lines[0]) == 1
    assert str(bad) in lines[0][0] and "accelerators" in lines[0][0] and "!" in lines[0][0]
    assert not (tmp_path / "h1.xlsx").exists() and not (tmp_path / "h2.xlsx").exists()


@pytest.mark.parametrize("given", ["0", str(MAX_JOBS + 1), "two", "-1", "\u0662", "1.5", ""])
def test_jobs_out_of_bounds_are_refused_in_one_line(teams, tmp_path, capsys, given):
    rc = main(["report", str(teams[0]), "--out", str(tmp_path / "h.xlsx"), "--jobs", given])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1
    assert f"--jobs must be a whole number from 1 to {MAX_JOBS}" in err
    assert not (tmp_path / "h.xlsx").exists()


def test_a_pool_refusal_for_the_column_total_reads_again_when_the_count_allows(
    teams, tmp_path, monkeypatch, capsys
):
    """A reading process is given a lower bound on the columns left (100 for each file still
    being read before it); a file refused under it is read again with the exact count."""
    monkeypatch.setattr(consolidate_module, "MAX_TOTAL_SCENARIO_COLUMNS", 250)
    files = teams[:4]
    rc = main(["report", *map(str, files), "--out", str(tmp_path / "h.xlsx"), "--jobs", "2"])
    assert rc == 0, capsys.readouterr().err
    assert "from 4 file(s)" in capsys.readouterr().out
    monkeypatch.setattr(consolidate_module, "MAX_TOTAL_SCENARIO_COLUMNS", 25)
    rc = main(["report", *map(str, files), "--out", str(tmp_path / "h2.xlsx"), "--jobs", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.splitlines()) == 1
    assert str(files[3]) in err and "limit of 25 scenario columns" in err and "24 read" in err


def _on_a_terminal(args, cwd):
    """Run compute-lab with stderr on a pseudo-terminal: (exit code, stdout, terminal text)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([*CLI, *map(str, args)], stdout=subprocess.PIPE, stderr=slave,
                            stdin=subprocess.DEVNULL, cwd=cwd)  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    out = proc.stdout.read().decode()
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


def test_a_long_report_shows_progress_on_a_terminal_only(teams, tmp_path):
    args = ["report", *teams, "--csv", tmp_path / "csv"]
    rc, out, shown = _on_a_terminal(args, tmp_path)
    assert rc == 0, shown
    assert f"reading planners: {len(teams)} of {len(teams)}" in shown
    assert "\r" in shown and "writing the outputs of" in shown
    # The line is wiped: what is left on the screen is the warnings, each on its own line.
    screen = [line.split("\r")[-1] for line in shown.replace("\r\n", "\n").split("\n")]
    assert not any("reading planners" in line or "writing the" in line for line in screen)
    assert "Consolidated" in out and "reading" not in out
    rc, out, err = run_report(*teams, "--csv", tmp_path / "csv2")  # stderr a pipe: no progress
    assert rc == 0 and "reading planners" not in err and "\r" not in err


def test_a_short_report_shows_no_progress(teams, tmp_path):
    rc, _, shown = _on_a_terminal(["report", *teams[:2], "--csv", tmp_path / "csv"], tmp_path)
    assert rc == 0 and "reading planners" not in shown and "\r" not in shown.replace("\r\n", "")


@pytest.fixture(scope="module")
def sixty(template, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sixty")
    return team_planners(template, folder, 60)


@pytest.mark.parametrize("delay", [0.2, 0.9])
def test_ctrl_c_with_a_pool_exits_130_and_keeps_the_old_outputs(sixty, tmp_path, delay):
    """Ctrl-C sent to the command (the reading processes ignore it): exit 130, one line, the
    old outputs byte for byte."""
    old = tmp_path / "h.xlsx"
    old.write_bytes(b"the old hand-off")
    before = tree(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-c", READY, "report", *map(str, sixty), "--out", str(old),
         "--force", "--jobs", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr.readline().strip() == "ready"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert err.splitlines() in ([f"compute-lab report: interrupted; {NOTHING_WRITTEN}"],
                                ["compute-lab: interrupted"])  # fmt: skip
    assert out == "" and tree(tmp_path) == before


@pytest.mark.libreoffice
def test_shared_strings_read_in_the_scan_are_openpyxls(odd, tmp_path):
    """The strings read during the scan equal openpyxl's ``read_string_table``, rich text and
    all, for a planner saved by LibreOffice (openpyxl writes its texts inline) and the same
    with rich, phonetic, empty and escaped strings added."""
    from openpyxl.reader.strings import read_string_table

    saved = _saved_by_libreoffice(odd, tmp_path)
    with zipfile.ZipFile(saved) as zf:
        xml = zf.read("xl/sharedStrings.xml")
    rich = (
        b'<si><r><t>rich </t></r><r><rPr><b/></rPr><t xml:space="preserve"> text</t></r>'
        b'<rPh sb="0" eb="1"><t>ph</t></rPh></si><si><t/></si><si><t>a_x005F_b</t></si>'
    )
    richer = rezip(saved, tmp_path / "rich.xlsx",
                   {"xl/sharedStrings.xml": xml.replace(b"</sst>", rich + b"</sst>")})  # fmt: skip
    for path in (saved, richer):
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("xl/sharedStrings.xml")
            strings = named_cells.Strings()
            xlsx_safety.scan_part(path, zf, info, strings)
            with zf.open(info) as fh:
                assert strings.strings == read_string_table(fh)
        assert len(strings.strings) > 100
    assert strings.strings[-3:] == ["rich  text", "", "a_b"]


def test_a_run_without_a_scenario_names_the_files(template, tmp_path, capsys):
    """The one line of a run whose files hold no filled scenario column names them (a
    fuzzed sheet that lost its namespace reads as blank: the line must say which file)."""
    empty = fill(template, tmp_path / "empty.xlsx", [])
    rc = main(["report", str(empty), "--out", str(tmp_path / "h.xlsx")])
    (line,) = capsys.readouterr().err.splitlines()
    assert rc == 2 and "no scenario column has inputs" in line and str(empty) in line


@pytest.mark.parametrize(
    "part",
    [
        # a document type declaration the bytes would not show: UTF-16, or a declared encoding
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>'.encode(
            "utf-16"
        ),
        b'<?xml version="1.0" encoding="cp037"?><x/>',
        b'<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>',
        b"<x>&undefined;</x>",
        b"<a>" * 300 + b"</a>" * 300,  # over the depth bound
        b"<sst xmlns='http://schemas.openxmlformats.org/spreadsheetml/2006/main'><si><t>"
        + b"x" * 40_000
        + b"</t></si></sst>",  # a text over Excel's limit
        b"<x><y></x>",  # not well-formed
    ],
)
def test_a_doubtful_part_is_refused_in_one_line_naming_it(filled_path, part):
    """Each part is read by the one bounded streaming pass: a document type (whatever the
    encoding hides it in), an unknown encoding, an undefined entity, a part nested too deep, a
    text over Excel's limit and XML that is not well-formed are each refused in one line
    naming the part."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as zf:
        zf.writestr("xl/sharedStrings.xml", part)
    with zipfile.ZipFile(io.BytesIO(data.getvalue())) as zf:
        info = zf.getinfo("xl/sharedStrings.xml")
        with pytest.raises(reader.PlannerError) as caught:
            xlsx_safety.check_part(filled_path, zf, info, True, named_cells.Strings())
    (line,) = str(caught.value).splitlines()
    assert "xl/sharedStrings.xml" in line


@pytest.fixture
def filled_path(tmp_path):
    return tmp_path / "team.xlsx"


def _pid(path, columns_left):
    return os.getpid()


def test_the_reading_processes_are_forked_before_started_is_called(tmp_path):
    """``started`` (the command's import of its writers) is called once, after the first
    file is handed out, when the pool has forked its processes; the files are read there."""
    from workbook_templates.report.pool import read_files

    calls = []

    def started():
        calls.append([p.pid for p in multiprocessing.active_children()])

    paths = [tmp_path / f"{k}.xlsx" for k in range(6)]
    got = list(read_files(paths, _pid, 2, lambda: 4000, 100, started))
    assert len(calls) == 1 and len(calls[0]) == 2
    assert [p for p, _ in got] == paths
    assert {pid for _, pid in got} <= set(calls[0])
