"""The issue-17 study harness (benchmarks/calibration_study.py) measures what the library does,
and the conclusions docs/methodology-calibration.md draws from it still hold on the runs.

- Its "today" own-runs design is :func:`udfs.calibration.own_runs_validation`, and its
  baseline feature row is the chosen model's grouped-validation summary: the other rows are
  variants of the same measurement, not of a different one.
- Today's own-runs design (runs weighted by closeness in size, h and k chosen without the
  evaluated organisation) beats the former one (every run of the generation alike, k from the
  variance ratio) in mean and median |ln error| and with each organisation counted once, and
  loses nothing that matters once Meta (17 of the 48 runs) is left out (section 9).
- No default-MFU feature beats the chosen model by the choice rule's margin in grouped mean log
  score, and none of them reaches the issue's 20% median |error| (section 3).
- What the plan's figures explain at best (section 3): fitted on the runs it is scored on, the
  chosen form stays above 20%, and an organisation's own same-generation runs, unpooled,
  predict its runs no better than 20% either.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from udfs import calibration

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import calibration_study as study  # noqa: E402

TODAY = "today: same generation, size-weighted, h and k nested"
FORMER = "former (round 4): same generation, mean, k from moments"


@pytest.fixture(scope="module")
def own():
    return study.own_runs_study()[0]


def test_the_harness_today_row_is_the_library_own_runs_validation(own):
    lib = calibration.own_runs_validation()
    row = own[TODAY]
    assert row["runs"] == lib["runs"]
    for mine, theirs in (
        ("mean_before", "mean_abs_log_error_before"),
        ("mean_after", "mean_abs_log_error_after"),
        ("median_before", "median_abs_log_error_before"),
        ("median_after", "median_abs_log_error_after"),
    ):
        assert row[mine] == pytest.approx(lib[theirs], rel=1e-9), mine


def test_today_beats_the_former_design_and_loses_nothing_outside_meta(own):
    today, former = own[TODAY], own[FORMER]
    assert today["mean_after"] < former["mean_after"] - 0.01
    assert today["median_after"] < former["median_after"] - 0.02
    assert today["org_mean_after"] < former["org_mean_after"]
    assert today["no_meta_after"] <= former["no_meta_after"] + 0.005
    assert today["mean_after"] < today["mean_before"] * 0.9  # a tenth smaller, or more
    assert today["coverage_after"] >= today["coverage_before"]


def test_no_feature_beats_the_chosen_model_by_the_margin():
    rows, consts = study.features_study()
    base = rows["chosen (pooled generation+small-model size)"]
    lib = calibration.grouped_summary()
    assert base["median_abs_error_pct"] == pytest.approx(lib["median_abs_error_pct"], rel=1e-9)
    assert base["mean_log_score"] == pytest.approx(lib["mean_log_score"], rel=1e-9)
    for name, s in rows.items():
        if "base_on_subset" in s:
            # ln accelerators: scored only on the runs with a public count, so the rule (which
            # compares on the whole set) cannot choose it; the docs give its subset figures
            assert s["runs"] < base["runs"], name
            continue
        assert s["mean_log_score"] < base["mean_log_score"] + calibration.CHOICE_MARGIN, name
        assert s["median_abs_error_pct"] > 20.0, name  # on the whole set, none reaches 20%


def test_the_optimistic_bounds_the_docs_quote():
    rows = study.floors()
    lib = calibration.grouped_summary()
    grouped = rows["chosen, grouped (organisation held out)"]
    assert grouped["median_abs_error_pct"] == pytest.approx(lib["median_abs_error_pct"], rel=1e-9)
    in_sample = rows["chosen, fitted on every run"]
    # scored on runs it has seen, the chosen form is better than held out, and still above 20%
    assert 20.0 < in_sample["median_abs_error_pct"] < grouped["median_abs_error_pct"]
    for name, s in rows.items():
        if "fitted on every run" in name:
            assert s["median_abs_error_pct"] < grouped["median_abs_error_pct"], name
    oracle = rows["its organisation's other same-generation runs, unpooled"]
    same = rows["chosen, grouped, on the same runs"]
    assert oracle["runs"] == same["runs"] < grouped["runs"]
    assert 20.0 < oracle["median_abs_error_pct"] < same["median_abs_error_pct"]
