"""``compute-lab report``: the flags, the checks on them, and the run."""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from udfs.validation import CommandError, check_name, console_line, control_character, echo

from ..files import deferred_interrupts
from ..reader import DEFAULT_MAX_BYTES, MAX_UNCOMPRESSED_BYTES
from ..sheetkit import paper_size
from .consolidate import DEFAULT_TOLERANCE, consolidate_files
from .pool import MAX_JOBS, default_jobs

__all__ = ["PROG", "configure_parser", "run"]

PROG = "compute-lab report"
#: Largest --max-size-mb: the reader's bound on a planner's unpacked size (a zip is never
#: larger than what it unpacks to, beyond a few bytes per part), and the file is read into
#: memory.
MAX_SIZE_MB = MAX_UNCOMPRESSED_BYTES // 2**20
#: From this dollar figure up, the summary line writes scientific notation (``$1e+297``), as
#: ``estimate`` does: never a number of hundreds of digits.
SCIENTIFIC_FROM = 1e15
#: From this many files up, a report run on a terminal shows a progress line on stderr
#: (never when stderr is a file or a pipe).
PROGRESS_FROM_FILES = 10
#: Longest --version label: what page 1's line and an FP&A tool's version field hold.
MAX_VERSION_CHARS = 60
#: Least seconds between two updates of the progress line.
PROGRESS_EVERY = 0.2


def configure_parser(parser):
    parser.add_argument("files", nargs="+", metavar="FILE.xlsx", help="filled planners")
    # Kept as text until checked: Path("") is the current folder, never meant.
    parser.add_argument("--out", metavar="HANDOFF.xlsx", help="hand-off workbook")
    parser.add_argument("--csv", metavar="DIR", help="write the tables as CSV files into DIR")
    parser.add_argument("--force", action="store_true", help="overwrite existing output files")
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="list bad files and consolidate the rest (default: any bad file stops the run)",
    )
    parser.add_argument(
        "--fiscal-year-start",
        default="1",
        metavar="MONTH",
        help="first month of the fiscal year, 1-12 (default 1, January; 4 = April)",
    )
    parser.add_argument(
        "--paper",
        choices=("a4", "letter"),
        help="paper the hand-off prints on (default: COMPUTE_LAB_PAPER, else the locale's)",
    )
    parser.add_argument(
        "--max-size-mb",
        type=float,
        default=DEFAULT_MAX_BYTES / 1024 / 1024,
        metavar="MB",
        help=f"refuse files larger than this (default {DEFAULT_MAX_BYTES // 1024 // 1024} MB)",
    )
    parser.add_argument(
        "--jobs",
        metavar="N",
        help=f"read the files in N processes, 1-{MAX_JOBS} (default: one per core, at most one "
        "per file)",
    )
    parser.add_argument(
        "--own-runs",
        metavar="FILE",
        help="CSV of your completed runs (as estimate --own-runs): they pull the blank MFU of "
        "every planner that has no Our runs rows of its own",
    )
    parser.add_argument(
        "--actuals",
        nargs="+",
        action="extend",
        metavar="FILE",
        help="actuals to compare with the plan: plain CSV files (run_code, month, "
        "accelerator_hours, cost_usd, tokens_processed) and/or FinOps FOCUS exports (runs "
        "tagged compute-lab-run); adds the Variance sheet and variance.csv. Give the planners "
        "first",
    )
    parser.add_argument(
        "--version",
        dest="handoff_version",
        metavar="LABEL",
        help="label the hand-off (page 1, every CSV row, the data dictionary), e.g. "
        '"Budget FY2027" or "Forecast 2027-Q2"',
    )
    parser.add_argument(
        "--baseline",
        metavar="PATH",
        help="an earlier hand-off to compare this one with, its workbook (report --out) or its "
        "CSV folder (report --csv DIR): per run and month, its P50 and this one's (the "
        "Baseline sheet, baseline.csv)",
    )
    parser.add_argument(
        "--write-own-runs",
        metavar="FILE",
        help="write the runs the actuals show completed to FILE, in the --own-runs format "
        "(one team's runs; the --own-runs file's runs first); an existing FILE only with "
        "--force",
    )
    parser.add_argument(
        "--tolerance",
        type=float,
        default=DEFAULT_TOLERANCE,
        metavar="REL",
        help=f"relative tolerance of the saved-value check (default {DEFAULT_TOLERANCE:g})",
    )


def _err(message):
    print(console_line(f"{PROG}: {message}"), file=sys.stderr)


def _fiscal_year_start(text):
    """The month number of --fiscal-year-start (1-12 in ASCII digits), else CommandError.

    ``int()`` would take ``1_2``, Arabic-Indic and mathematical digits: refused, as the
    estimate flags refuse them."""
    cleaned = str(text).strip()
    month = int(cleaned) if re.fullmatch(r"[0-9]{1,2}", cleaned, re.ASCII) else None
    if month is None or not 1 <= month <= 12:
        raise CommandError(
            "--fiscal-year-start must be a month number from 1 to 12, in ASCII digits 0-9 "
            f"(got {echo(text)})"
        )
    return month


def usd(value):
    """A dollar figure of the summary line: ``$6,511,894``, from 1e15 ``$1e+297``."""
    value = float(value)
    if math.isfinite(value) and abs(value) >= SCIENTIFIC_FROM:
        return f"${value:.4g}"
    return f"${value:,.0f}"


def _check_flags(args):
    for flag, example in (("out", "handoff.xlsx"), ("csv", "handoff-csv"),
                          ("write_own_runs", "runs.csv")):  # fmt: skip
        value = getattr(args, flag)
        if value is not None and not str(value).strip():
            name = flag.replace("_", "-")
            raise CommandError(f"--{name} is empty; give a name, e.g. --{name} {example}")
        setattr(args, flag, None if value is None else Path(value))
    if args.out is None and args.csv is None and args.write_own_runs is None:
        raise CommandError("give --out HANDOFF.xlsx and/or --csv DIR")
    if args.out is not None and args.out.suffix.lower() != ".xlsx":
        raise CommandError(f"--out must name an .xlsx file (got {args.out})")
    if not (0 < args.max_size_mb <= MAX_SIZE_MB):
        raise CommandError(
            f"--max-size-mb must be greater than 0 and at most {MAX_SIZE_MB}, the largest "
            f"planner the reader unpacks (got {args.max_size_mb:g})"
        )
    for f in args.files:
        check_name(f, "FILE")
    args.actuals = list(getattr(args, "actuals", None) or [])
    for f in args.actuals:
        check_name(f, "--actuals")
    if args.write_own_runs is not None and not args.actuals:
        raise CommandError("--write-own-runs needs --actuals: the completed runs are those the "
                           "actuals show completed")  # fmt: skip
    for flag, path in (("--out", args.out), ("--csv", args.csv),
                       ("--write-own-runs", args.write_own_runs)):  # fmt: skip
        if path is not None:
            check_name(path, flag)
    if not (0 <= args.tolerance < 1):
        raise CommandError(f"--tolerance must be at least 0 and below 1 (got {args.tolerance:g})")
    args.fiscal_year_start = _fiscal_year_start(args.fiscal_year_start)
    args.handoff_version = _version(getattr(args, "handoff_version", None))
    baseline = getattr(args, "baseline", None)
    if baseline is not None:
        if not str(baseline).strip():
            raise CommandError(
                "--baseline is empty; give the workbook or the CSV folder of an earlier hand-off"
            )
        check_name(baseline, "--baseline")
    args.paper = getattr(args, "paper", None) or paper_size()  # a bad variable: one line
    args.jobs = _jobs(args.jobs, len(args.files))


def _version(text):
    """The --version label, stripped (None when not given), else CommandError: 1 to
    MAX_VERSION_CHARS characters without a control character."""
    if text is None:
        return None
    label = str(text).strip()
    bad = control_character(label)
    if not label or len(label) > MAX_VERSION_CHARS or bad:
        why = (f"holds the control character {bad}" if bad
               else f"is {len(label):,} characters long" if label else "is empty")  # fmt: skip
        raise CommandError(
            f"--version must be a label of 1 to {MAX_VERSION_CHARS} characters without control "
            f'characters, e.g. --version "Budget FY2027" (got {echo(text)}: it {why})'
        )
    return label


def _jobs(text, files):
    """The number of --jobs (1 to MAX_JOBS, in ASCII digits), else CommandError; the default
    (None) is one per core, at most one per file."""
    if text is None:
        return default_jobs(files)
    cleaned = str(text).strip()
    jobs = int(cleaned) if re.fullmatch(r"[0-9]{1,3}", cleaned, re.ASCII) else None
    if jobs is None or not 1 <= jobs <= MAX_JOBS:
        raise CommandError(
            f"--jobs must be a whole number from 1 to {MAX_JOBS}, in ASCII digits 0-9 "
            f"(got {echo(text)})"
        )
    return jobs


class Progress:
    """The progress line of a long report on a terminal: ``reading planners: 40 of 100``,
    rewritten in place on stderr and wiped when done. Silent when stderr is not a terminal
    or fewer than :data:`PROGRESS_FROM_FILES` files are read."""

    def __init__(self, files, stream=None):
        self.stream = sys.stderr if stream is None else stream
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.on = tty and files >= PROGRESS_FROM_FILES
        self.shown = 0
        self.last = 0.0

    def show(self, text, force=False):
        if not self.on:
            return
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        line = f"{PROG}: {text}"
        self.stream.write("\r" + line.ljust(self.shown) + "\r")
        self.stream.flush()
        self.shown = max(self.shown, len(line))

    def reading(self, done, total):
        self.show(f"reading planners: {done:,} of {total:,}", force=done == total)

    def clear(self):
        if self.on and self.shown:
            self.stream.write("\r" + " " * self.shown + "\r")
            self.stream.flush()
            self.shown = 0


class _Writers:
    """The later stages (pandas, the tables, the workbook and CSV writers), imported in a
    thread while the reading processes read: they are forked first (:mod:`.pool` calls
    :meth:`start` once they are), so they never carry these modules. In one process they
    are imported when first used, after the reading."""

    #: The modules imported (the stages after the reading, and what they import).
    MODULES = ("tables", "forecast", "output")

    def __init__(self):
        self.thread = None

    def start(self):
        import threading

        self.thread = threading.Thread(target=self._load, name="import writers", daemon=True)
        self.thread.start()

    def _load(self):
        import importlib

        for name in self.MODULES:
            try:
                importlib.import_module(f".{name}", __package__)
            except BaseException:  # noqa: BLE001 - imported again where used, and raised there
                return

    def join(self):
        if self.thread is not None:
            self.thread.join()


def _targets(args):
    targets = []
    if args.out is not None:
        targets.append(args.out)
    if args.csv is not None:
        if args.csv.exists() and not args.csv.is_dir():
            raise CommandError(f"--csv: {args.csv} is a file, not a folder (give a folder)")
        from .csv_files import BASELINE_CSV, CSV_FILES, FORECAST_FILES

        names = (*CSV_FILES, *([BASELINE_CSV] if getattr(args, "baseline", None) else []))
        targets += [args.csv / f"{n}.csv" for n in names]
        if args.actuals:
            from .csv_files import ACTUALS_CSV_FILES

            targets += [args.csv / f"{n}.csv" for n in (*ACTUALS_CSV_FILES, *FORECAST_FILES)]
    if getattr(args, "write_own_runs", None) is not None:
        targets.append(args.write_own_runs)
    return targets


def _check_targets(args):
    inputs = [f for f in [*args.files, *args.actuals] if os.path.exists(f)]
    existing = []
    for t in _targets(args):
        for f in inputs:
            if os.path.exists(t) and os.path.samefile(t, f):
                raise CommandError(f"{t} is one of the input files ({f}): it is never overwritten")
        if t.is_dir():
            raise CommandError(f"{t} is a folder: it cannot be replaced by a file")
        if os.path.lexists(t):
            existing.append(str(t))
    if existing and not args.force:
        verb = "already exists" if len(existing) == 1 else "already exist"
        raise CommandError(f"{', '.join(existing)} {verb} (use --force to overwrite)")
    own_out = getattr(args, "write_own_runs", None)
    if own_out is not None and not own_out.parent.is_dir():
        raise CommandError(f"--write-own-runs: folder {own_out.parent} does not exist")
    if args.out is not None and not args.out.parent.is_dir():
        raise CommandError(f"--out: folder {args.out.parent} does not exist (got {args.out})")
    if args.csv is not None and not args.csv.exists():
        parent = args.csv.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise CommandError(f"--csv: {parent} is a file, not a folder (got {args.csv})")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise CommandError(f"--csv: cannot create folder {args.csv}: {parent} is not writable")


def _sha256(path, limit):
    """SHA-256 of a regular file of at most ``limit`` bytes, else None (the reader refuses
    what is missing, not a file, or too large)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > limit:
            return None
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    except OSError:
        return None


def _check_same_inputs(files, limit):
    """Refuse the same planner given twice: one file by two paths (same device and inode:
    the same path, a symbolic or hard link) or two files with the same content (SHA-256)."""
    by_inode, by_hash = {}, {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue  # the reader names a missing or unreadable file
        key = (st.st_dev, st.st_ino)
        if key in by_inode:
            first = by_inode[key]
            if os.path.abspath(first) == os.path.abspath(f):
                raise CommandError(f"{f} is given twice: each planner is counted once")
            raise CommandError(
                f"{f} is the same file as {first} (another path or a hard link to it): "
                "each planner is counted once"
            )
        by_inode[key] = f
        digest = _sha256(f, limit)
        if digest is None:
            continue
        if digest in by_hash:
            raise CommandError(
                f"{f} has the same content as {by_hash[digest]} (SHA-256 {digest[:12]}...): "
                "the same planner given twice would be counted twice"
            )
        by_hash[digest] = f


def run(args):
    """Run ``compute-lab report``; return the exit code (2 for anything refused).

    numpy's floating-point warnings are off for the whole run: every figure is checked for
    range instead, and no Python warning reaches the user. Ctrl-C is taken between files and
    before the outputs move into place (:func:`workbook_templates.files.deferred_interrupts`):
    exit 130, the old outputs untouched.
    """
    with np.errstate(all="ignore"), warnings.catch_warnings(), deferred_interrupts():
        warnings.simplefilter("ignore")
        return _run(args)


def _baseline(args):
    """The Baseline of --baseline (None without it); CommandError naming the file, row and
    column of what is wrong in it."""
    if getattr(args, "baseline", None) is None:
        return None
    from ..baseline import BaselineError, read_baseline

    try:
        return read_baseline(args.baseline)
    except BaselineError as exc:
        raise CommandError(f"--baseline: {exc}; nothing written") from None


def _refuse_read_twice(c):
    seen = {}
    for p in c.planners:  # the bytes actually read (a file may change after the check)
        if p.sha256 in seen:
            raise CommandError(
                f"{p.path} has the same content as {seen[p.sha256]} (SHA-256 "
                f"{p.sha256[:12]}...): the same planner given twice would be counted twice"
            )
        seen[p.sha256] = p.path


def _bad_files(c, args):
    """Report the files left out; the exit code 2 when they stop the run, else None."""
    if c.bad and not args.skip_bad:
        lines = [line for err in c.bad for line in err.describe().splitlines()]
        if len(lines) == 1:  # one problem: one line
            _err(f"error: {lines[0]}; nothing written")
            return 2
        _err(
            f"error: {len(c.bad)} of {len(args.files)} file(s) cannot be consolidated; "
            "nothing written (--skip-bad consolidates the others):"
        )
        for line in lines:
            _err(f"error: {line}")
        return 2
    for err in c.bad:
        for line in err.describe().splitlines():
            _err(f"skipped: {line}")
    if not c.runs:
        why = "no file could be read"
        if c.planners:  # name the files read: the line says where to look
            shown = ", ".join(str(p.path) for p in c.planners[:3])
            more = f" and {len(c.planners) - 3:,} more" if len(c.planners) > 3 else ""
            why = f"no scenario column has inputs (in {shown}{more})"
        _err(f"error: {why}; nothing written")
        return 2
    return None


def _warnings(c):
    """One ``warning:`` line per saved value that differs (both values), then one per WARN
    item of the Checks table (its file, check and detail), on stderr."""
    for m in c.mismatches.itertuples(index=False):
        engine_value = "(none)" if m.engine_value is None else f"{m.engine_value:,.10g}"
        cached = m.cached_value if isinstance(m.cached_value, str) else f"{m.cached_value:,.10g}"
        _err(
            f"warning: {m.file}: {m.sheet}!{m.cell}: {m.name} (scenario {m.scenario!r}) "
            f"saved {cached} but the engine gives {engine_value}"
        )
    checks = c.tables["checks"]
    for item in checks[checks["status"] == "WARN"].itertuples(index=False):
        where = f"{item.file}: " if item.file else ""
        _err(f"warning: {where}{item.check}: {item.detail}")
    for item in checks[checks["check"] == "Run codes"].itertuples(index=False):
        if item.status == "ERROR":  # the hand-off is written, its master check ERROR
            _err(f"error: {item.check}: {item.detail}")


def _refused(lines):
    """Print the lines of a refusal; the exit code 2."""
    if len(lines) == 1:
        _err(f"error: {lines[0]}; nothing written")
        return 2
    for line in lines:
        _err(f"error: {line}")
    _err("error: the actuals above are refused; nothing written")
    return 2


def _read_actuals(args):
    """The actuals files read (before the planners: a bad row stops the run early), else
    None; :class:`~workbook_templates.actuals.ActualsError` on a bad file or row."""
    if not args.actuals:
        return None
    from ..actuals import read_actuals

    return read_actuals(args.actuals)


def _join_actuals(c, parsed):
    """Join the actuals read to the budget runs and add the plan-vs-actual tables."""
    from ..actuals import join_actuals
    from .output import as_of_date
    from .variance_tables import codes_of, run_spans, variance_tables

    c.actuals = join_actuals(parsed, run_spans(codes_of(c.budget_runs)), today=as_of_date(c))
    c.tables.update(variance_tables(c))


def _run(args):
    from ..actuals import ActualsError

    _check_flags(args)
    _check_same_inputs(args.files, int(args.max_size_mb * 1024 * 1024))
    _check_targets(args)
    try:
        return _run_checked(args, _read_actuals(args))
    except ActualsError as exc:
        return _refused(exc.lines)


def _run_checked(args, parsed):
    max_bytes = int(args.max_size_mb * 1024 * 1024)
    from udfs import own_runs

    own = own_runs.read_given(args)
    baseline = _baseline(args)
    progress, writers = Progress(len(args.files)), _Writers()
    try:
        c = consolidate_files(args.files, max_bytes=max_bytes, tolerance=args.tolerance,
                              fiscal_year_start=args.fiscal_year_start, jobs=args.jobs,
                              progress=progress.reading, own_runs=own,
                              started=writers.start)  # fmt: skip
        writers.join()
        from .compare import add_baseline
        from .forecast import add_forecast, own_runs_text
        from .output import check_in_range, write_outputs
        from .tables import build_tables

        c.version, c.baseline = args.handoff_version, baseline
        c.tables = build_tables(c)
        add_baseline(c)
        progress.clear()
        _refuse_read_twice(c)
        code = _bad_files(c, args)
        if code is not None:
            return code
        if parsed is not None:
            _join_actuals(c, parsed)
        add_forecast(c)  # with actuals (Consolidation.actuals): the forecast's tables
        check_in_range(c)  # before any warning: a refused run is one line
        progress.show(f"writing the outputs of {len(c.runs):,} run(s)", force=True)
        c.paper = args.paper
        own_out = getattr(args, "write_own_runs", None)
        own_text = None if own_out is None else own_runs_text(c, own)
        written = write_outputs(c, out=args.out, csv_dir=args.csv, force=args.force,
                                checked=True, own_runs=(own_out, own_text))  # fmt: skip
    finally:
        writers.join()
        progress.clear()
    _warnings(c)  # after the write: a failed write is one line too
    _unplanned_warnings(c)
    t = c.tables["totals"].iloc[0]
    print(
        f"Consolidated {len(c.budget_runs)} budget run(s) from {len(c.planners)} file(s): total "
        f"{usd(t['total_cost_usd'])} (Approved {usd(t['approved_total_cost_usd'])}, Proposed "
        f"{usd(t['proposed_total_cost_usd'])}; compute {usd(t['compute_cost_usd'])}, "
        f"electricity {usd(t['electricity_cost_usd'])}), P90 {usd(t['total_cost_usd_p90'])}; "
        f"{len(c.other_runs)} not in the budget; checks {c.master_status}; "
        f"{len(c.mismatches)} saved value(s) differ from the engine; {len(c.unscheduled)} "
        f"run(s) unscheduled; {len(c.bad)} bad file(s) skipped."
    )
    if parsed is not None:
        print(_actuals_line(c))
    if args.out is not None:
        print(f"Wrote {args.out}")
    if args.csv is not None:
        csv_count = len(written) - (args.out is not None) - (own_out is not None)
        print(f"Wrote {csv_count} CSV files to {args.csv}")
    if own_out is not None:
        print(f"Wrote {own_text.count(chr(10)) - 1} own run(s) to {own_out}")
    return 0


def _actuals_line(c):
    """The summary line of the actuals (:func:`.variance_tables.actuals_sentence`), the
    dollars as the line above writes them (:func:`usd`)."""
    from .variance_tables import actuals_sentence

    return actuals_sentence(c.variance_totals, usd)


def _unplanned_warnings(c):
    """One ``warning:`` line per unplanned run and month (at most MAX_LINES_SHOWN, then how
    many more), on stderr."""
    from ..actuals import MAX_LINES_SHOWN

    unplanned = getattr(getattr(c, "actuals", None), "unplanned", [])
    for m in unplanned[:MAX_LINES_SHOWN]:
        _err(
            f"warning: {m.source}: run code {m.run_code} is in no budget run of these "
            f"planners: its {m.month:%Y-%m} spend is shown as unplanned"
        )
    if len(unplanned) > MAX_LINES_SHOWN:
        _err(
            f"warning: ... and {len(unplanned) - MAX_LINES_SHOWN:,} more unplanned run "
            "month(s): see the Variance sheet"
        )
