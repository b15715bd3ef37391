"""The add-in signed in, in a real browser, against a TLS team server (issue 20).

``compute-lab serve --require-sign-in`` runs over HTTPS with a certificate made in the test;
headless Chromium loads the served task pane (xlwings' own JavaScript, office.js faked by
``tests/browser/fake_office.js``), and custom functions are called the way Excel calls them.
Without a token the call is refused (401, shown as #VALUE! with the reason); once the token is
saved in the task pane's sign-in field the same call answers, with ``Authorization: Bearer``
sent by our ``getAuth()``; once the token is revoked (the server keeps running) it is refused.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from helpers_team import signed_in_server

from addin import tokens

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import harness  # noqa: E402

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)

DAYS = [[[37e9]], [[14.8e12]], [[2048]], [[400]]]


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    harness.require_browser()
    folder = tmp_path_factory.mktemp("signed-in")
    with signed_in_server(folder, "--workers", "1", names=("alice",)) as running:
        yield running


def call(page, args=DAYS):
    return page.evaluate(
        "([name, args]) => window.__callCustomFunction(name, args)", ["TRAIN_DAYS", args]
    )


def test_signed_in_over_tls_then_revoked(team):
    base, token_file, made, _ = team
    assert base.startswith("https://")
    sent = []
    with harness.browser(ignore_https_errors=True) as context:
        page = harness.open_taskpane(context, base)
        page.on(
            "request",
            lambda r: (
                r.url.endswith("/custom-functions-call")
                and sent.append(r.headers.get("authorization"))
            ),
        )
        assert page.inner_text("#sign-in-status") == "Not signed in."
        refused = call(page)
        assert refused["shows"] == "#VALUE!"
        assert refused["message"] == "sign-in required: send Authorization: Bearer <token>"

        page.fill("#sign-in-token", made["alice"])
        page.click("#sign-in-save")
        assert page.inner_text("#sign-in-status") == "Signed in (token saved)."
        answered = call(page)
        assert "error" not in answered, answered
        assert answered["raw"][0][0] == pytest.approx(46.4206, abs=1e-4)
        assert sent[-1] == f"Bearer {made['alice']}"

        # A task pane button runs a custom script: xlwings Server's own route, where its
        # `custom` auth provider (addin/server/auth/custom) checks the same token.
        scripts = []
        page.on(
            "response",
            lambda r: "/custom-scripts-call/" in r.url and scripts.append(r.status),
        )
        page.evaluate(
            "() => { const book = window.__workbook; window.__writes.length = 0; "
            "book.selection = [2, 1]; book.sheets[0].cells.clear(); }"
        )
        page.click("#insert-plan")
        page.wait_for_function("!document.querySelector('#insert-plan').hasAttribute('disabled')")
        assert scripts == [200]
        assert len(page.evaluate("window.__writes")) == 2

        tokens.revoke(token_file, "alice")
        revoked = call(page, [[[37e9]], [[14.8e12]], [[4096]], [[400]]])
        assert revoked["shows"] == "#VALUE!"
        assert revoked["message"] == "the token is unknown or has been revoked"
        page.close()
