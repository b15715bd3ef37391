"""The example team plan (workbook_templates.example): what `make demo` hands to the report."""

from __future__ import annotations

import hashlib

import pytest
from helpers import require_soffice

from compute_lab.cli import main
from udfs.plan import estimate_scenario
from workbook_templates import example
from workbook_templates.reader import read_planner


@pytest.mark.libreoffice
def test_the_recalculated_example_is_the_whole_budget(tmp_path, capsys):
    require_soffice()
    path = example.write_example(tmp_path / "team-a-plan.xlsx", recalculate=True)
    planner = read_planner(path)
    assert planner.has_cached_values
    assert main(["report", str(path), "--out", str(tmp_path / "h.xlsx"), "--csv",
                 str(tmp_path / "csv")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "1 budget run(s)" in out and "0 saved value(s) differ from the engine" in out
    want = estimate_scenario(example.EXAMPLE_PLAN)["total_cost_usd"]
    assert f"total ${want:,.0f}" in out


def test_the_example_is_never_written_over_without_force(tmp_path):
    path = example.write_example(tmp_path / "t.xlsx")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert example.main([str(path)]) == 2
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert example.main([str(path), "--force"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.xlsx"]  # no temporary file left
