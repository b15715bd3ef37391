"""The server under the bounds of issue 22: the largest allowed calls, the refused ones, and
how long they hold a small request sent meanwhile.

Starts ``uvicorn addin.server_app:app`` on a free loopback port and prints, for each call, its
time through the server and the time a one-cell TRAIN_DAYS sent while it runs waits for its
answer (calls run in the server's thread pool since issue 20, so it should not wait for the
long call; before, one event loop made it wait the long call's whole time). Bounds:
``udfs._cells.MAX_CELLS_PER_CALL`` and ``udfs.excel.MAX_PLANS_PER_CALL``.

The floor: the same one-cell TRAIN_DAYS through the same server with nothing else running
(one HTTP request on a kept loopback connection: the server's parsing, dispatch and answer).
Results also go to ``benchmarks/results/bench_server.json``.
Run: ``.venv/bin/python benchmarks/bench_server.py [--quick]`` (``--quick``: small calls).
"""

import threading
import time

from _results import QUICK, record

from addin.local_server import (
    ServerStartError,
    call_body,
    local_server,
    quiet_server,
    raw_request,
)
from udfs._cells import MAX_CELLS_PER_CALL
from udfs.excel import MAX_PLANS_PER_CALL

body = call_body  # the body of a call as xlwings' Office.js code sends it


def post(port, payload):
    return raw_request(
        port,
        "/xlwings/custom-functions-call",
        method=b"POST",
        headers=[b"Content-Type: application/json"],
        body=payload,
        timeout=600,
    )


SMALL = body("TRAIN_DAYS", 37e9, 14.8e12, 2048, 400)
FIGURES = {}


def timed(port, label, payload):
    """Time ``payload``; meanwhile time a small request sent 0.05 s after it."""
    small = {}

    def meanwhile():
        time.sleep(0.05)
        start = time.perf_counter()
        small["status"] = post(port, SMALL)[0]
        small["seconds"] = time.perf_counter() - start

    thread = threading.Thread(target=meanwhile)
    start = time.perf_counter()
    thread.start()
    status, answer = post(port, payload)
    seconds = time.perf_counter() - start
    thread.join()
    size = len(payload) / 1e6
    answer_size = len(answer) / 1e6
    print(
        f"  {label:<58} {status} {seconds:7.2f} s  body {size:5.1f} MB  out {answer_size:5.1f} MB"
    )
    waited = "  a one-cell call sent meanwhile waited"
    print(f"  {waited:<58} {small['status']} {small['seconds']:7.2f} s")
    key = "".join(ch if ch.isalnum() else "_" for ch in label.split(" (")[0]).strip("_").lower()
    FIGURES[f"{key}_s"] = seconds
    FIGURES[f"{key}_one_cell_waited_s"] = small["seconds"]
    return status


def slow_clients(port, n=20 if QUICK else 600):
    """A one-cell call while ``n`` clients hold half-sent requests (slowloris)."""
    import socket

    from addin.connections import connection_limit

    held = []
    try:
        start = time.perf_counter()
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            sock.sendall(b"GET /manifest.xml HT")
            held.append(sock)
        opened = time.perf_counter() - start
        start = time.perf_counter()
        status, _ = post(port, SMALL)
        seconds = time.perf_counter() - start
    finally:
        for sock in held:
            sock.close()
    print(f"Slow clients (connection limit {connection_limit()} here)")
    print(f"  {n} clients holding half a request line, opened in {opened:5.2f} s")
    print(f"  a one-cell call meanwhile                                  {status} {seconds:7.2f} s")
    FIGURES.update(slow_clients=n, slow_clients_one_cell_s=seconds)


def _server_rss_mb(port):
    """Resident memory (MB) of the process serving ``port`` (Linux /proc); None elsewhere."""
    from pathlib import Path

    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if b"uvicorn" in argv and str(port).encode() in argv:
                status = (proc / "status").read_text()
                return int(status.split("VmRSS:")[1].split()[0]) / 1024
        except (OSError, IndexError):
            continue
    return None


def held_bodies(port, n=4 if QUICK else 16, megabytes=8 if QUICK else 60):
    """The server's memory while ``n`` clients hold unfinished bodies of ``megabytes`` each
    (declared just under MAX_BODY_BYTES); bounded by MAX_HELD_BODY_BYTES per worker."""
    import socket

    from addin.team import MAX_BODY_BYTES, MAX_HELD_BODY_BYTES

    before = _server_rss_mb(port)
    head = (
        f"POST /xlwings/custom-functions-call HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {MAX_BODY_BYTES - 1}\r\n\r\n"
    ).encode()
    piece = b"[" + b"1," * 2**19
    held, refused = [], 0
    try:
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            held.append(sock)
            sock.sendall(head)
            sock.settimeout(0.5)
            try:
                for _ in range(megabytes):
                    sock.sendall(piece)
            except (TimeoutError, OSError):
                pass  # refused: the server reads no more of it
            try:
                refused += sock.recv(100).startswith(b"HTTP/1.1 503")
            except (TimeoutError, OSError):
                pass
        time.sleep(1)
        after = _server_rss_mb(port)
    finally:
        for sock in held:
            sock.close()
    if before is None:
        return
    print(f"Unfinished bodies (MAX_HELD_BODY_BYTES {MAX_HELD_BODY_BYTES / 2**20:.0f} MB a worker)")
    print(f"  {n} clients each holding {megabytes} MB of an unfinished body: server {before:.0f}")
    print(f"  MB before, {after:.0f} MB while they are held; {refused} refused (503)")
    FIGURES.update(held_bodies=n, held_body_mb=megabytes, held_rss_before_mb=before,
                   held_rss_mb=after, held_refused=refused)  # fmt: skip


def floor(port, repeat=3 if QUICK else 20):
    """The one-cell call alone (best of ``repeat``): the floor the calls above compare with."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        assert post(port, SMALL)[0] == 200
        times.append(time.perf_counter() - start)
    FIGURES["floor_one_cell_alone_s"] = min(times)
    print("floor: a one-cell TRAIN_DAYS alone through the same server (HTTP on loopback,")
    print(f"  parsing, dispatch, answer), best of {repeat}: {min(times):7.3f} s")


def main():
    side = 64 if QUICK else int(MAX_CELLS_PER_CALL**0.5)
    col = [[2048.0 + i] for i in range(side)]
    row = [[400.0 + i for i in range(side)]]
    most = 64 if QUICK else MAX_PLANS_PER_CALL  # --quick: small calls, the same paths
    plans = [[2048.0 + i] for i in range(most)]
    # as many p values as the cell bound leaves for the most plans allowed
    n_ps = 4 if QUICK else MAX_CELLS_PER_CALL // MAX_PLANS_PER_CALL
    ps = [[0.001 + 0.998 * j / (n_ps - 1) for j in range(n_ps)]]
    big_col = [[2048.0 + i] for i in range(8000)]
    big_row = [[400.0 + i for i in range(8000)]]
    cases = [
        (
            "allowed",
            f"TRAIN_DAYS {side} x {side} (MAX_CELLS_PER_CALL)",
            body("TRAIN_DAYS", 37e9, 14.8e12, col, row),
        ),
        (
            "allowed",
            f"TRAIN_QUANTILE {most:,} plans x 1 p",
            body("TRAIN_QUANTILE", "days", 0.9, 671e9, 37e9, 14.8e12, plans, "H100"),
        ),
        (
            "allowed",
            f"TRAIN_QUANTILE {most:,} plans x {n_ps} p (both bounds)",
            body("TRAIN_QUANTILE", "days", ps, 671e9, 37e9, 14.8e12, plans, "H100"),
        ),
        (
            "refused",
            "TRAIN_DAYS 8000 x 8000 (issue 22)",
            body("TRAIN_DAYS", 37e9, 14.8e12, big_col, big_row),
        ),
        (
            "refused",
            f"TRAIN_QUANTILE {MAX_PLANS_PER_CALL + 1:,} plans (one over MAX_PLANS_PER_CALL)",
            body(
                "TRAIN_QUANTILE",
                "days",
                0.9,
                671e9,
                37e9,
                14.8e12,
                [[2048.0 + i] for i in range(MAX_PLANS_PER_CALL + 1)],
                "H100",
            ),
        ),
    ]
    command, env = quiet_server()
    try:
        with local_server(command, env=env) as base:
            port = int(base.rsplit(":", 1)[1])
            bounds = f"{MAX_CELLS_PER_CALL:,} cells, {MAX_PLANS_PER_CALL:,} plans per call"
            floor(port)
            print(f"Calls through xlwings Server (bounds: {bounds})")
            for kind, label, payload in cases:
                status = timed(port, f"{kind}: {label}", payload)
                assert status == (200 if kind == "allowed" else 400), (label, status)
            slow_clients(port)
            held_bodies(port)
    except ServerStartError as err:
        raise SystemExit(str(err)) from None
    record("bench_server", FIGURES, {
        "floor": "a one-cell TRAIN_DAYS alone through the same server (HTTP on loopback)",
        "bounds": bounds})  # fmt: skip


if __name__ == "__main__":
    main()
