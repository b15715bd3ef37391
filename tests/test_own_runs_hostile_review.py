"""A hostile review of the text rules of own-runs files and planners: what an attacker with
files broke, kept as regression tests (real workbooks written and read back)."""

from __future__ import annotations

import pytest

from compute_lab.cli import main
from workbook_templates.example import EXAMPLE_PLAN, write_example


@pytest.mark.parametrize("bad", ["\u202e", "\x9b", "\u2028"], ids=["bidi", "C1", "LS"])
def test_a_scenario_name_with_a_character_an_own_runs_name_may_not_hold_is_refused(
    tmp_path, bad, capsys
):
    planner = tmp_path / "planner.xlsx"
    write_example(planner, plan={**EXAMPLE_PLAN, "scenario_name": f"Team A{bad}txt.exe"})
    out = tmp_path / "csv"
    assert main(["report", str(planner), "--csv", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "control character" in line, line
    assert not out.exists()
