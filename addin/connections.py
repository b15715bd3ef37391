"""Slow and idle clients: time limits and a connection limit for ``compute-lab serve``.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive`` seconds, but has no
time limit on receiving a request: a client that sends its headers (or its body) one byte at a
time holds a connection, and a file descriptor, for ever. 1,100 such clients (slowloris) used up
the usual 1,024 open files and every other request failed for 70 s (issue 22). Its
``limit_concurrency`` answers 503 past the limit but keeps the sockets open, so it does not
protect the file descriptors. :func:`protocol` is uvicorn's httptools protocol with:

- a deadline for a request's headers (:data:`HEADER_TIMEOUT_SECONDS`, from the connection or
  from the end of the previous response) and for its body (:data:`BODY_TIMEOUT_SECONDS`, from
  the end of the headers); past it the connection is closed. The server's own delays are not
  the client's: a pipelined request's deadline starts again while the one before it is
  answered, and when the server was busy while the request was due (its bytes wait unread
  in the socket, the event loop was held, calls were waiting for the pool at any moment since
  the deadline was set (:func:`server_behind`), or another request is in progress) the client
  gets ``503`` with ``Retry-After`` (come back later), and reads it: the connection is half
  closed and the client's further bytes dropped for :data:`LINGER_SECONDS`. Only a client that
  was slow while the server had nothing else to do gets ``408`` (a true slowloris; nothing at
  all if it sent nothing: an idle or pre-opened socket). A
  request received in full is never cut: computing its answer has no deadline here (the bounds
  per call in ``udfs._cells`` keep that short);
- a bound on the bytes of a request's head (:data:`MAX_HEADER_BYTES`; 431, closed), however
  they arrive: counted as they come in while the head is unfinished, and again, part by part
  (its URL and each header), as the parser reads them, so a head that arrives whole in one
  read is measured before the request goes any further;
- a limit on open connections (:func:`connection_limit`): a new connection past it closes the
  one that has waited longest for its request to arrive (a slow or idle client), or, if every
  connection is busy with a request received in full, is answered 503 and closed at once.

Over HTTPS the TLS handshake comes first, under asyncio's own limit (60 s); these limits count
from its end.

The constants are read when used, so a test may shorten them. ``compute-lab serve`` passes
:func:`uvicorn_options` to ``uvicorn.run``; ``python -m uvicorn addin.server_app:app`` takes
the same as :data:`UVICORN_FLAGS` (``--http addin.connections:GuardedHttpToolsProtocol``).
"""

from __future__ import annotations

import array
import fcntl
import termios
import time

__all__ = [
    "BODY_TIMEOUT_SECONDS",
    "FD_HEADROOM",
    "HEADER_TIMEOUT_SECONDS",
    "KEEP_ALIVE_SECONDS",
    "MAX_CONNECTIONS",
    "MAX_HEADER_BYTES",
    "LINGER_SECONDS",
    "LOOP_LATE_SECONDS",
    "UVICORN_FLAGS",
    "connection_limit",
    "note_behind",
    "server_behind",
    "protocol",
    "uvicorn_options",
]

#: Seconds a client has to send a request's line and headers, counted from the connection or
#: from the end of the previous response. Excel sends them in one packet; 10 s leaves room for a
#: slow machine and ends a slowloris connection quickly.
HEADER_TIMEOUT_SECONDS = 10.0

#: The answer when a body's deadline passes with the client's bytes waiting unread (the server,
#: busy with other calls, is behind; not the client): 503, and Retry-After in seconds.
BUSY_TEXT = "server busy: the request was not read in time; retry later"
BUSY_RETRY_AFTER = 1

#: Seconds a deadline's timer may fire late before the lateness counts as the server being
#: behind (its event loop held by other work, so it could not have read the client's bytes).
LOOP_LATE_SECONDS = 0.5

#: When the server was last seen behind (``time.monotonic()``; see :func:`note_behind`).
_behind_at = float("-inf")


def note_behind():
    """The server is behind now: a call waits for the pool, or the pool refused one (called by
    :class:`addin.team.CallPool`)."""
    global _behind_at
    _behind_at = time.monotonic()


def server_behind(since):
    """True when the server was behind at any moment from ``since`` (``time.monotonic()``) to
    now: a body that was due meanwhile was not the client's fault alone; it gets 503 with
    Retry-After, not 408."""
    return _behind_at >= since


#: Seconds a connection answered 503 (server busy) while its client was still sending is kept
#: half open, its further bytes read and dropped, so that the client reads the answer: closing
#: with the client's bytes unread resets the connection, and the answer is lost with it.
LINGER_SECONDS = 2.0

#: Seconds a client has to send a request's body once its headers are in. The largest body the
#: server takes (64 MB) crosses loopback in well under a second; Excel's calls are kilobytes.
BODY_TIMEOUT_SECONDS = 30.0

#: Seconds an idle keep-alive connection is kept open (uvicorn's ``timeout_keep_alive``).
KEEP_ALIVE_SECONDS = 5

#: Bytes a request's line and headers may take. Excel's are under 2 KB; browsers and proxies
#: cap headers at 8 to 64 KB.
MAX_HEADER_BYTES = 64 * 1024

#: Open connections at most. Excel (and a browser) open a handful per server; 256 stays far
#: below the usual limit of 1,024 open files.
MAX_CONNECTIONS = 256

#: File descriptors the server keeps for itself (modules, logs, the listening socket) when the
#: open-file limit is lower than MAX_CONNECTIONS plus this.
FD_HEADROOM = 64


def connection_limit():
    """MAX_CONNECTIONS, lowered to leave FD_HEADROOM files under the open-file limit."""
    try:
        import resource
    except ImportError:  # Windows
        return MAX_CONNECTIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(1, min(MAX_CONNECTIONS, soft - FD_HEADROOM))


def _answer(status, reason, text, retry_after=None):
    body = text.encode("utf-8")
    retry = "" if retry_after is None else f"retry-after: {retry_after}\r\n"
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"{retry}content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


_PROTOCOL = None


def protocol():
    """uvicorn's httptools protocol with the deadlines and the connection limit (one class)."""
    global _PROTOCOL
    if _PROTOCOL is None:
        _PROTOCOL = _make_protocol()
    return _PROTOCOL


def _make_protocol():
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpToolsProtocol(_Deadlines, HttpToolsProtocol):
        """HttpToolsProtocol with the limits of :mod:`addin.connections`."""

    return GuardedHttpToolsProtocol


class _Deadlines:
    """The hooks, mixed into uvicorn's HttpToolsProtocol (see :func:`protocol`)."""

    _deadline = None  # the TimerHandle of the current deadline
    _armed_at = None  # when it was set (time.monotonic())
    _receiving_since = None  # when the wait for the current request began; None when received
    _head_bytes = None  # bytes of the current request's head so far; None once it is in
    _head_parsed = 0  # bytes of the current request's URL and headers the parser has read
    _head_too_large = False
    _refused = False
    _draining = False  # answered and half closed: the client's further bytes are dropped

    def connection_made(self, transport):
        if len(self.connections) >= connection_limit() and not _make_room(self.connections):
            self._refused = True
            transport.write(_answer(503, "Service Unavailable", "too many connections"))
            transport.close()
            return
        super().connection_made(transport)
        self._waiting()

    def connection_lost(self, exc):
        self._cancel()
        if self._refused:
            return
        super().connection_lost(exc)

    def data_received(self, data):
        if self._draining:
            return
        if self._head_bytes is not None:
            self._head_bytes += len(data)
        super().data_received(data)
        if (
            self._head_bytes is not None
            and self._head_bytes > MAX_HEADER_BYTES
            and not self.transport.is_closing()
        ):
            self._close(431, "Request Header Fields Too Large", "request headers too large")

    def on_message_begin(self):
        super().on_message_begin()
        self._head_parsed = 0
        if self._receiving_since is None:
            self._waiting()

    def on_url(self, url):
        self._count_head(len(url))
        super().on_url(url)

    def on_header(self, name, value):
        self._count_head(len(name) + len(value) + 4)  # ": " and CRLF
        super().on_header(name, value)

    def _count_head(self, size):
        """Count parsed head bytes; past MAX_HEADER_BYTES stop the parser (the exception ends
        its feed, and :meth:`send_400_response` answers 431 in place of the parser's 400)."""
        self._head_parsed += size
        if self._head_parsed > MAX_HEADER_BYTES:
            self._head_too_large = True
            raise _HeadTooLargeError

    def send_400_response(self, msg):
        if self._head_too_large:
            self._close(431, "Request Header Fields Too Large", "request headers too large")
            return
        super().send_400_response(msg)

    def on_headers_complete(self):
        self._head_bytes = None
        super().on_headers_complete()
        self._arm(BODY_TIMEOUT_SECONDS, "request body")

    def on_message_complete(self):
        super().on_message_complete()
        self._cancel()
        self._receiving_since = None

    def handle_websocket_upgrade(self):
        # The connection now belongs to the websocket protocol: no deadline of ours is left on it.
        self._cancel()
        self._receiving_since = self._head_bytes = None
        super().handle_websocket_upgrade()

    def on_response_complete(self):
        super().on_response_complete()
        if self._receiving_since is None and (self.cycle is None or self.cycle.response_complete):
            self._waiting()

    # -----------------------------------------------------------------------------------------

    def _waiting(self):
        """The wait for a request's head begins (a new connection, or after a response)."""
        self._receiving_since = time.monotonic()
        self._head_bytes = 0
        self._arm(HEADER_TIMEOUT_SECONDS, "request headers")

    def _arm(self, seconds, what):
        self._cancel()
        text = f"{what} not received within {seconds:g} s"
        self._armed_at = time.monotonic()
        self._deadline = self.loop.call_later(seconds, self._timed_out, text)

    def _timed_out(self, text):
        late = self.loop.time() - self._deadline.when() > LOOP_LATE_SECONDS
        if self._head_bytes == 0:  # nothing of a request sent (an idle or pre-opened socket)
            self._deadline = None
            self.transport.close()
        elif self.pipeline:
            # A pipelined request waits, unread, for the one before it on this connection to be
            # answered: the wait is ours, so its deadline starts again (closing would also lose
            # the earlier request's answer).
            self._arm(BODY_TIMEOUT_SECONDS, "request body")
        elif (
            late
            or self._unread_bytes()
            or server_behind(self._armed_at)
            or self._others_in_progress()
        ):
            # The server is busy (the client's bytes wait unread, our event loop was held, calls
            # waited for the pool while this one was due, or other requests share the server
            # now), so the delay may be ours: 503 with Retry-After, not a 408 blaming the client.
            # Either way the connection is closed at the same deadline.
            self._close(
                503, "Service Unavailable", BUSY_TEXT, retry_after=BUSY_RETRY_AFTER, linger=True
            )
        else:
            self._close(408, "Request Timeout", text)

    def _others_in_progress(self):
        """Whether another connection of this worker has a request begun and not answered."""
        for other in self.connections:
            cycle = getattr(other, "cycle", None)
            if other is not self and cycle is not None and not cycle.response_complete:
                return True
        return False

    def _unread_bytes(self):
        """Bytes the client sent that are still waiting, unread, in this socket (or in
        uvicorn's paused flow control); 0 where the system cannot tell."""
        if getattr(getattr(self, "flow", None), "read_paused", False):
            return 1
        sock = self.transport.get_extra_info("socket") if self.transport else None
        try:
            waiting = array.array("i", [0])
            fcntl.ioctl(sock.fileno(), termios.FIONREAD, waiting)
        except (AttributeError, OSError, ValueError):
            return 0
        return waiting[0]

    def _cancel(self):
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _close(self, status, reason, text, retry_after=None, linger=False):
        """Answer ``status`` (unless a response has begun) and close the connection; with
        ``linger``, half close it and drop what the client still sends for LINGER_SECONDS (or
        until it closes), so that a client still sending reads the answer."""
        self._cancel()
        if self.transport is None or self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(_answer(status, reason, text, retry_after))
        if not (linger and self.transport.can_write_eof()):  # (TLS cannot half close)
            self.transport.close()
            return
        self._draining = True
        if self.cycle is not None:  # the app's request ends as if the client had gone
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.write_eof()
        self.transport.resume_reading()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


class _HeadTooLargeError(Exception):
    """Raised from a parser callback: the request's head is over MAX_HEADER_BYTES."""


def _make_room(connections):
    """Close the connection that has waited longest for its request; False if none waits."""
    waiting = [c for c in connections if getattr(c, "_receiving_since", None) is not None]
    if not waiting:
        return False
    oldest = min(waiting, key=lambda c: c._receiving_since)
    oldest._close(503, "Service Unavailable", "closed to make room for another connection")
    return True


def uvicorn_options():
    """Keyword arguments for ``uvicorn.run``: the protocol, the keep-alive time, and uvicorn's
    own access log off (it prints each URL with its query string, where a client may have put
    its token; the JSON access log of ``addin.team`` is the one log). The protocol is named by
    its import string, which worker processes (``--workers``) can import."""
    return {
        "http": "addin.connections:GuardedHttpToolsProtocol",
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "access_log": False,
    }


#: The same for uvicorn's command line (``python -m uvicorn addin.server_app:app ...``).
UVICORN_FLAGS = (
    "--http",
    "addin.connections:GuardedHttpToolsProtocol",
    "--timeout-keep-alive",
    str(KEEP_ALIVE_SECONDS),
    "--no-access-log",
)


def __getattr__(name):
    # ``addin.connections:GuardedHttpToolsProtocol`` for uvicorn's --http, built on first use so
    # that importing this module does not import uvicorn.
    if name == "GuardedHttpToolsProtocol":
        return protocol()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
