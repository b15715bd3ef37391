"""The ``compute-lab`` command line: the top floor, above every face.

:mod:`compute_lab.cli` dispatches to the commands; it imports the engine (:mod:`udfs`), the
workbook templates and the Excel routes downward, and nothing below imports it back.
"""

from udfs import __version__

__all__ = ["__version__"]
