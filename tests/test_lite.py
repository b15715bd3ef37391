"""xlwings Lite: the generated bundle, executed under xlwings' server decorators."""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import tokenize
import tomllib
from pathlib import Path

import pytest

from addin import lite
from compute_lab.cli import main
from udfs import excel

ROOT = Path(__file__).resolve().parents[1]

# Runs the bundle the way xlwings Lite does: xlwings with its Office.js decorators, main.py
# as the functions module, calls dispatched by xlwings' own custom_functions_call.
RUN_BUNDLE = textwrap.dedent(
    """
    import asyncio, importlib.util, json, sys
    import xlwings as xw
    from xlwings import server

    spec = importlib.util.spec_from_file_location("main", sys.argv[1])
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)

    def call(name, *args):
        body = {"client": "Office.js", "func_name": name,
                "args": [a if isinstance(a, list) else [[a]] for a in args],
                "caller_address": "[Book1.xlsx]Sheet1!A1", "culture_info_name": "en-US",
                "date_format": None, "version": xw.__version__, "runtime": "1.4"}
        try:
            return {"result": asyncio.run(server.custom_functions_call(body, main))}
        except xw.XlwingsError as err:
            return {"error": str(err)}

    meta = server.custom_functions_meta(main)
    print(json.dumps({
        "udfs_file": sys.modules["udfs"].__file__,
        "udfs_dir": main.UDFS_DIR,
        "functions": sorted(f["name"] for f in meta["functions"]),
        "descriptions": {f["id"]: f.get("description") for f in meta["functions"]},
        "days_help": [p["description"] for p in
                      next(f for f in meta["functions"] if f["id"] == "TRAIN_DAYS")["parameters"]],
        "days": call("TRAIN_DAYS", 37e9, 14.8e12, [[1024], [2048]], 400),
        "kwh_default": call("TRAIN_KWH", 37e9, 14.8e12, 400, [[None]]),
        "spec": call("ACCEL_SPEC", "h100", "bf16_tflops"),
        "plan": call("TRAIN_PLAN", 671e9, 37e9, 14.8e12, 2048, 400, 2),
        "bad": call("TRAIN_DAYS", 37e9, 14.8e12, [[1024], ["#N/A"]], 400),
        "unknown": call("REF_RUN", "gpt-9", "total_params"),
        "quantile": call("TRAIN_QUANTILE", [["hours", "days", "cost"]], [[0.1], [0.5], [0.9]],
                         671e9, 37e9, 14.8e12, 2048, "H100"),
        "plan_range": call("TRAIN_PLAN_RANGE", 671e9, 37e9, 14.8e12, 2048, "A100"),
        "bad_p": call("TRAIN_QUANTILE", "days", 0, 671e9, 37e9, 14.8e12, 2048, "H100"),
        "too_big": call("TRAIN_DAYS", 37e9, 14.8e12, [[1.0]] * 1025, [[1.0] * 1024]),
        "too_many_plans": call("TRAIN_QUANTILE", "days", 0.5, 671e9, 37e9, 14.8e12,
                               [[1.0]] * (__MAX_PLANS__ + 1), "H100"),
    }))
    """
).replace("__MAX_PLANS__", str(excel.MAX_PLANS_PER_CALL))


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = tmp_path_factory.mktemp("lite")
    assert main(["lite-bundle", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def executed(bundle, tmp_path_factory):
    if importlib.util.find_spec("xlwings.server") is None:
        pytest.skip("xlwings without its server decorators")
    env = {**os.environ, "XLWINGS_ON_SERVER": "true", "XLWINGS_LICENSE_KEY": "noncommercial"}
    # Run away from the repository so only the bundle's own copy of udfs can be imported.
    cwd = tmp_path_factory.mktemp("elsewhere")
    out = subprocess.run(
        [sys.executable, "-c", RUN_BUNDLE, str(bundle / "main.py")],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_bundle_is_two_files(bundle):
    assert sorted(p.name for p in bundle.iterdir()) == ["main.py", "requirements.txt"]
    # Only what micropip accepts: one package name a line, no comments or options.
    assert (bundle / "requirements.txt").read_text() == "numpy\npandas\n"


def test_bundle_has_a_default_output_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["lite-bundle"]) == 0
    out = tmp_path / "xlwings-lite"
    assert sorted(p.name for p in out.iterdir()) == ["main.py", "requirements.txt"]
    assert f"wrote {Path('xlwings-lite') / 'main.py'}" in capsys.readouterr().out


def _carried_files(main_py_text):
    """``{relative path: text}`` of the ``_FILES[...] = ...`` assignments of a main.py."""
    files = {}
    for node in ast.parse(main_py_text).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0]
            assert getattr(target.value, "id", "") == "_FILES"
            files[ast.literal_eval(target.slice)] = ast.literal_eval(node.value)
    return files


class _NoDocstrings(ast.NodeTransformer):
    """The AST without docstrings (a body that was only one is ``pass``), but those kept."""

    def __init__(self, keep=()):
        self.keep = set(keep)

    def generic_visit(self, node):
        super().generic_visit(node)
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and getattr(node, "name", None) not in self.keep
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
        return node


def test_bundle_carries_the_sources_lean_and_the_data_as_is(bundle):
    text = (bundle / "main.py").read_text()
    files = _carried_files(text)
    for relative, carried in files.items():
        original = (ROOT / relative).read_text(encoding="utf-8")
        if relative.endswith(".toml"):  # wrapped, the same data
            assert tomllib.loads(carried) == tomllib.loads(original), relative
            continue
        # The same program: the original's AST with its docstrings gone, but the Excel
        # functions' own (their help in Lite); no comment left.
        keep = excel.__all__ if relative == "udfs/excel.py" else ()
        assert ast.dump(ast.parse(carried)) == ast.dump(
            _NoDocstrings(keep).visit(ast.parse(original))
        ), relative
        tokens = tokenize.generate_tokens(io.StringIO(carried).readline)
        assert not [t for t in tokens if t.type == tokenize.COMMENT], relative
    for needed in ("excel", "_cells", "engine", "validation", "catalogue", "quantities"):
        assert f"udfs/{needed}.py" in files
    assert "udfs/data/accelerators.toml" in files and "udfs/data/runs.toml" in files
    assert not [f for f in files if f.startswith("compute_lab/")]  # only what the functions import
    # Each file's lines are main.py's lines (no file on one line of escapes).
    assert files["udfs/engine.py"].splitlines()[5] in text.splitlines()


def test_bundle_is_readable_and_smaller_than_the_sources(bundle):
    text = (bundle / "main.py").read_text()
    longest = max(len(line) for line in text.splitlines())
    assert longest <= lite.MAX_LINE_CHARS == 200, longest
    sources = sum(len(t.encode()) for t in lite.source_files().values())
    # The lean sources and wrapped data: a third smaller than the files themselves.
    assert len(text.encode()) < 0.75 * sources, (len(text.encode()), sources)
    # docs/excel-routes.md states the size, to within a tenth.
    routes = " ".join((ROOT / "docs" / "excel-routes.md").read_text(encoding="utf-8").split())
    stated = int(re.search(r"About (\d+) KB, no line over (\d+) characters", routes).group(1))
    assert abs(stated * 1000 - len(text.encode())) < 0.1 * len(text.encode()), stated


def test_wrapped_toml_reads_back_the_same():
    text = 'a = 1\nsource = "' + " ".join(["word"] * 60) + ' https://example.com/x"\n'
    wrapped = lite.wrap_toml(text, width=40)
    assert tomllib.loads(wrapped) == tomllib.loads(text)
    assert max(len(line) for line in wrapped.splitlines()) <= 40
    with pytest.raises(ValueError, match="cannot be wrapped to 200"):
        lite.wrap_toml('s = "' + "x" * 300 + ' y"\n', width=40)


def test_lean_source_keeps_code_strings_and_help():
    source = textwrap.dedent(
        '''\
        """Module help."""
        __all__ = ["SHOWN"]


        def SHOWN(x):  # drop me
            """What Excel shows."""
            text = """kept
            # not a comment

            inside"""
            return text


        def _hidden():
            """Internal."""
        '''
    )
    lean = lite.lean_source(source, keep_help=True)
    assert "Module help" not in lean and "Internal" not in lean and "drop me" not in lean
    assert '"""What Excel shows."""' in lean
    assert '"""kept\n    # not a comment\n\n    inside"""' in lean
    namespace = {}
    exec(lean, namespace)
    assert namespace["SHOWN"](1) == "kept\n    # not a comment\n\n    inside"
    assert namespace["_hidden"]() is None


def test_bundle_is_current(bundle):
    assert (bundle / "main.py").read_text() == lite.main_py()


def test_bundle_refuses_to_overwrite_without_force(tmp_path, capsys):
    (tmp_path / "main.py").write_text("# my own code\n")
    assert main(["lite-bundle", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "main.py").read_text() == "# my own code\n"
    assert not (tmp_path / "requirements.txt").exists()  # nothing written at all
    assert main(["lite-bundle", "--out", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "main.py").read_text() == lite.main_py()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["main.py", "requirements.txt"]


def test_a_file_appearing_meanwhile_is_not_overwritten(tmp_path, monkeypatch):
    from udfs.validation import CommandError
    from workbook_templates import files

    real = files.temp_beside

    def racing(target):  # someone writes requirements.txt after the existence check
        if Path(target).name == "requirements.txt":
            Path(target).write_text("mine\n")
        return real(target)

    monkeypatch.setattr(files, "temp_beside", racing)
    with pytest.raises(CommandError, match="already exists"):
        lite.write_bundle(tmp_path)
    assert (tmp_path / "requirements.txt").read_text() == "mine\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]


def bundle_error(capsys, *argv):
    status = main(["lite-bundle", *argv])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1, (status, err)
    assert "internal error" not in err
    return err


def test_out_is_an_existing_file(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert f"--out {afile}: is a file, not a directory" in bundle_error(capsys, "--out", str(afile))
    err = bundle_error(capsys, "--out", str(afile / "sub"))
    assert err.startswith(f"compute-lab lite-bundle: error: --out {afile / 'sub'}: cannot write")
    assert afile.read_text() == "x"


def test_empty_out_is_refused_not_the_current_directory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "--out is empty" in bundle_error(capsys, "--out", "")
    assert list(tmp_path.iterdir()) == []


def test_a_directory_where_main_py_goes(tmp_path, capsys):
    (tmp_path / "main.py").mkdir()
    err = bundle_error(capsys, "--out", str(tmp_path), "--force")
    assert "main.py there is not a file" in err
    assert not (tmp_path / "requirements.txt").exists()


def test_bundle_uses_its_own_copy_of_udfs(executed):
    assert executed["udfs_file"].startswith(executed["udfs_dir"])


def test_bundle_registers_every_function_with_help(executed):
    assert executed["functions"] == sorted(excel.__all__)
    assert executed["days_help"][0] == excel.ARG_DOCS["active_params"]
    # The Excel functions' own descriptions travel (their docstrings are kept in the bundle).
    assert executed["descriptions"] == {
        name: excel._summary(getattr(excel, name).__doc__) for name in excel.__all__
    }


def test_bundle_functions_answer_like_the_module(executed):
    assert executed["days"]["result"] == excel.TRAIN_DAYS(37e9, 14.8e12, [[1024], [2048]], 400)
    assert executed["kwh_default"]["result"] == [[excel.TRAIN_KWH(37e9, 14.8e12, 400)]]
    assert executed["spec"]["result"] == [[989.4]]
    plan = executed["plan"]["result"]
    assert [row[0] for row in plan] == [
        row[0] for row in excel.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2)
    ]
    # Blank electricity price and grid intensity take the planner's defaults (issue 9): only
    # the memory row (no hbm_gb) is a real #N/A, every other row is the module's number.
    local = excel.TRAIN_PLAN(671e9, 37e9, 14.8e12, 2048, 400, 2)
    na = {"type": "Error", "errorType": "NotAvailable"}
    assert [row[1] for row in plan] == [na if v == excel.NOT_AVAILABLE else v for _, v in local]
    assert [key for (key, _), row in zip(excel.PLAN_ROWS, plan, strict=True) if row[1] == na] == [
        "min_accelerators_for_memory"
    ]


def test_bundle_range_functions_answer_like_the_module(executed):
    # The calibration (catalogue runs, fitted default MFU, spread) travels in the bundle.
    assert executed["quantile"]["result"] == excel.TRAIN_QUANTILE(
        [["hours", "days", "cost"]], [[0.1], [0.5], [0.9]], 671e9, 37e9, 14.8e12, 2048, "H100"
    )
    assert executed["plan_range"]["result"] == excel.TRAIN_PLAN_RANGE(
        671e9, 37e9, 14.8e12, 2048, "A100"
    )
    assert executed["bad_p"]["error"].startswith(
        "TRAIN_QUANTILE: p must be a probability strictly between 0 and 1"
    )


def test_bundle_carries_the_range_modules_and_the_runs():
    files = lite.bundle_files()
    for needed in ("plan", "ranges", "calibration", "model", "formula", "quantities"):
        assert f"udfs/{needed}.py" in files, needed
    assert "udfs/data/runs.toml" in files


def test_bundle_bad_input_is_an_xlwings_error(executed):
    assert executed["bad"]["error"] == (
        "TRAIN_DAYS: accelerators at row 2, column 1 is an Excel error (#N/A)"
    )
    assert "did you mean" in executed["unknown"]["error"]  # the closest run names


def test_bundle_refuses_an_oversized_call_naming_the_bound(executed):
    # issue 22 row 3: the same bounds as the module, from the bundle's own copy of udfs
    assert executed["too_big"]["error"] == (
        "TRAIN_DAYS: the call would produce 1,049,600 cells (1025 rows x 1024 columns), over "
        "the limit of 1,048,576 cells per call (MAX_CELLS_PER_CALL); split it into smaller ranges"
    )
    assert (
        f"over the limit of {excel.MAX_PLANS_PER_CALL:,} plans per call (MAX_PLANS_PER_CALL)"
        in (executed["too_many_plans"]["error"])
    )


# ---------------------------------------------------------------------------------------------
# The bundle loaded as xlwings Server's Pyodide mode loads it (XLWINGS_ON_SERVER=true, module
# `main`), answering the very request bodies the browser test posts (tests/browser/cases.py).
# ---------------------------------------------------------------------------------------------

REPLAY = textwrap.dedent(
    """
    import asyncio, importlib, json, sys
    sys.path.insert(0, sys.argv[1])
    import xlwings as xw
    from xlwings import server
    main = importlib.import_module("main")
    out = []
    for body in json.loads(sys.stdin.read()):
        try:
            out.append({"result": asyncio.run(server.custom_functions_call(body, main))})
        except xw.XlwingsError as err:
            out.append({"error": str(err)})
    print(json.dumps(out))
    """
)


def test_bundle_answers_the_browser_test_bodies_identically(bundle, tmp_path):
    if importlib.util.find_spec("xlwings.server") is None:
        pytest.skip("xlwings without its server decorators")
    sys.path.insert(0, str(ROOT / "tests"))
    from browser import cases

    bodies, wanted = [], []
    for runtime in ("1.4", "1.3"):
        for _, name, args in cases.CASES:
            bodies.append(cases.request_body(name, args, runtime))
            wanted.append({"result": cases.expected(name, args, runtime)})
        for _, name, args, message in cases.ERROR_CASES:
            bodies.append(cases.request_body(name, args, runtime))
            wanted.append({"error": message or cases.expected_message(name, args)})
    env = {**os.environ, "XLWINGS_ON_SERVER": "true", "XLWINGS_LICENSE_KEY": "noncommercial"}
    out = subprocess.run(
        [sys.executable, "-c", REPLAY, str(bundle)],
        input=json.dumps(bodies),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got == wanted
