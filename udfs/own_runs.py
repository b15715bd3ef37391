"""A team's own completed runs, read from a CSV file and pooled into the default MFU.

File format (issue 17): CSV with the header ``name,organisation,active_params,total_params,
tokens,accelerator,accelerators,accelerator_hours``, one completed run a row. Numbers as on the
command line (``70B``, ``2T``, plain digits: the caller passes its number parser); the
accelerator as the catalogue names it (or an alias). A bad file raises one
:class:`~udfs.validation.CommandError` naming the file, the row and the column: a missing
column, an unknown accelerator, a duplicate name, a non-positive or non-finite figure, a field
over :data:`~udfs.validation.MAX_TEXT_CHARS` characters or holding a control character, a
file too large (:data:`MAX_FILE_BYTES`, :data:`MAX_OWN_RUNS`), not text, or not a regular file
(a FIFO, a device, a folder: refused before it is read, so nothing waits on it).

A file (and the planner's Our runs sheet) holds one organisation's runs: a blank
``organisation`` is that organisation, and a second distinct one (compared as names are:
:func:`name_key`) is refused, naming its row. The runs are one more organisation
(:func:`read` -> :class:`OwnRuns`). Each run's residual is ln(its implied MFU / the calibrated
default MFU for its accelerator and size). A plan's default MFU moves toward the runs in its
pooling group (:func:`udfs.calibration.pooling_group`: the plan's generation when it is a
calibrated one, else the plan's accelerator itself) by partial pooling, runs of a size like
the plan's counting most: each run weighs ``w = EXP(-|LN(its active / the plan's)| / h)``, and
the calibrated default is multiplied by ``EXP(sum(w x residual) / (n_w + k))``, n_w the summed
weights, ``pull = n_w / (n_w + k)``. h and k (``own_runs_size_h``, ``own_runs_k`` in
``udfs/data/calibration.toml``) are chosen on the catalogue's organisations
(:func:`udfs.refit.own_runs_design`): more runs, and closer in size, more pull. Runs in
another group do not pull (on the public record an organisation's runs on another generation
pull the wrong way as often as the right one; an MI300X is no guide to a B200). The moved MFU
is kept within the calibrated default's bounds (:data:`udfs.calibration.MFU_MIN`,
``MFU_MAX``). The spread narrows with them: each part loses the pull x the share of it own
runs remove, fitted on the catalogue with whole organisations held out
(:func:`udfs.refit.narrowing_design`; ``own_runs_base_narrowing`` of sigma^2,
``own_runs_small_narrowing`` of a small model's extra variance, all of an uncalibrated
accelerator's extra variance), the part at and above the small-model size never below
``own_runs_narrowest_sigma``^2 (the narrowest spread for which the small-model ramp keeps P90
hours from falling as a model grows past 5B at a given pull): the spec's
``own_runs_plan_sigma``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import os
import stat
import threading

import numpy as np

from . import calibration, catalogue, engine, model
from ._lazy import lazy_module
from .quantities import MAX_COUNT, MAX_RUN_FIGURE
from .validation import (
    MAX_TEXT_CHARS,
    SMALLEST_NORMAL,
    CommandError,
    InputError,
    control_character,
)

pd = lazy_module("pandas")  # OwnRuns.table only: reading runs and pooling need none

__all__ = [
    "COLUMNS",
    "REQUIRED",
    "NUMBERS",
    "BOUNDS",
    "ADVICE",
    "TEXT_ADVICE",
    "MAX_FILE_BYTES",
    "MIN_IMPLIED_MFU",
    "MAX_OWN_RUNS",
    "OwnRuns",
    "read",
    "read_given",
    "parse",
    "from_rows",
    "name_key",
    "own_runs_weight",
    "own_runs_pull",
    "pooling_figures",
    "narrowed_sigma",
]

#: The columns of an own-runs file, in this order or any other.
COLUMNS = (
    "name",
    "organisation",
    "active_params",
    "total_params",
    "tokens",
    "accelerator",
    "accelerators",
    "accelerator_hours",
)
#: The figures of a run: each a finite number greater than 0 (text such as 70B or 2T reads as
#: a number, as on the command line; in the planner, as the Inputs sheet reads it).
NUMBERS = ("active_params", "total_params", "tokens", "accelerators", "accelerator_hours")
#: Each figure's bounds (least, most), checked by the engine and by the planner's row check
#: alike: at least the smallest normal double (below it a figure is too close to 0 to compute
#: with, as :mod:`udfs.numbers` says) and at most
#: :data:`~udfs.quantities.MAX_RUN_FIGURE` (accelerators: :data:`~udfs.quantities.MAX_COUNT`):
#: text beyond the largest double (``1e999``) reads as 1.8e308 in LibreOffice, and a figure
#: far past any run would overflow the implied MFU on one face and not the other.
BOUNDS = {
    c: (SMALLEST_NORMAL, MAX_COUNT if c == "accelerators" else MAX_RUN_FIGURE) for c in NUMBERS
}
#: The columns a run needs (every one but ``organisation``): a row with only some of them is
#: refused here and is an ERROR on the planner's Checks ("Our runs" rows).
REQUIRED = tuple(c for c in COLUMNS if c != "organisation")


def _e(x):
    """A bound as the messages and the Checks spell it, as the command line's: 1e15."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


#: Smallest implied MFU a run may have (0.1%): below it the figures are not a training run
#: (hours typed in seconds, parameters in units) and would drag a plan's MFU to its floor.
MIN_IMPLIED_MFU = 1e-3
#: What to do about each broken rule: the refusals here and the planner's Checks say the same.
ADVICE = {
    "complete": "fill every column but organisation, or clear the row",
    "figures": f"type numbers greater than 0 (7E9 or 7B) and at most {_e(MAX_RUN_FIGURE)} "
    f"(accelerators {_e(MAX_COUNT)}), active parameters at most total, enough "
    f"accelerator-hours for an implied MFU of at most 1 and not so many that it falls below "
    f"{MIN_IMPLIED_MFU:.1%}",
    "accelerator": "type the accelerator as the catalogue names it (Accelerators sheet; "
    "compute-lab accelerators)",
    "unique": "give each run its own name",
    "organisation": "keep one organisation's runs (the same organisation on every row, or "
    "blank); put another organisation's runs in a file or planner of their own",
}
#: What to do about a field that is not plain text of one line (a file's or a planner row's).
TEXT_ADVICE = (
    f"type plain text of at most {MAX_TEXT_CHARS} characters on one line (no control "
    "characters, line breaks or bidirectional overrides)"
)
#: Largest own-runs file read (bytes), checked before it is parsed.
MAX_FILE_BYTES = 1_000_000
#: Most runs in one file.
MAX_OWN_RUNS = 1_000


@dataclasses.dataclass(frozen=True, eq=False)
class OwnRuns:
    """A team's runs as plain columns, and the pooling. ``columns`` maps each column (the
    file's, the row number ``row``, the accelerator's catalogue name, ``implied_mfu``,
    ``calibrated_mfu``, ``residual``, ``generation`` and ``group``) to a 1-D numpy array, one
    value a run: no pandas on the way to an estimate (issue 19: a fast start). ``table``
    builds the pandas DataFrame for a caller that wants one. The arrays are read-only."""

    columns: dict

    def __post_init__(self):
        for values in self.columns.values():
            values.setflags(write=False)

    def __getitem__(self, column):
        """One column's array: ``runs["implied_mfu"]``."""
        return self.columns[column]

    @property
    def count(self):
        return len(self.columns["name"])

    @property
    def table(self):
        """The runs as a pandas DataFrame (one row a run, the columns in order): imports
        pandas, so only a caller that prints or exports a table asks for it."""
        return pd.DataFrame(self.columns)

    def records(self):
        """The runs as a list of {column: value}, values as Python numbers and text."""
        lists = {c: v.tolist() for c, v in self.columns.items()}
        return [{c: lists[c][i] for c in lists} for i in range(self.count)]

    def select(self, mask):
        """The runs where ``mask`` (a boolean array, one value a run) is true."""
        mask = np.asarray(mask, dtype=bool)
        return OwnRuns({c: v[mask] for c, v in self.columns.items()})

    @property
    def organisation(self):
        """The runs' organisation as typed first ("" when every row leaves it blank)."""
        typed = [o for o in self.columns["organisation"] if str(o).strip()]
        return str(typed[0]).strip() if typed else ""

    def _same_group(self, accelerator):
        group = str(calibration.pooling_group(accelerator or ""))
        if group == "":
            return np.zeros(self.count, dtype=bool)
        return self.columns["group"] == group

    def count_for(self, accelerator):
        """Own runs in the accelerator's pooling group (the runs that pull a plan on it: its
        calibrated generation, else that accelerator)."""
        return int(self._same_group(accelerator).sum())

    def _pull(self, accelerator, active_params):
        """(shift, pull) of plans on ``accelerator`` with ``active_params`` (scalar or array):
        :func:`own_runs_pull` over the runs in the plan's pooling group, with
        the stored ``own_runs_size_h`` and ``own_runs_k``."""
        same = self._same_group(accelerator)
        f = calibration.fitted()
        ln_active = np.log(np.asarray(active_params, dtype=float))
        return own_runs_pull(
            np.log(self.columns["active_params"][same]),
            self.columns["residual"][same],
            ln_active,
            f["own_runs_size_h"],
            f["own_runs_k"],
        )

    def pull_for(self, accelerator, active_params):
        """n_w / (n_w + k): how far the default MFU of a plan on ``accelerator`` with
        ``active_params`` moves toward the runs in its pooling group, n_w their weights by
        closeness in size (0 without any)."""
        return self._pull(accelerator, active_params)[1]

    def shift_for(self, accelerator, active_params):
        """The plan's ln-MFU shift toward its pooling group's runs: sum(weight x residual) /
        (n_w + k) (0 without any)."""
        return self._pull(accelerator, active_params)[0]

    def moved_mfu(self, accelerator, active_params):
        """The calibrated default MFU x EXP(:meth:`shift_for`), before the bounds."""
        base = calibration.predicted_mfu(accelerator, active_params)
        return base * np.exp(self.shift_for(accelerator, active_params))

    def mfu(self, accelerator, active_params):
        """The default MFU pulled toward the runs in the plan's pooling group, kept within
        the calibrated default's bounds (:data:`udfs.calibration.MFU_MIN`, ``MFU_MAX``)."""
        return self.kept(self.moved_mfu(accelerator, active_params))

    @staticmethod
    def kept(moved):
        """A moved MFU kept within the calibrated default's bounds."""
        return np.clip(moved, calibration.MFU_MIN, calibration.MFU_MAX)

    def sigma(self, accelerator, active_params):
        """The plan's calibrated spread, narrowed by what the runs tell (sigma of ln hours):
        :func:`narrowed_sigma` at the plan's pull."""
        return narrowed_sigma(accelerator, active_params, self.pull_for(accelerator, active_params))


def own_runs_weight(ln_distance, h):
    """A team's run's weight in a plan's pull: EXP(-|ln(its active params / the plan's)| / h),
    ``ln_distance`` the ln of that ratio (:func:`own_runs_pull`)."""
    return np.exp(-np.abs(ln_distance) / h)


def own_runs_pull(run_ln_active, run_residual, plan_ln_active, h, k):
    """(shift, pull) of plans toward a team's runs in their pooling group; vectorised.

    Each run weighs w = EXP(-|ln(its active params / the plan's)| / h); with n_w the summed
    weights, the plan's ln MFU moves by shift = sum(w x residual) / (n_w + k) and
    pull = n_w / (n_w + k) (0 and 0 without runs). ``run_ln_active`` and ``run_residual`` are
    the runs' ln(active params) and residuals (1-D); ``plan_ln_active`` the plans' ln(active
    params), any shape; the results have the plans' shape.

    Examples
    --------
    One run of the plan's size with residual +0.2, h = 1, k = 0.25: pull 1 / 1.25 = 0.8,
    shift 0.16.

    >>> shift, pull = own_runs_pull([np.log(7e9)], [0.2], np.log(7e9), 1.0, 0.25)
    >>> round(shift, 12), round(pull, 12)
    (0.16, 0.8)
    """
    runs = np.asarray(run_ln_active, dtype=float)
    plan = np.asarray(plan_ln_active, dtype=float)
    w = own_runs_weight(plan[..., None] - runs, h)
    n = w.sum(axis=-1)
    shift, pull = (w @ np.asarray(run_residual, dtype=float)) / (n + k), n / (n + k)
    if plan.ndim == 0:
        return float(shift), float(pull)
    return shift, pull


def pooling_figures():
    """The stored pooling numbers and what they mean, as the faces describe them: ``h``,
    ``k``, ``weight_10x`` (the weight of a run 10x larger or smaller than the plan) and
    ``one_run_pull`` (the pull of one run of the plan's size), from
    :func:`own_runs_pull` itself."""
    f = calibration.fitted()
    h, k = f["own_runs_size_h"], f["own_runs_k"]
    _, one = own_runs_pull([0.0], [0.0], 0.0, h, k)
    weight_10x = float(own_runs_weight(math.log(10), h))
    return {"h": h, "k": k, "weight_10x": weight_10x, "one_run_pull": one}


def narrowed_sigma(accelerator, active_params, pull):
    """The calibrated spread of plans on ``accelerator`` with ``active_params``, narrowed by
    a team's runs that pull them by ``pull`` (the spec's ``own_runs_plan_sigma``): each part
    of the spread loses pull x the share of it own runs remove (``own_runs_base_narrowing``
    of sigma^2, ``own_runs_small_narrowing`` of the small model's extra variance, all of the
    accelerator's extra variance, 0 on a calibrated generation; the shares fitted with
    whole organisations held out, :func:`udfs.refit.narrowing_design`), the part at and
    above the small-model size never below ``own_runs_narrowest_sigma``, the narrowest
    spread for which the small-model ramp keeps P90 hours from falling as a model grows past
    that size at a given pull."""
    f = calibration.fitted()
    values = calibration.spread_inputs(
        calibration.accelerator_extra_sigma(accelerator or ""), active_params
    )
    values.update(
        own_runs_pull=pull,
        own_runs_base_narrowing=f["own_runs_base_narrowing"],
        own_runs_small_narrowing=f["own_runs_small_narrowing"],
        mfu_ln_slope=calibration.default_mfu_model().slope,
    )
    return model.evaluate(values, ["own_runs_plan_sigma"])["own_runs_plan_sigma"]


def name_key(name):
    """A run name as names are compared (spaces trimmed and runs of spaces made one, as the
    spreadsheet TRIM does; case ignored): two runs whose keys are equal are a duplicate."""
    return " ".join(p for p in str(name or "").split(" ") if p).lower()


def _fail(path, row, column, rule):
    where = f"row {row}" + (f", column {column}" if column else "")
    raise CommandError(f"{path}: {where}: {rule}")


def _records(text, path):
    """(row number, fields) of each record of the CSV ``text``, the header row 1 (a blank line
    is a row, as a spreadsheet shows the file); a record the csv module cannot split is one
    line naming its row."""
    reader = csv.reader(io.StringIO(text, newline=""))
    row = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            _fail(path, row + 1, None, f"cannot be split into CSV fields ({err})")
        row += 1
        yield row, fields


def _header(path, header):
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        _fail(path, 1, missing[0], f"missing column (the header needs {', '.join(COLUMNS)})")


def _number(fail, column, text, parse_number):
    try:
        value = parse_number(text)
    except Exception as err:  # the caller's parser: any refusal is one line here
        said = str(err) if str(err).startswith("must be a number") else f"must be a number ({err})"
        fail(column, f"{said}: {ADVICE['figures']}")
    if not (math.isfinite(value) and value > 0):
        fail(column, f"must be a finite number greater than 0 (got {text!r}): {ADVICE['figures']}")
    least, most = BOUNDS[column]
    if value < least:
        fail(
            column,
            f"is too close to 0 to compute with (below {least:.1e}; got {text!r}): "
            f"{ADVICE['figures']}",
        )
    if value > most:
        fail(column, f"must be at most {_e(most)} (got {text!r}): {ADVICE['figures']}")
    return value


def _accelerator(fail, got, exact):
    """The catalogue name of accelerator ``got``: an alias too, unless ``exact`` (a planner
    row, whose formulas MATCH the catalogue's names, case ignored)."""
    try:
        name = catalogue.accelerator_record(got)["name"]
    except InputError:
        name = None
    if name is None or (exact and name_key(name) != name_key(got)):
        fail("accelerator", f"unknown accelerator {got.strip()!r}: {ADVICE['accelerator']}")
    return name


def _row(path, i, raw, parse_number, seen, letters=None, exact=False, organisations=None):
    """One run of a file (or a planner row): the rules of :data:`REQUIRED`, :data:`NUMBERS`,
    the catalogue, unique names and one organisation, each refusal one line naming the row
    and column. ``seen`` (name key -> row) and ``organisations`` (the first non-blank
    organisation's key -> (as typed, row); None: not checked) carry the earlier rows."""

    def fail(column, rule):
        _fail(path, i, f"{letters[column]} ({column})" if letters else column, rule)

    text = {c: "" if raw.get(c) is None else str(raw.get(c)) for c in COLUMNS}
    for column in COLUMNS:
        _plain_text(fail, column, text[column])
    text = {c: t.strip() for c, t in text.items()}
    for column in REQUIRED:
        if not text[column]:
            fail(column, f"is blank: {ADVICE['complete']}")
    name = text["name"]
    if name_key(name) in seen:
        fail(
            "name", f"duplicate name {name!r} (also row {seen[name_key(name)]}): {ADVICE['unique']}"
        )
    seen[name_key(name)] = i
    _one_organisation(fail, i, text["organisation"], organisations)
    row = {"row": i, "name": name, "organisation": text["organisation"]}
    for column in NUMBERS:
        row[column] = _number(fail, column, text[column], parse_number)
    if row["active_params"] > row["total_params"]:
        fail("active_params", f"must be at most total_params: {ADVICE['figures']}")
    row["accelerator"] = _accelerator(fail, text["accelerator"], exact)
    return row


def _plain_text(fail, column, text):
    """The rule of every field: at most :data:`~udfs.validation.MAX_TEXT_CHARS` characters
    (spaces around it aside), none of them a control character, a line break or a
    bidirectional override (:func:`~udfs.validation.control_character`: a name is printed in
    tables and messages, and written into the planner, which cannot hold a control
    character)."""
    length = len(text.strip())
    if length > MAX_TEXT_CHARS:
        fail(
            column,
            f"is {length:,} characters long, over the limit of {MAX_TEXT_CHARS} "
            f"(MAX_TEXT_CHARS; starts {text.strip()[:20]!r}): {TEXT_ADVICE}",
        )
    bad = control_character(text)
    if bad is not None:
        fail(column, f"holds the control character {bad}: {TEXT_ADVICE}")


def _one_organisation(fail, i, organisation, organisations):
    """The rule of one organisation a file: the first non-blank organisation is recorded in
    ``organisations``; another distinct one (:func:`name_key`) is refused."""
    key = name_key(organisation)
    if organisations is None or not key:
        return
    if organisations and key not in organisations:
        ((first, row),) = organisations.values()
        fail(
            "organisation",
            f"organisation {organisation!r} differs from {first!r} (row "
            f"{row}): a file holds one organisation's runs: {ADVICE['organisation']}",
        )
    organisations.setdefault(key, (organisation, i))


#: Held while :func:`parse` has the csv module's field limit (one setting for the whole
#: process) raised to :data:`MAX_FILE_BYTES`.
_FIELD_LIMIT = threading.Lock()


def parse(text, path, parse_number):
    """:class:`OwnRuns` from the CSV ``text`` of file ``path`` (named in errors). A field of
    any length up to the file's is split off (the csv module's own limit, 131,072 characters,
    is raised for the parse) and refused by the rules of a field, naming its row and
    column."""
    with _FIELD_LIMIT:
        before = csv.field_size_limit(MAX_FILE_BYTES)
        try:
            rows = _rows(_records(text, path), path, parse_number)
        finally:
            csv.field_size_limit(before)
    return OwnRuns(_implied(_columns(rows), path))


def _rows(records, path, parse_number):
    """The checked runs of a file's ``records`` (:func:`_records`)."""
    _, header = next(records, (1, []))
    _header(path, header)
    rows, seen, organisations = [], {}, {}
    for i, fields in records:
        if not any(v.strip() for v in fields):
            continue  # a blank line
        if len(rows) == MAX_OWN_RUNS:
            _fail(path, i, None, f"more than {MAX_OWN_RUNS:,} runs (MAX_OWN_RUNS)")
        raw = dict(zip(header, fields, strict=False))
        rows.append(_row(path, i, raw, parse_number, seen, organisations=organisations))
    if not rows:
        _fail(path, 2, None, "no runs (a header and at least one run are needed)")
    return rows


def _columns(rows):
    """Plain columns of the checked rows (a list of {column: value}, the same keys in each):
    {column: 1-D array}, text as an object array, numbers as numpy reads the values."""
    out = {}
    for column in rows[0]:
        values = [r[column] for r in rows]
        if all(isinstance(v, str) for v in values):
            out[column] = np.array(values, dtype=object)
        else:
            out[column] = np.asarray(values)
    return out


def _implied(t, path="own runs", letters=None):
    """The columns ``t`` with each run's implied MFU, calibrated default MFU, residual,
    generation and pooling group added (the accelerators' peaks looked up without pandas)."""
    names = t["accelerator"]
    peaks = {n: catalogue.accelerator_record(n)["bf16_tflops"] for n in set(names)}
    peak = np.array([peaks[n] for n in names], dtype=float)
    flops = engine.training_flops(t["active_params"], t["tokens"])

    def hours_fail(i, too, mfu):
        """Refuse run ``i``'s accelerator-hours: too few or too many for its FLOPs."""
        column = "accelerator_hours"
        _fail(
            path,
            t["row"][i] if "row" in t else i + 2,
            f"{letters[column]} ({column})" if letters else column,
            f"is too {too} for these tokens and parameters on this accelerator (the implied "
            f"MFU is {mfu}): {ADVICE['figures']}",
        )

    try:
        t["implied_mfu"] = engine.implied_mfu(flops, t["accelerator_hours"], peak)
    except InputError as err:
        hours_fail(err.position[0] if err.position else 0, "few", "above 1")
    low = np.flatnonzero(~(t["implied_mfu"] >= MIN_IMPLIED_MFU))
    if low.size:
        hours_fail(int(low[0]), "many", f"below {MIN_IMPLIED_MFU:.1%}")
    t["calibrated_mfu"] = calibration.predicted_mfu(names, t["active_params"])
    t["residual"] = np.log(t["implied_mfu"] / t["calibrated_mfu"])
    t["generation"] = calibration.generation_of(names)
    t["group"] = calibration.pooling_group(names)
    return t


def from_rows(rows, where, letters=None):
    """:class:`OwnRuns` of rows typed in a workbook: ``rows`` a list of (row number, {column:
    value}), values as read from the cells (numbers, text or None); ``where`` names the sheet
    in errors, ``letters`` ({column: sheet column letter}) the column. None when there are no
    rows. The rules of a file, with the planner's reading: text such as 70B as the Inputs
    sheet reads it (:func:`udfs.numbers.parse_size`), an accelerator by its catalogue name
    (case ignored); refusals as :func:`parse`'s, one line."""
    if not rows:
        return None
    out, seen, organisations = [], {}, {}
    for i, raw in rows:
        text = {c: "" if v is None else str(v) for c, v in raw.items()}
        out.append(_row(where, i, text, _cell_number, seen, letters, True, organisations))
    return OwnRuns(_implied(_columns(out), where, letters))


def _cell_number(text):
    """A number typed in a cell: a number (a negative one too, refused for its sign), or text
    of the planner's grammar (``70B``, ``2T``, ``1.5e12``)."""
    from .numbers import parse_size

    return float(text) if text.startswith("-") else parse_size(text)


def _regular(path, info):
    """Refuse ``path`` unless ``info`` (its stat) is a regular file's of at most
    :data:`MAX_FILE_BYTES`."""
    if not stat.S_ISREG(info.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(info.st_mode)
            else "a FIFO (named pipe)"
            if stat.S_ISFIFO(info.st_mode)
            else "a device or socket"
        )
        raise CommandError(f"{path}: is {kind}, not a regular file: give the own-runs CSV file")
    if info.st_size > MAX_FILE_BYTES:
        raise CommandError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes (MAX_FILE_BYTES)")


def _read_bytes(path):
    """The bytes of the regular file ``path``: a FIFO, a device or a folder is refused by its
    stat before it is opened, and by the opened file's stat (opened without waiting for a
    writer), so that a path changed in between is refused too and nothing blocks."""
    if not str(path):  # "" would be the current folder to some calls, no file to others
        raise CommandError("--own-runs is empty; give the own-runs CSV file, e.g. runs.csv")
    try:
        _regular(path, os.stat(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as err:
        raise CommandError(f"{path}: cannot read the own-runs file ({err.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        _regular(path, os.fstat(fh.fileno()))
        try:
            data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as err:
            raise CommandError(f"{path}: cannot read the own-runs file ({err.strerror})") from None
    if len(data) > MAX_FILE_BYTES:  # grew since its stat
        raise CommandError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes (MAX_FILE_BYTES)")
    return data


def read(path, parse_number):
    """:class:`OwnRuns` of the CSV file ``path``; one :class:`CommandError` line if it is bad."""
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not a UTF-8 CSV text file") from None
    return parse(text, path, parse_number)


def read_given(args, parse_number=None):
    """:func:`read` of a command line's ``--own-runs FILE`` (``args.own_runs``), or None when
    the flag is not given: the one reader of every command that takes the flag (``estimate``,
    ``runs``, ``templates``, ``report``). Numbers are read by ``parse_number``, else by the
    command line's parser passed down as ``args.parse_number`` (the faces cannot import it)."""
    path = getattr(args, "own_runs", None)
    if path is None:
        return None
    return read(path, parse_number or args.parse_number)
