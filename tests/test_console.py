"""What the command line prints and which names it accepts (issue 22 rows 9, 11, 15, 16, 17, 19).

Every console line is one line, prefixed with the command's name: a newline or control
character in a file name, a flag or a cell is escaped; a long echo is cut. Names the tools
cannot write faithfully (control characters, bytes that are not UTF-8, over 255 bytes) are
refused with exit 2 and one line, as are the flags that ``int()`` would take too readily.
"""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
import zipfile

import openpyxl
import pandas as pd
import pytest
from helpers import planner_cell, run_cli
from helpers_report import CLI, tree
from hypothesis import given, settings
from hypothesis import strategies as st
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill, rezip, sheet_member

from udfs.validation import MAX_ECHO_CHARS, MAX_NAME_BYTES, console_line
from workbook_templates.sheetkit import safe_text


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture
def good(template, tmp_path):
    return fill(template, tmp_path / "good.xlsx", [PLAN_A, PLAN_B])


def every_line_is_ours(err, prog="compute-lab report"):
    lines = err.splitlines()
    assert lines, "nothing on stderr"
    for line in lines:
        assert line.startswith(f"{prog}: "), f"a line not ours: {line!r}"
        assert "\x01" not in line and "\r" not in line
    return lines


def one_error(rc, out, err, prog="compute-lab report"):
    assert rc == 2, (rc, out, err)
    (line,) = every_line_is_ours(err, prog)
    assert "internal error" not in line and "Traceback" not in err
    return line


# --- row 9: names the tools cannot write --------------------------------------------------------


@pytest.mark.parametrize(
    "name, words",
    [
        ("a\x01b.xlsx", "control character \\x01"),
        ("team\udcff\udcfe.xlsx", "not valid UTF-8"),
        ("forged\nwarning: x.xlsx", "control character \\n"),
    ],
)
def test_an_input_file_name_that_cannot_be_written_is_refused(good, tmp_path, name, words):
    path = tmp_path / name
    os.link(good, os.fsencode(path))
    before = tree(tmp_path)
    line = one_error(*run_cli(["report", path, "--out", tmp_path / "h.xlsx"])[:3])
    assert words in line and "FILE" in line
    assert tree(tmp_path) == before


def test_a_non_utf8_name_in_a_real_subprocess(good, tmp_path):
    name = os.fsencode(tmp_path) + b"/team\xff\xfe.xlsx"
    os.link(good, name)
    proc = subprocess.run(
        [*CLI, "report", name, "--csv", os.fsencode(tmp_path / "csv")],
        capture_output=True,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2 and "not valid UTF-8" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "csv").exists()


@pytest.mark.parametrize("flag", ["--out", "--csv"])
def test_an_output_name_over_the_name_bound_is_refused(good, tmp_path, flag):
    name = "x" * (MAX_NAME_BYTES + 1) + (".xlsx" if flag == "--out" else "")
    before = tree(tmp_path)
    line = one_error(*run_cli(["report", good, flag, tmp_path / name])[:3])
    assert f"limit of {MAX_NAME_BYTES} bytes" in line and flag in line and len(line) < 300
    assert tree(tmp_path) == before


def test_a_templates_folder_name_over_the_name_bound_is_refused(tmp_path):
    line = one_error(
        *run_cli(["templates", "--out", tmp_path / ("t" * 300)])[:3], prog="compute-lab templates"
    )
    assert f"limit of {MAX_NAME_BYTES} bytes" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["1e18", "1e300", "nan", "201"])
def test_max_size_mb_is_bounded(good, tmp_path, value):
    line = one_error(*run_cli(["report", good, "--out", tmp_path / "h.xlsx", "--max-size-mb",
                               value])[:3])  # fmt: skip
    assert "--max-size-mb must be greater than 0 and at most 200" in line


# --- row 15: templates --out "" -----------------------------------------------------------------


def test_templates_out_empty_writes_nothing_in_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_error(*run_cli(["templates", "--out", ""])[:3], prog="compute-lab templates")
    assert "--out is empty" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--csv", "--out"])
def test_report_empty_output_names_write_nothing_in_the_current_folder(
    template, tmp_path, monkeypatch, flag
):
    """Review of issue 22 row 15: `report --csv ""` wrote its 17 CSV files into the current
    folder (Path("") is "."), exit 0."""
    planner = fill(template, tmp_path / "p.xlsx", [PLAN_A])
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    other = ["--out", "h.xlsx"] if flag == "--csv" else ["--csv", "tables"]
    code, out, err = run_cli(["report", str(planner), *other, flag, ""])[:3]
    line = one_error(code, out, err, prog="compute-lab report")
    assert f"{flag} is empty" in line
    assert list(here.iterdir()) == []


def test_lite_bundle_on_a_full_disk_leaves_no_folder(tmp_path, monkeypatch):
    import workbook_templates.files as files

    def full(target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(files, "temp_beside", full)
    out = tmp_path / "a" / "b" / "lite"
    line = one_error(*run_cli(["lite-bundle", "--out", out])[:3], prog="compute-lab lite-bundle")
    assert "No space left on device" in line
    assert list(tmp_path.iterdir()) == []


# --- row 11: newlines and control characters in what we print ----------------------------------


def test_a_newline_in_text_typed_over_an_output_cell_is_escaped(template, tmp_path):
    path = fill(template, tmp_path / "p.xlsx", [PLAN_A])
    wb = openpyxl.load_workbook(path)
    ws, coord = planner_cell(wb, "compute_cost_usd", 0)
    ws[coord] = "12\nwarning: forged line\rESC[31mred"
    ws[coord].data_type = "s"
    wb.save(path)
    member = sheet_member(path, ws.title)  # ESC as Excel writes it: _x001B_
    xml = zipfile.ZipFile(path).read(member).replace(b"ESC[31m", b"_x001B_[31m")
    path = rezip(path, tmp_path / "escaped.xlsx", {member: xml})
    rc, _, err, _ = run_cli(["report", path, "--out", tmp_path / "h.xlsx", "--csv", tmp_path])
    assert rc == 0
    lines = every_line_is_ours(err)
    assert any("saved 12\\nwarning: forged line\\n" in x for x in lines)


def test_a_control_character_in_a_text_input_is_refused():
    """openpyxl reads Excel's ``_x0001_`` escape as it stands; a control character that does
    reach a text input (another reader, a future openpyxl) is refused, never written."""
    from workbook_templates import reader

    value, error = reader._text("Owner\x01")
    assert value is None and "control character \\x01" in error
    assert reader._text("two\nlines") == ("two\nlines", None)


def test_a_newline_in_a_scenario_name_is_escaped(template, tmp_path):
    name = "Plan\nwarning: forged line"
    path = fill(template, tmp_path / "p.xlsx", [{**PLAN_A, "scenario_name": name}])
    rc, _, err, _ = run_cli(["report", path, "--out", tmp_path / "h.xlsx"])
    assert rc == 0
    every_line_is_ours(err)


def test_console_line_escapes_and_cuts():
    line = console_line("x: got '" + "9" * 10_000 + "'\nwarning: forged\u202e\udcff")
    assert "\n" not in line and "\\n" in line and "\\u202e" in line and "\\xff" in line
    assert "(10,000 characters)" in line and len(line) < 200
    assert console_line("the planner's names and the users' files") == (
        "the planner's names and the users' files"
    )
    prose = ("scenario 'Small, defaults' has no start date (Inputs!H25 is blank): in the "
             "totals and the period tables' 'Unscheduled' row, not in any month")  # fmt: skip
    assert console_line(prose) == prose


# --- row 16: huge dollar figures in the summary line -------------------------------------------


def test_the_summary_line_writes_huge_dollars_in_scientific_notation(template, tmp_path):
    tiny = {**PLAN_A, "total_params": 1e6, "active_params": 1e6, "training_tokens": 1e9,
            "usd_per_accelerator_hour": 1e296}  # fmt: skip
    path = fill(template, tmp_path / "p.xlsx", [tiny])
    rc, out, err, _ = run_cli(["report", path, "--out", tmp_path / "h.xlsx"])
    assert rc == 0, err
    summary = out.splitlines()[0]
    assert "e+29" in summary and not any(len(t) > 30 for t in summary.split())
    assert "$6,511,894" not in summary


# --- row 17: --fiscal-year-start in ASCII digits -----------------------------------------------


@pytest.mark.parametrize("value", ["1_2", "\u0664", "\U0001d7d2", "\uff14", "04.0", "+4", "13"])
def test_fiscal_year_start_takes_ascii_month_numbers_only(good, tmp_path, value):
    line = one_error(*run_cli(["report", good, "--out", tmp_path / "h.xlsx",
                               "--fiscal-year-start", value])[:3])  # fmt: skip
    assert "--fiscal-year-start must be a month number from 1 to 12" in line


@pytest.mark.parametrize("value", ["4", "04", " 12 "])
def test_fiscal_year_start_accepts_month_numbers(good, tmp_path, value):
    rc = run_cli(["report", good, "--csv", tmp_path, "--fiscal-year-start", value])[0]
    assert rc == 0


# --- row 19: lookalike formula leads; long echoes ----------------------------------------------


@pytest.mark.parametrize("lead", ["\uff1d", "\uff0b", "\uff0d", "\uff20", "\ufe63", "\ufe62",
                                  "\ufe66", "\ufe6b", "\u2212"])  # fmt: skip
def test_lookalike_formula_leads_are_escaped_in_csv(template, tmp_path, lead):
    assert safe_text(lead + "1+1") == "'" + lead + "1+1"
    name = lead + "HYPERLINK(1)"
    path = fill(template, tmp_path / "p.xlsx", [{**PLAN_A, "scenario_name": name}])
    assert run_cli(["report", path, "--csv", tmp_path / "csv"])[0] == 0
    runs = pd.read_csv(tmp_path / "csv" / "runs.csv")
    assert runs["scenario"].tolist() == ["'" + name]


@pytest.mark.parametrize(
    "argv",
    [
        ["estimate", "--tokens", "9" * 10_000 + "x"],
        ["estimate", "--accelerator", "H" * 10_000],
        ["estimate", "--precision", "f" * 10_000],
        ["report", "FILE.xlsx", "--out", "h.xlsx", "--fiscal-year-start", "9" * 10_000],
        ["estimate", "x" * 10_000],
    ],
)
def test_a_long_flag_value_is_echoed_cut(argv, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err, _ = run_cli(argv)
    (line,) = err.splitlines()
    assert rc == 2 and len(line) < 400 and re.search(r"\(10,00[01] characters\)", line)
    assert "9" * (MAX_ECHO_CHARS + 1) not in line


def test_no_traceback_in_a_real_subprocess_for_a_control_character(good, tmp_path):
    path = tmp_path / "a\x01b.xlsx"
    os.link(good, path)
    proc = subprocess.run(
        [sys.executable, "-W", "error", *CLI[1:], "report", str(path), "--out",
         str(tmp_path / "h.xlsx")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr


# --- row 18: the real cause named ----------------------------------------------------------------


def test_a_one_parameter_plan_names_total_params_not_the_hbm():
    rc, _, err, _ = run_cli(["estimate", "--total-params", "1", "--tokens", "14.8T",
                             "--accelerators", "2048", "--accelerator", "H100"])  # fmt: skip
    (line,) = err.splitlines()
    assert rc == 2 and "--total-params" in line and "typed in billions" in line
    assert "--hbm-gb" not in line and "2.2e-308" not in line


def test_a_one_parameter_plan_in_the_engine_names_total_params():
    from udfs import engine
    from udfs.validation import InputError

    with pytest.raises(InputError) as info:
        engine.estimate(1, 14.8e12, 2048, peak_tflops=989, mfu=0.4, hbm_gb=80)
    assert info.value.argument == "total_params"


@pytest.mark.parametrize(
    "interval, words",
    [(1e308, "is too long for an MTBF of 100 h"), (1e-300, "is too short for checkpoint writes")],
)
def test_train_goodput_names_the_interval_it_is_given(interval, words):
    from udfs import excel
    from udfs._cells import CellError

    with pytest.raises(CellError) as info:
        excel.TRAIN_GOODPUT(100, 1 / 60, 0.1, interval)
    assert str(info.value).startswith(f"TRAIN_GOODPUT: interval_hours {words}")
    assert "optimum is about 1.83 h" in str(info.value) and "mtbf_hours" not in str(info.value)


def test_an_output_name_at_the_name_bound_is_written_and_replaced(good, tmp_path):
    """The temporary and kept-aside files beside a 255-byte name have names of their own
    that the file system allows."""
    out = tmp_path / ("h" * (MAX_NAME_BYTES - len(".xlsx")) + ".xlsx")
    assert run_cli(["report", good, "--out", out])[0] == 0
    assert run_cli(["report", good, "--out", out, "--force"])[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["good.xlsx", out.name])


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_console_line_is_always_one_clean_line(text):
    line = console_line(f"compute-lab report: error: {text}")
    assert "\n" not in line and "\r" not in line
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in line)
    assert not any(c in line for c in "\u2028\u2029\u202e\u2066")
