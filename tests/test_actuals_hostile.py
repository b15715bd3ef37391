"""Actuals files written to break the readers: each bound a file can push on (columns, line
length, run-months, a charge period's length, years), ambiguous JSON and columns, the same
file twice. Each is refused in one line naming the file, the row and the column, before the
work it would cost; never a traceback, never a silently wrong number."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from test_handoff_budget import run

from workbook_templates import actuals as act
from workbook_templates import actuals_focus

FOCUS_HEADER = ("BillingCurrency,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,"
                "EffectiveCost,PricingQuantity,PricingUnit,Tags")  # fmt: skip
PLAIN_HEADER = "run_code,month,accelerator_hours,cost_usd,tokens_processed"
MARCH = dt.date(2027, 3, 1)


def _tags(**tags):
    return '"' + json.dumps(tags).replace('"', '""') + '"'


def _focus_row(start="2027-03-01T00:00:00Z", end="2027-03-02T00:00:00Z", cost="100",
               tags=None, category="Usage"):  # fmt: skip
    tags = _tags(**{"compute-lab-run": "X1"}) if tags is None else tags
    return f"USD,{start},{end},{category},{cost},{cost},1,Hours,{tags}"


def _write(path, header, *rows):
    path.write_text("\r\n".join([header, *rows]) + "\r\n", encoding="utf-8", newline="")
    return path


def _refused(paths):
    with pytest.raises(act.ActualsError) as err:
        act.read_actuals(paths)
    return err.value.lines


def test_a_charge_period_ending_in_year_9999_is_one_line_not_an_internal_error(
    example_plan, tmp_path, capsys
):
    bad = _write(tmp_path / "f.csv", FOCUS_HEADER,
                 _focus_row("9999-12-01T00:00:00Z", "9999-12-02T00:00:00Z"))  # fmt: skip
    assert run(example_plan, "--actuals", bad, "--out", tmp_path / "h.xlsx") == 2
    err = capsys.readouterr().err
    assert "row 2, column ChargePeriodStart: '9999-12-01T00:00:00Z' is not a UTC time" in err
    assert "internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "h.xlsx").exists()


def test_a_plain_month_outside_the_years_is_refused(tmp_path):
    bad = _write(tmp_path / "p.csv", PLAIN_HEADER, "U1,9999-12,1,1,", "U2,0001-01,1,1,")
    lines = _refused([bad])
    assert lines[0].endswith(
        "row 2, column month: '9999-12' is not a month (YYYY-MM, 1970 to 2199)"
    )
    assert "row 3, column month: '0001-01' is not a month" in lines[1]


def test_a_row_spanning_centuries_is_refused_before_it_is_split(tmp_path):
    """20 rows of a 0001-9999 charge period (120,000 months each) are refused before any is
    split into months (splitting them would take minutes and hundreds of MB)."""
    bad = _write(tmp_path / "f.csv", FOCUS_HEADER,
                 _focus_row("1970-01-01T00:00:00Z", "2199-11-01T00:00:00Z"))  # fmt: skip
    (line,) = _refused([bad])
    assert (
        "row 2, column ChargePeriodEnd: the charge period is 83,945 days, over the 1,830 days"
        in line
    )
    ok = _write(tmp_path / "ok.csv", FOCUS_HEADER,
                _focus_row("2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", cost="365"))  # fmt: skip
    (parsed,) = act.read_actuals([ok])
    assert len(parsed.entries) == 12 and sum(e.cost for e in parsed.entries) == 365


def test_rows_split_by_month_count_toward_the_row_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(actuals_focus, "MAX_ACTUALS_ROWS", 30)
    rows = [_focus_row("2027-01-01T00:00:00Z", f"2028-01-01T00:00:0{i}Z") for i in range(3)]
    (line,) = _refused([_write(tmp_path / "f.csv", FOCUS_HEADER, *rows)])
    assert line.startswith(str(tmp_path / "f.csv") + ": row 4: its rows split by month")


def test_untagged_spend_is_summed_exactly_without_splitting_by_month(tmp_path):
    rows = [_focus_row("2027-01-01T00:00:00Z", f"2031-12-31T00:00:0{i}Z", cost="1.37", tags="")
            for i in range(3)]  # fmt: skip
    (parsed,) = act.read_actuals([_write(tmp_path / "f.csv", FOCUS_HEADER, *rows)])
    assert parsed.unallocated == Decimal("4.11") and parsed.entries == []


def test_a_header_of_many_columns_is_refused_at_once(tmp_path):
    """A header of 100,000 columns is refused at once in one line, not checked column by
    column (quadratic) nor listed whole."""
    header = PLAIN_HEADER + "," + ",".join(f"c{i}" for i in range(100_000))
    (line,) = _refused([_write(tmp_path / "p.csv", header)])
    assert line.endswith("row 1: 100,005 columns, over the bound of 1,000 on an actuals file")
    few = _write(tmp_path / "q.csv", PLAIN_HEADER + "," + ",".join(f"c{i}" for i in range(9)))
    (line,) = _refused([few])
    assert "'c0', 'c1', 'c2', 'c3', 'c4' and 4 more" in line


def test_a_focus_column_given_twice_is_refused_not_the_last_one_taken(tmp_path):
    """Two EffectiveCost columns (100 and 5) are refused: neither is taken as the spend."""
    bad = _write(tmp_path / "f.csv", FOCUS_HEADER + ",EffectiveCost", _focus_row() + ",5")
    (line,) = _refused([bad])
    assert "row 1: the column(s) 'EffectiveCost' are given twice" in line


def test_a_tag_key_given_twice_is_refused_not_the_last_one_taken(tmp_path):
    """Two run tags in one Tags object are refused: the spend goes to neither run."""
    tags = '"{""compute-lab-run"": ""A1"", ""compute-lab-run"": ""B1""}"'
    (line,) = _refused([_write(tmp_path / "f.csv", FOCUS_HEADER, _focus_row(tags=tags))])
    assert "row 2, column Tags: has the key 'compute-lab-run' twice" in line


def test_the_same_file_twice_is_refused_so_untagged_spend_is_not_doubled(tmp_path):
    """A FOCUS file of untagged rows given twice (two names, one file) is refused, so its
    unallocated spend is never counted twice."""
    f = _write(tmp_path / "f.csv", FOCUS_HEADER, _focus_row(tags="", category="Credit"))
    (tmp_path / "g.csv").symlink_to(f)
    (line,) = _refused([f, tmp_path / "g.csv"])
    assert line.startswith(f"{tmp_path / 'g.csv'}: holds the same bytes as {f}")


def test_a_line_past_the_bound_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    """A 100 MB field (and one with a character beyond the BMP) is refused without the file,
    its text or the line being held whole."""
    monkeypatch.setattr(act, "MAX_LINE_CHARS", 1000)
    bad = _write(
        tmp_path / "p.csv", PLAIN_HEADER, "U1,2027-03,1,1,", 'U2,2027-03,1,1,"' + "x" * 5000
    )
    (line,) = _refused([bad])
    assert line.endswith("p.csv: row 3: a line is over 1,000 characters")


def test_a_field_past_the_csv_modules_limit_names_the_documented_bound(tmp_path):
    bad = _write(tmp_path / "p.csv", PLAIN_HEADER, 'U1,2027-03,1,1,"' + "x" * 200_000 + '"')
    (line,) = _refused([bad])
    assert line.endswith("row 2: a field is over 8,192 characters")


def test_bad_utf8_names_the_byte_from_the_start_of_the_file(tmp_path):
    path = tmp_path / "p.csv"
    path.write_bytes(b"\xef\xbb\xbf" + PLAIN_HEADER.encode() + b"\nU1,2027-03,1,1,\xff\n")
    (line,) = _refused([path])
    assert line.endswith(f"is not UTF-8 text (byte {3 + len(PLAIN_HEADER) + 1 + 15})")


def test_more_run_months_than_the_bound_stop_the_read(tmp_path, monkeypatch):
    """2,000,000 unplanned run codes (one row each) stop the read at the bound on run months,
    before memory grows or the Variance sheet's table passes Excel's 1,048,576 rows."""
    monkeypatch.setattr(act, "MAX_RUN_MONTHS", 5)
    plain = _write(tmp_path / "p.csv", PLAIN_HEADER, *(f"U{i},2027-03,1,1," for i in range(4)))
    focus = _write(
        tmp_path / "f.csv",
        FOCUS_HEADER,
        *(_focus_row(tags=_tags(**{"compute-lab-run": f"V{i}"})) for i in range(4)),
    )
    (line,) = _refused([plain, focus])
    assert line.startswith(f"{focus}: gives over 5 (run code, month) pairs")
    (line,) = _refused([_write(tmp_path / "q.csv", PLAIN_HEADER,
                               *(f"U{i},2027-03,1,1," for i in range(9)))])  # fmt: skip
    assert "gives over 5 (run code, month) pairs" in line


def test_untagged_spend_alone_is_said_and_has_a_month_in_variance_csv(
    example_plan, tmp_path, capsys
):
    """Untagged spend alone is said on the line, and variance.csv's unallocated row has its
    month."""
    zero = _focus_row("2027-04-03T00:00:00Z", "2027-04-04T00:00:00Z", cost="0", tags="")
    f = _write(tmp_path / "f.csv", FOCUS_HEADER, _focus_row(cost="-5", tags="", category="Credit"),
               zero)  # fmt: skip
    out = tmp_path / "csv"
    assert run(example_plan, "--actuals", f, "--csv", out) == 0
    said = (
        "Actuals: no budget run's month of spend in the files given; unallocated $-5 (no run tag)."
    )
    assert said in capsys.readouterr().out
    rows = (out / "variance.csv").read_text(encoding="utf-8").splitlines()
    assert [r for r in rows if "unallocated" in r][0].startswith(
        "(unallocated),2027-03-01,actual,unallocated,-5"
    )


def test_ctrl_c_is_taken_while_a_long_file_is_read(tmp_path, monkeypatch):
    """Ctrl-C during a 1,000,000-row FOCUS export is taken while the file is read, not once the
    whole file has been."""
    from workbook_templates import files

    rows = [f"U{i},2027-03,1,1," for i in range(5000)]
    path = _write(tmp_path / "p.csv", PLAIN_HEADER, *rows)
    monkeypatch.setattr(files, "_INTERRUPTS", {"count": 0, "written": False, "raised": False})
    seen = []
    real = act._plain_row

    def count(*args):
        seen.append(1)
        if len(seen) == 100:
            files._INTERRUPTS["count"] = 1  # Ctrl-C pressed at row 101
        return real(*args)

    monkeypatch.setattr(act, "_plain_row", count)
    with pytest.raises(KeyboardInterrupt):
        act.read_actuals([path])
    assert len(seen) < 4096


def test_a_correction_may_take_back_hours_but_never_below_zero(tmp_path):
    """A provider's Correction row with a negative quantity is read (the user cannot edit the
    export); a run's month whose hours come to less than 0 is refused."""
    header = FOCUS_HEADER + ",ChargeClass"
    usage = _focus_row(cost="100") + ","
    back = _focus_row("2027-03-05T00:00:00Z", "2027-03-06T00:00:00Z", cost="-40")
    good = _write(tmp_path / "f.csv", header, usage, back.replace(",1,Hours,", ",-0.4,Hours,") +
                  ",Correction")  # fmt: skip
    (parsed,) = act.read_actuals([good])
    (e,) = parsed.entries
    assert e.cost == 60 and e.hours == pytest.approx(0.6)
    too_much = _write(tmp_path / "g.csv", header, usage,
                      back.replace(",1,Hours,", ",-3,Hours,") + ",Correction")  # fmt: skip
    with pytest.raises(act.ActualsError) as err:  # the hours of all the files together
        act.join_actuals(act.read_actuals([too_much]), {"X1": (MARCH, MARCH)})
    (line,) = err.value.lines
    assert "row 2, column PricingQuantity: run X1's hours in 2027-03 come to -2, below 0" in line
    plain = _write(tmp_path / "h.csv", header, usage, back.replace(",1,Hours,", ",-3,Hours,") + ",")
    (line,) = _refused([plain])
    assert "row 3, column PricingQuantity: -3 is negative" in line


def test_the_files_together_are_bounded_before_the_last_is_parsed(tmp_path, monkeypatch):
    """100 files of 2,000,000 rows each are refused once the lines read pass the bound on all
    the files together, before the rest are parsed."""
    monkeypatch.setattr(act, "MAX_ACTUALS_TOTAL_ROWS", 6)
    a = _write(tmp_path / "a.csv", PLAIN_HEADER, "U1,2027-03,1,1,", "U2,2027-03,1,1,")
    b = _write(tmp_path / "b.csv", PLAIN_HEADER, "U3,2027-03,1,1,", "U4,2027-03,1,1,")
    assert len(act.read_actuals([a, b])) == 2
    c = _write(tmp_path / "c.csv", PLAIN_HEADER, "U5,2027-03,1,1,")
    (line,) = _refused([a, b, c])
    want = "brings the actuals files to about 8 lines, over the 6 all of them may hold together"
    assert line == f"{c}: {want}; not read"


def test_long_tags_are_not_kept_parsed_between_rows(tmp_path):
    """6,000 rows of distinct 8,000-character Tags are read without keeping each parsed object
    for the rows that might repeat it."""
    actuals_focus._json_cached.cache_clear()
    rows = []
    for i in range(3):
        tags = {"compute-lab-run": "X1", **{f"k{i}-{j}": 0 for j in range(200)}}
        rows.append(_focus_row(f"2027-03-0{i + 1}T00:00:00Z", f"2027-03-0{i + 2}T00:00:00Z",
                               tags=_tags(**tags)))  # fmt: skip
    rows.append(_focus_row("2027-03-05T00:00:00Z", "2027-03-06T00:00:00Z"))
    (parsed,) = act.read_actuals([_write(tmp_path / "f.csv", FOCUS_HEADER, *rows)])
    assert parsed.entries[0].cost == 400
    assert actuals_focus._json_cached.cache_info().currsize == 1  # the short one only


def test_spend_past_whole_cents_a_float_holds_is_refused(example_plan, tmp_path, capsys):
    """FOCUS rows of $1e15 each, whose variance parts a float could not add up to the cent,
    are refused past the bound on actual spend."""
    many = [_focus_row(end=f"2027-03-02T00:00:{i:02d}Z", cost="1e15") for i in range(20)]
    bad = _write(tmp_path / "f.csv", FOCUS_HEADER, *many)
    assert run(example_plan, "--actuals", bad, "--csv", tmp_path / "csv") == 2
    err = capsys.readouterr().err
    assert (
        "f.csv: the spend comes to $2.00e+16 (each run's month and the unallocated spend, in "
        "magnitude), over the $1e+13 whose whole cents the hand-off writes exactly" in err
    )
    assert not (tmp_path / "csv").exists()


def test_two_different_rows_are_never_taken_for_duplicates(tmp_path):
    """Two rows whose fields differ only in where a U+001F falls are two rows, never refused as
    the same row given twice."""
    one = _focus_row(tags="").rsplit(",", 1)[0] + ",\x1f"
    two = _focus_row(tags="").rsplit(",", 2)[0] + ",Hours\x1f,"
    (parsed,) = act.read_actuals([_write(tmp_path / "f.csv", FOCUS_HEADER, one, two)])
    assert parsed.unallocated == 200


def test_a_run_tag_under_a_provider_prefix_names_the_run(tmp_path):
    """A tag ``user:compute-lab-run`` (a provider's or a second tag scheme's prefix) names the
    run: its spend is the run's, not unallocated."""
    prefixed = _tags(**{"x/compute-lab-run": "X1"})
    rows = [_focus_row(tags=_tags(**{"user:compute-lab-run": "X1"})),
            _focus_row(end="2027-03-03T00:00:00Z", tags=prefixed)]  # fmt: skip
    (parsed,) = act.read_actuals([_write(tmp_path / "f.csv", FOCUS_HEADER, *rows)])
    (e,) = parsed.entries
    assert (e.run_code, e.cost, parsed.unallocated) == ("X1", 200, 0)
    two = _tags(**{"compute-lab-run": "X1", "user:compute-lab-run": "X2"})
    (line,) = _refused([_write(tmp_path / "g.csv", FOCUS_HEADER, _focus_row(tags=two))])
    assert "row 2, column Tags: the keys 'compute-lab-run', 'user:compute-lab-run' give two" in line
    same = _tags(**{"compute-lab-run": "X1", "user:compute-lab-run": "X1"})
    (parsed,) = act.read_actuals([_write(tmp_path / "h.csv", FOCUS_HEADER, _focus_row(tags=same))])
    assert parsed.entries[0].run_code == "X1"
