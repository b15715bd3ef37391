"""The README and the docs stay true: every picture they show exists, every command runs.

The README's shell blocks are run line by line, in order, in one empty folder, with the
installed ``compute-lab`` and this ``python`` (``make demo`` is run by tests/test_demo.py,
``make test`` is what CI itself runs, and ``source`` changes nothing a subprocess could see,
so those lines are not rerun here); each ``$ command`` of its ``console`` blocks must print
there what the block shows, line for line. The example output block must be what
``compute-lab estimate`` prints first.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from helpers import fenced_blocks

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PLANNER_FILE = "training-run-planner.xlsx"
DOCS = sorted((ROOT / "docs").glob("*.md"))
BIN = Path(sys.executable).parent


def _blocks(text, lang):
    """The bodies of the fenced code blocks whose info string is ``lang``, as text."""
    return ["\n".join(body) for body in fenced_blocks(text, lang)]


def _commands():
    """Each command line of the README's ``sh`` blocks, comments stripped, in order."""
    out = []
    for block in _blocks(README.read_text(encoding="utf-8"), "sh"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith(("make ", "source ")):
                out.append(line)
    return out


def test_every_picture_the_docs_show_exists():
    shown = 0
    for page in [README, *DOCS]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text(encoding="utf-8")):
            shown += 1
            path = (page.parent / target).resolve()
            assert path.is_file(), f"{page.name} shows {target}, which does not exist"
            if path.suffix == ".svg":  # drawn, not printed: a well-formed SVG with content
                import xml.etree.ElementTree as ET

                root = ET.parse(path).getroot()
                assert root.tag.endswith("svg") and len(list(root.iter())) > 50, target
                continue
            assert path.stat().st_size > 10_000, f"{target} is too small to be a picture"
    assert shown >= 4


def test_every_link_between_the_docs_resolves():
    for page in [README, *DOCS]:
        for target in re.findall(
            r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")
        ):
            assert (page.parent / target).is_file(), f"{page.name} links to missing {target}"


def test_the_readme_is_a_short_front_door_without_the_word_seed():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 12_000
    assert "seed" not in text.lower()


def test_docs_never_say_seed():
    for page in DOCS:
        assert not re.search(r"\bseeds?\b", page.read_text(encoding="utf-8"), re.I), page.name


def _console(text):
    """(command, printed lines) of every ``$ command`` in the ``console`` blocks of ``text``."""
    out = []
    for block in _blocks(text, "console"):
        for line in block.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], []))
            elif out:
                out[-1][1].append(line)
    return out


def _run_readme_commands(folder):
    """Run the README's ``sh`` commands in order in ``folder``: {command: what it printed}.

    ``compute-lab`` is the installed one and ``python`` this Python; what a command prints on
    stderr and stdout is kept in the order a terminal shows it (its warnings come first)."""
    printed = {}
    for command in _commands():
        argv = shlex.split(command)
        if argv[0] == ".venv/bin/compute-lab":
            argv[0] = "compute-lab"
        assert argv[0] in ("compute-lab", "python"), command
        expanded = [str(BIN / "compute-lab") if argv[0] == "compute-lab" else sys.executable]
        for arg in argv[1:]:
            matches = sorted(folder.glob(arg)) if "*" in arg else []
            expanded += [str(m) for m in matches] or [arg]
        proc = subprocess.run(expanded, cwd=folder, capture_output=True, text=True, timeout=300,
                              check=False)  # fmt: skip
        assert proc.returncode == 0, (command, proc.stderr)
        assert "Traceback" not in proc.stderr, command
        printed[" ".join(argv)] = proc.stderr + proc.stdout
    return printed


def test_every_command_in_the_readme_runs_and_prints_what_it_shows(tmp_path):
    """The quick start's and the walk-through's commands, in order, in one empty folder; each
    ``console`` block's output is what its command printed there, line for line."""
    commands = _commands()
    assert any(c.startswith("python -m workbook_templates.example") for c in commands)
    assert any(c.startswith("compute-lab report") for c in commands)
    printed = _run_readme_commands(tmp_path)
    shown = _console(README.read_text(encoding="utf-8"))
    assert any(c.startswith("compute-lab report") for c, _ in shown)
    for command, lines in shown:
        key = " ".join(shlex.split(command))
        assert key in printed, f"the README shows {command!r} but its walk-through never runs it"
        assert printed[key].splitlines() == lines, command
    # the hand-off it shows is a filled plan's budget, not an empty template's $0
    report = next(printed[c] for c in printed if c.startswith("compute-lab report"))
    total = re.search(r"Consolidated \d+ budget run\(s\) .*?: total \$([\d,]+)", report)
    assert total and int(total.group(1).replace(",", "")) > 1_000_000, report


def test_the_example_output_is_what_estimate_prints():
    """(docs/command-line.md's console examples are checked in tests/test_cli.py.)"""
    blocks = [b for b in _blocks(README.read_text(encoding="utf-8"), "") if "Training FLOPs" in b]
    assert blocks
    shown = blocks[0].strip().splitlines()[:6]
    proc = subprocess.run(
        [str(BIN / "compute-lab"), "estimate"], capture_output=True, text=True, check=True
    )
    assert proc.stdout.splitlines()[:6] == shown


def test_the_readme_calibration_figures_are_the_grouped_validation():
    """The README's calibration figures, recomputed (udfs.calibration); its table is in the docs."""
    from udfs import calibration

    text = README.read_text(encoding="utf-8")
    flat = " ".join(text.split())
    g, loo = calibration.grouped_summary(), calibration.loo_summary()
    assert f"median of {g['median_abs_error_pct']:.1f}%" in flat
    assert f"mean ln(disclosed / predicted) of {g['mean_log_error']:+.3f}" in flat
    assert f"for {g['share_inside_p10_p90']:.0%} of the runs" in flat
    assert f"the median is {loo['median_abs_error_pct']:.1f}%" in flat


def test_the_docs_calibration_table_is_the_grouped_validation():
    """Every row of docs/methodology-calibration.md's run-by-run table, recomputed."""
    from udfs import calibration

    text = (ROOT / "docs" / "methodology-calibration.md").read_text(encoding="utf-8")
    rows = re.findall(
        r"^\| (.+?) \| (.+?) \| (.+?) \| ([\d.]+)% \| ([\d.]+)% \| [\d,]+ \| [\d,]+ "
        r"\| ([+-]\d+)% \| (yes|no) \|$",
        text,
        flags=re.M,
    )
    table = calibration.grouped_validation()
    assert len(rows) == len(table) >= 45
    for (run, org, accel, implied, predicted, error, inside), r in zip(
        rows, table.itertuples(index=False), strict=True
    ):
        assert (run, org, accel) == (r.run, r.organisation, r.accelerator)
        assert float(implied) == round(100 * r.implied_mfu, 1)
        assert float(predicted) == round(100 * r.predicted_mfu, 1)
        assert int(error) == round(r.error_pct)
        assert (inside == "yes") == bool(r.inside_p10_p90)


def test_the_budget_section_counts_the_runs_beyond_their_p90():
    """docs/methodology-calibration.md section 6 ("what P90 means for a budget"): how many
    runs needed more hours than their P90 (and fewer than their P10), recounted from the
    grouped validation, plain and with the spread sized without the run's organisation."""
    import numpy as np

    from udfs import calibration, ranges

    text = (ROOT / "docs" / "methodology-calibration.md").read_text(encoding="utf-8")
    flat = " ".join(text.split("## 6.")[1].split("## 7.")[0].split())
    table = calibration.grouped_validation()
    e, z = table["log_error"].to_numpy(), float(ranges.z_score(0.9))
    above, below = int(np.sum(e > z * table["sigma"])), int(np.sum(e < -z * table["sigma"]))
    n = len(e)
    assert (
        f"{above} of the {n} runs ({above / n:.0%}) needed more hours than their P90 and "
        f"{below} fewer than their P10" in flat
    )
    orgs = table["organisation"].to_numpy()
    nested = 0
    for org in np.unique(orgs):
        mine = orgs == org
        sigma = calibration._run_sigmas(table[mine], calibration._spread_parts(table[~mine]))
        nested += int(np.sum(e[mine] > z * sigma))
    assert f'organisation (section 2, "nested"), {nested} ({nested / n:.0%}) needed' in flat


def _calibration_phrases():
    """(page, phrase) of every calibrated figure the docs state in prose or tables, rebuilt
    from the stored fitted numbers (udfs/data/calibration.toml) and the model comparison: a
    refit that moves a figure fails here until the page says the new one."""
    import math

    from udfs import calibration, ranges

    f = calibration.fitted()
    g, loo, ch, own = f["grouped"], f["leave_one_out"], f["choice"], f["own_runs"]
    sig, small, other = f["throughput_sigma"], f["small_model_sigma"], f["other_accelerator_sigma"]
    z = float(ranges.z_score(0.9))
    total = math.hypot(sig, small)
    h, k = f["own_runs_size_h"], f["own_runs_k"]
    mc = "methodology-calibration.md"
    meta = int((calibration.calibration_set()["organisation"] == "Meta").sum())
    phrases = [
        ("methodology.md", f"on {g['runs']} runs from {g['organisations']} organisations"),
        ("methodology.md", f"by a median of {g['median_abs_error_pct']:.1f}% (the constant: "
                           f"{ch['in_fold_constant_median_abs_error_pct']:.1f}%)"),
        ("methodology.md", f"unbiased (mean ln error {g['mean_log_error']:+.3f})"),
        ("methodology.md", f"holds {g['share_inside_p10_p90']:.0%} of the runs "
                           f"({g['nested_share_inside_p10_p90']:.0%} when sized"),
        ("methodology.md", f"errors ({sig:.3f}; wider below 5B"),
        ("methodology.md", f"optimistic second figure), the median is "
                           f"{loo['median_abs_error_pct']:.1f}%"),
        ("README.md", f"(a constant MFU fitted the same way: "
                      f"{ch['in_fold_constant_median_abs_error_pct']:.1f}%)"),
        ("README.md", f"({g['nested_share_inside_p10_p90']:.0%} sized without the run's"),
        (mc, f"{g['runs']} training runs from {g['organisations']} organisations whose"),
        (mc, f"(Meta's {meta} runs go out together"),
        ("README.md", f"on {g['runs']} training runs from {g['organisations']} organisations"),
        (mc, f"sigma = **{sig:.3f}**"),
        (mc, f"P90 / P50 - 1 = {math.exp(z * sig) - 1:.1%}); below 5B"),
        (mc, f"sigma_small = **{small:.3f}** in quadrature (total {total:.3f}: "
             f"P90 / P50 - 1 = {math.exp(z * total) - 1:.1%})"),
        (mc, f"sigma_accelerator = **{other:.3f}**"),
        (mc, f"Spreads (ln hours): sigma {sig:.4f}, small-model extra {small:.4f}, "
             f"uncalibrated-accelerator extra {other:.4f}."),
        (mc, f"Slope {f['slope']:+.4f} per ln(active / 5B)"),
        (mc, f"median |error| {g['median_abs_error_pct']:.1f}% against "
             f"{ch['in_fold_constant_median_abs_error_pct']:.1f}% for the in-fold constant, "
             f"mean log score {g['mean_log_score']:.3f} against "
             f"{ch['in_fold_constant_mean_log_score']:.3f}"),
        (mc, f"the same model {ch['stability_share']:.0%} of the time"),
        (mc, f"(`team_between_sd` {f['team_between_sd']:.3f}: the mean product"),
        (mc, f"With h = {h:g} (`own_runs_size_h`) a run 2.7x larger or smaller weighs "
             f"{math.exp(-1 / h):.0%}, one 10x larger or smaller "
             f"{math.exp(-math.log(10) / h):.0%}; "
             f"with k = {k:g} (`own_runs_k`) one run of the plan's size pulls {1 / (1 + k):.0%}, "
             f"four {4 / (4 + k):.0%}"),
        ("command-line.md", f"(h = {h:g}: a run 10x larger or smaller weighs "
                            f"{math.exp(-math.log(10) / h):.0%}; k = {k:g}: one run of the plan's "
                            f"size pulls {1 / (1 + k):.0%};"),
        (mc, f"| calibrated default alone | {own['median_abs_log_error_before']:.3f} | "
             f"{own['mean_abs_log_error_before']:.3f} |"),
        (mc, f"| pulled toward the organisation's other runs, size-weighted (today) | "
             f"{own['median_abs_log_error_after']:.3f} | {own['mean_abs_log_error_after']:.3f} |"),
        (mc, f"(median |ln| {own['median_abs_log_error_before']:.3f} -> "
             f"{own['median_abs_log_error_after']:.3f}, mean "
             f"{own['mean_abs_log_error_before']:.3f} -> {own['mean_abs_log_error_after']:.3f})"),
        ("README.md", f"from {own['mean_abs_log_error_before']:.3f} to "
                      f"{own['mean_abs_log_error_after']:.3f} in mean |ln| and from "
                      f"{own['median_abs_log_error_before']:.3f} to "
                      f"{own['median_abs_log_error_after']:.3f} in median"),
        ("excel-functions.md", f"{calibration.predicted_mfu('H100', 37e9):.1%} today"),
        ("excel-functions.md", f"{sig:.3f} today: P90 = {math.exp(z * sig):.2f} x P50"),
        ("workbooks.md", f"({math.exp(z * sig) - 1:.1%} today for a model of 5B"),
        ("README.md", f"Leaving out one run at a time, the median is "
                      f"{loo['median_abs_error_pct']:.1f}%"),
        *_own_runs_range_phrases(f, z, mc),
    ]  # fmt: skip
    for gen, icpt in f["intercepts"].items():
        label = "H100 (H800, H200)" if gen == "H100" else gen
        label = "other (shared mean; V100, AMD, ...)" if gen == "other" else label
        phrases.append((mc, f"| {label} | {icpt:.4f} | {math.exp(icpt):.1%} |"))
    return phrases


def _own_runs_range_phrases(f, z, mc):
    """The figures of the spread narrowed by own runs that the docs state in prose."""
    import math

    from udfs import own_runs

    base, small = f["own_runs_base_narrowing"], f["own_runs_small_narrowing"]
    o, fam = f["own_runs_ranges_organisation"], f["own_runs_ranges_family"]
    many = 1000 / (1000 + f["own_runs_k"])  # a thousand runs of the plan's size
    p90 = {(a, pull): math.exp(z * float(own_runs.narrowed_sigma("H100 SXM", a, pull)))
           for a in (1e9, 7e9) for pull in (0.0, many)}  # fmt: skip
    s2, small2 = f["throughput_sigma"] ** 2, f["small_model_sigma"] ** 2
    ramp = 2 * math.log(5) * (1 - max(0.0, f["slope"]))  # own_runs_narrowest_sigma's
    least = z * small2 / ramp
    before = math.sqrt(max(least**2, s2 - many * f["team_between_sd"] ** 2) + small2)
    return [
        ("command-line.md", f"({base:.1%} of the spread's variance and {small:.1%} of a small "
                            f"model's extra at a pull of 1;"),
        ("command-line.md", f"the narrowed P10..P90 holds {o['share_inside_fitted']:.0%} of them"),
        ("README.md", f"the narrowed P10..P90 holds {o['share_inside_fitted']:.0%} of its runs"),
        (mc, f"`own_runs_base_narrowing` = **{base:.1%}** of sigma^2 and "
             f"`own_runs_small_narrowing` = **{small:.1%}** of the small model's extra variance"),
        (mc, f"is {f['team_between_sd'] ** 2 / s2:.1%} of sigma^2 and left the small model's"),
        (mc, f"P90 / P50 - 1 = {p90[7e9, many] - 1:.1%} ({p90[7e9, 0.0] - 1:.1%} without runs); "
             f"a 1B plan P90 = {p90[1e9, many]:.2f} x P50 ({p90[1e9, 0.0]:.2f} x without runs; "
             f"{math.exp(z * before):.2f} x with the rule before)"),
        (mc, f"With own runs, P10..P90 holds {o['share_inside_fitted']:.0%} of the held-out runs "
             f"({fam['share_inside_fitted']:.0%} with the family's other runs as own runs), but "
             f"only {o['small_model_share_inside_fitted']:.0%} "
             f"({fam['small_model_share_inside_fitted']:.0%}) of those below 5B: the small "
             f"model's share is fitted on {o['small_model_runs']} runs"),
    ]  # fmt: skip


def test_the_calibrated_figures_in_the_docs_are_the_stored_ones():
    pages = {}
    for page, phrase in _calibration_phrases():
        path = README if page == "README.md" else ROOT / "docs" / page
        flat = pages.setdefault(page, " ".join(path.read_text(encoding="utf-8").split()))
        assert " ".join(phrase.split()) in flat, (page, phrase)


def test_the_docs_model_comparison_table_is_recomputed():
    """docs/methodology-calibration.md's table of candidates, every row and column."""
    from udfs import calibration

    text = (ROOT / "docs" / "methodology-calibration.md").read_text(encoding="utf-8")
    table = calibration.model_comparison()
    for name, r in table.iterrows():
        label = name + (" (chosen)" if r["chosen"] else "")
        if name in calibration.CANDIDATES and name not in calibration.ELIGIBLE:
            label += " (not eligible)"
        row = (
            f"| {label} | {r['fitted_numbers']} | {r['median_abs_error_pct']:.1f}% | "
            f"{r['median_abs_log_error']:.3f} | {r['mean_log_error']:+.3f} | {r['sigma_ln']:.3f} "
            f"| {r['share_inside_p10_p90']:.0%} | {r['nested_share_inside_p10_p90']:.0%} | "
            f"{r['mean_log_score']:.3f} | {r['loo_median_abs_error_pct']:.1f}% |"
        )
        assert row in text, row


def test_every_picture_title_is_a_title_of_its_workbook(generated_templates):
    """``make pictures`` finds each page by the title its sheet shows: a planner title renamed
    in the layout must be renamed in ``workbook_templates.pictures`` too."""
    import openpyxl

    from workbook_templates.pictures import PICTURES

    wb = openpyxl.load_workbook(generated_templates[PLANNER_FILE], read_only=True)
    texts = {c for ws in wb for row in ws.iter_rows(max_row=3, values_only=True) for c in row}
    for book, title, _, _ in PICTURES:
        if book == "planner":
            assert title in texts, title
