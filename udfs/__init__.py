"""Compute Lab's formula library: the engine, the catalogue and the Excel functions.

``import udfs`` is cheap and needs no Excel: the Excel functions (``udfs.TRAIN_DAYS`` ...)
are loaded from :mod:`udfs.excel` on first use, so importing :mod:`udfs.engine` alone never
imports xlwings.
"""

import importlib
import importlib.util

__version__ = "0.1.0"


def __getattr__(name):
    # Submodules (``from . import engine``) and private names are not Excel functions.
    if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(name)
    excel = _excel()
    try:
        return getattr(excel, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def _excel():
    try:
        return importlib.import_module(f"{__name__}.excel")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.excel":
            raise
        return None


def __dir__():
    excel = _excel()
    return sorted(set(globals()) | set(getattr(excel, "__all__", ())))
