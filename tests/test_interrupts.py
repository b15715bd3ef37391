"""Ctrl-C at any moment: one "interrupted" line, exit 130, and the outputs all old or all new,
as the line says.

The program's entry point (``compute_lab.start``) takes Ctrl-C while the modules load; the
outputs move into place with SIGINT held (:class:`workbook_templates.files.Staging`), and
``report`` and ``templates`` defer Ctrl-C (:func:`workbook_templates.files.deferred_interrupts`)
so that its line says what the run left: ``NOTHING_WRITTEN`` or ``ALL_WRITTEN``.
"""

from __future__ import annotations

import importlib.metadata
import os
import random
import signal
import subprocess
import sys
import time

import pytest
from helpers import interrupt_when_ready
from helpers_report import tree
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill

from compute_lab.cli import main
from workbook_templates import files
from workbook_templates.files import ALL_WRITTEN, NOTHING_WRITTEN

TEMPLATES = ("training-run-planner.xlsx", "cluster-sizing.xlsx", "dense-vs-moe.xlsx")


def _entry_point():
    """``module:function`` of the installed ``compute-lab`` program."""
    (entry,) = [e for e in importlib.metadata.entry_points(group="console_scripts")
                if e.name == "compute-lab"]  # fmt: skip
    return entry.value


def _program(ready_line):
    """The console script as pip writes it, saying "ready" before it imports the entry point."""
    module, function = _entry_point().split(":")
    return (f"import sys; print({ready_line!r}, file=sys.stderr, flush=True); "
            f"from {module} import {function}; sys.exit({function}())")  # fmt: skip


@pytest.mark.parametrize("delay", [0.06, 0.12, 0.2, 0.35])
def test_ctrl_c_while_the_program_loads_is_one_line(delay):
    status, _, err = interrupt_when_ready(_program("ready"), ["estimate"], delay, timeout=120)
    if status == 0:  # finished first (a fast machine): nothing to see
        return
    assert status == 130, err
    assert err.splitlines() in (["compute-lab: interrupted"], ["compute-lab estimate: interrupted"])


def _old_templates(folder):
    folder.mkdir()
    for name in TEMPLATES:
        (folder / name).write_bytes(b"old " + name.encode())
    return tree(folder)


def _state(folder, before):
    """ "old" when every file is as it was, "new" when every one was replaced, else the tree."""
    now = tree(folder)
    if now == before:
        return "old"
    changed = [now[k] != before[k] for k in before if before[k] != "<dir>"]
    if set(now) == set(before) and all(changed):
        return "new"
    return now


def _interrupt_during(monkeypatch, module, name, at):
    """Send a real SIGINT to this process from inside the ``at``-th call of ``module.name``."""
    real = getattr(module, name)
    calls = [0]

    def wrapped(*args, **kwargs):
        calls[0] += 1
        if calls[0] == at:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGINT)  # pressed twice: the moves are still not cut
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


def test_ctrl_c_while_the_templates_move_into_place_keeps_every_new_file(
    tmp_path, monkeypatch, capsys
):
    folder = tmp_path / "out"
    before = _old_templates(folder)
    calls = _interrupt_during(monkeypatch, files, "_keep_aside", 2)  # after the first move
    assert main(["templates", "--out", str(folder), "--force"]) == 130
    assert calls[0] >= 3
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"compute-lab templates: interrupted; {ALL_WRITTEN}"]
    assert _state(folder, before) == "new" and not [p for p in folder.iterdir()
                                                   if p.name not in TEMPLATES]  # fmt: skip


def test_ctrl_c_while_the_templates_are_written_keeps_every_old_file(tmp_path, monkeypatch, capsys):
    from workbook_templates import generate

    folder = tmp_path / "out"
    before = _old_templates(folder)
    _interrupt_during(monkeypatch, generate, "save_workbook", 2)
    assert main(["templates", "--out", str(folder), "--force"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        f"compute-lab templates: interrupted; {NOTHING_WRITTEN}"
    ]
    assert _state(folder, before) == "old"


def test_ctrl_c_while_the_hand_off_moves_into_place_keeps_every_new_file(
    generated_templates, tmp_path, monkeypatch, capsys
):
    paths = [fill(generated_templates[PLANNER], tmp_path / f"p{i}.xlsx", [plan])
             for i, plan in enumerate((PLAN_A, PLAN_B))]  # fmt: skip
    out = tmp_path / "out"
    out.mkdir()
    (out / "h.xlsx").write_bytes(b"old hand-off")
    (out / "csv").mkdir()
    assert main(["report", *map(str, paths), "--csv", str(out / "csv")]) == 0
    capsys.readouterr()
    for f in (out / "csv").iterdir():
        f.write_bytes(b"old " + f.name.encode())
    before = tree(out)
    _interrupt_during(monkeypatch, files, "_keep_aside", 3)
    argv = ["report", *map(str, paths), "--out", str(out / "h.xlsx"), "--csv", str(out / "csv"),
            "--force"]  # fmt: skip
    assert main(argv) == 130
    lines = capsys.readouterr().err.splitlines()  # the planners' warnings, then the line
    assert (
        [x for x in lines if "interrupted" in x]
        == lines[-1:]
        == [f"compute-lab report: interrupted; {ALL_WRITTEN}"]
    )
    assert _state(out, before) == "new"


def test_a_noted_ctrl_c_that_was_raised_is_not_raised_again():
    with files.deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            files.check_interrupt()
    with pytest.raises(KeyboardInterrupt, match=NOTHING_WRITTEN), files.deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)  # noted, never raised inside: raised at the end


def test_ctrl_c_at_random_moments_of_a_real_templates_run(tmp_path):
    """A real ``compute-lab templates --force`` process, Ctrl-C at random moments of its run:
    one line, exit 130, and the folder all old or all new as the line says."""
    start = time.monotonic()
    folder = tmp_path / "timed"
    subprocess.run([sys.executable, "-c", _program("ready"), "templates", "--out", str(folder)],
                   capture_output=True, check=True)  # fmt: skip
    took = time.monotonic() - start
    rng = random.Random(30)
    seen = {}
    for i in range(6):
        folder = tmp_path / f"run{i}"
        before = _old_templates(folder)
        argv = ["templates", "--out", str(folder), "--force"]
        delay = rng.uniform(0.05, took * 1.1)
        status, _, err = interrupt_when_ready(_program("ready"), argv, delay, timeout=300)
        state = _state(folder, before)
        if status == 0:  # it had finished: every file new, no interrupted line
            assert state == "new" and "interrupted" not in err
            continue
        assert status == 130, err
        (line,) = err.splitlines()
        assert "Traceback" not in err
        if line.endswith(ALL_WRITTEN):
            assert state == "new", line
        else:  # while loading, or before the moves: nothing written
            assert line in ("compute-lab: interrupted", "compute-lab templates: interrupted",
                            f"compute-lab templates: interrupted; {NOTHING_WRITTEN}")  # fmt: skip
            assert state == "old", line
        seen[line] = seen.get(line, 0) + 1
    assert seen  # at least one run was interrupted


def test_ctrl_c_reaching_another_thread_during_the_moves_waits_for_them(tmp_path, monkeypatch):
    """numpy's BLAS threads can take a process's SIGINT: the moves hold it off wherever it
    lands, and the KeyboardInterrupt raised once they are done says the new files are in."""
    import threading

    targets = [tmp_path / f"f{i}.txt" for i in range(3)]
    for t in targets:
        t.write_text("old")
    real = files._keep_aside
    calls = [0]

    def keep_aside(target):
        calls[0] += 1
        if calls[0] == 2:

            def press():
                signal.pthread_kill(threading.get_ident(), signal.SIGINT)

            worker = threading.Thread(target=press)
            worker.start()
            worker.join()
            time.sleep(0.01)  # the main thread's handler runs meanwhile
        return real(target)

    monkeypatch.setattr(files, "_keep_aside", keep_aside)
    with pytest.raises(KeyboardInterrupt, match=ALL_WRITTEN), files.Staging(force=True) as s:
        for t in targets:
            s.new(t).write_text("new")
        s.commit()
    assert [t.read_text() for t in targets] == ["new"] * 3
    assert sorted(p.name for p in tmp_path.iterdir()) == [t.name for t in targets]
