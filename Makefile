# Compute Lab: `make demo` runs the main job, `make test` runs the checks.
# Both create .venv and install what they need.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_DEMO := $(VENV)/.installed-demo
STAMP_TEST := $(VENV)/.installed-test
DEMO_OUT ?= out

.PHONY: demo test check lint format bench libreoffice gnumeric chromium docs-browser-shot pictures clean

# Set-up prints one line and stays quiet after it (pip's -qq: its errors still print), so that
# `make demo`'s few lines are what a newcomer reads (tests/test_demo.py counts them).
$(BIN)/python:
	@echo "Setting up $(VENV) (once: a minute or two)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -qq --upgrade pip

$(STAMP_DEMO): pyproject.toml | $(BIN)/python
	@$(BIN)/python -m pip install -qq -e .
	@touch $@

$(STAMP_TEST): pyproject.toml | $(BIN)/python
	@echo "Installing the test tools into $(VENV)"
	@$(BIN)/python -m pip install -qq -e '.[test,server,metrics]'
	@touch $@ $(STAMP_DEMO)

# LibreOffice is the real spreadsheet engine the tests recalculate and print workbooks with;
# poppler turns the printed pages into text and pictures.
libreoffice:
	@missing=""; \
	command -v soffice >/dev/null 2>&1 || missing="$$missing libreoffice-calc-nogui fonts-dejavu-core"; \
	command -v pdftoppm >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	if [ -z "$$missing" ]; then \
		echo "soffice found: $$(command -v soffice); poppler found: $$(command -v pdftoppm)"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else \
		echo "missing:$$missing (tests that need them skip, and fail under CI)"; \
	fi

# Gnumeric is the third spreadsheet engine: the tests recalculate every workbook with its
# `ssconvert --recalc` too and compare each formula cell with LibreOffice (tests/test_engines.py).
gnumeric:
	@if command -v ssconvert >/dev/null 2>&1; then \
		echo "ssconvert found: $$(command -v ssconvert)"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing gnumeric"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnumeric >/dev/null; \
	else \
		echo "gnumeric is missing: install it (tests that need ssconvert skip, and fail under CI)"; \
	fi

# Chromium is the real browser the Office.js route is tested in (tests/test_browser.py, driven
# by the playwright package with this binary; `playwright install` is never used).
chromium:
	@if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then \
		echo "chromium found: $$(command -v chromium || echo /usr/bin/chromium)"; \
	elif [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
		echo "installing chromium"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
		echo "chromium is missing: install it (browser tests skip, and fail under CI)"; \
	fi

# The browser-harness picture in docs/excel-routes.md, from the real server and Chromium.
docs-browser-shot: $(STAMP_TEST) chromium
	$(BIN)/python tests/browser/screenshot.py

# The main job on the built-in examples, told in about twenty lines (compute_lab/demo.py): the
# DeepSeek-V3-like example plan's estimate, the default throughput checked on the disclosed
# runs, the planning workbooks, a team's filled plan and the finance hand-off built from it.
# Each command's full output is kept in $(DEMO_OUT)/*.txt.
demo: $(STAMP_DEMO) libreoffice
	@$(BIN)/python -m compute_lab.demo --out $(DEMO_OUT)

# The docs' pictures, printed from the real workbooks (LibreOffice, poppler) and the browser.
pictures: $(STAMP_TEST) libreoffice docs-browser-shot
	$(BIN)/python -m workbook_templates.pictures --out docs/images

lint: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP_TEST)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Every test, in parallel (pytest-xdist, one worker per core; the tests sharing a session's
# LibreOffice or Gnumeric run, or a module's server or browser, stay on one worker: loadgroup).
TEST_WORKERS ?= auto
# The tests that signal their own process (marker `serial`) run after, in one plain process.
test: $(STAMP_TEST) libreoffice gnumeric chromium lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m "not serial"
	$(BIN)/python -m pytest -q -p no:cacheprovider -m serial

# The fast loop: every test but the slow, spreadsheet, browser and server ones (markers assigned
# in tests/conftest.py), in a minute and a half on two idle cores; `make test` runs them all.
CHECK_MARKERS := not slow and not spreadsheet and not browser and not server
check: $(STAMP_TEST) lint
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) -m "$(CHECK_MARKERS) and not serial"
	$(BIN)/python -m pytest -q -p no:cacheprovider -m "$(CHECK_MARKERS) and serial"

bench: $(STAMP_TEST) libreoffice
	for f in benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
