"""The team server's token file and connections under hostile use: updates racing each other,
loose folders, tokens in URLs, oversized headers in one write, unfinished bodies.

Real parts: ``compute-lab serve token`` commands as concurrent processes on one token file,
``compute-lab serve`` / uvicorn as a process, requests byte for byte over a socket.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from addin import tokens
from addin.local_server import local_server, raw_request

# A child process that waits for the go file, then runs ``compute-lab ARGS``; its
# ``tokens.load`` pauses after each read, so that two commands' read-change-write overlap
# (without the lock, each would write what it read before the other's change).
_CHILD = """
import os, sys, time
from addin import tokens
_load = tokens.load
def slow_load(path):
    got = _load(path)
    time.sleep(0.05)
    return got
tokens.load = slow_load
go = sys.argv.pop(1)
while not os.path.exists(go):
    time.sleep(0.002)
from compute_lab.cli import main
sys.exit(main())
"""


def _racing(go, *argv):
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(go), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_revoke_racing_create_loses_neither(tmp_path):
    rounds = 16
    for i in range(rounds):
        path = tmp_path / f"tokens{i}.json"
        old = tokens.create(path, "v1")
        go = tmp_path / f"go{i}"
        procs = [
            _racing(go, "serve", "token", "revoke", "v1", "--token-file", str(path)),
            _racing(go, "serve", "token", "create", "n1", "--token-file", str(path)),
            _racing(go, "serve", "token", "create", "n2", "--token-file", str(path)),
        ]
        go.touch()
        outs = [(p.wait(timeout=120), *p.communicate()) for p in procs]
        assert [status for status, _, _ in outs] == [0, 0, 0], outs
        assert outs[0][1].startswith("revoked v1")
        store = tokens.TokenStore(path)
        assert store.check(f"Bearer {old}") == (None, "the token is unknown or has been revoked")
        for name, (_, out, _) in zip(("n1", "n2"), outs[1:], strict=True):
            assert store.check(f"Bearer {out.strip()}") == (name, "user"), f"round {i}: {name}"
        assert sorted(t["name"] for t in tokens.load(path)) == ["n1", "n2"]
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_a_held_lock_makes_the_command_wait_then_give_up_in_one_line(tmp_path, monkeypatch):
    import fcntl

    path = tmp_path / "tokens.json"
    tokens.create(path, "alice")
    monkeypatch.setattr(tokens, "LOCK_WAIT_SECONDS", 0.2)
    with open(path.with_name("tokens.json.lock"), "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(tokens.TokenFileError, match="has held its lock .* for over 0.2 s"):
            tokens.revoke(path, "alice")
    tokens.revoke(path, "alice")  # the lock released, the revoke goes through
    assert tokens.load(path) == []


def test_a_lock_file_that_is_a_link_is_refused(tmp_path):
    path = tmp_path / "tokens.json"
    tokens.create(path, "alice")
    target = tmp_path / "elsewhere"
    target.write_text("x")
    lock = path.with_name("tokens.json.lock")
    lock.unlink()
    lock.symlink_to(target)
    with pytest.raises(tokens.TokenFileError, match="lock file .* is a symbolic link; remove it"):
        tokens.create(path, "bob")
    assert target.read_text() == "x" and [t["name"] for t in tokens.load(path)] == ["alice"]


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777, 0o730], ids=oct)
def test_a_token_file_in_a_folder_others_can_write_is_refused(tmp_path, mode):
    folder = tmp_path / "shared"
    path = folder / "tokens.json"
    token = tokens.create(path, "alice")
    store = tokens.TokenStore(path)  # a server already running
    assert store.check(f"Bearer {token}") == ("alice", "user")
    folder.chmod(mode)
    try:
        rule = f"its folder {folder} has mode {mode:03o}, which lets group or others"
        hint = f"run: chmod go-w {folder}"
        if mode & 0o1000:  # a shared folder such as /tmp: chmod is not the answer
            rule = f"its folder {folder} is shared (mode {mode:04o}: others may create files"
            hint = "keep the token file in a folder of your own"
        for attempt in (
            lambda: tokens.load(path),
            lambda: tokens.create(path, "bob"),
            lambda: tokens.revoke(path, "alice"),
            lambda: tokens.create(folder / "new.json", "bob"),
        ):
            with pytest.raises(tokens.TokenFileError) as err:
                attempt()
            assert rule in str(err.value) and hint in str(err.value)
            assert "\n" not in str(err.value)
        assert store.check(f"Bearer {token}")[1].startswith("sign-in is unavailable")
        assert rule in store.problem()
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "compute_lab",
                "serve",
                "token",
                "list",
                "--token-file",
                str(path),
            ],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
        assert rule in run.stderr and hint in run.stderr
    finally:
        folder.chmod(0o700)
    assert [t["name"] for t in tokens.load(path)] == ["alice"]
    assert not (folder / "new.json").exists()


# ---------------------------------------------------------------------------------------------
# A real server: tokens in URLs never logged; the header bound however the bytes arrive
# ---------------------------------------------------------------------------------------------

needs_server = pytest.mark.skipif(
    importlib.util.find_spec("xlwings_server") is None,
    reason="needs the server extra (xlwings-server)",
)


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    from helpers_team import signed_in_server

    folder = tmp_path_factory.mktemp("team")
    with signed_in_server(folder, "--workers", "1", tls=False) as running:
        yield running


def _port(base):
    return int(base.rsplit(":", 1)[1])


def _log_when(log, ready, seconds=30):
    """The log's text once ``ready(text)`` (log lines are written just after the answers)."""
    deadline = time.monotonic() + seconds
    while not ready(text := log.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return text


@needs_server
def test_a_token_in_the_query_string_is_in_no_log_of_serve(team):
    base, _, made, log = team
    port = _port(base)
    for token in (made["alice"], tokens.TOKEN_PREFIX + "Q" * 43):
        for method, target in (
            (b"POST", f"/xlwings/custom-functions-call?token={token}"),
            (b"GET", f"/manifest.xml?token={token}&x=1"),
            (b"GET", f"/no-such-page?access_token={token}"),
        ):
            status, _ = raw_request(port, target, method=method, body=b"{}")
            assert status in (200, 401, 404), (target, status)
    text = _log_when(log, lambda t: t.count('"status":401') >= 2)
    assert '"status":401' in text  # the JSON access log is written...
    assert made["alice"] not in text and "Q" * 43 not in text  # ...without the token
    assert "token=" not in text and "custom-functions-call?" not in text


@needs_server
def test_a_token_in_the_query_string_is_cut_from_plain_uvicorns_log(tmp_path):
    from helpers_team import server_env

    token = tokens.TOKEN_PREFIX + "Z" * 43
    log = tmp_path / "uvicorn.log"
    # uvicorn run by hand, without `serve`'s options: its own access log is on.
    command = [sys.executable, "-m", "uvicorn", "addin.server_app:app", "--host", "127.0.0.1"]
    with local_server(
        lambda port: [*command, "--port", str(port)], env=server_env(tmp_path), log=log
    ) as base:
        status, _ = raw_request(_port(base), f"/manifest.xml?token={token}")
        assert status == 200
        text = _log_when(log, lambda t: "GET /manifest.xml" in t)
    assert 'GET /manifest.xml?(query removed) HTTP/1.1" 200' in text  # the access log is on
    assert "Z" * 43 not in text and "token=" not in text


def _send_head(port, head, pieces=1):
    """Send a request head in ``pieces`` writes; return the status answered (None if closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        step = -(-len(head) // pieces)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            for start in range(0, len(head), step):
                conn.sendall(head[start : start + step])
        chunks = []
        with contextlib.suppress(ConnectionResetError):
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    answer = b"".join(chunks)
    return (int(answer.split(b" ", 2)[1]), answer) if answer else (None, b"")


@needs_server
@pytest.mark.parametrize("pieces", [1, 7, 200])
@pytest.mark.parametrize("where", ["header", "many-headers", "url"])
def test_a_head_over_the_bound_is_431_however_it_arrives(team, pieces, where):
    from addin.connections import MAX_HEADER_BYTES

    base = team[0]
    size = 100 * 1024
    assert size > MAX_HEADER_BYTES
    target = b"/manifest.xml"
    extra = []
    if where == "header":
        extra = [b"X-Big: " + b"a" * size]
    elif where == "many-headers":
        extra = [b"X-H%d: %s" % (i, b"b" * 90) for i in range(size // 100)]
    else:
        target += b"?" + b"u" * size
    host = f"Host: 127.0.0.1:{_port(base)}".encode()
    head = b"\r\n".join([b"GET " + target + b" HTTP/1.1", host, *extra, b"Connection: close"])
    status, answer = _send_head(_port(base), head + b"\r\n\r\n", pieces)
    assert status == 431, answer[:200]
    assert answer.endswith(b"request headers too large")
    # Just under the bound is answered.
    fits = [b"X-Fit: " + b"c" * (MAX_HEADER_BYTES - 1024)]
    head = b"\r\n".join([b"GET /manifest.xml HTTP/1.1", host, *fits, b"Connection: close"])
    assert _send_head(_port(base), head + b"\r\n\r\n", pieces)[0] == 200


def _server_pid(port):
    """The process serving ``port`` (``serve`` with one worker serves in its own process)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(port).encode() in argv:
            return int(proc.name)
    raise AssertionError(f"no process serves port {port}")


def _rss_bytes(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _answer(conn):
    chunks = []
    with contextlib.suppress(ConnectionResetError, TimeoutError):
        while chunk := conn.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, rest = b"".join(chunks).partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length: *(\d+)", head)
                if length and len(rest) >= int(length.group(1)):
                    break
    answer = b"".join(chunks)
    return (int(answer.split(b" ", 2)[1]), answer) if answer else (None, b"")


@needs_server
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_unfinished_bodies_of_one_token_are_held_within_its_bound(team):
    from helpers_team import call_body as call

    from addin.team import FAST_LANE_BYTES, MAX_HELD_BODY_BYTES_PER_TOKEN

    base, _, made, _ = team
    port = _port(base)
    pid = _server_pid(port)
    body_bytes = 16 * 2**20
    fits = MAX_HELD_BODY_BYTES_PER_TOKEN // body_bytes
    tries = 16
    assert tries > fits
    body = json.dumps(call()).encode()
    body += b" " * (body_bytes - len(body))  # JSON with trailing blanks: a valid call
    head = (
        f"POST /xlwings/custom-functions-call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {made['alice']}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    before = _rss_bytes(pid)
    conns, answers = [], {}
    try:
        for i in range(tries):
            conn = socket.create_connection(("127.0.0.1", port), timeout=60)
            conns.append(conn)
            conn.sendall(head)
            if select.select([conn], [], [], 2)[0]:  # answered on its head alone: refused
                answers[i] = _answer(conn)
                continue
            conn.sendall(body[:-1])  # all but the last byte: the body is unfinished
        time.sleep(1)  # the server reads what was sent
        held = _rss_bytes(pid) - before
        # Another token's one-cell call and alice's own small ones are still answered.
        assert post_call(port, made["bob"]) == 200
        assert post_call(port, made["alice"]) == 200
        for i, conn in enumerate(conns):
            if i not in answers:
                conn.sendall(body[-1:])
                answers[i] = _answer(conn)
    finally:
        for conn in conns:
            conn.close()
    statuses = [answers[i][0] for i in range(tries)]
    assert statuses.count(200) == fits and statuses.count(503) == tries - fits, statuses
    refused = next(a for s, a in answers.values() if s == 503)
    # The bytes held when it was refused: counted as they arrive, at most the token's bound.
    held_text = re.search(rb"token alice has (\d+) MB of request bodies in progress", refused)
    assert held_text and int(held_text[1]) <= MAX_HELD_BODY_BYTES_PER_TOKEN // 2**20, refused
    assert b"the most one token may (64 MB); retry when they are answered" in refused
    assert b"retry-after: 1" in refused.lower()
    # 16 bodies of 16 MB sent: only those within the bound are held (not 256 MB).
    assert held < MAX_HELD_BODY_BYTES_PER_TOKEN + 32 * 2**20, held
    assert FAST_LANE_BYTES < body_bytes
    # Released: the token's next big body is taken again.
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head + body)
        assert _answer(conn)[0] == 200


def post_call(port, token):
    from helpers_team import call_body as call

    body = json.dumps(call()).encode()
    head = (
        f"POST /xlwings/custom-functions-call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head + body)
        return _answer(conn)[0]


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown needs root")
def test_a_token_file_in_a_folder_of_another_user_is_refused(tmp_path):
    folder = tmp_path / "theirs"
    path = folder / "tokens.json"
    tokens.create(path, "alice")
    os.chown(folder, 12345, -1)  # mode 700: only its owner, another user, may change it
    rule = f"its folder {folder} is owned by another user (uid 12345), who could replace"
    for attempt in (lambda: tokens.load(path), lambda: tokens.create(path, "bob")):
        with pytest.raises(tokens.TokenFileError, match=re.escape(rule)):
            attempt()


def test_the_body_budget_bounds_a_worker_and_each_token_and_gives_back():
    """:class:`addin.team.BodyBudget` through ASGI calls: without sign-in only the worker's
    bound; a chunked body (no Content-Length) counted as it arrives; all given back."""
    import asyncio

    from addin.team import FAST_LANE_BYTES, BodyBudget

    mb = 2**20
    release = asyncio.Event()

    async def app(scope, receive, send):  # reads its whole body, then waits to be let go
        while (await receive()).get("more_body"):
            pass
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    budget = BodyBudget(app, ["/call"], limit=10 * mb, per_token=6 * mb)

    async def request(token, size, chunked=False):
        headers = [] if chunked else [(b"content-length", str(size).encode())]
        scope = {"type": "http", "method": "POST", "path": "/call", "headers": headers}
        scope["state"] = {"token": token}
        pieces = [b" " * (size // 4)] * 4
        sent = []

        async def receive():
            if pieces:
                piece = pieces.pop()
                return {"type": "http.request", "body": piece, "more_body": bool(pieces)}
            await asyncio.sleep(3600)

        async def send(message):
            sent.append(message)

        await budget(scope, receive, send)
        return sent[0]["status"] if sent else None, sent[-1].get("body", b"")

    async def scenario():
        first = [asyncio.create_task(request("alice", 4 * mb)) for _ in range(2)]
        await asyncio.sleep(0.01)
        assert budget.held == 4 * mb  # the second is past alice's 6 MB
        assert (await first[1])[0] == 503
        bob = asyncio.create_task(request("bob", 5 * mb, chunked=True))
        anon = asyncio.create_task(request(None, 2 * mb))
        await asyncio.sleep(0.01)
        assert budget.held == 4 * mb + 5 * mb  # bob's counted as it arrived; then the worker
        status, text = await anon
        assert status == 503 and b"the server is busy: 9 MB of request bodies" in text
        small = asyncio.create_task(request("alice", FAST_LANE_BYTES))  # never refused
        await asyncio.sleep(0.01)
        release.set()
        assert [(await t)[0] for t in (first[0], bob, small)] == [200, 200, 200]
        assert budget.held == 0 and budget.held_by_token == {}

    asyncio.run(scenario())
