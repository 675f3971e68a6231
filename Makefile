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

.PHONY: help install fonts book i18n-update i18n-stats test lint format unit slow nbval site-test export execute sync check-book clean

help:  ## this list
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## /  make \1\t/' | expand -t 22

install: $(STAMP)  ## the virtual environment .venv with everything the book and its tests need

# PyTorch: requirements.txt pins torch==2.13.0. On Linux, PyPI's torch is the CUDA build (about
# 5 GB with its NVIDIA libraries). With no NVIDIA GPU, take the CPU-only build from PyTorch's own
# wheel index instead:  make install TORCH=cpu   (or, outside make,
# pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu). With a GPU, the
# default is right: PyPI's Linux wheel is built for CUDA.
TORCH ?= default
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	if [ "$(TORCH)" = cpu ]; then \
	  $(BIN)/pip install -q "$$(grep '^torch==' requirements.txt)" --index-url $(TORCH_CPU_INDEX); fi
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	$(MAKE) --no-print-directory fonts
	touch $(STAMP)

# A font with Chinese glyphs for the figures (matplotlib): WenQuanYi Micro Hei from Debian, unpacked
# into the virtual environment (no root needed), where transformer_tutorial.plotting finds it.
# Elsewhere, any installed CJK font will do (macOS and Windows have one).
CJK_FONT := $(VENV)/share/fonts/wqy-microhei.ttc
fonts:  ## a CJK font for the figures, unpacked into .venv (part of install)
	@if [ -e $(CJK_FONT) ]; then exit 0; fi; \
	if command -v apt-get >/dev/null && command -v dpkg >/dev/null; then \
	  rm -rf _build/fonts-deb && mkdir -p _build/fonts-deb $(VENV)/share/fonts && \
	  (cd _build/fonts-deb && apt-get download -q fonts-wqy-microhei >/dev/null 2>&1 || \
	     (apt-get update -qq >/dev/null && apt-get download -q fonts-wqy-microhei >/dev/null)) && \
	  dpkg -x _build/fonts-deb/fonts-wqy-microhei_*.deb _build/fonts-deb/x && \
	  cp _build/fonts-deb/x/usr/share/fonts/truetype/wqy/wqy-microhei.ttc $(CJK_FONT); \
	else echo "note: no apt-get here; figures use any installed CJK font (see 'python -m transformer_tutorial.doctor')"; fi

# MathJax is served from the book itself so that math renders with no network. It comes from the
# npm registry at build time; no third-party JavaScript is committed.
NPM_MISSING := npm (Node.js) is needed to fetch MathJax and the Chinese web font from the npm registry. \
Install Node.js: apt-get install nodejs npm (Debian/Ubuntu), brew install node (macOS), or https://nodejs.org

_vendor/mathjax/tex-chtml.js:
	@command -v npm >/dev/null || { echo "$(NPM_MISSING)"; exit 1; }
	rm -rf _build/npm _vendor/mathjax && mkdir -p _build/npm _vendor/mathjax
	cd _build/npm && npm install --silent --no-audit --no-fund --no-save mathjax@$(MATHJAX_VERSION) >/dev/null
	cp _build/npm/node_modules/mathjax/es5/tex-chtml.js _vendor/mathjax/
	mkdir -p _vendor/mathjax/output/chtml/fonts _vendor/mathjax/input/tex
	cp -r _build/npm/node_modules/mathjax/es5/output/chtml/fonts/woff-v2 _vendor/mathjax/output/chtml/fonts/
	cp -r _build/npm/node_modules/mathjax/es5/input/tex/extensions _vendor/mathjax/input/tex/
	cp -r _build/npm/node_modules/mathjax/es5/ui _build/npm/node_modules/mathjax/es5/a11y _vendor/mathjax/

# Chinese on every machine, including one with no CJK font: the book serves Noto Sans SC
# (SIL Open Font License) itself, split by unicode-range so that a page loads only the pieces
# its characters need. From the npm registry at build time, like MathJax.
NOTO_SC_VERSION := 5.3.0
_vendor/fonts/noto-sans-sc.css: tools/webfont_css.py
	@command -v npm >/dev/null || { echo "$(NPM_MISSING)"; exit 1; }
	rm -rf _build/npm-font _vendor/fonts && mkdir -p _build/npm-font _vendor/fonts/noto-sans-sc
	cd _build/npm-font && npm install --silent --no-audit --no-fund --no-save \
	  @fontsource/noto-sans-sc@$(NOTO_SC_VERSION) >/dev/null
	cp _build/npm-font/node_modules/@fontsource/noto-sans-sc/files/noto-sans-sc-*-400-normal.woff2 \
	  _vendor/fonts/noto-sans-sc/
	cp _build/npm-font/node_modules/@fontsource/noto-sans-sc/LICENSE _vendor/fonts/noto-sans-sc/
	$(BIN)/python tools/webfont_css.py _build/npm-font/node_modules/@fontsource/noto-sans-sc/400.css \
	  > $@

# Two editions from the same notebooks: English in _build/html/, Chinese in _build/html/zh/ (its
# prose from the gettext catalogs in locale/; see tools/i18n.py and CONTRIBUTING.md).
book: $(STAMP) _vendor/mathjax/tex-chtml.js _vendor/fonts/noto-sans-sc.css  ## build both editions: _build/html/ (English) and _build/html/zh/ (Chinese)
	rm -rf _build/html _build/.doctrees
	$(BIN)/jupyter-book build . -W -n --keep-going
	$(BIN)/python tools/i18n.py build
	@# The translator page's models and script (tools/web_translator.py): the shipped models, or
	@# checkpoints given as e.g. WEB_TRANSLATOR="--de-en runs/ship-de-en --zh-en runs/ship-zh-en".
	$(BIN)/python tools/web_translator.py _build/html $(WEB_TRANSLATOR)
	@echo "The book is in _build/html/index.html, its Chinese edition in _build/html/zh/index.html"

# The Chinese catalogs: bring them up to the English text (new messages empty, changed ones
# fuzzy), and count what is left to translate.
i18n-update: $(STAMP)  ## bring the Chinese catalogs up to the English text (new: empty, changed: fuzzy)
	$(BIN)/python tools/i18n.py update

i18n-stats: $(STAMP)  ## translated / untranslated / fuzzy messages, page by page
	$(BIN)/python tools/i18n.py stats

lint: $(STAMP)  ## ruff: lint and format check of src, tests, tools, benchmarks
	$(BIN)/ruff check src tests tools benchmarks
	$(BIN)/ruff format --check src tests tools benchmarks

format: $(STAMP)  ## ruff: format and fix src, tests, tools, benchmarks
	$(BIN)/ruff format src tests tools benchmarks
	$(BIN)/ruff check --fix src tests tools benchmarks

# The quick loop: everything but the real training runs (marked slow) and the browser tests.
unit: $(STAMP)  ## the quick tests (everything but the training runs and the browser)
	$(BIN)/pytest -q tests -m "not browser and not slow"

slow: $(STAMP)  ## the tests that run real (short) trainings
	$(BIN)/pytest -q tests -m "slow and not browser"

# The stored outputs are written with the usual kernels and two threads (`make execute`) and
# verified under other numerics: PyTorch's generic (non-vectorised) CPU kernels, MKL's
# conditional-numerical-reproducibility path and one thread. That is what a reader's machine
# does to the floats, so a cell that passes here compares only what holds everywhere.
# Override with e.g. `make nbval NBVAL_NUMERICS="OMP_NUM_THREADS=3"`. The notebooks run two at a
# time (NBVAL_WORKERS, pytest-xdist; each notebook's cells stay in order in one worker), one
# thread each: on two cores the whole book takes about half the time of one after the other.
STORE_NUMERICS ?= -u ATEN_CPU_CAPABILITY -u MKL_CBWR OMP_NUM_THREADS=2
NBVAL_NUMERICS ?= ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE OMP_NUM_THREADS=1
NBVAL_WORKERS ?= 2

nbval: $(STAMP)  ## re-run every notebook under other numerics and compare the stored outputs
	env $(NBVAL_NUMERICS) $(BIN)/pytest -q -p no:cacheprovider --nbval --nbval-current-env \
	  --nbval-sanitize-with nbval_sanitize.cfg --nbval-cell-timeout=900 \
	  $(if $(filter-out 0 1,$(NBVAL_WORKERS)),-n $(NBVAL_WORKERS) --dist loadscope) $(NB)

site-test: book  ## build the book, then test the pages in headless Chromium
	@command -v chromium >/dev/null || command -v apt-get >/dev/null || { echo "The site test \
	needs Debian's chromium (/usr/bin/chromium); install Chromium or run on Debian/Ubuntu."; exit 1; }
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null)
	$(BIN)/pytest -q tests -m browser

test: lint unit slow nbval site-test  ## everything CI runs: lint, unit, slow, nbval, site-test

export: $(STAMP)  ## write the package's taught modules from the notebooks' #| export cells
	$(BIN)/python tools/export.py

sync: $(STAMP)  ## pair each notebook with its MyST twin (jupytext --sync)
	$(BIN)/jupytext --sync $(NB)

execute: $(STAMP)  ## re-run notebooks and store their outputs (NB=book/NN_name.ipynb for one)
	env $(STORE_NUMERICS) $(BIN)/python tools/execute.py $(NB)

clean:  ## remove _build and _vendor
	rm -rf _build _vendor
