"""A team's own completed runs, read from a CSV file and pooled into the default MFU.

File format (issue 17): CSV with the header ``name,organisation,active_params,total_params,
tokens,accelerator,accelerators,accelerator_hours``, one completed run a row. Numbers as on the
command line (``70B``, ``2T``, plain digits: the caller passes its number parser); the
accelerator as the catalogue names it (or an alias). A bad file raises one
:class:`~udfs.validation.CommandError` naming the file, the row and the column: a missing
column, an unknown accelerator, a duplicate name, a non-positive or non-finite figure, a file
too large (:data:`MAX_FILE_BYTES`, :data:`MAX_OWN_RUNS`) or not text.

The runs are one more organisation (:func:`read` -> :class:`OwnRuns`). Each run's residual is
ln(its implied MFU / the calibrated default MFU for its accelerator and size). A plan's
default MFU moves toward the runs on its accelerator generation by partial pooling:
``EXP(pull x mean residual)`` times the calibrated default, ``pull = n / (n + k)``, n the own
runs on that generation, ``k = within^2 / between^2`` from the catalogue's grouped-validation
residuals grouped by organisation and generation (``team_within_sd``, ``team_between_sd`` in
``udfs/data/calibration.toml``; see :func:`udfs.calibration.own_runs_validation`): more runs,
more pull. Runs on another generation do not pull (on the public record they pull the wrong
way as often as the right one). The spread narrows with them: ``sigma^2 - pull x between^2``
(never below 0).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import calibration, catalogue, engine
from .validation import CommandError, InputError

__all__ = ["COLUMNS", "MAX_FILE_BYTES", "MAX_OWN_RUNS", "OwnRuns", "read", "parse", "from_rows"]

#: The columns of an own-runs file, in this order or any other.
COLUMNS = ("name", "organisation", "active_params", "total_params", "tokens", "accelerator",
           "accelerators", "accelerator_hours")  # fmt: skip
_NUMBERS = ("active_params", "total_params", "tokens", "accelerators", "accelerator_hours")
#: Largest own-runs file read (bytes), checked before it is parsed.
MAX_FILE_BYTES = 1_000_000
#: Most runs in one file.
MAX_OWN_RUNS = 1_000


@dataclasses.dataclass(frozen=True)
class OwnRuns:
    """A team's runs: ``table`` (one row per run: the file's columns, the accelerator's
    catalogue name, ``implied_mfu``, ``calibrated_mfu`` and ``residual``), and the pooling."""

    table: pd.DataFrame

    @property
    def count(self):
        return len(self.table)

    def _same_generation(self, accelerator):
        gen = str(calibration.generation_of(accelerator or ""))
        return self.table[self.table["generation"] == gen]

    def count_for(self, accelerator):
        """Own runs on the accelerator's generation (the runs that pull a plan on it)."""
        return len(self._same_generation(accelerator))

    def pull_for(self, accelerator):
        """n / (n + k), n the own runs on the accelerator's generation: how far a plan's
        default MFU moves toward them (0 without any)."""
        f = calibration.fitted()
        k = (f["team_within_sd"] / f["team_between_sd"]) ** 2
        n = self.count_for(accelerator)
        return n / (n + k)

    def shift_for(self, accelerator):
        """pull x mean residual of the same-generation own runs (ln units; 0 without any)."""
        same = self._same_generation(accelerator)
        if same.empty:
            return 0.0
        return self.pull_for(accelerator) * float(same["residual"].mean())

    def mfu(self, accelerator, active_params):
        """The default MFU pulled toward the runs on the plan's generation, clamped as the
        calibrated one."""
        base = calibration.predicted_mfu(accelerator, active_params)
        moved = base * math.exp(self.shift_for(accelerator))
        return np.clip(moved, calibration.MFU_MIN, calibration.MFU_MAX)

    def sigma(self, accelerator, active_params):
        """The plan's calibrated spread, narrowed by what the runs tell (sigma of ln hours)."""
        s = calibration.throughput_sigma_for(accelerator, active_params)
        between = calibration.fitted()["team_between_sd"]
        return np.sqrt(np.maximum(0.0, s**2 - self.pull_for(accelerator) * between**2))


def _fail(path, row, column, rule):
    where = f"row {row}" + (f", column {column}" if column else "")
    raise CommandError(f"{path}: {where}: {rule}")


def _header(path, reader):
    header = reader.fieldnames or []
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        _fail(path, 1, missing[0], f"missing column (the header needs {', '.join(COLUMNS)})")


def _number(path, i, column, text, parse_number):
    try:
        value = parse_number(text)
    except Exception as err:  # the caller's parser: any refusal is one line here
        _fail(path, i, column, f"must be a number such as 70B or 2T ({err})")
    if not (math.isfinite(value) and value > 0):
        _fail(path, i, column, f"must be a finite number greater than 0 (got {text!r})")
    return value


def _row(path, i, raw, parse_number, seen):
    name = (raw.get("name") or "").strip()
    if not name:
        _fail(path, i, "name", "is blank")
    if name.lower() in seen:
        _fail(path, i, "name", f"duplicate name {name!r} (also row {seen[name.lower()]})")
    seen[name.lower()] = i
    row = {"row": i, "name": name, "organisation": (raw.get("organisation") or "").strip()}
    for column in _NUMBERS:
        row[column] = _number(path, i, column, (raw.get(column) or "").strip(), parse_number)
    if row["active_params"] > row["total_params"]:
        _fail(path, i, "active_params", "must be at most total_params")
    try:
        row["accelerator"] = catalogue.accelerator(raw.get("accelerator") or "")["name"]
    except InputError:
        got = (raw.get("accelerator") or "").strip()
        _fail(path, i, "accelerator", f"unknown accelerator {got!r} (see compute-lab accelerators)")
    return row


def parse(text, path, parse_number):
    """:class:`OwnRuns` from the CSV ``text`` of file ``path`` (named in errors)."""
    reader = csv.DictReader(io.StringIO(text))
    _header(path, reader)
    rows, seen = [], {}
    for i, raw in enumerate(reader, start=2):
        if i - 1 > MAX_OWN_RUNS:
            _fail(path, i, None, f"more than {MAX_OWN_RUNS:,} runs (MAX_OWN_RUNS)")
        if not any((v or "").strip() for v in raw.values() if isinstance(v, str)):
            continue  # a blank line
        rows.append(_row(path, i, raw, parse_number, seen))
    if not rows:
        _fail(path, 2, None, "no runs (a header and at least one run are needed)")
    return OwnRuns(_implied(pd.DataFrame(rows), path))


def _implied(t, path="own runs"):
    peak = catalogue.accelerators().loc[t["accelerator"], "bf16_tflops"].to_numpy(float)
    flops = engine.training_flops(t["active_params"].to_numpy(), t["tokens"].to_numpy())
    try:
        t["implied_mfu"] = engine.implied_mfu(flops, t["accelerator_hours"].to_numpy(), peak)
    except InputError as err:
        i = err.position[0] if err.position else 0
        row = t["row"].iloc[i] if "row" in t else i + 2
        _fail(path, row, "accelerator_hours", "is too few for these tokens and parameters on "
              "this accelerator (the implied MFU is above 1)")  # fmt: skip
    t["calibrated_mfu"] = calibration.predicted_mfu(t["accelerator"].to_numpy(),
                                                    t["active_params"].to_numpy())  # fmt: skip
    t["residual"] = np.log(t["implied_mfu"] / t["calibrated_mfu"])
    t["generation"] = calibration.generation_of(t["accelerator"].to_numpy())
    return t


def from_rows(rows, where):
    """:class:`OwnRuns` of rows typed in a workbook: ``rows`` a list of (row number, {column:
    value}), values as read from the cells (numbers, text or None); ``where`` names the sheet
    in errors. None when there are no rows. Refusals as :func:`parse`'s, one line."""
    if not rows:
        return None
    out, seen = [], {}
    for i, raw in rows:
        text = {c: "" if v is None else str(v) for c, v in raw.items()}
        out.append(_row(where, i, text, _plain_number, seen))
    return OwnRuns(_implied(pd.DataFrame(out), where))


def _plain_number(text):
    """A number typed in a cell (a workbook holds plain numbers: 7E9, not 7B)."""
    return float(text)


def read(path, parse_number):
    """:class:`OwnRuns` of the CSV file ``path``; one :class:`CommandError` line if it is bad."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as err:
        raise CommandError(f"{path}: cannot read the own-runs file ({err.strerror})") from None
    if size > MAX_FILE_BYTES:
        raise CommandError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes (MAX_FILE_BYTES)")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        raise CommandError(f"{path}: not a UTF-8 CSV text file") from None
    return parse(text, path, parse_number)
