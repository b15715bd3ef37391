"""Screenshot of the browser harness for the docs: formulas as typed, and what each cell shows.

Run by ``make docs-browser-shot``: starts ``compute-lab serve`` on loopback, loads the task pane
in headless Chromium with the fake office.js (tests/browser/harness.py), calls each function
in ``cases.CASES`` as Excel would, and draws a sheet-like table of the results beside the
task pane. Writes ``docs/images/browser-harness.png``.
"""

from __future__ import annotations

import html
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from browser import cases, harness  # noqa: E402

from addin.local_server import local_server  # noqa: E402

OUT = Path(__file__).resolve().parents[2] / "docs" / "images" / "browser-harness.png"


def typed(name, args):
    def cell(a):
        if isinstance(a, list):
            return "{" + ";".join(",".join(json.dumps(v) for v in row) for row in a) + "}"
        if a is None:
            return ""  # a blank cell
        return json.dumps(a) if isinstance(a, str) else f"{a:.6g}"

    return f"=LAB.{name}({', '.join(cell(a) for a in args)})"


def shown(value):
    if isinstance(value, list):
        return "<br>".join(" | ".join(shown(v) for v in row) for row in value)
    if isinstance(value, float):
        return f"{value:,.6g}"
    return html.escape(str(value))


def main(out=OUT):
    env = {**os.environ, "XLWINGS_LICENSE_KEY": "noncommercial", "DOTENV_PATH": os.devnull}
    for key in ("XLWINGS_ON_SERVER", "XLWINGS_PROJECT_DIR", "XLWINGS_ENVIRONMENT"):
        env.pop(key, None)

    def serve(port):
        code = "import sys; from compute_lab.cli import main; sys.exit(main())"
        return [sys.executable, "-c", code, "serve", "--port", str(port)]

    with (
        local_server(serve, env=env, ready_path="/manifest.xml") as base,
        harness.browser() as context,
    ):
        page = harness.open_taskpane(context, base)
        rows = []
        for _, name, args in cases.CASES + [c[:3] for c in cases.ERROR_CASES[:2]]:
            got = page.evaluate(
                "([n, a]) => window.__callCustomFunction(n, a)",
                [name, cases.excel_args(name, args)],
            )
            shows = got["shows"]
            if "error" in got:
                shows = f"#VALUE! (hover: {got['message']})"
            rows.append(
                f"<tr><td>{html.escape(typed(name, args))}</td><td>{shown(shows)}</td></tr>"
            )
        page.evaluate(
            """(rows) => {
                const sheet = document.createElement('section');
                sheet.id = 'harness-sheet';
                sheet.innerHTML = '<h2 class="h6">Formulas as typed, and what each cell shows '
                  + '(custom-functions runtime 1.4)</h2>'
                  + '<table class="table table-sm table-bordered">'
                  + '<thead><tr><th>Formula</th><th>Cell shows</th></tr></thead><tbody>'
                  + rows.join('') + '</tbody></table>';
                sheet.style.cssText = 'font-size:11px;padding:8px;';
                document.body.prepend(sheet);
            }""",
            rows,
        )
        page.set_viewport_size({"width": 1200, "height": 900})
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=True)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
