"""The catalogue: reference training runs and accelerators, with a source for every figure.

The figures live in ``udfs/data/runs.toml`` and ``udfs/data/accelerators.toml``. This module
loads them into pandas DataFrames and looks entries up by name or alias, ignoring case,
spaces, hyphens and underscores ("deepseek-v3", "Llama 3.1 405B", "h100"). An unknown name
raises :class:`UnknownNameError`, which lists the known names.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
import tomllib
import types
from importlib import resources

from .validation import InputError

__all__ = [
    "ACCELERATOR_FIELDS",
    "RUN_FIELDS",
    "UnknownNameError",
    "accelerators",
    "runs",
    "accelerator",
    "run",
    "accelerator_field",
    "run_field",
    "source",
]

#: Numeric and text fields of an accelerator, with their units.
ACCELERATOR_FIELDS = {
    "name": "",
    "bf16_tflops": "TFLOP/s",
    "fp8_tflops": "TFLOP/s",
    "hbm_gb": "GB",
    "hbm_tb_per_s": "TB/s",
    "scale_up_gb_per_s": "GB/s",
    "tdp_watts": "W",
}

#: Fields of a reference run, with their units.
RUN_FIELDS = {
    "name": "",
    "architecture": "",
    "role": "",
    "organisation": "",
    "family": "",
    "hours_basis": "",
    "confidence": "",
    "total_params": "parameters",
    "active_params": "parameters",
    "training_tokens": "tokens",
    "accelerator": "",
    "accelerators": "accelerators",
    "accelerator_hours": "accelerator-hours",
    "disclosed_training_flops": "FLOPs",
    "disclosed_mfu": "fraction",
    "disclosed_tflops_per_accelerator": "TFLOP/s",
    "watts_per_accelerator": "W",
    "pue": "ratio",
    "grams_co2_per_kwh": "gCO2/kWh",
    "usd_per_accelerator_hour": "US$/accelerator-hour",
    "tco2e": "tCO2e",
}

_TEXT_FIELDS = {
    "name",
    "architecture",
    "role",
    "accelerator",
    "organisation",
    "family",
    "hours_basis",
    "confidence",
}

#: Keys a data-file row may carry besides its figures. A run's ``calibration = false`` keeps
#: it out of the calibration set (its hours are not the developer's own disclosure).
_EXTRA_KEYS = {
    "accelerator": {"aliases", "source", "sources"},
    "run": {"aliases", "source", "sources", "calibration"},
}


#: A catalogue of more names than this is not written out in an error (the run catalogue has
#: 60: one line of them is unreadable on a terminal and in a cell's error): the error suggests
#: the :data:`CLOSE_NAMES` closest names instead. The accelerators (16) are still listed whole.
MAX_NAMES_LISTED = 20

#: How many of the closest names (difflib's ratio) an error suggests for a long catalogue.
CLOSE_NAMES = 3

#: How close (difflib's ratio, 0 to 1) a name must be to be suggested: below it, none is.
CLOSE_NAME_RATIO = 0.5

#: Where every name of a long catalogue is listed, said after the suggestions.
_LISTED_IN = {"run": "`compute-lab runs` and docs/methodology-calibration.md list them"}


class UnknownNameError(InputError):
    """A catalogue name or field that is not there. The message lists the known ones, or, for
    a catalogue of more than :data:`MAX_NAMES_LISTED`, suggests the :data:`CLOSE_NAMES`
    closest (``aliases``: key -> canonical name, matched too) and says where all are listed."""

    def __init__(self, argument, what, given, known, aliases=None):
        self.known = list(known)
        if len(self.known) <= MAX_NAMES_LISTED:
            rule = f"is not a known {what}; known: {', '.join(self.known)}"
        else:
            close = closest_names(given, self.known, aliases)
            said = ", ".join(close[:-1]) + f" or {close[-1]}" if len(close) > 1 else "".join(close)
            where = _LISTED_IN.get(what)
            rule = f"is not a known {what}" + (f"; did you mean {said}?" if close else "")
            rule += f" ({len(self.known)} {what}s in all" + (f": {where})" if where else ")")
        super().__init__(argument, rule, value=given)


def closest_names(given, known, aliases=None):
    """At most :data:`CLOSE_NAMES` names of ``known`` closest to ``given``, each at least
    :data:`CLOSE_NAME_RATIO` alike (difflib's ratio on the names with case, spaces and
    punctuation dropped; ``aliases``, key -> name, count too), closest first."""
    keys = {_key(name): name for name in known} | dict(aliases or {})
    ranked = difflib.get_close_matches(_key(given), list(keys), len(keys), CLOSE_NAME_RATIO)
    return list(dict.fromkeys(keys[k] for k in ranked))[:CLOSE_NAMES]


_KEY_NOISE = re.compile(r"[\s\-_()]+")


def _key(name):
    return _KEY_NOISE.sub("", str(name)).lower()


@functools.cache
def _load(kind):
    table = {"accelerator": "accelerators.toml", "run": "runs.toml"}[kind]
    text = resources.files("udfs").joinpath("data", table).read_text(encoding="utf-8")
    rows = tomllib.loads(text)[kind]
    fields = ACCELERATOR_FIELDS if kind == "accelerator" else RUN_FIELDS
    for row in rows:
        unknown = set(row) - set(fields) - _EXTRA_KEYS[kind]
        if unknown:  # a typo in the data file must not silently drop a figure
            raise ValueError(f"{table}: {row['name']}: unknown fields {sorted(unknown)}")
    index = {}
    for row in rows:
        for alias in [row["name"], *row.get("aliases", [])]:
            index.setdefault(_key(alias), row["name"])
    return rows, index


def _frame(kind):
    import pandas as pd  # the tables only: a lookup by name (a plan's accelerator) needs none

    rows, _ = _load(kind)
    fields = ACCELERATOR_FIELDS if kind == "accelerator" else RUN_FIELDS
    data = [
        {f: row.get(f, None if f in _TEXT_FIELDS else math.nan) for f in fields} for row in rows
    ]
    df = pd.DataFrame(data, columns=list(fields)).set_index("name", drop=False)
    df.index.name = None
    if kind == "run":
        df["in_calibration"] = [bool(row.get("calibration", True)) for row in rows]
    df["source"] = [row["source"] for row in rows]  # last, as every table shows it
    return df


@functools.cache
def _cached_frame(kind):
    return _frame(kind)


def accelerators():
    """The accelerator catalogue as a DataFrame indexed by name (blank figures are NaN)."""
    return _cached_frame("accelerator").copy()


def runs():
    """The reference runs as a DataFrame indexed by name (undisclosed figures are NaN).

    Besides :data:`RUN_FIELDS` and ``source``, ``in_calibration`` is False for a run whose
    accelerator-hours are not the developer's own disclosure (see :mod:`udfs.calibration`).
    """
    return _cached_frame("run").copy()


def _resolve(kind, name, argument):
    rows, index = _load(kind)
    if not isinstance(name, str) or not name.strip():
        raise InputError(argument, f"must be the name of a {kind} (text)", value=name)
    canonical = index.get(_key(name))
    if canonical is None:
        raise UnknownNameError(argument, kind, name, [r["name"] for r in rows], index)
    return _row_of(kind)[canonical]


@functools.cache
def _row_of(kind):
    """Each row of the ``kind`` table by its canonical name (a look-up, not a scan)."""
    return {row["name"]: row for row in _load(kind)[0]}


def accelerator(name, argument="accelerator"):
    """One accelerator's figures as a Series. ``accelerator("h100")["bf16_tflops"]`` -> 989.4."""
    return _cached_frame("accelerator").loc[_resolve("accelerator", name, argument)["name"]].copy()


@functools.cache
def _record(kind, canonical):
    rows, _ = _load(kind)
    row = next(r for r in rows if r["name"] == canonical)
    fields = ACCELERATOR_FIELDS if kind == "accelerator" else RUN_FIELDS
    out = {}
    for f in fields:
        value = row.get(f, None if f in _TEXT_FIELDS else math.nan)
        out[f] = value if f in _TEXT_FIELDS or value is None else float(value)
    out["source"] = row["source"]
    return types.MappingProxyType(out)


def accelerator_record(name, argument="accelerator"):
    """One accelerator's figures as a read-only mapping (the fields of :func:`accelerator`,
    numbers as floats, blank figures NaN): a lookup by name without pandas, cached."""
    return _record("accelerator", _resolve("accelerator", name, argument)["name"])


def run(name, argument="run"):
    """One reference run's figures as a Series. ``run("deepseek-v3")["active_params"]``."""
    return _cached_frame("run").loc[_resolve("run", name, argument)["name"]].copy()


def run_record(name, argument="run"):
    """One reference run's figures as a read-only mapping (the fields of :func:`run` but
    ``in_calibration``, numbers as floats, undisclosed figures NaN): without pandas, cached."""
    return _record("run", _resolve("run", name, argument)["name"])


def _field(kind, name, field, argument, field_argument):
    fields = ACCELERATOR_FIELDS if kind == "accelerator" else RUN_FIELDS
    row = _resolve(kind, name, argument)
    key = str(field).strip().lower() if isinstance(field, str) else field
    if key not in fields and key != "source":
        raise UnknownNameError(field_argument, f"{kind} field", field, [*fields, "source"])
    return row.get(key)


def accelerator_field(name, field, argument="name", field_argument="field"):
    """One figure of one accelerator, or None where it is not published."""
    return _field("accelerator", name, field, argument, field_argument)


def run_field(name, field, argument="name", field_argument="field"):
    """One figure of one reference run, or None where it is not disclosed."""
    return _field("run", name, field, argument, field_argument)


def source(kind, name, field=None):
    """The source of one figure (``kind`` is "accelerator" or "run"); the row's by default."""
    row = _resolve(kind, name, kind)
    if field is not None and field in row.get("sources", {}):
        return row["sources"][field]
    return row["source"]
