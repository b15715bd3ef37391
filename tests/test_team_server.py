"""The team server (issue 20): sign-in tokens, safe defaults, the call pool, health and logs.

Real parts: the token file on disk, ``compute-lab serve`` run as a process (uvicorn, TLS with a
certificate made here), requests over loopback.
"""

from __future__ import annotations

import importlib.util
import json
import ssl
import stat
import threading
import urllib.error
import urllib.request

import pytest
from helpers_team import call_body, get, post, run_cli, signed_in_server

from addin import tokens

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)


# ---------------------------------------------------------------------------------------------
# Tokens: created once, stored hashed, revoked, listed; the file's mode and content are checked
# ---------------------------------------------------------------------------------------------


def test_token_create_prints_it_once_and_stores_only_its_hash(capsys, tmp_path):
    path = tmp_path / "t.json"
    status, out, err = run_cli(
        capsys, "serve", "token", "create", "alice", "--token-file", str(path)
    )
    assert status == 0
    token = out.strip()
    assert len(out.splitlines()) == 1 and token.startswith(tokens.TOKEN_PREFIX)
    assert "shown only now" in err
    text = path.read_text()
    assert token not in text and tokens.digest(token) in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    status, out, _ = run_cli(capsys, "serve", "token", "list", "--token-file", str(path))
    assert status == 0 and out.split()[:2] == ["alice", "user"] and "last used never" in out


def test_token_names_are_checked_and_unique(capsys, tmp_path):
    path = str(tmp_path / "t.json")
    assert run_cli(capsys, "serve", "token", "create", "a", "--token-file", path)[0] == 0
    status, _, err = run_cli(capsys, "serve", "token", "create", "a", "--token-file", path)
    assert status == 2 and "token name 'a': already exists" in err
    status, _, err = run_cli(capsys, "serve", "token", "create", "../x", "--token-file", path)
    assert status == 2 and "must be 1-64 letters" in err
    status, _, err = run_cli(capsys, "serve", "token", "revoke", "zed", "--token-file", path)
    assert status == 2 and "no token named 'zed'" in err and "(tokens: a)" in err


@pytest.mark.parametrize(
    "content, fragment",
    [
        ("not json", "is not valid JSON"),
        ('{"tokens": []}', 'must be an object with "version": 1'),
        ('{"version": 1, "tokens": {}}', "'tokens' must be a list"),
        ('{"version": 1, "tokens": [{"name": "a"}]}', "tokens[0].sha256 must be 64"),
        (
            '{"version": 1, "tokens": [{"name": "a", "sha256": "' + "0" * 64 + '", "role": "x"}]}',
            "tokens[0].role must be one of user, admin",
        ),
    ],
)
def test_a_token_file_with_bad_content_is_one_line(capsys, tmp_path, content, fragment):
    path = tmp_path / "t.json"
    path.write_text(content)
    path.chmod(0o600)
    status, _, err = run_cli(capsys, "serve", "token", "list", "--token-file", str(path))
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert f"token file {path}: " in err and fragment in err


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o602])
def test_a_token_file_others_can_read_or_write_is_refused(capsys, tmp_path, mode):
    path = tmp_path / "t.json"
    tokens.create(path, "alice")
    path.chmod(mode)
    for argv in (
        ["serve", "token", "list", "--token-file", str(path)],
        ["serve", "--require-sign-in", "--token-file", str(path), "--check"],
    ):
        status, _, err = run_cli(
            capsys, *argv, *(["--license-key", "x"] if "--check" in argv else [])
        )
        assert status == 2 and len(err.strip().splitlines()) == 1
        assert f"mode {mode:03o} lets group or others read or write it" in err
        assert f"chmod 600 {path}" in err


def test_a_token_file_that_is_a_link_or_a_folder_is_refused(tmp_path):
    real = tmp_path / "real.json"
    tokens.create(real, "alice")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(tokens.TokenFileError, match="is a symbolic link"):
        tokens.load(link)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(tokens.TokenFileError, match="is not a regular file"):
        tokens.load(folder)


def test_store_checks_headers_and_sees_revocation_without_restart(tmp_path):
    path = tmp_path / "t.json"
    token = tokens.create(path, "alice")
    store = tokens.TokenStore(path)
    assert store.check(f"Bearer {token}") == ("alice", "user")
    assert store.check(f"bearer   {token} ") == ("alice", "user")
    assert store.check(None)[1].startswith("sign-in required")
    assert store.check(token)[1] == "the Authorization header must be 'Bearer <token>'"
    assert store.check("Bearer cl_short")[1].startswith("the token is not a Compute Lab token")
    other = tokens.TOKEN_PREFIX + "A" * 43
    assert store.check(f"Bearer {other}") == (None, "the token is unknown or has been revoked")
    tokens.revoke(path, "alice")
    assert store.check(f"Bearer {token}") == (None, "the token is unknown or has been revoked")
    path.chmod(0o644)
    assert store.check(f"Bearer {token}")[1].startswith("sign-in is unavailable")
    assert "mode 644" in store.problem()


# ---------------------------------------------------------------------------------------------
# Safe by default: loopback without sign-in; any other address needs TLS and sign-in
# ---------------------------------------------------------------------------------------------


def test_public_address_without_tls_is_refused_before_binding(capsys):
    for host in ("0.0.0.0", "::", "10.1.2.3"):
        status, _, err = run_cli(capsys, "serve", "--license-key", "x", "--host", host)
        assert status == 2 and len(err.strip().splitlines()) == 1
        assert f"--host {host} is not a loopback address" in err
        assert "needs TLS (--certfile/--keyfile) and sign-in" in err


def test_public_address_with_tls_implies_sign_in_and_needs_a_token(capsys, tmp_path):
    from helpers_team import make_certificate

    cert, key = make_certificate(tmp_path)
    path = tmp_path / "t.json"
    flags = ["--certfile", str(cert), "--keyfile", str(key), "--token-file", str(path)]
    status, _, err = run_cli(
        capsys, "serve", "--license-key", "x", "--host", "0.0.0.0", *flags, "--check"
    )
    assert status == 2 and "sign-in is on but" in err and "holds no tokens" in err
    tokens.create(path, "alice")
    status, out, err = run_cli(
        capsys, "serve", "--license-key", "x", "--host", "0.0.0.0", *flags, "--check"
    )
    assert status == 0 and err == "", err
    assert out.startswith("configuration OK: https://0.0.0.0:8000")
    assert "sign-in with 1 token(s)" in out and "certificate valid until" in out


def test_an_expired_certificate_is_refused(capsys, tmp_path):
    from helpers_team import make_certificate

    cert, key = make_certificate(tmp_path, days=-1)
    flags = ["--certfile", str(cert), "--keyfile", str(key)]
    for check in (["--check"], ["--port", "1"]):  # refused before anything binds
        status, _, err = run_cli(capsys, "serve", "--license-key", "x", *flags, *check)
        assert status == 2 and len(err.strip().splitlines()) == 1
        assert f"--certfile {cert}: expired on " in err


def test_a_certificate_not_yet_valid_is_refused(capsys, tmp_path):
    """Review of issue 20: a certificate valid only from 2040 passed `serve --check`."""
    from helpers_team import make_certificate

    cert, key = make_certificate(tmp_path, days=400, starts_in_days=30)
    flags = ["--certfile", str(cert), "--keyfile", str(key)]
    for check in (["--check"], ["--port", "1"]):  # refused before anything binds
        status, _, err = run_cli(capsys, "serve", "--license-key", "x", *flags, *check)
        assert status == 2 and len(err.strip().splitlines()) == 1
        assert f"--certfile {cert}: not valid before " in err


def test_public_host_implies_sign_in(capsys, tmp_path):
    path = tmp_path / "t.json"
    argv = ["serve", "--license-key", "x", "--public-host", "lab.example.com"]
    status, _, err = run_cli(capsys, *argv, "--token-file", str(path), "--check")
    assert status == 2 and "holds no tokens" in err
    status, _, err = run_cli(
        capsys, "serve", "--license-key", "x", "--public-host", "a b", "--check"
    )
    assert status == 2 and "argument --public-host: must be a host name" in err


# ---------------------------------------------------------------------------------------------
# A signed-in server over TLS: 401 without a token, with a bad one, and once revoked
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    folder = tmp_path_factory.mktemp("team")
    flags = ("--workers", "1", "--public-host", "lab.example.test")
    with signed_in_server(folder, *flags, names=("alice", "bob", "ops")) as running:
        yield running


def test_signed_in_call_over_tls(team):
    base, _, made, _ = team
    assert base.startswith("https://")
    status, text, headers = post(base, call_body(), made["alice"])
    assert status == 200, text
    assert json.loads(text)["result"][0][0] == pytest.approx(46.4206, abs=1e-4)
    assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize(
    "header, reason",
    [
        (None, "sign-in required: send Authorization: Bearer <token>"),
        ("Basic dXNlcjpwdw==", "the Authorization header must be 'Bearer <token>'"),
        ("Bearer cl_" + "x" * 43, "the token is unknown or has been revoked"),
    ],
)
def test_calls_without_a_valid_token_are_401(team, header, reason):
    base = team[0]
    extra = {"Authorization": header} if header else {}
    for path in (
        "/xlwings/custom-functions-call",
        "/xlwings/custom-scripts-call/insert_accelerators",
    ):
        status, text, headers = post(base, call_body(), headers=extra, path=path)
        assert (status, text) == (401, reason)
        assert headers["www-authenticate"] == "Bearer"


def test_a_revoked_token_is_refused_at_its_next_call(team):
    base, token_file, made, _ = team
    assert post(base, call_body(), made["bob"])[0] == 200
    tokens.revoke(token_file, "bob")
    assert post(base, call_body(), made["bob"])[:2] == (
        401,
        "the token is unknown or has been revoked",
    )
    assert post(base, call_body(), made["alice"])[0] == 200  # the others still sign in


def test_token_list_shows_last_use(team, capsys):
    base, token_file, made, _ = team
    assert post(base, call_body(), made["ops"])[0] == 200
    status, out, _ = run_cli(capsys, "serve", "token", "list", "--token-file", str(token_file))
    ops = next(line for line in out.splitlines() if line.startswith("ops "))
    assert status == 0 and ops.split()[1] == "admin" and "last used never" not in ops
    assert "last used 20" in ops


def test_static_files_and_the_manifest_need_no_token(team):
    base = team[0]
    for path in ("/manifest.xml", "/taskpane.html", "/xlwings/custom-functions-meta.json"):
        assert get(base, path)[0] == 200, path


def test_origin_other_than_ours_or_office_is_403(team):
    base, _, made, _ = team
    status, text, _ = post(
        base, call_body(), made["alice"], headers={"Origin": "https://evil.test"}
    )
    assert status == 403 and text.startswith("Origin 'https://evil.test' may not call")
    port = base.rsplit(":", 1)[1]
    for origin in (f"https://127.0.0.1:{port}", "https://excel.officeapps.live.com"):
        assert post(base, call_body(), made["alice"], headers={"Origin": origin})[0] == 200


def test_access_log_names_the_token_never_the_values(team):
    base, _, made, log = team
    secret = 1234567.891
    assert post(base, call_body(), "cl_" + "x" * 43)[0] == 401  # a token no one was given
    assert post(base, call_body("TRAIN_DAYS", 37e9, 14.8e12, 2048, secret), made["alice"])[0] == 200
    lines = [json.loads(x) for x in log.read_text().splitlines() if x.startswith('{"time"')]
    mine = [x for x in lines if x["token"] == "alice" and x["function"] == "TRAIN_DAYS"]
    assert mine and set(mine[-1]) == {"time", "token", "function", "rows", "status", "ms", "worker"}
    assert mine[-1]["status"] == 200 and mine[-1]["rows"] == 1
    assert "1234567" not in log.read_text()
    assert made["alice"] not in log.read_text()
    assert any(x["status"] == 401 and x["token"] is None for x in lines)


def test_host_guard_takes_the_public_host_names(team):
    base, _, made, _ = team
    for host in ("lab.example.test", "LAB.example.test:443", "lab.example.test:8443"):
        status, text, _ = post(base, call_body(), made["alice"], headers={"Host": host})
        assert status == 200, (host, text)
    status, text, _ = post(base, call_body(), made["alice"], headers={"Host": "evil.test"})
    assert status == 400 and text.startswith("Host 'evil.test' is not this server's address")
    assert "lab.example.test, " in text


def test_health_and_ready(team):
    base = team[0]
    assert get(base, "/health")[:2] == (200, "ok")
    assert get(base, "/ready")[:2] == (200, "ready: 0 call(s) running or waiting (limit 64)")


def test_ready_is_503_on_a_bad_token_file_and_the_log_says_why(team):
    base, token_file, _, log = team
    token_file.chmod(0o644)
    try:
        status, text, _ = get(base, "/ready")
        assert status == 503 and text == (
            "not ready: the sign-in token file is unusable (the server's log says why)"
        )
        assert str(token_file) not in text and "mode 644" in log.read_text()
    finally:
        token_file.chmod(0o600)
    assert get(base, "/ready")[0] == 200


# ---------------------------------------------------------------------------------------------
# Off the event loop: a slow call does not hold a quick one
# ---------------------------------------------------------------------------------------------


def test_a_slow_call_does_not_delay_a_quick_one(team):
    from udfs.excel import MAX_PLANS_PER_CALL

    base, _, made, _ = team
    plans = [[2048.0 + i] for i in range(MAX_PLANS_PER_CALL)]
    slow_body = call_body("TRAIN_QUANTILE", "days", 0.9, 671e9, 37e9, 14.8e12, plans, "H100")
    done = []
    thread = threading.Thread(target=lambda: done.append(post(base, slow_body, made["alice"])[0]))
    thread.start()
    # /ready counts the calls in the pool: wait until the slow one is computing...
    while not done and "1 call(s) running or waiting" not in get(base, "/ready")[1]:
        pass
    assert not done, "the slow call ended before it was seen running"
    # ...then a quick call is answered while it still runs (on one event loop, it waited).
    status, text, _ = post(base, call_body(), made["alice"])
    still_running = thread.is_alive()
    thread.join()
    assert status == 200 and done == [200], text
    assert still_running, "the quick call was answered only after the slow one"


# ---------------------------------------------------------------------------------------------
# Limits: a full call queue is 503 with Retry-After, a token over its rate 429; metrics
# ---------------------------------------------------------------------------------------------

# One pool thread, one call at most in the pool, a burst of 4 calls per token.
TIGHT = (
    "import addin.team as t\nt.POOL_THREADS = 1\nt.MAX_PENDING_CALLS = 1\nt.RATE_LIMIT_BURST = 4\n"
)


@pytest.fixture(scope="module")
def tight(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tight")
    flags = ("--workers", "1", "--rate-limit", "0.01")
    if importlib.util.find_spec("prometheus_client") is not None:
        flags += ("--metrics",)
    with signed_in_server(folder, *flags, prelude=TIGHT, names=("alice", "bob", "ops")) as run:
        yield run


def test_a_token_over_its_rate_is_429_with_retry_after(tight):
    base, _, made, _ = tight
    statuses = [post(base, call_body(), made["alice"]) for _ in range(5)]
    assert [s[0] for s in statuses] == [200, 200, 200, 200, 429]
    status, text, headers = statuses[-1]
    assert text == "token alice is over its rate limit (0.01 calls a second); retry later"
    assert int(headers["retry-after"]) >= 1
    assert post(base, call_body(), made["bob"])[0] == 200  # per token


def test_a_full_queue_is_503_with_retry_after_and_one_cell_calls_are_answered_meanwhile(tight):
    from addin.team import INLINE_CELLS
    from udfs.excel import MAX_PLANS_PER_CALL

    base, _, made, _ = tight
    plans = [[2048.0 + i] for i in range(MAX_PLANS_PER_CALL)]
    slow_body = call_body("TRAIN_QUANTILE", "days", 0.9, 671e9, 37e9, 14.8e12, plans, "H100")
    done = []
    thread = threading.Thread(target=lambda: done.append(post(base, slow_body, made["ops"])[0]))
    thread.start()
    while not done and "1 call(s) running or waiting" not in get(base, "/ready")[1]:
        pass
    # The pool's one thread and its one place are taken by the slow call: a one-cell call is
    # answered (on the event loop) while the slow call still runs...
    quick = post(base, call_body(), made["ops"])
    still_running = thread.is_alive()
    # ...and a call of more cells than are answered on the event loop is refused: the pool's
    # queue is full.
    column = [[2048.0]] * (INLINE_CELLS - 2)  # with the three one-cell arguments: one over
    status, text, headers = post(
        base, call_body("TRAIN_DAYS", 37e9, 14.8e12, column, 400), made["ops"]
    )
    ready = get(base, "/ready")
    thread.join()
    assert done == [200]
    assert quick[0] == 200, quick[1]
    assert round(json.loads(quick[1])["result"][0][0], 1) == 46.4
    assert still_running, "the quick call waited for the slow one"
    assert status == 503 and headers["retry-after"] == "1"
    assert text == "the server is busy (1 calls waiting); retry shortly"
    assert ready[0] in (200, 503)  # the slow call may have ended meanwhile


def test_metrics_need_an_admin_token(tight):
    pytest.importorskip("prometheus_client")
    base, _, made, _ = tight
    assert post(base, call_body(), made["ops"])[0] in (200, 429)
    assert post(base, b"", made["alice"], path="/metrics")[0] in (403, 405)
    request = urllib.request.Request(base + "/metrics")
    request.add_header("Authorization", f"Bearer {made['alice']}")
    context = ssl._create_unverified_context()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, context=context)
    assert refused.value.code == 403
    assert refused.value.read().decode() == "/metrics needs an admin token (alice is user)"
    request = urllib.request.Request(base + "/metrics")
    request.add_header("Authorization", f"Bearer {made['ops']}")
    with urllib.request.urlopen(request, context=context) as response:
        text = response.read().decode()
    assert 'compute_lab_calls_total{function="TRAIN_DAYS",status="' in text
    assert "compute_lab_call_seconds_bucket" in text
    assert get(base, "/metrics")[0] == 401


def test_graceful_shutdown_finishes_the_call_in_flight(tmp_path):
    import signal
    import subprocess

    from helpers_team import serve_command, server_env

    from addin.local_server import free_port, stop
    from udfs.excel import MAX_PLANS_PER_CALL

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    argv = serve_command("--license-key", "noncommercial", "--workers", "1")(port)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=server_env(tmp_path)
        )
    try:
        while True:
            try:
                if get(base, "/ready")[0] == 200:
                    break
            except OSError:
                assert proc.poll() is None, log.read_text()
        plans = [[2048.0 + i] for i in range(MAX_PLANS_PER_CALL)]
        slow_body = call_body("TRAIN_QUANTILE", "days", 0.9, 671e9, 37e9, 14.8e12, plans, "H100")
        done = []
        thread = threading.Thread(target=lambda: done.append(post(base, slow_body)))
        thread.start()
        while not done and "1 call(s) running or waiting" not in get(base, "/ready")[1]:
            pass
        proc.send_signal(signal.SIGTERM)
        thread.join()
        # uvicorn re-raises the signal once it has shut down: the process ends by SIGTERM.
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM)
        assert "Finished server process" in log.read_text()
        status, text, _ = done[0]
        assert status == 200 and len(json.loads(text)["result"]) == MAX_PLANS_PER_CALL
    finally:
        stop(proc)


def options(base, origin):
    request = urllib.request.Request(base + "/xlwings/custom-functions-call", method="OPTIONS")
    request.add_header("Origin", origin)
    request.add_header("Access-Control-Request-Method", "POST")
    request.add_header("Access-Control-Request-Headers", "authorization, content-type")
    try:
        with urllib.request.urlopen(request, context=ssl._create_unverified_context()) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


def test_cors_preflight_only_for_office_origins(team):
    base = team[0]
    status, _, headers = options(base, "https://excel.officeapps.live.com")
    assert status == 200
    assert headers["access-control-allow-origin"] == "https://excel.officeapps.live.com"
    status, text, headers = options(base, "https://evil.test")
    assert status == 400 and text == "Disallowed CORS origin"
    assert "access-control-allow-origin" not in headers


def test_security_headers_on_every_answer(team):
    base, _, made, _ = team
    answers = [
        get(base, "/manifest.xml"),
        get(base, "/static/..%2f..%2fserver_app.py"),
        get(base, "/health"),
        post(base, call_body()),  # 401
        post(base, b"{", made["alice"]),  # 400
    ]
    for status, _, headers in answers:
        assert headers.get("x-content-type-options") == "nosniff", status
        assert headers.get("referrer-policy") == "no-referrer", status
        assert "strict-transport-security" in headers, status


def test_with_entra_id_calls_are_left_to_xlwings_which_checks_the_token(tmp_path):
    import os
    import subprocess
    import sys

    from helpers_team import server_env

    code = (
        "from addin import server_app\n"
        "from starlette.testclient import TestClient\n"
        "c = TestClient(server_app.app, base_url='http://127.0.0.1:8000')\n"
        "r = c.post('/xlwings/custom-functions-call', json=BODY)\n"
        "print(r.status_code)\n"
    ).replace("BODY", repr(call_body()))
    env = server_env(tmp_path, XLWINGS_AUTH_PROVIDERS='["entraid"]')
    env["XLWINGS_AUTH_ENTRAID_CLIENT_ID"] = "00000000-0000-0000-0000-000000000000"
    env["XLWINGS_AUTH_ENTRAID_TENANT_ID"] = "00000000-0000-0000-0000-000000000000"
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env,
        timeout=120, cwd=os.getcwd(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "401"  # not answered unchecked by the fast path


# ---------------------------------------------------------------------------------------------
# Laws: the rate limiter never lets more through than its burst plus its rate; any
# Authorization header is 401 (400 if HTTP itself refuses it) with one line, never a 500
# ---------------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(
    rate=st.floats(0.1, 100),
    burst=st.integers(1, 20),
    gaps=st.lists(st.floats(0, 2), min_size=1, max_size=80),
)
def test_rate_limiter_lets_through_at_most_burst_plus_rate_times_time(rate, burst, gaps):
    from addin.team import RateLimiter

    limiter = RateLimiter(rate, burst)
    now, allowed = 1000.0, []
    for gap in gaps:
        now += gap
        if limiter.wait("t", now) == 0:
            allowed.append(now)
    for i, start in enumerate(allowed):
        for j in range(i, len(allowed)):
            assert j - i + 1 <= burst + rate * (allowed[j] - start) + 1e-9


@settings(max_examples=40, deadline=None)
@given(header=st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=120))
def test_any_authorization_header_is_a_one_line_401(team, header):
    base = team[0]
    try:
        header.encode("latin-1")
    except UnicodeEncodeError:
        return
    status, text, _ = post(base, call_body(), headers={"Authorization": header})
    # 400: a control character the HTTP parser itself refuses (DEL); else our 401.
    assert status in (400, 401) and "\n" not in text.strip() and text
