"""The team server under load (issue 20): 1, 16 and 64 signed-in clients, 1 and 2 workers.

Part 1, in-process: a 10,000-row ``TRAIN_DAYS`` call computed by the bare function, by xlwings'
own dispatch (``custom_functions_call``: conversion cell by cell), and by our fast path
(:mod:`addin.fast_path`, with the JSON encoding), with the ratios the issue asks about.

Part 2, a load test: ``compute-lab serve --require-sign-in --workers W`` on a free 127.0.0.1
port (loopback only: nothing leaves this machine), one token per client. Each client keeps one
connection open and sends, in turn, nine one-cell calls and one 10,000-row call. Each level is
bounded: at most ``REQUESTS`` requests and ``SECONDS`` seconds. Printed per level: requests a
second, p50/p99 of one-cell calls and of 10k-row calls, and any status other than 200 (a 503
is the queue refusing work, a 429 a token over its rate).

The clients run in up to ``CLIENT_PROCESSES`` processes (threads within each).
Run: ``.venv/bin/python benchmarks/bench_team.py [--quick]``. The machine's load average is
printed first: on a shared machine the figures are only indicative. Results also go to
``benchmarks/results/bench_team.json``; ``COMPUTE_LAB_BENCH_QUICK=1`` is a tiny run (40
requests, 1 s per level: tests/test_benchmarks.py). The floor of part 1 is the bare function;
part 2 compares 2 workers with 1.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _results import record  # noqa: E402

from addin import tokens  # noqa: E402
from addin.local_server import ServerStartError, call_body, local_server  # noqa: E402

#: Requests per level at most, and seconds per level at most.
REQUESTS = 1500
SECONDS = 20.0
ROWS = 10_000
BIG_EVERY = 10


body = call_body  # the body of a call as xlwings' Office.js code sends it


SMALL = body("TRAIN_DAYS", 37e9, 14.8e12, 2048, 400)
BIG = body("TRAIN_DAYS", 37e9, 14.8e12, [[1024.0 + i] for i in range(ROWS)], 400)

IN_PROCESS = r"""
import asyncio, json, time, statistics
from addin import server_app
import custom_functions
import xlwings.server
from udfs import excel

body = json.loads(open(0).read())
user = server_app._user(None)
loop = asyncio.new_event_loop()
fast = server_app._fast_path()
args = [1.0] * 0

def best(f, n=15):
    times = []
    for _ in range(n):
        t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
    return min(times) * 1000

col = [[1024.0 + i] for i in range(10_000)]
bare = best(lambda: excel.TRAIN_DAYS(37e9, 14.8e12, col, 400))
xl = best(lambda: loop.run_until_complete(
    xlwings.server.custom_functions_call(json.loads(json.dumps(body)), custom_functions, user)))
xl_json = best(lambda: server_app._encode(loop.run_until_complete(
    xlwings.server.custom_functions_call(json.loads(json.dumps(body)), custom_functions, user))))
ours = best(lambda: server_app._encode(fast.answer(body, loop)))
print(json.dumps({"bare": bare, "xlwings": xl, "xlwings_json": xl_json, "fast": ours}))
"""


def server_env(folder):
    env = {
        **os.environ,
        "XLWINGS_LICENSE_KEY": os.environ.get("XLWINGS_LICENSE_KEY", "noncommercial"),
        "XLWINGS_ENVIRONMENT": "prod",
        "XLWINGS_LOG_LEVEL": "WARNING",
        "DOTENV_PATH": str(Path(folder) / "no.env"),
        "COMPUTE_LAB_ACCESS_LOG": "0",
    }
    env.pop("XLWINGS_ON_SERVER", None)
    return env


def in_process(folder):
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS],
        input=BIG.decode(),
        capture_output=True,
        text=True,
        env=server_env(folder),
        cwd=ROOT,
        timeout=600,
    )
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    t = json.loads(out.stdout)
    print(f"In-process, one {ROWS:,}-row TRAIN_DAYS call (best of 15):")
    print(f"  the bare function                    {t['bare']:7.2f} ms")
    print(f"  xlwings' dispatch (conversion)       {t['xlwings']:7.2f} ms")
    print(f"  xlwings' dispatch + JSON             {t['xlwings_json']:7.2f} ms")
    print(f"  our fast path + JSON                 {t['fast']:7.2f} ms")
    print(
        f"  fast path / xlwings' dispatch: {t['fast'] / t['xlwings']:.2f}x; "
        f"fast path / bare function: {t['fast'] / t['bare']:.2f}x"
    )
    return t


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def client(port, token, counter, deadline, results, offset=0):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    i = offset  # clients send their 10k-row calls at different turns
    try:
        while time.monotonic() < deadline:
            with counter.get_lock():
                if counter.value >= REQUESTS:
                    return
                counter.value += 1
            big = i % BIG_EVERY == BIG_EVERY - 1
            i += 1
            start = time.perf_counter()
            conn.request("POST", "/xlwings/custom-functions-call", BIG if big else SMALL, headers)
            response = conn.getresponse()
            response.read()
            results.append((big, response.status, time.perf_counter() - start))
            if response.getheader("connection", "").lower() == "close":
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    finally:
        conn.close()


def client_process(port, jobs, counter, deadline, queue):
    """One client process: a thread per (token, offset) in ``jobs``; its results queued."""
    results = []
    threads = [
        threading.Thread(target=client, args=(port, token, counter, deadline, results, k))
        for token, k in jobs
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put(results)


#: Client processes at most (the clients' own JSON and HTTP work is spread over them, so one
#: Python process's lock does not cap the load).
CLIENT_PROCESSES = 4


def level(port, names, made, clients):
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("i", 0)
    queue = ctx.Queue()
    start = time.perf_counter()
    deadline = time.monotonic() + SECONDS
    jobs = [(made[names[k]], k) for k in range(clients)]
    n = min(clients, CLIENT_PROCESSES)
    procs = [
        ctx.Process(target=client_process, args=(port, jobs[p::n], counter, deadline, queue))
        for p in range(n)
    ]
    for p in procs:
        p.start()
    results = [r for _ in procs for r in queue.get()]
    for p in procs:
        p.join()
    seconds = time.perf_counter() - start
    ok = [r for r in results if r[1] == 200]
    small = [r[2] * 1000 for r in ok if not r[0]]
    big = [r[2] * 1000 for r in ok if r[0]]
    other = {}
    for r in results:
        if r[1] != 200:
            other[r[1]] = other.get(r[1], 0) + 1
    return {
        "clients": clients,
        "requests": len(results),
        "rps": len(ok) / seconds,
        "seconds": seconds,
        "small_p50": statistics.median(small) if small else float("nan"),
        "small_p99": percentile(small, 0.99),
        "big_p50": statistics.median(big) if big else float("nan"),
        "big_p99": percentile(big, 0.99),
        "other": other,
    }


def load_test(folder, workers, levels):
    token_file = Path(folder) / f"tokens-{workers}.json"
    names = [f"client{k:02d}" for k in range(max(levels))]
    made = {name: tokens.create(token_file, name) for name in names}

    def command(port):
        code = "import sys; from compute_lab.cli import main; sys.exit(main())"
        return [
            sys.executable, "-c", code, "serve", "--port", str(port), "--workers", str(workers),
            "--require-sign-in", "--token-file", str(token_file), "--rate-limit", "100000",
        ]  # fmt: skip

    rows = []
    with local_server(command, env=server_env(folder), ready_path="/ready") as base:
        port = int(base.rsplit(":", 1)[1])
        level(port, names, made, 4)  # warm every worker up
        for clients in levels:
            rows.append(level(port, names, made, clients))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 requests, 8 s per level")
    args = parser.parse_args()
    global REQUESTS, SECONDS
    if args.quick:
        REQUESTS, SECONDS = 300, 8.0
    if os.environ.get("COMPUTE_LAB_BENCH_QUICK", "") not in ("", "0"):  # the tiny run
        REQUESTS, SECONDS = 40, 1.0
    print("floor: part 1, the bare TRAIN_DAYS function in process; part 2, one worker")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="compute-lab-bench-team-") as folder:
        figures = {f"in_process_{k}_ms": v for k, v in in_process(folder).items()}
        print(
            f"\nLoad test: loopback, signed in, one call in {BIG_EVERY} has {ROWS:,} rows; "
            f"at most {REQUESTS} requests and {SECONDS:g} s per level"
        )
        head = "  workers clients  req/s   1-cell p50   p99    10k-row p50    p99   not 200"
        print(head)
        by_workers = {}
        for workers in (1, 2):
            try:
                rows = load_test(folder, workers, (1, 16, 64))
            except ServerStartError as err:
                raise SystemExit(str(err)) from None
            by_workers[workers] = rows
            for r in rows:
                for k in ("rps", "small_p50", "small_p99", "big_p50", "big_p99"):
                    figures[f"w{workers}_c{r['clients']}_{k}"] = r[k]
            for r in rows:
                print(
                    f"  {workers:>7} {r['clients']:>7} {r['rps']:6.1f} {r['small_p50']:9.1f} ms"
                    f" {r['small_p99']:6.1f} {r['big_p50']:10.1f} ms {r['big_p99']:7.1f}"
                    f"   {r['other'] or '-'}"
                )
        for one, two in zip(by_workers[1], by_workers[2], strict=True):
            print(
                f"  {one['clients']:>2} clients: 2 workers give {two['rps'] / one['rps']:.2f}x "
                "the requests a second of 1"
            )
    record("bench_team", figures, {
        "floor": "part 1: the bare TRAIN_DAYS function in process; part 2: one worker",
        "requests_per_level": REQUESTS, "seconds_per_level": SECONDS})  # fmt: skip


if __name__ == "__main__":
    main()
