"""``compute-lab report`` against hostile files: each is refused in one line, nothing changes.

Every case runs the real command (in a subprocess where stderr must be checked for Python
warnings, in process for the hypothesis runs) and asserts the same things: exit code 2, one
line naming the file and the culprit (part, sheet!cell or path), no traceback, no warning
text, the source files byte-identical, and no output left behind (not even a temporary file
or an empty CSV folder). Two properties run the report on hypothesis-made files: random bytes
in the parts of a real planner, and random values typed into a real generated planner's
inputs; either the run is refused as above, or every figure it writes is in range.
"""

from __future__ import annotations

import csv
import math
import os
import random
import zipfile
from pathlib import Path

import openpyxl
import pytest
from helpers import run_cli
from helpers_report import (
    CLI,
    can_make_immutable,
    digest,
    encrypted_workbook,
    immutable,
    peak_rss_mb,
    run_report,
    tree,
    xml_flood,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from test_report_fixtures import PLAN_A, PLAN_B, PLANNER, fill, rezip, set_cell, sheet_member

from udfs.quantities import PLAN_INPUTS

PROG = "compute-lab report: error: "
INPUT_NAMES = [q.name for q in PLAN_INPUTS]


@pytest.fixture(scope="module")
def template(generated_templates):
    return generated_templates[PLANNER]


@pytest.fixture(scope="module")
def good(template, tmp_path_factory):
    return fill(template, tmp_path_factory.mktemp("good") / "team.xlsx", [PLAN_A, PLAN_B])


def assert_refused(rc, err, sources, before, out_dir, out_before, *culprits):
    """Exit 2, one line naming every culprit, no traceback or warning, nothing changed."""
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(PROG), err
    for words in culprits:
        assert str(words) in lines[0], (words, err)
    for bad in ("Traceback", "Warning", "warnings.warn", "internal error", "RuntimeWarning"):
        assert bad not in err, err
    assert {str(p): digest(p) for p in sources} == before
    assert tree(out_dir) == out_before  # no output, no temporary file, no CSV folder


def refused_by_report(sources, out_dir, *culprits, extra=()):
    """Run the report on ``sources`` (subprocess) and assert it is refused as above."""
    out_dir.mkdir(exist_ok=True)
    before = {str(p): digest(p) for p in sources}
    out_before = tree(out_dir)
    rc, out, err = run_report(
        *sources, "--out", out_dir / "h.xlsx", "--csv", out_dir / "csv", *extra
    )
    assert out == ""
    assert_refused(rc, err, sources, before, out_dir, out_before, *culprits)
    return err


def where(path, name, k):
    wb = openpyxl.load_workbook(path)
    ws, coord = _cell(wb, name, k)
    return f"{ws.title}!{coord}"


def _cell(wb, name, k):
    from helpers import planner_cell

    return planner_cell(wb, name, k)


# ---------------------------------------------------------------------------------------------
# The cases of issue 8, one by one
# ---------------------------------------------------------------------------------------------


def test_a_190_mb_xml_part_is_refused_in_bounded_memory(good, tmp_path):
    """The issue's file: ~240 kB, whose customXml/item1.xml expands to ~190 MB of <a/>."""
    hostile = xml_flood(good, tmp_path / "hostile.xlsx", 190 * 1024 * 1024)
    assert hostile.stat().st_size < 400_000
    before = digest(hostile)
    out = tmp_path / "out"
    out.mkdir()
    rc, stdout, err, peak_mb = peak_rss_mb(
        [*CLI, "report", hostile, "--out", out / "h.xlsx", "--csv", out / "csv"]
    )
    assert_refused(
        rc, err, [hostile], {str(hostile): before}, out, {}, hostile, "part customXml/item1.xml"
    )
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"


def test_a_million_elements_in_a_part_under_the_size_bound(good, tmp_path):
    hostile = xml_flood(good, tmp_path / "elements.xlsx", 30 * 1024 * 1024)  # 7.9M elements
    before = digest(hostile)
    out = tmp_path / "out"
    out.mkdir()
    rc, stdout, err, peak_mb = peak_rss_mb(
        [*CLI, "report", hostile, "--out", out / "h.xlsx", "--csv", out / "csv"]
    )
    assert_refused(
        rc, err, [hostile], {str(hostile): before}, out, {}, "customXml/item1.xml", "elements"
    )
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"


def test_a_million_nested_elements_in_bounded_memory(good, tmp_path):
    """Nesting keeps every open element alive: the depth bound refuses it first."""
    hostile = rezip(
        good, tmp_path / "deep.xlsx", {"customXml/item1.xml": b"<a>" * 10**6 + b"</a>" * 10**6}
    )
    before = digest(hostile)
    out = tmp_path / "out"
    out.mkdir()
    rc, stdout, err, peak_mb = peak_rss_mb([*CLI, "report", hostile, "--out", out / "h.xlsx"])
    assert_refused(
        rc, err, [hostile], {str(hostile): before}, out, {}, "customXml/item1.xml", "deep"
    )
    assert peak_mb < 300, f"peak RSS {peak_mb:.0f} MB"


LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    )
    + "]>\n"
)


def test_billion_laughs_in_a_part_with_an_unusual_extension(good, tmp_path):
    member = sheet_member(good, "Inputs")
    with zipfile.ZipFile(good) as z:
        xml = z.read(member).decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
        types = z.read("[Content_Types].xml").decode()
    body = xml.split("?>", 1)[1] if xml.startswith("<?xml") else xml
    body = body.replace("Total parameters", "&lol9;", 1)
    odd = member.replace(".xml", ".bin")
    leaf, odd_leaf = member.rsplit("/", 1)[1], odd.rsplit("/", 1)[1]
    bomb = rezip(
        good,
        tmp_path / "laughs.xlsx",
        {
            member: None,
            odd: (LAUGHS + body).encode(),
            "xl/_rels/workbook.xml.rels": rels.replace(leaf, odd_leaf).encode(),
            "[Content_Types].xml": types.replace("/" + member, "/" + odd).encode(),
        },
    )
    refused_by_report([bomb], tmp_path / "out", bomb, "unsafe XML", odd)


def test_an_encrypted_workbook(tmp_path):
    locked = encrypted_workbook(tmp_path / "locked.xlsx")
    refused_by_report([locked], tmp_path / "out", locked, "encrypted (password-protected)")


def test_true_saved_as_a_formula_is_not_one_accelerator(good, tmp_path):
    import re

    wb = openpyxl.load_workbook(good)
    ws, coord = _cell(wb, "accelerators", 1)
    member = sheet_member(good, ws.title)
    with zipfile.ZipFile(good) as z:
        xml = z.read(member).decode()
    cell = re.search(rf'<c r="{coord}"[^>]*?(/>|>.*?</c>)', xml).group(0)
    saved = f'<c r="{coord}" t="n"><f aca="false">TRUE()</f><v>1</v></c>'
    path = rezip(good, tmp_path / "true.xlsx", {member: xml.replace(cell, saved).encode()})
    refused_by_report([path], tmp_path / "out", path, f"{ws.title}!{coord}", "TRUE/FALSE")


@pytest.mark.parametrize(
    ("change", "drivers"),
    [
        ({"usd_per_kwh": 1e300}, ["usd_per_kwh"]),
        ({"usd_per_accelerator_hour": 1e305}, ["usd_per_accelerator_hour"]),
        ({"watts_per_accelerator": 1e300, "usd_per_kwh": 1e300}, ["watts_per_accelerator"]),
        ({"total_params": 1e300, "active_params": 1e300}, ["total_params"]),
    ],
)
def test_inputs_that_drive_a_figure_out_of_range(template, tmp_path, change, drivers):
    path = fill(template, tmp_path / "big.xlsx", [PLAN_A, {**PLAN_B, **change}])
    cells = [where(path, n, 1) for n in change]
    err = refused_by_report([path], tmp_path / "out", path, *cells, *drivers, "out of range")
    assert "inf" not in err.lower().replace("infinite", "")
    assert "1.797" not in err


def test_a_run_that_would_end_after_the_year_9999(template, tmp_path):
    path = fill(
        template, tmp_path / "long.xlsx", [{**PLAN_B, "accelerators": 1, "training_tokens": 1e21}]
    )
    refused_by_report(
        [path], tmp_path / "out", path, where(path, "start_date", 0), "after the year 9999"
    )


def test_a_part_of_random_bytes(good, tmp_path):
    rng = random.Random(8)
    member = "xl/workbook.xml"
    path = rezip(good, tmp_path / "noise.xlsx", {member: rng.randbytes(3000)})
    refused_by_report([path], tmp_path / "out", path, member)


@pytest.mark.parametrize("how", ["hard link", "symbolic link", "identical copy", "dotted path"])
def test_the_same_planner_twice(good, tmp_path, how):
    twin = tmp_path / "twin.xlsx"
    if how == "hard link":
        os.link(good, twin)
    elif how == "symbolic link":
        twin.symlink_to(good)
    elif how == "identical copy":
        twin.write_bytes(good.read_bytes())
    else:
        twin = Path(str(good.parent / "." / good.name))
    refused_by_report([good, twin], tmp_path / "out", good, twin)


def test_csv_at_an_existing_file(good, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "csv").write_text("keep")
    before = {str(good): digest(good)}
    out_before = tree(out)
    rc, stdout, err = run_report(good, "--csv", out / "csv")
    assert_refused(rc, err, [good], before, out, out_before, "--csv", out / "csv", "not a folder")


def test_csv_under_a_read_only_parent(good, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    locked = out / "locked"
    locked.mkdir()
    if can_make_immutable(tmp_path / "probe"):
        immutable(locked)
    elif os.geteuid() != 0:
        locked.chmod(0o555)
    else:
        pytest.skip("no way to make a read-only folder here")
    try:
        before = {str(good): digest(good)}
        out_before = tree(out)
        rc, stdout, err = run_report(good, "--csv", locked / "csv")
        assert_refused(rc, err, [good], before, out, out_before, "--csv", locked / "csv")
    finally:
        if can_make_immutable(tmp_path / "probe"):
            immutable(locked, on=False)
        locked.chmod(0o755)


# ---------------------------------------------------------------------------------------------
# Properties: random bytes in parts, random values in a real planner
# ---------------------------------------------------------------------------------------------


def _in_process(args):
    """Run the report in this process: (exit code, stdout, stderr, warnings raised)."""
    return run_cli(["report", *args])


def _check_run(path, out_dir, before):
    rc, out, err, caught = _in_process([path, "--out", out_dir / "h.xlsx", "--csv", out_dir / "c"])
    assert "Traceback" not in err and "internal error" not in err, err
    assert not caught, [str(w.message) for w in caught]
    assert digest(path) == before
    if rc == 2:
        lines = err.strip().splitlines()
        assert lines and all(line.startswith(PROG) for line in lines), err
        assert str(path) in (lines[0] if len(lines) == 1 else lines[1]), err  # summary first
        assert list(out_dir.iterdir()) == [], list(out_dir.iterdir())
        return rc
    assert rc == 0, err
    for f in (out_dir / "c").glob("*.csv"):
        with open(f, encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    try:
                        value = float(cell)
                    except ValueError:
                        continue
                    assert math.isfinite(value) or cell.lower() == "nan", (f.name, cell)
                    assert abs(value) <= 1e300 or math.isnan(value), (f.name, cell)
    wb = openpyxl.load_workbook(out_dir / "h.xlsx")
    for ws in wb:
        for row in ws.iter_rows(values_only=True):
            for v in row:
                if isinstance(v, float):
                    assert math.isfinite(v) and abs(v) <= 1e300, (ws.title, v)
    return rc


_FUZZ = settings(
    max_examples=int(os.environ.get("COMPUTE_LAB_FUZZ_EXAMPLES", "30")),  # more: a longer hunt
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a slow run: no shrinking
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_FUZZ
@given(data=st.data())
def test_random_bytes_in_a_part(good, tmp_path_factory, data):
    with zipfile.ZipFile(good) as z:
        members = sorted(z.namelist())
        member = data.draw(st.sampled_from(members), label="part")
        original = z.read(member)
    how = data.draw(st.sampled_from(["replace", "overwrite", "truncate"]), label="how")
    if how == "replace":
        new = data.draw(st.binary(max_size=400), label="bytes")
    elif how == "overwrite":
        at = data.draw(st.integers(0, max(0, len(original) - 1)), label="at")
        noise = data.draw(st.binary(min_size=1, max_size=24), label="noise")
        new = original[:at] + noise + original[at + len(noise) :]
    else:
        new = original[: data.draw(st.integers(0, len(original)), label="keep")]
    folder = tmp_path_factory.mktemp("bytes")
    path = rezip(good, folder / "fuzzed.xlsx", {member: new})
    out_dir = folder / "out"
    out_dir.mkdir()
    _check_run(path, out_dir, digest(path))


_NUMBERS = st.one_of(
    st.floats(allow_nan=False),
    st.floats(min_value=-1e3, max_value=1e3),
    st.sampled_from([0, -1, 1e300, 1e305, 1.7976931348623157e308, 5e-324, 1e-320, 2**63]),
    st.integers(min_value=-(10**20), max_value=10**20),
)
_VALUES = st.one_of(
    _NUMBERS,
    st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=20),  # what a cell holds
    st.booleans(),
    st.dates(),
    st.none(),
)


@_FUZZ
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(INPUT_NAMES), st.integers(0, 1), _VALUES), min_size=1, max_size=4
    )
)
def test_random_values_in_a_real_planner(template, tmp_path_factory, changes):
    folder = tmp_path_factory.mktemp("values")
    path = fill(template, folder / "typed.xlsx", [PLAN_A, PLAN_B])
    wb = openpyxl.load_workbook(path)
    for name, k, value in changes:
        set_cell(wb, name, k, value)
    wb.save(path)
    out_dir = folder / "out"
    out_dir.mkdir()
    _check_run(path, out_dir, digest(path))
