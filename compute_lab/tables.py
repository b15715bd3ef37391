"""``compute-lab runs`` and ``compute-lab accelerators``: tables as text, CSV or JSON."""

from __future__ import annotations

import textwrap

from udfs.validation import CommandError, is_blank

from .flags import OWN_RUNS_HELP, read_own_runs


def configure_table(p):
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records")
    fmt.add_argument("--csv", action="store_true", help="print CSV")


def configure_runs(p):
    configure_table(p)
    p.add_argument("--own-runs", metavar="FILE", help=OWN_RUNS_HELP + " (listed after)")


#: Text tables fit a terminal this wide.
WIDTH = 100


def _print_frame(df, args, formats=None, headers=None):
    """``df`` as JSON records, CSV, or a text table (``headers``: column -> header lines)."""
    if args.json:
        print(df.to_json(orient="records", indent=2))
        return
    if args.csv:
        print(df.to_csv(index=False), end="")
        return
    formats = formats or {}
    headers = headers or {}
    columns = []
    for col in df.columns:
        fmt = formats.get(col)
        cells = [
            "" if is_blank(v) else (fmt.format(v) if fmt else str(v)) for v in df[col].tolist()
        ]
        numeric = fmt is not None
        columns.append((headers.get(col, (col,)), cells, numeric))
    depth = max(len(h) for h, _, _ in columns)
    lines = [[] for _ in range(depth + len(df))]
    for head, cells, numeric in columns:
        head = ("",) * (depth - len(head)) + tuple(head)
        width = max(map(len, (*head, *cells)))
        for i, text in enumerate((*head, *cells)):
            lines[i].append(text.rjust(width) if numeric else text.ljust(width))
    for line in lines:
        print("  ".join(line).rstrip())


#: The columns of ``runs`` (all three formats): the grouped-validation table of the default MFU.
RUNS_COLUMNS = {
    # column: (format in the text table, header lines)
    "run": (None, ("run",)),
    "organisation": (None, ("organisation",)),
    "generation": (None, ("gen.",)),
    "implied_mfu": ("{:.1%}", ("implied", "MFU")),
    "predicted_mfu": ("{:.1%}", ("predicted", "MFU")),
    "disclosed_accelerator_hours": ("{:,.0f}", ("disclosed", "hours")),
    "predicted_accelerator_hours": ("{:,.0f}", ("predicted", "hours")),
    "error_pct": ("{:+.0f}%", ("error",)),
    "inside_p10_p90": (None, ("inside", "P10-P90")),
}


def runs_table():
    """The grouped-validation table ``compute-lab runs`` prints (a DataFrame, RUNS_COLUMNS).

    One row per calibration run: its organisation, implied MFU, the MFU the default model
    predicts for it when fitted without every run of its organisation, the disclosed and
    predicted accelerator-hours, the error (predicted / disclosed - 1, in %) and whether the
    disclosed hours fall inside P10..P90. The default model is the stored one
    (``calibration.fitted()["model"]``, which tests/test_calibration.py refits and compares):
    the choice among the candidates is not made again at every call.
    """
    from udfs import calibration

    table = calibration.grouped_validation(calibration.fitted()["model"])
    return table[list(RUNS_COLUMNS)].reset_index(drop=True)


def runs_summary():
    """The figures printed under the runs table: the default's under grouped validation and
    leave-one-out, the best constant's and the former constant's (grouped validation).

    The default's figures, the hindsight constant's, the choice's stability and the own-runs
    figures are the stored fitted numbers (``calibration.fitted()``: a refit reproduces
    them); the two constants fitted inside each fold and the former constant are computed
    (a few milliseconds each), not the whole candidate comparison.
    """
    from udfs import calibration

    f = calibration.fitted()
    grouped, loo = f["grouped"], f["leave_one_out"]
    constants = {c: calibration.grouped_summary(c) for c in calibration.CONSTANTS}
    best = max(constants, key=lambda c: constants[c]["mean_log_score"])
    legacy = calibration.legacy_summary()
    return {
        "model": f["model"],
        "runs": grouped["runs"],
        "organisations": grouped["organisations"],
        "fitted_numbers": grouped["fitted_numbers"],
        "median_abs_error_pct": grouped["median_abs_error_pct"],
        "mean_log_error": grouped["mean_log_error"],
        "share_inside_p10_p90": grouped["share_inside_p10_p90"],
        "nested_share_inside_p10_p90": grouped["nested_share_inside_p10_p90"],
        "mean_log_score": grouped["mean_log_score"],
        "throughput_sigma": grouped["sigma_ln"],
        "loo_median_abs_error_pct": loo["median_abs_error_pct"],
        "loo_share_inside_p10_p90": loo["share_inside_p10_p90"],
        "constant_model": best,
        "constant_median_abs_error_pct": float(constants[best]["median_abs_error_pct"]),
        "constant_mean_log_score": float(constants[best]["mean_log_score"]),
        "legacy_mfu": calibration.LEGACY_DEFAULT_MFU,
        "legacy_median_abs_error_pct": float(legacy["median_abs_error_pct"]),
        "legacy_share_inside_p10_p90": float(legacy["share_inside_p10_p90"]),
        **{f"choice_{k}": v for k, v in f["choice"].items()},
        **{f"own_{k}": v for k, v in f["own_runs"].items()},
    }


def _runs_paragraphs(s):
    return [
        "Grouped validation (leave one organisation out): each run's accelerator-hours "
        f"predicted at the default MFU ({s['model']} model, {s['fitted_numbers']} fitted "
        "numbers) fitted without every run of its organisation; error: predicted over "
        "disclosed hours, minus 1.",
        f"Default MFU, grouped validation: median |error| {s['median_abs_error_pct']:.1f}%, "
        f"mean ln(disclosed / predicted) {s['mean_log_error']:+.3f}, disclosed hours inside "
        f"P10..P90 for {s['share_inside_p10_p90']:.0%} of the {s['runs']} runs from "
        f"{s['organisations']} organisations ({s['nested_share_inside_p10_p90']:.0%} with the "
        "spread sized without the run's organisation), mean log score "
        f"{s['mean_log_score']:.3f}. "
        f"Leave-one-out (a run's organisation stays in the fit): median |error| "
        f"{s['loo_median_abs_error_pct']:.1f}%, inside P10..P90 "
        f"{s['loo_share_inside_p10_p90']:.0%}.",
        f"Best constant MFU ({s['constant_model']}), grouped validation: median |error| "
        f"{s['constant_median_abs_error_pct']:.1f}%, mean log score "
        f"{s['constant_mean_log_score']:.3f} (fitted inside each fold: the fair baseline). "
        f"The former constant MFU {s['legacy_mfu']:.1%}: "
        f"median |error| {s['legacy_median_abs_error_pct']:.1f}%, inside P10..P90 "
        f"{s['legacy_share_inside_p10_p90']:.0%}. With hindsight (seeing every run it is "
        f"scored on) the best fixed MFU is {s['choice_hindsight_constant_mfu']:.1%}: median "
        f"|error| {s['choice_hindsight_constant_median_abs_error_pct']:.1f}%, but mean ln "
        f"{s['choice_hindsight_constant_mean_log_error']:+.3f} (too few hours) and log score "
        f"{s['choice_hindsight_constant_mean_log_score']:.3f}. The choice, made again with each "
        f"organisation left out, agrees {s['choice_stability_share']:.0%} of the time.",
        f"Own runs, on the catalogue: each run of an organisation with two or more predicted "
        f"with its organisation held out and its other runs on the same generation as own "
        f"runs (weighted by closeness in size): mean |ln error| "
        f"{s['own_mean_abs_log_error_before']:.3f} -> "
        f"{s['own_mean_abs_log_error_after']:.3f}, median "
        f"{s['own_median_abs_log_error_before']:.3f} -> "
        f"{s['own_median_abs_log_error_after']:.3f} ({s['own_runs']} runs).",
    ]


def run_runs(args):
    from udfs import calibration

    if getattr(args, "own_runs", None) is not None and (args.json or args.csv):
        raise CommandError("--own-runs lists your runs in the text table only: drop --json/--csv")
    own = read_own_runs(args)  # a bad file is refused before anything is printed
    df = runs_table()
    if args.json or args.csv:
        _print_frame(df, args)
        return 0
    text = df.astype({"inside_p10_p90": object})
    text["inside_p10_p90"] = ["yes" if v else "no" for v in df["inside_p10_p90"]]
    _print_frame(
        text,
        args,
        {c: fmt for c, (fmt, _) in RUNS_COLUMNS.items() if fmt},
        {c: head for c, (_, head) in RUNS_COLUMNS.items()},
    )
    others = calibration.reference_table()
    others = others.loc[~others["in_calibration"], "run"].tolist()
    print()
    paragraphs = _runs_paragraphs(runs_summary())
    if others:
        paragraphs.append(
            "Also presets (estimate --preset NAME), not in the calibration set: "
            f"{', '.join(others)}."
        )
    for paragraph in paragraphs:
        print(textwrap.fill(paragraph, WIDTH))
    if own is not None:
        print()
        _print_own_runs(own, args)
    return 0


def _print_own_runs(own, args):
    """Each own run's implied MFU beside the calibrated default and the default pulled toward
    the other own runs (the run itself left out)."""
    import numpy as np

    from udfs import own_runs

    pooled = []
    for i in range(own.count):
        others = own.select(np.arange(own.count) != i)
        pooled.append(float(others.mfu(own["accelerator"][i], own["active_params"][i])))
    shown = ["name", "accelerator", "implied_mfu", "calibrated_mfu"]
    df = own.table[shown].assign(pooled_mfu=pooled)
    p = own_runs.pooling_figures()
    groups = ", ".join(sorted({g.removeprefix("other: ") for g in own["group"]}))
    line = (f"Your {own.count} own run(s), on {groups}: a plan's default MFU moves toward your "
            "runs on its calibrated generation (an accelerator outside those generations: on "
            "that accelerator), runs of a size like the plan's counting most (a run 10x larger "
            f"or smaller weighs {p['weight_10x']:.0%}), by n_w / (n_w + k), k = {p['k']:g}: "
            f"one run of the plan's size pulls {p['one_run_pull']:.0%}. Each run below is "
            "predicted from your other runs.")  # fmt: skip
    print(textwrap.fill(line, WIDTH))
    _print_frame(df, args, {c: "{:.1%}" for c in ("implied_mfu", "calibrated_mfu", "pooled_mfu")},
                 {"implied_mfu": ("implied", "MFU"), "calibrated_mfu": ("calibrated", "MFU"),
                  "pooled_mfu": ("with your", "other runs")})  # fmt: skip


def run_accelerators(args):
    from udfs import catalogue

    df = catalogue.accelerators()
    if not (args.json or args.csv):
        df = df.drop(columns=["source"])
    _print_frame(df, args, {c: "{:,g}" for c in df.columns if c not in ("name", "source")})
    return 0
