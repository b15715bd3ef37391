"""Honest ranges with own runs: how far a team's runs narrow each part of the spread (sigma^2,
and a small model's extra variance) is fitted on the catalogue with whole organisations held
out (udfs.refit.narrowing_design), stored with how it was fitted (udfs/data/calibration.toml),
and the P10..P90 coverage it gives on runs no fit saw is published
(docs/methodology-calibration.md section 9, written by benchmarks/calibration_study.py)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from udfs import calibration, model, own_runs, refit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import calibration_study as study  # noqa: E402

Z90 = calibration._Z90


@pytest.fixture(scope="module")
def held_out():
    return refit.narrowing_validation()


def test_the_stored_shares_are_what_the_catalogue_fits_and_say_how():
    f = calibration.fitted()
    base, small = refit._narrowing(calibration.chosen_model())
    assert f["own_runs_base_narrowing"] == pytest.approx(base, rel=1e-9)
    assert f["own_runs_small_narrowing"] == pytest.approx(small, rel=1e-9)
    # own runs remove part of each, not nothing and not all of it
    assert 0.0 < small < base < 1.0
    text = (ROOT / "udfs" / "data" / "calibration.toml").read_text(encoding="utf-8")
    for key in refit.NARROWING_FIGURES:
        above = text.split(f"\n{key} = ")[0].rsplit("\n", 1)[-1]
        assert above.startswith("# "), key  # its provenance, the line above it


def test_with_own_runs_the_held_out_range_holds_70_to_90_percent(held_out):
    """Each organisation held out of everything (the model, h, k, the spreads, the shares),
    its runs pulled toward its other runs, or its family's: P10..P90 holds 70-90% of them."""
    for unit, v in held_out.items():
        assert 0.70 <= v["share_inside_fitted"] <= 0.90, unit
        assert v["runs"] >= 30 and v["small_model_runs"] >= 10, unit
        # own runs narrow the range of a model below 5B, which the rule before left as wide
        assert (v["small_model_median_p90_over_p50_fitted"]
                < v["small_model_median_p90_over_p50_team_only"] - 0.05), unit  # fmt: skip
        # and they make the error smaller
        assert v["median_abs_error_pct_after"] < v["median_abs_error_pct_before"], unit
        stored = calibration.fitted()[f"own_runs_ranges_{unit}"]
        assert stored.keys() == v.keys()
        for key, x in v.items():
            assert stored[key] == pytest.approx(x, rel=1e-9), (unit, key)


def test_own_runs_narrow_a_small_models_extra_spread_too():
    """At a pull of 1 a 1B plan keeps (1 - small share) of the small model's extra variance:
    its P90 / P50 falls below the 2.69 the team-to-team narrowing alone left it."""
    f = calibration.fitted()
    s2, small2 = calibration.throughput_sigma() ** 2, calibration.small_model_sigma() ** 2
    values = {"calibrated_small_model_sigma": calibration.small_model_sigma(),
              "mfu_ln_slope": f["slope"]}  # fmt: skip
    least = float(model.evaluate(values, ["own_runs_narrowest_sigma"])["own_runs_narrowest_sigma"])
    for pull in (0.0, 0.5, 0.9, 1.0):
        got = float(own_runs.narrowed_sigma("H100 SXM", 1e9, pull))
        base = max(min(s2, least**2), s2 * (1 - pull * f["own_runs_base_narrowing"]))
        want = math.sqrt(base + (1 - pull * f["own_runs_small_narrowing"]) * small2)
        assert got == pytest.approx(want, rel=1e-12), pull
    team_only = math.sqrt(max(least**2, s2 - f["team_between_sd"] ** 2) + small2)
    assert math.exp(Z90 * team_only) == pytest.approx(2.69, abs=0.01)
    assert math.exp(Z90 * own_runs.narrowed_sigma("H100 SXM", 1e9, 1.0)) < 2.55


def test_a_share_leaves_spread_share_of_the_runs_inside():
    """narrowing_design on made-up runs: the base share is the 15th percentile of the largest
    share each run of 5B or more allows, the small one likewise below 5B, each within 0..1."""
    s, small_sd = 0.3, 0.7
    rng = np.random.default_rng(7)
    n = 40
    pulled = {"pull": rng.uniform(0.3, 1.0, 2 * n),
              "after": rng.normal(0.0, 0.25, 2 * n),
              "active_params": np.r_[np.full(n, 7e9), np.full(n, 1e9)],
              "other": np.zeros(2 * n, dtype=bool)}  # fmt: skip
    base, small = refit.narrowing_design(pulled, (s, small_sd))
    large = slice(0, n)
    need = (1 - (pulled["after"][large] / Z90) ** 2 / s**2) / pulled["pull"][large]
    assert base == pytest.approx(float(np.clip(np.quantile(need, 0.15), 0, 1)), rel=1e-12)
    sigma = refit.narrowed_sigmas(pulled, (s, small_sd), 0.2, base, small)
    inside = np.abs(pulled["after"]) <= Z90 * sigma + 1e-12
    assert inside[:n].mean() >= calibration.SPREAD_SHARE - 1 / n
    assert inside[n:].mean() >= calibration.SPREAD_SHARE - 1 / n
    # runs far outside whatever the share: nothing to remove; runs all at 0: remove all
    far = pulled | {"after": np.full(2 * n, 3.0)}
    assert refit.narrowing_design(far, (s, small_sd)) == (0.0, 0.0)
    exact = pulled | {"after": np.zeros(2 * n)}
    assert refit.narrowing_design(exact, (s, small_sd)) == (1.0, 1.0)


def test_the_docs_publish_the_held_out_figures_the_study_writes():
    """docs/methodology-calibration.md holds the study's block as it renders the stored
    figures: written by the script, not typed."""
    text = study.DOCS.read_text(encoding="utf-8")
    assert study.ranges_block(calibration.fitted()) in text


def test_the_study_computes_the_stored_figures():
    figures = study.ranges_study()
    assert study.ranges_block(figures) == study.ranges_block(calibration.fitted())
