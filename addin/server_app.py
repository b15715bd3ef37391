"""The xlwings Server app that serves Compute Lab's functions to Office.js (an optional extra).

``uvicorn addin.server_app:app`` (or ``compute-lab serve``) runs xlwings Server with the
project in ``addin/server``: its ``custom_functions`` are :mod:`udfs.excel`, its settings
(namespace ``LAB``, manifest ids) are in ``addin/server/pyproject.toml``.

Importing this module sets ``XLWINGS_ON_SERVER=true`` before anything imports xlwings (so the
``@xw.func`` decorators register the functions) and ``XLWINGS_PROJECT_DIR`` (unless given).

Four guards sit in front of xlwings Server, each answering 4xx with a one-line reason:

- :class:`HostGuard`: a request whose ``Host`` is not loopback:our-port (DNS rebinding);
- :class:`StaticGuard`: a request under a static-file route (``/static``) that does not name a
  regular file inside that route's folders, whatever its encoding (404). xlwings Server 1.20.0's
  ``OverridableStaticFiles`` joins the path to our ``addin/server/static`` folder without
  checking that it stays inside, so ``/static/..%2f..%2fserver_app.py`` would read any file
  (an upstream defect, issue 22);
- :class:`ScriptGuard`: ``/xlwings/custom-scripts-call/NAME`` for an unknown script (404), a
  non-JSON body (400/415), or a body that is not the task pane's workbook payload (400);
- :class:`CallGuard`: a ``POST /xlwings/custom-functions-call`` body that is not a well-formed
  call of one of our functions; xlwings Server itself would answer 500 to, say, a missing
  ``func_name``. A well-formed call is answered here, in a thread of a bounded pool, by the
  fast path (:mod:`addin.fast_path`) or xlwings' own dispatch (:func:`dispatch`).

The team server's parts (:mod:`addin.team`) wrap them: security headers on every answer,
``/health`` and ``/ready``, the access log and metrics, and sign-in with the tokens of
:mod:`addin.tokens` (see ``docs/team-server.md``).

Licence: xlwings Server and ``xlwings.server`` are PolyForm Noncommercial 1.0.0 or a paid
xlwings licence; a licence key (``XLWINGS_LICENSE_KEY``, ``noncommercial`` for
noncommercial use) must be set before this module is imported.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import itertools
import json
import logging
import numbers
import os
import sys
import threading
import time
from pathlib import Path

#: The xlwings Server project directory (custom_functions, custom_scripts, settings).
PROJECT_DIR = Path(__file__).resolve().parent / "server"

__all__ = [
    "PROJECT_DIR",
    "CallGuard",
    "HostGuard",
    "ScriptGuard",
    "StaticGuard",
    "check_call",
    "check_host",
    "check_script_call",
    "check_static",
    "dispatch",
    "answer_inline",
    "call_cells",
    "static_mounts",
    "app",
]

#: Host names that mean this machine; with the server's own port they (and the loopback address
#: the server is bound to, see ``_bound_names``) are the only Host headers answered (a
#: DNS-rebinding page sends its own domain name).
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})

from addin import team as _team  # noqa: E402  (the pool's and the fast lane's bounds)
from addin.team import MAX_BODY_BYTES  # noqa: E402  (bytes a call's body may take; 413 past it)
from addin.team import reply as _reply  # noqa: E402  (a one-line plain-text answer)
from udfs.validation import echo  # noqa: E402  (a value echoed back, cut to 80 characters)


def _signatures():
    from udfs import excel

    out = {}
    for name in excel.__all__:
        params = inspect.signature(getattr(excel, name)).parameters.values()
        required = sum(p.default is inspect.Parameter.empty for p in params)
        out[name] = (required, len(params))
    return out


def _check_cell(cell, where):
    if cell is None or isinstance(cell, str | bool | numbers.Real):
        return None
    if isinstance(cell, dict):
        if not isinstance(cell.get("type"), str):
            return f"{where} is an object without a 'type'"
        if "basicValue" not in cell:
            return f"{where} is a {cell['type']!r} value without a 'basicValue'"
        return None
    return f"{where} is not a cell value"


_PLAIN_CELLS = frozenset({float, int, str, bool, type(None)})


def _check_arg(arg, where):
    if not isinstance(arg, list):
        return _check_cell(arg, where)
    if not arg:
        return f"{where} is an empty list"
    if set(map(type, arg)) == {list}:
        # Fast path: rows of plain JSON scalars need no cell-by-cell look.
        if set(map(type, itertools.chain.from_iterable(arg))) <= _PLAIN_CELLS:
            return None
    for r, row in enumerate(arg):
        if not isinstance(row, list):
            problem = _check_cell(row, f"{where}[{r}]")
            if problem:
                return problem
            continue
        for c, cell in enumerate(row):
            problem = _check_cell(cell, f"{where}[{r}][{c}]")
            if problem:
                return problem
    return None


def check_call(body, signatures):
    """Why ``body`` is not a well-formed custom-functions call, or None if it is."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    for key in ("func_name", "version", "client"):
        if not isinstance(body.get(key), str):
            return f"'{key}' must be a string"
    name = body["func_name"]
    if name not in signatures:
        return f"unknown function {echo(name)}; known: {', '.join(signatures)}"
    try:
        float(body.get("runtime"))
    except (TypeError, ValueError):
        return "'runtime' must be a number such as \"1.4\""
    for key in ("culture_info_name", "date_format", "caller_address", "session_id"):
        if body.get(key) is not None and not isinstance(body[key], str):
            return f"'{key}' must be a string or null"
    args = body.get("args")
    if not isinstance(args, list):
        return "'args' must be a list of arguments"
    required, total = signatures[name]
    if not required <= len(args) <= total:
        expected = str(total) if required == total else f"{required} to {total}"
        return f"{name} takes {expected} arguments (got {len(args)})"
    for i, arg in enumerate(args):
        problem = _check_arg(arg, f"args[{i}]")
        if problem:
            return problem
    return None


def check_host(scope, public_hosts=frozenset()):
    """Why this request's ``Host`` header is not this server's loopback host:port (or one of
    ``public_hosts``, the names given to ``serve --public-host``), or None."""
    host = None
    for key, value in scope.get("headers") or ():
        if key == b"host":
            if host is not None:
                return "more than one Host header"
            host = value.decode("latin-1")
    if not host:
        return "no Host header"
    server = scope.get("server") or (None, None)
    port = server[1]
    name, sep, given_port = host.rpartition(":")
    if not sep or name.endswith(":"):  # no port, or a bare IPv6 address
        name, given_port = host, ""
    if public_hosts and (host.lower() in public_hosts or name.lower() in public_hosts):
        return None
    names = LOOPBACK_NAMES | _bound_names(server[0])
    if name.lower() not in names or given_port != str(port):
        bound = "".join(f"{n}:{port}, " for n in sorted(_bound_names(server[0]) - LOOPBACK_NAMES))
        public = "".join(f"{h}, " for h in sorted(public_hosts))
        return (
            f"Host {echo(host)} is not this server's address ({public}{bound}127.0.0.1:{port}, "
            f"localhost:{port} or [::1]:{port}); requests through other names are refused"
        )
    return None


def _bound_names(address):
    """The Host names of the loopback address the server is bound to (``serve --host
    127.0.0.2`` is answered at ``127.0.0.2:PORT``): an IP literal, never a DNS name, so a
    rebinding page cannot send it."""
    try:
        ip = ipaddress.ip_address(str(address))
    except ValueError:
        return frozenset()
    if not ip.is_loopback:
        return frozenset()
    return frozenset({f"[{ip}]" if ip.version == 6 else str(ip)})


class HostGuard:
    """ASGI middleware: answer 400 to a request whose Host is not loopback:our-port.

    The server has no access control of its own and listens on loopback only; a web page the
    user visits could still reach it through a DNS name it re-points at 127.0.0.1 (DNS
    rebinding). Such a request carries that name in its Host header and is refused here.
    """

    def __init__(self, app, public_hosts=frozenset()):
        self.app = app
        self.public_hosts = frozenset(h.lower() for h in public_hosts)

    async def __call__(self, scope, receive, send):
        if scope["type"] in ("http", "websocket"):
            problem = check_host(scope, self.public_hosts)
            if problem:
                if scope["type"] == "websocket":
                    return await send({"type": "websocket.close", "code": 1008})
                return await _reply(send, 400, problem)
        return await self.app(scope, receive, send)


def static_mounts(app):
    """``(prefix, folders)`` of every static-file route of the Starlette ``app``.

    ``folders`` are in the order the route looks in them: xlwings Server's
    ``OverridableStaticFiles`` tries the project's folder (``user_dir``) first, then its
    package's; a plain ``StaticFiles`` has only its own directories.
    """
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    mounts = []
    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, StaticFiles):
            files = route.app
            user = getattr(files, "user_dir", None)
            folders = ([Path(user)] if user is not None else []) + [
                Path(d) for d in files.all_directories
            ]
            mounts.append((route.path, tuple(folders)))
    return mounts


def check_static(path, folders):
    """The file a static route serves for ``path`` (decoded, after the route's prefix), or None.

    None unless ``path`` names, without ``.``/``..`` segments, backslashes or NUL, a regular
    file that lies inside its folder once every symbolic link is followed. The folders are
    tried in the route's own order, so the file checked is the file that would be served.
    """
    parts = [part for part in path.split("/") if part]
    if not parts or any(p in (".", "..") or "\\" in p or "\x00" in p for p in parts):
        return None
    for folder in folders:
        candidate = folder.joinpath(*parts)
        try:
            if not candidate.is_file():
                continue  # the route tries its next folder (or answers 404)
            real = candidate.resolve(strict=True)
            inside = real.is_relative_to(folder.resolve(strict=True))
        except (OSError, RuntimeError, ValueError):
            return None
        return real if inside and real.is_file() else None
    return None


class StaticGuard:
    """ASGI middleware: 404 for a static-file request that is not a regular file inside its folder.

    xlwings Server 1.20.0 serves ``/static/PATH`` from the project's ``static`` folder when
    ``folder / PATH`` is a file, without checking that the joined path stays in the folder
    (Starlette's own ``StaticFiles`` does check): ``/static/..%2f..%2fserver_app.py``,
    ``/static/%2e%2e/...`` or a raw ``/static/../..`` then read any file the process can. Every
    static-file route of the app (``static_mounts``) is guarded, whatever the encoding: the
    path checked is the decoded one the route itself uses.
    """

    def __init__(self, app, mounts):
        self.app = app
        self.mounts = [(prefix.rstrip("/"), folders) for prefix, folders in mounts]

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path") or ""
            if root and path.startswith(root):
                path = path[len(root) :]
            for prefix, folders in self.mounts:
                if path == prefix or path.startswith(prefix + "/"):
                    if check_static(path[len(prefix) :], folders) is None:
                        return await _reply(send, 404, "not found")
                    break
        return await self.app(scope, receive, send)


def _script_names():
    import custom_scripts

    return sorted(
        name
        for name in dir(custom_scripts)
        if getattr(getattr(custom_scripts, name), "__xlscript__", None) is not None
    )


def _rectangular(values):
    if not isinstance(values, list) or not values:
        return False
    if not all(isinstance(row, list) for row in values):
        return False
    widths = {len(row) for row in values}
    if len(widths) != 1:
        return False
    return all(
        cell is None or isinstance(cell, str | bool | numbers.Real)
        for row in values
        for cell in row
    )


_SHEET_LISTS = ("pictures", "shapes", "charts", "tables", "pivot_tables", "notes")


def check_script_call(body):
    """Why ``body`` is not the workbook payload the task pane posts to a custom script."""
    if not isinstance(body, dict):
        return "the request body must be a JSON object"
    for key in ("client", "version"):
        if not isinstance(body.get(key), str):
            return f"'{key}' must be a string"
    book = body.get("book")
    if not isinstance(book, dict):
        return "'book' must be an object"
    if not isinstance(book.get("name"), str):
        return "'book.name' must be a string"
    if book.get("selection") is not None and not isinstance(book["selection"], str):
        return "'book.selection' must be a cell address or null"
    sheets = body.get("sheets")
    if not isinstance(sheets, list) or not sheets:
        return "'sheets' must be a non-empty list"
    active = book.get("active_sheet_index")
    if type(active) is not int or not 0 <= active < len(sheets):
        return "'book.active_sheet_index' must be the index of one of the sheets"
    for i, sheet in enumerate(sheets):
        if not isinstance(sheet, dict) or not isinstance(sheet.get("name"), str):
            return f"'sheets[{i}]' must be an object with a 'name'"
        if not _rectangular(sheet.get("values")):
            return f"'sheets[{i}].values' must be a rectangular list of rows of cell values"
        for key in _SHEET_LISTS:
            if sheet.get(key) is not None and not isinstance(sheet[key], list):
                return f"'sheets[{i}].{key}' must be a list or null"
    if not isinstance(body.get("names", []), list):
        return "'names' must be a list"
    if "args" in body and not isinstance(body["args"], list):
        return "'args' must be a list"
    return None


class ScriptGuard:
    """ASGI middleware: 4xx for a custom-script call that is not one of ours or is malformed."""

    def __init__(self, app, prefix="/xlwings/custom-scripts-call/", max_bytes=MAX_BODY_BYTES):
        self.app = app
        self.prefix = prefix
        self.max_bytes = max_bytes
        self._names = _script_names()

    async def __call__(self, scope, receive, send):
        if not (scope["type"] == "http" and scope["path"].startswith(self.prefix)):
            return await self.app(scope, receive, send)
        name = scope["path"][len(self.prefix) :]
        if name not in self._names:
            known = ", ".join(self._names)
            return await _reply(send, 404, f"unknown custom script {echo(name)}; known: {known}")
        if scope["method"] != "POST":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        kind = headers.get(b"content-type", b"application/json").split(b";")[0].strip()
        if kind != b"application/json":
            return await _reply(send, 415, "the request body must be JSON (application/json)")
        got = await _read_json(receive, send, self.max_bytes)
        if got is None:
            return None
        raw, body = got
        problem = check_script_call(body)
        if problem:
            return await _reply(send, 400, problem)
        return await self.app(scope, _replay(raw, receive), send)


_TOO_LARGE = object()
_TOO_SLOW = object()
_BUSY = object()


async def _read_body(receive, max_bytes):
    """The whole request body; None if the client left, ``_TOO_LARGE`` past ``max_bytes``,
    ``_TOO_SLOW`` if it has not all arrived within ``BODY_TIMEOUT_SECONDS`` (the protocol of
    ``addin.connections`` enforces that too; this holds when uvicorn runs without it), or
    ``_BUSY`` then if the server was behind meanwhile (``connections.server_behind``)."""
    from addin import connections

    loop = asyncio.get_running_loop()
    # A backstop: under our protocol its own deadline (from the end of the headers) decides
    # first; LOOP_LATE_SECONDS later, so that a body that arrived while the event loop was held
    # is not timed out here in the same turn of the loop as its bytes are read.
    deadline = loop.time() + connections.BODY_TIMEOUT_SECONDS + connections.LOOP_LATE_SECONDS
    since = time.monotonic()
    chunks, size = [], 0
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            late = loop.time() - deadline > connections.LOOP_LATE_SECONDS
            return _BUSY if late or connections.server_behind(since) else _TOO_SLOW
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_bytes:
            return _TOO_LARGE
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _read_raw(receive, send, max_bytes):
    """The raw bytes of a request's body; None when the client left or when a 413 (too large),
    408 (too slow) or 503 (too slow while the server was busy) has been sent."""
    raw = await _read_body(receive, max_bytes)
    if raw is None:
        return None
    if raw is _TOO_LARGE:
        await _reply(send, 413, "request body too large")
        return None
    if raw is _BUSY:
        from addin import connections

        retry = [(b"retry-after", str(connections.BUSY_RETRY_AFTER).encode())]
        await _reply(send, 503, connections.BUSY_TEXT, retry)
        return None
    if raw is _TOO_SLOW:
        from addin import connections

        seconds = connections.BODY_TIMEOUT_SECONDS
        await _reply(send, 408, f"request body not received within {seconds:g} s")
        return None
    return raw


async def _read_json(receive, send, max_bytes):
    """(raw bytes, parsed body) of a JSON request; None when the client left or when a 413
    (too large), 408 (too slow) or 400 (not JSON) has been sent."""
    raw = await _read_raw(receive, send, max_bytes)
    if raw is None:
        return None
    body = _parse(raw)
    if type(body) is str:
        await _reply(send, 400, body)
        return None
    return raw, body


def _replay(raw, receive):
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay


class CallGuard:
    """ASGI middleware: reject malformed custom-function calls with 400; answer the rest itself.

    A well-formed call is dispatched by the fast path or xlwings' own ``custom_functions_call``
    so that a slow call does not hold a quick one. By its argument cells (:func:`call_cells`,
    bounds in :mod:`addin.team`): a one-cell formula answered by the fast path alone is computed
    on the event loop (:func:`answer_inline`: microseconds, no hand-over to a thread); any other
    call in the thread of ``pool`` (:class:`addin.team.CallPool`), where a big call's body is
    also parsed and its answer serialised. A full queue is 503 with ``Retry-After``. With
    ``pool=None`` the call is passed on to xlwings Server's route (on its event loop).
    """

    def __init__(
        self,
        app,
        path="/xlwings/custom-functions-call",
        max_bytes=MAX_BODY_BYTES,
        pool=None,
    ):
        self.app = app
        self.path = path
        self.max_bytes = max_bytes
        self.pool = pool
        self._signatures = _signatures()

    async def __call__(self, scope, receive, send):
        if not (
            scope["type"] == "http" and scope["method"] == "POST" and scope["path"] == self.path
        ):
            return await self.app(scope, receive, send)
        from addin import team

        if self.pool is None:
            return await self._to_xlwings(scope, receive, send)
        raw = await _read_raw(receive, send, self.max_bytes)
        if raw is None:
            return None
        state = scope.setdefault("state", {})
        user = _user(state.get("token"))
        body = None
        if len(raw) <= team.FAST_LANE_BYTES:  # parsed and checked here: microseconds
            body = _parse(raw)
            problem = body if type(body) is str else check_call(body, self._signatures)
            if problem:
                return await _reply(send, 400, problem)
            state["function"], state["rows"] = body["func_name"], _rows(body)
            if call_cells(body, team.INLINE_CELLS) <= team.INLINE_CELLS:
                done = answer_inline(body)
                if done is not None:
                    return await self._send(send, *done)
        pool = self.pool
        try:
            status, answer, function, rows = await pool.run(
                _answer, raw, body, self._signatures, user
            )
        except team.PoolFullError:
            retry = [(b"retry-after", str(team.RETRY_AFTER_SECONDS).encode())]
            busy = f"the server is busy ({pool.max_pending} calls waiting); retry shortly"
            return await team.reply(send, 503, busy, retry)
        if function is not None:
            state["function"], state["rows"] = function, rows
        return await self._send(send, status, answer)

    async def _send(self, send, status, answer):
        if status != 200:
            return await _reply(send, status, answer)
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(answer)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})
        return None

    async def _to_xlwings(self, scope, receive, send):
        got = await _read_json(receive, send, self.max_bytes)
        if got is None:
            return None
        raw, body = got
        problem = check_call(body, self._signatures)
        if problem:
            return await _reply(send, 400, problem)
        state = scope.setdefault("state", {})
        state["function"], state["rows"] = body["func_name"], _rows(body)
        return await self.app(scope, _replay(raw, receive), send)


_NOT_JSON = "the request body is not valid JSON"


def _parse(raw):
    """The parsed body, or the text of the 400 if it is not JSON."""
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _NOT_JSON


def _rows(body):
    return max((len(a) for a in body["args"] if isinstance(a, list)), default=1)


def call_cells(body, most):
    """The argument cells of the well-formed call ``body`` in all, counted from the shapes
    only, or ``most + 1`` once over ``most``."""
    cells = 0
    for arg in body["args"]:
        if type(arg) is list:
            cells += sum(len(row) if type(row) is list else 1 for row in arg)
        else:
            cells += 1
        if cells > most:
            return most + 1
    return cells


def _answer(raw, body, signatures, user):
    """``(status, bytes or text, function, rows)`` for the call ``raw`` in a pool thread:
    parsed, checked (400 with the reason) and dispatched; ``body``, if given, is ``raw``
    already parsed and checked."""
    if body is None:
        body = _parse(raw)
        problem = body if type(body) is str else check_call(body, signatures)
        if problem:
            return 400, problem, None, None
    status, answer = dispatch(body, user)
    return status, answer, body["func_name"], _rows(body)


_THREAD = threading.local()


def _user(token_name):
    from xlwings_server.models import CurrentUser

    if token_name is None:
        return CurrentUser(id="n/a", name="Anonymous")
    return CurrentUser(id=token_name, name=token_name)


#: As FastAPI answers xlwings Server's route: compact JSON, no NaN (a NaN is a 500). No
#: check for circular lists (a result is rows of cells; one costs a dict entry per row).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), check_circular=False
)


def _encode(result):
    rows = _team.ENCODE_CHUNK_ROWS
    if type(result) is not list or len(result) <= rows:
        return _ENCODER.encode({"result": result}).encode("utf-8")
    # In pieces (the same bytes): the GIL is handed over between them.
    pieces = [_ENCODER.encode(result[i : i + rows])[1:-1] for i in range(0, len(result), rows)]
    return ('{"result":[' + ",".join(pieces) + "]}").encode("utf-8")


_FAST = []


def _fast_path():
    """The :class:`addin.fast_path.FastPath` of our functions; None when switched off
    (``COMPUTE_LAB_FAST_PATH=0``: every call goes through xlwings' own dispatch)."""
    if not _FAST:
        import custom_functions

        from addin.fast_path import FastPath

        on = os.environ.get("COMPUTE_LAB_FAST_PATH", "1") != "0"
        _FAST.append(FastPath(custom_functions) if on else None)
    return _FAST[0]


def dispatch(body, user):
    """``(status, bytes)`` answering the custom-function call ``body`` for ``user``, by the
    fast path (:mod:`addin.fast_path`) or else xlwings' own ``custom_functions_call`` (run in a
    pool thread, on the thread's own event loop): 200 and the JSON answer, 400 and the message
    of an ``XlwingsError`` (bad input), or 500 and xlwings Server's own text for anything else
    (never a traceback)."""
    import custom_functions
    import xlwings as xw
    import xlwings.server
    from xlwings.server import Caller, caller_from_address
    from xlwings_server.models import CurrentUser

    loop = getattr(_THREAD, "loop", None)
    if loop is None:
        loop = _THREAD.loop = asyncio.new_event_loop()
    try:
        fast = _fast_path()
        if fast is not None:
            result = fast.answer(body, loop)
            if result is not fast.NOT_HANDLED:
                return 200, _encode(result)
        try:
            caller = caller_from_address(body.get("caller_address"))
        except xw.XlwingsError:
            caller = None
        result = loop.run_until_complete(
            xlwings.server.custom_functions_call(
                body,
                custom_functions,
                user,
                typehint_to_value={CurrentUser: user, Caller: caller},
            )
        )
        return 200, _encode(result)
    except Exception as err:
        return _failed(err)


def _failed(err):
    """``(status, text)`` for an exception of a call: 400 and the message of an
    ``XlwingsError`` (bad input), else 500 and xlwings Server's own text (never a traceback)."""
    import xlwings as xw
    from xlwings_server.config import settings

    if isinstance(err, xw.XlwingsError):
        return 400, str(err)
    # as xlwings Server's own handler: logged, not shown in prod
    logging.getLogger(__name__).error("custom function call failed: %r", err)
    return 500, repr(err) if settings.environment == "dev" else "An error occurred."


def answer_inline(body):
    """``(status, bytes or text)`` of the small, checked call ``body`` answered on the calling
    thread (the event loop) by the fast path alone, or None when xlwings' own code is needed
    for it (the caller then sends it to a pool thread, where it is computed again)."""
    fast = _fast_path()
    if fast is None:
        return None
    try:
        result = fast.answer(body, None)
        if result is fast.NOT_HANDLED:
            return None
        return 200, _encode(result)
    except Exception as err:
        return _failed(err)


def _create_app():
    from addin import team, tokens

    config = team.config_from_env()
    os.environ["XLWINGS_ON_SERVER"] = "true"
    os.environ.setdefault("XLWINGS_PROJECT_DIR", str(PROJECT_DIR))
    os.environ.setdefault("XLWINGS_CORS_ALLOW_ORIGINS", json.dumps(team.OFFICE_ORIGINS))
    if config.sign_in:
        # xlwings Server's own `custom` auth provider (addin/server/auth/custom) checks the
        # token on its routes too; our SignIn guard checks it first, for every call route.
        os.environ["XLWINGS_AUTH_PROVIDERS"] = '["custom"]'
    import xlwings

    if not getattr(xlwings, "on_server", False):
        raise RuntimeError(
            "xlwings was imported before XLWINGS_ON_SERVER=true was set; import "
            "addin.server_app first (or start with `compute-lab serve`)"
        )
    from xlwings_server.config import settings
    from xlwings_server.main import app as fastapi_app
    from xlwings_server.main import main_app
    from xlwings_server.security_headers import resolve_security_headers

    team.redact_server_logs()
    store = tokens.TokenStore(config.token_file)
    pool = team.CallPool()
    sys.setswitchinterval(team.GIL_SWITCH_SECONDS)
    base = settings.app_path
    calls = (f"{base}/xlwings/custom-functions-call", f"{base}/xlwings/custom-scripts-call/")
    # Another xlwings auth provider (Entra ID) is checked by xlwings' own route only: calls go
    # there (on its event loop, without the fast path) rather than be answered unchecked.
    other_auth = bool(settings.auth_providers) and not config.sign_in
    guarded = CallGuard(
        main_app,
        path=calls[0],
        pool=None if other_auth else pool,
    )
    guarded = ScriptGuard(guarded, prefix=calls[1])
    guarded = team.BodyBudget(guarded, calls)
    metrics = team.Metrics() if config.metrics else None
    guarded = team.MetricsRoute(guarded, metrics, path=f"{base}/metrics")
    guarded = team.SignIn(guarded, config, store, calls, metrics_path=f"{base}/metrics")
    guarded = team.AccessLog(guarded, config, calls, metrics, scripts=_script_names())
    guarded = StaticGuard(guarded, static_mounts(fastapi_app))
    guarded = HostGuard(guarded, config.public_hosts)
    guarded = team.Ops(guarded, config, pool, store, app_path=base)
    if settings.add_security_headers:
        headers = resolve_security_headers(
            excel_online=settings.enable_excel_online, cdn_officejs=settings.cdn_officejs
        )
        guarded = team.SecurityHeaders(guarded, headers)
    return guarded


app = _create_app()
