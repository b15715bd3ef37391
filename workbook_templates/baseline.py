"""A baseline: an earlier hand-off, read back so that this one can be compared with it.

``compute-lab report ... --baseline PATH`` names the CSV folder of an earlier hand-off (what
``report --csv DIR`` wrote) or its workbook (``report --out``, whose very hidden "Baseline
data" sheet holds the same figures: :mod:`workbook_templates.baseline_workbook`).
:func:`read_baseline` reads two files of a CSV folder:

- ``fpa.csv``: one row per run code, month and account with its P50 to the cent; summed here
  per (run code, month) and per run code, so the baseline's figures are the rounded rows the
  earlier hand-off itself summed;
- ``runs.csv``: one row per budget run, with its budget status, its inputs as used (what the
  comparison names when a plan changed) and, when the planner carries one, the approved amount
  (``approved_amount_usd``).

A baseline folder comes from outside, like a planner: every file is at most
:data:`MAX_BASELINE_FILE_BYTES`, at most :data:`MAX_BASELINE_ROWS` rows of at most
:data:`MAX_BASELINE_FIELD_CHARS` characters a field; a run code follows
:data:`~udfs.quantities.RUN_CODE_RULE`, a month is ``yyyy-mm-dd`` (the first of a month) or
blank, money is US$ with at most two decimals under :data:`MAX_BASELINE_USD`. Anything else is
a :class:`BaselineError` of one line naming the file, the row and the column.
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from udfs.quantities import PLAN_INPUTS, RUN_CODE_RULE
from udfs.validation import MAX_TEXT_CHARS, control_character, echo

from .run_codes import valid_run_code
from .sheetkit import FORMULA_LEADS, FORMULA_LOOKALIKES

__all__ = [
    "MAX_BASELINE_FILE_BYTES",
    "MAX_BASELINE_ROWS",
    "MAX_BASELINE_FIELD_CHARS",
    "MAX_BASELINE_USD",
    "BASELINE_FILES",
    "Baseline",
    "BaselineError",
    "BaselineTable",
    "baseline_of",
    "read_baseline",
]

#: Largest baseline CSV file, in bytes: fpa.csv of 4,000 runs (the report's most scenario
#: columns) over three years is about 60 MB.
MAX_BASELINE_FILE_BYTES = 128 * 1024 * 1024
#: Most data rows in one baseline CSV file (4,000 runs x 36 months x 3 accounts is 432,000).
MAX_BASELINE_ROWS = 1_000_000
#: Longest field of a baseline CSV file: the hand-off's longest text (a defaults_used list of
#: a dozen notes) is a few thousand characters.
MAX_BASELINE_FIELD_CHARS = 32_767
#: Largest amount in a baseline, in US$ (exclusive): beyond it a figure no longer holds its
#: cents in 15 significant digits, as the hand-off writes them.
MAX_BASELINE_USD = 10**13
#: The files of a hand-off's CSV folder a baseline reads.
BASELINE_FILES = ("fpa.csv", "runs.csv")

_MONEY = re.compile(r"(-?)([0-9]{1,13})(?:\.([0-9]{1,2}))?", re.ASCII)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
#: Inputs of runs.csv the comparison reads (the plan; the name, code and status are apart).
_INPUTS = tuple(q.name for q in PLAN_INPUTS if q.name not in ("scenario_name", "run_code"))


class BaselineError(Exception):
    """A baseline that cannot be read: one line naming the file, the row and the column."""


@dataclass
class Baseline:
    """An earlier hand-off, as this one compares with it.

    ``months`` maps (run code, month) to the P50 in whole cents (month None: a run without a
    start date); ``totals`` maps a run code to its P50 in cents (the sum of its rows);
    ``approved`` maps the run code of an Approved run to its approved amount in cents (the
    planner's approved amount when the baseline has one, else its P50); ``statuses`` and
    ``scenarios`` map a run code to its budget status and scenario name; ``inputs`` maps a
    run code to its inputs as the baseline's runs.csv wrote them (text).
    """

    path: Path
    version: str | None
    as_of: str | None
    months: dict = field(default_factory=dict)
    totals: dict = field(default_factory=dict)
    approved: dict = field(default_factory=dict)
    statuses: dict = field(default_factory=dict)
    scenarios: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)


def read_baseline(path):
    """The :class:`Baseline` of an earlier hand-off's CSV folder or workbook
    (:mod:`workbook_templates.baseline_workbook`); :class:`BaselineError` (one line) when it
    is missing, not a hand-off's, or breaks a bound."""
    path = Path(path)
    if path.is_file() or (path.suffix.lower() == ".xlsx" and not path.is_dir()):
        from .baseline_workbook import read_baseline_workbook

        return read_baseline_workbook(path)
    if not path.is_dir():
        raise BaselineError(f"{path}: no such folder (give the CSV folder or the workbook of a "
                            "hand-off)")  # fmt: skip
    fpa = _rows(path / "fpa.csv", ("run_code", "month", "account", "p50_usd"))
    runs = _rows(path / "runs.csv", ("run_code", "scenario", "budget_status"))
    return baseline_of(path, fpa, runs)


def baseline_of(path, fpa, runs):
    """The :class:`Baseline` of ``path`` from its two tables (:class:`BaselineTable`): ``fpa``,
    rows of run code, month and P50 (and, in a CSV folder, account), and ``runs``."""
    version, as_of = _stamp(fpa.path, fpa)
    b = Baseline(path, version, as_of)
    for n, row in runs.rows:
        code = _code(runs, n, row)
        if code in b.statuses:
            raise BaselineError(f"{runs.where(n, 'run_code')}: run code {code!r} is on two rows; "
                                "a baseline's run codes are unique")  # fmt: skip
        b.statuses[code] = _text(runs, n, row, "budget_status")
        b.scenarios[code] = _text(runs, n, row, "scenario")
        b.inputs[code] = {k: _text(runs, n, row, k) for k in _INPUTS if k in row}
    seen = {}
    for n, row in fpa.rows:
        code = _code(fpa, n, row)
        if code not in b.statuses:
            raise BaselineError(f"{fpa.where(n, 'run_code')}: run code {code!r} is not in "
                                f"{runs.name}: the two are not of one hand-off")  # fmt: skip
        month = _month(fpa, n, row)
        key = (code, month, _text(fpa, n, row, "account"))
        if key in seen:
            column = "account" if "account" in row else "month"
            raise BaselineError(f"{fpa.where(n, column)}: the same run code, month and "
                                f"account as row {seen[key]}")  # fmt: skip
        seen[key] = n
        cents = _cents(fpa, n, row, "p50_usd")
        b.months[(code, month)] = b.months.get((code, month), 0) + cents
        b.totals[code] = b.totals.get(code, 0) + cents
    for n, row in runs.rows:
        code = row["run_code"].strip()
        b.totals.setdefault(code, 0)
        if b.statuses[code] == "Approved":
            typed = row.get("approved_amount_usd")
            b.approved[code] = (_cents(runs, n, row, "approved_amount_usd")
                                if typed not in (None, "") else b.totals[code])  # fmt: skip
    return b


@dataclass
class BaselineTable:
    """One table of a baseline: ``path`` names where it is (a CSV file, or a workbook's sheet
    and table) in every refusal, ``name`` what it is called."""

    path: object
    header: list
    rows: list  # (row number as a spreadsheet shows it, {column: text})
    name: str = "runs.csv"

    def where(self, n, column):
        return f"{self.path}: row {n}, column {column}"


def _rows(path, needed):
    """The rows of one baseline CSV file, each bound checked; BaselineError otherwise."""
    try:
        st = os.stat(path)
    except OSError:
        raise BaselineError(f"{path}: missing; a baseline is the CSV folder of a hand-off "
                            f"({', '.join(BASELINE_FILES)})") from None  # fmt: skip
    if not stat.S_ISREG(st.st_mode):
        raise BaselineError(f"{path}: not a regular file")
    if st.st_size > MAX_BASELINE_FILE_BYTES:
        raise BaselineError(f"{path}: {st.st_size:,} bytes, over the limit of "
                            f"{MAX_BASELINE_FILE_BYTES:,} for a baseline file")  # fmt: skip
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BASELINE_FILE_BYTES + 1)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_BASELINE_FILE_BYTES:
        raise BaselineError(f"{path}: over the limit of {MAX_BASELINE_FILE_BYTES:,} bytes "
                            "for a baseline file")  # fmt: skip
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BaselineError(f"{path}: line {line}: not UTF-8 text") from None
    reader = csv.reader(text.splitlines())
    rows, header = [], None
    try:
        for i, fields in enumerate(reader, start=1):
            if i - 1 > MAX_BASELINE_ROWS:
                raise BaselineError(f"{path}: over {MAX_BASELINE_ROWS:,} rows, the limit for "
                                    "a baseline file")  # fmt: skip
            long = next((f for f in fields if len(f) > MAX_BASELINE_FIELD_CHARS), None)
            if long is not None:
                raise BaselineError(f"{path}: row {i}: a field of {len(long):,} characters, "
                                    f"over the limit of {MAX_BASELINE_FIELD_CHARS:,}")  # fmt: skip
            if header is None:
                header = [h.strip() for h in fields]
                missing = [c for c in needed if c not in header]
                if missing:
                    raise BaselineError(
                        f"{path}: row 1: no column {', '.join(missing)}: not a hand-off's "
                        f"{path.name} made by this version of compute-lab report"
                    )
                continue
            if not any(f.strip() for f in fields):
                continue
            if len(fields) != len(header):
                raise BaselineError(f"{path}: row {i}: {len(fields)} fields, the header has "
                                    f"{len(header)}")  # fmt: skip
            rows.append((i, dict(zip(header, fields, strict=True))))
    except csv.Error as exc:
        raise BaselineError(f"{path}: row {reader.line_num}: not CSV ({exc})") from None
    if header is None:
        raise BaselineError(f"{path}: empty; not a hand-off's {path.name}")
    return BaselineTable(path, header, rows, path.name)


def _text(f, n, row, column):
    value = row.get(column, "").strip()
    bad = control_character(value)
    if bad:
        raise BaselineError(f"{f.where(n, column)}: holds the control character {bad}")
    if value[:1] == "'" and value[1:].startswith(FORMULA_LEADS + FORMULA_LOOKALIKES):
        value = value[1:]  # the hand-off's guard against a formula, taken off
    return value


def _code(f, n, row):
    code = _text(f, n, row, "run_code")
    if not valid_run_code(code):
        raise BaselineError(f"{f.where(n, 'run_code')}: {echo(code)} is not a run code "
                            f"({RUN_CODE_RULE})")  # fmt: skip
    return code


def _month(f, n, row):
    text = _text(f, n, row, "month")
    if not text:
        return None
    day = None
    if _DAY.fullmatch(text):
        try:
            day = _dt.date.fromisoformat(text)
        except ValueError:
            day = None
    if day is None or day.day != 1:
        raise BaselineError(f"{f.where(n, 'month')}: {echo(text)} is not the first day of a "
                            "month as yyyy-mm-dd, nor blank")  # fmt: skip
    return day


def _cents(f, n, row, column):
    text = _text(f, n, row, column)
    m = _MONEY.fullmatch(text)
    if m is None:
        raise BaselineError(
            f"{f.where(n, column)}: {echo(text)} is not US$ to the cent (digits, at most two "
            f"decimals, under {MAX_BASELINE_USD:,})"
        )
    sign, whole, frac = m.groups()
    cents = int(whole) * 100 + int((frac or "0").ljust(2, "0"))
    return -cents if sign else cents


def _stamp(path, f):
    """(version, as-of date) of the hand-off: its rows' stamp columns (one value each)."""
    found = []
    for column in ("version", "as_of_date"):
        values = {_text(f, n, row, column) for n, row in f.rows if column in row}
        if len(values) > 1:
            raise BaselineError(f"{path}: column {column} holds {len(values)} different values; "
                                "a hand-off has one")  # fmt: skip
        value = next(iter(values), "") or None
        if value is not None and len(value) > MAX_TEXT_CHARS:
            raise BaselineError(f"{path}: column {column}: over {MAX_TEXT_CHARS} characters")
        found.append(value)
    return tuple(found)
