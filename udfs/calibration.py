"""Calibration of the engine against the catalogue's disclosed training runs.

- :func:`reference_table`: each run with disclosed accelerator-hours beside the model's
  FLOPs, the implied effective TFLOP/s and the implied MFU.
- :func:`default_mfu`: the legacy constant default MFU, the median implied MFU of every
  catalogue run with accelerator-hours (what the planner's Reference runs sheet shows).
- :func:`calibration_set`: the runs whose accelerator-hours are in the public record, with
  their ``organisation`` and the weight their ``confidence`` gives them in a fit.
- :func:`fit` / :class:`MfuModel`: the candidate default-MFU models (:data:`CANDIDATES`), each
  a handful of numbers: ``ln MFU = intercept[generation] + slope x size``, size
  ``ln(MIN(active, 5B) / 5B)`` (saturating; the comparison candidates' linear one is
  ``ln(active / 1e9)``). The pooled ones pull each generation's intercept toward the shared
  mean by how many organisations support it, and take the size slope within organisations,
  shrunk. :func:`chosen_model` picks by grouped validation only (:func:`choice_stability`:
  the choice redone with each organisation left out); :mod:`udfs.refit` fits and measures the
  pull of an organisation's own runs on the catalogue, and writes the stored numbers.
- :func:`grouped_validation` (leave-one-organisation-out: every run of the held-out
  organisation out of the fit) drives the model choice (:func:`chosen_model`), the published
  error and the range's spread (:func:`throughput_sigma`); :func:`leave_one_out` is the second,
  labelled figure. :func:`model_comparison` lists every candidate under both.
- The fitted numbers are data (``udfs/data/calibration.toml``, written by
  :func:`udfs.refit.write_fitted` and checked by a test that refits them):
  :func:`default_mfu_model`, :func:`predicted_mfu`, :func:`throughput_sigma`,
  :func:`default_range_pct` and :func:`excel_coefficients` read them, so no fit runs when a
  plan is estimated.

The default is ``MFU = MIN(mfu_max, MAX(mfu_min, EXP(intercept[generation] +
slope * LN(MIN(active_params, 5E9) / 5E9))))``; see ``docs/methodology-calibration.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from importlib import resources

import numpy as np

from . import catalogue, engine, model
from ._lazy import lazy_module
from .formula import norm_s_inv
from .validation import InputError

pd = lazy_module("pandas")  # the tables and the fit only: a calibrated default needs none

__all__ = [
    "CANDIDATES",
    "CHOICE_MARGIN",
    "CONSTANTS",
    "CONFIDENCE_WEIGHTS",
    "ELIGIBLE",
    "GENERATIONS",
    "MFU_MIN",
    "MFU_MAX",
    "LEGACY_DEFAULT_MFU",
    "POOLING_ORGANISATIONS",
    "SLOPE_RIDGE",
    "SPREAD_SHARE",
    "MfuModel",
    "reference_table",
    "default_mfu",
    "calibration_set",
    "generation_of",
    "pooling_group",
    "fit",
    "grouped_validation",
    "grouped_summary",
    "leave_one_out",
    "loo_summary",
    "model_comparison",
    "chosen_model",
    "choice_stability",
    "hindsight_constant",
    "fitted",
    "default_mfu_model",
    "predicted_mfu",
    "throughput_sigma",
    "small_model_sigma",
    "small_model_share",
    "accelerator_extra_sigma",
    "throughput_sigma_for",
    "default_range_pct",
    "mfu_intercept",
    "mfu_p90",
    "excel_coefficients",
]

#: Accelerator generation of each calibrated accelerator: one intercept per generation.
#: H800 and H200 carry the H100's compute die; TPU v5p joins the TPU generations. Any other
#: accelerator (V100, B200, GB200, MI300X, MI325X, Gaudi 3, ...) is "other" (see :class:`MfuModel`).
GENERATIONS = {
    "A100 SXM 80GB": "A100",
    "A100 SXM 40GB": "A100",
    "H100 SXM": "H100",
    "H800 SXM": "H100",
    "H200": "H100",
    "TPU v3": "TPU",
    "TPU v4": "TPU",
    "TPU v5p": "TPU",
}
_FITTED_GENERATIONS = ("A100", "H100", "TPU")

#: Sane range of a predicted MFU (fraction), the spec's constants (udfs.quantities ``mfu_min``,
#: ``mfu_max``), applied to every prediction. Checked against the data by a test: no
#: prediction of the chosen model comes near either bound, and only one run in the set (Phi-2,
#: hours derived from a rounded "14 days") implies more than 55%.
MFU_MIN = model.CONSTANTS["mfu_min"]
MFU_MAX = model.CONSTANTS["mfu_max"]

#: The constant default MFU before the calibration set grew (median of 7 runs), for comparison.
LEGACY_DEFAULT_MFU = 0.304

#: Weight of a run in a fit by its ``confidence`` (udfs/data/runs.toml): a run whose hours
#: rest on a rounded duration, a plan or a third party counts less; every run is still scored.
CONFIDENCE_WEIGHTS = {"high": 1.0, "medium": 0.75, "low": 0.35}

#: Partial pooling: a generation's intercept moves from the shared mean toward its own
#: organisations' mean by n / (n + POOLING_ORGANISATIONS), n its (weighted) organisations.
POOLING_ORGANISATIONS = 2.0

#: Ridge on the size slope (in units of the within-organisation sum of squares of
#: ln(active billions)): the slope is learnt only from differences inside an organisation and
#: generation, and shrunk toward 0.
SLOPE_RIDGE = 10.0

#: The candidate default-MFU models: name -> (intercepts, size term). Size terms: "none";
#: "free" and "within" (linear in ln(active / 1e9): a free slope, or one learnt within
#: organisations and shrunk); "small" (saturating: learnt within organisations and shrunk as
#: "within", but only below the spec's ``small_model_active_params`` (5B), flat above it).
CANDIDATES = {
    "constant": ("one", "none"),
    "constant (organisations)": ("one-pooled", "none"),
    "generation+size (free)": ("free", "free"),
    "pooled generation": ("pooled", "none"),
    "pooled generation+size": ("pooled", "within"),
    "pooled generation+small-model size": ("pooled", "small"),
}

#: The constants fitted inside each fold: the fair baseline a chosen model must beat.
CONSTANTS = ("constant", "constant (organisations)")

#: The candidates the default may be chosen from: partial pooling with no size term or the
#: saturating one (the spec's ``calibrated_mfu`` formula). The free fit (the former default)
#: and the linear pooled slope are scored for comparison only: a linear size term reaches the
#: 55% cap for the largest A100 runs (BLOOM) and predicts about half GPT-3's hours, the
#: failure issue 17 describes, and the planner's formula has no linear size term.
ELIGIBLE = tuple(m for m, (icpt, size) in CANDIDATES.items() if icpt != "free" and size != "within")

#: A candidate with more fitted numbers is chosen over a simpler one only if its grouped mean
#: log score is higher by at least this margin (nats per run): one low-weight run once flipped
#: the choice between candidates 0.005 apart.
CHOICE_MARGIN = 0.02

#: Share of the grouped-validation log errors the P10..P90 range is sized to hold. A spread
#: sized on some organisations holds fewer of another's runs (a quantile estimated from a few
#: dozen errors): sized at 85%, it holds ~80% of each organisation's runs when sized without
#: that organisation (the "nested" share of the summaries).
SPREAD_SHARE = 0.85

_Z90 = norm_s_inv(0.9)
_DATA_FILE = "calibration.toml"

# -- the reference table (all runs) -------------------------------------------------------------


@functools.cache
def _table():
    runs = catalogue.runs()
    accels = catalogue.accelerators()
    rows = []
    for name, r in runs.iterrows():
        accel = r["accelerator"]
        peak = accels.loc[accel, "bf16_tflops"] if isinstance(accel, str) else np.nan
        hours = r["accelerator_hours"]
        flops, implied, mfu = _implied(r["active_params"], r["training_tokens"], hours, peak)
        rows.append(
            {
                "run": name,
                "architecture": r["architecture"],
                "accelerator": accel,
                "accelerators": r["accelerators"],
                "active_params": r["active_params"],
                "model_training_flops": flops,
                "disclosed_accelerator_hours": hours,
                "peak_tflops": peak,
                "implied_effective_tflops": implied,
                "implied_mfu": mfu,
                "disclosed_mfu": r["disclosed_mfu"],
                "in_calibration": bool(r["in_calibration"]) and np.isfinite(mfu),
                "source": catalogue.source("run", name, "accelerator_hours"),
            }
        )
    return pd.DataFrame(rows).set_index("run", drop=False)


def _implied(active_params, training_tokens, hours, peak):
    """(model FLOPs, implied TFLOP/s, implied MFU) of one run; NaN where a figure is missing."""
    have = np.isfinite([active_params, training_tokens]).all()
    flops = engine.training_flops(active_params, training_tokens) if have else np.nan
    implied = (
        engine.implied_effective_tflops(flops, hours)
        if np.isfinite([flops, hours]).all()
        else np.nan
    )
    mfu = engine.implied_mfu(flops, hours, peak) if np.isfinite([implied, peak]).all() else np.nan
    return flops, implied, mfu


def implied_mfu_of(run, argument="run"):
    """The implied MFU of reference run ``run`` (a name or alias): its ``implied_mfu`` in
    :func:`reference_table`, NaN without disclosed hours; without pandas (``--preset``)."""
    r = catalogue.run_record(run, argument=argument)
    accel = r["accelerator"]
    peak = catalogue.accelerator_record(accel)["bf16_tflops"] if isinstance(accel, str) else np.nan
    return _implied(r["active_params"], r["training_tokens"], r["accelerator_hours"], peak)[2]


def reference_table():
    """Reference runs with the model's FLOPs, the implied TFLOP/s and implied MFU.

    ``model_training_flops`` is 6 x active x tokens; ``implied_effective_tflops`` divides it
    by the disclosed accelerator-hours; ``implied_mfu`` divides that by the accelerator's
    dense BF16 (V100: FP16) peak. Runs without disclosed hours have NaN there.
    ``in_calibration`` marks the runs of :func:`calibration_set`.
    """
    return _table().copy()


@functools.cache
def default_mfu():
    """Median implied MFU of the catalogue's runs with accelerator-hours (a fraction).

    The legacy constant default, kept until the faces use :func:`predicted_mfu`; it equals
    the median on the planner's Reference runs sheet.

    Examples
    --------
    >>> round(default_mfu(), 3)
    0.265
    """
    t = _table()
    return float(np.median(t.loc[np.isfinite(t["implied_mfu"]), "implied_mfu"]))


# -- the calibration set -----------------------------------------------------------------------


def generation_of(accelerator):
    """Generation label(s) ("A100", "H100", "TPU" or "other") of accelerator name(s).

    Names are resolved through the catalogue's aliases; an unknown name is "other".
    Accepts a string or an array of strings; returns the same shape.
    """

    def one(name):
        try:
            canonical = catalogue.accelerator_record(name)["name"]
        except InputError:  # not in the catalogue (or not a name): no calibrated generation
            return "other"
        return GENERATIONS.get(canonical, "other")

    if isinstance(accelerator, str):
        return one(accelerator)
    return _lookup(_names(accelerator), one, object)


def _names(accelerator):
    """An array of accelerator names as text (an array of text is taken as it is)."""
    arr = np.asarray(accelerator)
    return arr if arr.dtype.kind == "U" else arr.astype(str)


def _distinct(arr):
    """(the distinct values of array ``arr``, sorted; each element's index among them, flat).

    One pass of a dict over the elements: no sort of the whole array (``np.unique`` sorts a
    million names, most of the cost of a lookup over a range); only the few distinct values
    are sorted, so a function applied to them meets them in ``np.unique``'s order.
    """
    flat = arr.ravel().tolist()
    uniq = sorted(set(flat))
    index = {v: i for i, v in enumerate(uniq)}
    codes = np.fromiter(map(index.__getitem__, flat), dtype=np.intp, count=len(flat))
    return uniq, codes


def pooling_group(accelerator):
    """The group whose own runs pull a plan on accelerator name(s) (:mod:`udfs.own_runs`,
    :func:`udfs.refit.own_runs_validation`): the generation label on a calibrated generation
    ("A100", "H100", "TPU"), else "other: " and the accelerator's catalogue name (an accelerator
    outside the calibrated generations is a group of its own: MI300X runs do not pull a B200
    plan), else "" for a name the catalogue does not hold (no runs pull it). Aliases are
    resolved; a string or an array of strings, the same shape back."""

    def one(name):
        try:
            canonical = catalogue.accelerator_record(name)["name"]
        except InputError:
            return ""
        return GENERATIONS.get(canonical, f"other: {canonical}")

    if isinstance(accelerator, str):
        return one(accelerator)
    return _lookup(_names(accelerator), one, object)


def _lookup(values, fn, dtype):
    """fn applied to each distinct value of an array, spread back over it (vectorised)."""
    arr = np.asarray(values)
    if arr.size == 0:
        return arr.astype(dtype)
    uniq, codes = _distinct(arr)
    mapped = np.array([fn(u) for u in uniq], dtype=dtype)
    return mapped[codes].reshape(arr.shape)


@functools.cache
def _calibration_frame():
    t = _table()
    t = t[t["in_calibration"]].copy()
    runs = catalogue.runs().loc[t.index]
    t["organisation"] = runs["organisation"]
    t["confidence"] = runs["confidence"]
    t["hours_basis"] = runs["hours_basis"]
    t["weight"] = [CONFIDENCE_WEIGHTS[c] for c in t["confidence"]]
    t["generation"] = [GENERATIONS.get(a, "other") for a in t["accelerator"]]
    t["moe"] = (t["architecture"] == "moe").astype(float)
    t["ln_mfu"] = np.log(t["implied_mfu"].astype(float))
    return t


def calibration_set():
    """The calibration runs: accelerator-hours in the public record, FLOPs and peak known.

    Columns as :func:`reference_table` plus ``organisation``, ``confidence``,
    ``hours_basis``, ``weight`` (:data:`CONFIDENCE_WEIGHTS`), ``generation``, ``moe`` (1.0
    for MoE) and ``ln_mfu`` (natural log of the implied MFU).
    """
    return _calibration_frame().copy()


# -- the candidate models ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MfuModel:
    """A default-MFU model: ``ln MFU = intercept[generation] + slope x ln(active / 1e9)``,
    clamped into [``mfu_min``, ``mfu_max``].

    ``intercepts`` maps "A100", "H100", "TPU" and "other" to an intercept; "other" (any
    accelerator outside the calibrated generations) is the shared mean across organisations.
    """

    name: str
    intercepts: dict
    slope: float = 0.0
    mfu_min: float = MFU_MIN
    mfu_max: float = MFU_MAX
    linear: bool = False  # True: slope x ln(active / 1e9) (comparison candidates only)

    def ln_mfu(self, generation, active_params):
        """Unclamped ln(MFU) for generation label(s) and active parameters."""
        return self.intercept(generation) + self.slope * _size_x(active_params, self.linear)

    def intercept(self, generation):
        """ln-MFU intercept of generation label(s)."""
        return _lookup(np.asarray(generation, dtype=object), self.intercept_of, float)

    def intercept_of(self, generation):
        """ln-MFU intercept of one generation label."""
        if generation not in self.intercepts:
            known = ", ".join(self.intercepts)
            raise ValueError(f"unknown generation {generation!r}; known: {known}")
        return self.intercepts[generation]

    def predict(self, generation, active_params):
        """Predicted MFU (fraction), clamped; vectorised over all arguments.

        The spec's ``calibrated_mfu`` formula (udfs.quantities), the planner's too.
        """
        if self.linear:
            raw = np.exp(self.ln_mfu(generation, active_params))
            return np.minimum(self.mfu_max, np.maximum(self.mfu_min, raw))
        return self.predict_from_intercept(self.intercept(generation), active_params)

    def predict_from_intercept(self, intercept, active_params):
        """:meth:`predict` from the ln-MFU intercept(s) already looked up (not linear)."""
        values = {
            "mfu_ln_intercept": intercept,
            "mfu_ln_slope": self.slope,
            "active_params": active_params,
            "mfu_min": self.mfu_min,
            "mfu_max": self.mfu_max,
        }
        return model.evaluate(values, ["calibrated_mfu"])["calibrated_mfu"]


def _size_x(active_params, linear=False):
    """The size variable: ln(active / 1e9) (linear), or the spec's saturating
    ln(MIN(active, small_model_active_params) / small_model_active_params), 0 from 5B up."""
    a = np.asarray(active_params, dtype=float)
    if linear:
        return np.log(a / 1e9)
    knee = model.CONSTANTS["small_model_active_params"]
    return np.log(np.minimum(a, knee) / knee)


def _l1_fit(X, y, w, iterations=100):
    """Weighted least absolute deviations by iteratively reweighted least squares."""
    b = np.linalg.lstsq(X * np.sqrt(w)[:, None], y * np.sqrt(w), rcond=None)[0]
    for _ in range(iterations):
        s = np.sqrt(w / np.maximum(np.abs(y - X @ b), 1e-6))
        b = np.linalg.lstsq(X * s[:, None], y * s, rcond=None)[0]
    return b


def _free_fit(t):
    """The former default: free intercept per generation and a free slope (weighted LAD)."""
    gens = [g for g in _FITTED_GENERATIONS if (t["generation"] == g).any()]
    cols = [(t["generation"] == g).to_numpy(float) for g in gens]
    other = ~t["generation"].isin(gens).to_numpy()
    x = np.column_stack([*cols, np.log(t["active_params"].to_numpy(float) / 1e9)])
    keep = ~other  # runs on "other" accelerators have no intercept of their own here
    b = _l1_fit(x[keep], t["ln_mfu"].to_numpy()[keep], t["weight"].to_numpy()[keep])
    fitted = dict(zip(gens, b[:-1].tolist(), strict=True))
    mean = float(np.mean(list(fitted.values())))
    return {g: fitted.get(g, mean) for g in _FITTED_GENERATIONS} | {"other": mean}, float(b[-1])


def _within_slope(t, linear=True):
    """Size slope from differences inside each (organisation, generation) cell, ridge-shrunk."""
    x = _size_x(t["active_params"].to_numpy(float), linear)
    y, w = t["ln_mfu"].to_numpy(), t["weight"].to_numpy()
    cell = (t["organisation"] + "|" + t["generation"]).to_numpy()
    xd, yd = np.empty_like(x), np.empty_like(y)
    for c in np.unique(cell):
        m = cell == c
        xd[m] = x[m] - np.average(x[m], weights=w[m])
        yd[m] = y[m] - np.average(y[m], weights=w[m])
    sxx = float(np.sum(w * xd**2))
    return float(np.sum(w * xd * yd) / (sxx + SLOPE_RIDGE)) if sxx > 0 else 0.0


def _organisation_means(t, residual):
    """Per (organisation, generation): weighted mean residual and the organisation's weight."""
    df = pd.DataFrame(
        {
            "org": t["organisation"].to_numpy(),
            "gen": t["generation"].to_numpy(),
            "r": residual,
            "w": t["weight"].to_numpy(),
        }
    )
    df["wr"] = df["w"] * df["r"]
    g = df.groupby(["org", "gen"])[["wr", "w"]].sum()
    n = df.groupby(["org", "gen"])["w"].mean()  # an organisation counts once, at its runs' weight
    return pd.DataFrame({"mean": g["wr"] / g["w"], "weight": n}).reset_index()


def _pooled_intercepts(t, residual, pooled=True):
    """Intercepts pulled toward the organisations' shared mean (see POOLING_ORGANISATIONS).

    Per (organisation, generation) cell: the weighted mean residual, the cell weighing its
    runs' mean weight (an organisation counts once, at its runs' weight); per organisation:
    its cells' weighted mean, weighing its largest cell weight; the shared mean ``mu`` is the
    organisations' weighted mean. Plain arrays (``np.unique`` / ``np.bincount``), as
    :func:`_organisation_means` groups them: one fit per fold of every validation.
    """
    org = t["organisation"].to_numpy()
    gen = t["generation"].to_numpy()
    w = t["weight"].to_numpy(float)
    r = np.asarray(residual, dtype=float)
    keys = np.char.add(np.char.add(org.astype(str), "|"), gen.astype(str))
    _, first, cell, runs = np.unique(
        keys, return_index=True, return_inverse=True, return_counts=True
    )
    cell_w = np.bincount(cell, weights=w)
    cell_mean = np.bincount(cell, weights=w * r) / cell_w
    cell_weight = cell_w / runs
    cell_org, cell_gen = org[first], gen[first]
    org_names, org_of = np.unique(cell_org, return_inverse=True)
    org_weight = np.zeros(len(org_names))
    np.maximum.at(org_weight, org_of, cell_weight)
    org_mean = np.bincount(org_of, weights=cell_weight * cell_mean) / np.bincount(
        org_of, weights=cell_weight
    )
    mu = float(np.sum(org_weight * org_mean) / np.sum(org_weight))
    out = {}
    for g in _FITTED_GENERATIONS:
        mine = cell_gen == g
        if not mine.any() or not pooled:
            out[g] = mu
            continue
        n = float(np.sum(cell_weight[mine]))
        own = float(np.sum(cell_weight[mine] * cell_mean[mine]) / n)
        out[g] = mu + n / (n + POOLING_ORGANISATIONS) * (own - mu)
    return out | {"other": mu}


def fit(model="pooled generation+size", runs=None):
    """Fit candidate ``model`` (a key of :data:`CANDIDATES`) on ``runs`` (default: the set).

    ``runs`` is a frame like :func:`calibration_set`. "constant" is the median ln MFU of the
    runs; "constant (organisations)" the weighted mean of the organisations' means; the free
    model is the former weighted least-absolute-deviation fit; the pooled ones are described
    in :data:`POOLING_ORGANISATIONS` and :data:`SLOPE_RIDGE`.
    """
    if model not in CANDIDATES:
        raise ValueError(f"model must be one of {list(CANDIDATES)}, not {model!r}")
    t = _calibration_frame() if runs is None else runs
    intercepts, size = CANDIDATES[model]
    y = t["ln_mfu"].to_numpy()
    if intercepts == "one":
        c = float(np.median(y))
        return MfuModel(model, {g: c for g in (*_FITTED_GENERATIONS, "other")})
    if intercepts == "free":
        icpt, slope = _free_fit(t)
        return MfuModel(model, icpt, slope, linear=True)
    linear = size == "within"
    slope = _within_slope(t, linear) if size in ("within", "small") else 0.0
    x = _size_x(t["active_params"].to_numpy(float), linear)
    icpt = _pooled_intercepts(t, y - slope * x, pooled=intercepts == "pooled")
    return MfuModel(model, icpt, slope, linear=linear)


def _n_params(model):
    intercepts, size = CANDIDATES[model]
    n = len(_FITTED_GENERATIONS) + 1 if intercepts in ("free", "pooled") else 1
    return n + (size != "none")


# -- validation: leave one organisation out, and leave one run out --------------------------------


def _predict_rows(m, t):
    return m.predict(t["generation"].to_numpy(), t["active_params"].to_numpy(float))


#: The columns of a validation table taken from the calibration set, in order.
_TABLE_COLUMNS = (
    "run organisation accelerator generation architecture confidence active_params implied_mfu"
).split()


def _table_for(t, predicted):
    out = t[list(_TABLE_COLUMNS)].copy()
    out["predicted_mfu"] = predicted
    out["disclosed_accelerator_hours"] = t["disclosed_accelerator_hours"]
    out["predicted_accelerator_hours"] = engine.accelerator_hours(
        t["model_training_flops"].to_numpy(), t["peak_tflops"].to_numpy() * predicted
    )
    ratio = out["disclosed_accelerator_hours"] / out["predicted_accelerator_hours"]
    out["error_pct"] = 100.0 * (1.0 / ratio - 1.0)
    out["log_error"] = np.log(ratio)
    out["sigma"] = _run_sigmas(out, _spread_parts(out))
    out["inside_p10_p90"] = np.abs(out["log_error"]) <= _Z90 * out["sigma"]
    return out


@functools.cache
def _grouped(model):
    return _grouped_on(model, _calibration_frame())


def _grouped_on(model, t):
    predicted = np.empty(len(t))
    orgs = t["organisation"].to_numpy()
    for org in np.unique(orgs):
        out = orgs == org
        m = fit(model, t[~out])
        predicted[out] = _predict_rows(m, t[out])
    return _table_for(t, predicted)


@functools.cache
def _loo(model):
    t = _calibration_frame()
    predicted = np.empty(len(t))
    for i in range(len(t)):
        keep = np.arange(len(t)) != i
        predicted[i] = _predict_rows(fit(model, t.iloc[keep]), t.iloc[[i]])[0]
    return _table_for(t, predicted)


def grouped_validation(model=None):
    """Leave-one-organisation-out table of candidate ``model`` (default: the chosen one).

    One row per calibration run: ``run``, ``organisation``, ``accelerator``, ``generation``,
    ``architecture``, ``confidence``, ``implied_mfu``, ``predicted_mfu`` (the model fitted
    without every run of the run's organisation), ``disclosed_accelerator_hours``,
    ``predicted_accelerator_hours``, ``error_pct`` (predicted / disclosed - 1, in %),
    ``log_error`` (ln(disclosed / predicted)), ``sigma`` (the run's spread: see
    :func:`throughput_sigma_for`, its parts sized on the column's log errors, see
    :data:`SPREAD_SHARE`) and ``inside_p10_p90`` (the disclosed hours inside
    P50 x exp(+-1.2816 x sigma)).
    """
    return _grouped(chosen_model() if model is None else model).copy()


def leave_one_out(model=None):
    """Leave-one-out table of candidate ``model`` (default: the chosen one): as
    :func:`grouped_validation`, each run predicted by a fit without that run only (its
    organisation's other runs stay in: the second, more optimistic figure)."""
    return _loo(chosen_model() if model is None else model).copy()


def _spread(log_errors):
    """sigma whose P10..P90 (P50 x exp(+-1.2816 sigma)) holds :data:`SPREAD_SHARE` of the
    log errors: that percentile of |log error| over NORM.S.INV(0.9). Heavy tails (a few runs
    far off) do not inflate it the way a root mean square would."""
    return float(np.quantile(np.abs(log_errors), SPREAD_SHARE) / _Z90)


def small_model_share(active_params):
    """Share (0..1) of the small-model spread a model of ``active_params`` gets: the spec's
    ``small_model``, 0 from ``small_model_active_params`` (5B) up, 1 at or below
    ``small_model_full_params`` (1B), linear in ln(active) between, so that the spread (and
    P90) is continuous in the model's size; vectorised."""
    values = {"active_params": np.asarray(active_params, dtype=float)}
    return model.evaluate(values, ["small_model"])["small_model"]


def _spread_parts(table):
    """(sigma, small-model extra sigma) sized on a validation table's log errors.

    sigma: :func:`_spread` of the runs of at least ``small_model_active_params`` on a
    calibrated generation. The extra, added in quadrature in proportion to
    :func:`small_model_share` (w): each smaller run on a calibrated generation needs
    k = SQRT(MAX(0, (|log error| / NORM.S.INV(0.9))^2 - sigma^2) / w) to sit inside its
    P10..P90; the extra is the :data:`SPREAD_SHARE` percentile of those k (0 if no such run),
    so that share of the small runs is inside, as sigma holds it of the larger ones.
    Accelerators outside the calibrated generations add :func:`_generation_sd`.
    """
    e = table["log_error"].to_numpy()
    w = small_model_share(table["active_params"].to_numpy(float))
    small, known = w > 0, (table["generation"] != "other").to_numpy()
    base = _spread(e[~small & known])
    pick = small & known
    if not pick.any():
        return base, 0.0
    need = np.sqrt(np.maximum(0.0, (e[pick] / _Z90) ** 2 - base**2) / w[pick])
    return base, float(np.quantile(need, SPREAD_SHARE))


def _run_sigmas(table, parts):
    base, extra = parts
    w = small_model_share(table["active_params"].to_numpy(float))
    other = (table["generation"] == "other").to_numpy(float)
    return np.sqrt(base**2 + w * extra**2 + other * _generation_sd() ** 2)


@functools.cache
def _generation_sd():
    """Spread of the calibrated generations' own means around the shared mean (ln MFU): what
    not knowing an accelerator's generation adds to the spread (organisations counted once)."""
    t = _calibration_frame()
    cells = _organisation_means(t, t["ln_mfu"].to_numpy())
    orgs = cells.groupby("org")["mean"].mean()
    mu = float(orgs.mean())
    own = [cells.loc[cells["gen"] == g, "mean"].mean() for g in _FITTED_GENERATIONS]
    return float(np.sqrt(np.mean((np.array(own) - mu) ** 2)))


def _summary(table, n_params):
    e = table["log_error"].to_numpy()
    parts = _spread_parts(table)
    sigma = _run_sigmas(table, parts)
    log_score = float(np.mean(-0.5 * np.log(2 * np.pi * sigma**2) - e**2 / (2 * sigma**2)))
    return {
        "runs": len(e),
        "organisations": int(table["organisation"].nunique()),
        "fitted_numbers": n_params,
        "median_abs_error_pct": float(np.median(np.abs(table["error_pct"]))),
        "median_abs_log_error": float(np.median(np.abs(e))),
        "mean_log_error": float(np.mean(e)),
        "sigma_ln": parts[0],
        "small_model_sigma": parts[1],
        "share_inside_p10_p90": float(np.mean(np.abs(e) <= _Z90 * sigma)),
        "nested_share_inside_p10_p90": _nested_share(table),
        "mean_log_score": log_score,
    }


def _nested_share(table):
    """Share of runs inside a P10..P90 whose spread is sized on the other organisations'
    errors only (sized on all of them, the plain share is ~80% by construction)."""
    orgs = table["organisation"].to_numpy()
    e = table["log_error"].to_numpy()
    inside = np.empty(len(e), dtype=bool)
    for org in np.unique(orgs):
        mine = orgs == org
        sigma = _run_sigmas(table[mine], _spread_parts(table[~mine]))
        inside[mine] = np.abs(e[mine]) <= _Z90 * sigma
    return float(np.mean(inside))


def grouped_summary(model=None):
    """Leave-one-organisation-out summary of ``model`` (default: the chosen one), a dict.

    ``runs``; ``organisations``; ``fitted_numbers``; ``median_abs_error_pct`` (median
    |predicted / disclosed hours - 1|, %); ``mean_log_error`` (mean ln(disclosed / predicted):
    0 is unbiased, > 0 too few hours predicted); ``sigma_ln`` (the spread used for ranges of
    a model of at least ``small_model_active_params`` on a calibrated generation: the
    :data:`SPREAD_SHARE` percentile of those runs' |log error| / NORM.S.INV(0.9));
    ``small_model_sigma`` (what a smaller model adds, in quadrature);
    ``share_inside_p10_p90`` (share of runs inside P50 x exp(+-1.2816 x their sigma));
    ``nested_share_inside_p10_p90`` (the same with the spread sized without the run's
    organisation: the honest coverage); ``mean_log_score`` (mean log density of ln hours
    under the lognormal range, higher is better).
    """
    model = chosen_model() if model is None else model
    return _summary(_grouped(model), _n_params(model))


def loo_summary(model=None):
    """Leave-one-out summary of ``model`` (default: the chosen one): as :func:`grouped_summary`."""
    model = chosen_model() if model is None else model
    return _summary(_loo(model), _n_params(model))


def _legacy_table():
    t = _calibration_frame()
    return _table_for(t, np.full(len(t), LEGACY_DEFAULT_MFU))


def legacy_summary():
    """The former constant default (:data:`LEGACY_DEFAULT_MFU`) applied to every run as it is
    (not refitted), summarised as :func:`grouped_summary`."""
    return _summary(_legacy_table(), 1)


def model_comparison():
    """Every candidate under grouped validation and leave-one-out, and the legacy constant.

    A DataFrame indexed by model name: the :func:`grouped_summary` columns, the same under
    leave-one-out prefixed ``loo_``, and ``chosen``. The row "legacy constant 30.4%" applies
    the former default to every run as it is (not refitted).
    """
    rows = {}
    for m in CANDIDATES:
        loo = {f"loo_{k}": v for k, v in loo_summary(m).items() if k not in ("runs",)}
        rows[m] = grouped_summary(m) | loo
    legacy = legacy_summary()
    rows[f"legacy constant {LEGACY_DEFAULT_MFU:.1%}"] = legacy | {
        f"loo_{k}": v for k, v in legacy.items()
    }
    df = pd.DataFrame.from_dict(rows, orient="index")
    df["chosen"] = df.index == chosen_model()
    return df


def _choose(summaries):
    """The choice rule over grouped summaries (name -> summary dict), see :func:`chosen_model`."""
    consts = [summaries[c] for c in CONSTANTS]
    best_median = min(s["median_abs_error_pct"] for s in consts)
    best_score = max(s["mean_log_score"] for s in consts)
    beat = [
        m
        for m in ELIGIBLE
        if m not in CONSTANTS
        and summaries[m]["median_abs_error_pct"] < best_median
        and summaries[m]["mean_log_score"] > best_score
    ]
    if not beat:
        return "constant (organisations)"
    beat.sort(key=lambda m: (_n_params(m), -summaries[m]["mean_log_score"]))
    chosen = beat[0]
    for m in beat[1:]:
        if summaries[m]["mean_log_score"] > summaries[chosen]["mean_log_score"] + CHOICE_MARGIN:
            chosen = m
    return chosen


@functools.cache
def chosen_model():
    """The default-MFU model, chosen by grouped validation only.

    Among the :data:`ELIGIBLE` candidates that beat both constants fitted inside each fold
    (:data:`CONSTANTS`) on the grouped median |error| and on the grouped mean log score, the
    one with the fewest numbers, unless one with more numbers scores at least
    :data:`CHOICE_MARGIN` higher. If none beats the constants, the constant with organisations
    pooled. The log score (lognormal density of each run's disclosed hours under the
    candidate's range, its organisation held out) rewards a central estimate near the runs and
    a spread neither too narrow nor too wide. See :func:`choice_stability`.
    """
    return _choose({m: grouped_summary(m) for m in (*CONSTANTS, *ELIGIBLE)})


@functools.cache
def choice_stability():
    """The choice made again with each organisation left out of the whole data (its runs out
    of every fold and every score): organisation -> chosen model. The share equal to
    :func:`chosen_model` says how robust the choice is."""
    t = _calibration_frame()
    out = {}
    for org in sorted(t["organisation"].unique()):
        rest = t[t["organisation"] != org]
        summaries = {
            m: _summary(_grouped_on(m, rest), _n_params(m))
            for m in dict.fromkeys((*CONSTANTS, *ELIGIBLE))
        }
        out[org] = _choose(summaries)
    return out


def hindsight_constant(step=0.001):
    """The fixed MFU with the lowest median |error| over every calibration run, chosen with
    hindsight (it sees every run it is scored on: not a fair baseline, shown for honesty).

    Returns (mfu, its summary as :func:`grouped_summary`). Median |predicted / disclosed hours
    - 1| is lopsided: a run predicted too fast errs by at most -100%, one too slow without
    bound, so the best fixed constant sits above the runs' typical MFU (too few hours).
    """
    t = _calibration_frame()
    grid = np.arange(0.15, 0.50 + step / 2, step)
    flops, peak = t["model_training_flops"].to_numpy(), t["peak_tflops"].to_numpy()
    hours = t["disclosed_accelerator_hours"].to_numpy()
    med = [np.median(np.abs(engine.accelerator_hours(flops, peak * k) / hours - 1.0)) for k in grid]
    best = round(float(grid[int(np.argmin(med))]), 6)
    return best, _summary(_table_for(t, np.full(len(t), best)), 1)


@functools.cache
def fitted():
    """The fitted numbers as stored in ``udfs/data/calibration.toml`` (see
    :func:`udfs.refit.refit`)."""
    text = resources.files("udfs").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    return tomllib.loads(text)


@functools.cache
def default_mfu_model():
    """The chosen model with the stored fitted numbers (an :class:`MfuModel`)."""
    f = fitted()
    return MfuModel(f["model"], dict(f["intercepts"]), float(f["slope"]))


def predicted_mfu(accelerator, active_params, architecture="dense"):
    """Default MFU (fraction) for accelerator name(s) and active parameters; vectorised.

    The chosen model with the stored numbers, clamped into [:data:`MFU_MIN`,
    :data:`MFU_MAX`]. ``architecture`` is accepted for compatibility: no candidate has an MoE
    term. An accelerator outside the calibrated generations uses the "other" intercept.

    Examples
    --------
    >>> 0.2 < predicted_mfu("H100", 405e9) < 0.45
    True
    """
    del architecture
    m = default_mfu_model()
    if isinstance(accelerator, str) or m.linear:
        return m.predict(generation_of(accelerator), active_params)
    # each distinct name looked up once, its intercept too
    intercepts = _lookup(_names(accelerator), lambda u: m.intercept_of(generation_of(u)), float)
    return m.predict_from_intercept(intercepts, active_params)


def throughput_sigma():
    """Spread (sigma of ln hours) of the calibrated default for a model of at least
    ``small_model_active_params`` on a calibrated generation, from the chosen model's
    leave-one-organisation-out log errors (stored; see :data:`SPREAD_SHARE`)."""
    return float(fitted()["throughput_sigma"])


def small_model_sigma():
    """What a model at or below ``small_model_full_params`` adds to the spread (in quadrature);
    between it and ``small_model_active_params`` its share, :func:`small_model_share`, of it."""
    return float(fitted()["small_model_sigma"])


def accelerator_extra_sigma(accelerator):
    """What an accelerator adds to the spread (in quadrature): 0 on a calibrated generation,
    else the spread of the generations' means (stored); vectorised over names. The planner's
    Accelerators column ``accel_sigma_extra``."""
    other = np.asarray(generation_of(accelerator)) == "other"
    out = np.where(other, float(fitted()["other_accelerator_sigma"]), 0.0)
    return float(out) if out.ndim == 0 else out


def spread_inputs(extra_sigma, active_params):
    """The spec's inputs of a plan's calibrated spread (``calibrated_plan_sigma``,
    ``calibrated_range_pct``): the stored spreads, the active parameters and the accelerator's
    extra sigma (:func:`accelerator_extra_sigma`, or the same figure already looked up)."""
    return {
        "calibrated_throughput_sigma": throughput_sigma(),
        "calibrated_small_model_sigma": small_model_sigma(),
        "active_params": np.asarray(active_params, dtype=float),
        "accelerator_extra_sigma": extra_sigma,
    }


def _values(accelerator, active_params):
    return spread_inputs(accelerator_extra_sigma(accelerator), active_params)


def throughput_sigma_for(accelerator, active_params):
    """The calibrated spread (sigma of ln hours) of a plan: wider for a model below
    ``small_model_active_params`` and for an accelerator outside the calibrated generations
    (the spec's ``calibrated_plan_sigma``); vectorised."""
    return model.evaluate(_values(accelerator, active_params), ["calibrated_plan_sigma"])[
        "calibrated_plan_sigma"
    ]


def default_range_pct(accelerator=None, active_params=None):
    """The throughput uncertainty (P90 / P50 - 1) of the calibrated default.

    The spec's ``calibrated_range_pct``: what a blank ``throughput_range_pct`` takes
    (:mod:`udfs.plan`), with the calibrated default MFU and with a typed MFU or throughput
    alike. Without arguments: a model of at least ``small_model_active_params`` on a
    calibrated generation; with them, :func:`throughput_sigma_for` the plan.
    """
    if accelerator is None and active_params is None:
        values = {
            "calibrated_throughput_sigma": throughput_sigma(),
            "small_model": 0.0,
            "calibrated_small_model_sigma": 0.0,
            "accelerator_extra_sigma": 0.0,
        }
    else:
        values = _values(accelerator, active_params)
    return model.evaluate(values, ["calibrated_range_pct"])["calibrated_range_pct"]


def mfu_p90(accelerator, active_params):
    """The calibrated P90 MFU: the default MFU x (1 + :func:`default_range_pct` of the plan).

    About one comparable disclosed run in ten reached more; a typed MFU above it is a WARN
    (planner Checks, hand-off report).
    """
    pct = default_range_pct(accelerator, active_params)
    return predicted_mfu(accelerator, active_params) * (1.0 + pct)


def mfu_intercept(accelerator):
    """ln-MFU intercept of accelerator name(s) in the chosen model (the "other" one outside
    the calibrated generations): the planner's Accelerators column ``accel_mfu_intercept``."""
    out = default_mfu_model().intercept(generation_of(accelerator))
    return float(out) if np.ndim(out) == 0 else out


def excel_coefficients():
    """The chosen model's numbers for workbook cells, and the formula that uses them.

    Returns a dict: ``formula`` (Excel 2010 text with the cell names below), one
    ``mfu_ln_intercept_<GEN>`` per generation ("A100", "H100", "TPU", "other"),
    ``mfu_ln_slope_below_small_model``, ``small_model_active_params`` (the size effect's
    threshold: flat above it), ``mfu_min``, ``mfu_max``,
    ``throughput_sigma_ln``, ``z_p90`` (NORM.S.INV(0.9), for checking) and
    ``generation_of_accelerator`` (catalogue accelerator name -> generation label; any
    other name is "other").
    """
    m = default_mfu_model()
    bind = {
        "mfu_ln_intercept": "INDEX(mfu_ln_intercepts,MATCH(generation,mfu_generations,0),1)",
        "mfu_ln_slope": "mfu_ln_slope_below_small_model",
        **{n: n for n in ("mfu_min", "mfu_max", "active_params", "small_model_active_params")},
    }
    out = {
        "formula": "=" + model.excel("calibrated_mfu", bind=bind, through=("calibrated_mfu_raw",))
    }
    for g, a in m.intercepts.items():
        out[f"mfu_ln_intercept_{g}"] = a
    out["mfu_ln_slope_below_small_model"] = m.slope
    out["small_model_active_params"] = model.CONSTANTS["small_model_active_params"]
    out["mfu_min"] = m.mfu_min
    out["mfu_max"] = m.mfu_max
    out["throughput_sigma_ln"] = throughput_sigma()
    out["z_p90"] = _Z90
    names = catalogue.accelerators().index
    out["generation_of_accelerator"] = {n: GENERATIONS.get(n, "other") for n in names}
    return out


#: Names that moved to :mod:`udfs.refit` (the refit of the stored numbers) and
#: :mod:`udfs.own_runs` (the pooling rule), still read through this module: ``calibration.refit()``.
_MOVED = {
    **dict.fromkeys(
        (
            "OWN_RUNS_H_GRID OWN_RUNS_K_GRID FITTED_FIGURES refit write_fitted own_runs_design "
            "own_runs_validation _team_spread _cell_spread _pulled_by_the_others "
            "_own_runs_errors _own_runs_groups _organisation_spread _choice_figures"
        ).split(),
        "refit",
    ),
    **dict.fromkeys(("own_runs_pull", "own_runs_weight"), "own_runs"),
}


def __getattr__(name):
    """A name of :data:`_MOVED`, from the module it moved to (imported when first asked)."""
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__package__}.{_MOVED[name]}"), name)
