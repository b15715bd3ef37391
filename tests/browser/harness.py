"""Run the served task pane in headless Chromium with a fake office.js (tests, screenshots, bench).

:func:`open_taskpane` loads ``/taskpane.html`` from a running ``compute-lab serve`` in Debian's
``chromium`` (driven by playwright; never ``playwright install``), replaces only the office.js
script with ``tests/browser/fake_office.js``, aborts every request that leaves the server's
loopback origin, and waits until the custom functions are associated.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from udfs import excel

FAKE_OFFICE = Path(__file__).resolve().parent / "fake_office.js"
#: The browser binary; ``COMPUTE_LAB_CHROMIUM`` names another one (and only that one).
CHROMIUM = os.environ.get("COMPUTE_LAB_CHROMIUM")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path():
    """The Chromium binary, or None when it is not installed."""
    if CHROMIUM is not None:
        return CHROMIUM if Path(CHROMIUM).is_file() else None
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    return shutil.which("chromium")


def require_browser():
    """Skip the calling test when playwright or Chromium is missing; fail it under CI."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("playwright") is None:
        problem = "the playwright package is not installed (pip install -e '.[test]')"
    elif chromium_path() is None:
        problem = "chromium is not installed (make chromium, as root)"
    else:
        return
    if os.environ.get("CI"):
        pytest.fail(f"browser test cannot run in CI: {problem}", pytrace=False)
    pytest.skip(problem)


@contextlib.contextmanager
def browser(ignore_https_errors=False):
    """A persistent headless Chromium context with a fresh profile; closed on leaving.
    ``ignore_https_errors`` accepts a test's self-signed certificate."""
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="compute-lab-chromium-") as profile,
        sync_playwright() as pw,
    ):
        context = pw.chromium.launch_persistent_context(
            profile,
            executable_path=chromium_path(),
            headless=True,
            args=CHROMIUM_ARGS,  # the fresh profile is playwright's --user-data-dir
            viewport={"width": 1000, "height": 900},
            ignore_https_errors=ignore_https_errors,
        )
        try:
            yield context
        finally:
            context.close()


def open_taskpane(context, base, runtime="1.4", log=None):
    """A page with the task pane loaded at ``base`` under the fake office.js.

    ``log`` (a list) collects "blocked URL", console errors and page errors; every JS
    response's text is kept in ``page.served_js`` (URL -> text) for the member scan.
    """
    log = [] if log is None else log
    origin = urlsplit(base)
    fake = FAKE_OFFICE.read_text(encoding="utf-8")
    page = context.new_page()
    page.served_js = {}

    def route(route):
        url = urlsplit(route.request.url)
        if (url.scheme, url.netloc) != (origin.scheme, origin.netloc):
            log.append(f"blocked {route.request.url}")
            return route.abort()
        if url.path.endswith("/office.js"):
            return route.fulfill(status=200, content_type="text/javascript", body=fake)
        return route.continue_()

    def response(resp):
        kind = resp.headers.get("content-type", "")
        if "javascript" in kind and not resp.url.endswith("/office.js"):
            with contextlib.suppress(Exception):
                page.served_js[resp.url] = resp.text()

    page.route("**/*", route)
    page.on("response", response)
    page.on("pageerror", lambda err: log.append(f"pageerror {err}"))
    page.on("console", lambda m: m.type == "error" and log.append(f"console {m.text}"))
    page.add_init_script(f"window.__fakeConfig = {{runtime: {runtime!r}}};")
    page.goto(f"{base}/taskpane.html")
    page.wait_for_function(
        "(count) => Object.keys(window.__customFunctions || {}).length >= count",
        arg=len(excel.__all__),
    )
    page.wait_for_selector("body[data-compute-lab-ready='true']")
    return page


def excel_args(args, count):
    """Arguments as Excel passes them: each a 2-D array, omitted optionals ``null``."""
    out = [a if isinstance(a, list) else [[a]] for a in args]
    return out + [None] * (count - len(out))


def call(page, name, args, count):
    """Call custom function ``name`` the way Excel does; returns the fake's report."""
    return page.evaluate(
        "([name, args]) => window.__callCustomFunction(name, args)",
        [name, excel_args(args, count)],
    )
