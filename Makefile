# The two commands a reader needs: `make book` and `make test`. The rest is for contributors.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
MATHJAX_VERSION := 3.2.2
NB ?= book/[0-9]*.ipynb

# Data: a local copy of Multi30k is used when it lies beside the checkout (as on CI);
# otherwise the loaders download the official files into ~/.cache/transformer_tutorial.
SHARED_DATA := $(abspath ../shared/data)
ifneq ($(wildcard $(SHARED_DATA)/multi30k),)
export TRANSFORMER_TUTORIAL_DATA ?= $(SHARED_DATA)
endif
export PYTHONHASHSEED := 0
export OMP_NUM_THREADS := 2
# Idle OpenMP threads sleep instead of spinning (much faster when processes share the cores).
export OMP_WAIT_POLICY := PASSIVE

.PHONY: install book test lint format unit nbval site-test export execute sync check-book clean

install: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

# MathJax is served from the book itself so that math renders with no network. It comes from the
# npm registry at build time; no third-party JavaScript is committed.
_vendor/mathjax/tex-chtml.js:
	rm -rf _build/npm _vendor/mathjax && mkdir -p _build/npm _vendor/mathjax
	cd _build/npm && npm install --silent --no-audit --no-fund --no-save mathjax@$(MATHJAX_VERSION) >/dev/null
	cp _build/npm/node_modules/mathjax/es5/tex-chtml.js _vendor/mathjax/
	mkdir -p _vendor/mathjax/output/chtml/fonts _vendor/mathjax/input/tex
	cp -r _build/npm/node_modules/mathjax/es5/output/chtml/fonts/woff-v2 _vendor/mathjax/output/chtml/fonts/
	cp -r _build/npm/node_modules/mathjax/es5/input/tex/extensions _vendor/mathjax/input/tex/
	cp -r _build/npm/node_modules/mathjax/es5/ui _build/npm/node_modules/mathjax/es5/a11y _vendor/mathjax/

book: $(STAMP) _vendor/mathjax/tex-chtml.js
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is in _build/html/index.html"

lint: $(STAMP)
	$(BIN)/ruff check src tests tools benchmarks
	$(BIN)/ruff format --check src tests tools benchmarks

format: $(STAMP)
	$(BIN)/ruff format src tests tools benchmarks
	$(BIN)/ruff check --fix src tests tools benchmarks

unit: $(STAMP)
	$(BIN)/pytest -q tests -m "not browser"

# The stored outputs are written with the usual kernels and two threads (`make execute`) and
# verified under other numerics: PyTorch's generic (non-vectorised) CPU kernels, MKL's
# conditional-numerical-reproducibility path and one thread. That is what a reader's machine
# does to the floats, so a cell that passes here compares only what holds everywhere.
# Override with e.g. `make nbval NBVAL_NUMERICS="OMP_NUM_THREADS=3"`.
STORE_NUMERICS ?= -u ATEN_CPU_CAPABILITY -u MKL_CBWR OMP_NUM_THREADS=2
NBVAL_NUMERICS ?= ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1

nbval: $(STAMP)
	env $(NBVAL_NUMERICS) $(BIN)/pytest -q -p no:cacheprovider --nbval --nbval-current-env \
	  --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout=300 $(NB)

site-test: book
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	$(BIN)/pytest -q tests -m browser

test: lint unit nbval site-test

export: $(STAMP)
	$(BIN)/python tools/export.py

sync: $(STAMP)
	$(BIN)/jupytext --sync $(NB)

execute: $(STAMP)
	env $(STORE_NUMERICS) $(BIN)/python tools/execute.py $(NB)

clean:
	rm -rf _build _vendor
