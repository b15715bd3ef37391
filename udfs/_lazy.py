"""A module imported on first use: ``pd = lazy_module("pandas")`` keeps ``pd.DataFrame``
working while a path that never touches it (``compute-lab estimate``, a single-cell formula)
starts without importing it (issue 19: a fast start)."""

from __future__ import annotations

import importlib

__all__ = ["lazy_module"]


class _LazyModule:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attribute):
        module = importlib.import_module(self._name)
        return getattr(module, attribute)

    def __repr__(self):
        return f"<module {self._name!r}, imported on first use>"


def lazy_module(name):
    """A stand-in for module ``name`` that imports it at its first attribute lookup."""
    return _LazyModule(name)
