"""Server routes x malformed requests: every answer is 2xx-4xx, never 500 (issue 8, item 5).

The real app (``uvicorn addin.server_app:app`` on 127.0.0.1) gets, on every route it serves,
hypothesis-made bodies (bytes, JSON values, near-miss workbook payloads) and a wrong Host
header (DNS-rebinding guard). Refusals are one line naming what was wrong.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)
httpx = pytest.importorskip("httpx")

from addin.local_server import local_server, raw_request  # noqa: E402

SCRIPTS = ["insert_train_plan", "insert_reference_runs", "insert_accelerators"]

#: Every route the app serves, by method (checked against the app below).
ROUTES = [
    ("GET", "/"),
    ("HEAD", "/"),
    ("GET", "/favicon.ico"),
    ("GET", "/manifest"),
    ("GET", "/manifest.xml"),
    ("GET", "/manifest/download"),
    ("GET", "/taskpane"),
    ("GET", "/taskpane.html"),
    ("GET", "/xlwings/alert"),
    ("GET", "/xlwings/custom-functions-meta"),
    ("GET", "/xlwings/custom-functions-meta.json"),
    ("GET", "/xlwings/custom-functions-code"),
    ("GET", "/xlwings/custom-functions-code.js"),
    ("POST", "/xlwings/custom-functions-call"),
    ("GET", "/xlwings/custom-scripts-meta"),
    ("GET", "/xlwings/custom-scripts-meta.json"),
    *[("POST", f"/xlwings/custom-scripts-call/{name}") for name in SCRIPTS],
    ("POST", "/xlwings/custom-scripts-call/foo"),
    ("GET", "/static/js/compute-lab.js"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("fuzz") / "server.log"
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": "noncommercial",
        "XLWINGS_ENVIRONMENT": "prod",
        "DOTENV_PATH": str(log) + ".env",
    }
    env.pop("XLWINGS_ON_SERVER", None)
    env.pop("XLWINGS_PROJECT_DIR", None)
    with local_server(env=env, log=log) as base, httpx.Client(base_url=base, timeout=30) as c:
        yield c


def test_route_list_covers_every_route_the_app_serves():
    code = (
        "import json, addin.server_app\n"
        "from xlwings_server.main import app\n"
        "print(json.dumps(sorted([m, r.path] for r in app.routes "
        "for m in getattr(r, 'methods', None) or [])))"
    )
    env = {**os.environ, "XLWINGS_LICENSE_KEY": "noncommercial", "DOTENV_PATH": os.devnull}
    env.pop("XLWINGS_ON_SERVER", None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    served = {
        (m, p.replace("{script_name}", SCRIPTS[0]))
        for m, p in json.loads(out.stdout.splitlines()[-1])
    }
    assert served <= set(ROUTES), served - set(ROUTES)


def book_payload(**changes):
    payload = {
        "client": "Office.js",
        "version": "0.37.8",
        "book": {"name": "Book1.xlsx", "active_sheet_index": 0, "selection": "B3"},
        "names": [],
        "sheets": [
            {
                "name": "Sheet1",
                "values": [[""]],
                "pictures": [],
                "shapes": [],
                "charts": [],
                "tables": [],
                "pivot_tables": None,
            }
        ],
    }
    payload.update(changes)
    return payload


def test_a_well_formed_script_call_answers_200(server):
    for name in SCRIPTS:
        response = server.post(f"/xlwings/custom-scripts-call/{name}", json=book_payload())
        assert response.status_code == 200, response.text
        assert response.json()["actions"]


@pytest.mark.parametrize(
    "path, content, status, fragment",
    [
        ("/xlwings/custom-scripts-call/foo", b"not json", 404, "unknown custom script 'foo'"),
        ("/xlwings/custom-scripts-call/foo", b'{"a":1}', 404, "known: insert_accelerators"),
        ("/xlwings/custom-scripts-call/insert_train_plan", b"not json", 400, "not valid JSON"),
        ("/xlwings/custom-scripts-call/insert_train_plan", b'{"a":1}', 400, "'client'"),
        ("/xlwings/custom-scripts-call/insert_train_plan", b"[]", 400, "JSON object"),
    ],
)
def test_issue_examples_are_4xx_with_one_line(server, path, content, status, fragment):
    response = server.post(path, content=content, headers={"content-type": "application/json"})
    assert response.status_code == status and fragment in response.text
    assert len(response.text.splitlines()) == 1


def test_script_call_without_a_selection_is_400(server):
    payload = book_payload(book={"name": "B.xlsx", "active_sheet_index": 0, "selection": None})
    response = server.post("/xlwings/custom-scripts-call/insert_train_plan", json=payload)
    assert response.status_code == 400 and "select a cell first" in response.text


def test_form_body_is_415(server):
    response = server.post(
        "/xlwings/custom-scripts-call/insert_train_plan", data={"bookData": "{not json"}
    )
    assert response.status_code == 415


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1",
        "127.0.0.1:{other}",
        "localhost.evil.example:{port}",
        "10.0.0.5:{port}",
        "",
    ],
)
def test_foreign_host_header_is_refused(server, host):
    port = server.base_url.port
    host = host.format(port=port, other=port + 1 if port < 65535 else port - 1)
    for method, path in [("GET", "/manifest.xml"), ("POST", "/xlwings/custom-functions-call")]:
        response = server.request(method, path, headers={"host": host}, content=b"{}")
        assert response.status_code == 400, (host, response.status_code)
        assert "Host" in response.text and len(response.text.splitlines()) == 1


def test_loopback_names_with_our_port_are_served(server):
    port = server.base_url.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        assert server.get("/manifest.xml", headers={"host": host}).status_code == 200


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)

bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {},
        optional={
            "client": json_values,
            "version": json_values,
            "book": json_values | st.just({"name": "B", "active_sheet_index": 0}),
            "sheets": json_values | st.just([{"name": "S", "values": [[1]]}]),
            "names": json_values,
            "args": json_values,
        },
    ).map(lambda d: json.dumps({"client": "Office.js", "version": "1", **d}).encode()),
    st.builds(
        lambda sheet, book: json.dumps(book_payload(sheets=[sheet], book=book)).encode(),
        st.fixed_dictionaries(
            {"name": st.text(max_size=4), "values": json_values},
            optional={"tables": json_values, "charts": json_values, "pictures": json_values},
        ),
        st.fixed_dictionaries(
            {"name": st.text(max_size=4), "active_sheet_index": json_values},
            optional={"selection": st.none() | st.sampled_from(["A1", "B3", "ZZ99", "x", ""])},
        ),
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(route=st.sampled_from(ROUTES), body=bodies, kind=st.sampled_from(["json", "none", "text"]))
def test_no_route_answers_500_to_a_malformed_request(server, route, body, kind):
    method, path = route
    headers = {"json": {"content-type": "application/json"}, "none": {}}.get(
        kind, {"content-type": "text/plain"}
    )
    response = server.request(method, path, content=body, headers=headers)
    assert response.status_code < 500, (route, body, response.status_code, response.text)
    if response.status_code >= 400:
        assert "Traceback" not in response.text


# Path traversal (issue 22, row 1): whatever the encoding, a path that climbs out of a static
# folder is 404 and never a file's content.
DOT_DOTS = ["..", "%2e%2e", "%2E%2e", ".%2e", "%2e.", "%252e%252e", "%c0%ae%c0%ae", "..%00", "."]
SEPARATORS = ["/", "%2f", "%2F", "//", "%5c", "\\", "%252f", "%c0%af"]
TARGETS = ["server_app.py", "pyproject.toml", "certs/README.md", "etc/passwd", "etc%2fpasswd"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    route=st.sampled_from(["/static/", "/static/js/", "/static//", "/static/css/"]),
    climbs=st.lists(st.sampled_from(DOT_DOTS), min_size=1, max_size=9),
    separator=st.sampled_from(SEPARATORS),
    target=st.sampled_from(TARGETS),
)
def test_no_encoding_of_dot_dot_leaves_the_static_folder(server, route, climbs, separator, target):
    path = route + separator.join(climbs) + separator + target
    status, body = raw_request(server.base_url.port, path)
    assert status == 404, (path, status, body[:120])
    assert b"root:" not in body and b"xlwings" not in body and b"Compute Lab" not in body


# Oversized broadcasts (issue 22, row 3): a column against a row whose table is over the bound is
# a one-line 400 naming MAX_CELLS_PER_CALL, on every function that broadcasts.
def _oversized_cases():
    import inspect

    from udfs import excel

    text = {"accelerator_name": "H100", "run_name": "llama-3.1-405b", "field": "hbm_gb"}
    text["quantity"] = "days"
    cases = {}
    for name in excel.__all__:
        if name in ("TRAIN_PLAN", "TRAIN_PLAN_RANGE"):  # single cells only
            continue
        params = list(inspect.signature(getattr(excel, name)).parameters)
        cases[name] = [text.get(p, 0.5 if p in ("p", "mfu") else 1000.0) for p in params]
    return cases


OVERSIZED = _oversized_cases()


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(sorted(OVERSIZED)),
    rows=st.integers(1025, 6000),
    cols=st.integers(1025, 6000),
    data=st.data(),
)
def test_an_oversized_broadcast_is_a_one_line_400(server, name, rows, cols, data):
    args = [[[a]] for a in OVERSIZED[name]]
    i, j = data.draw(st.lists(st.integers(0, len(args) - 1), min_size=2, max_size=2, unique=True))
    args[i] = [[OVERSIZED[name][i]]] * rows
    args[j] = [[OVERSIZED[name][j]] * cols]
    body = {
        "client": "Office.js",
        "func_name": name,
        "args": args,
        "caller_address": "[Book1.xlsx]Sheet1!B2",
        "culture_info_name": "en-US",
        "date_format": "M/d/yyyy",
        "version": "0.37.8",
        "runtime": "1.4",
    }
    response = server.post("/xlwings/custom-functions-call", json=body)
    assert response.status_code == 400, (name, rows, cols, response.text[:200])
    # the cells are checked first: over 1,048,576 of them whichever arguments were the ranges
    assert f"would produce {rows * cols:,} cells ({rows} rows x {cols} columns)" in response.text
    assert "(MAX_CELLS_PER_CALL)" in response.text and len(response.text.splitlines()) == 1


# The team server (issue 20): signed in (a valid token on every request, so malformed bodies
# reach the guards, the pool and the fast path), two workers, with the health routes.
TEAM_ROUTES = [*ROUTES, ("GET", "/health"), ("GET", "/ready"), ("GET", "/metrics")]


@pytest.fixture(scope="module")
def team_server(tmp_path_factory):
    from helpers_team import signed_in_server

    folder = tmp_path_factory.mktemp("fuzz-team")
    with signed_in_server(folder, "--workers", "2", tls=False, names=("alice",)) as running:
        base, _, made, _ = running
        headers = {"authorization": f"Bearer {made['alice']}"}
        with httpx.Client(base_url=base, timeout=60, headers=headers) as client:
            yield client


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    route=st.sampled_from(TEAM_ROUTES), body=bodies, kind=st.sampled_from(["json", "none", "text"])
)
def test_no_route_of_the_team_server_answers_500(team_server, route, body, kind):
    method, path = route
    headers = {"json": {"content-type": "application/json"}, "none": {}}.get(
        kind, {"content-type": "text/plain"}
    )
    response = team_server.request(method, path, content=body, headers=headers)
    assert response.status_code < 500, (route, body, response.status_code, response.text)
    if response.status_code >= 400:
        assert "Traceback" not in response.text
