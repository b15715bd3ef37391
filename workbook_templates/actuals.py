"""Actuals: what a run really used and cost, month by month, read from files.

This module holds the shapes every plan-vs-actual step shares and the readers that fill them
(:func:`read_actuals`): a plain CSV (:data:`PLAIN_COLUMNS`) and a FinOps FOCUS
cost-and-usage export (:mod:`.actuals_focus`), joined to the plan's runs by run code
(:func:`join_actuals`). The variance, the re-forecast and the own-runs feedback read them.

Every file is read as hostile: its size (:data:`MAX_ACTUALS_BYTES`), its row count
(:data:`MAX_ACTUALS_ROWS`) and columns (:data:`MAX_ACTUALS_COLUMNS`) are checked before any
row is parsed, each line (:data:`MAX_LINE_CHARS`) and field (:data:`MAX_FIELD_CHARS`) as it
is read, the (run code, month) pairs of all files (:data:`MAX_RUN_MONTHS`) as they grow; a
bad row is one line naming the file, the row (1 is the header)
and the column; nothing is kept from a call that found one.

Money is held in whole cents (ints), as in :mod:`udfs.schedule`, so variance parts add up to
the cent. A month is the first day of a calendar month (UTC).
"""

from __future__ import annotations

import codecs
import collections
import csv
import datetime as _dt
import decimal as _decimal
import hashlib
import io
import os
import re
import stat
from dataclasses import dataclass, field

from udfs.validation import echo

from .files import check_interrupt
from .run_codes import RUN_CODE_RULE, valid_run_code

__all__ = [
    "ACTUAL_STATUSES",
    "ActualMonth",
    "Actuals",
    "ActualsError",
    "Entry",
    "PLAIN_COLUMNS",
    "PLAIN_OPTIONAL",
    "MAX_ACTUALS_FILES",
    "MAX_ACTUALS_BYTES",
    "MAX_ACTUALS_ROWS",
    "MAX_ACTUALS_TOTAL_ROWS",
    "MAX_ACTUALS_COLUMNS",
    "MAX_RUN_MONTHS",
    "FIRST_ACTUALS_YEAR",
    "LAST_ACTUALS_YEAR",
    "MAX_FIELD_CHARS",
    "MAX_LINE_CHARS",
    "MAX_ACTUALS_FIGURE",
    "MAX_ACTUALS_SPEND_USD",
    "MAX_LINES_SHOWN",
    "read_actuals",
    "join_actuals",
]

#: The ``status`` a plain actuals row may carry (blank: the run's status is unknown).
ACTUAL_STATUSES = ("running", "completed", "failed")


#: The most actuals files one report reads.
MAX_ACTUALS_FILES = 100
#: The largest actuals file read (bytes; checked before it is opened for reading): a FOCUS
#: export of a million rows of a few hundred bytes each.
MAX_ACTUALS_BYTES = 512 * 2**20
#: The most data rows an actuals file may hold (counted before any is parsed).
MAX_ACTUALS_ROWS = 2_000_000
#: The most lines all the actuals files of one report may hold together (each file's counted
#: before it is parsed): five files at the bound above, about seven minutes of reading on the
#: shared 2-core machine (a million FOCUS rows take about 40 s).
MAX_ACTUALS_TOTAL_ROWS = 10_000_000
#: The most columns an actuals file may have (checked on its header, before any row is read):
#: a FOCUS 1.2 export has about 50, and a provider's ``x_`` columns a few dozen more.
MAX_ACTUALS_COLUMNS = 1000
#: The most (run code, month) pairs all the actuals files of one report may give together:
#: 2,000 runs a year long. Each is a row of the Variance sheet: 99,000 unplanned ones took a
#: report 119 s and 627 MB on the shared 2-core machine, 25,000 took 20 s and 229 MB; the
#: files stop being read past it.
MAX_RUN_MONTHS = 25_000
#: The first and last years a month of actuals (or a FOCUS charge period) may fall in.
FIRST_ACTUALS_YEAR, LAST_ACTUALS_YEAR = 1970, 2199
#: The longest field of an actuals file (characters): a FOCUS Tags or SkuPriceDetails JSON
#: object; any other field is far shorter.
MAX_FIELD_CHARS = 8192
#: The largest figure (US$, hours, tokens) an actuals field may hold, in magnitude: beyond any
#: run's, and sums of millions of them stay exact in whole cents.
MAX_ACTUALS_FIGURE = 1e15
#: The longest line of an actuals file (characters): a row of long fields, far past any real
#: export's; the text is read a line at a time, so no longer line is ever held.
MAX_LINE_CHARS = 2**20
#: Ctrl-C is taken every this many rows of an actuals file (and between files).
_ROWS_BETWEEN_CHECKS = 4096
#: The most spend all the actuals together may come to (US$, the sum of each run's month and
#: the unallocated spend, in magnitude): past it, whole cents are no longer exact as the
#: hand-off's figures (a float holds whole cents exactly up to 2**53), and the variance's
#: parts would not add up to the cent.
MAX_ACTUALS_SPEND_USD = 1e13
#: The most bad rows listed, one line each (then how many more).
MAX_LINES_SHOWN = 20
#: The columns a plain actuals CSV must have, in any order.
PLAIN_COLUMNS = ("run_code", "month", "accelerator_hours", "cost_usd", "tokens_processed")
#: The columns it may have besides.
PLAIN_OPTIONAL = ("status", "electricity_usd", "currency")


class ActualsError(Exception):
    """Bad actuals: one line per bad file or row, each naming the file, the row and the
    column (``lines``)."""

    def __init__(self, lines):
        self.lines = [lines] if isinstance(lines, str) else list(lines)
        super().__init__("\n".join(self.lines))


@dataclass(frozen=True)
class ActualMonth:
    """One run's actual use and spend in one calendar month.

    ``cost_cents`` is the spend (whole cents, the hand-off's currency), every account
    included; ``electricity_cents`` the part of it paid for power, None when not given;
    ``status`` the run's status as of this month (one of :data:`ACTUAL_STATUSES`, or None);
    ``source`` the file and row(s) it came from, for the
    audit trail.
    """

    run_code: str
    month: _dt.date
    accelerator_hours: float
    cost_cents: int
    tokens_processed: float | None = None
    status: str | None = None
    electricity_cents: int | None = None
    source: str = ""


@dataclass
class Actuals:
    """Every actuals file of one hand-off, read and checked.

    ``months`` are the rows whose run code a plan knows, one per (run code, month);
    ``unplanned`` the rows whose run code no plan knows (shown as unplanned spend, never
    dropped); ``unallocated_cents`` the spend of a FOCUS export that carries no run tag
    (``unallocated_month`` the last month such a charge starts in)
    (commitments unused, credits, tax); ``files`` the files read, with their SHA-256;
    ``warnings`` (file, one line naming the row and column) of figures to look at: a run's
    month given by FOCUS corrections alone (the export they correct not given), a run's last
    months that say nothing (placeholders).
    """

    months: list = field(default_factory=list)  # ActualMonth
    unplanned: list = field(default_factory=list)  # ActualMonth
    unallocated_cents: int = 0
    unallocated_month: object = None  # datetime.date or None
    currency: str = "USD"
    files: list = field(default_factory=list)  # (path, sha256)
    warnings: list = field(default_factory=list)  # (path, text)

    def by_run(self):
        """run code -> its ActualMonths in month order."""
        out = {}
        for m in sorted(self.months, key=lambda m: (m.run_code, m.month)):
            out.setdefault(m.run_code, []).append(m)
        return out


@dataclass
class Entry:
    """One run code's spend in one month as a file gives it (before the join): a plain row,
    or a FOCUS export's rows of one run tag and month summed (``cost`` a Decimal US$ amount
    until it is rounded once, to the cent, by the join)."""

    run_code: str
    month: _dt.date
    hours: float
    cost: object  # decimal.Decimal, US$
    tokens: float | None
    status: str | None
    electricity: object  # decimal.Decimal or None
    file: str
    row: int  # the first row (1: the header)
    rows: int = 1
    column: str = "run_code"  # the column holding the run code (FOCUS: Tags)
    month_column: str = "month"
    focus: bool = False  # from a FOCUS export
    hours_column: str = "accelerator_hours"
    #: FOCUS: BillingPeriodStart (a datetime; None: the file has no such column) -> the
    #: first row of that billing period
    periods: dict = field(default_factory=dict)
    only_corrections: bool = False  # FOCUS: every row is of ChargeClass Correction


@dataclass
class Parsed:
    """One file read: its entries, its untagged spend (Decimal US$) and its SHA-256."""

    path: str
    sha256: str
    entries: list
    unallocated: object
    unallocated_month: object = None


class Problems:
    """The bad rows found so far, one line each; :meth:`raise_if_any` stops the read."""

    def __init__(self):
        self.lines, self.count = [], 0

    def add(self, path, row, column, rule):
        self.count += 1
        if len(self.lines) < MAX_LINES_SHOWN:
            where = f"row {row}, column {column}" if column else f"row {row}"
            self.lines.append(f"{path}: {where}: {rule}")

    def file(self, path, rule):
        self.count += 1
        if len(self.lines) < MAX_LINES_SHOWN:
            self.lines.append(f"{path}: {rule}")

    def raise_if_any(self):
        if self.count:
            more = self.count - len(self.lines)
            extra = [f"... and {more:,} more bad row(s) not listed"] if more > 0 else []
            raise ActualsError(self.lines + extra)


_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?", re.ASCII)
_MONTH = re.compile(r"([0-9]{4})-([0-9]{2})(?:-01)?", re.ASCII)
NUMBER_RULE = (
    "a plain decimal number of magnitude at most 1e15 (digits, one '.', an optional E "
    "exponent; no '+', '$' or ','"
)


def decimal_of(text):
    """The Decimal of a plain number (:data:`NUMBER_RULE`) of magnitude at most
    :data:`MAX_ACTUALS_FIGURE`, else None."""
    if not _NUMBER.fullmatch(text):
        return None
    value = _decimal.Decimal(text)
    return value if abs(value) <= _LARGEST else None


_LARGEST = _decimal.Decimal(str(MAX_ACTUALS_FIGURE))


def month_of(text):
    """The first day of the month ``YYYY-MM`` (or ``YYYY-MM-01``), else None."""
    m = _MONTH.fullmatch(text)
    if not m or not 1 <= int(m.group(2)) <= 12:
        return None
    if not FIRST_ACTUALS_YEAR <= int(m.group(1)) <= LAST_ACTUALS_YEAR:
        return None
    return _dt.date(int(m.group(1)), int(m.group(2)), 1)


def _file_bytes(path, problems):
    """The bytes of ``path`` after the bounds on its size and rows, checked to be UTF-8 text,
    else None (a problem noted)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        problems.file(path, f"cannot be read ({exc.strerror or exc})")
        return None
    if not stat.S_ISREG(st.st_mode):
        problems.file(path, "is not a regular file")
        return None
    if st.st_size > MAX_ACTUALS_BYTES:
        problems.file(path, f"is {st.st_size:,} bytes, over the {MAX_ACTUALS_BYTES:,}-byte "
                            "bound on an actuals file")  # fmt: skip
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_ACTUALS_BYTES + 1)
    except OSError as exc:
        problems.file(path, f"cannot be read ({exc.strerror or exc})")
        return None
    if len(data) > MAX_ACTUALS_BYTES:
        problems.file(path, f"is over the {MAX_ACTUALS_BYTES:,}-byte bound on an actuals file")
        return None
    rows = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    if rows > MAX_ACTUALS_ROWS + 1:
        problems.file(path, f"has about {rows:,} lines, over the {MAX_ACTUALS_ROWS:,}-row bound "
                            "on an actuals file")  # fmt: skip
        return None
    if b"\0" in data:
        problems.file(path, "holds a NUL byte: not a CSV text file")
        return None
    bad = _utf8_error(data)
    if bad is not None:
        problems.file(path, f"is not UTF-8 text (byte {bad:,})")
        return None
    return data


#: The bytes decoded at a time: the text of a file is never held whole beside its bytes.
_CHUNK = 1 << 20


def _utf8_error(data):
    """The offset of the first byte of ``data`` that is not UTF-8, else None (decoded a
    chunk at a time and dropped)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    for at in range(0, len(data), _CHUNK):
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(view[at : at + _CHUNK], final=at + _CHUNK >= len(data))
        except UnicodeDecodeError as exc:
            return at - pending + exc.start
    return None


class _LongLine(Exception):  # noqa: N818 - raised through the csv reader, caught by its caller
    """A line over :data:`MAX_LINE_CHARS` characters."""


def _lines(text):
    """The lines of ``text``, each read up to :data:`MAX_LINE_CHARS` characters (a longer one
    raises :class:`_LongLine` before more of it is read)."""
    while True:
        line = text.readline(MAX_LINE_CHARS + 1)
        if not line:
            return
        if len(line) > MAX_LINE_CHARS:
            raise _LongLine
        yield line


def _csv_rule(exc):
    """The rule a CSV reading error broke, in the user's terms."""
    if isinstance(exc, _LongLine):
        return f"a line is over {MAX_LINE_CHARS:,} characters"
    if "field larger than field limit" in str(exc):
        return f"a field is over {MAX_FIELD_CHARS:,} characters"
    return f"not CSV ({exc})"


def _rows(path, data, problems):
    """(header, iterator of (row number, fields)) of a CSV file, else None. The text is
    decoded as it is read (``data`` is UTF-8, checked)."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    reader = csv.reader(_lines(text), strict=True)
    try:
        header = next(reader, None)
    except (csv.Error, _LongLine) as exc:
        problems.file(path, f"row 1: {_csv_rule(exc)}")
        return None
    if not header:
        problems.file(path, "is empty: no header row")
        return None
    if len(header) > MAX_ACTUALS_COLUMNS:
        problems.file(path, f"row 1: {len(header):,} columns, over the bound of "
                            f"{MAX_ACTUALS_COLUMNS:,} on an actuals file")  # fmt: skip
        return None
    return [h.strip() for h in header], reader


def _each_row(path, reader, width, problems):
    """(row number, fields) of each data row: a row of another width, an over-long field or
    broken quoting is a problem, skipped."""
    n = 1
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except (csv.Error, _LongLine) as exc:
            problems.add(path, n + 1, None, _csv_rule(exc))
            return
        n += 1
        if n % _ROWS_BETWEEN_CHECKS == 0:
            check_interrupt()  # a file of a million rows takes a minute
        if not any(fields) or (len(fields) == 1 and not fields[0].strip()):
            continue  # a blank line
        if len(fields) != width:
            problems.add(path, n, None, f"has {len(fields)} fields, the header {width}")
            continue
        if max(map(len, fields)) > MAX_FIELD_CHARS:
            long = next(i for i, f in enumerate(fields) if len(f) > MAX_FIELD_CHARS)
            problems.add(path, n, None, f"field {long + 1} is over {MAX_FIELD_CHARS:,} characters")
            continue
        yield n, fields


def too_many_run_months(path, problems):
    """Note that the files up to ``path`` give over :data:`MAX_RUN_MONTHS` run-months."""
    problems.file(
        path,
        f"gives over {MAX_RUN_MONTHS:,} (run code, month) pairs with the "
        "files before it, the bound on one report's actuals; not read further",
    )


def _plain(path, header, reader, currency, problems, room):
    """The entries of a plain actuals CSV (:data:`PLAIN_COLUMNS`), at most ``room`` of them
    (then a problem)."""
    missing = [c for c in PLAIN_COLUMNS if c not in header]
    unknown = [c for c in header if c not in PLAIN_COLUMNS + PLAIN_OPTIONAL]
    dupes = sorted(c for c, k in collections.Counter(header).items() if k > 1)
    if missing or unknown or dupes:
        why = (f"missing column(s) {', '.join(missing)}" if missing
               else f"column(s) {', '.join(map(repr, dupes))} given twice" if dupes
               else f"unknown column(s) {', '.join(repr(c[:40]) for c in unknown[:5])}"
                    + (f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""))  # fmt: skip
        problems.file(path, f"row 1: {why} (a plain actuals file has {', '.join(PLAIN_COLUMNS)}"
                            f" and optionally {', '.join(PLAIN_OPTIONAL)})")  # fmt: skip
        return []
    at = {c: header.index(c) for c in header}
    entries = []
    for n, f in _each_row(path, reader, len(header), problems):
        entry = _plain_row(path, n, {c: f[i].strip() for c, i in at.items()}, currency, problems)
        if entry is not None:
            entries.append(entry)
            if len(entries) > room:
                too_many_run_months(path, problems)
                break
    return entries


def _plain_row(path, n, row, currency, problems):
    code = row["run_code"]
    if not valid_run_code(code):
        return problems.add(
            path, n, "run_code", f"{echo(code)} is not a run code ({RUN_CODE_RULE})"
        )
    month = month_of(row["month"])
    if month is None:
        return problems.add(path, n, "month", f"{echo(row['month'])} is not a month (YYYY-MM, "
                            f"{FIRST_ACTUALS_YEAR} to {LAST_ACTUALS_YEAR})")  # fmt: skip
    values = {}
    for col, need, least in (
        ("accelerator_hours", True, 0),
        ("cost_usd", True, None),
        ("tokens_processed", False, 0),
        ("electricity_usd", False, None),
    ):
        text = row.get(col, "")
        if not text:
            if need:
                return problems.add(path, n, col, "is blank (give a number; 0 for none)")
            values[col] = None
            continue
        value = decimal_of(text)
        if value is None:
            return problems.add(path, n, col, f"{echo(text)} is not {NUMBER_RULE})")
        if least is not None and value < least:
            return problems.add(path, n, col, f"{echo(text)} is negative")
        values[col] = value
    status = row.get("status", "").lower() or None
    if status is not None and status not in ACTUAL_STATUSES:
        return problems.add(
            path,
            n,
            "status",
            f"{echo(row['status'])} is not one of {', '.join(ACTUAL_STATUSES)} (or blank)",
        )
    cur = row.get("currency", "") or currency
    if cur != currency:
        return problems.add(
            path, n, "currency", f"{echo(cur)} is not the hand-off's currency, {currency}"
        )
    tokens = values["tokens_processed"]
    return Entry(code, month, float(values["accelerator_hours"]), values["cost_usd"],
                 None if tokens is None else float(tokens), status, values["electricity_usd"],
                 path, n)  # fmt: skip


def _sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_actuals(paths, currency="USD"):
    """Read every actuals file of ``paths`` (plain CSV or FOCUS export, told by its header):
    a list of :class:`Parsed`, one per file. Raises :class:`ActualsError` listing every bad
    file and row (at most :data:`MAX_LINES_SHOWN`), keeping nothing."""
    from .actuals_focus import FOCUS_MARK, focus_entries

    problems = Problems()
    if len(paths) > MAX_ACTUALS_FILES:
        raise ActualsError(f"--actuals: {len(paths):,} files, over the bound of "
                           f"{MAX_ACTUALS_FILES}")  # fmt: skip
    out, digests, pairs, lines = [], {}, 0, 0
    for path in map(str, paths):
        check_interrupt()
        data = _file_bytes(path, problems)
        if data is None:
            continue
        lines += data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
        if lines > MAX_ACTUALS_TOTAL_ROWS:
            problems.file(path, f"brings the actuals files to about {lines:,} lines, over the "
                                f"{MAX_ACTUALS_TOTAL_ROWS:,} all of them may hold together; not "
                                "read")  # fmt: skip
            break
        digest = _sha256(data)
        if digest in digests:
            problems.file(path, f"holds the same bytes as {digests[digest]}: each file once (its "
                                "spend would count twice)")  # fmt: skip
            continue
        digests[digest] = path
        rows = _rows(path, data, problems)
        if rows is None:
            continue
        header, reader = rows
        unallocated, last = _decimal.Decimal(0), None
        if FOCUS_MARK in header:
            entries, unallocated, last = focus_entries(path, header, _each_row(
                path, reader, len(header), problems), currency, problems,
                MAX_RUN_MONTHS - pairs)  # fmt: skip
        elif "run_code" in header:
            entries = _plain(path, header, reader, currency, problems, MAX_RUN_MONTHS - pairs)
        else:
            problems.file(path, f"row 1: neither a plain actuals file (no run_code column) nor "
                                f"a FOCUS export (no {FOCUS_MARK} column)")  # fmt: skip
            continue
        pairs += len(entries)
        out.append(Parsed(path, digest, entries, unallocated, last))
        if pairs > MAX_RUN_MONTHS:
            break
    problems.raise_if_any()
    return out


def _cents(amount):
    """A Decimal US$ amount to whole cents (half away from zero)."""
    return int(amount.scaleb(2).quantize(_decimal.Decimal(1), rounding=_decimal.ROUND_HALF_UP))


class _Joined:
    """One (run code, month) of all the files: the first entry that gives it, and the FOCUS
    entries of other billing periods added to it (``parts``: (file, first row, rows))."""

    def __init__(self, e):
        self.e = e
        self.cost, self.hours = e.cost, e.hours
        self.periods = {bp: (e.file, n) for bp, n in e.periods.items()}
        self.parts = [(e.file, e.row, e.rows)]
        self.only_corrections = e.only_corrections

    def clash(self, e):
        """(row, column, rule) when ``e`` may not be added (the month given twice), else
        None."""
        first, what = self.e, f"{e.run_code} {e.month:%Y-%m}"
        if not (first.focus and e.focus):
            return (e.row, e.month_column, f"{what} is given twice (first in {first.file} row "
                    f"{first.row}): each run's month once")  # fmt: skip
        for bp, n in e.periods.items():
            if bp is None or None in self.periods:
                return (e.row, e.month_column, f"{what} is given by two FOCUS exports (first in "
                        f"{first.file} row {first.row}) and one has no BillingPeriodStart "
                        "column: each run's month once (exports of different billing periods "
                        "are summed when both give BillingPeriodStart)")  # fmt: skip
            if bp in self.periods:
                where = self.periods[bp]
                return (n, "BillingPeriodStart", f"{what} is given by two FOCUS exports of the "
                        f"billing period starting {bp:%Y-%m-%d} (first in {where[0]} row "
                        f"{where[1]}): the same export given twice? each billing period's "
                        "export once")  # fmt: skip
        return None

    def add(self, e):
        self.cost += e.cost
        self.hours += e.hours
        self.periods.update({bp: (e.file, n) for bp, n in e.periods.items()})
        self.parts.append((e.file, e.row, e.rows))
        self.only_corrections = self.only_corrections and e.only_corrections

    def source(self):
        return "; ".join(f"{f} row {r}" + (f" and {k - 1:,} more" if k > 1 else "")
                         for f, r, k in self.parts)  # fmt: skip


def _placeholders(plain):
    """(file, text) of each budget run whose last months in plain files say nothing: 0 hours,
    $0, no tokens and no status, after its last month with any (a template filled ahead with
    zeros). They count as months with nothing used, and move the as-of month."""
    out = []
    for code, given in plain.items():
        given.sort(key=lambda x: x[0].month)
        empty = 0
        for m, _ in reversed(given):
            if m.accelerator_hours or m.cost_cents or m.tokens_processed or m.status:
                break
            empty += 1
        if not empty:
            continue
        first, e = given[-empty]
        last = given[-1][0]
        after = f" after its last month with any ({given[-empty - 1][0].month:%Y-%m})" if (
            empty < len(given)) else ""  # fmt: skip
        out.append((e.file, f"row {e.row}, column cost_usd: run {code}'s "
                    f"{first.month:%Y-%m} to {last.month:%Y-%m} ({empty} month(s)) give 0 "
                    f"hours, $0, no tokens and no status{after}: placeholders? they count as "
                    f"months with nothing used and make the actuals run to {last.month:%b %Y}; "
                    "leave a month out until it is spent"))  # fmt: skip
    return out


def _merge(parsed):
    """(problems found [(file, row, column, rule)], {(run code, month): :class:`_Joined`},
    the unallocated spend) of the files: each run's month given once, or by FOCUS exports of
    different billing periods, summed."""
    found, joined, unallocated = [], {}, _decimal.Decimal(0)
    for p in parsed:
        unallocated += p.unallocated
        for e in p.entries:
            key = (e.run_code, e.month)
            first = joined.get(key)
            if first is None:
                joined[key] = _Joined(e)
                continue
            why = first.clash(e)
            if why is not None:
                found.append((e.file, *why))
                continue
            first.add(e)
    return found, joined, unallocated


def _bad_month(j, span, this_month, ends, latest):
    """(row, column, rule) when the run's month ``j`` is refused, else None: ``span`` the
    run's (first, last) month (None: a run code no plan knows), ``latest`` the last month a
    run code no plan knows may have (the later of ``this_month`` and ``ends``, the runs'
    last months)."""
    e = j.e
    if span is not None and span[0] is None:
        return (e.row, e.column, f"run {e.run_code} has no start date in its plan: its months "
                "are unknown (type a start date)")  # fmt: skip
    if span is not None and not span[0] <= e.month <= span[1]:
        return (e.row, e.month_column, f"{e.month:%Y-%m} is outside run {e.run_code} "
                f"({span[0]:%Y-%m} to {span[1]:%Y-%m}, its P90 run's months)")  # fmt: skip
    if span is None and e.month > latest:
        ends_at = f" and every budget run's last month ({max(ends):%Y-%m})" if ends else ""
        return (e.row, e.month_column, f"{e.month:%Y-%m} is after this month "
                f"({this_month:%Y-%m}){ends_at}, and run code {e.run_code} is in no budget run: "
                "a mistyped month? (actuals are for months that have begun)")  # fmt: skip
    if j.hours < 0:  # corrections taking back more hours than the exports give
        return (e.row, e.hours_column, f"run {e.run_code}'s hours in {e.month:%Y-%m} come to "
                f"{j.hours:g}, below 0 (its corrections take back more than its usage rows "
                "give)")  # fmt: skip
    return None


def _this_month(today):
    day = today or _dt.datetime.now(_dt.UTC).date()
    return _dt.date(day.year, day.month, 1)


def join_actuals(parsed, runs, currency="USD", today=None):
    """The :class:`Actuals` of ``parsed`` files joined to ``runs``: run code -> (first month,
    last month) of each run the plan knows (None, None for a run without a start date).

    Each (run code, month) is given once: twice in plain files, or by a plain file and a
    FOCUS export, is refused. A FOCUS export's rows of one tag and month are summed, and so
    are FOCUS exports of different billing periods (``BillingPeriodStart``: a correction
    billed a period later lands in the month it corrects); two exports of one billing period
    giving the same run's month, or one without ``BillingPeriodStart``, are refused. A run's
    month whose hours come to less than 0 is refused. A run code no plan knows is unplanned
    spend (``Actuals.unplanned``); its month may not be after both ``today``'s month (the
    report's date, default today UTC) and the last month of every run (a mistyped year would
    show as spend to come). A month before the run's first or after its last is refused, and
    so is a run without a start date. Raises :class:`ActualsError` (every bad row, one line
    each, in file and row order); nothing is kept."""
    found, joined, unallocated = _merge(parsed)
    order = {p.path: i for i, p in enumerate(parsed)}
    this_month = _this_month(today)
    ends = [span[1] for span in runs.values() if span[1] is not None]
    latest = max([this_month, *ends])
    months, unplanned, warnings, plain = [], [], [], {}
    for j in joined.values():
        e = j.e
        span = runs.get(e.run_code)
        bad = _bad_month(j, span, this_month, ends, latest)
        if bad is not None:
            found.append((e.file, *bad))
            continue
        month = ActualMonth(e.run_code, e.month, j.hours, _cents(j.cost), e.tokens, e.status,
                            None if e.electricity is None else _cents(e.electricity),
                            j.source())  # fmt: skip
        (months if span is not None else unplanned).append(month)
        if span is not None and not e.focus:
            plain.setdefault(e.run_code, []).append((month, e))
        if j.only_corrections:
            warnings.append((e.file, f"row {e.row}, column ChargeClass: run {e.run_code}'s "
                             f"{e.month:%Y-%m} is only Correction rows "
                             f"(${_cents(j.cost) / 100:,.2f}): the export of the billing "
                             "period they correct is not given, so the month is the correction "
                             "alone; give that export too"))  # fmt: skip
    warnings += _placeholders(plain)
    problems = Problems()
    for path, row, column, rule in sorted(found, key=lambda f: (order.get(f[0], 0), f[1])):
        problems.add(path, row, column, rule)
    spend = sum(abs(m.cost_cents) for m in months + unplanned) + abs(_cents(unallocated))
    if spend > MAX_ACTUALS_SPEND_USD * 100:
        problems.file(parsed[-1].path if len(parsed) == 1 else "--actuals",
                      f"the spend comes to ${spend / 100:,.2e} (each run's month and the "
                      f"unallocated spend, in magnitude), over the ${MAX_ACTUALS_SPEND_USD:.0e} "
                      "whose whole cents the hand-off writes exactly")  # fmt: skip
    problems.raise_if_any()
    lasts = [p.unallocated_month for p in parsed if p.unallocated_month is not None]
    return Actuals(months=months, unplanned=unplanned, unallocated_cents=_cents(unallocated),
                   unallocated_month=max(lasts, default=None), currency=currency,
                   files=[(p.path, p.sha256) for p in parsed], warnings=warnings)  # fmt: skip
