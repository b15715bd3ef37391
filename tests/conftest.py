"""Shared fixtures: the generated templates, and their copies recalculated by LibreOffice.

``generated_templates`` (file name -> Path) writes every template once per session;
``recalculated_templates`` (file name -> Path) is the same files after a forced recalculation
by headless LibreOffice. ``template_variants`` are copies of the planner with inputs changed as
a user would (``helpers.VARIANTS``); they are recalculated in the same LibreOffice call
(``recalculated_variants``), since each call costs 1-2 s. Plain helpers live in
``tests/helpers.py``.

A test that needs LibreOffice carries the ``libreoffice`` marker (added here to every test that
uses a recalculated fixture); without ``soffice`` it fails when ``CI`` is set, else skips.
``example_plan`` is the example plan (``python -m workbook_templates.example``), recalculated in
the same LibreOffice call (``recalculated_example``). ``gnumeric_recalculated`` (file name ->
Path) is every template, variant and the example plan recalculated by Gnumeric instead; a
test using it carries the ``gnumeric`` marker (no ``ssconvert``: fails under CI, else skips).

The fast loop's markers are assigned here too, from what a test uses (its own code, the code of
every fixture it uses, and the helpers they call, read with :mod:`ast`), so a new test is marked
without an edit: ``spreadsheet`` (it runs LibreOffice or Gnumeric), ``browser`` (Chromium),
``server`` (a uvicorn server process), ``slow`` (any other process, or seconds of CPU: listed
in ``_SLOW_TESTS``). ``make check`` runs the tests with none of them. ``serial`` marks a test
that sends a signal to its own process: in a pytest-xdist worker (which has threads of its own)
the signal can arrive late and end the worker's run, so ``make check`` and ``make test`` run
these in one plain process after the parallel run. Under pytest-xdist
(``make test``), the tests sharing a session's LibreOffice or Gnumeric recalculation run on one
worker (``xdist_group``), and so do a module's server and browser tests, and its tests that
start processes and share a module fixture (a server, a browser, a wheel built in the
repository's tree).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
import textwrap
from pathlib import Path

import pytest
from helpers import PLANNER, VARIANTS, require_soffice, require_ssconvert

#: Fixtures that run LibreOffice: a test using one of them is marked ``libreoffice``.
_LIBREOFFICE_FIXTURES = {
    "_recalculated_all",
    "recalculated_templates",
    "recalculated_variants",
    "state_variants",  # test_templates.py
    "pdfs",  # test_print.py
    "recalculated_example",
}
#: Fixtures that run Gnumeric: a test using one of them is marked ``gnumeric``.
_GNUMERIC_FIXTURES = {"gnumeric_recalculated"}


#: What makes a test slow, by the names its code (or a fixture's, or a helper's) refers to:
#: functions, modules and attributes that start a process of each kind.
_USES = {
    "spreadsheet": {
        "recalculate",
        "recalculate_gnumeric",
        "find_soffice",
        "find_ssconvert",
        "require_soffice",
        "require_ssconvert",
    },
    "browser": {"harness", "require_browser", "sync_playwright"},
    "server": {"local_server", "uvicorn_command", "quiet_server"},
    "slow": {"subprocess", "Popen", "multiprocessing", "ProcessPoolExecutor"},
}
#: Names that, together in a test's code, send a signal to the test's own process
#: (``os.kill(os.getpid(), ...)``): such a test is ``serial``.
_OWN_SIGNAL = {"kill", "getpid"}
#: Tests that start no other program but take seconds of CPU (measured with ``--durations``):
#: ``slow`` too, by file (every test in it) or by file and test name (every parametrisation).
_SLOW_TESTS = {
    "test_calibration.py::test_chosen_model_beats_the_best_constant_under_grouped_validation",
    "test_calibration.py::test_fitted_numbers_are_data_that_a_refit_reproduces",
    "test_calibration.py::test_leave_one_out_figures_are_recomputed",
    "test_calibration.py::test_own_runs_of_a_catalogue_organisation_pull_its_runs_closer",
    "test_calibration.py::test_the_choice_is_fair_stable_and_not_the_hindsight_constant",
    "test_calibration_study.py",
    "test_cli.py::test_command_line_doc_examples_print_what_they_show",
    "test_cli_ranges.py::test_runs_prints_the_grouped_validation_table_recomputed",
    "test_fast_kinds.py::test_every_kind_of_call_equals_the_step_by_step_estimate",
    "test_fuzz_report.py::test_random_bytes_in_a_part",
    "test_fuzz_report.py::test_random_values_in_a_real_planner",
    "test_lean_plans.py::test_every_call_equals_the_step_by_step_estimate",
    "test_lookup.py::test_the_lookup_over_an_array_equals_each_names_own_and_the_old_one",
    "test_own_runs.py::test_each_bad_file_is_one_line_exit_2_and_nothing_written_on_each_command",
    "test_own_runs.py::test_every_command_refuses_a_bad_file_in_the_same_words",
    "test_planner_own_runs.py::test_the_sheet_holds_the_file_and_its_formulas_are_portable",
    "test_vector_paths.py",
}
#: Command-line flags that run LibreOffice when a test calls the command line in-process.
_SPREADSHEET_FLAGS = {"--recalculate", "--pdf"}
TESTS = Path(__file__).resolve().parent


def _names(node):
    """Names, attribute names and command-line flags a piece of code refers to."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            found.add(sub.attr)
        elif isinstance(sub, ast.Constant) and sub.value in _SPREADSHEET_FLAGS:
            found.add("recalculate")
    return found


def _kinds(names, known):
    """The markers ``names`` lead to: each name's own (``_USES``) and those in ``known``."""
    kinds = {kind for kind, uses in _USES.items() if uses & names}
    if _OWN_SIGNAL <= names:
        kinds.add("serial")
    for name in names & known.keys():
        kinds |= known[name]
    return kinds


@functools.cache
def _file_kinds(path, _seen=frozenset()):
    """Each top-level function, class and assignment of the test or helper file ``path``, and
    each name it imports from another file of ``tests/``: name -> markers, to a fixed point (a
    helper calling a helper that starts a server is a server helper)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    out = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module and not node.level):
            continue
        source = TESTS / (node.module.replace(".", "/") + ".py")
        if source.is_file() and str(source) not in _seen and str(source) != str(path):
            theirs = _file_kinds(str(source), _seen | {str(path)})
            for alias in node.names:
                if alias.name in theirs:
                    out[alias.asname or alias.name] = theirs[alias.name]
    defs = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = _names(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    defs[target.id] = _names(node.value)
    changed = True
    while changed:
        changed = False
        for name, names in defs.items():
            kinds = _kinds(names, out)
            if kinds - out.get(name, set()):
                out[name] = out.get(name, set()) | kinds
                changed = True
    return out


@functools.cache
def _function_kinds(func):
    """The markers a test function or fixture function leads to: the names it refers to, with
    those its file defines or imports from ``tests/``."""
    func = inspect.unwrap(func)
    try:
        path = inspect.getsourcefile(func)
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    if path is None or TESTS not in Path(path).resolve().parents:
        return frozenset()
    return frozenset(_kinds(_names(tree), _file_kinds(str(Path(path).resolve()))))


def fast_loop_kinds(item):
    """The fast loop's markers of ``item``: what its test function and its fixtures lead to."""
    funcs = [getattr(item, "function", None)]
    for defs in getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values():
        funcs += [d.func for d in defs]
    kinds = set()
    for func in funcs:
        if func is not None:
            kinds |= _function_kinds(func)
    return kinds


def pytest_collection_modifyitems(config, items):
    grouped = config.pluginmanager.hasplugin("xdist")
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if _LIBREOFFICE_FIXTURES & fixtures:
            item.add_marker(pytest.mark.libreoffice)
        if _GNUMERIC_FIXTURES & fixtures:
            item.add_marker(pytest.mark.gnumeric)
        kinds = fast_loop_kinds(item)
        path = item.path.name
        if {path, f"{path}::{getattr(item, 'originalname', item.name)}"} & _SLOW_TESTS:
            kinds.add("slow")
        if item.get_closest_marker("libreoffice") or item.get_closest_marker("gnumeric"):
            kinds.add("spreadsheet")
        for kind in sorted(kinds - {m.name for m in item.iter_markers()}):
            item.add_marker(getattr(pytest.mark, kind))
        if not grouped:
            continue
        if _LIBREOFFICE_FIXTURES & fixtures:
            item.add_marker(pytest.mark.xdist_group("libreoffice"))
        elif _GNUMERIC_FIXTURES & fixtures:
            item.add_marker(pytest.mark.xdist_group("gnumeric"))
        elif kinds & {"server", "browser"} or (kinds and _uses_module_fixture(item)):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def _uses_module_fixture(item):
    """Whether ``item`` uses a fixture of its own module that outlives a test (a server, a
    built wheel): the module's tests then share one worker, so it is made once, not once a
    worker (``pip wheel`` of the project, say, builds in the repository's tree)."""
    for defs in getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {}).values():
        for d in defs:
            with contextlib.suppress(OSError, TypeError):
                if d.scope != "function" and Path(inspect.getsourcefile(d.func)) == item.path:
                    return True
    return False


def pytest_runtest_setup(item):
    if item.get_closest_marker("libreoffice"):
        require_soffice()
    if item.get_closest_marker("gnumeric"):
        require_ssconvert()


@pytest.fixture(scope="session")
def generated_templates(tmp_path_factory):
    """Every template, written once by ``write_templates``: file name -> Path."""
    from workbook_templates.generate import write_templates

    folder = tmp_path_factory.mktemp("templates")
    written = write_templates(folder)
    return {Path(p).name: Path(p) for p in written}


@pytest.fixture(scope="session")
def template_variants(generated_templates, tmp_path_factory):
    """Copies of the planner with user inputs typed in: file name -> Path."""
    folder = tmp_path_factory.mktemp("variants")
    out = {}
    for name, make in VARIANTS.items():
        make(generated_templates[PLANNER], folder / name)
        out[name] = folder / name
    return out


@pytest.fixture(scope="session")
def example_plan(tmp_path_factory):
    """The example plan as ``python -m workbook_templates.example`` writes it (not recalculated)."""
    from workbook_templates.example import write_example

    return Path(write_example(tmp_path_factory.mktemp("example") / "team-a-plan.xlsx"))


@pytest.fixture(scope="session")
def _recalculated_all(generated_templates, template_variants, example_plan, tmp_path_factory):
    from workbook_templates.recalc import recalculate

    require_soffice()
    out = tmp_path_factory.mktemp("recalculated")
    paths = [*generated_templates.values(), *template_variants.values(), example_plan]
    return {p.name: p for p in recalculate(paths, out)}


@pytest.fixture(scope="session")
def recalculated_example(_recalculated_all, example_plan):
    """The example plan after a forced LibreOffice recalculation."""
    return _recalculated_all[example_plan.name]


@pytest.fixture(scope="session")
def gnumeric_recalculated(generated_templates, template_variants, example_plan, tmp_path_factory):
    """Every template, variant and the example plan recalculated by Gnumeric: name -> Path."""
    from workbook_templates.recalc import recalculate_gnumeric

    require_ssconvert()
    out = tmp_path_factory.mktemp("gnumeric")
    paths = [*generated_templates.values(), *template_variants.values(), example_plan]
    return {p.name: p for p in recalculate_gnumeric(paths, out)}


@pytest.fixture(scope="session")
def recalculated_templates(_recalculated_all, generated_templates):
    """The generated templates after a forced LibreOffice recalculation: file name -> Path."""
    return {name: _recalculated_all[name] for name in generated_templates}


@pytest.fixture(scope="session")
def recalculated_variants(_recalculated_all, template_variants):
    """The planner variants after a forced LibreOffice recalculation: file name -> Path."""
    return {name: _recalculated_all[name] for name in template_variants}
