"""Start a local server process, wait until it answers, always stop it (tests and benchmarks).

:func:`local_server` runs a command (by default ``uvicorn addin.server_app:app``) on a free
127.0.0.1 port, polls one URL until it answers 200, yields the base URL and, whatever happens,
terminates the process (killing it if it does not stop). Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

__all__ = [
    "free_port",
    "uvicorn_command",
    "local_server",
    "raw_request",
    "stop",
    "ServerStartError",
]

HOST = "127.0.0.1"


class ServerStartError(RuntimeError):
    """The server exited or did not answer in time; the message ends with its output."""


def free_port(host=HOST):
    """A TCP port nothing listens on right now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def uvicorn_command(port, host=HOST, app="addin.server_app:app", *extra):
    """``python -m uvicorn APP --host HOST --port PORT`` with this Python, with the time limits
    and the connection limit ``compute-lab serve`` uses (``addin.connections``)."""
    from addin.connections import UVICORN_FLAGS

    command = [sys.executable, "-m", "uvicorn", app, "--host", host, "--port", str(port)]
    return command + [*UVICORN_FLAGS, *extra]


def stop(proc, timeout=15):
    """Terminate ``proc``; kill it if it has not exited after ``timeout`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def _answers(url):
    # A readiness probe on this machine's loopback: a self-signed test certificate is fine.
    context = ssl._create_unverified_context() if url.startswith("https:") else None
    try:
        with urllib.request.urlopen(url, timeout=10, context=context) as response:
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return False


@contextlib.contextmanager
def local_server(
    command=None,
    *,
    port=None,
    env=None,
    log=None,
    ready_path="/xlwings/custom-functions-meta.json",
    startup_seconds=60,
    scheme="http",
    host=HOST,
):
    """Run ``command`` (default: uvicorn with the xlwings Server app) and yield its base URL.

    ``command`` is a list, or a function of the port returning one; ``port`` defaults to a
    free one on ``host``; ``scheme`` is "https" for a server started with a certificate (the
    readiness probe does not verify it). Output goes to ``log`` (a path; default a temporary file).
    Raises :class:`ServerStartError`, with the output, if the process exits or ``ready_path``
    does not answer 200 within ``startup_seconds``. The process is stopped on leaving, always.
    """
    port = port or free_port(host)
    command = command or uvicorn_command
    argv = command(port) if callable(command) else list(command)
    with contextlib.ExitStack() as stack:
        if log is None:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="compute-lab-server-"))
            log = Path(tmp) / "server.log"
        log = Path(log)
        with open(log, "w") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=dict(env or os.environ)
            )
        try:
            base = f"{scheme}://{host}:{port}"
            deadline = time.monotonic() + startup_seconds
            while not _answers(base + ready_path):
                if proc.poll() is not None:
                    raise ServerStartError(
                        f"server exited ({proc.returncode}):\n{log.read_text(errors='replace')}"
                    )
                if time.monotonic() > deadline:
                    raise ServerStartError(
                        f"server not ready in {startup_seconds}s:\n"
                        f"{log.read_text(errors='replace')}"
                    )
                time.sleep(0.2)
            yield base
        finally:
            stop(proc)


def raw_request(port, target, *, host=HOST, method=b"GET", headers=(), body=b"", timeout=30):
    """Send one HTTP/1.1 request with ``target`` byte for byte (no client normalises ``..`` or
    re-encodes it) and return ``(status, body)``; ``(None, b"")`` if the server closed first.
    ``headers`` are lines such as ``b"Host: x"`` (a Host given there replaces the default)."""
    target = target.encode("latin-1") if isinstance(target, str) else target
    lines = [method + b" " + target + b" HTTP/1.1"]
    if not any(h.lower().startswith(b"host:") for h in headers):
        lines.append(f"Host: {host}:{port}".encode())
    lines += [*headers, b"Content-Length: " + str(len(body)).encode(), b"Connection: close"]
    with socket.create_connection((host, port), timeout=timeout) as conn:
        conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        chunks = []
        with contextlib.suppress(ConnectionResetError):  # a server that hung up
            while chunk := conn.recv(65536):
                chunks.append(chunk)
    answer = b"".join(chunks)
    if not answer:
        return None, b""
    head, _, rest = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), rest


def call_body(func_name, *args):
    """The JSON body of a custom-functions call as xlwings' Office.js code sends it (runtime
    1.4): each argument a 2-D range, a plain value as a one-cell range."""
    return json.dumps(
        {
            "client": "Office.js",
            "func_name": func_name,
            "args": [a if isinstance(a, list) else [[a]] for a in args],
            "caller_address": "[Book1.xlsx]Sheet1!B2",
            "culture_info_name": "en-US",
            "date_format": "M/d/yyyy",
            "version": "0.37.8",
            "runtime": "1.4",
        }
    ).encode()


def quiet_server():
    """``(command, env)`` of a benchmark's server for :func:`local_server`: the uvicorn command
    line as a function of the port, production settings, warnings only, no ``.env`` read."""
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": os.environ.get("XLWINGS_LICENSE_KEY", "noncommercial"),
        "XLWINGS_ENVIRONMENT": "prod",
        "XLWINGS_LOG_LEVEL": "WARNING",
        "DOTENV_PATH": os.path.join(tempfile.gettempdir(), "compute-lab-bench-no.env"),
    }
    env.pop("XLWINGS_ON_SERVER", None)
    return (lambda port: uvicorn_command(port) + ["--log-level", "warning"]), env
