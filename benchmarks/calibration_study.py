"""Issue 17 study: own-run pooling designs and default-MFU features under grouped validation.

Not a speed benchmark: it prints figures (the measurement harness behind the tables of
docs/methodology-calibration.md sections 3 and 9). Run:
``.venv/bin/python benchmarks/calibration_study.py [own|features|floors|ranges|all]``;
``ranges --write`` rewrites the held-out ranges table of docs/methodology-calibration.md
section 9 (the coverage own runs give, measured with whole organisations held out).

Own runs: each run of an organisation with two or more runs is predicted by the chosen model
fitted without the organisation, then pulled toward the organisation's other runs. Every
pooling number (k, weights) is chosen without the evaluated organisation ("nested"): on the
other organisations' runs, each predicted by a fit without the evaluated organisation and
without its own organisation.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

from udfs import calibration as cal

Z90 = cal._Z90


# -- own runs ------------------------------------------------------------------------------------


def _residuals(name, evaluated):
    """(residuals of the evaluated organisation's runs under the model fitted without it,
    the inner table: the other organisations' runs each predicted without the evaluated
    organisation and without their own)."""
    t = cal._calibration_frame()
    mine = (t["organisation"] == evaluated).to_numpy()
    rest = t[~mine]
    tm = t[mine]
    r = tm["ln_mfu"].to_numpy() - np.log(cal._predict_rows(cal.fit(name, rest), tm))
    inner = cal._grouped_on(name, rest)
    inner = inner.assign(ln_active=np.log(rest["active_params"].to_numpy(float)),
                         ln_accel=np.log(rest["accelerators"].to_numpy(float)))  # fmt: skip
    return tm.assign(residual=r, ln_active=np.log(tm["active_params"].to_numpy(float)),
                     ln_accel=np.log(tm["accelerators"].to_numpy(float))), inner  # fmt: skip


def _inner_residual(inner):
    return np.log(inner["implied_mfu"].to_numpy(float) / inner["predicted_mfu"].to_numpy(float))


def _moments(table, r):
    """(within^2, same-cell shared^2, same-organisation other-generation shared^2): the mean
    products of residual pairs, as calibration._cell_spread, plus the cross-generation part."""
    org = table["organisation"].to_numpy()
    gen = table["generation"].to_numpy()
    (
        same_cell,
        cross,
    ) = [], []
    for i, j in itertools.combinations(range(len(r)), 2):
        if org[i] != org[j]:
            continue
        (same_cell if gen[i] == gen[j] else cross).append(r[i] * r[j])
    within, between = cal._cell_spread(table)
    s_cell = float(np.mean(same_cell)) if same_cell else 0.0
    s_org = float(np.mean(cross)) if cross else 0.0
    return within**2, max(s_cell, 1e-6), s_org


def _shift(r, gen, x, i, p):
    """The pull u of run i toward its organisation's other runs under pooling design ``p``."""
    others = np.arange(len(r)) != i
    w = np.where(gen == gen[i], 1.0, p["w_other"]) * others
    if p["h"] is not None:
        w = w * cal.own_runs_weight(x[:, 0] - x[i, 0], p["h"])  # the library's size weight
    if p.get("h_acc") is not None:  # cluster size; a run without a count: no information
        d = np.nan_to_num(np.abs(x[:, 1] - x[i, 1]), nan=0.0)
        w = w * np.exp(-d / p["h_acc"])
    n = float(w.sum())
    if n <= 0:
        return 0.0, 0.0
    if p["stat"] == "median":
        keep = w > 0
        centre = _weighted_median(r[keep], w[keep])
    else:
        centre = float(np.sum(w * r) / n)
    return n / (n + p["k"]) * centre, n / (n + p["k"])


def _weighted_median(v, w):
    order = np.argsort(v)
    v, w = v[order], w[order]
    c = np.cumsum(w)
    return float(v[np.searchsorted(c, 0.5 * c[-1])])


def _blup_shift(r, gen, i, var):
    """Best linear predictor of run i's shared effect from its organisation's other runs:
    organisation effect a (var s_org) + organisation-and-generation effect (var s_cell -
    s_org) + run noise (within^2)."""
    within2, s_cell, s_org = var
    s_org = min(max(s_org, 0.0), s_cell)
    idx = np.flatnonzero(np.arange(len(r)) != i)
    if idx.size == 0:
        return 0.0, 0.0
    same = gen[idx][:, None] == gen[idx][None, :]
    cov = np.where(same, s_cell, s_org) + np.eye(idx.size) * within2
    c = np.where(gen[idx] == gen[i], s_cell, s_org)
    return float(c @ np.linalg.solve(cov, r[idx])), float("nan")


def _evaluate(groups, design, pulls=None):
    """Per-run (before, after) |ln error| for the groups {org: (r, gen, x)} under a design
    (and each run's pull appended to ``pulls``)."""
    before, after, org_of = [], [], []
    for org, (r, gen, x) in groups.items():
        for i in range(len(r)):
            u, pull = design(r, gen, x, i)
            before.append(abs(r[i]))
            after.append(abs(r[i] - u))
            org_of.append(org)
            if pulls is not None:
                pulls.append(pull)
    return np.array(before), np.array(after), np.array(org_of)


def _sigmas(name, org):
    """The runs' calibrated spreads (sigma of ln hours) sized without their organisation."""
    g = cal._grouped(name)
    mine = (g["organisation"] == org).to_numpy()
    return cal._run_sigmas(g[mine], cal._spread_parts(g[~mine]))


def _groups(table, r):
    out = {}
    for org in np.unique(table["organisation"]):
        m = (table["organisation"] == org).to_numpy()
        if m.sum() >= 2:
            x = table[["ln_active", "ln_accel"]].to_numpy(float)[m]
            out[org] = (r[m], table["generation"].to_numpy()[m], x)
    return out


GRID = {
    "w_other": (0.0, 0.25, 0.5, 1.0),
    "h": cal.OWN_RUNS_H_GRID,
    "k": cal.OWN_RUNS_K_GRID,
    "h_acc": (None, 2.0, 1.0, 0.5),
    "stat": ("mean", "median"),
}

#: name -> (fixed design parts, parts chosen by the nested grid)
OWN_VARIANTS = {
    "former (round 4): same generation, mean, k from moments": (
        {"w_other": 0.0, "h": None, "stat": "mean"},
        ("k_moments",),
    ),
    "same generation, mean, k nested grid": ({"w_other": 0.0, "h": None, "stat": "mean"}, ("k",)),
    "same generation, median, k nested": ({"w_other": 0.0, "h": None, "stat": "median"}, ("k",)),
    "all runs (other gen weight nested), mean, k nested": (
        {"h": None, "stat": "mean"},
        ("w_other", "k"),
    ),
    "today: same generation, size-weighted, h and k nested": (
        {"w_other": 0.0, "stat": "mean"},
        ("h", "k"),
    ),
    "all runs, size-weighted, other gen + h + k nested": ({"stat": "mean"}, ("w_other", "h", "k")),
    "same generation, cluster-size-weighted (h nested), k nested": (
        {"w_other": 0.0, "stat": "mean", "h": None},
        ("h_acc", "k"),
    ),
    "same generation, size- and cluster-weighted, both h and k nested": (
        {"w_other": 0.0, "stat": "mean"},
        ("h", "h_acc", "k"),
    ),
    "same generation, size-weighted h=1, k=1 (fixed, not nested)": (
        {"w_other": 0.0, "stat": "mean", "h": 1.0, "k": 1.0},
        (),
    ),
    "same generation, size-weighted h=1 (fixed, not nested), k from moments": (
        {"w_other": 0.0, "stat": "mean", "h": 1.0},
        ("k_moments",),
    ),
    "everything nested (incl. mean/median)": ({}, ("w_other", "h", "k", "stat")),
}


def _design_fn(p):
    return lambda r, gen, x, i: _shift(r, gen, x, i, p)


def _choose(fixed, free, inner_groups, var):
    """The design parts in ``free`` that minimise the inner mean |ln error| after the pull."""
    if free == ("k_moments",):
        return fixed | {"k": var[0] / var[1]}
    if not free:
        return fixed
    best = None
    for values in itertools.product(*(GRID[f] for f in free)):
        p = fixed | dict(zip(free, values, strict=True))
        _, after, _ = _evaluate(inner_groups, _design_fn(p))
        score = float(after.mean())
        if best is None or score < best[0] - 1e-12:
            best = (score, p)
    return best[1]


def own_runs_study(name=None):
    name = cal.chosen_model() if name is None else name
    t = cal._calibration_frame()
    orgs = [o for o in sorted(t["organisation"].unique()) if (t["organisation"] == o).sum() >= 2]
    prepared = {}
    for org in orgs:
        tm, inner = _residuals(name, org)
        ri = _inner_residual(inner)
        var = _moments(inner, ri)
        prepared[org] = (tm, _groups(inner, ri), var)
    results = {}
    designs = {v: [] for v in (*OWN_VARIANTS, "BLUP organisation + generation (moments)")}
    for org in orgs:
        tm, inner_groups, var = prepared[org]
        outer = {org: (tm["residual"].to_numpy(), tm["generation"].to_numpy(),
                       tm[["ln_active", "ln_accel"]].to_numpy(float))}  # fmt: skip
        sig = _sigmas(name, org)
        for v, (fixed, free) in OWN_VARIANTS.items():
            p = _choose(fixed, free, inner_groups, var)
            designs[v].append((org, p))
            pulls = []
            b, a, o = _evaluate(outer, _design_fn(p), pulls)
            narrowed = np.sqrt(np.maximum(0.0, sig**2 - np.array(pulls) * var[1]))
            results.setdefault(v, []).append((b, a, o, b <= Z90 * sig, a <= Z90 * narrowed))
        v = "BLUP organisation + generation (moments)"
        designs[v].append((org, var))
        b, a, o = _evaluate(outer, lambda r, gen, x, i, var=var: _blup_shift(r, gen, i, var))
        results.setdefault(v, []).append((b, a, o, b <= Z90 * sig, np.full(len(a), np.nan)))
    rows = {}
    for v, parts in results.items():
        before, after, org_of, cov_b, cov_a = (np.concatenate(c) for c in zip(*parts, strict=True))
        not_meta = org_of != "Meta"
        per_b = [before[org_of == o].mean() for o in orgs]
        per_a = [after[org_of == o].mean() for o in orgs]
        better = sum(after[org_of == o].mean() < before[org_of == o].mean() for o in orgs)
        rows[v] = {
            "runs": len(before),
            "mean_before": before.mean(),
            "mean_after": after.mean(),
            "median_before": float(np.median(before)),
            "median_after": float(np.median(after)),
            "orgs_better": f"{better} of {len(orgs)}",
            "runs_better": int((after < before - 1e-12).sum()),
            "runs_worse": int((after > before + 1e-12).sum()),
            "org_mean_before": float(np.mean(per_b)),
            "org_mean_after": float(np.mean(per_a)),
            "no_meta_before": float(before[not_meta].mean()),
            "no_meta_after": float(after[not_meta].mean()),
            "coverage_before": float(np.mean(cov_b)),
            "coverage_after": float(np.mean(cov_a)),
            "per_org": {
                o: (before[org_of == o].mean(), after[org_of == o].mean(), int((org_of == o).sum()))
                for o in orgs
            },
        }
    return rows, designs


def print_own(rows, designs):
    print(
        "| Pooling design | mean abs ln error | median | organisations better | runs better /"
        " worse | each organisation once | without Meta | P10..P90 holds (nested) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for v, s in rows.items():
        print(f"| {v} | {s['mean_before']:.3f} -> {s['mean_after']:.3f} | "
              f"{s['median_before']:.3f} -> {s['median_after']:.3f} | {s['orgs_better']} | "
              f"{s['runs_better']} / {s['runs_worse']} | {s['org_mean_before']:.3f} -> "
              f"{s['org_mean_after']:.3f} | {s['no_meta_before']:.3f} -> "
              f"{s['no_meta_after']:.3f} | {s['coverage_before']:.0%} -> "
              f"{s['coverage_after']:.0%} |")  # fmt: skip
    print()
    for v, s in rows.items():
        print(v, "  ".join(f"{o} {b:.2f}->{a:.2f} ({n})" for o, (b, a, n) in s["per_org"].items()))
    print()
    for v, d in designs.items():
        print(v)
        for org, p in d:
            print("   ", org, {k: (round(x, 3) if isinstance(x, float) else x) for k, x in
                            (p.items() if isinstance(p, dict) else enumerate(p))})  # fmt: skip


# -- features of the default MFU -----------------------------------------------------------------


def _feature(t, which):
    """The extra covariate z of a run (or NaN where the catalogue lacks the figure)."""
    if which == "moe":
        return t["moe"].to_numpy(float)
    if which == "ln_accelerators":
        return np.log(t["accelerators"].to_numpy(float) / 1000.0)
    if which == "ln_tokens_per_param":
        runs = cal.catalogue.runs().loc[t.index]
        return np.log(runs["training_tokens"].to_numpy(float)
                      / t["active_params"].to_numpy(float) / 20.0)  # fmt: skip
    raise ValueError(which)


def _within_coefs(t, x_mat):
    """Coefficients of the columns of x_mat from differences inside each (organisation,
    generation) cell, ridge-shrunk by SLOPE_RIDGE per column (as calibration._within_slope)."""
    y, w = t["ln_mfu"].to_numpy(), t["weight"].to_numpy()
    cell = (t["organisation"] + "|" + t["generation"]).to_numpy()
    xd, yd = np.empty_like(x_mat), np.empty_like(y)
    for c in np.unique(cell):
        m = cell == c
        xd[m] = x_mat[m] - np.average(x_mat[m], axis=0, weights=w[m])
        yd[m] = y[m] - np.average(y[m], weights=w[m])
    a_mat = (xd * w[:, None]).T @ xd + cal.SLOPE_RIDGE * np.eye(x_mat.shape[1])
    return np.linalg.solve(a_mat, (xd * w[:, None]).T @ yd)


class _Extra:
    """chosen model + b x z (z a feature), b learnt within cells ("within") or across
    organisations on the residual of the pooled intercepts ("between")."""

    def __init__(self, feature, how, pooling=cal.POOLING_ORGANISATIONS, weights=None):
        self.feature, self.how, self.pooling, self.weights = feature, how, pooling, weights

    def fit(self, t):
        t = self._weighted(t)
        x = cal._size_x(t["active_params"].to_numpy(float))
        y = t["ln_mfu"].to_numpy()
        z = _feature(t, self.feature) if self.feature else np.zeros(len(t))
        if self.feature and self.how == "within":
            slope, b = _within_coefs(t, np.column_stack([x, z]))
        else:
            slope, b = cal._within_slope(t, False), 0.0
        saved = cal.POOLING_ORGANISATIONS
        cal.POOLING_ORGANISATIONS = self.pooling
        try:
            icpt = cal._pooled_intercepts(t, y - slope * x - b * z)
            if self.feature and self.how == "between":
                r = y - slope * x - np.array([icpt[g] for g in t["generation"]])
                w = t["weight"].to_numpy()
                zc = z - np.average(z, weights=w)
                b = float(np.sum(w * zc * r) / (np.sum(w * zc * zc) + cal.SLOPE_RIDGE))
                icpt = cal._pooled_intercepts(t, y - slope * x - b * z)
        finally:
            cal.POOLING_ORGANISATIONS = saved
        return icpt, slope, b

    def _weighted(self, t):
        if self.weights is None:
            return t
        return t.assign(weight=[self.weights[h] for h in t["hours_basis"]])

    def predict(self, fitted, t):
        icpt, slope, b = fitted
        z = _feature(t, self.feature) if self.feature else np.zeros(len(t))
        ln = (np.array([icpt[g] for g in t["generation"]])
              + slope * cal._size_x(t["active_params"].to_numpy(float)) + b * z)  # fmt: skip
        return np.clip(np.exp(ln), cal.MFU_MIN, cal.MFU_MAX)


def _grouped_extra(spec, t):
    predicted = np.empty(len(t))
    orgs = t["organisation"].to_numpy()
    coefs = []
    for org in np.unique(orgs):
        out = orgs == org
        f = spec.fit(t[~out])
        coefs.append(f[2])
        predicted[out] = spec.predict(f, t[out])
    return cal._table_for(t, predicted), coefs


FEATURES = {
    "chosen (pooled generation+small-model size)": (None, "within", {}),
    "+ MoE (within)": ("moe", "within", {}),
    "+ MoE (between)": ("moe", "between", {}),
    "+ ln tokens per parameter (within)": ("ln_tokens_per_param", "within", {}),
    "+ ln tokens per parameter (between)": ("ln_tokens_per_param", "between", {}),
    "+ ln accelerators (within)*": ("ln_accelerators", "within", {}),
    "+ ln accelerators (between)*": ("ln_accelerators", "between", {}),
    "pooling k = 0.5": (None, "within", {"pooling": 0.5}),
    "pooling k = 1": (None, "within", {"pooling": 1.0}),
    "pooling k = 4": (None, "within", {"pooling": 4.0}),
    "pooling k = 8": (None, "within", {"pooling": 8.0}),
    "weights by hours_basis (stated 1, count x wall-clock 0.75, derived 0.35)": (
        None,
        "within",
        {"weights": {"stated": 1.0, "count_x_wallclock": 0.75, "derived": 0.35}},
    ),  # fmt: skip
}


def _constants(t):
    out = {}
    for c in cal.CONSTANTS:
        out[c] = cal._summary(cal._grouped_on(c, t), 1)
    return out


def features_study(t=None):
    """name -> (summary, extra numbers, beats the in-fold constants, coefficient range)."""
    t = cal._calibration_frame() if t is None else t
    consts = _constants(t)
    best_med = min(s["median_abs_error_pct"] for s in consts.values())
    best_score = max(s["mean_log_score"] for s in consts.values())
    rows = {}
    for name, (feature, how, kw) in FEATURES.items():
        tt = t
        if feature == "ln_accelerators":
            tt = t[np.isfinite(t["accelerators"].to_numpy(float))]
        table, coefs = _grouped_extra(_Extra(feature, how, **kw), tt)
        s = cal._summary(table, 5 + (feature is not None))
        if feature == "ln_accelerators":  # the chosen model on the same subset, for comparison
            base, _ = _grouped_extra(_Extra(None, "within"), tt)
            s["base_on_subset"] = cal._summary(base, 5)
        s["beats_constants"] = (s["median_abs_error_pct"] < best_med
                                and s["mean_log_score"] > best_score)  # fmt: skip
        s["coef_range"] = (min(coefs), max(coefs))
        rows[name] = s
    return rows, consts


def _wins(name, t, consts):
    """Whether the one-term candidate ``name`` would be chosen over the chosen model on ``t``:
    it beats the in-fold constants on median |error| and mean log score, and the chosen model
    (on the same runs) by CHOICE_MARGIN in mean log score."""
    feature, how, kw = FEATURES[name]
    if feature == "ln_accelerators":
        t = t[np.isfinite(t["accelerators"].to_numpy(float))]
    s = cal._summary(_grouped_extra(_Extra(feature, how, **kw), t)[0], 6)
    base = cal._summary(_grouped_extra(_Extra(None, "within"), t)[0], 5)
    beats = (s["median_abs_error_pct"] < min(c["median_abs_error_pct"] for c in consts)
             and s["mean_log_score"] > max(c["mean_log_score"] for c in consts))  # fmt: skip
    return beats and s["mean_log_score"] > base["mean_log_score"] + cal.CHOICE_MARGIN


def feature_stability():
    """For each one-term candidate: in how many of the reruns with one organisation left out
    of the whole data it would be chosen over the chosen model (see :func:`_wins`)."""
    t = cal._calibration_frame()
    names = [n for n, (f, _, _) in FEATURES.items() if f is not None]
    counts = dict.fromkeys(names, 0)
    orgs = sorted(t["organisation"].unique())
    for org in orgs:
        rest = t[t["organisation"] != org]
        consts = list(_constants(rest).values())
        for n in names:
            counts[n] += _wins(n, rest, consts)
    return counts, len(orgs)


POOLING_GRID = (0.5, 1.0, 2.0, 4.0, 8.0)


def nested_pooling(t=None):
    """The intercepts' pooling k chosen inside each outer fold (by the inner grouped mean log
    score over POOLING_GRID, the outer organisation out of everything), then the outer
    organisation predicted with it: the honest figure of "choose k from the data"."""
    t = cal._calibration_frame() if t is None else t
    orgs = t["organisation"].to_numpy()
    predicted = np.empty(len(t))
    picked = {}
    for org in np.unique(orgs):
        out = orgs == org
        rest = t[~out]
        scores = {}
        for k in POOLING_GRID:
            table, _ = _grouped_extra(_Extra(None, "within", pooling=k), rest)
            scores[k] = cal._summary(table, 5)["mean_log_score"]
        k = max(scores, key=scores.get)
        picked[org] = k
        spec = _Extra(None, "within", pooling=k)
        predicted[out] = spec.predict(spec.fit(rest), t[out])
    return cal._summary(cal._table_for(t, predicted), 5), picked


def print_features(rows, consts):
    print(
        "| Candidate | runs | median abs error | median abs ln error | mean ln error | "
        "nested P10..P90 | mean log score | beats in-fold constants | extra coefficient "
        "(range over folds) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for c, s in consts.items():
        print(
            f"| {c} (in fold) | {s['runs']} | {s['median_abs_error_pct']:.1f}% | "
            f"{s['median_abs_log_error']:.3f} | {s['mean_log_error']:+.3f} | "
            f"{s['nested_share_inside_p10_p90']:.0%} | {s['mean_log_score']:.3f} | | |"
        )
    for name, s in rows.items():
        lo, hi = s["coef_range"]
        print(
            f"| {name} | {s['runs']} | {s['median_abs_error_pct']:.1f}% | "
            f"{s['median_abs_log_error']:.3f} | {s['mean_log_error']:+.3f} | "
            f"{s['nested_share_inside_p10_p90']:.0%} | {s['mean_log_score']:.3f} | "
            f"{'yes' if s['beats_constants'] else 'no'} | {lo:+.3f}..{hi:+.3f} |"
        )
        if "base_on_subset" in s:
            b = s["base_on_subset"]
            print(
                f"| (chosen, same {b['runs']} runs) | {b['runs']} | "
                f"{b['median_abs_error_pct']:.1f}% | {b['median_abs_log_error']:.3f} | "
                f"{b['mean_log_error']:+.3f} | {b['nested_share_inside_p10_p90']:.0%} | "
                f"{b['mean_log_score']:.3f} | | |"
            )


# -- what the plan's figures can explain at best ----------------------------------------------


def _in_sample(t, columns):
    """Weighted least squares of ln MFU on ``columns``, scored on the very runs it was fitted
    on (optimistic: no run is held out)."""
    y, w = t["ln_mfu"].to_numpy(), np.sqrt(t["weight"].to_numpy())
    x_mat = np.column_stack(columns)
    b = np.linalg.lstsq(x_mat * w[:, None], y * w, rcond=None)[0]
    return cal._table_for(t, np.exp(x_mat @ b)), x_mat.shape[1]


def _plan_columns(t, count=False):
    """Every plan figure as a column: one intercept per generation, the small-model size, the
    linear size, MoE, ln(tokens per parameter / 20) and, with ``count``, ln(accelerators)."""
    a = t["active_params"].to_numpy(float)
    gens = [(t["generation"] == g).to_numpy(float) for g in sorted(t["generation"].unique())]
    cols = [*gens, cal._size_x(a), np.log(a / 1e9), _feature(t, "moe"),
            _feature(t, "ln_tokens_per_param")]  # fmt: skip
    return cols + [_feature(t, "ln_accelerators")] if count else cols


def _errors(table, numbers):
    e, ln = np.abs(table["error_pct"].to_numpy()), np.abs(table["log_error"].to_numpy())
    return {"runs": len(table), "numbers": numbers,
            "median_abs_error_pct": float(np.median(e)),
            "median_abs_log_error": float(np.median(ln)),
            "mean_abs_log_error": float(ln.mean())}  # fmt: skip


def floors():
    """The grouped figure beside optimistic bounds of what the plan's figures explain: fits
    scored on the runs they were fitted on, and each run predicted from its own organisation's
    other runs on the same generation (their mean residual around the chosen model's size term,
    unpooled: what a team's own runs could at most tell, from the public record)."""
    t = cal._calibration_frame()
    name = cal.chosen_model()
    counted = t[np.isfinite(t["accelerators"].to_numpy(float))]
    m = cal.fit(name, t)
    grouped = cal.grouped_validation()
    rows = {
        "chosen, grouped (organisation held out)": _errors(grouped, cal._n_params(name)),
        "chosen, fitted on every run": _errors(
            cal._table_for(t, cal._predict_rows(m, t)), cal._n_params(name)
        ),  # fmt: skip
        "a free mean per generation, fitted on every run": _errors(
            *_in_sample(t, _plan_columns(t)[: t["generation"].nunique()])
        ),
        "every plan figure, fitted on every run": _errors(*_in_sample(t, _plan_columns(t))),
        "every plan figure and ln accelerators, fitted on every run with a count": _errors(
            *_in_sample(counted, _plan_columns(counted, count=True))
        ),
    }
    r = t["ln_mfu"].to_numpy() - m.slope * cal._size_x(t["active_params"].to_numpy(float))
    cell = (t["organisation"] + "|" + t["generation"]).to_numpy()
    own = np.array([(cell == c).sum() > 1 for c in cell])
    mean_others = np.array([r[(cell == c) & (np.arange(len(t)) != i)].mean() if own[i] else 0.0
                            for i, c in enumerate(cell)])  # fmt: skip
    x = cal._size_x(t["active_params"].to_numpy(float))
    oracle = cal._table_for(t[own], np.exp(mean_others[own] + m.slope * x[own]))
    rows["its organisation's other same-generation runs, unpooled"] = _errors(oracle, None)
    rows["chosen, grouped, on the same runs"] = _errors(grouped[own], cal._n_params(name))
    return rows


def print_floors(rows):
    print("| Prediction | runs | fitted numbers | median abs error | median abs ln error | "
          "mean abs ln error |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for name, s in rows.items():
        numbers = "-" if s["numbers"] is None else s["numbers"]
        print(f"| {name} | {s['runs']} | {numbers} | {s['median_abs_error_pct']:.1f}% | "
              f"{s['median_abs_log_error']:.3f} | {s['mean_abs_log_error']:.3f} |")  # fmt: skip


# -- own runs and the range: what P10..P90 holds on runs no fit saw ---------------------------

DOCS = Path(__file__).resolve().parents[1] / "docs" / "methodology-calibration.md"
BEGIN = "<!-- own-runs-ranges: written by `benchmarks/calibration_study.py ranges --write` -->"
END = "<!-- end of own-runs-ranges -->"

#: The rules of udfs.refit.NARROWING_RULES as the table names them.
RULE_LABELS = {
    "without": "none: the calibrated range",
    "team_only": "before: the team-to-team part narrowed, none of the small model's extra",
    "fitted": "now: each part narrowed by its fitted share",
}
UNIT_LABELS = {"organisation": "the organisation's other runs",
               "family": "the family's other runs"}  # fmt: skip


def ranges_block(f):
    """The docs' block: held-out P10..P90 coverage and median P90 / P50 with and without own
    runs, before and after the shares were fitted, from the stored figures ``f``
    (``calibration.fitted()``, or ``refit.refit()``)."""
    lines = [BEGIN, "",
             "| Own runs given | Narrowing of the range | Runs | P10..P90 holds | Below 5B: "
             "holds | Median P90 / P50 | Below 5B: median P90 / P50 |",
             "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for unit, label in UNIT_LABELS.items():
        v = f[f"own_runs_ranges_{unit}"]
        for rule, how in RULE_LABELS.items():
            lines.append(
                f"| {label} | {how} | {v['runs']} | {v[f'share_inside_{rule}']:.0%} | "
                f"{v[f'small_model_share_inside_{rule}']:.0%} of {v['small_model_runs']} | "
                f"{v[f'median_p90_over_p50_{rule}']:.2f}x | "
                f"{v[f'small_model_median_p90_over_p50_{rule}']:.2f}x |"
            )
    o, fam = f["own_runs_ranges_organisation"], f["own_runs_ranges_family"]
    lines += [
        "",
        f"Median |error| of the hours: {o['median_abs_error_pct_before']:.1f}% without own "
        f"runs, {o['median_abs_error_pct_after']:.1f}% with the organisation's other runs "
        f"({fam['median_abs_error_pct_before']:.1f}% -> "
        f"{fam['median_abs_error_pct_after']:.1f}% with the family's). The shares each fold "
        f"fitted without its organisation: {o['base_share_least']:.0%} to "
        f"{o['base_share_most']:.0%} of sigma^2, {o['small_share_least']:.0%} to "
        f"{o['small_share_most']:.0%} of the small model's extra variance; fitted on every "
        f"organisation (stored): **{f['own_runs_base_narrowing']:.1%}** and "
        f"**{f['own_runs_small_narrowing']:.1%}**.",
        "",
        END,
    ]
    return "\n".join(lines)


def write_ranges_block(f, path=DOCS):
    """Rewrite the block between :data:`BEGIN` and :data:`END` of the docs page."""
    text = path.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(head + ranges_block(f) + tail, encoding="utf-8")


def ranges_study():
    """The stored shares and the held-out figures, computed now (udfs.refit)."""
    from udfs import refit

    name = cal.chosen_model()
    shares = dict(zip(refit.NARROWING_FIGURES, refit._narrowing(name), strict=True))
    held_out = refit.narrowing_validation(name)
    return shares | {f"own_runs_ranges_{unit}": v for unit, v in held_out.items()}


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("ranges", "all"):
        figures = ranges_study()
        print(ranges_block(figures))
        if "--write" in sys.argv:
            write_ranges_block(figures)
            print(f"Wrote {DOCS}")
    if what in ("floors", "all"):
        print_floors(floors())
    if what in ("own", "all"):
        print_own(*own_runs_study())
    if what in ("features", "all"):
        print_features(*features_study())
        s, picked = nested_pooling()
        print(
            f"| pooling k chosen in each fold (nested) | {s['runs']} | "
            f"{s['median_abs_error_pct']:.1f}% | {s['median_abs_log_error']:.3f} | "
            f"{s['mean_log_error']:+.3f} | {s['nested_share_inside_p10_p90']:.0%} | "
            f"{s['mean_log_score']:.3f} | | k: {sorted(set(picked.values()))} |"
        )
        print(picked)
        counts, n = feature_stability()
        for name, c in counts.items():
            print(f"{name}: chosen in {c} of {n} reruns with one organisation left out")
