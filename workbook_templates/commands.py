"""``compute-lab templates`` and ``compute-lab report``, registered with the command line.

Kept light: openpyxl and the generator load only when a command runs or its flags are built.
Each module below provides ``configure_parser(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations


def _templates():
    from . import generate

    return generate


def _report():
    from . import report

    return report


def _lazy(load):
    """(configure, run) of the module ``load()`` imports, when a command needs it."""

    def configure(parser):
        load().configure_parser(parser)

    def run(args):
        return load().run(args)

    return configure, run


COMMANDS = {
    "templates": (
        "write the planning workbooks (training-run planner, cluster sizing, dense vs MoE)",
        *_lazy(_templates),
    ),
    "report": (
        "read filled planners back, recompute them and consolidate a hand-off workbook",
        *_lazy(_report),
    ),
}
