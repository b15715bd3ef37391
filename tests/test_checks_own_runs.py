"""The planner's Checks flag bad "Our runs" rows (issue 17): a row with only some of its columns,
a figure that is not a number > 0 (text such as 70B is one), an accelerator the catalogue does
not name, a repeated run name. Each is an ERROR naming the count and the first row, after
LibreOffice and Gnumeric, and ``compute-lab report`` refuses the same planner with one line
naming the sheet, row and column (the rules of udfs.own_runs, written once)."""

from __future__ import annotations

import openpyxl
import pytest
from helpers import is_true, row_values, run_cli, type_plan
from helpers_planner import STATE_VARIANTS

from udfs.own_runs import ADVICE
from workbook_templates.planner import build
from workbook_templates.planner import own_runs as sheet
from workbook_templates.planner.checks import OWN_RUNS_LABELS
from workbook_templates.recalc import recalculate, recalculate_gnumeric

#: Scenario columns typed so that the master check reads OK without own runs.
PLANS = STATE_VARIANTS["state-ok.xlsx"][0]
#: Two good rows, typed as a user would: sizes as text (read as the Inputs sheet reads them), a
#: blank organisation, an accelerator name in other capitals, a count typed as text.
GOOD = [
    ["Ours 7B", "Acme", "7B", "7B", "2T", "H100 SXM", 512, 120000],
    ["Ours 13B", None, 13e9, "13B", 2e12, "h100 sxm", "512", "250000"],
]
ROW = sheet.FIRST_ROW + len(GOOD)  # the sheet row of the bad row typed after them
_RUN = ["Bad", "Acme", 7e9, 7e9, 2e12, "H100 SXM", 512, 120000]


def _with(**changes):
    row = list(_RUN)
    for column, value in changes.items():
        row[[c for c, *_ in sheet.INPUT_COLUMNS].index(column)] = value
    return row


#: Variant -> (the bad row, the check's ADVICE key, the column the report names, its words).
BAD = {
    "blank-total": (_with(total_params=None), "complete", "D (total_params)", "is blank"),
    "blank-name": (_with(name="  "), "complete", "A (name)", "is blank"),
    "text-figure": (_with(tokens="lots"), "figures", "E (tokens)", "must be a number"),
    "zero-figure": (_with(accelerators=0), "figures", "G (accelerators)", "greater than 0"),
    "negative-hours": (
        _with(accelerator_hours=-5), "figures", "H (accelerator_hours)", "greater than 0"
    ),
    "active-above-total": (
        _with(active_params="9B"), "figures", "C (active_params)", "at most total_params"
    ),
    "too-few-hours": (
        _with(accelerator_hours=10), "figures", "H (accelerator_hours)", "is too few"
    ),
    # text past the largest double: LibreOffice reads 1.8E308 (and counted the row), the
    # engine refuses it as not finite; the count is bounded (MAX_COUNT) on both faces
    "text-past-double": (
        _with(accelerators="1e999"), "figures", "G (accelerators)", "must be a finite number"
    ),
    # finite but past any run (MAX_RUN_FIGURE): 1e300 hours counted on both faces and pulled
    # the default MFU to its floor; a text past the double in a size refused on both faces
    "huge-hours": (_with(accelerator_hours=1e300), "figures", "H (accelerator_hours)",
                   "must be at most 1e15 (got '1e+300')"),
    "huge-size-text": (_with(total_params="9e999B"), "figures", "D (total_params)",
                       "must be a finite number"),
    # in bounds but not a run: an implied MFU below 0.1% (MIN_IMPLIED_MFU), with FLOPs that
    # round to 0 (Gnumeric kept a denormal MFU and counted it), or one that overflows
    # (LibreOffice: #NUM!, which made every plan #NUM!)
    "tiny-figures": (_with(active_params=3e-308, total_params=3e-308, tokens=3e-308,
                           accelerators=3e-308, accelerator_hours=3e-308), "figures",
                     "H (accelerator_hours)", "below 0.1%"),
    "overflowing-mfu": (_with(active_params=1e15, total_params=1e15, tokens=1e15,
                              accelerators=1, accelerator_hours=1e-300), "figures",
                        "H (accelerator_hours)", "is too few"),
    "unknown-accelerator": (
        _with(accelerator="H900"), "accelerator", "F (accelerator)", "unknown accelerator 'H900'"
    ),
    # the file takes an alias; a row of the sheet MATCHes the catalogue's names (case aside)
    "alias": (_with(accelerator="H100"), "accelerator", "F (accelerator)", "unknown accelerator"),
    "duplicate-name": (
        _with(name=" ours  7b "), "unique", "A (name)", "duplicate name 'ours  7b' (also row 7)"
    ),
    # one organisation's runs (a blank one and other capitals are that organisation)
    "two-organisations": (
        _with(organisation="Other"), "organisation", "B (organisation)",
        "organisation 'Other' differs from 'Acme' (row 7)"
    ),
}  # fmt: skip
#: The variants Gnumeric recalculates too: one per check, and the good planner.
GNUMERIC = ("good", "blank-total", "text-figure", "text-past-double", "huge-hours",
            "huge-size-text", "tiny-figures", "overflowing-mfu", "unknown-accelerator",
            "duplicate-name", "two-organisations")  # fmt: skip


def _planner(path, rows):
    wb = build()
    for k, plan in PLANS.items():
        type_plan(wb, k, plan)
    ws = wb[sheet.TITLE]
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            ws.cell(sheet.FIRST_ROW + i, 1 + j).value = value
    wb.save(path)
    return path


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """Variant name -> (planner as written, recalculated by LibreOffice)."""
    folder = tmp_path_factory.mktemp("own-checks")
    paths = {"good": _planner(folder / "good.xlsx", GOOD)}
    paths["two-bad"] = _planner(
        folder / "two-bad.xlsx", [*GOOD, _with(tokens=0), _with(name="Other", tokens="x")]
    )
    for name, (row, *_) in BAD.items():
        paths[name] = _planner(folder / f"{name}.xlsx", [*GOOD, row])
    done = recalculate(list(paths.values()), folder / "lo")
    return {name: (paths[name], out) for name, out in zip(paths, done, strict=True)}


@pytest.fixture(scope="module")
def gnumeric_variants(variants, tmp_path_factory):
    folder = tmp_path_factory.mktemp("own-checks-gnumeric")
    done = recalculate_gnumeric([variants[n][0] for n in GNUMERIC], folder)
    return dict(zip(GNUMERIC, done, strict=True))


def _checks(path):
    """{ADVICE key: (passes, the rows text, label)} of the Checks sheet, and the master
    status and cause."""
    wb = openpyxl.load_workbook(path, data_only=True)
    ws = wb["Checks"]
    labels = {label: key for key, label in OWN_RUNS_LABELS.items()}
    got = {}
    for r in range(1, ws.max_row + 1):
        key = labels.get(ws.cell(r, 1).value)
        if key:
            text = ws.cell(r, 4).value or ""
            got[key] = (is_true(ws.cell(r, 3).value), text, OWN_RUNS_LABELS[key])
    assert set(got) == set(ADVICE), got
    return got, row_values(wb, "master_status")[0], row_values(wb, "master_cause")[0]


def _assert_good(path):
    checks, status, cause = _checks(path)
    assert all(ok for ok, *_ in checks.values()), checks
    assert status == "OK", cause
    wb = openpyxl.load_workbook(path, data_only=True)
    # both rows count: text figures read as numbers, the name in other capitals matched
    assert [isinstance(v, float) for v in row_values(wb, "own_runs_residual")[:3]] == [
        True, True, False,
    ]  # fmt: skip


def _assert_flagged(path, key, rows=1, first=ROW):
    checks, status, cause = _checks(path)
    for other, (ok, text, _) in checks.items():
        assert ok == (other != key), (other, checks)
        assert (text == "") == ok
    ok, text, label = checks[key]
    word = "row fails" if rows == 1 else "rows fail"
    assert text == f"{rows} {word}; the first is Our runs row {first}: {ADVICE[key]}"
    assert status == "ERROR"
    # the cause names the check and the rows; the advice stays on the check's row (one line)
    assert cause == f"{label} ({text.split(':')[0]})"
    wb = openpyxl.load_workbook(path, data_only=True)
    # the bad row counts for nothing in the default MFU: no intercept, no residual
    assert row_values(wb, "own_runs_intercept")[first - sheet.FIRST_ROW] in (None, "")


@pytest.mark.libreoffice
def test_a_good_block_passes_every_check_and_the_report_takes_it(variants, tmp_path):
    _, done = variants["good"]
    _assert_good(done)
    code, _, err, _ = run_cli(["report", done, "--csv", tmp_path / "csv"])
    assert code == 0, err
    assert "saved" not in err  # the engine read the rows as the formulas did (70B included)


@pytest.mark.libreoffice
def test_a_block_saved_by_libreoffice_recalculates_the_same(variants, tmp_path):
    """The row checks' bounds survive LibreOffice's save (it writes 15 digits: the smallest
    normal double written so would read back as a denormal, Err:502, on the next opening)."""
    for name in ("good", "text-past-double"):
        _, done = variants[name]
        (again,) = recalculate([done], tmp_path / name)
        if name == "good":
            _assert_good(again)
        else:
            _assert_flagged(again, "figures")


@pytest.mark.libreoffice
@pytest.mark.parametrize("name", sorted(BAD))
def test_each_bad_row_is_an_error_on_checks_and_refused_by_the_report(variants, name, tmp_path):
    row, key, column, words = BAD[name]
    _, done = variants[name]
    _assert_flagged(done, key)
    out = tmp_path / "csv"
    code, _, err, _ = run_cli(["report", done, "--csv", out])
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert f"sheet '{sheet.TITLE}': row {ROW}, column {column}: " in err and words in err, err
    assert ADVICE[key] in err, err  # the report says what to do, as the Checks row does
    assert not out.exists()  # nothing written


@pytest.mark.libreoffice
def test_the_check_counts_the_bad_rows_and_names_the_first(variants):
    _, done = variants["two-bad"]
    _assert_flagged(done, "figures", rows=2, first=ROW)


@pytest.mark.gnumeric
@pytest.mark.parametrize("name", GNUMERIC)
def test_gnumeric_flags_the_same_rows(gnumeric_variants, name):
    done = gnumeric_variants[name]
    if name == "good":
        _assert_good(done)
    else:
        _assert_flagged(done, BAD[name][1])


#: Cell values a row is drawn from: good and bad figures, names and accelerators as typed.
_NAMES = ["Run 0", "run 0", " RUN  1 ", "Run B", "  ", None, "R*", "Run ?"]
_FIGURES = [7e9, "7B", " 2T ", "1.5e12", "13b", 512, "512", 0, -5, "lots", "7,000", "1e999",
            None, "0.5k", 250000, "2e308", "9e999B", 1e300, "1e-320", 2e15]  # fmt: skip
_ACCELERATORS = ["H100 SXM", "h100 sxm", " A100 SXM 80GB ", "H100", "H900", None, "TPU v5p"]


def _random_rows(seed, n=sheet.MAX_ROWS):
    import random

    rnd = random.Random(seed)
    rows = []
    for _ in range(n):
        if rnd.random() < 0.6:  # a plausible run of its own name, one cell perhaps changed
            hours = rnd.choice([120000, 60, "1.2e5"])  # 60: too few for 7B x 2T
            row = [f"Run {len(rows)}", "Acme", "7B", "7B", "2T", rnd.choice(_ACCELERATORS[:3]),
                   512, hours]  # fmt: skip
            if rnd.random() < 0.4:
                row[rnd.randrange(8)] = rnd.choice(_FIGURES + _NAMES + _ACCELERATORS)
        else:
            row = [rnd.choice(_NAMES), rnd.choice(["Acme", None])]
            row += [rnd.choice(_FIGURES) for _ in range(3)]
            row += [rnd.choice(_ACCELERATORS), rnd.choice(_FIGURES), rnd.choice(_FIGURES)]
        rows.append(row)
    return rows


def _engine_accepts(rows, k):
    """Whether udfs.own_runs takes row k (the sheet's rules: earlier typed names count)."""
    from udfs import own_runs
    from udfs.validation import CommandError

    columns = [c for c, *_ in sheet.INPUT_COLUMNS]
    seen = {own_runs.name_key(r[0]): 1 for r in rows[:k] if own_runs.name_key(r[0])}
    typed = [own_runs.name_key(r[1]) for r in rows[:k] if own_runs.name_key(r[1])]
    organisations = {typed[0]: (typed[0], 1)} if typed else {}
    raw = {c: "" if v is None else str(v) for c, v in zip(columns, rows[k], strict=True)}
    try:
        own = own_runs._row("sheet", k, raw, own_runs._cell_number, seen, exact=True,
                            organisations=organisations)  # fmt: skip
        own_runs._implied(own_runs.pd.DataFrame([own]))
    except CommandError:
        return False
    return True


@pytest.mark.libreoffice
@pytest.mark.gnumeric
@pytest.mark.parametrize("seed", [17, 21])  # 21: 1e999 accelerators, once counted by LibreOffice
def test_the_sheet_and_the_engine_take_the_same_rows(tmp_path, seed):
    """Thirty rows drawn from good and bad cells: a row counts in the workbook (it gets its
    generation's intercept) exactly when the engine's rules take it, after LibreOffice and
    Gnumeric; the Checks count the rows that fail."""
    rows = _random_rows(seed)
    rows = [r for r in rows if any(v is not None and str(v).strip() for v in r)]
    path = _planner(tmp_path / "random.xlsx", rows)
    want = [_engine_accepts(rows, k) for k in range(len(rows))]
    assert 5 <= sum(want) <= len(rows) - 5  # both kinds, plenty of each
    (lo,) = recalculate([path], tmp_path / "lo")
    (gn,) = recalculate_gnumeric([path], tmp_path / "gn")
    for done in (lo, gn):
        wb = openpyxl.load_workbook(done, data_only=True)
        got = [isinstance(v, float) for v in row_values(wb, "own_runs_intercept")[: len(rows)]]
        assert got == want, [(k + sheet.FIRST_ROW, rows[k]) for k in range(len(rows))
                             if got[k] != want[k]]  # fmt: skip
        checks, status, _ = _checks(done)
        assert status == "ERROR" and not all(ok for ok, *_ in checks.values())
