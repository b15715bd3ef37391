"""A team's own runs (issue 17 item 6): the file, its refusals, and the pooling toward them."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compute_lab.cli import parse_number
from udfs import calibration, catalogue, engine, own_runs
from udfs.validation import CommandError

HEADER = "name,organisation,active_params,total_params,tokens,accelerator,accelerators,"
HEADER += "accelerator_hours\n"
GOOD = (
    HEADER + "Ours 7B,Acme,7B,7B,2T,H100,512,120000\nOurs 13B,Acme,13B,13B,2T,H100 SXM,512,250000\n"
)


def write(tmp_path, text, name="runs.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_gives_each_run_its_implied_mfu(tmp_path):
    runs = own_runs.read(write(tmp_path, GOOD), parse_number)
    t = runs.table
    assert list(t["name"]) == ["Ours 7B", "Ours 13B"]
    assert list(t["accelerator"]) == ["H100 SXM", "H100 SXM"]  # aliases resolved
    flops = engine.training_flops(7e9, 2e12)
    assert t.loc[0, "implied_mfu"] == pytest.approx(engine.implied_mfu(flops, 120000, 989.4))
    want = math.log(t.loc[0, "implied_mfu"] / calibration.predicted_mfu("H100 SXM", 7e9))
    assert t.loc[0, "residual"] == pytest.approx(want, rel=1e-12)
    assert 0 < runs.pull_for("H100", 7e9) < 1
    assert runs.pull_for("A100", 7e9) == 0 and runs.count_for("TPU v4") == 0


def test_the_runs_are_plain_columns_and_a_selection_pools_as_a_smaller_file(tmp_path):
    """OwnRuns keeps numpy columns (no pandas on the estimate path); ``table`` and
    ``records`` show the same values; ``select`` pools exactly as a file of those rows."""
    text = GOOD + "Ours A100,Acme,7B,7B,2T,A100 SXM 80GB,512,180000\n"
    runs = own_runs.parse(text, "mem.csv", parse_number)
    assert all(isinstance(v, np.ndarray) for v in runs.columns.values())
    assert list(runs.table.columns) == list(runs.columns)
    assert runs.records()[1]["name"] == "Ours 13B" and runs.records()[1]["row"] == 3
    assert runs.records()[0]["implied_mfu"] == runs["implied_mfu"][0]
    fewer = runs.select(np.array([True, False, True]))
    alone = own_runs.parse(HEADER + "\n".join(text.splitlines()[1::2]) + "\n", "m", parse_number)
    assert fewer.count == alone.count == 2
    for accel in ("H100 SXM", "A100 SXM 40GB", "MI300X"):
        assert float(fewer.mfu(accel, 7e9)) == float(alone.mfu(accel, 7e9))
        assert float(fewer.sigma(accel, 7e9)) == float(alone.sigma(accel, 7e9))


def test_only_own_runs_on_the_plans_generation_pull_it(tmp_path):
    """On the public record an organisation's runs on another generation pull the wrong way as
    often as the right one (calibration.own_runs_validation): they do not pull."""
    text = HEADER + "Ours A100,Acme,7B,7B,2T,A100 SXM 80GB,512,180000\n"
    runs = own_runs.parse(text, "mem.csv", parse_number)
    base = calibration.predicted_mfu("H100 SXM", 7e9)
    assert float(runs.mfu("H100 SXM", 7e9)) == pytest.approx(base, rel=1e-12)
    assert float(runs.mfu("A100 SXM 40GB", 7e9)) > calibration.predicted_mfu("A100 SXM 40GB", 7e9)
    assert runs.sigma("H100 SXM", 7e9) == pytest.approx(
        calibration.throughput_sigma_for("H100 SXM", 7e9), rel=1e-12
    )


def _mi300x_runs(n=3, mfu=0.20, organisation="Acme"):
    """n MI300X runs of a 7B model on 2T tokens at ``mfu``."""
    peak = float(catalogue.accelerator("MI300X")["bf16_tflops"])
    hours = engine.accelerator_hours(engine.training_flops(7e9, 2e12), peak * mfu)
    rows = "".join(f"m{i},{organisation},7B,7B,2T,MI300X,512,{hours:.6f}\n" for i in range(n))
    return own_runs.parse(HEADER + rows, "mi.csv", parse_number)


def test_runs_on_an_uncalibrated_accelerator_pull_only_plans_on_that_accelerator():
    """Three MI300X runs at 20% MFU: a B200 plan (also outside the calibrated generations)
    keeps its calibrated default and spread (it used to fall from 28.7% to 24.5%), an MI300X
    plan is pulled; a plan on no catalogue accelerator is not pulled either."""
    runs = _mi300x_runs()
    for other in ("B200 (HGX)", "MI325X", "Gaudi 3", "H100 SXM", ""):
        assert runs.count_for(other) == 0 and runs.pull_for(other, 70e9) == 0, other
        base = calibration.predicted_mfu(other, 70e9)
        assert float(runs.mfu(other, 70e9)) == pytest.approx(base, rel=1e-12), other
        assert runs.sigma(other, 70e9) == pytest.approx(
            calibration.throughput_sigma_for(other, 70e9), rel=1e-12
        )
    assert runs.count_for("MI300X") == 3
    assert float(runs.mfu("MI300X", 70e9)) < calibration.predicted_mfu("MI300X", 70e9) - 0.03


def _narrowest():
    """The spec's own_runs_narrowest_sigma (tests/test_range_monotone.py checks why)."""
    from udfs import model

    f, c = calibration.fitted(), model.CONSTANTS
    ramp = math.log(c["small_model_active_params"] / c["small_model_full_params"])
    return calibration._Z90 * f["small_model_sigma"] ** 2 / (2 * ramp * (1 - max(0, f["slope"])))


def test_runs_on_an_uncalibrated_accelerator_narrow_its_extra_spread_by_the_pull():
    """sigma^2 - pull x (base share x sigma^2 + extra^2): the accelerator's extra variance
    shrinks by the pull, all of it, as the fitted share of the base variance does, never below
    own_runs_narrowest_sigma; with many runs only the calibrated-generation spread is left,
    narrowed by the same runs."""
    f = calibration.fitted()
    extra = calibration.accelerator_extra_sigma("MI300X")
    assert extra > 0
    s = calibration.throughput_sigma_for("MI300X", 70e9)
    base = f["own_runs_base_narrowing"] * calibration.throughput_sigma() ** 2
    for n in (1, 3, 30):
        runs = _mi300x_runs(n)
        pull = runs.pull_for("MI300X", 70e9)
        told = s**2 - pull * (base + extra**2)
        want = math.sqrt(max(min(s**2, _narrowest() ** 2), told))
        assert runs.sigma("MI300X", 70e9) == pytest.approx(want, rel=1e-12)
    # three runs: the range narrows by more than the team-to-team part alone (66% -> 62% before)
    three = _mi300x_runs(3)
    old = math.sqrt(s**2 - three.pull_for("MI300X", 70e9) * base)
    assert three.sigma("MI300X", 70e9) < old - 0.03
    # many runs: close to a calibrated generation's spread narrowed by the same runs
    many = _mi300x_runs(30)
    h100 = math.sqrt(calibration.throughput_sigma_for("H100 SXM", 70e9) ** 2
                     - many.pull_for("MI300X", 70e9) * base)  # fmt: skip
    narrowed = math.sqrt(h100**2 + (1 - many.pull_for("MI300X", 70e9)) * extra**2)
    assert many.sigma("MI300X", 70e9) == pytest.approx(max(narrowed, _narrowest()), rel=1e-12)


def test_the_pooling_group_is_the_generation_or_else_the_accelerator():
    got = calibration.pooling_group(["H800 SXM", "A100 SXM 40GB", "TPU v4", "MI300X", "B200",
                                     "nonsense", ""])  # fmt: skip
    assert list(got) == ["H100", "A100", "TPU", "other: MI300X", "other: B200 (HGX)", "", ""]
    assert calibration.pooling_group("h100") == "H100"


def test_the_catalogue_pooling_spreads_group_uncalibrated_accelerators_apart():
    """The between-team part of the pull is sized on (organisation, pooling group) cells: two
    runs of one organisation on two uncalibrated accelerators share no cell."""
    import pandas as pd

    def table(accelerators):
        return pd.DataFrame({
            "organisation": ["X", "X", "Y", "Y", "Z", "Z"],
            "accelerator": accelerators,
            "implied_mfu": [0.5, 0.5, 0.2, 0.3, 0.3, 0.2],
            "predicted_mfu": [0.3] * 6,
        })  # fmt: skip

    same = table(["MI300X", "MI300X", "H100 SXM", "H100 SXM", "A100 SXM 40GB", "TPU v4"])
    apart = table(["MI300X", "MI325X", "H100 SXM", "H100 SXM", "A100 SXM 40GB", "TPU v4"])
    within_same, between_same = calibration._cell_spread(same)
    within_apart, between_apart = calibration._cell_spread(apart)
    assert between_apart < between_same  # X's shared part counts only on one accelerator


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (HEADER.replace(",tokens", "") + "a,b,7B,7B,H100,8,100\n", "row 1, column tokens: missing"),
        (HEADER + "a,b,7B,7B,2T,H900,8,100\n", "row 2, column accelerator: unknown accelerator"),
        (
            HEADER + "a,b,7B,7B,2T,H100,8,100\nA,b,7B,7B,2T,H100,8,100\n",
            "row 3, column name: duplicate name 'A' (also row 2)",
        ),
        (HEADER + "a,b,7B,7B,0,H100,8,100\n", "row 2, column tokens: must be a finite number"),
        (HEADER + "a,b,7B,7B,2T,H100,8,-5\n", "row 2, column accelerator_hours: must be a"),
        (HEADER + "a,b,7B,7B,inf,H100,8,100\n", "row 2, column tokens: must be a"),
        (HEADER + "a,b,7B,7B,lots,H100,8,100\n", "row 2, column tokens: must be a number"),
        (HEADER + "a,b,9B,7B,2T,H100,8,100\n", "row 2, column active_params: must be at most"),
        # past any run (MAX_RUN_FIGURE, MAX_COUNT): refused as the planner's row check does
        (
            HEADER + "a,b,7B,7B,2T,H100,8,1e300\n",
            "row 2, column accelerator_hours: must be at most 1e15 (got '1e300')",
        ),
        (HEADER + "a,b,7B,7B,2e15,H100,8,1e6\n", "row 2, column tokens: must be at most 1e15"),
        (HEADER + "a,b,7B,7B,2T,H100,2e9,1e6\n", "row 2, column accelerators: must be at most 1e9"),
        (HEADER + "a,b,7B,1e999,2T,H100,8,1e6\n", "row 2, column total_params: must be a"),
        (HEADER, "row 2: no runs"),
        (
            HEADER
            + "a,Other,7B,7B,2T,H100,8,1e6\nb,,7B,7B,2T,H100,8,1e6\nc,Acme,7B,7B,2T,H100,8,1e6\n",
            "row 4, column organisation: organisation 'Acme' differs from 'Other' (row 2): a "
            "file holds one organisation's runs: keep one organisation's runs",
        ),
        (HEADER + ",b,7B,7B,2T,H100,8,100\n", "row 2, column name: is blank"),
        # in bounds, but not a training run: the implied MFU is below 0.1% (MIN_IMPLIED_MFU;
        # tiny figures whose FLOPs round to 0 included), or above 1 (hours of 1e-300)
        (HEADER + "a,b,7B,7B,2T,H100,8,1e14\n", "row 2, column accelerator_hours: is too many"),
        (HEADER + "a,b,3e-308,3e-308,3e-308,H100,3e-308,3e-308\n", "below 0.1%"),
        (HEADER + "a,b,1e15,1e15,1e15,H100,1,1e-300\n", "column accelerator_hours: is too few"),
        (
            HEADER + "a,b,7B,7B,2T,H100,8,1000000\nc,b,7B,7B,2T,H100,8,100\n",
            "row 3, column accelerator_hours: is too few",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_file_row_and_column(tmp_path, text, needle):
    path = write(tmp_path, text)
    with pytest.raises(CommandError) as err:
        own_runs.read(path, parse_number)
    line = str(err.value)
    assert line.startswith(f"{path}: ") and needle in line, line
    assert "\n" not in line


def test_a_missing_a_huge_and_a_binary_file_are_refused(tmp_path):
    with pytest.raises(CommandError, match="cannot read the own-runs file"):
        own_runs.read(tmp_path / "none.csv", parse_number)
    big = tmp_path / "big.csv"
    big.write_bytes(b"x" * (own_runs.MAX_FILE_BYTES + 1))
    with pytest.raises(CommandError, match="MAX_FILE_BYTES"):
        own_runs.read(big, parse_number)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(CommandError, match="not a UTF-8 CSV"):
        own_runs.read(binary, parse_number)


def _runs(n, hours):
    rows = "".join(f"r{i},Acme,7B,7B,2T,H100,512,{hours}\n" for i in range(n))
    return own_runs.parse(HEADER + rows, "mem.csv", parse_number)


@settings(max_examples=30, deadline=None)
@given(hours=st.floats(30_000, 400_000), n=st.integers(1, 30))
def test_a_prediction_moves_toward_the_runs_monotonically_as_runs_are_added(hours, n):
    base = float(calibration.predicted_mfu("H100 SXM", 7e9))
    implied = float(_runs(1, hours).table.loc[0, "implied_mfu"])
    fewer, more = _runs(n, hours), _runs(n + 1, hours)
    a, b = float(fewer.mfu("H100 SXM", 7e9)), float(more.mfu("H100 SXM", 7e9))
    lo, hi = sorted((base, implied))
    assert lo - 1e-12 <= a <= hi + 1e-12 and lo - 1e-12 <= b <= hi + 1e-12  # between
    assert abs(math.log(b / implied)) <= abs(math.log(a / implied)) + 1e-12  # closer
    assert fewer.pull_for("H100", 7e9) < more.pull_for("H100", 7e9) < 1
    # the spread narrows with them, never below 0 (nor below own_runs_narrowest_sigma at 5B)
    s_few, s_more = fewer.sigma("H100 SXM", 7e9), more.sigma("H100 SXM", 7e9)
    assert 0 <= s_more <= s_few <= calibration.throughput_sigma_for("H100 SXM", 7e9)


def test_the_pull_weighs_runs_by_closeness_in_size():
    """n runs of the plan's size pull n / (n + k); a run e^h times larger or smaller weighs
    1/e of one of the plan's size (calibration.own_runs_pull, h and k stored)."""
    f = calibration.fitted()
    h, k = f["own_runs_size_h"], f["own_runs_k"]
    assert (h, k) == calibration.own_runs_design()  # the stored numbers are the data's choice
    for n in (1, 5, 50):
        assert _runs(n, 100_000).pull_for("H100", 7e9) == pytest.approx(n / (n + k), rel=1e-12)
    w = math.exp(-1.0)
    one = _runs(1, 100_000)
    assert one.pull_for("H100", 7e9 * math.exp(h)) == pytest.approx(w / (w + k), rel=1e-12)
    assert one.pull_for("H100", 7e9 / math.exp(h)) == pytest.approx(w / (w + k), rel=1e-12)
    # a 7B and a 70B run far from the default: a 7B plan moves mostly toward the 7B run
    text = HEADER + "s,Acme,7B,7B,2T,H100,512,60000\nl,Acme,70B,70B,2T,H100,4096,2400000\n"
    two = own_runs.parse(text, "two.csv", parse_number)
    r_small, r_large = two["residual"]
    shift = math.log(float(two.mfu("H100 SXM", 7e9)) / calibration.predicted_mfu("H100 SXM", 7e9))
    w_large = math.exp(-math.log(10) / h)
    assert shift == pytest.approx((r_small + w_large * r_large) / (1 + w_large + k), rel=1e-9)


def test_a_plan_array_pools_as_one_plan_at_a_time():
    runs = own_runs.parse(GOOD, "g.csv", parse_number)
    sizes = np.array([1e9, 7e9, 13e9, 70e9, 405e9])
    got = runs.mfu("H100 SXM", sizes)
    assert got.shape == sizes.shape
    for a, want in zip(sizes, got, strict=True):
        assert float(runs.mfu("H100 SXM", float(a))) == pytest.approx(float(want), rel=1e-12)


# -- the command line ---------------------------------------------------------------------------


def test_estimate_and_runs_take_own_runs(tmp_path, capsys):
    from compute_lab.cli import main

    path = write(tmp_path, GOOD)
    plan = ["--accelerator", "H100", "--total-params", "70B", "--tokens", "2T",
            "--accelerators", "1024", "--json"]  # fmt: skip
    assert main(["estimate", *plan]) == 0
    import json

    base = json.loads(capsys.readouterr().out)
    assert main(["estimate", *plan, "--own-runs", str(path)]) == 0
    own = json.loads(capsys.readouterr().out)
    runs = own_runs.read(path, parse_number)
    assert own["inputs"]["mfu"] == pytest.approx(float(runs.mfu("H100 SXM", 70e9)), rel=1e-12)
    assert own["inputs"]["mfu"] != base["inputs"]["mfu"]
    assert own["throughput_sigma"] < base["throughput_sigma"]
    assert main(["runs", "--own-runs", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Your 2 own run(s), on H100: a plan's default MFU moves toward" in out
    assert "Ours 13B" in out
    assert max(map(len, out.splitlines())) <= 100


def test_a_bad_own_runs_file_is_exit_2_and_one_line(tmp_path, capsys):
    from compute_lab.cli import main

    path = write(tmp_path, HEADER + "a,b,7B,7B,2T,H900,8,100\n")
    assert main(["estimate", "--accelerator", "H100", "--own-runs", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "row 2, column accelerator" in err
    assert main(["runs", "--json", "--own-runs", str(write(tmp_path, GOOD, "g.csv"))]) == 2
    assert "drop --json/--csv" in capsys.readouterr().err


#: Each kind of bad own-runs file (issue 17 item 6) -> the row and column its one line names.
BAD_FILES = {
    "missing column": (
        HEADER.replace(",tokens", "") + "a,b,7B,7B,H100,8,100\n", "row 1, column tokens"
    ),
    "unknown accelerator": (HEADER + "a,b,7B,7B,2T,H900,8,100\n", "row 2, column accelerator"),
    "duplicate name": (GOOD + "ours 7b,Acme,7B,7B,2T,H100,8,100\n", "row 4, column name"),
    "non-positive": (HEADER + "a,b,7B,7B,2T,H100,0,100\n", "row 2, column accelerators"),
    "non-finite": (HEADER + "a,b,7B,7B,2T,H100,8,nan\n", "row 2, column accelerator_hours"),
    "past its bound": (HEADER + "a,b,7B,7B,2T,H100,8,1e300\n", "row 2, column accelerator_hours"),
    "blank figure": (HEADER + "a,b,7B,,2T,H100,8,100\n", "row 2, column total_params"),
    "two organisations": (GOOD + "c,Other,7B,7B,2T,H100,8,1e6\n", "row 4, column organisation"),
}  # fmt: skip


#: The commands that take --own-runs.
OWN_RUNS_COMMANDS = ("estimate", "runs", "templates", "report")


def _argv(command, tmp_path):
    """A command line of ``command`` that writes, if at all, below ``tmp_path`` (the report
    reads a planner written there)."""
    out = tmp_path / "out"
    planner = tmp_path / "planner.xlsx"
    if command == "report" and not planner.exists():
        from workbook_templates.planner import build

        build().save(planner)
    return {
        "estimate": ["estimate", "--accelerator", "H100", "--total-params", "70B", "--tokens",
                     "2T", "--accelerators", "1024"],
        "runs": ["runs"],
        "templates": ["templates", "--out", str(out)],
        "report": ["report", str(planner), "--csv", str(out)],
    }[command]  # fmt: skip


def refused_own_runs(capsys, tmp_path, command, text):
    """``command --own-runs`` a file holding ``text``: (its path, the one stderr line), after
    checking exit 2, nothing on stdout and no file written."""
    from compute_lab.cli import main

    path = write(tmp_path, text, "bad.csv")
    argv = _argv(command, tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main([*argv, "--own-runs", str(path)]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    (line,) = got.err.strip().splitlines()
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    return path, line


@pytest.mark.parametrize("command", OWN_RUNS_COMMANDS)
@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_each_bad_file_is_one_line_exit_2_and_nothing_written_on_each_command(
    tmp_path, command, kind, capsys
):
    """On estimate, runs, templates and report: exit 2, one stderr line naming the file, the
    row and the column, nothing on stdout and no file written."""
    text, where = BAD_FILES[kind]
    path, line = refused_own_runs(capsys, tmp_path, command, text)
    assert f"{path}: {where}" in line, line


@pytest.mark.parametrize("kind", [*sorted(BAD_FILES), "no such file", "not text"])
def test_every_command_refuses_a_bad_file_in_the_same_words(tmp_path, kind, capsys):
    """The four commands read --own-runs by one reader (udfs.own_runs.read_given): a bad file
    is the same line on each, but for the command's name."""
    from compute_lab.cli import main

    if kind == "no such file":
        path = tmp_path / "none.csv"
    elif kind == "not text":
        path = tmp_path / "bad.csv"
        path.write_bytes(b"\xff\xfe\x00 not text")
    else:
        path = write(tmp_path, BAD_FILES[kind][0], "bad.csv")
    lines = set()
    for command in OWN_RUNS_COMMANDS:
        assert main([*_argv(command, tmp_path), "--own-runs", str(path)]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        prefix = f"compute-lab {command}: error: "
        assert line.startswith(prefix), line
        lines.add(line.removeprefix(prefix))
    assert len(lines) == 1, lines
    assert lines.pop().startswith(f"{path}: ")


def test_read_given_reads_the_flag_with_the_parser_given_or_passed_down(tmp_path):
    """None without --own-runs (no parser needed); else the file read by ``parse_number``, or
    by the command line's parser passed down on ``args`` (as the faces read it)."""
    import argparse

    assert own_runs.read_given(argparse.Namespace()) is None
    assert own_runs.read_given(argparse.Namespace(own_runs=None)) is None
    path = str(write(tmp_path, GOOD))
    given = own_runs.read_given(argparse.Namespace(own_runs=path), parse_number)
    passed = own_runs.read_given(argparse.Namespace(own_runs=path, parse_number=parse_number))
    assert list(given.table["name"]) == list(passed.table["name"]) == ["Ours 7B", "Ours 13B"]
    assert given.mfu("H100 SXM", 70e9) == passed.mfu("H100 SXM", 70e9)


def test_one_organisation_a_file_blank_and_other_spellings_are_that_organisation(tmp_path):
    text = HEADER + (
        "a,,7B,7B,2T,H100,8,1e6\nb,Acme,7B,7B,2T,H100,8,1e6\n"
        "c, ACME ,7B,7B,2T,H100,8,1e6\nd,,7B,7B,2T,H100,8,1e6\n"
    )
    runs = own_runs.parse(text, "one.csv", parse_number)
    assert runs.count == 4 and runs.organisation == "Acme"


def _many_runs(n, mfu):
    peak = float(catalogue.accelerator("H100 SXM")["bf16_tflops"])
    hours = engine.accelerator_hours(engine.training_flops(7e9, 2e12), peak * mfu)
    rows = "".join(f"r{i},Acme,7B,7B,2T,H100,512,{hours:.6f}\n" for i in range(n))
    return own_runs.parse(HEADER + rows, "mem.csv", parse_number)


def test_a_pull_beyond_the_highest_default_mfu_says_the_bound_it_uses():
    """Thirty runs at 90% MFU pull an H100 plan past the 55% bound: the note says the MFU
    moved to, and the bound used (it used to say only "pulled 89%")."""
    from udfs.plan import resolve

    runs = _many_runs(30, 0.90)
    inputs = {"total_params": 70e9, "training_tokens": 2e12, "accelerators": 1024,
              "accelerator_name": "H100 SXM"}  # fmt: skip
    got = resolve(inputs, own_runs=runs)
    (note,) = [n for n in got.notes if n.name == "mfu"]
    moved = float(runs.moved_mfu("H100 SXM", 70e9))
    assert moved > calibration.MFU_MAX
    assert note.value == calibration.MFU_MAX == got.arguments["mfu"]
    pull = runs.pull_for("H100 SXM", 70e9)
    assert (f"pulled {pull:.0%} toward your 30 own run(s) on the H100 generation to "
            f"{moved:.1%}, kept at the highest default MFU 55% (mfu_max)") in note.why  # fmt: skip
    # below the bound the note says the pull alone, and the value is the moved one
    few = _many_runs(1, 0.90)
    (note,) = [n for n in resolve(inputs, own_runs=few).notes if n.name == "mfu"]
    assert note.value == pytest.approx(float(few.moved_mfu("H100 SXM", 70e9)), rel=1e-12)
    assert "kept at" not in note.why and "toward your 1 own run(s) on the H100" in note.why


def test_runs_too_far_in_size_neither_pull_nor_narrow_and_the_notes_say_so():
    """A 1M-parameter plan and runs at 7B and 13B: the pull is about 0, the MFU is the
    default's, and the notes do not claim a pull or a narrowing (they said "pulled 0%" and
    "narrowed by your 2 own run(s)")."""
    from udfs.plan import resolve

    runs = own_runs.parse(GOOD, "g.csv", parse_number)
    plan = {"total_params": 1e6, "training_tokens": 1e9, "accelerators": 8.0,
            "accelerator_name": "H100 SXM"}  # fmt: skip
    got = resolve(plan, own_runs=runs)
    notes = {n.name: n.why for n in got.notes}
    assert runs.pull_for("H100 SXM", 1e6) < 0.005
    assert "too far in size to pull it" in notes["mfu"] and "pulled" not in notes["mfu"]
    assert "narrowed" not in notes["throughput_range_pct"]
    near = resolve({**plan, "total_params": 7e9}, own_runs=runs)
    assert (
        "narrowed by your 2 own run(s)"
        in {n.name: n.why for n in near.notes}["throughput_range_pct"]
    )
