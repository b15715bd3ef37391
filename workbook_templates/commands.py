"""``compute-lab templates`` and ``compute-lab report``, registered with the command line.

Kept light: openpyxl and the generator load only when a command runs or its flags are built.
Each module below provides ``configure_parser(parser)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import importlib


def _lazy(module):
    def configure(parser):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:  # not built yet: the command has no flags
            if exc.name != module:
                raise
            return
        mod.configure_parser(parser)

    def run(args):
        return importlib.import_module(module).run(args)

    return configure, run


COMMANDS = {
    "templates": (
        "write the planning workbooks (training-run planner, cluster sizing, dense vs MoE)",
        *_lazy("workbook_templates.generate"),
    ),
    "report": (
        "read filled planners back, recompute them and consolidate a hand-off workbook",
        *_lazy("workbook_templates.report"),
    ),
}
