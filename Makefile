# The two set-up commands of the README. Both work on a fresh machine with only python3.11 and make.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(STAMP)

demo: $(STAMP)
	$(BIN)/edgeopt demo

# The suite and every notebook (executed by nbmake), on 2 workers.
test: $(DEVSTAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --nbmake tests notebooks

lint: $(DEVSTAMP)
	$(BIN)/ruff check edgeopt formulations tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
