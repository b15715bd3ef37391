"""Run codes: the key a user owns for each run, which no edit of the plan changes.

A run code is typed in the planner's "Run code" row. A blank one is derived from the team
(the ``owner`` input) and the scenario name only, never from the plan's figures, so approving a
run or changing its dates or price keeps its code.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_RUN_CODE_CHARS", "RUN_CODE_RULE", "derive_run_code", "run_code_of",
           "valid_run_code"]  # fmt: skip

#: The longest run code: what a billing tag value and an FP&A key field hold comfortably.
MAX_RUN_CODE_CHARS = 40
_CODE = re.compile(rf"[A-Za-z0-9](?:[A-Za-z0-9._-]{{0,{MAX_RUN_CODE_CHARS - 1}}})", re.ASCII)
RUN_CODE_RULE = (
    f"1 to {MAX_RUN_CODE_CHARS} characters: letters A-Z, digits, '.', '_' or '-', "
    "starting with a letter or digit"
)


def valid_run_code(text):
    """True when ``text`` is a run code (:data:`RUN_CODE_RULE`)."""
    return isinstance(text, str) and _CODE.fullmatch(text) is not None


def _slug(text):
    text = unicodedata.normalize("NFKD", str(text or "")).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").upper()


def derive_run_code(team, scenario_name):
    """The run code of a run whose code is blank: ``TEAM-SCENARIO`` in capitals, from the team
    and the scenario name only (never the plan's figures), at most
    :data:`MAX_RUN_CODE_CHARS` characters.

    >>> derive_run_code("Research", "Llama 3.1 405B-like")
    'RESEARCH-LLAMA-3-1-405B-LIKE'
    """
    team, name = _slug(team), _slug(scenario_name) or "RUN"
    code = f"{team}-{name}" if team else name
    return code[:MAX_RUN_CODE_CHARS].rstrip("-._")


def run_code_of(scenario):
    """``(code, derived)``: the scenario's typed run code, or the one derived from its team and
    name (``derived`` True) when the planner has no run code or it is blank."""
    typed = scenario.inputs.get("run_code")
    if isinstance(typed, str) and typed.strip():
        return typed.strip(), False
    return derive_run_code(scenario.inputs.get("owner"), scenario.name), True
