"""The Office.js route in a real browser: the served task pane and custom functions in Chromium.

``compute-lab serve`` runs on loopback; headless Chromium (Debian's ``chromium``, driven by
playwright) loads ``/taskpane.html`` with only office.js replaced by
``tests/browser/fake_office.js``; every request leaving the server's origin is aborted. Each
function is called the way Excel calls it (each argument a 2-D array, omitted optionals null,
an invocation object last). A failing test saves a screenshot under ``COMPUTE_LAB_SHOTS``
(default: pytest's temporary directory). Without chromium or playwright the module skips,
except under CI (``CI`` set), where it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from addin.local_server import local_server
from udfs import excel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import cases, harness  # noqa: E402

if importlib.util.find_spec("xlwings_server") is None:
    pytest.skip("needs the server extra (xlwings-server)", allow_module_level=True)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    harness.require_browser()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {**os.environ, "XLWINGS_LICENSE_KEY": "noncommercial", "DOTENV_PATH": str(log) + ".env"}
    for key in ("XLWINGS_ON_SERVER", "XLWINGS_PROJECT_DIR", "XLWINGS_ENVIRONMENT"):
        env.pop(key, None)

    def serve(port):
        code = "import sys; from compute_lab.cli import main; sys.exit(main())"
        return [sys.executable, "-c", code, "serve", "--port", str(port)]

    with local_server(serve, env=env, log=log, ready_path="/manifest.xml") as url:
        yield url


@pytest.fixture(scope="module")
def context(base):
    with harness.browser() as ctx:
        yield ctx


@pytest.fixture(scope="module", params=["1.4", "1.3"])
def pane(request, context, base, tmp_path_factory):
    log = []
    page = harness.open_taskpane(context, base, runtime=request.param, log=log)
    page.runtime = request.param
    page.log = log
    posted = page.posted = []
    page.on(
        "request",
        lambda r: r.url.endswith("/custom-functions-call") and posted.append(r.post_data_json),
    )
    shots = Path(os.environ.get("COMPUTE_LAB_SHOTS") or tmp_path_factory.mktemp("shots"))
    page.shots = shots
    yield page
    page.close()


@contextlib.contextmanager
def screenshot_on_failure(page, name):
    try:
        yield
    except BaseException:
        page.shots.mkdir(parents=True, exist_ok=True)
        path = page.shots / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name)}.png"
        page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}; browser log: {page.log}")
        raise


def call(page, name, args):
    return page.evaluate(
        "([name, args]) => window.__callCustomFunction(name, args)",
        [name, cases.excel_args(name, args)],
    )


def shows(value):
    """What a cell shows for one expected wire value."""
    return "#N/A" if value == cases.NA_ERROR else value


# ---------------------------------------------------------------------------------------------
# Custom functions
# ---------------------------------------------------------------------------------------------


def test_every_function_is_associated(pane):
    with screenshot_on_failure(pane, "associated"):
        names = pane.evaluate("Object.keys(window.__customFunctions).sort()")
        assert names == sorted(excel.__all__)


@pytest.mark.parametrize("label, name, args", cases.CASES, ids=[c[0] for c in cases.CASES])
def test_function_answers_as_in_python(pane, label, name, args):
    with screenshot_on_failure(pane, f"{label}-{pane.runtime}"):
        got = call(pane, name, args)
        want = cases.expected(name, args, pane.runtime)
        assert "error" not in got, got
        assert got["raw"] == want
        assert got["shows"] == [[shows(v) for v in row] for row in want]


def test_called_every_function():
    assert {name for _, name, _ in cases.CASES} == set(excel.__all__)
    assert {"TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"} <= set(excel.__all__)


def test_values_spills_and_na(pane):
    with screenshot_on_failure(pane, f"values-{pane.runtime}"):
        days = call(pane, "TRAIN_DAYS", [37e9, 14.8e12, 2048, 400])
        assert days["raw"][0][0] == pytest.approx(46.4206, abs=1e-4)
        got = call(pane, "TRAIN_PLAN", [671e9, 37e9, 14.8e12, 2048, 400, 2])
        plan = got["raw"]
        assert len(plan) == len(excel.PLAN_ROWS) and all(len(row) == 2 for row in plan)
        # Blank electricity price and grid intensity: the planner's defaults, so the total is
        # the planner's (issue 9); only the memory row (no hbm_gb) is #N/A.
        rows = dict(zip((key for key, _ in excel.PLAN_ROWS), plan, strict=True))
        assert rows["total_cost_usd"][1] == pytest.approx(4_691_106.67, abs=0.01)
        assert isinstance(rows["electricity_cost_usd"][1], float)
        assert isinstance(rows["co2_tonnes"][1], float)
        memory = list(rows).index("min_accelerators_for_memory")
        assert got["shows"][memory] == [plan[memory][0], "#N/A"]
        if pane.runtime == "1.4":
            assert plan[memory][1] == {"type": "Error", "errorType": "NotAvailable"}
        else:
            assert plan[memory][1] == "#N/A"
        spill = call(pane, "TRAIN_DAYS", [37e9, 14.8e12, [[1024], [2048], [4096]], 400])["raw"]
        assert [len(r) for r in spill] == [1, 1, 1]
        na = call(pane, "ACCEL_SPEC", ["H800", "tdp_watts"])
        if pane.runtime == "1.4":  # a real #N/A error: ISNA() is TRUE
            assert na["raw"] == [[{"type": "Error", "errorType": "NotAvailable"}]]
        else:  # runtime 1.3 cannot return error values: the text "#N/A", as on classic
            assert na["raw"] == [["#N/A"]]
        assert na["shows"] == [["#N/A"]]


@pytest.mark.parametrize(
    "label, name, args, message", cases.ERROR_CASES, ids=[c[0] for c in cases.ERROR_CASES]
)
def test_bad_input_is_value_error_with_the_message(pane, label, name, args, message):
    with screenshot_on_failure(pane, f"error-{label}-{pane.runtime}"):
        got = call(pane, name, args)
        assert got["shows"] == "#VALUE!" and got["error"] == "invalidValue"
        assert got["message"] == (message or cases.expected_message(name, args))


def test_browser_posts_the_bodies_the_lite_test_replays(pane):
    pane.posted.clear()
    for _, name, args in cases.CASES[:5]:
        call(pane, name, args)
    assert len(pane.posted) == 5
    for body, (_, name, args) in zip(pane.posted, cases.CASES[:5], strict=True):
        body = {k: v for k, v in body.items() if k != "session_id"}
        assert body == cases.request_body(name, args, pane.runtime)


def test_nothing_left_loopback(pane):
    # The task pane names no outside URL: nothing was blocked, no script failed.
    assert [line for line in pane.log if line.startswith(("blocked", "pageerror"))] == []


# ---------------------------------------------------------------------------------------------
# The fake covers what the served JavaScript uses
# ---------------------------------------------------------------------------------------------

MEMBER = re.compile(r"\b((?:Office|Excel|CustomFunctions)(?:\.[A-Za-z_$][\w$]*)+)")


def test_fake_provides_every_office_member_the_served_js_uses(pane):
    served = "\n".join(pane.served_js.values())
    assert "/xlwings/custom-functions-code.js" in " ".join(pane.served_js)
    used = {m for m in MEMBER.findall(served) if not m.endswith(".js")}
    assert "CustomFunctions.associate" in used and "Excel.run" in used
    missing = pane.evaluate(
        """(paths) => paths.filter((path) => {
            let value = window;
            for (const part of path.split(".")) {
                if (value === undefined || value === null) return true;
                value = value[part];
            }
            return value === undefined;
        })""",
        sorted(used),
    )
    assert missing == []


# ---------------------------------------------------------------------------------------------
# The task pane: function help, and actions through custom scripts
# ---------------------------------------------------------------------------------------------


def test_task_pane_lists_every_function_with_argument_help(pane):
    with screenshot_on_failure(pane, f"function-list-{pane.runtime}"):
        listed = pane.eval_on_selector_all(
            "#function-list details", "els => els.map(e => e.dataset.function)"
        )
        assert sorted(listed) == sorted(excel.__all__)
        text = pane.text_content("#function-list details[data-function='TRAIN_COST']")
        assert "LAB.TRAIN_COST(active_params, tokens, effective_tflops" in text
        assert excel.ARG_DOCS["usd_per_accelerator_hour"] in text  # with its unit, US$
        kwh = pane.text_content("#function-list details[data-function='TRAIN_KWH']")
        assert "[watts_per_accelerator]" in kwh and "(optional)" in kwh
        # The range functions (issue 11): signature, summary, every argument's help and unit.
        for name in ("TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"):
            f = getattr(excel, name)
            shown = pane.text_content(f"#function-list details[data-function='{name}']")
            params = [
                f"[{p}]" if v.default is not inspect.Parameter.empty else p
                for p, v in inspect.signature(f).parameters.items()
            ]
            assert f"LAB.{name}({', '.join(params)})" in shown
            assert excel._summary(f.__doc__) in shown
            for p in inspect.signature(f).parameters:
                assert excel._FUNCTION_ARG_DOCS.get((name, p), excel.ARG_DOCS.get(p)) in shown
        quantile = pane.text_content("#function-list details[data-function='TRAIN_QUANTILE']")
        for unit in ("US$2", "US$0.08", " W.", "P90 / P50 - 1", "0.9 for P90"):
            assert unit in quantile, unit
        pane.fill("#function-filter", "kwh")
        visible = pane.eval_on_selector_all(
            "#function-list details", "els => els.filter(e => !e.hidden).length"
        )
        assert 1 <= visible < len(excel.__all__)
        pane.fill("#function-filter", "")


def _run_button(page, selector, selection=(2, 1)):
    page.evaluate(
        "(sel) => { const book = window.__workbook; window.__writes.length = 0; "
        "book.selection = sel; book.sheets[0].cells.clear(); book.sheets[0].tables.length = 0; }",
        None if selection is None else list(selection),
    )
    page.click(selector)
    page.wait_for_function(f"!document.querySelector('{selector}').hasAttribute('disabled')")
    return page.evaluate("window.__writes")


def test_insert_plan_writes_inputs_and_a_train_plan_formula(pane):
    with screenshot_on_failure(pane, f"insert-plan-{pane.runtime}"):
        writes = _run_button(pane, "#insert-plan")  # selection: B3
        values, formula = writes
        assert values["address"] == "B3:C13"
        assert values["values"][0] == ["Total parameters (parameters)", 671e9]
        assert values["values"][3] == ["Accelerators (accelerators)", 2048]
        refs = ", ".join(f"C{r}" for r in range(3, 14))
        assert formula == {
            "kind": "formulas",
            "sheet": "Sheet1",
            "address": "E3",
            "formulas": [[f"=LAB.TRAIN_PLAN({refs})"]],
        }
        assert not pane.is_visible("#global-error-alert span")


@pytest.mark.parametrize(
    "selector, kind", [("#insert-runs", "runs"), ("#insert-accelerators", "accelerators")]
)
def test_insert_catalogue_as_a_table(pane, selector, kind):
    from udfs import catalogue

    with screenshot_on_failure(pane, f"{kind}-{pane.runtime}"):
        writes = _run_button(pane, selector, selection=(0, 0))
        values, table = writes
        frame = catalogue.runs() if kind == "runs" else catalogue.accelerators()
        assert len(values["values"]) == len(frame) + 1
        assert values["values"][0][0] == "name" and values["values"][0][-1] == "source"
        assert [row[0] for row in values["values"][1:]] == list(frame["name"])
        assert all(row[-1] for row in values["values"][1:])  # every row carries its source
        assert table["kind"] == "table" and table["hasHeaders"] is True
        assert table["address"].split("!")[-1].replace("$", "") == values["address"]


@pytest.mark.parametrize(
    "selector, said",
    [
        ("#insert-plan", "Inserted a TRAIN_PLAN block (the example plan) at Sheet1!B3."),
        ("#insert-runs", "Inserted the reference runs table at Sheet1!B3."),
        ("#insert-accelerators", "Inserted the accelerator catalogue table at Sheet1!B3."),
    ],
)
def test_insert_says_what_it_inserted_and_where(pane, selector, said):
    with screenshot_on_failure(pane, f"confirm-{selector[1:]}-{pane.runtime}"):
        writes = _run_button(pane, selector)  # selection: B3
        pane.wait_for_function(
            "document.getElementById('insert-status').dataset.state !== 'running'"
        )
        assert writes and pane.text_content("#insert-status") == said
        assert "text-success" in pane.get_attribute("#insert-status", "class")
        assert not pane.is_visible("#global-error-alert span")


def test_insert_that_fails_says_nothing_was_inserted(pane):
    try:
        with screenshot_on_failure(pane, f"confirm-failed-{pane.runtime}"):
            writes = _run_button(pane, "#insert-plan", selection=None)  # no cell selected
            pane.wait_for_function(
                "document.getElementById('insert-status').dataset.state !== 'running'"
            )
            assert writes == []
            assert pane.text_content("#insert-status") == (
                "Nothing was inserted: the reason is shown at the top."
            )
            assert pane.is_visible("#global-error-alert span")
            assert "select" in pane.text_content("#global-error-alert span").lower()
    finally:
        pane.evaluate("window.__workbook.selection = [0, 0]")  # a cell selected for the rest


def test_ribbon_buttons_run_their_scripts(pane):
    with screenshot_on_failure(pane, f"ribbon-{pane.runtime}"):
        actions = pane.evaluate("Object.keys(window.__ribbonActions).sort()")
        assert actions == [
            "compute-lab-insert-accelerators",
            "compute-lab-insert-plan",
            "compute-lab-insert-runs",
        ]
        for action in actions:
            pane.evaluate("window.__writes.length = 0")
            done = pane.evaluate(
                """(a) => new Promise((resolve) =>
                    window.__ribbonActions[a]({completed: () => resolve(true)}))""",
                action,
            )
            assert done is True
            assert pane.evaluate("window.__writes.length") >= 2, action


# ---------------------------------------------------------------------------------------------
# The manifest: our names, icons and URLs; every resource id resolved; every button wired
# ---------------------------------------------------------------------------------------------

NS = {
    "o": "http://schemas.microsoft.com/office/appforoffice/1.1",
    "v": "http://schemas.microsoft.com/office/taskpaneappversionoverrides",
    "bt": "http://schemas.microsoft.com/office/officeappbasictypes/1.0",
}


@pytest.fixture(scope="module")
def manifest(base):
    import httpx

    text = httpx.get(f"{base}/manifest.xml", timeout=10).text
    return text, ET.fromstring(text.strip().encode())


def test_manifest_is_ours_with_every_resource_resolved(manifest, base):
    import httpx

    text, root = manifest
    assert "MyGroup" not in text and "Hello World" not in text and "xlwings.org" not in text
    assert root.find("o:ProviderName", NS).text == "Compute Lab"
    assert root.find("o:DisplayName", NS).get("DefaultValue") == "Compute Lab"
    resources = {
        el.get("id"): el.get("DefaultValue")
        for el in root.iter()
        if el.tag.endswith(("}Image", "}Url", "}String")) and el.get("id")
    }
    used = {el.get("resid") for el in root.iter() if el.get("resid")}
    assert used and used <= set(resources), used - set(resources)
    tab = root.find(".//v:CustomTab", NS)
    assert resources[tab.find("v:Label", NS).get("resid")] == "Compute Lab"
    labels = [
        resources[c.find("v:Label", NS).get("resid")] for c in tab.iter(f"{{{NS['v']}}}Control")
    ]
    assert labels == ["Functions", "Insert plan", "Reference runs", "Accelerators"]
    for url in [v for v in resources.values() if v.startswith("http")] + [
        root.find("o:IconUrl", NS).get("DefaultValue"),
        root.find("o:HighResolutionIconUrl", NS).get("DefaultValue"),
    ]:
        assert url.startswith(base), url
        response = httpx.get(url, timeout=10)
        assert response.status_code == 200, url
        if url.endswith(".png"):
            size = int(re.search(r"-(\d+)\.png$", url).group(1))
            assert response.content[:8] == b"\x89PNG\r\n\x1a\n"
            assert int.from_bytes(response.content[16:20], "big") == size


def test_every_ribbon_function_is_associated(manifest, pane):
    _, root = manifest
    wanted = sorted(el.text for el in root.iter(f"{{{NS['v']}}}FunctionName"))
    assert wanted == pane.evaluate("Object.keys(window.__ribbonActions).sort()")


def test_committed_icons_are_the_generated_ones():
    from addin import icons

    for size in icons.SIZES:
        path = icons.ICON_DIR / f"compute-lab-{size}.png"
        assert path.read_bytes() == icons.png(size), f"{path}: run python -m addin.icons"


def test_custom_scripts_meta_lists_our_scripts(base):
    import httpx

    meta = httpx.get(f"{base}/xlwings/custom-scripts-meta.json", timeout=10).json()
    assert sorted(m["function_name"] for m in meta) == [
        "insert_accelerators",
        "insert_reference_runs",
        "insert_train_plan",
    ]
    assert json.dumps(meta).count("hello") == 0


def test_missing_browser_fails_under_ci(tmp_path):
    import subprocess

    def one_browser_test(env):
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
             "-k", "every_function_is_associated"],
            capture_output=True, text=True, env=env, timeout=300,
        )  # fmt: skip

    env = {**os.environ, "CI": "true", "COMPUTE_LAB_CHROMIUM": str(tmp_path / "no-chromium")}
    out = one_browser_test(env)
    assert out.returncode != 0
    assert "browser test cannot run in CI: chromium is not installed" in out.stdout
    env.pop("CI")
    out = one_browser_test(env)
    assert out.returncode == 0 and "skipped" in out.stdout
