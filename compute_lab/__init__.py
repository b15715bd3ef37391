"""The ``compute-lab`` command line: the top floor, above every face.

:mod:`compute_lab.cli` dispatches to the commands; it imports the engine (:mod:`udfs`), the
workbook templates and the Excel routes downward, and nothing below imports it back. This
package itself imports nothing: the program's entry point (:mod:`compute_lab.start`) loads
everything else inside its Ctrl-C handler.
"""

__all__ = ["__version__"]


def __getattr__(name):
    if name == "__version__":
        from udfs import __version__

        return __version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
