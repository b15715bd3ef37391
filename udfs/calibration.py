"""Calibration of the engine against the catalogue's disclosed training runs.

- :func:`reference_table`: each run with disclosed accelerator-hours beside the model's
  FLOPs, the implied effective TFLOP/s and the implied MFU.
- :func:`default_mfu`: the legacy constant default MFU, the median implied MFU of every
  catalogue run with accelerator-hours (what the planner's Reference runs sheet shows).
- :func:`calibration_set`: the runs whose accelerator-hours the developer disclosed.
- :func:`fit` / :class:`MfuModel`: a default-MFU model fitted in log space, robustly (least
  absolute deviations), on a handful of numbers; :data:`CANDIDATES` are the models compared.
- :func:`leave_one_out`, :func:`loo_summary`, :func:`model_comparison`: how well each
  candidate predicts a run's accelerator-hours when that run is left out of the fit.
- :func:`chosen_model`, :func:`default_mfu_model`, :func:`predicted_mfu`,
  :func:`throughput_sigma`, :func:`excel_coefficients`: the chosen default (the candidate with
  the smallest leave-one-out log error), its spread for ranges (:mod:`udfs.ranges`) and its
  coefficients for native spreadsheet formulas.

The chosen model is ``MFU = MIN(mfu_max, MAX(mfu_min, EXP(intercept[generation] +
slope * LN(active_params / 1E9))))``; see ``docs/methodology-calibration.md``.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd

from . import catalogue, engine, model
from .formula import norm_s_inv
from .validation import InputError

__all__ = [
    "CANDIDATES",
    "GENERATIONS",
    "MFU_MIN",
    "MFU_MAX",
    "LEGACY_DEFAULT_MFU",
    "MfuModel",
    "reference_table",
    "default_mfu",
    "calibration_set",
    "generation_of",
    "fit",
    "leave_one_out",
    "loo_summary",
    "model_comparison",
    "chosen_model",
    "default_mfu_model",
    "predicted_mfu",
    "throughput_sigma",
    "default_range_pct",
    "mfu_intercept",
    "excel_coefficients",
]

#: Accelerator generation of each calibrated accelerator: one fitted intercept per generation.
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

#: Sane range of a predicted MFU (fraction): no disclosed run sits below 10%, and no paper
#: reports a large-run MFU above ~46% (PaLM); 55% leaves margin. Applied to every prediction.
#: The spec's constants (udfs.quantities ``mfu_min``, ``mfu_max``), one definition.
MFU_MIN = model.CONSTANTS["mfu_min"]
MFU_MAX = model.CONSTANTS["mfu_max"]

#: The constant default MFU before the calibration set grew (median of 7 runs), for comparison.
LEGACY_DEFAULT_MFU = 0.304

#: The candidate default-MFU models: name -> the terms in ln(MFU) besides an intercept.
CANDIDATES = {
    "constant": (),
    "generation": ("generation",),
    "size": ("size",),
    "generation+size": ("generation", "size"),
    "generation+size+moe": ("generation", "size", "moe"),
}

_Z90 = norm_s_inv(0.9)


# -- the reference table (all runs) -------------------------------------------------------------


@functools.cache
def _table():
    runs = catalogue.runs()
    accels = catalogue.accelerators()
    rows = []
    for name, r in runs.iterrows():
        accel = r["accelerator"]
        peak = accels.loc[accel, "bf16_tflops"] if isinstance(accel, str) else np.nan
        have = np.isfinite([r["active_params"], r["training_tokens"]]).all()
        flops = engine.training_flops(r["active_params"], r["training_tokens"]) if have else np.nan
        hours = r["accelerator_hours"]
        implied = (
            engine.implied_effective_tflops(flops, hours)
            if np.isfinite([flops, hours]).all()
            else np.nan
        )
        mfu = (
            engine.implied_mfu(flops, hours, peak) if np.isfinite([implied, peak]).all() else np.nan
        )
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
    0.304
    """
    t = _table()
    return float(np.median(t.loc[np.isfinite(t["implied_mfu"]), "implied_mfu"]))


# -- the calibration set and the candidate models ----------------------------------------------


def generation_of(accelerator):
    """Generation label(s) ("A100", "H100", "TPU" or "other") of accelerator name(s).

    Names are resolved through the catalogue's aliases; an unknown name is "other".
    Accepts a string or an array of strings; returns the same shape.
    """

    def one(name):
        try:
            canonical = catalogue.accelerator(name)["name"]
        except InputError:  # not in the catalogue (or not a name): no calibrated generation
            return "other"
        return GENERATIONS.get(canonical, "other")

    if isinstance(accelerator, str):
        return one(accelerator)
    return _lookup(np.asarray(accelerator).astype(str), one, object)


def _lookup(values, fn, dtype):
    """fn applied to each distinct value of an array, spread back over it (vectorised)."""
    arr = np.asarray(values)
    if arr.size == 0:
        return arr.astype(dtype)
    uniq, inverse = np.unique(arr, return_inverse=True)
    mapped = np.array([fn(u) for u in uniq.tolist()], dtype=dtype)
    return mapped[inverse].reshape(arr.shape)


@functools.cache
def _calibration_frame():
    t = _table()
    t = t[t["in_calibration"]].copy()
    t["generation"] = [GENERATIONS.get(a, "other") for a in t["accelerator"]]
    t["moe"] = (t["architecture"] == "moe").astype(float)
    t["ln_mfu"] = np.log(t["implied_mfu"].astype(float))
    return t


def calibration_set():
    """The calibration runs: developer-disclosed hours, FLOPs and peak known.

    Columns as :func:`reference_table` plus ``generation``, ``moe`` (1.0 for MoE) and
    ``ln_mfu`` (natural log of the implied MFU).
    """
    return _calibration_frame().copy()


@dataclasses.dataclass(frozen=True)
class MfuModel:
    """A fitted default-MFU model: ``ln MFU = intercept[generation] + slope x ln(active / 1e9)
    (+ moe_shift for MoE)``, clamped into [``mfu_min``, ``mfu_max``].

    ``intercepts`` maps "A100", "H100", "TPU" and "other" to an intercept (a model without the
    generation term has the same number for all four); "other" is the mean of the fitted
    generations' intercepts, an uncalibrated guess for accelerators outside the set.
    """

    name: str
    intercepts: dict
    slope: float = 0.0
    moe_shift: float = 0.0
    mfu_min: float = MFU_MIN
    mfu_max: float = MFU_MAX

    def ln_mfu(self, generation, active_params, moe=0.0):
        """Unclamped ln(MFU) for generation label(s), active parameters and MoE flag(s)."""
        x = np.log(np.asarray(active_params, dtype=float) / 1e9)
        return self.intercept(generation, moe) + self.slope * x

    def intercept(self, generation, moe=0.0):
        """ln-MFU intercept of generation label(s), with the MoE shift for MoE flag(s)."""
        gen = np.asarray(generation, dtype=object)

        def one(g):
            if g not in self.intercepts:
                raise ValueError(f"unknown generation {g!r}; known: {', '.join(self.intercepts)}")
            return self.intercepts[g]

        return _lookup(gen, one, float) + self.moe_shift * np.asarray(moe, dtype=float)

    def predict(self, generation, active_params, moe=0.0):
        """Predicted MFU (fraction), clamped; vectorised over all arguments.

        The spec's ``calibrated_mfu`` formula (udfs.quantities), the planner's too.
        """
        values = {"mfu_ln_intercept": self.intercept(generation, moe),
                  "mfu_ln_slope": self.slope, "active_params": active_params,
                  "mfu_min": self.mfu_min, "mfu_max": self.mfu_max}  # fmt: skip
        return model.evaluate(values, ["calibrated_mfu"])["calibrated_mfu"]


def _l1_fit(X, y, iterations=100):
    """Least absolute deviations by iteratively reweighted least squares (deterministic)."""
    b = np.linalg.lstsq(X, y, rcond=None)[0]
    for _ in range(iterations):
        w = np.sqrt(1.0 / np.maximum(np.abs(y - X @ b), 1e-6))
        b = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)[0]
    return b


def fit(model="generation+size", runs=None):
    """Fit candidate ``model`` (a key of :data:`CANDIDATES`) on ``runs`` (default: the set).

    ``runs`` is a frame like :func:`calibration_set`. "constant" is the median of ln(MFU);
    the others are least-absolute-deviation fits in log space.
    """
    if model not in CANDIDATES:
        raise ValueError(f"model must be one of {list(CANDIDATES)}, not {model!r}")
    t = _calibration_frame() if runs is None else runs
    terms = CANDIDATES[model]
    y = t["ln_mfu"].to_numpy()
    if not terms:
        c = float(np.median(y))
        return MfuModel(model, {g: c for g in (*_FITTED_GENERATIONS, "other")})
    gens = [g for g in _FITTED_GENERATIONS if (t["generation"] == g).any()]
    cols, names = [], []
    if "generation" in terms:
        for g in gens:
            cols.append((t["generation"] == g).to_numpy(float))
            names.append(g)
    else:
        cols.append(np.ones(len(t)))
        names.append("all")
    if "size" in terms:
        cols.append(np.log(t["active_params"].to_numpy(float) / 1e9))
        names.append("slope")
    if "moe" in terms:
        cols.append(t["moe"].to_numpy(float))
        names.append("moe")
    b = dict(zip(names, _l1_fit(np.column_stack(cols), y), strict=True))
    if "all" in b:
        intercepts = {g: float(b["all"]) for g in (*_FITTED_GENERATIONS, "other")}
    else:
        fitted = {g: float(b[g]) for g in gens}
        other = float(np.mean(list(fitted.values())))
        intercepts = {g: fitted.get(g, other) for g in _FITTED_GENERATIONS} | {"other": other}
    return MfuModel(
        model, intercepts, slope=float(b.get("slope", 0.0)), moe_shift=float(b.get("moe", 0.0))
    )


def _predict_rows(m, t):
    return m.predict(t["generation"].to_numpy(), t["active_params"].to_numpy(float),
                     t["moe"].to_numpy(float))  # fmt: skip


def _table_for(t, predicted, sigma):
    out = t[["run", "accelerator", "generation", "architecture", "implied_mfu"]].copy()
    out["predicted_mfu"] = predicted
    out["disclosed_accelerator_hours"] = t["disclosed_accelerator_hours"]
    out["predicted_accelerator_hours"] = engine.accelerator_hours(
        t["model_training_flops"].to_numpy(), t["peak_tflops"].to_numpy() * predicted
    )
    ratio = out["disclosed_accelerator_hours"] / out["predicted_accelerator_hours"]
    out["error_pct"] = 100.0 * (1.0 / ratio - 1.0)
    out["log_error"] = np.log(ratio)
    if sigma is None:
        sigma = float(np.sqrt(np.mean(out["log_error"] ** 2)))
    out["inside_p10_p90"] = np.abs(out["log_error"]) <= _Z90 * sigma
    return out


@functools.cache
def _loo(model):
    t = _calibration_frame()
    predicted = np.empty(len(t))
    for i in range(len(t)):
        keep = np.arange(len(t)) != i
        m = fit(model, t.iloc[keep])
        predicted[i] = _predict_rows(m, t.iloc[[i]])[0]
    return _table_for(t, predicted, None)


def leave_one_out(model=None):
    """Leave-one-out table of candidate ``model`` (default: :func:`chosen_model`).

    One row per calibration run: ``run``, ``accelerator``, ``generation``, ``architecture``,
    ``implied_mfu``, ``predicted_mfu`` (the model fitted without the run, clamped),
    ``disclosed_accelerator_hours``, ``predicted_accelerator_hours``, ``error_pct``
    (predicted / disclosed - 1, in %), ``log_error`` (ln(disclosed / predicted)) and
    ``inside_p10_p90`` (the disclosed hours inside the predicted P10..P90, with the sigma of
    :func:`loo_summary`). Wall-clock days have the same relative error as hours.
    """
    return _loo(chosen_model() if model is None else model).copy()


def _summary(table, n_params):
    e = table["log_error"].to_numpy()
    sigma = float(np.sqrt(np.mean(e**2)))
    return {
        "runs": len(e),
        "fitted_numbers": n_params,
        "median_abs_error_pct": float(np.median(np.abs(table["error_pct"]))),
        "sigma_ln": sigma,
        "share_inside_p10_p90": float(np.mean(np.abs(e) <= _Z90 * sigma)),
    }


def _n_params(model):
    terms = CANDIDATES[model]
    n = len(_FITTED_GENERATIONS) if "generation" in terms else 1
    return n + ("size" in terms) + ("moe" in terms)


def loo_summary(model=None):
    """Leave-one-out summary of ``model`` (default: the chosen one), a dict.

    ``runs``; ``fitted_numbers``; ``median_abs_error_pct`` (median |predicted / disclosed
    hours - 1|, %); ``sigma_ln`` (root mean square of ln(disclosed / predicted hours), the
    spread used for ranges); ``share_inside_p10_p90`` (share of runs whose disclosed hours
    fall inside P50 x exp(+-1.2816 x sigma_ln)).
    """
    model = chosen_model() if model is None else model
    return _summary(_loo(model), _n_params(model))


def _legacy_table():
    t = _calibration_frame()
    return _table_for(t, np.full(len(t), LEGACY_DEFAULT_MFU), None)


def model_comparison():
    """Every candidate's leave-one-out summary, and the legacy constant's (not refitted).

    A DataFrame indexed by model name with the columns of :func:`loo_summary` and
    ``chosen`` (True for the default). The row "legacy constant 30.4%" applies the former
    default to every run as it is (it was fitted on seven runs, some of them in the set).
    """
    rows = {m: loo_summary(m) for m in CANDIDATES}
    rows["legacy constant 30.4%"] = _summary(_legacy_table(), 1)
    df = pd.DataFrame.from_dict(rows, orient="index")
    df["chosen"] = df.index == chosen_model()
    return df


@functools.cache
def chosen_model():
    """The candidate with the smallest leave-one-out ``sigma_ln`` (ties: fewer numbers).

    Examples
    --------
    >>> chosen_model()
    'generation+size'
    """
    return min(CANDIDATES, key=lambda m: (round(loo_summary(m)["sigma_ln"], 12), _n_params(m)))


@functools.cache
def default_mfu_model():
    """The chosen model fitted on the whole calibration set (an :class:`MfuModel`)."""
    return fit(chosen_model())


def predicted_mfu(accelerator, active_params, architecture="dense"):
    """Default MFU (fraction) for accelerator name(s) and active parameters; vectorised.

    The chosen model fitted on the whole set, clamped into [:data:`MFU_MIN`,
    :data:`MFU_MAX`]. ``architecture`` ("dense" or "moe") only matters for a model with the
    MoE term. An accelerator outside the calibrated generations uses the "other" intercept.

    Examples
    --------
    >>> round(predicted_mfu("H100", 405e9), 3)
    0.309
    """
    moe = np.asarray(np.char.lower(np.asarray(architecture, dtype=str)) == "moe", dtype=float)
    return default_mfu_model().predict(generation_of(accelerator), active_params, moe)


@functools.cache
def throughput_sigma():
    """Spread (sigma of ln hours) of the default throughput: the chosen model's LOO sigma.

    Examples
    --------
    >>> round(throughput_sigma(), 3)
    0.272
    """
    return loo_summary()["sigma_ln"]


def default_range_pct():
    """The throughput uncertainty (P90 / P50 - 1) of the calibrated default.

    The spec's ``calibrated_range_pct``, EXP(NORM.S.INV(0.9) x :func:`throughput_sigma`) - 1:
    what a blank ``throughput_range_pct`` takes with the default MFU (:mod:`udfs.plan`).

    Examples
    --------
    >>> round(default_range_pct(), 3)
    0.417
    """
    values = {"calibrated_throughput_sigma": throughput_sigma()}
    return model.evaluate(values, ["calibrated_range_pct"])["calibrated_range_pct"]


def mfu_intercept(accelerator):
    """ln-MFU intercept of accelerator name(s) in the chosen model (the "other" one outside
    the calibrated generations): the planner's Accelerators column ``accel_mfu_intercept``."""
    out = default_mfu_model().intercept(generation_of(accelerator))
    return float(out) if np.ndim(out) == 0 else out


def excel_coefficients():
    """The chosen model's numbers for workbook cells, and the formula that uses them.

    Returns a dict: ``formula`` (Excel 2010 text with the cell names below), one
    ``mfu_ln_intercept_<GEN>`` per generation ("A100", "H100", "TPU", "other"),
    ``mfu_ln_slope_per_ln_active_billions``, ``mfu_min``, ``mfu_max``,
    ``throughput_sigma_ln``, ``z_p90`` (NORM.S.INV(0.9), for checking) and
    ``generation_of_accelerator`` (catalogue accelerator name -> generation label; any
    other name is "other").
    """
    m = default_mfu_model()
    bind = {
        "mfu_ln_intercept": "INDEX(mfu_ln_intercepts,MATCH(generation,mfu_generations,0),1)",
        "mfu_ln_slope": "mfu_ln_slope_per_ln_active_billions",
        **{n: n for n in ("mfu_min", "mfu_max", "active_params")},
    }
    out = {
        "formula": "=" + model.excel("calibrated_mfu", bind=bind, through=("calibrated_mfu_raw",))
    }
    for g, a in m.intercepts.items():
        out[f"mfu_ln_intercept_{g}"] = a
    out["mfu_ln_slope_per_ln_active_billions"] = m.slope
    if m.moe_shift:
        out["mfu_ln_moe_shift"] = m.moe_shift
    out["mfu_min"] = m.mfu_min
    out["mfu_max"] = m.mfu_max
    out["throughput_sigma_ln"] = throughput_sigma()
    out["z_p90"] = _Z90
    names = catalogue.accelerators().index
    out["generation_of_accelerator"] = {n: GENERATIONS.get(n, "other") for n in names}
    return out
