"""The calibration set, the default MFU chosen by leave-one-out, and the ranges around it."""

import math
import re
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from udfs import calibration, catalogue, engine, ranges

Z90 = NormalDist().inv_cdf(0.9)
FIGURES = ("total_params", "active_params", "training_tokens", "accelerator", "accelerators",
           "accelerator_hours")  # fmt: skip


# -- the set -------------------------------------------------------------------------------------


def test_every_calibration_figure_has_a_source_with_its_place():
    cal = calibration.calibration_set()
    runs = catalogue.runs()
    for name in cal.index:
        row = runs.loc[name]
        for field in FIGURES:
            value = row[field]
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue  # undisclosed: blank, never guessed
            src = catalogue.source("run", name, field)
            # a paper or a model card: an arXiv id, a URL or a repository file
            assert re.search(r"arXiv|https?://|\.md\b", src), (name, field, src)
        for field in ("active_params", "training_tokens", "accelerator", "accelerator_hours"):
            assert not (isinstance(row[field], float) and math.isnan(row[field])), (name, field)


def test_unknown_figures_stay_blank_in_the_set():
    # Phi-3.5-MoE's card gives 16x3.8B experts and 6.6B active, not a total: blank
    assert math.isnan(catalogue.run("Phi-3.5-MoE")["total_params"])
    # Llama 2 does not disclose its GPU count
    assert math.isnan(catalogue.run("Llama 2 7B")["accelerators"])


def test_the_set_spans_hardware_sizes_architectures_and_years():
    cal = calibration.calibration_set()
    assert len(cal) >= 45 and cal["organisation"].nunique() >= 15
    # other: V100 (GPT-3, SantaCoder) and AMD (AMD-Llama-135M on MI250, Poro 34B on MI250X)
    assert set(cal["generation"]) == {"A100", "H100", "TPU", "other"}
    assert {"A100 SXM 80GB", "A100 SXM 40GB", "H100 SXM", "H800 SXM", "TPU v4", "TPU v3",
            "V100 SXM2 32GB", "MI250", "MI250X"} <= set(cal["accelerator"])  # fmt: skip
    assert set(cal["architecture"]) == {"dense", "moe"}
    assert (cal["active_params"] < 10e9).sum() >= 5
    assert (cal["active_params"] >= 100e9).sum() >= 4
    # low-confidence runs count less in a fit (and are all scored)
    w = calibration.CONFIDENCE_WEIGHTS
    assert w["low"] < w["medium"] <= w["high"] == 1.0
    assert (cal.loc[cal["confidence"] == "low", "weight"] == w["low"]).all()


def test_derived_hours_are_count_times_days():
    # "derived" hours are the disclosure's accelerators x days x 24, nothing else
    for name, n, days in [("Phi-3-medium", 512, 42), ("MPT-7B", 440, 9.5), ("Phi-2", 96, 14)]:
        run = catalogue.run(name)
        assert run["accelerators"] == n
        assert run["accelerator_hours"] == pytest.approx(n * days * 24)
        assert catalogue.source("run", name, "accelerator_hours").startswith("derived:")


# -- the model choice ----------------------------------------------------------------------------


def _generation_sd_by_hand(cal):
    """SD of the generations' own means of ln MFU around the shared mean (organisations once)."""
    cells = {}
    for (org, gen), d in cal.groupby(["organisation", "generation"]):
        cells[org, gen] = np.average(d["ln_mfu"], weights=d["weight"])
    orgs = {}
    for (org, _), v in cells.items():
        orgs.setdefault(org, []).append(v)
    mu = np.mean([np.mean(v) for v in orgs.values()])
    own = [
        np.mean([v for (_, g), v in cells.items() if g == gen]) for gen in ("A100", "H100", "TPU")
    ]
    return math.sqrt(np.mean((np.array(own) - mu) ** 2))


def _ramp(active):
    """Share of the small-model spread: 1 at or below 1B, 0 from 5B up, linear in ln between."""
    return np.clip(np.log(5e9 / np.asarray(active, dtype=float)) / math.log(5), 0.0, 1.0)


def _parts(e, active, gen, share=0.85):
    """(base, extra) sized on the log errors: the base holds ``share`` of the runs of 5B and
    up on a calibrated generation, the extra ``share`` of the smaller ones (each needs
    k = SQRT(MAX(0, (e / Z90)^2 - base^2) / its ramp) to sit inside its P10..P90)."""
    w, known = _ramp(active), gen != "other"
    small = w > 0
    base = np.quantile(np.abs(e[~small & known]), share) / Z90
    pick = small & known
    need = np.sqrt(np.maximum(0.0, (e[pick] / Z90) ** 2 - base**2) / w[pick])
    return base, float(np.quantile(need, share))


def _sigmas(e, active, gen, share=0.85):
    """Per-run sigma: the base spread, wider below 5B active (ramping in over ln(active) to
    all of the extra at 1B) and off the calibrated generations."""
    base, extra = _parts(e, active, gen, share)
    other = _generation_sd_by_hand(calibration.calibration_set())
    known = gen != "other"
    return np.sqrt(base**2 + _ramp(active) * extra**2 + (~known) * other**2), base, extra


def _recomputed(table, cal):
    """The summary figures of a validation table, recomputed from its predicted MFUs."""
    hours = cal["model_training_flops"] / (
        cal["peak_tflops"] * 1e12 * table["predicted_mfu"] * 3600
    )
    np.testing.assert_allclose(table["predicted_accelerator_hours"], hours, rtol=1e-12)
    ratio = (cal["disclosed_accelerator_hours"] / hours).to_numpy()
    np.testing.assert_allclose(table["error_pct"], 100 * (1 / ratio - 1), rtol=1e-9)
    e = np.log(ratio)
    np.testing.assert_allclose(table["log_error"], e, rtol=1e-12)
    active, gen = cal["active_params"].to_numpy(), cal["generation"].to_numpy()
    sigma, base, extra = _sigmas(e, active, gen)
    inside = list(np.abs(e) <= Z90 * sigma)
    assert list(table["inside_p10_p90"]) == inside
    score = np.mean(-0.5 * np.log(2 * np.pi * sigma**2) - e**2 / (2 * sigma**2))
    orgs = cal["organisation"].to_numpy()
    nested = []
    for i in range(len(e)):
        rest = orgs != orgs[i]
        # the run's own sigma sized on the other organisations only
        b, x = _parts(e[rest], active[rest], gen[rest])
        o = _generation_sd_by_hand(cal)
        mine = math.sqrt(b**2 + _ramp(active[i]) * x**2 + (gen[i] == "other") * o**2)
        nested.append(abs(e[i]) <= Z90 * mine)
    return {"runs": len(e), "median_abs_error_pct": float(np.median(np.abs(100 * (1 / ratio - 1)))),
            "mean_log_error": float(np.mean(e)), "sigma_ln": base, "small_model_sigma": extra,
            "share_inside_p10_p90": float(np.mean(inside)), "mean_log_score": score,
            "nested_share_inside_p10_p90": float(np.mean(nested))}  # fmt: skip


def _assert_same(summary, want):
    for k, v in want.items():
        assert summary[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_grouped_validation_leaves_out_every_run_of_an_organisation_and_is_recomputed():
    cal = calibration.calibration_set()
    chosen = calibration.chosen_model()
    table = calibration.grouped_validation()
    assert list(table.index) == list(cal.index)
    for org in ("Meta", "Microsoft", "Google", "DeepSeek"):
        m = calibration.fit(chosen, cal[cal["organisation"] != org])
        mine = cal[cal["organisation"] == org]
        want = m.predict(mine["generation"].to_numpy(), mine["active_params"].to_numpy())
        np.testing.assert_allclose(table.loc[mine.index, "predicted_mfu"], want, rtol=1e-12)
        # a fit that keeps the organisation's other runs predicts differently (leave-one-out)
        keep = calibration.fit(chosen, cal.drop(mine.index[0]))
        other = keep.predict(mine["generation"].iloc[0], mine["active_params"].iloc[0])
        assert other != pytest.approx(float(table.loc[mine.index[0], "predicted_mfu"]))
    want = _recomputed(table, cal)
    _assert_same(calibration.grouped_summary(), want)
    # the figures the docs, README and `compute-lab runs` print are the stored ones
    _assert_same(calibration.fitted()["grouped"], want)
    assert calibration.throughput_sigma() == pytest.approx(want["sigma_ln"], rel=1e-12)


def test_leave_one_out_figures_are_recomputed():
    cal = calibration.calibration_set()
    loo = calibration.leave_one_out()
    for name in ("Llama 3.1 405B", "Phi-2", "PaLM 540B"):
        m = calibration.fit(calibration.chosen_model(), cal.drop(name))
        row = cal.loc[name]
        want = m.predict(row["generation"], row["active_params"])
        assert loo.loc[name, "predicted_mfu"] == pytest.approx(want, rel=1e-12)
    want = _recomputed(loo, cal)
    _assert_same(calibration.loo_summary(), want)
    _assert_same(calibration.fitted()["leave_one_out"], want)


def test_constant_grouped_validation_recomputed_by_hand():
    cal = calibration.calibration_set()
    y = np.log(cal["implied_mfu"].to_numpy())
    orgs = cal["organisation"].to_numpy()
    pred = np.array([math.exp(np.median(y[orgs != o])) for o in orgs])
    err = 100 * (cal["implied_mfu"].to_numpy() / pred - 1)  # predicted / disclosed hours - 1
    got = calibration.grouped_summary("constant")
    assert got["median_abs_error_pct"] == pytest.approx(np.median(np.abs(err)), rel=1e-9)


def test_chosen_model_beats_the_best_constant_under_grouped_validation():
    cmp = calibration.model_comparison()
    chosen = calibration.chosen_model()
    assert cmp["chosen"].sum() == 1 and cmp.loc[chosen, "chosen"]
    assert chosen.startswith("pooled")
    for other in ("constant", "constant (organisations)"):
        assert cmp.loc[chosen, "median_abs_error_pct"] < cmp.loc[other, "median_abs_error_pct"]
        assert cmp.loc[chosen, "mean_log_score"] > cmp.loc[other, "mean_log_score"]
    # the former constant 30.4% (not refitted) is biased and its log score is worse
    legacy = cmp.loc["legacy constant 30.4%"]
    assert cmp.loc[chosen, "mean_log_score"] > legacy["mean_log_score"]
    assert abs(cmp.loc[chosen, "mean_log_error"]) < abs(legacy["mean_log_error"])
    assert cmp.loc[chosen, "fitted_numbers"] <= 5
    # honest ranges under grouped validation: unbiased, P10..P90 holding 75-85% of the runs
    assert abs(cmp.loc[chosen, "mean_log_error"]) <= 0.05
    assert 0.75 <= cmp.loc[chosen, "share_inside_p10_p90"] <= 0.85
    assert 0.75 <= cmp.loc[chosen, "nested_share_inside_p10_p90"] <= 0.85
    # 25.4% on the 57 runs (26.5% on the 51 of round 3; 29.2% with the linear size slope)
    assert cmp.loc[chosen, "median_abs_error_pct"] <= 27
    # the linear pooled slope is scored, not eligible: the planner's formula saturates at 5B
    assert "pooled generation+size" not in calibration.ELIGIBLE
    # the free per-generation + slope fit (the former default) is scored but not eligible
    # (issue 17: partial pooling); held out by organisation, it predicts about 50% or more on
    # the largest A100 runs, the failure the issue describes (the 55% cap on the 51 runs of
    # round 3, 54% on the 57 of round 4)
    assert "generation+size (free)" not in calibration.ELIGIBLE
    free = calibration.grouped_validation("generation+size (free)")
    assert free["predicted_mfu"].max() >= 0.5


def test_the_choice_is_fair_stable_and_not_the_hindsight_constant():
    f = calibration.fitted()
    choice, grouped = f["choice"], f["grouped"]
    # the fair baseline: constants fitted inside each fold; the chosen model beats both
    assert grouped["median_abs_error_pct"] < choice["in_fold_constant_median_abs_error_pct"]
    assert grouped["mean_log_score"] > choice["in_fold_constant_mean_log_score"]
    assert grouped["median_abs_log_error"] < choice["in_fold_constant_median_abs_log_error"]
    # the best fixed constant chosen with hindsight (it sees every run it is scored on) buys
    # its median |error| with a bias: it predicts too few hours (mean ln error > +0.2)
    mfu, hind = calibration.hindsight_constant()
    assert mfu == pytest.approx(choice["hindsight_constant_mfu"])
    assert hind["mean_log_error"] > 0.2
    assert grouped["mean_log_score"] > hind["mean_log_score"]
    assert grouped["median_abs_log_error"] < hind["median_abs_log_error"]
    # the choice made again with each organisation out of the whole data agrees mostly
    stability = calibration.choice_stability()
    share = sum(v == calibration.chosen_model() for v in stability.values()) / len(stability)
    assert share == pytest.approx(choice["stability_share"]) and share >= 0.75


def test_a_richer_candidate_needs_the_margin_and_no_winner_falls_back_to_the_constant():
    base = {"median_abs_error_pct": 30.0, "mean_log_score": -0.6}
    good = {"median_abs_error_pct": 25.0, "mean_log_score": -0.40}
    s = {m: base for m in calibration.CONSTANTS}
    s |= {
        "pooled generation": good,
        "pooled generation+small-model size": good
        | {"mean_log_score": -0.40 + calibration.CHOICE_MARGIN / 2},
    }
    assert calibration._choose(s) == "pooled generation"
    s["pooled generation+small-model size"] = good | {"mean_log_score": -0.35}
    assert calibration._choose(s) == "pooled generation+small-model size"
    worse = {"median_abs_error_pct": 31.0, "mean_log_score": -0.3}
    s |= {"pooled generation": worse, "pooled generation+small-model size": worse}
    assert calibration._choose(s) == "constant (organisations)"


def test_own_runs_of_a_catalogue_organisation_pull_its_runs_closer():
    """Each run of an organisation with two or more, predicted with the organisation held
    out and its other runs on the same generation given as own runs: the mean |ln error|
    falls (0.294 -> 0.280; the median does not move: the gain is small, see
    docs/methodology-calibration.md). BigCode's runs (A100, V100) and EleutherAI's (A100, TPU)
    are on different generations, so neither pulls the other: 48 runs scored, 44 pulled (AMD's
    two MI250 runs pull each other). The stored figures are recomputed."""
    got = calibration.own_runs_validation()
    stored = calibration.fitted()["own_runs"]
    for key, value in stored.items():
        assert got[key] == pytest.approx(value, rel=1e-9), key
    assert got["mean_abs_log_error_after"] < got["mean_abs_log_error_before"]
    assert (got["runs"], got["runs_pulled"]) == (48, 44)


def test_intercepts_are_pulled_toward_the_shared_mean_by_their_organisations():
    cal = calibration.calibration_set()
    m = calibration.fit("pooled generation", cal)
    mu = m.intercepts["other"]
    k = calibration.POOLING_ORGANISATIONS
    for g in ("A100", "H100", "TPU"):
        runs = cal[cal["generation"] == g]
        orgs = runs.groupby("organisation").apply(
            lambda d: pd.Series({"mean": np.average(d["ln_mfu"], weights=d["weight"]),
                                 "weight": d["weight"].mean()}), include_groups=False)  # fmt: skip
        own = np.average(orgs["mean"], weights=orgs["weight"])
        n = orgs["weight"].sum()
        assert m.intercepts[g] == pytest.approx(mu + n / (n + k) * (own - mu), rel=1e-12)
        assert abs(m.intercepts[g] - mu) < abs(own - mu)  # pulled in, never past the mean
    # fewer organisations, more pull: TPU rests on two organisations, A100 on many
    n_orgs = cal.groupby("generation")["organisation"].nunique()
    assert n_orgs["TPU"] < n_orgs["A100"]


def test_the_size_slope_is_learnt_within_organisations_and_shrunk(monkeypatch):
    cal = calibration.calibration_set()
    pooled = calibration.fit("pooled generation+size", cal)
    # an organisation's overall efficiency does not move the slope (learnt within it)
    shifted = cal.copy()
    meta = shifted["organisation"] == "Meta"
    shifted.loc[meta, "ln_mfu"] += 0.7
    moved = calibration.fit("pooled generation+size", shifted)
    assert moved.slope == pytest.approx(pooled.slope, rel=1e-9, abs=1e-12)
    # the ridge shrinks it toward 0
    monkeypatch.setattr(calibration, "SLOPE_RIDGE", 0.0)
    raw = calibration.fit("pooled generation+size", cal)
    assert abs(pooled.slope) < abs(raw.slope)


def test_the_cap_and_floor_are_checked_against_the_data():
    cal = calibration.calibration_set()
    assert (cal["implied_mfu"] > calibration.MFU_MAX).sum() <= 1  # Phi-2 (rounded days)
    # Llama 3.2 1B (distilled) and Granite-3.0-1B-MoE (400M active parameters)
    assert (cal["implied_mfu"] < calibration.MFU_MIN).sum() <= 2
    grouped = calibration.grouped_validation()
    assert grouped["predicted_mfu"].between(calibration.MFU_MIN, calibration.MFU_MAX,
                                            inclusive="neither").all()  # fmt: skip


def test_fitted_numbers_are_data_that_a_refit_reproduces():
    stored, now = calibration.fitted(), calibration.refit()
    assert stored["model"] == now["model"] == calibration.chosen_model()
    for key in calibration.FITTED_FIGURES:
        assert stored[key] == pytest.approx(now[key], rel=1e-9, abs=1e-12), key
    for g, a in now["intercepts"].items():
        assert stored["intercepts"][g] == pytest.approx(a, rel=1e-9), g
    m = calibration.default_mfu_model()
    assert (m.intercepts, m.slope) == (dict(stored["intercepts"]), stored["slope"])
    assert 0.1 < stored["organisation_sd"] < stored["throughput_sigma"] * 2
    # the organisations' means scatter no more than their runs' own scatter explains
    within, between = stored["within_organisation_sd"], stored["between_organisation_sd"]
    assert 0 <= between <= stored["organisation_sd"] < within


def test_no_fit_runs_when_a_plan_is_estimated(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a fit ran")

    calibration.fitted.cache_clear()
    calibration.default_mfu_model.cache_clear()
    monkeypatch.setattr(calibration, "fit", refuse)
    monkeypatch.setattr(calibration, "refit", refuse)
    assert 0.1 < calibration.predicted_mfu("H100 SXM", 70e9) < 0.55
    assert calibration.default_range_pct() > 0


def test_predicted_mfu_is_the_spreadsheet_formula_and_stays_clamped():
    c = calibration.excel_coefficients()
    gens = c["generation_of_accelerator"]
    cases = [("H100 SXM", 405e9), ("A100 SXM 80GB", 7e9), ("TPU v4", 540e9),
             ("B200 (HGX)", 37e9), ("A100 SXM 40GB", 1e12), ("H800 SXM", 1e8)]  # fmt: skip
    for accel, active in cases:
        a = c[f"mfu_ln_intercept_{gens[accel]}"]
        knee = c["small_model_active_params"]
        ln_mfu = a + c["mfu_ln_slope_below_small_model"] * math.log(min(active, knee) / knee)
        excel = min(c["mfu_max"], max(c["mfu_min"], math.exp(ln_mfu)))
        assert calibration.predicted_mfu(accel, active) == pytest.approx(excel, rel=1e-12)
    steep = calibration.MfuModel("test", {"H100": -1.5, "other": 0.0}, slope=0.5)
    got = steep.predict(np.array(["H100", "other"]), np.array([1e6, 1e15]))
    assert got.shape == (2,)
    assert got[0] == calibration.MFU_MIN and got[1] == calibration.MFU_MAX
    assert calibration.generation_of("unknown chip") == "other"
    assert c["z_p90"] == pytest.approx(Z90)


def test_the_spread_is_wider_where_less_is_known():
    base = calibration.throughput_sigma()
    f = calibration.fitted()
    assert calibration.throughput_sigma_for("H100 SXM", 70e9) == pytest.approx(base, rel=1e-12)
    small = calibration.throughput_sigma_for("H100 SXM", 1e9)
    other = calibration.throughput_sigma_for("MI300X", 70e9)
    both = calibration.throughput_sigma_for("no such chip", 1e9)
    assert small == pytest.approx(math.hypot(base, f["small_model_sigma"]), rel=1e-12)
    assert other == pytest.approx(math.hypot(base, f["other_accelerator_sigma"]), rel=1e-12)
    assert base < min(small, other) and max(small, other) < both
    assert f["other_accelerator_sigma"] == pytest.approx(
        _generation_sd_by_hand(calibration.calibration_set()), rel=1e-12
    )
    got = calibration.throughput_sigma_for(np.array(["A100", "B200 (HGX)"]), np.array([7e9, 3e9]))
    assert got.shape == (2,) and got[0] == pytest.approx(base) and got[1] > other
    # a blank uncertainty in a plan takes the plan's own calibrated spread
    from udfs.plan import resolve

    r = resolve({"total_params": 3e9, "training_tokens": 1e12, "accelerators": 64,
                 "accelerator_name": "MI300X", "mfu": 0.3})  # fmt: skip
    assert r.throughput_sigma == pytest.approx(
        calibration.throughput_sigma_for("MI300X", 3e9), rel=1e-12
    )


def test_a_typed_mfu_above_the_calibrated_p90_is_flagged_by_its_threshold():
    p50 = calibration.predicted_mfu("H100 SXM", 70e9)
    p90 = calibration.mfu_p90("H100 SXM", 70e9)
    assert p90 == pytest.approx(p50 * (1 + calibration.default_range_pct()), rel=1e-12)
    small = calibration.mfu_p90("H100 SXM", 1e9) / calibration.predicted_mfu("H100 SXM", 1e9)
    assert small > p90 / p50  # less is known about a small model: a higher P90 MFU
    assert p90 > p50


def test_default_mfu_keeps_its_meaning_for_the_faces():
    t = calibration.reference_table()
    assert calibration.default_mfu() == pytest.approx(np.median(t["implied_mfu"].dropna()))


# -- ranges --------------------------------------------------------------------------------------

probs = st.floats(0.001, 0.999)
sigmas = st.floats(0.0, 3.0, allow_subnormal=False)
points = st.floats(1e-6, 1e15)


@given(points, sigmas)
def test_p10_p50_p90_are_ordered_and_p50_is_the_point(point, sigma):
    p10, p50, p90 = (ranges.range_of(point, p, sigma) for p in (0.1, 0.5, 0.9))
    assert p10 <= p50 <= p90
    assert p50 == point


@given(points, sigmas, probs, probs)
def test_quantiles_are_monotone_in_p(point, sigma, a, b):
    lo, hi = sorted((a, b))
    assert ranges.range_of(point, lo, sigma) <= ranges.range_of(point, hi, sigma) * (1 + 1e-12)


@given(points, probs, sigmas, sigmas)
def test_quantiles_widen_with_sigma(point, p, s1, s2):
    lo, hi = sorted((s1, s2))
    q_lo, q_hi = ranges.range_of(point, p, lo), ranges.range_of(point, p, hi)
    if p > 0.5:
        assert q_hi >= q_lo * (1 - 1e-12)
    elif p < 0.5:
        assert q_hi <= q_lo * (1 + 1e-12)


@given(
    st.floats(0.5, 20),
    st.floats(0, 1e6, allow_subnormal=False),
    st.floats(0, 1.0),
    st.floats(0, 1.0),
)
def test_estimate_ranges_order_p50_and_combination(price, other, s_tp, s_price):
    point = engine.estimate(
        total_params=70e9, training_tokens=1e12, accelerators=1024, effective_tflops=400.0,
        usd_per_accelerator_hour=price, usd_per_kwh=0.1, other_costs_usd=other,
    )  # fmt: skip
    r = ranges.estimate_ranges(point, s_tp, s_price)
    assert set(r) == set(ranges.QUANTITIES)
    for q, v in r.items():
        assert v["p10"] <= v["p50"] * (1 + 1e-12) and v["p50"] <= v["p90"] * (1 + 1e-12), q
        assert v["p50"] == point[q], q
    # throughput drives hours, days and energy together; price adds independently to rental
    f90 = math.exp(Z90 * s_tp)
    for q in ("accelerator_hours", "wall_clock_days", "electricity_kwh", "electricity_cost_usd"):
        assert r[q]["p90"] == pytest.approx(point[q] * f90, rel=1e-12)
    s_rent = math.sqrt(s_tp**2 + s_price**2)
    assert r["compute_cost_usd"]["p90"] == pytest.approx(
        point["compute_cost_usd"] * math.exp(Z90 * s_rent), rel=1e-12
    )
    assert r["total_cost_usd"]["p90"] == pytest.approx(
        r["compute_cost_usd"]["p90"] + r["electricity_cost_usd"]["p90"] + other, rel=1e-12
    )


@given(st.floats(1e-3, 1e6), st.floats(1.0, 100.0))
def test_a_user_low_high_is_read_as_p10_p90(low, ratio):
    high = low * ratio
    s = ranges.sigma_from_p10_p90(low, high)
    mid = math.sqrt(low * high)
    assert ranges.range_of(mid, 0.1, s) == pytest.approx(low, rel=1e-9)
    assert ranges.range_of(mid, 0.9, s) == pytest.approx(high, rel=1e-9)


def test_ranges_are_vectorised_and_refuse_nonsense():
    pts = np.array([1.0, 2.0, 3.0])
    got = ranges.range_of(pts, np.array([0.1, 0.5, 0.9]), np.array([0.2, 0.3, 0.4]))
    want = pts * np.exp([-0.2 * Z90, 0.0, 0.4 * Z90])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert ranges.z_score(np.array([[0.1, 0.9]])).shape == (1, 2)
    for p in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="probability"):
            ranges.quantile_factor(p, 0.2)
    with pytest.raises(ValueError, match="sigma"):
        ranges.quantile_factor(0.9, -0.1)
    with pytest.raises(ValueError, match="low <= high"):
        ranges.sigma_from_p10_p90(5.0, 4.0)


def test_missing_price_gives_nan_cost_ranges_not_wrong_numbers():
    point = engine.estimate(total_params=7e9, training_tokens=1e12, accelerators=64,
                            effective_tflops=300.0)  # fmt: skip
    r = ranges.estimate_ranges(point, calibration.throughput_sigma())
    assert math.isnan(r["compute_cost_usd"]["p90"])
    assert r["accelerator_hours"]["p50"] == point["accelerator_hours"]


def test_estimate_ranges_takes_any_probability_not_only_whole_percentages():
    point = engine.estimate(
        total_params=70e9, training_tokens=1e12, accelerators=1024, effective_tflops=400.0,
        usd_per_accelerator_hour=2.0, usd_per_kwh=0.1,
    )  # fmt: skip
    r = ranges.estimate_ranges(point, 0.27, 0.1, ps=(0.001, 0.125, 0.5))
    hours = r["accelerator_hours"]
    assert set(hours) == {"p0.1", "p12.5", "p50"}
    assert hours["p0.1"] < hours["p12.5"] < hours["p50"] == point["accelerator_hours"]


def test_the_calibration_picture_shows_every_run_organisation_held_out():
    import re

    from workbook_templates import calibration_picture

    svg = calibration_picture.calibration_svg()
    table = calibration.grouped_validation()
    titles = re.findall(r"<title>(.+?) \((.+?)\): ([+-]\d+)%</title>", svg)
    assert len(titles) == len(table)
    for (run, org, err), r in zip(titles, table.itertuples(index=False), strict=True):
        assert (run, org, int(err)) == (r.run, r.organisation, round(r.error_pct))
    assert svg.count('class="band"') == 1
    for org in table["organisation"].unique():
        assert f">{org}</text>" in svg
    # the committed picture is the one the data draws now
    from pathlib import Path

    committed = Path(__file__).parent.parent / "docs" / "images" / "calibration.svg"
    assert committed.read_text(encoding="utf-8") == svg
