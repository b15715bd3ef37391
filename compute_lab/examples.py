"""The examples and the docs page at the end of every command's ``--help``.

``EXAMPLES`` maps a command (``""`` for ``compute-lab`` itself, ``"serve token create"`` for a
nested one) to its examples, each a whole command line a user can type, and the page of the
docs that describes it. tests/test_help.py checks that every command has two or three, that
each parses with the real parser, and that every page exists.
"""

from __future__ import annotations

#: Where the ``--help`` text of a command says its examples start (the help formatter keeps
#: the lines from there as they are written, without re-wrapping them).
EPILOG_START = "examples:"

_KEY = "XLWINGS_LICENSE_KEY=noncommercial"

EXAMPLES = {
    "": (
        ["compute-lab estimate",
         "compute-lab estimate --accelerator H100 --total-params 70B --tokens 2T "
         "--accelerators 1024",
         "compute-lab report plans/team-a-plan.xlsx --out handoff.xlsx"],
        "README.md and docs/command-line.md",
    ),
    "estimate": (
        ["compute-lab estimate",
         "compute-lab estimate --accelerator H100 --total-params 70B --tokens 15T "
         "--accelerators 8192",
         "compute-lab estimate --preset llama-3.1-405b --throughput-range 15% --target-days 60"],
        "docs/command-line.md#estimate",
    ),
    "runs": (
        ["compute-lab runs",
         "compute-lab runs --csv",
         "compute-lab runs --own-runs our-runs.csv"],
        "docs/command-line.md#runs and docs/methodology-calibration.md",
    ),
    "accelerators": (
        ["compute-lab accelerators",
         "compute-lab accelerators --json"],
        "docs/command-line.md#accelerators",
    ),
    "templates": (
        ["compute-lab templates --out plans",
         "compute-lab templates --out plans --own-runs our-runs.csv --force"],
        "docs/workbooks.md",
    ),
    "report": (
        ["compute-lab report plans/team-a-plan.xlsx --out handoff.xlsx",
         "compute-lab report plans/*.xlsx --out handoff.xlsx --csv handoff-csv --skip-bad",
         'compute-lab report plans/*.xlsx --csv q2-csv --version "Forecast 2027-Q2" '
         "--baseline fy27-csv --actuals actuals.csv focus-export.csv"],
        "docs/handoff.md",
    ),
    "addin": (
        ["compute-lab addin install",
         "compute-lab addin install --config-only --dry-run"],
        "docs/excel-routes.md",
    ),
    "addin install": (
        ["compute-lab addin install",
         "compute-lab addin install --config-only --dry-run"],
        "docs/excel-routes.md",
    ),
    "serve": (
        [f"{_KEY} compute-lab serve",
         f"{_KEY} compute-lab serve --check",
         "compute-lab serve token create alice"],
        "docs/excel-routes.md and docs/team-server.md",
    ),
    "serve token": (
        ["compute-lab serve token create alice",
         "compute-lab serve token list",
         "compute-lab serve token revoke alice"],
        "docs/team-server.md",
    ),
    "serve token create": (
        ["compute-lab serve token create alice",
         "compute-lab serve token create ops --role admin"],
        "docs/team-server.md",
    ),
    "serve token revoke": (
        ["compute-lab serve token revoke alice",
         "compute-lab serve token revoke alice --token-file tokens.json"],
        "docs/team-server.md",
    ),
    "serve token list": (
        ["compute-lab serve token list",
         "compute-lab serve token list --token-file tokens.json"],
        "docs/team-server.md",
    ),
    "lite-bundle": (
        ["compute-lab lite-bundle",
         "compute-lab lite-bundle --out lite --force"],
        "docs/excel-routes.md",
    ),
}  # fmt: skip


def epilog(command):
    """The end of ``command``'s ``--help``: its examples, then the docs page (None if none)."""
    if command not in EXAMPLES:
        return None
    examples, docs = EXAMPLES[command]
    return "\n".join([EPILOG_START, *(f"  {e}" for e in examples), "", f"docs: {docs}"])
