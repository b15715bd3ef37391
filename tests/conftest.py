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
"""

from __future__ import annotations

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


def pytest_collection_modifyitems(items):
    for item in items:
        if _LIBREOFFICE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.libreoffice)
        if _GNUMERIC_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.gnumeric)


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
