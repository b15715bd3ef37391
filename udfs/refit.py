"""Refitting the stored numbers: the own-runs pooling and narrowing, fitted on the catalogue's
organisations, and ``udfs/data/calibration.toml`` written.

The default-MFU fit and its validation are :mod:`udfs.calibration`; this module runs only when
the stored numbers are refitted (:func:`write_fitted`, and the test that refits and compares)
or measured (``compute-lab runs``, ``benchmarks/calibration_study.py``): no plan's estimate
imports it.

- :func:`own_runs_design`: the pooling's size width h and prior weight k
  (:func:`udfs.own_runs.own_runs_pull`), chosen on the catalogue's organisations, each
  organisation's runs pulled toward its other runs;
  :func:`own_runs_validation`: what that pull does to the errors, the model, h and k chosen
  without the evaluated organisation.
- :func:`_team_spread`: the team-to-team spread of the grouped-validation residuals.
- :func:`refit` / :func:`write_fitted`: every stored number, computed now / written.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from ._lazy import lazy_module
from .calibration import (
    _DATA_FILE,
    CONSTANTS,
    _calibration_frame,
    _generation_sd,
    _grouped,
    _grouped_on,
    _predict_rows,
    choice_stability,
    chosen_model,
    default_mfu_model,
    fit,
    fitted,
    grouped_summary,
    hindsight_constant,
    loo_summary,
    pooling_group,
)
from .own_runs import own_runs_pull

pd = lazy_module("pandas")

__all__ = [
    "OWN_RUNS_H_GRID",
    "OWN_RUNS_K_GRID",
    "FITTED_FIGURES",
    "own_runs_design",
    "own_runs_validation",
    "refit",
    "write_fitted",
]


def _team_spread(m=None):
    """(within, between) standard deviations of a team's runs around the calibrated default:
    between^2 is the team-to-team variance a team's own runs narrow the spread by
    (:mod:`udfs.own_runs`: sigma^2 - pull x between^2); within is reported beside it.

    From the chosen model's leave-one-organisation-out residuals (ln implied / predicted MFU,
    each run's organisation out of the fit: how a new team's runs miss the default), grouped
    by (organisation, :func:`pooling_group`): between^2 is the mean product of two different runs'
    residuals in one group (their shared part), within^2 the pooled variance inside the
    groups. ``m`` (a model name) defaults to the chosen one."""
    return _cell_spread(_grouped(chosen_model() if m is None else m))


def _cell_spread(table):
    r = np.log(table["implied_mfu"].to_numpy(float) / table["predicted_mfu"].to_numpy(float))
    cells = (
        table["organisation"] + "|" + pooling_group(table["accelerator"].to_numpy())
    ).to_numpy()
    names, inverse, counts = np.unique(cells, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=r)
    squares = np.bincount(inverse, weights=r * r)
    pairs = float(np.sum(counts * (counts - 1)))
    between2 = float(np.sum(sums**2 - squares)) / pairs if pairs else 0.0
    means = sums / counts
    within2 = float(np.sum((r - means[inverse]) ** 2) / (len(r) - len(names)))
    return float(np.sqrt(within2)), float(np.sqrt(max(between2, _MIN_BETWEEN_VAR)))


#: Floor of the between-team variance (ln units squared): with no shared part in the data the
#: pull of own runs is about 0, not a division by zero.
_MIN_BETWEEN_VAR = 1e-6


#: The grids the own-runs pooling's two numbers are chosen from (:func:`own_runs_design`): the
#: size width h (ln units: a run e^h times larger or smaller than the plan weighs 1/e) and the
#: prior weight k (in runs of the plan's size). k stops at a quarter of a run: with k near 0 a
#: single run would set the MFU alone and remove the whole team-to-team spread.
OWN_RUNS_H_GRID = (8.0, 4.0, 2.0, 1.0, 0.5, 0.25)
OWN_RUNS_K_GRID = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


def _pulled_by_the_others(ln_active, r, group, h, k):
    """For each run of one organisation (ln active, residual, pooling group): (its siblings in
    its group, shift, pull) when the others in its group are its own runs."""
    for i in range(len(r)):
        others = (np.arange(len(r)) != i) & (group == group[i])
        yield (int(others.sum()), *own_runs_pull(ln_active[others], r[others], ln_active[i], h, k))


def _own_runs_errors(groups, h, k):
    """|ln error| before and after the pull, each run of ``groups`` ({organisation: (ln active,
    residual, pooling group)}) pulled toward its organisation's other runs in its group."""
    before, after = [], []
    for ln_active, r, group in groups.values():
        for i, (_, u, _) in enumerate(_pulled_by_the_others(ln_active, r, group, h, k)):
            before.append(abs(r[i]))
            after.append(abs(r[i] - u))
    return np.array(before), np.array(after)


def _own_runs_groups(table):
    """{organisation: (ln active, residual, pooling group)} of the organisations with two or
    more runs in ``table`` (a grouped-validation table: each run predicted without its
    organisation, as a new team's runs miss the default)."""
    r = np.log(table["implied_mfu"].to_numpy(float) / table["predicted_mfu"].to_numpy(float))
    ln_active = np.log(table["active_params"].to_numpy(float))
    group = pooling_group(table["accelerator"].to_numpy())
    orgs = table["organisation"].to_numpy()
    return {o: (ln_active[orgs == o], r[orgs == o], group[orgs == o])
            for o in np.unique(orgs) if (orgs == o).sum() >= 2}  # fmt: skip


def own_runs_design(table=None):
    """(h, k) of the own-runs pooling: the pair of :data:`OWN_RUNS_H_GRID` x
    :data:`OWN_RUNS_K_GRID` with the smallest mean |ln error| when each organisation's runs
    in ``table`` (default: the chosen model's grouped validation) are pulled toward its other
    runs in their pooling group (:func:`udfs.own_runs.own_runs_pull`)."""
    groups = _own_runs_groups(_grouped(chosen_model()) if table is None else table)
    best = None
    for h in OWN_RUNS_H_GRID:
        for k in OWN_RUNS_K_GRID:
            score = float(_own_runs_errors(groups, h, k)[1].mean())
            if best is None or score < best[0] - 1e-12:
                best = (score, h, k)
    return best[1], best[2]


def own_runs_validation(model=None):
    """Each catalogue organisation's runs predicted with the rest of it given as own runs.

    For each organisation with two or more runs: the model fitted without the organisation
    (grouped validation), the pooling's (h, k) chosen without it too (:func:`own_runs_design`
    on the other organisations' runs, each predicted without its own organisation), then each
    of its runs pulled toward its other runs in the same :func:`pooling_group`
    (:mod:`udfs.own_runs`' rule). Returns a dict: ``runs``, ``median_abs_log_error_before`` /
    ``_after``, ``mean_abs_log_error_before`` / ``_after`` (|ln(disclosed / predicted
    hours)|), ``runs_pulled`` (runs with a sibling in their pooling group), and ``table`` (one
    row per run).
    """
    name = chosen_model() if model is None else model
    t = _calibration_frame()
    rows = []
    for org in sorted(t["organisation"].unique()):
        mine = (t["organisation"] == org).to_numpy()
        if mine.sum() < 2:
            continue
        rest = t[~mine]
        h, k = own_runs_design(_grouped_on(name, rest))
        tm = t[mine]
        r = tm["ln_mfu"].to_numpy() - np.log(_predict_rows(fit(name, rest), tm))
        ln_active = np.log(tm["active_params"].to_numpy(float))
        group = pooling_group(tm["accelerator"].to_numpy())
        pulled = _pulled_by_the_others(ln_active, r, group, h, k)
        for i, (n, u, pull) in enumerate(pulled):
            rows.append({"run": tm.index[i], "organisation": org, "own_runs": n, "h": h, "k": k,
                         "pull": pull, "before": abs(r[i]), "after": abs(r[i] - u)})  # fmt: skip
    df = pd.DataFrame(rows).set_index("run")
    return {
        "runs": len(df),
        "runs_pulled": int((df["own_runs"] > 0).sum()),
        "median_abs_log_error_before": float(df["before"].median()),
        "median_abs_log_error_after": float(df["after"].median()),
        "mean_abs_log_error_before": float(df["before"].mean()),
        "mean_abs_log_error_after": float(df["after"].mean()),
        "table": df,
    }


def _spread_of_groups(r, groups):
    names, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=r) / counts
    within2 = float(np.sum((r - means[inverse]) ** 2) / (len(r) - len(names)))
    raw2 = float(np.var(means, ddof=1))
    between2 = max(0.0, raw2 - float(np.mean(within2 / counts)))
    return float(np.sqrt(raw2)), float(np.sqrt(within2)), float(np.sqrt(between2))


def _organisation_spread(m):
    """(raw, within, between) standard deviations of ln-MFU residuals under model ``m``.

    raw: of the organisations' mean residuals; within: of the runs around their
    organisation's mean (pooled, n - organisations degrees of freedom); between: the
    method-of-moments organisation-to-organisation part, raw^2 minus what the within scatter
    alone gives the means (mean of within^2 / runs), floored at 0.
    """
    t = _calibration_frame()
    r = t["ln_mfu"].to_numpy() - m.ln_mfu(t["generation"].to_numpy(),
                                           t["active_params"].to_numpy(float))  # fmt: skip
    return _spread_of_groups(r, t["organisation"].to_numpy())


def refit():
    """The fitted numbers computed now from the catalogue (what ``calibration.toml`` holds).

    A dict: ``model``, ``intercepts`` (generation -> ln-MFU intercept), ``slope``,
    ``throughput_sigma`` (grouped-validation sigma of ln hours), ``small_model_sigma``,
    ``other_accelerator_sigma``, ``organisation_sd`` (standard deviation of the organisations'
    mean ln-MFU residuals), ``within_organisation_sd`` and ``between_organisation_sd`` (see
    :func:`_organisation_spread`), ``team_within_sd`` and ``team_between_sd`` (see
    :func:`_team_spread`), ``own_runs_size_h`` and ``own_runs_k`` (see
    :func:`own_runs_design`), and the
    ``grouped`` and ``leave_one_out`` summaries of the chosen model.
    """
    name = chosen_model()
    m = fit(name)
    grouped, loo = grouped_summary(name), loo_summary(name)
    return {
        "model": name,
        "intercepts": dict(m.intercepts),
        "slope": m.slope,
        "throughput_sigma": grouped["sigma_ln"],
        "small_model_sigma": grouped["small_model_sigma"],
        "other_accelerator_sigma": _generation_sd(),
        **dict(
            zip(
                ("organisation_sd", "within_organisation_sd", "between_organisation_sd"),
                _organisation_spread(m),
                strict=True,
            )
        ),
        **dict(zip(("team_within_sd", "team_between_sd"), _team_spread(name), strict=True)),
        **dict(zip(("own_runs_size_h", "own_runs_k"), own_runs_design(), strict=True)),
        "grouped": grouped,
        "leave_one_out": loo,
        "choice": _choice_figures(name),
        "own_runs": {k: v for k, v in own_runs_validation(name).items() if k != "table"},
    }


def _choice_figures(name):
    """The figures the choice rests on: the fair (fitted-in-fold) constants, the hindsight
    constant (labelled), and the share of leave-one-organisation-out choices that agree."""
    consts = {c: grouped_summary(c) for c in CONSTANTS}
    mfu, hind = hindsight_constant()
    stability = choice_stability()
    return {
        "in_fold_constant_median_abs_error_pct": min(
            s["median_abs_error_pct"] for s in consts.values()
        ),
        "in_fold_constant_mean_log_score": max(s["mean_log_score"] for s in consts.values()),
        "in_fold_constant_median_abs_log_error": min(
            s["median_abs_log_error"] for s in consts.values()
        ),
        "hindsight_constant_mfu": mfu,
        "hindsight_constant_median_abs_error_pct": hind["median_abs_error_pct"],
        "hindsight_constant_median_abs_log_error": hind["median_abs_log_error"],
        "hindsight_constant_mean_log_error": hind["mean_log_error"],
        "hindsight_constant_mean_log_score": hind["mean_log_score"],
        "stability_share": sum(v == name for v in stability.values()) / len(stability),
        "stability_organisations": len(stability),
    }


def _toml_value(v):
    if isinstance(v, str):
        return f'"{v}"'
    return repr(int(v)) if isinstance(v, int) else repr(float(v))


#: The single fitted figures of ``refit()`` (besides the model's name and its tables), in the
#: order :func:`write_fitted` stores them.
FITTED_FIGURES = (
    "slope",
    "throughput_sigma",
    "small_model_sigma",
    "other_accelerator_sigma",
    "organisation_sd",
    "within_organisation_sd",
    "between_organisation_sd",
    "team_within_sd",
    "team_between_sd",
    "own_runs_size_h",
    "own_runs_k",
)


def write_fitted(path=None):
    """Refit and write the fitted numbers to ``udfs/data/calibration.toml`` (or ``path``).

    Run after the catalogue's runs change: ``python -c "from udfs import refit;
    refit.write_fitted()"``; a test fails until the file matches a refit.
    """
    f = refit()
    lines = ["# Fitted default-MFU numbers (udfs.refit.refit): data, not a fit at import.",
             "# Regenerate with udfs.refit.write_fitted(); tests/test_calibration.py refits",
             "# and compares. See docs/methodology-calibration.md.", ""]  # fmt: skip
    for key in ("model", *FITTED_FIGURES):
        lines.append(f"{key} = {_toml_value(f[key])}")
    for table in ("intercepts", "grouped", "leave_one_out", "choice", "own_runs"):
        lines += ["", f"[{table}]"]
        lines += [f'"{k}" = {_toml_value(v)}' for k, v in f[table].items()]
    target = path or resources.files("udfs").joinpath("data", _DATA_FILE)
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    fitted.cache_clear()
    default_mfu_model.cache_clear()
    return f
