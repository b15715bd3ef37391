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

import functools
import textwrap
from importlib import resources

import numpy as np

from . import catalogue, model
from ._lazy import lazy_module
from .calibration import (
    _DATA_FILE,
    _Z90,
    CONSTANTS,
    SPREAD_SHARE,
    _calibration_frame,
    _generation_sd,
    _grouped,
    _grouped_on,
    _predict_rows,
    _spread_parts,
    choice_stability,
    chosen_model,
    default_mfu_model,
    fit,
    fitted,
    grouped_summary,
    hindsight_constant,
    loo_summary,
    pooling_group,
    small_model_share,
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
    between^2 is the team-to-team variance (the part of sigma^2 the rule before
    :func:`narrowing_design` took own runs to remove), within is reported beside it.

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
    return {
        o: (ln_active[orgs == o], r[orgs == o], group[orgs == o])
        for o in np.unique(orgs)
        if (orgs == o).sum() >= 2
    }


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
            rows.append(
                {
                    "run": tm.index[i],
                    "organisation": org,
                    "own_runs": n,
                    "h": h,
                    "k": k,
                    "pull": pull,
                    "before": abs(r[i]),
                    "after": abs(r[i] - u),
                }
            )
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


# -- how far own runs narrow each part of the spread -----------------------------------------------


def _units(table, unit):
    """Each run's unit of own runs: its organisation, or its organisation and family."""
    org = table["organisation"].to_numpy().astype(str)
    if unit == "organisation":
        return org
    family = catalogue.runs().loc[table.index, "family"].to_numpy().astype(str)
    return np.char.add(np.char.add(org, "|"), family)


def _pulled(table, h, k, unit="organisation"):
    """The runs of ``table`` (each predicted without its organisation: ``implied_mfu``,
    ``predicted_mfu``, ``active_params``, ``accelerator``, ``generation``, ``organisation``)
    whose ``unit`` ("organisation", or "family": the organisation's runs of one model family)
    holds another run, each pulled toward the unit's other runs in its pooling group as own
    runs (:func:`udfs.own_runs.own_runs_pull`). A dict of arrays, one value a run: ``run``,
    ``before`` and ``after`` (ln implied / predicted MFU, before and after the pull),
    ``pull``, ``active_params`` and ``other`` (True outside the calibrated generations)."""
    r = np.log(table["implied_mfu"].to_numpy(float) / table["predicted_mfu"].to_numpy(float))
    ln_active = np.log(table["active_params"].to_numpy(float))
    group = pooling_group(table["accelerator"].to_numpy())
    units = _units(table, unit)
    cols = {c: [] for c in ("run", "before", "after", "pull", "active_params", "other")}
    for u in np.unique(units):
        idx = np.flatnonzero(units == u)
        if len(idx) < 2:
            continue
        pulled = _pulled_by_the_others(ln_active[idx], r[idx], group[idx], h, k)
        for i, (_, shift, pull) in zip(idx, pulled, strict=True):
            for c, v in (
                ("run", table.index[i]),
                ("before", r[i]),
                ("after", r[i] - shift),
                ("pull", pull),
                ("active_params", np.exp(ln_active[i])),
                ("other", table["generation"].iloc[i] == "other"),
            ):
                cols[c].append(v)
    return {c: np.array(v) for c, v in cols.items()}


def _least_share(needs):
    """The share a full pull removes that leaves :data:`SPREAD_SHARE` of the runs inside:
    the (1 - SPREAD_SHARE) percentile of the largest share each run allows, within [0, 1]
    (0 without runs)."""
    if len(needs) == 0:
        return 0.0
    return float(np.clip(np.quantile(needs, 1.0 - SPREAD_SHARE), 0.0, 1.0))


def narrowing_design(pulled, parts):
    """(base, small): the shares of the base variance (sigma^2) and of the small model's extra
    variance that a pull of 1 removes (the spec's ``own_runs_plan_sigma``: each part
    x (1 - pull x its share)), fitted on ``pulled`` (:func:`_pulled`) with the spread's
    ``parts`` (sigma, small-model sigma).

    A run of a calibrated generation stays inside its P10..P90 after the pull while the share
    is at most its need: for a run of at least the small-model size, (1 - (|after| /
    NORM.S.INV(0.9))^2 / sigma^2) / pull; below it, with the base share fitted, (1 -
    ((|after| / NORM.S.INV(0.9))^2 - sigma^2 x (1 - pull x base)) / (small share x small
    sigma^2)) / pull. Each share is the (1 - :data:`SPREAD_SHARE`) percentile of its runs'
    needs, so that SPREAD_SHARE of them stay inside, as the spread itself is sized."""
    s, small_sd = parts
    pull, w = pulled["pull"], small_model_share(pulled["active_params"])
    told = (pulled["after"] / _Z90) ** 2
    known = (pull > 0) & ~pulled["other"].astype(bool)
    large, small = known & (w == 0), known & (w > 0)
    base = _least_share((1.0 - told[large] / s**2) / pull[large])
    left = s**2 * (1.0 - pull[small] * base)
    need = (1.0 - (told[small] - left) / (w[small] * small_sd**2)) / pull[small]
    return base, _least_share(need)


def narrowed_sigmas(pulled, parts, slope, base, small):
    """The runs' spreads (sigma of ln hours) narrowed by their pull with shares ``base`` and
    ``small``: the spec's ``own_runs_plan_sigma`` (a pull of 0: ``calibrated_plan_sigma``)."""
    values = {
        "calibrated_throughput_sigma": parts[0],
        "calibrated_small_model_sigma": parts[1],
        "active_params": pulled["active_params"],
        "own_runs_pull": pulled["pull"],
        "accelerator_extra_sigma": np.where(pulled["other"], _generation_sd(), 0.0),
        "own_runs_base_narrowing": base,
        "own_runs_small_narrowing": small,
        "mfu_ln_slope": slope,
    }
    return model.evaluate(values, ["own_runs_plan_sigma"])["own_runs_plan_sigma"]


#: The stored shares of :func:`narrowing_design`, in its order.
NARROWING_FIGURES = ("own_runs_base_narrowing", "own_runs_small_narrowing")

#: The rules a held-out run's spread is measured under (:func:`narrowing_validation`): no own
#: runs; own runs narrowing the team-to-team variance only (``team_between_sd``^2 of
#: sigma^2, none of the small model's extra: the rule before the shares were fitted); own runs
#: with the fitted shares.
NARROWING_RULES = ("without", "team_only", "fitted")


def _fold(name, t, org):
    """The figures of organisation ``org`` held out: the model, h and k, the spread and the
    shares fitted on the other organisations only, then ``org``'s runs pulled toward its
    other runs (unit "organisation") and its family's other runs (unit "family")."""
    mine = (t["organisation"] == org).to_numpy()
    rest, tm = t[~mine], t[mine]
    inner = _grouped_on(name, rest)
    h, k = own_runs_design(inner)
    parts = _spread_parts(inner)
    shares = {
        "without": (0.0, 0.0),
        "team_only": (min(1.0, _cell_spread(inner)[1] ** 2 / parts[0] ** 2), 0.0),
        "fitted": narrowing_design(_pulled(inner, h, k), parts),
    }
    m = fit(name, rest)
    outer = tm.assign(predicted_mfu=_predict_rows(m, tm))
    out = {}
    for unit in ("organisation", "family"):
        p = _pulled(outer, h, k, unit)
        keep = p["pull"] > 0
        p = {c: v[keep] for c, v in p.items()}
        alone = p | {"pull": np.zeros_like(p["pull"])}  # no own runs: the calibrated range
        p["sigma"] = {
            rule: narrowed_sigmas(alone if rule == "without" else p, parts, m.slope, *shares[rule])
            for rule in NARROWING_RULES
        }
        p["shares"] = shares["fitted"]
        out[unit] = p
    return out


def _ranges_summary(folds):
    """The held-out figures of one unit's folds (:func:`_fold`), as stored and published."""
    cat = {c: np.concatenate([f[c] for f in folds]) for c in ("before", "after", "active_params")}
    small = small_model_share(cat["active_params"]) > 0
    out = {"runs": len(cat["before"]), "small_model_runs": int(small.sum())}
    for rule in NARROWING_RULES:
        sigma = np.concatenate([f["sigma"][rule] for f in folds])
        e = cat["before"] if rule == "without" else cat["after"]
        ratio = np.exp(_Z90 * sigma)
        out[f"share_inside_{rule}"] = float(np.mean(np.abs(e) <= _Z90 * sigma))
        out[f"small_model_share_inside_{rule}"] = float(
            np.mean(np.abs(e[small]) <= _Z90 * sigma[small])
        )
        out[f"median_p90_over_p50_{rule}"] = float(np.median(ratio))
        out[f"small_model_median_p90_over_p50_{rule}"] = float(np.median(ratio[small]))
    for when in ("before", "after"):
        out[f"median_abs_error_pct_{when}"] = float(100 * np.median(np.abs(np.expm1(cat[when]))))
    shares = np.array([f["shares"] for f in folds])
    out |= {
        "base_share_least": float(shares[:, 0].min()),
        "base_share_most": float(shares[:, 0].max()),
        "small_share_least": float(shares[:, 1].min()),
        "small_share_most": float(shares[:, 1].max()),
    }
    return out


@functools.cache
def narrowing_validation(model=None):
    """What own runs do to the range on runs no fit saw: for each organisation with two or
    more runs, held out of everything (:func:`_fold`), its runs with own runs in their pooling
    group, pulled toward the organisation's other runs ("organisation") and toward their
    family's other runs ("family"). unit -> the share of the disclosed hours inside
    P10..P90 and the median P90 / P50 under each of :data:`NARROWING_RULES`, of every run and
    of the models below the small-model size, the median |error| before and after the pull
    (%), and the range of the shares the folds fitted."""
    name = chosen_model() if model is None else model
    t = _calibration_frame()
    orgs = [o for o in sorted(t["organisation"].unique()) if (t["organisation"] == o).sum() >= 2]
    folds = [_fold(name, t, o) for o in orgs]
    return {unit: _ranges_summary([f[unit] for f in folds]) for unit in ("organisation", "family")}


def _narrowing(name):
    """The stored shares: :func:`narrowing_design` on every organisation's runs (each
    predicted without its organisation) pulled toward its other runs, with the stored h, k."""
    g = _grouped(name)
    return narrowing_design(_pulled(g, *own_runs_design(g)), _spread_parts(g))


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
    r = t["ln_mfu"].to_numpy() - m.ln_mfu(
        t["generation"].to_numpy(), t["active_params"].to_numpy(float)
    )
    return _spread_of_groups(r, t["organisation"].to_numpy())


def refit():
    """The fitted numbers computed now from the catalogue (what ``calibration.toml`` holds).

    A dict: ``model``, ``intercepts`` (generation -> ln-MFU intercept), ``slope``,
    ``throughput_sigma`` (grouped-validation sigma of ln hours), ``small_model_sigma``,
    ``other_accelerator_sigma``, ``organisation_sd`` (standard deviation of the organisations'
    mean ln-MFU residuals), ``within_organisation_sd`` and ``between_organisation_sd`` (see
    :func:`_organisation_spread`), ``team_within_sd`` and ``team_between_sd`` (see
    :func:`_team_spread`), ``own_runs_size_h`` and ``own_runs_k`` (see
    :func:`own_runs_design`), ``own_runs_base_narrowing`` and ``own_runs_small_narrowing``
    (see :func:`narrowing_design`), the ``grouped`` and ``leave_one_out`` summaries of the
    chosen model, and ``own_runs_ranges_organisation`` / ``_family`` (see
    :func:`narrowing_validation`).
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
        **dict(zip(NARROWING_FIGURES, _narrowing(name), strict=True)),
        "grouped": grouped,
        "leave_one_out": loo,
        "choice": _choice_figures(name),
        "own_runs": {k: v for k, v in own_runs_validation(name).items() if k != "table"},
        **{f"own_runs_ranges_{unit}": v for unit, v in narrowing_validation(name).items()},
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
    *NARROWING_FIGURES,
)

#: How each stored figure was fitted, written above it in ``calibration.toml``.
PROVENANCE = {
    "own_runs_base_narrowing": "share of sigma^2 a pull of 1 removes: every organisation's "
    "runs (each predicted without its organisation) pulled toward its other runs; the 15th "
    "percentile of the share each run of 5B or more allows and stays inside P10..P90 "
    "(udfs.refit.narrowing_design)",
    "own_runs_small_narrowing": "share of the small-model sigma^2 a pull of 1 removes: the "
    "same, on the runs below 5B, the base share fitted",
}


def write_fitted(path=None):
    """Refit and write the fitted numbers to ``udfs/data/calibration.toml`` (or ``path``).

    Run after the catalogue's runs change: ``python -c "from udfs import refit;
    refit.write_fitted()"``; a test fails until the file matches a refit.
    """
    f = refit()
    lines = [
        "# Fitted default-MFU numbers (udfs.refit.refit): data, not a fit at import.",
        "# Regenerate with udfs.refit.write_fitted(); tests/test_calibration.py refits",
        "# and compares. See docs/methodology-calibration.md.",
        "",
    ]
    for key in ("model", *FITTED_FIGURES):
        if key in PROVENANCE:
            lines += [f"# {line}" for line in textwrap.wrap(PROVENANCE[key], 96)]
        lines.append(f"{key} = {_toml_value(f[key])}")
    tables = (
        "intercepts",
        "grouped",
        "leave_one_out",
        "choice",
        "own_runs",
        "own_runs_ranges_organisation",
        "own_runs_ranges_family",
    )
    for table in tables:
        lines += ["", f"[{table}]"]
        lines += [f'"{k}" = {_toml_value(v)}' for k, v in f[table].items()]
    target = path or resources.files("udfs").joinpath("data", _DATA_FILE)
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    fitted.cache_clear()
    default_mfu_model.cache_clear()
    return f
