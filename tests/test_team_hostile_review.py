"""A hostile review of the team server's token file, access log and body budget: what an
attacker with files and requests broke, kept as regression tests.

Real parts: the token file on disk (a FIFO made with ``mkfifo``), ``compute-lab serve`` as a
process on loopback, requests byte for byte over a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import socket
import threading
import time

import pytest

from addin import tokens

needs_server = pytest.mark.skipif(
    importlib.util.find_spec("xlwings_server") is None,
    reason="needs the server extra (xlwings-server)",
)


def _unblock(path):
    """Open the FIFO ``path`` for writing and close it: a reader waiting on it reads nothing
    and goes on (the guard of a test that would otherwise hang)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def _in_a_thread(path, call):
    """(finished, result or the TokenFileError's text) of ``call()``, run in a thread; a call
    still waiting on the FIFO ``path`` after the guard is let go (the guard stops a hang, it
    does not measure speed)."""
    result = []

    def run():
        try:
            result.append(call())
        except tokens.TokenFileError as err:
            result.append(str(err))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    finished = not thread.is_alive()
    while thread.is_alive():
        _unblock(path)
        thread.join(0.1)
    return finished, result


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("face", ["server's check", "load", "token list", "token create"])
def test_a_fifo_in_the_token_files_place_is_refused_without_waiting(tmp_path, face):
    """A FIFO put where the token file was (by its owner, or by anyone while the folder is
    loose: the folder is checked after the file is opened) is refused at once: waiting for a
    writer held the server's event loop, so no request (not even /health) was answered again."""
    path = tmp_path / "tokens.json"
    token = tokens.create(path, "alice")
    store = tokens.TokenStore(path)  # a server already running
    assert store.check(f"Bearer {token}") == ("alice", "user")
    path.unlink()
    os.mkfifo(path, 0o600)
    call = {
        "server's check": lambda: store.check(f"Bearer {token}"),
        "load": lambda: tokens.load(path),
        "token list": lambda: tokens.list_tokens(path),
        "token create": lambda: tokens.create(path, "bob"),
    }[face]
    finished, result = _in_a_thread(path, call)
    assert finished, "waited for a writer on the FIFO"
    if face == "server's check":
        assert result == [(None, "sign-in is unavailable: the server's token file is unusable")]
        assert store.problem() == f"token file {path}: is not a regular file"
    else:
        assert result == [f"token file {path}: is not a regular file"]


class _Labels:
    """A stand-in for :class:`addin.team.Metrics`: the function labels it was given."""

    def __init__(self):
        self.functions = []

    def observe(self, function, status, seconds):
        self.functions.append(function)


def test_a_script_call_is_logged_by_its_known_name_only():
    """The access log and the metrics name a script call by the server's scripts only: the
    rest of the URL is the client's (a token there, or a new name per request that a metric
    would keep as a label for ever)."""
    from addin.team import AccessLog, Config

    labels = _Labels()
    lines = []

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 401, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    log = AccessLog(app, Config(), ["/xlwings/custom-scripts-call/"], labels, scripts=["go"])
    log.logger = type("L", (), {"info": staticmethod(lines.append)})()

    async def call(path):
        scope = {"type": "http", "method": "POST", "path": path, "headers": []}

        async def send(message):
            pass

        await log(scope, None, send)

    token = tokens.TOKEN_PREFIX + "T" * 43
    for path in (f"/xlwings/custom-scripts-call/{token}", "/xlwings/custom-scripts-call/go"):
        asyncio.run(call(path))
    assert labels.functions == ["script:(unknown)", "script:go"]
    assert [json.loads(line)["function"] for line in lines] == labels.functions
    assert not [line for line in lines if "T" * 20 in line]


def test_a_head_that_declares_a_large_body_and_sends_nothing_holds_nothing():
    """:class:`addin.team.BodyBudget`: two clients that declare the largest bodies their
    tokens may send and send no byte of them do not take the budget from a third token."""
    from addin.team import BodyBudget

    mb = 2**20

    async def app(scope, receive, send):
        while (message := await receive()).get("more_body"):
            pass
        status = 499 if message["type"] == "http.disconnect" else 200
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    budget = BodyBudget(app, ["/call"], limit=10 * mb, per_token=5 * mb)

    async def request(token, size, silent=False):
        scope = {"type": "http", "method": "POST", "path": "/call", "state": {"token": token}}
        scope["headers"] = [(b"content-length", str(size).encode())]
        pieces = [] if silent else [b" " * (size // 2)] * 2
        sent = []

        async def receive():
            if pieces:
                piece = pieces.pop()
                return {"type": "http.request", "body": piece, "more_body": bool(pieces)}
            await asyncio.sleep(3600)  # the silent client: its head, then nothing

        async def send(message):
            sent.append(message)

        await budget(scope, receive, send)
        return sent[0]["status"]

    async def scenario():
        silent = [asyncio.create_task(request(n, 5 * mb, silent=True)) for n in ("a", "b")]
        await asyncio.sleep(0.01)
        assert budget.held == 0  # declared, not received: nothing is held
        assert await request("carol", 4 * mb) == 200
        for task in silent:
            task.cancel()
        await asyncio.gather(*silent, return_exceptions=True)
        assert budget.held == 0 and budget.held_by_token == {}

    asyncio.run(scenario())


# ---------------------------------------------------------------------------------------------
# Against a running server
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    from helpers_team import signed_in_server

    folder = tmp_path_factory.mktemp("team")
    names = ("alice", "bob", "carol")
    with signed_in_server(folder, "--workers", "1", tls=False, names=names) as running:
        yield running


def _port(base):
    return int(base.rsplit(":", 1)[1])


def _request(port, head, body=b""):
    """Send ``head`` (lines, without the blank line) and ``body``; the status answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(b"\r\n".join(head) + b"\r\n\r\n" + body)
        chunks = []
        with contextlib.suppress(ConnectionResetError):
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    answer = b"".join(chunks)
    return int(answer.split(b" ", 2)[1]) if answer else None


@needs_server
def test_a_token_in_a_script_url_is_in_no_log_of_serve(team):
    base, _, made, log = team
    port = _port(base)
    host = f"Host: 127.0.0.1:{port}".encode()
    for token in (made["carol"], tokens.TOKEN_PREFIX + "Q" * 43):
        for signed in ((), (f"Authorization: Bearer {made['alice']}".encode(),)):
            head = [
                f"POST /xlwings/custom-scripts-call/{token} HTTP/1.1".encode(),
                host,
                *signed,
                b"Content-Type: application/json",
                b"Content-Length: 2",
                b"Connection: close",
            ]
            assert _request(port, head, b"{}") in (401, 404)
    deadline = time.monotonic() + 30
    while log.read_text().count("script:") < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    text = log.read_text()
    assert text.count('"function":"script:(unknown)"') == 4  # the calls are logged...
    assert made["carol"][3:] not in text and "Q" * 43 not in text  # ...without the token


@needs_server
def test_two_heads_declaring_the_largest_bodies_do_not_lock_out_a_third_token(team):
    """Two tokens each declare a 64 MB body (Expect: 100-continue) and send nothing; a third
    token's 8 MB call is answered (it was 503 until the heads' body deadline, renewable by
    sending the heads again)."""
    from helpers_team import call_body

    from addin.team import MAX_HELD_BODY_BYTES, MAX_HELD_BODY_BYTES_PER_TOKEN

    base, _, made, _ = team
    port = _port(base)
    host = f"Host: 127.0.0.1:{port}".encode()
    assert 2 * MAX_HELD_BODY_BYTES_PER_TOKEN >= MAX_HELD_BODY_BYTES

    def head(name, size, *extra):
        return [
            b"POST /xlwings/custom-functions-call HTTP/1.1",
            host,
            f"Authorization: Bearer {made[name]}".encode(),
            b"Content-Type: application/json",
            f"Content-Length: {size}".encode(),
            *extra,
        ]

    held = []
    try:
        for name in ("alice", "bob"):
            conn = socket.create_connection(("127.0.0.1", port), timeout=60)
            held.append(conn)
            lines = head(name, MAX_HELD_BODY_BYTES_PER_TOKEN, b"Expect: 100-continue")
            conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
            assert conn.recv(100).startswith(b"HTTP/1.1 100 Continue")  # the head is taken
        body = json.dumps(call_body()).encode()
        body += b" " * (8 * 2**20 - len(body))
        assert _request(port, [*head("carol", len(body)), b"Connection: close"], body) == 200
    finally:
        for conn in held:
            conn.close()


def test_an_update_removes_its_own_stale_temporary_files_only(tmp_path):
    """``tokens.json``'s update clears what a stopped command left (``.tokens.json.<pid>.tmp``),
    not the temporary file of ``tokens.json.2`` in the same folder, which another command may be
    writing under that file's own lock (its rename would then fail)."""
    path = tmp_path / "tokens.json"
    tokens.create(path, "alice")
    stale = tmp_path / ".tokens.json.4242.tmp"
    other = tmp_path / ".tokens.json.2.4343.tmp"
    for left in (stale, other):
        left.write_text("{}")
    tokens.create(path, "bob")
    assert not stale.exists()
    assert other.read_text() == "{}"
    assert [t["name"] for t in tokens.load(path)] == ["alice", "bob"]


@pytest.mark.skipif(not hasattr(os, "O_DIRECTORY"), reason="folders are locked on POSIX")
def test_a_lock_file_removed_while_held_still_keeps_a_second_update_out(tmp_path, monkeypatch):
    """An update in progress holds the folder's lock too: removing its lock file lets no second
    update in beside it, and neither change is lost."""
    import threading

    path = tmp_path / "tokens.json"
    tokens.create(path, "alice")
    monkeypatch.setattr(tokens, "LOCK_WAIT_SECONDS", 0.3)
    inside, release = threading.Event(), threading.Event()
    real_update = tokens._update

    def slow_change(current):
        inside.set()  # the first update holds its locks here...
        release.wait(10)
        return current

    first = threading.Thread(target=real_update, args=(path, slow_change))
    first.start()
    try:
        assert inside.wait(10)
        path.with_name("tokens.json.lock").unlink()  # ...when its lock file is cleaned away
        with pytest.raises(tokens.TokenFileError, match="has held its lock"):
            tokens.create(path, "bob")
    finally:
        release.set()
        first.join(10)
    tokens.create(path, "bob")  # once the first is done, the next goes through
    assert [t["name"] for t in tokens.load(path)] == ["alice", "bob"]


@pytest.mark.skipif(not hasattr(os, "O_DIRECTORY"), reason="folders are opened on POSIX")
def test_an_update_flushes_the_folder_after_its_rename(tmp_path, monkeypatch):
    """A revoke is a rename: it lasts through a crash of the machine only once the folder's
    entries are on disk, so the folder is fsynced after the file (which is fsynced first)."""
    import stat

    path = tmp_path / "tokens.json"
    tokens.create(path, "alice")
    synced = []
    real_fsync = os.fsync

    def fsync(fd):
        info = os.fstat(fd)
        synced.append(("folder" if stat.S_ISDIR(info.st_mode) else "file", info.st_ino))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    tokens.revoke(path, "alice")
    assert synced[-1] == ("folder", tmp_path.stat().st_ino)
    assert [kind for kind, _ in synced] == ["file", "folder"]


@pytest.mark.skipif(
    importlib.util.find_spec("prometheus_client") is None, reason="needs prometheus-client"
)
def test_unauthenticated_script_calls_with_new_names_add_no_metric_labels():
    """With --metrics, each new script name in a URL (no token needed: the call is 401) made a
    new label set that /metrics kept for ever: 20,000 such calls kept 87 MB and 400,000 lines."""
    from addin.team import AccessLog, Config, Metrics

    metrics = Metrics()

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 401, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    prefix = "/xlwings/custom-scripts-call/"
    log = AccessLog(app, Config(access_log=False), [prefix], metrics, scripts=["go"])

    async def calls(names):
        async def send(message):
            pass

        for name in names:
            scope = {"type": "http", "method": "POST", "path": prefix + name, "headers": []}
            await log(scope, None, send)

    asyncio.run(calls(["first"]))
    lines = metrics.render()[0].count(b"\n")
    asyncio.run(calls([f"name{i}" for i in range(1000)]))
    assert metrics.render()[0].count(b"\n") == lines
