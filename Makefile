# The set-up commands of the README. All work on a fresh machine with only python3.11 and make.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEVSTAMP := $(VENV)/.installed-dev
NBSTAMP  := $(VENV)/.installed-notebooks

.PHONY: demo test lint notebooks reproduce reproduce-quick docs docs-site clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

# dev = the test tools; rl = torch (CPU build, pinned: an unpinned torch pulls a multi-GB CUDA build),
# torch-geometric and safetensors for the learned TapFinger policy, which the suite tests too.
$(DEVSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q torch==2.13.0
	$(BIN)/python -m pip install -q -e '.[dev,rl]'
	touch $@ $(STAMP)

$(NBSTAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[notebooks]'
	touch $@

# A small instance of every family: each algorithm's objective, validity and ratio to the proven optimum.
demo: $(STAMP)
	$(BIN)/edgeopt demo

# The suite and every notebook (executed by nbmake), on 2 workers.
test: $(DEVSTAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --nbmake tests notebooks

lint: $(DEVSTAMP)
	$(BIN)/ruff check edgeopt formulations tests benchmarks

# JupyterLab with the notebooks of notebooks/ (an overview and one per family).
notebooks: $(NBSTAMP) $(DEVSTAMP)
	$(BIN)/jupyter lab notebooks/

# Every tracked result of benchmarks/results/ with the arguments that produced it (hours; see
# benchmarks/README.md). reproduce-quick runs the same experiments at reduced sizes into benchmarks/out.
reproduce: $(DEVSTAMP)
	$(BIN)/python benchmarks/reproduce.py

reproduce-quick: $(DEVSTAMP)
	$(BIN)/python benchmarks/reproduce.py --quick

# Regenerate what is generated: the tables of docs/families/*.md, the notebooks built by
# notebooks/build_notebooks.py, and the Gantt images of docs/img/.
docs: $(DEVSTAMP)
	$(BIN)/python docs/make_docs.py
	$(BIN)/python notebooks/build_notebooks.py
	$(BIN)/python docs/img/make_images.py

# The documentation as a website (MkDocs, material theme; the API reference generated from the docstrings
# by mkdocstrings) in build/site. --strict: a broken link or reference, or a page missing from the nav, fails
# (tests/test_docs_site.py, tests/test_docs_site_render.py). The site loads nothing from other hosts: code is
# highlighted at build time and math is typeset by the MathJax copy the dev extra installs.
docs-site: $(DEVSTAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build *.egg-info
