"""A typed MFU is an estimate, not a fact (issue 17 item 5), in the finance hand-off: above the
calibrated P90 MFU it is a WARN naming both figures; at or below it an OK; either way the run
keeps its spread, so its contingency is never silently $0, and no check's words suggest that
typing a number removes the risk. (The planner's Checks WARN is tested with the state
variants of tests/helpers_planner.py.)"""

from __future__ import annotations

import csv
import re

from helpers import run_cli
from test_report_fixtures import PLAN_B, PLANNER, fill

from udfs import calibration

#: The planner's preloaded columns (references, example), left as they are.
PRESET = 3
HIGH = {**PLAN_B, "scenario_name": "Typed high", "mfu": 0.9, "budget_status": "Proposed"}
LOW = {**PLAN_B, "scenario_name": "Typed low", "mfu": 0.2, "budget_status": "Proposed"}


def _read(folder, name):
    with open(folder / f"{name}.csv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_typed_mfu_above_the_calibrated_p90_is_a_warn_and_keeps_its_spread(
    generated_templates, tmp_path
):
    p90 = calibration.mfu_p90(PLAN_B["accelerator_name"], PLAN_B["total_params"])
    assert LOW["mfu"] <= p90 < HIGH["mfu"]
    path = fill(generated_templates[PLANNER], tmp_path / "p.xlsx", [None] * PRESET + [HIGH, LOW])
    out = tmp_path / "csv"
    code, _, err, _ = run_cli(["report", path, "--csv", out])
    assert code == 0, err
    rows = [r for r in _read(out, "checks") if r["check"] == "Throughput"]
    by_name = {re.search(r"scenario '([^']+)'", r["detail"]).group(1): r for r in rows}
    high, low = by_name["Typed high"], by_name["Typed low"]
    assert high["status"] == "WARN" and low["status"] == "OK"
    assert f"typed MFU 90.0% is above the calibrated P90 MFU {p90:.1%}" in high["detail"]
    assert "the spread is kept" in high["detail"] and "the spread is kept" in low["detail"]
    assert any(line.endswith(high["detail"]) for line in err.splitlines())  # a warning line
    for r in _read(out, "checks"):  # no advice to type a number to clear a warning
        assert not re.search(r"(?i)\b(type|confirm)\b[^.;]*\b(MFU|throughput)\b", r["detail"])
    budget = {r["scenario"]: r for r in _read(out, "budget")}
    for name in ("Typed high", "Typed low"):
        assert float(budget[name]["contingency_usd"]) > 0, budget[name]  # never a silent $0
