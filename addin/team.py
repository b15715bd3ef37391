"""The team server's parts: sign-in, limits, a bounded pool of call threads, health and logs.

``compute-lab serve`` passes its settings to every worker process through environment
variables (:func:`config_from_env` reads them; :data:`ENV` names them), and
:mod:`addin.server_app` puts these ASGI middlewares in front of xlwings Server:

- :class:`SecurityHeaders`: xlwings Server's own security headers on every answer, ours too;
- :class:`Ops`: ``GET /health`` (the process answers) and ``GET /ready`` (it can take calls:
  the token file is usable and the call queue is not full), outside the Host guard so a load
  balancer's probe by IP address is answered;
- :class:`AccessLog`: one JSON line per function or script call on stderr (time, token name,
  function, rows, status, ms; never an argument's value, a URL or a token), and the Prometheus
  metrics when on; it is the one access log: ``serve`` turns uvicorn's own off, and
  :func:`redact_server_logs` cuts query strings and tokens out of uvicorn's lines where it runs
  without ``serve``'s options;
- :class:`SignIn`: on the call routes, an ``Origin`` that is neither the server's own nor an
  Office origin is 403; with sign-in on, a missing, malformed, unknown or revoked token is
  401 and a token over its rate is 429 with ``Retry-After``; ``/metrics`` needs an admin token;
- :class:`BodyBudget`: on the call routes, the bytes of request bodies a worker process holds
  (being received, or received and waiting for or in their call) are at most
  :data:`MAX_HELD_BODY_BYTES`, and one token's at most :data:`MAX_HELD_BODY_BYTES_PER_TOKEN`; a
  body that would go past either is 503 with ``Retry-After`` before its bytes are kept (its
  ``Content-Length`` checked before any is read; the bytes counted as they arrive, so a head
  that declares a large body and sends nothing holds nothing from the others). A body
  of at most :data:`FAST_LANE_BYTES` (Excel's usual call) is counted but never refused, so one
  token's big bodies never hold another's one-cell formulas;
- :class:`CallPool`: function calls run in :data:`POOL_THREADS` threads, off the event loop, so
  a slow call never holds a quick one; past :data:`MAX_PENDING_CALLS` waiting or running
  calls a new one is answered 503 with ``Retry-After`` instead of piling up. A small call
  (a body of at most :data:`FAST_LANE_BYTES`, at most :data:`INLINE_CELLS` argument cells)
  that the fast path answers is computed on the event loop, so it never queues behind big
  calls; a big call's body is parsed, and its answer serialised, in its pool thread, not on
  the event loop.

Each bound is a named constant here; every refusal is 4xx (503 for a full queue) with one line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime as dt
import json
import logging
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "ENCODE_CHUNK_ROWS",
    "ENV",
    "FAST_LANE_BYTES",
    "GIL_SWITCH_SECONDS",
    "INLINE_CELLS",
    "MAX_BODY_BYTES",
    "MAX_HELD_BODY_BYTES",
    "MAX_HELD_BODY_BYTES_PER_TOKEN",
    "MAX_PENDING_CALLS",
    "OFFICE_ORIGINS",
    "POOL_THREADS",
    "RATE_LIMIT_BURST",
    "RATE_LIMIT_PER_SECOND",
    "RETRY_AFTER_SECONDS",
    "AccessLog",
    "BodyBudget",
    "CallPool",
    "Config",
    "Metrics",
    "MetricsRoute",
    "Ops",
    "PoolFullError",
    "SecurityHeaders",
    "SignIn",
    "config_from_env",
    "redact_server_logs",
    "reply",
]

#: Bytes a function or script call's body may take (413 past it). The largest call the bounds
#: allow (MAX_CELLS_PER_CALL numbers) is about 20 MB of JSON.
MAX_BODY_BYTES = 64 * 2**20
#: Bytes of request bodies one worker process holds at once on the call routes, in progress or
#: waiting for their answer (503 with Retry-After past it): two of the largest bodies, so that
#: a worker's bodies stay under 128 MB (plus at most MAX_CONNECTIONS bodies of FAST_LANE_BYTES,
#: 4 MB) whatever clients send; unbounded, 16 unfinished 60 MB bodies held 1 GB.
MAX_HELD_BODY_BYTES = 2 * MAX_BODY_BYTES
#: The same for one token's requests together: one of the largest bodies, so that one token
#: cannot take the whole of MAX_HELD_BODY_BYTES from the others.
MAX_HELD_BODY_BYTES_PER_TOKEN = MAX_BODY_BYTES
#: Threads per worker process that run the calls not answered on the event loop. One: only
#: one thread runs Python code at a time (the GIL), so more threads would only split the GIL
#: between them and the event loop; with one, a one-cell call waits at most
#: GIL_SWITCH_SECONDS at each hand-over. Cores are used by worker processes (``--workers``).
POOL_THREADS = 1
#: Calls waiting or running per worker process; one more is answered 503 with Retry-After.
MAX_PENDING_CALLS = 64
#: The fast lane. A call whose body has at most FAST_LANE_BYTES bytes is parsed and checked on
#: the event loop (a few microseconds). If its arguments have at most INLINE_CELLS cells in all
#: (a one-cell formula: our functions take at most 15 arguments) and the fast path answers it
#: by itself, it is computed on the event loop too (50 us for TRAIN_DAYS to about 1 ms), with
#: no hand-over to a thread and back (each waits for the GIL). Every other call is computed in
#: the pool's thread (a big one parsed, checked and serialised there too).
FAST_LANE_BYTES = 16 * 1024
INLINE_CELLS = 16
#: Seconds a thread running Python code keeps the GIL while another waits for it (Python's
#: default is 0.005): a one-cell call waits at most this long behind a big call's Python work
#: at each hand-over.
GIL_SWITCH_SECONDS = 0.001
#: A big answer is serialised this many rows at a time: the JSON encoder (C code) holds the
#: GIL until it returns, so one 10,000-row answer would hold a one-cell call for its whole
#: encoding (about 5 ms); in pieces, the GIL is handed over between them.
ENCODE_CHUNK_ROWS = 1000
#: Seconds a client told 503 (queue full) or 429 (rate) waits at least before trying again.
RETRY_AFTER_SECONDS = 1
#: Calls per second a token may make (summed over the worker processes), on average...
RATE_LIMIT_PER_SECOND = 50.0
#: ...and at once: Excel recalculating a sheet sends one call per formula cell together.
RATE_LIMIT_BURST = 500
#: Origins besides the server's own whose browser calls are taken (Excel on the web's
#: hosts); the add-in itself calls from the server's own origin.
OFFICE_ORIGINS = (
    "https://excel.officeapps.live.com",
    "https://excel.cloud.microsoft",
    "https://www.office.com",
)

#: Environment variables by which ``serve`` configures every worker process.
ENV = {
    "sign_in": "COMPUTE_LAB_SIGN_IN",
    "token_file": "COMPUTE_LAB_TOKEN_FILE",
    "public_hosts": "COMPUTE_LAB_PUBLIC_HOSTS",
    "workers": "COMPUTE_LAB_WORKERS",
    "rate_limit": "COMPUTE_LAB_RATE_LIMIT",
    "metrics": "COMPUTE_LAB_METRICS",
    "access_log": "COMPUTE_LAB_ACCESS_LOG",
}


@dataclass(frozen=True)
class Config:
    """What ``serve`` was told, as every worker process sees it."""

    sign_in: bool = False
    token_file: Path | None = None
    public_hosts: frozenset = field(default_factory=frozenset)
    workers: int = 1
    rate_limit: float = RATE_LIMIT_PER_SECOND
    metrics: bool = False
    access_log: bool = True


def _flag(value):
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def config_from_env(environ=None):
    """The :class:`Config` in ``environ`` (default ``os.environ``); ValueError naming the
    variable if one is malformed."""
    env = os.environ if environ is None else environ
    from addin import tokens

    hosts = frozenset(
        h.strip().lower() for h in env.get(ENV["public_hosts"], "").split(",") if h.strip()
    )
    try:
        workers = int(env.get(ENV["workers"], "1"))
        rate = float(env.get(ENV["rate_limit"], RATE_LIMIT_PER_SECOND))
    except ValueError:
        raise ValueError(
            f"{ENV['workers']} must be a whole number and {ENV['rate_limit']} a number"
        ) from None
    if workers < 1 or not (rate > 0 and math.isfinite(rate)):
        raise ValueError(f"{ENV['workers']} must be >= 1 and {ENV['rate_limit']} above 0")
    return Config(
        sign_in=_flag(env.get(ENV["sign_in"])),
        token_file=Path(env[ENV["token_file"]])
        if env.get(ENV["token_file"])
        else (tokens.default_path()),
        public_hosts=hosts,
        workers=workers,
        rate_limit=rate,
        metrics=_flag(env.get(ENV["metrics"])),
        access_log=env.get(ENV["access_log"], "1") != "0",
    )


async def reply(send, status, text, headers=()):
    """A one-line plain-text answer."""
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _state(scope):
    return scope.setdefault("state", {})


def _header(scope, name):
    for key, value in scope.get("headers") or ():
        if key == name:
            return value.decode("latin-1")
    return None


# ---------------------------------------------------------------------------------------------
# Security headers
# ---------------------------------------------------------------------------------------------


class SecurityHeaders:
    """ASGI middleware: xlwings Server's security headers on every answer, our guards' too
    (xlwings adds them only to the answers of its own routes)."""

    def __init__(self, app, headers):
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers") or ()}
                extra = [(k, v) for k, v in self.headers if k not in have]
                if extra:
                    message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        return await self.app(scope, receive, send_with_headers)


# ---------------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------------


class PoolFullError(Exception):
    """More than MAX_PENDING_CALLS calls are waiting or running in this worker."""


class CallPool:
    """A bounded pool of threads for function calls (one per worker process)."""

    def __init__(self, threads=None, max_pending=None):
        self.threads = threads or POOL_THREADS
        self.max_pending = max_pending or MAX_PENDING_CALLS
        self.pending = 0
        self._executor = None

    def full(self):
        return self.pending >= self.max_pending

    async def run(self, function, *args):
        """``function(*args)`` in a pool thread; :class:`PoolFullError` if the queue is full."""
        from addin import connections

        if self.full():
            connections.note_behind()
            raise PoolFullError
        if self.pending >= self.threads:
            connections.note_behind()  # this call waits: a body due now is not read in time
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                self.threads, thread_name_prefix="compute-lab-call"
            )
        loop = asyncio.get_running_loop()
        self.pending += 1
        future = self._executor.submit(function, *args)
        # Counted down on the event loop's thread when the thread's work ends (even if the
        # client has gone), so the count is only ever changed by one thread.
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._done))
        return await asyncio.wrap_future(future)

    def _done(self):
        self.pending -= 1
        if self.pending > self.threads:
            from addin import connections

            connections.note_behind()

    def shutdown(self):
        if self._executor is not None:
            self._executor.shutdown(wait=True)


# ---------------------------------------------------------------------------------------------
# Health, readiness
# ---------------------------------------------------------------------------------------------


class Ops:
    """ASGI middleware: ``GET /health`` and ``GET /ready`` (answered before the Host guard)."""

    def __init__(self, app, config, pool, store, app_path=""):
        self.app = app
        self.config = config
        self.pool = pool
        self.store = store
        self.paths = {f"{app_path}/health": self._health, f"{app_path}/ready": self._ready}
        self._logged = None

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"] in self.paths:
            if scope["method"] not in ("GET", "HEAD"):
                return await reply(send, 405, "use GET", [(b"allow", b"GET, HEAD")])
            return await self.paths[scope["path"]](send)
        return await self.app(scope, receive, send)

    async def _health(self, send):
        return await reply(send, 200, "ok")

    async def _ready(self, send):
        pool = f"{self.pool.pending} call(s) running or waiting (limit {self.pool.max_pending})"
        problem = self.store.problem() if self.config.sign_in else None
        if problem is not None:
            # The reason names a path on the server: it goes to the log, not to the caller.
            if problem != self._logged:
                logging.getLogger("compute_lab.ready").error("not ready: %s", problem)
                self._logged = problem
            problem = "the sign-in token file is unusable (the server's log says why)"
        if problem is None and self.pool.full():
            problem = f"the call queue is full: {pool}"
        if problem:
            retry = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
            return await reply(send, 503, f"not ready: {problem}", retry)
        return await reply(send, 200, f"ready: {pool}")


# ---------------------------------------------------------------------------------------------
# Sign-in, origins, rate limits
# ---------------------------------------------------------------------------------------------


class RateLimiter:
    """A token bucket per token name: ``rate`` calls a second on average, ``burst`` at once."""

    def __init__(self, rate, burst=None):
        self.rate = rate
        self.burst = burst or RATE_LIMIT_BURST
        self._buckets = {}

    def wait(self, name, now=None):
        """0 if ``name`` may call now (and counts the call); else seconds until it may."""
        now = time.monotonic() if now is None else now
        level, then = self._buckets.get(name, (self.burst, now))
        level = min(self.burst, level + (now - then) * self.rate)
        if level >= 1:
            self._buckets[name] = (level - 1, now)
            return 0.0
        self._buckets[name] = (level, now)
        return (1 - level) / self.rate


class SignIn:
    """ASGI middleware on the call routes (and ``/metrics``): origins, tokens, rate limits."""

    def __init__(self, app, config, store, call_prefixes, metrics_path=None):
        self.app = app
        self.config = config
        self.store = store
        self.call_prefixes = tuple(call_prefixes)
        self.metrics_path = metrics_path
        # Each worker process takes its share of a token's rate.
        self.limiter = RateLimiter(config.rate_limit / config.workers)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        is_call = scope["method"] == "POST" and path.startswith(self.call_prefixes)
        is_metrics = path == self.metrics_path
        if not (is_call or is_metrics):
            return await self.app(scope, receive, send)
        problem = self._origin_problem(scope)
        if problem:
            return await reply(send, 403, problem)
        if self.config.sign_in:
            name, role = self.store.check(_header(scope, b"authorization"))
            if name is None:
                _state(scope)["token"] = None
                status = 503 if self.store.problem() else 401
                return await reply(send, status, role, [(b"www-authenticate", b"Bearer")])
            _state(scope)["token"] = name
            if is_metrics and role != "admin":
                return await reply(send, 403, f"/metrics needs an admin token ({name} is {role})")
            wait = self.limiter.wait(name) if is_call else 0.0
            if wait:
                seconds = max(RETRY_AFTER_SECONDS, math.ceil(wait))
                rate = f"{self.config.rate_limit:g}"
                return await reply(
                    send,
                    429,
                    f"token {name} is over its rate limit ({rate} calls a second); retry later",
                    [(b"retry-after", str(seconds).encode())],
                )
        return await self.app(scope, receive, send)

    def _origin_problem(self, scope):
        origin = _header(scope, b"origin")
        if origin is None or origin in OFFICE_ORIGINS:
            return None
        host = (_header(scope, b"host") or "").lower()
        _, sep, netloc = origin.lower().partition("://")
        if sep and netloc == host:
            return None
        return f"Origin {origin!r} may not call this server (only its own and Office's)"


# ---------------------------------------------------------------------------------------------
# Request bodies held
# ---------------------------------------------------------------------------------------------


class BodyBudget:
    """ASGI middleware on the call routes (behind :class:`SignIn`, which names the token): the
    bytes of bodies held, per worker process and per token, within their bounds."""

    def __init__(self, app, call_prefixes, limit=None, per_token=None):
        self.app = app
        self.call_prefixes = tuple(call_prefixes)
        self.limit = limit or MAX_HELD_BODY_BYTES
        self.per_token = per_token or MAX_HELD_BODY_BYTES_PER_TOKEN
        self.held = 0
        self.held_by_token = {}

    def _take(self, token, size, total):
        """Count ``size`` more bytes for ``token``; the refusal's text if that would go past a
        bound (a request of ``total`` <= FAST_LANE_BYTES bytes so far is never refused)."""
        mine = self.held_by_token.get(token, 0)
        if total > FAST_LANE_BYTES:
            if token is not None and mine + size > self.per_token:
                return (
                    f"token {token} has {mine / 2**20:.0f} MB of request bodies in progress, "
                    f"the most one token may ({self.per_token / 2**20:.0f} MB); retry when they "
                    "are answered"
                )
            if self.held + size > self.limit:
                return (
                    f"the server is busy: {self.held / 2**20:.0f} MB of request bodies in "
                    f"progress ({self.limit / 2**20:.0f} MB at most); retry shortly"
                )
        self.held += size
        if token is not None:
            self.held_by_token[token] = mine + size
        return None

    def _give_back(self, token, size):
        self.held -= size
        if token is not None:
            left = self.held_by_token.get(token, 0) - size
            if left > 0:
                self.held_by_token[token] = left
            else:
                self.held_by_token.pop(token, None)

    async def __call__(self, scope, receive, send):
        if not (
            scope["type"] == "http"
            and scope["method"] == "POST"
            and scope["path"].startswith(self.call_prefixes)
        ):
            return await self.app(scope, receive, send)
        token = (scope.get("state") or {}).get("token")
        try:
            declared = int(_header(scope, b"content-length") or 0)
        except ValueError:
            declared = 0  # the parser refuses a malformed length before this is reached
        if declared > MAX_BODY_BYTES:
            return await reply(send, 413, "request body too large")
        taken = 0
        retry = [(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
        # A Content-Length that would not fit is refused before any byte is read; one that
        # fits is counted as its bytes arrive, so a head alone (a client that declares the
        # largest body and sends nothing) holds nothing from the others.
        refused = self._take(token, declared, declared)
        if refused:
            return await reply(send, 503, refused, retry)
        self._give_back(token, declared)
        try:

            async def counted_receive():
                nonlocal taken, refused
                message = await receive()
                if message["type"] != "http.request" or refused:
                    return message
                arrived[0] += len(message.get("body", b""))
                if arrived[0] > taken:
                    refused = self._take(token, arrived[0] - taken, arrived[0])
                    if refused:
                        # The guards reading the body have sent nothing yet: the answer is
                        # ours, and to them the client has left.
                        await reply(send, 503, refused, retry)
                        return {"type": "http.disconnect"}
                    taken = arrived[0]
                return message

            arrived = [0]
            return await self.app(scope, counted_receive, send)
        finally:
            self._give_back(token, taken)


# ---------------------------------------------------------------------------------------------
# Access log and metrics
# ---------------------------------------------------------------------------------------------


def _access_logger():
    logger = logging.getLogger("compute_lab.access")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return logger


_TOKEN_TEXT = re.compile(r"cl_[A-Za-z0-9_-]{20,}")


def _redacted(value):
    if not isinstance(value, str):
        return value
    if value.startswith("/") and "?" in value:  # a request's path: the query may hold a token
        value = value.split("?", 1)[0] + "?(query removed)"
    return _TOKEN_TEXT.sub("cl_(removed)", value)


class _Redact(logging.Filter):
    """Query strings and anything shaped like a token out of a log record's text."""

    def filter(self, record):
        record.msg = _redacted(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted(a) for a in record.args)
        return True


def redact_server_logs():
    """Cut query strings (a client may put its token in the URL) and token-shaped text out of
    uvicorn's log lines: its access log (off under ``serve``, on under a plain
    ``uvicorn addin.server_app:app``) and its error log."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, _Redact) for f in logger.filters):
            logger.addFilter(_Redact())


class Metrics:
    """Prometheus counters and a histogram of calls (``prometheus-client``, optional)."""

    def __init__(self):
        import prometheus_client as prom

        self.prom = prom
        self.registry = prom.CollectorRegistry()
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            multiprocess.MultiProcessCollector(self.registry)
            kwargs = {}
        else:
            kwargs = {"registry": self.registry}
        self.calls = prom.Counter(
            "compute_lab_calls", "Function and script calls", ["function", "status"], **kwargs
        )
        self.seconds = prom.Histogram(
            "compute_lab_call_seconds", "Time to answer a call", ["function"], **kwargs
        )

    def observe(self, function, status, seconds):
        self.calls.labels(function or "-", str(status)).inc()
        self.seconds.labels(function or "-").observe(seconds)

    def render(self):
        return self.prom.generate_latest(self.registry), self.prom.CONTENT_TYPE_LATEST


class MetricsRoute:
    """ASGI middleware: ``GET /metrics`` in Prometheus' text format (behind :class:`SignIn`)."""

    def __init__(self, app, metrics, path="/metrics"):
        self.app = app
        self.metrics = metrics
        self.path = path

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != self.path or self.metrics is None:
            return await self.app(scope, receive, send)
        body, kind = self.metrics.render()
        headers = [(b"content-type", kind.encode()), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return None


class AccessLog:
    """ASGI middleware: one JSON line per call on the call routes, and the metrics when on.

    A script call is named by its script when it is one of ``scripts`` (the server's custom
    scripts), else ``script:(unknown)``: the rest of a URL is the client's text (a token put
    there by mistake, or a new name per request), which goes neither into the log nor into a
    metric's labels, where every new name would be kept for ever."""

    def __init__(self, app, config, call_prefixes, metrics=None, scripts=()):
        self.app = app
        self.config = config
        self.call_prefixes = tuple(call_prefixes)
        self.logger = _access_logger() if config.access_log else None
        self.metrics = metrics
        self.scripts = frozenset(scripts)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if not (scope["method"] == "POST" and scope["path"].startswith(self.call_prefixes)):
            return await self.app(scope, receive, send)
        start = time.perf_counter()
        status = [None]

        async def recording_send(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            return await self.app(scope, receive, recording_send)
        finally:
            self._record(scope, status[0] or 500, time.perf_counter() - start)

    def _record(self, scope, status, seconds):
        state = scope.get("state") or {}
        function = state.get("function")
        if function is None and "custom-scripts-call/" in scope["path"]:
            name = scope["path"].rsplit("/", 1)[-1]
            function = "script:" + (name if name in self.scripts else "(unknown)")
        if self.metrics is not None:
            self.metrics.observe(function, status, seconds)
        if self.logger is None:
            return
        line = {
            "time": dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            "token": state.get("token"),
            "function": function,
            "rows": state.get("rows"),
            "status": status,
            "ms": round(seconds * 1000, 1),
            "worker": os.getpid(),
        }
        self.logger.info(json.dumps(line, separators=(",", ":")))
