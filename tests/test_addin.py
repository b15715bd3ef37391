"""Classic xlwings (Windows desktop Excel): VBA wrappers, help texts and `compute-lab addin`.

The classic COM route cannot run on Linux, but the part that turns our module into Excel
functions can: in a subprocess, stand-in ``pythoncom``/``pywintypes``/``win32com`` modules let
``xlwings.udfs`` import, its decorators are bound in place of the no-op ones, and
``generate_vba_wrapper`` writes the VBA module that "Import Functions" would import.
"""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from addin import classic
from compute_lab.cli import main
from udfs import excel

CLASSIC_SCRIPT = textwrap.dedent(
    """
    import io, json, sys, types

    # Stand-ins for pywin32, enough for `import xlwings.udfs`.
    pythoncom = types.ModuleType("pythoncom")
    pythoncom.CoInitialize = lambda: None
    pywintypes = types.ModuleType("pywintypes")
    pywintypes.com_error = type("com_error", (Exception,), {})
    win32com = types.ModuleType("win32com")
    client = types.ModuleType("win32com.client")
    client.Dispatch = lambda *a, **k: None
    win32com.client = client
    sys.modules.update(
        {"pythoncom": pythoncom, "pywintypes": pywintypes, "win32com": win32com,
         "win32com.client": client}
    )

    import xlwings
    import xlwings.udfs as classic

    # What `import xlwings` binds on Windows with pywin32.
    xlwings.func, xlwings.arg, xlwings.ret = classic.xlfunc, classic.xlarg, classic.xlret

    import udfs.excel as module

    class Workbook:
        Name = "planner.xlsm"

    vba = io.StringIO()
    classic.generate_vba_wrapper("udfs.excel", module, vba, Workbook())
    # What import_udfs passes to Application.MacroOptions for each function.
    options = {}
    for name in dir(module):
        f = getattr(module, name)
        if hasattr(f, "__xlfunc__"):
            info = f.__xlfunc__
            options[info["name"]] = {
                "Description": info["ret"]["doc"][:255],
                "ArgumentDescriptions": [a["doc"][:255] for a in info["args"] if not a["vba"]],
                "Category": info["category"],
                "arg_options": [a["options"] for a in info["args"]],
            }
    print(json.dumps({"vba": vba.getvalue(), "options": options}))
    """
)


@pytest.fixture(scope="module")
def classic_udfs():
    out = subprocess.run(
        [sys.executable, "-c", CLASSIC_SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def expected_signature(name):
    parts = []
    for p in inspect.signature(getattr(excel, name)).parameters.values():
        optional = p.default is not inspect.Parameter.empty
        parts.append(("Optional " if optional else "") + p.name)
    return f"Function {name}({', '.join(parts)})"


def test_every_function_gets_a_vba_wrapper_with_its_signature(classic_udfs):
    vba = classic_udfs["vba"]
    declared = re.findall(r"^Function (\w+)\(", vba, flags=re.M)
    assert sorted(declared) == sorted(excel.__all__)
    for name in excel.__all__:
        assert expected_signature(name) in vba


def test_train_days_and_train_kwh_signatures_verbatim(classic_udfs):
    vba = classic_udfs["vba"]
    assert "Function TRAIN_DAYS(active_params, tokens, accelerators, effective_tflops)" in vba
    assert (
        "Function TRAIN_KWH(active_params, tokens, effective_tflops, "
        "Optional watts_per_accelerator, Optional pue)" in vba
    )
    assert (
        'TRAIN_DAYS = XLPy.CallUDF("udfs.excel", "TRAIN_DAYS", '
        "Array(active_params, tokens, accelerators, effective_tflops), ThisWorkbook, "
        "Application.Caller)" in vba
    )


def test_range_functions_signatures_verbatim(classic_udfs):
    vba = classic_udfs["vba"]
    optional = (
        "Optional mfu, Optional usd_per_accelerator_hour, Optional throughput_range_pct, "
        "Optional price_range_pct, Optional watts_per_accelerator, Optional pue, "
        "Optional usd_per_kwh, Optional effective_tflops"
    )
    assert (
        "Function TRAIN_QUANTILE(quantity, p, total_params, active_params, tokens, accelerators, "
        f"accelerator_name, {optional})" in vba
    )
    assert (
        "Function TRAIN_PLAN_RANGE(total_params, active_params, tokens, accelerators, "
        f"accelerator_name, {optional})" in vba
    )
    assert 'TRAIN_QUANTILE = XLPy.CallUDF("udfs.excel", "TRAIN_QUANTILE", ' in vba
    # Every argument's help fits the function wizard (Excel keeps 255 characters).
    options = classic_udfs["options"]
    for name in ("TRAIN_QUANTILE", "TRAIN_PLAN_RANGE"):
        assert all(len(d) <= 255 for d in options[name]["ArgumentDescriptions"])
        assert len(options[name]["ArgumentDescriptions"]) == len(
            inspect.signature(getattr(excel, name)).parameters
        )


def test_wizard_help_texts(classic_udfs):
    options = classic_udfs["options"]
    assert set(options) == set(excel.__all__)
    for name, opts in options.items():
        f = getattr(excel, name)
        assert opts["Description"] == excel._summary(f.__doc__)
        assert len(opts["Description"]) <= 255
        params = list(inspect.signature(f).parameters)
        expected = [excel._FUNCTION_ARG_DOCS.get((name, p), excel.ARG_DOCS[p]) for p in params]
        assert opts["ArgumentDescriptions"] == expected


def test_arguments_arrive_as_2d_ranges_with_errors_as_text(classic_udfs):
    for opts in classic_udfs["options"].values():
        for arg in opts["arg_options"]:
            assert arg == {"ndim": 2, "err_to_str": True}


# ---------------------------------------------------------------------------------------------
# compute-lab addin install
# ---------------------------------------------------------------------------------------------


def test_config_file_gets_udf_modules_and_interpreter_keeping_other_lines(tmp_path):
    conf = tmp_path / "xlwings.conf"
    conf.write_text('"LICENSE_KEY","abc"\n"UDF MODULES","old_module"\n"Interpreter_Win","x"\n')
    assert main(["addin", "install", "--config-only", "--config-file", str(conf)]) == 0
    lines = conf.read_text().splitlines()
    assert lines == [
        '"LICENSE_KEY","abc"',
        '"UDF MODULES","udfs.excel"',
        f'"INTERPRETER_WIN","{sys.executable}"',
    ]


def test_config_file_is_created(tmp_path):
    conf = tmp_path / "sub" / "xlwings.conf"
    classic.update_config(conf, classic.config_settings("C:/Python/python.exe"))
    assert (
        conf.read_text() == '"UDF MODULES","udfs.excel"\n"INTERPRETER_WIN","C:/Python/python.exe"\n'
    )


def test_the_configured_module_is_the_excel_functions():
    import importlib

    module = importlib.import_module(classic.UDF_MODULE)
    assert module is excel


def test_dry_run_names_xlwings_addin_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPUTE_LAB_FORCE_ADDIN", "1")  # as on Windows
    conf = tmp_path / "xlwings.conf"
    assert main(["addin", "install", "--dry-run", "--config-file", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "would run:" in out and "addin install" in out
    assert '"UDF MODULES","udfs.excel"' in out
    assert not conf.exists()


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the refusal is for other systems")
def test_dry_run_refuses_where_the_real_command_refuses(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COMPUTE_LAB_FORCE_ADDIN", raising=False)
    conf = tmp_path / "xlwings.conf"
    assert main(["addin", "install", "--dry-run", "--config-file", str(conf)]) == 2
    captured = capsys.readouterr()
    assert "would run" not in captured.out
    assert "needs desktop Excel on Windows" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    # --config-only is what works here, and its dry run says so.
    assert main(["addin", "install", "--dry-run", "--config-only", "--config-file", str(conf)]) == 0
    out = capsys.readouterr().out
    assert "would run" not in out and f"would set in {conf}" in out
    assert not conf.exists()


def test_xlwings_install_command_is_xlwings_cli():
    command = classic.xlwings_install_command()
    assert command[0] == sys.executable and command[-2:] == ["addin", "install"]
    # The -c program really is xlwings' command line: it shows xlwings' own help.
    out = subprocess.run(
        command[:3] + ["--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert "addin" in out.stdout


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the refusal is for other systems")
def test_install_without_windows_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COMPUTE_LAB_FORCE_ADDIN", raising=False)
    conf = tmp_path / "xlwings.conf"
    assert main(["addin", "install", "--config-file", str(conf)]) == 2
    err = capsys.readouterr().err
    assert "needs desktop Excel on Windows" in err and len(err.strip().splitlines()) == 1
    assert not conf.exists()


def test_commands_module_is_light():
    code = (
        "import sys, addin.commands\n"
        "heavy = ('xlwings', 'uvicorn', 'xlwings_server')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def config_error(capsys, config_file):
    status = main(["addin", "install", "--config-only", "--config-file", config_file])
    err = capsys.readouterr().err.strip()
    assert status == 2 and len(err.splitlines()) == 1, (status, err)
    assert "internal error" not in err
    return err


def test_config_file_that_is_a_directory_or_under_a_file(tmp_path, capsys):
    err = config_error(capsys, str(tmp_path))
    assert f"--config-file {tmp_path}: cannot be updated" in err
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert "--config-file" in config_error(capsys, str(afile / "xlwings.conf"))
    assert afile.read_text() == "x"


def test_config_file_that_is_not_text(tmp_path, capsys):
    conf = tmp_path / "xlwings.conf"
    conf.write_bytes(b"\xff\xfe\x00binary")
    assert "is not a UTF-8 text file" in config_error(capsys, str(conf))
    assert conf.read_bytes() == b"\xff\xfe\x00binary"


def test_empty_config_file_is_refused_not_the_default(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(classic, "default_config_file", lambda: tmp_path / "default.conf")
    assert "--config-file is empty" in config_error(capsys, "")
    assert not (tmp_path / "default.conf").exists()


def test_config_file_is_replaced_whole(tmp_path):
    conf = tmp_path / "xlwings.conf"
    conf.write_text('"LICENSE_KEY","abc"\n')
    classic.update_config(conf, classic.config_settings("py"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xlwings.conf"]  # no temporary left
    assert conf.read_text().splitlines()[0] == '"LICENSE_KEY","abc"'


# ---------------------------------------------------------------------------------------------
# A clean install (issue 13): the wheel builds without a setuptools warning and carries every
# data folder; the certificate folder the docs name exists in a clone.
# ---------------------------------------------------------------------------------------------


ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if build.returncode != 0 and "No matching distribution found for setuptools" in build.stdout:
        pytest.skip("setuptools>=77 cannot be fetched here (offline)")
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = out.glob("compute_lab-*.whl")
    return wheel, build.stdout + build.stderr


def test_wheel_builds_without_setuptools_warnings(built_wheel):
    _, log = built_wheel
    warnings = [
        line
        for line in log.splitlines()
        if re.search(r"Warning|deprecated|is absent from the `packages`", line)
    ]
    assert warnings == []


def test_wheel_carries_every_package_and_data_folder(built_wheel):
    wheel, _ = built_wheel
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    for needed in (
        "udfs/excel.py",
        "udfs/data/accelerators.toml",
        "udfs/data/runs.toml",
        "workbook_templates/__init__.py",
        "addin/server_app.py",
        "addin/server/pyproject.toml",
        "addin/server/custom_functions/__init__.py",
        "addin/server/custom_scripts/__init__.py",
        "addin/server/templates/manifest.xml",
        "addin/server/templates/taskpane.html",
        "addin/server/static/js/compute-lab.js",
        "addin/server/static/images/icons/compute-lab-32.png",
        "addin/server/certs/README.md",
    ):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pem")]


def test_license_is_an_spdx_string():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["license"] == "BSD-3-Clause"
    setuptools_req = next(r for r in project["build-system"]["requires"] if "setuptools" in r)
    assert setuptools_req == "setuptools>=77"  # the first with SPDX license strings


def test_certs_folder_named_by_the_docs_is_in_the_repository():
    tracked = subprocess.run(
        ["git", "ls-files", "addin/server/certs"], capture_output=True, text=True, cwd=ROOT
    )
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert "addin/server/certs/README.md" in tracked.stdout.split()
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "addin/server/certs/localhost+2-key.pem"], cwd=ROOT
    )
    assert ignored.returncode == 0  # keys never get committed


@pytest.mark.parametrize(
    "printed, status",
    [
        # What xlwings prints, exiting 0, when Excel holds the add-in file open.
        ("Error: Failed to install the add-in: If Excel is running, quit Excel and try again.", 0),
        ("", 0),
        ("Error: This command is currently only supported on Windows.", 1),
    ],
)
def test_install_fails_unless_xlwings_says_it_installed(
    tmp_path, capsys, monkeypatch, printed, status
):
    monkeypatch.setenv("COMPUTE_LAB_FORCE_ADDIN", "1")  # as on Windows
    program = f"import sys; print({printed!r}); sys.exit({status})"
    monkeypatch.setattr(classic, "xlwings_install_command", lambda: [sys.executable, "-c", program])
    conf = tmp_path / "xlwings.conf"
    assert main(["addin", "install", "--config-file", str(conf)]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "wrote" not in captured.out
    assert "`xlwings addin install` failed" in err and "close Excel" in err
    assert (printed or "no output") in err
    assert not conf.exists()


def test_install_says_what_xlwings_said_when_it_installed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPUTE_LAB_FORCE_ADDIN", "1")  # as on Windows
    program = f"print({classic.INSTALLED_LINE + '!'!r})"
    monkeypatch.setattr(classic, "xlwings_install_command", lambda: [sys.executable, "-c", program])
    conf = tmp_path / "xlwings.conf"
    assert main(["addin", "install", "--config-file", str(conf)]) == 0
    out = capsys.readouterr().out
    assert classic.INSTALLED_LINE in out and f"wrote {conf}" in out
    assert '"UDF MODULES","udfs.excel"' in conf.read_text()
