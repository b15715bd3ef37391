"""``compute-lab report`` against issue 22's crafted inputs: bounds on scenario columns and text,
runs shorter than a day, counts typed in billions, odd names and interrupted runs."""

from __future__ import annotations

import datetime as dt
import errno
import gc
import importlib
import os
import signal
import subprocess
import sys

import openpyxl
import pandas as pd
import pytest
from helpers import interrupt_when_ready, planner_cell
from helpers_report import READY, digest, run_report, team_planners, tree
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill

from compute_lab.cli import main
from udfs import engine
from workbook_templates.files import NOTHING_WRITTEN
from workbook_templates.reader import MAX_TEXT_CHARS

consolidate_module = importlib.import_module("workbook_templates.report.consolidate")


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


def report(*args):
    return main(["report", *map(str, args)])


def one_line(err):
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1, err
    return lines[0]


def test_scenario_columns_over_the_run_total_are_refused_at_once(
    template, tmp_path, monkeypatch, capsys
):
    """The file that takes the run past MAX_TOTAL_SCENARIO_COLUMNS refuses it (one line,
    nothing written), before its cells are read; --skip-bad does not skip past it."""
    files = [fill(template, tmp_path / f"team-{i}.xlsx", [dict(PLAN_A, scenario_name=f"r{i}")])
             for i in range(3)]  # fmt: skip
    monkeypatch.setattr(consolidate_module, "MAX_TOTAL_SCENARIO_COLUMNS", 16)
    before = tree(tmp_path)
    rc = report(*files, "--out", tmp_path / "h.xlsx", "--skip-bad")
    line = one_line(capsys.readouterr().err)
    assert rc == 2 and tree(tmp_path) == before
    assert str(files[2]) in line and "limit of 16 scenario columns" in line
    assert "16 read before it" in line and "nothing written" in line
    monkeypatch.setattr(consolidate_module, "MAX_TOTAL_SCENARIO_COLUMNS", 24)
    assert report(*files, "--out", tmp_path / "h.xlsx") == 0


def test_the_run_total_of_scenario_columns_is_a_documented_constant():
    assert consolidate_module.MAX_TOTAL_SCENARIO_COLUMNS == 4_000


def _typed_over_output(template, path, text):
    fill(template, path, [PLAN_A])
    wb = openpyxl.load_workbook(path)
    ws, coord = planner_cell(wb, "compute_cost_usd", 0)
    ws[coord] = text
    ws[coord].data_type = "s"
    wb.save(path)
    return f"{ws.title}!{coord}"


def test_a_long_text_typed_over_an_output_is_cut_the_same_in_every_output(
    template, tmp_path, capsys
):
    text = "y" * 5000
    _typed_over_output(template, tmp_path / "p.xlsx", text)
    rc = report(tmp_path / "p.xlsx", "--out", tmp_path / "h.xlsx", "--csv", tmp_path / "csv")
    assert rc == 0
    shown = pd.read_csv(tmp_path / "csv" / "mismatches.csv")["cached_value"].tolist()
    assert len(shown) == 1 and shown[0].startswith("y" * (MAX_TEXT_CHARS - 1) + "\u2026")
    assert f"cut at {MAX_TEXT_CHARS} of 5,000 characters" in shown[0]
    ws = openpyxl.load_workbook(tmp_path / "h.xlsx")["Checks"]  # the mismatches table
    cells = [c.value for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    assert shown[0] in cells and text not in cells
    for line in capsys.readouterr().err.splitlines():
        assert len(line) < 600


@pytest.mark.parametrize("accelerators", [1e15, 1e17])
def test_a_run_shorter_than_a_day_starting_on_the_first_gets_its_month(
    template, tmp_path, accelerators
):
    p = dict(PLAN_A, accelerators=accelerators, start_date=dt.date(2026, 3, 1))
    path = fill(template, tmp_path / "fast.xlsx", [p])
    assert report(path, "--csv", tmp_path / "csv") == 0
    monthly = pd.read_csv(tmp_path / "csv" / "monthly_by_run.csv")
    assert monthly["month"].tolist() == ["2026-03-01"] and monthly["share"].tolist() == [1.0]


def test_month_shares_of_a_run_far_shorter_than_a_day():
    assert engine.month_shares(dt.date(2026, 3, 1), 1e-12) == [(dt.date(2026, 3, 1), 1.0)]
    shares = engine.month_shares(dt.date(2026, 3, 31), 1.5)
    assert [m for m, _ in shares] == [dt.date(2026, 3, 1), dt.date(2026, 4, 1)]
    assert sum(s for _, s in shares) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "name, value, unit",
    [("total_params", 70, "billions"), ("active_params", 37, "billions"),
     ("training_tokens", 2000, "billions or trillions")],
)  # fmt: skip
def test_counts_typed_in_billions_are_refused_at_their_cell(
    template, tmp_path, capsys, name, value, unit
):
    p = {**PLAN_B, "active_params": PLAN_B["total_params"], name: value}
    if name == "total_params":
        p["active_params"] = value
    path = fill(template, tmp_path / "units.xlsx", [p])
    wb = openpyxl.load_workbook(path)
    ws, coord = planner_cell(wb, name, 0)
    assert report(path, "--out", tmp_path / "h.xlsx") == 2
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if f"{ws.title}!{coord}" in x)
    assert f"{name}" in line and f"typed in {unit}" in line
    assert not (tmp_path / "h.xlsx").exists()


# --- row 10: a full disk ----------------------------------------------------------------------


@pytest.fixture
def full_disk(tmp_path):
    """A 300 kB tmpfs (root only), unmounted afterwards; skipped where it cannot be made."""
    folder = tmp_path / "full"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(folder)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {made.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def _fill(folder, leave_kb):
    st = os.statvfs(folder)
    free = st.f_bavail * st.f_frsize
    (folder / "filler").write_bytes(b"\0" * max(0, free - leave_kb * 1024))


def test_a_full_disk_during_report_force_is_one_line_and_keeps_the_old_file(
    template, tmp_path, full_disk
):
    good = fill(template, tmp_path / "good.xlsx", [PLAN_A, PLAN_B])
    old = full_disk / "h.xlsx"
    assert run_report(good, "--out", old)[0] == 0
    before = digest(old)
    _fill(full_disk, 8)
    rc, out, err = run_report(good, "--out", old, "--force")
    assert rc == 2 and out == ""
    lines = err.splitlines()
    assert lines[-1].startswith("compute-lab report: error: could not write")
    assert "No space left on device; nothing written" in lines[-1]
    assert all(x.startswith("compute-lab report: ") for x in lines), err
    assert "Exception ignored" not in err and "Traceback" not in err
    assert digest(old) == before
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "h.xlsx"]


def test_a_failed_workbook_write_closes_its_zip(tmp_path, monkeypatch):
    """In process: a write failing midway leaves no open zip for a finaliser to retry."""
    from openpyxl import Workbook
    from openpyxl.writer.excel import ExcelWriter

    from workbook_templates.files import save_workbook

    def full(self):
        self._archive.writestr("xl/a.xml", b"<a/>")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    monkeypatch.setattr(ExcelWriter, "write_data", full)
    with pytest.raises(OSError, match="No space left"):
        save_workbook(Workbook(), tmp_path / "w.xlsx")
    gc.collect()
    assert unraisable == []


# --- row 7: Ctrl-C while reading ----------------------------------------------------------------


@pytest.fixture(scope="module")
def two_hundred(template, tmp_path_factory):
    """200 distinct planners (the scenario name differs), made by rewriting one's zip."""
    folder = tmp_path_factory.mktemp("two-hundred")
    return team_planners(template, folder, 200)


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.6, 2.6, 3.7])
def test_ctrl_c_while_reading_exits_130_and_keeps_the_old_outputs(two_hundred, tmp_path, delay):
    old = tmp_path / "h.xlsx"
    old.write_bytes(b"the old hand-off")
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "runs.csv").write_text("old\n")
    before = tree(tmp_path)
    argv = ["report", *map(str, two_hundred), "--out", str(old), "--csv", str(tmp_path / "csv"),
            "--force"]  # fmt: skip
    status, out, err = interrupt_when_ready(READY, argv, delay, timeout=300)
    assert status == 130, err
    # On a loaded machine the first moments may still be spent building the parser.
    assert err.splitlines() in ([f"compute-lab report: interrupted; {NOTHING_WRITTEN}"],
                                ["compute-lab: interrupted"])  # fmt: skip
    assert out == "" and tree(tmp_path) == before


def test_deferred_interrupts_restore_the_handler():
    from workbook_templates import files

    previous = signal.getsignal(signal.SIGINT)
    with files.deferred_interrupts():
        files.check_interrupt()  # nothing pressed: no-op
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            files.check_interrupt()
    assert signal.getsignal(signal.SIGINT) is previous
    files.check_interrupt()  # outside the block: no-op


def test_ctrl_c_inside_a_finaliser_is_not_lost(template, tmp_path, monkeypatch, capsys):
    """The issue's failure, made certain: Ctrl-C arriving while a finaliser runs (as in
    ``ZipFile.__del__``) was printed as "Exception ignored" and the run replaced its output."""
    paths = [fill(template, tmp_path / f"t{i}.xlsx", [dict(PLAN_A, scenario_name=f"r{i}")])
             for i in range(3)]  # fmt: skip
    old = tmp_path / "h.xlsx"
    old.write_bytes(b"the old hand-off")

    class Finaliser:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(1000))  # the handler runs here, inside the finaliser

    real = consolidate_module.read_planner

    def read_planner(*args, **kwargs):
        Finaliser()  # collected at once: its __del__ runs now
        return real(*args, **kwargs)

    monkeypatch.setattr(consolidate_module, "read_planner", read_planner)
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)  # main's: would print it
    rc = report(*paths, "--out", old, "--force")
    assert rc == 130 and old.read_bytes() == b"the old hand-off"
    assert capsys.readouterr().err.strip() == f"compute-lab report: interrupted; {NOTHING_WRITTEN}"
