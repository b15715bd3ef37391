"""The fast path answers exactly what xlwings Server's own route answers (issue 20).

In a subprocess (xlwings must be imported with ``XLWINGS_ON_SERVER=true``), each request body
is sent to xlwings Server's unguarded app (its real ``/xlwings/custom-functions-call`` route:
FastAPI, xlwings' conversion, its exception handlers) and answered by our dispatch with the fast
path on and off; status and bytes must be equal. The bodies: every browser-test case and error
case at runtimes 1.4 and 1.3, cells the fast path hands to xlwings (error objects, blanks),
and 400 generated calls mixing numbers, blanks, text, booleans and ranges.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import cases  # noqa: E402

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)

COMPARE = r"""
import json, sys
from addin import server_app
from starlette.testclient import TestClient
from xlwings_server.main import main_app

client = TestClient(main_app, raise_server_exceptions=False)
fast = server_app._fast_path()
user = server_app._user(None)
out = []
for body in json.load(sys.stdin):
    route = client.post("/xlwings/custom-functions-call", json=body)
    ours = server_app.dispatch(body, user)
    server_app._FAST[0] = None  # xlwings' own dispatch, in our pool thread's way
    slow = server_app.dispatch(body, user)
    server_app._FAST[0] = fast
    handled = fast.answer(body, server_app._THREAD.loop) is not fast.NOT_HANDLED \
        if ours[0] == 200 else None
    text = lambda b: b.decode() if isinstance(b, bytes) else b
    inline = server_app.answer_inline(body)  # on the event loop: the fast path alone
    out.append([route.status_code, route.text, ours[0], text(ours[1]), slow[0], text(slow[1]),
                handled, inline and [inline[0], text(inline[1])]])
json.dump(out, sys.stdout)
"""

ERROR_CELL = {"type": "Error", "basicValue": "#N/A", "errorType": "NotAvailable"}


def _compare(bodies):
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": "noncommercial",
        "DOTENV_PATH": os.devnull,
        "XLWINGS_ENVIRONMENT": "prod",
    }
    env.pop("XLWINGS_ON_SERVER", None)
    out = subprocess.run(
        [sys.executable, "-c", COMPARE],
        input=json.dumps(bodies),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout)


def _cell(rng):
    return rng.choice(
        [
            rng.choice([1, 2, 16, 400, 2048]),
            rng.uniform(1e-3, 1e13),
            rng.choice([0.1, 0.5, 0.9, 37e9, 671e9, 14.8e12]),
            "",
            None,
            rng.choice(["H100", "days", "cost_usd", "deepseek-v3", "#N/A", "x"]),
            rng.choice([True, False]),
            -1.0,
        ]
    )


def _arg(rng):
    shape = rng.choice([(1, 1), (1, 1), (1, 1), (3, 1), (1, 3), (2, 2)])
    return [[_cell(rng) for _ in range(shape[1])] for _ in range(shape[0])]


def generated_bodies(n=400, seed=20):
    """Variations of the browser cases: a number spread into a range, a cell replaced by a
    random one (a blank, text, a boolean, an Excel error text...), an optional left out."""
    rng = random.Random(seed)
    bodies = []
    for _ in range(n):
        _, name, args = rng.choice(cases.CASES)
        body = cases.request_body(name, args, rng.choice(["1.4", "1.3"]))
        excel_args = body["args"]
        i = rng.randrange(len(excel_args))
        arg = excel_args[i]
        roll = rng.random()
        if arg is not None and roll < 0.4 and isinstance(arg[0][0], int | float):
            k = rng.choice([1, 2, 3])
            excel_args[i] = [[arg[0][0] * (j + 1) for j in range(k)] for _ in range(2)]
        elif arg is not None and roll < 0.8:
            excel_args[i] = [[_cell(rng)]]
        elif roll < 0.9:
            excel_args[i] = None
        bodies.append(body)
    return bodies


def case_bodies():
    bodies = []
    for runtime in ("1.4", "1.3"):
        for _, name, args in cases.CASES:
            bodies.append(cases.request_body(name, args, runtime))
        for _, name, args, _ in cases.ERROR_CASES:
            bodies.append(cases.request_body(name, args, runtime))
        blank = cases.request_body("TRAIN_KWH", [37e9, 14.8e12, 400, "", [[1.1, ""]]], runtime)
        errors = cases.request_body("TRAIN_DAYS", [37e9, 14.8e12, [[ERROR_CELL]], 400], runtime)
        bodies += [blank, errors]
    return bodies


def test_pyproject_pins_the_xlwings_the_fast_path_reproduces():
    import tomllib

    from addin.fast_path import XLWINGS_VERSION

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["optional-dependencies"]["server"] if d.startswith("xlwings==")]
    assert pins == [f"xlwings=={XLWINGS_VERSION}"]


def test_fast_path_answers_as_xlwings_for_every_case():
    bodies = case_bodies()
    results = _compare(bodies)
    handled = inline = 0
    for body, (r_status, r_text, status, text, s_status, s_text, fast, alone) in zip(
        bodies, results, strict=True
    ):
        assert (status, text) == (r_status, r_text), body
        assert (s_status, s_text) == (r_status, r_text), body
        assert alone is None or tuple(alone) == (r_status, r_text), body
        handled += bool(fast)
        inline += alone is not None and alone[0] == 200
    # The fast path, not the fall-back, answered the well-formed calls of plain cells, and
    # answered most of them by itself (as on the event loop: no xlwings conversion).
    assert handled >= len(cases.CASES) * 2
    assert inline >= len(cases.CASES)


def test_fast_path_answers_as_xlwings_for_generated_calls():
    bodies = generated_bodies()
    results = _compare(bodies)
    statuses = {}
    for body, (r_status, r_text, status, text, _, _, _, alone) in zip(bodies, results, strict=True):
        assert (status, text) == (r_status, r_text), body
        assert alone is None or tuple(alone) == (r_status, r_text), body
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses.get(200, 0) >= 100 and statuses.get(400, 0) >= 50, statuses


def test_a_10k_row_call_answers_as_xlwings():
    col = [[1024.0 + i] for i in range(10_000)]
    bodies = [
        cases.request_body("TRAIN_DAYS", [37e9, 14.8e12, col, 400], "1.4"),
        cases.request_body("ACCEL_SPEC", [[["H800"]] * 10_000, "tdp_watts"], "1.4"),
        cases.request_body("ACCEL_SPEC", [[["H800"]] * 10_000, "tdp_watts"], "1.3"),
    ]
    for r_status, r_text, status, text, _, _, fast, alone in _compare(bodies):
        assert status == r_status == 200 and text == r_text and fast
        assert alone is None or tuple(alone) == (r_status, r_text)
