"""The house reads top-down: which package may import which, the report's one-way pipeline,
no function body over 80 lines and no module over 1,000 (docs/architecture.md).

Every import statement is read with ``ast``, those inside functions too (a lazy import is
still an arrow), relative imports resolved to the module they name.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The floors, bottom up: a package may import its own floor and the floors below it.
FLOORS = ("udfs", "workbook_templates", "addin", "compute_lab")
#: The command line: the top floor, imported by nothing of the project.
CLI = "compute_lab"
#: The faces: the formula library, the workbooks, the Excel routes.
FACES = ("udfs", "workbook_templates", "addin")

#: The hand-off report's stages in the order a run goes through them; a module imports only
#: modules listed before it (the read stage is workbook_templates.reader, outside the package).
REPORT_PIPELINE = {
    "pool": "consolidate",
    "consolidate": "consolidate",
    "checks": "check",
    "sources": "tabulate",
    "tables": "tabulate",
    "forecast": "tabulate",
    "variance_tables": "tabulate",
    "compare": "tabulate",
    "layout": "write",
    "summary": "write",
    "csv_files": "write",
    "baseline_data": "write",
    "xlsx": "write",
    "output": "write",
    "command": "command",
    "__init__": "command",
}
REPORT_STAGES = ("read", "consolidate", "check", "tabulate", "write", "command")

#: The longest function body allowed (lines from the first statement, docstring included,
#: to the last).
MAX_BODY_LINES = 80
#: The longest module allowed, in lines: past it, a module holds two subjects.
MAX_MODULE_LINES = 1000


def _module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _files(package):
    return sorted(p for p in (ROOT / package).rglob("*.py") if ".venv" not in p.parts)


def _imports(path):
    """Every module an import statement in ``path`` names (``from a import b``: ``a`` and,
    when ``a.b`` is a module of the project, ``a.b``), with the line of the statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module
            found.append((module, node.lineno))
            found += [(f"{module}.{alias.name}", node.lineno) for alias in node.names]
    return found


def _floor(module):
    top = module.split(".")[0]
    return FLOORS.index(top) if top in FLOORS else None


def _module_strings(tree):
    """String constants that are not docstrings (a module name to load would be one)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node


@pytest.mark.parametrize("package", FLOORS)
def test_imports_run_one_way_down(package):
    """udfs imports nothing of the workbooks, the Excel routes or the command line; the
    workbooks nothing of the routes or the command line; the routes not the command line."""
    own = FLOORS.index(package)
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in _files(package)
        for module, line in _imports(path)
        if module and _floor(module) is not None and _floor(module) > own
    ]
    assert not wrong, "\n".join(wrong)


def _is_module(name):
    """True when ``name`` (``a.b`` or ``a.b:function``) names a module or package here."""
    path = ROOT.joinpath(*name.split(":")[0].split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


@pytest.mark.parametrize("package", FACES)
def test_no_module_name_of_a_floor_above_in_a_string(package):
    """Nor is a package above loaded by name (``importlib.import_module("addin.commands")``);
    a logger's name (``"compute_lab.access"``) names no module and is no arrow."""
    above = "|".join(FLOORS[FLOORS.index(package) + 1 :])
    pattern = re.compile(rf"({above})(\.\w+)*(:\w+)?")
    wrong = []
    for path in _files(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _module_strings(tree):
            if pattern.fullmatch(node.value) and _is_module(node.value):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("package", FACES)
def test_no_face_imports_the_command_line(package):
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for path in _files(package)
        for module, line in _imports(path)
        if module and module.split(".")[0] == CLI
    ]
    assert not wrong, "\n".join(wrong)


def test_loading_every_udfs_module_loads_nothing_above():
    """At run time too: importing every module of udfs (the Excel functions included) leaves
    no module of the workbooks, the Excel routes or the command line in ``sys.modules``."""
    code = (
        "import importlib, json, pkgutil, sys, udfs\n"
        "for m in pkgutil.walk_packages(udfs.__path__, 'udfs.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.splitlines()[-1])
    assert "udfs.engine" in loaded and "udfs.excel" in loaded
    above = [m for m in loaded if m.split(".")[0] in FLOORS[1:]]
    assert not above, above


def test_report_is_a_one_way_pipeline():
    """read -> consolidate -> check -> tabulate -> write: each module of the report imports
    only the modules before it (no circle, no step reaching forward, even lazily)."""
    package = ROOT / "workbook_templates" / "report"
    modules = {p.stem for p in package.glob("*.py")}
    assert modules == set(REPORT_PIPELINE), "a new report module needs a place in the pipeline"
    order = list(REPORT_PIPELINE)
    assert [REPORT_STAGES.index(REPORT_PIPELINE[m]) for m in order] == sorted(
        REPORT_STAGES.index(REPORT_PIPELINE[m]) for m in order
    )
    wrong = []
    for stem in order:
        for module, line in _imports(package / f"{stem}.py"):
            parts = (module or "").split(".")
            if parts[:2] != ["workbook_templates", "report"] or len(parts) < 3:
                continue
            if parts[2] in modules and order.index(parts[2]) >= order.index(stem):
                wrong.append(
                    f"report/{stem}.py:{line} ({REPORT_PIPELINE[stem]}) imports {parts[2]} "
                    f"({REPORT_PIPELINE[parts[2]]})"
                )
    reader = ROOT / "workbook_templates" / "reader.py"
    wrong += [
        f"reader.py:{line} (read) imports {module}"
        for module, line in _imports(reader)
        if (module or "").startswith("workbook_templates.report")
    ]
    assert not wrong, "\n".join(wrong)


def _long_functions(package):
    for path in _files(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.body[0].lineno + 1
                if lines > MAX_BODY_LINES:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}: {node.name} ({lines} lines)"


@pytest.mark.parametrize("package", FLOORS)
def test_no_function_body_over_80_lines(package):
    long = list(_long_functions(package))
    assert not long, "\n".join(long)


@pytest.mark.parametrize("package", FLOORS)
def test_no_module_over_1000_lines(package):
    long = [
        f"{path.relative_to(ROOT)}: {n} lines"
        for path in _files(package)
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, "\n".join(long)
