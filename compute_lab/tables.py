"""``compute-lab runs`` and ``compute-lab accelerators``: tables as text, CSV or JSON."""

from __future__ import annotations

import textwrap

from udfs.validation import is_blank


def configure_table(p):
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records")
    fmt.add_argument("--csv", action="store_true", help="print CSV")


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


#: The columns of ``runs`` (all three formats): the leave-one-out table of the default MFU.
RUNS_COLUMNS = {
    # column: (format in the text table, header lines)
    "run": (None, ("run",)),
    "accelerator": (None, ("accelerator",)),
    "implied_mfu": ("{:.1%}", ("implied", "MFU")),
    "predicted_mfu": ("{:.1%}", ("predicted", "MFU")),
    "disclosed_accelerator_hours": ("{:,.0f}", ("disclosed", "hours")),
    "predicted_accelerator_hours": ("{:,.0f}", ("predicted", "hours")),
    "error_pct": ("{:+.0f}%", ("error",)),
    "inside_p10_p90": (None, ("inside", "P10-P90")),
}


def runs_table():
    """The leave-one-out table ``compute-lab runs`` prints (a DataFrame, RUNS_COLUMNS).

    One row per calibration run: its implied MFU, the MFU the default model predicts for it
    when fitted without it, the disclosed and predicted accelerator-hours, the error
    (predicted / disclosed - 1, in %) and whether the disclosed hours fall inside P10..P90.
    """
    from udfs import calibration

    return calibration.leave_one_out()[list(RUNS_COLUMNS)].reset_index(drop=True)


def runs_summary():
    """The figures printed under the runs table: the default's and the former constant's."""
    from udfs import calibration

    chosen = calibration.loo_summary()
    legacy = calibration.model_comparison().loc[
        f"legacy constant {calibration.LEGACY_DEFAULT_MFU:.1%}"
    ]
    return {
        "model": calibration.chosen_model(),
        "runs": chosen["runs"],
        "fitted_numbers": chosen["fitted_numbers"],
        "median_abs_error_pct": chosen["median_abs_error_pct"],
        "share_inside_p10_p90": chosen["share_inside_p10_p90"],
        "throughput_sigma": chosen["sigma_ln"],
        "legacy_mfu": calibration.LEGACY_DEFAULT_MFU,
        "legacy_median_abs_error_pct": float(legacy["median_abs_error_pct"]),
        "legacy_share_inside_p10_p90": float(legacy["share_inside_p10_p90"]),
    }


def run_runs(args):
    from udfs import calibration

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
    s = runs_summary()
    others = calibration.reference_table()
    others = others.loc[~others["in_calibration"], "run"].tolist()
    print()
    paragraphs = [
        "Leave-one-out: each run's accelerator-hours predicted at the default MFU "
        f"({s['model']} model, {s['fitted_numbers']} fitted numbers) fitted without that run; "
        "hours are accelerator-hours; error: predicted over disclosed hours, minus 1.",
        f"Default MFU: median |error| {s['median_abs_error_pct']:.1f}%, disclosed hours inside "
        f"P10..P90 for {s['share_inside_p10_p90']:.0%} of the {s['runs']} runs. "
        f"The former constant MFU {s['legacy_mfu']:.1%}: median |error| "
        f"{s['legacy_median_abs_error_pct']:.1f}%, inside P10..P90 "
        f"{s['legacy_share_inside_p10_p90']:.0%}.",
    ]
    if others:
        paragraphs.append(
            "Also presets (estimate --preset NAME), not in the calibration set: "
            f"{', '.join(others)}."
        )
    for paragraph in paragraphs:
        print(textwrap.fill(paragraph, WIDTH))
    return 0


def run_accelerators(args):
    from udfs import catalogue

    df = catalogue.accelerators()
    if not (args.json or args.csv):
        df = df.drop(columns=["source"])
    _print_frame(df, args, {c: "{:,g}" for c in df.columns if c not in ("name", "source")})
    return 0
