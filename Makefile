# Two commands on a fresh machine: `make train` (the main job) and `make test`
# (what CI runs). Each creates .venv and installs hierattn into it first,
# once: the install is redone only when setup.py or pyproject.toml changes.
#
#   make train                  # default HAN on IMDB, evaluated on its test split
#   make train IMDB=/path/to/aclImdb_v1.tar.gz
#   make test                   # ruff check, ruff format --check, then the tests (two processes)
#   make test-fast              # the same checks, then only the tests that import no TensorFlow (about a minute)
#   make quickstart             # a 5,000-review run, one review explained (about two minutes)

PYTHON ?= python3
VENV ?= .venv
# The IMDB archive used when it exists. The default is the copy beside this
# project on its CI and development machines; elsewhere hierattn looks in its
# cache ($HIERATTN_DATA, else data/) and downloads the official archive.
IMDB ?= ../shared/datasets/aclImdb_v1.tar.gz
IMDB_SOURCE = $(if $(wildcard $(IMDB)),$(IMDB),)
RUN = $(VENV)/bin/python cli.py
INSTALLED = $(VENV)/.installed

.PHONY: install train test test-fast quickstart

install: $(INSTALLED)

$(INSTALLED): setup.py pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet -e ".[test]"
	touch $(INSTALLED)

train: $(INSTALLED)
	$(RUN) train imdb $(IMDB_SOURCE)

test: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

# The fast tier (`--fast`, tests/conftest.py): the test files of FAST less their tests that need Keras; an import of
# TensorFlow or Keras there fails the test that makes it. `make test` runs these tests too.
test-fast: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/python -m pytest -q -n 2 --dist loadfile --fast

# The quick start's settings were chosen on IMDB training reviews the run does not read
# (benchmarks/quickstart_settings.py, BENCHMARKS.md "The quick start"); the run and its page go to
# a new folder, runs/quickstart-<time>/, so an earlier one is never overwritten.
QUICKSTART_SETTINGS = --limit 5000 --epochs 4 --max-length 15x30
QUICKSTART_EXAMPLE = "The plot was thin and the ending made no sense. The acting, though, was superb, and I loved it."
ifndef QUICKSTART_RUN
QUICKSTART_RUN := runs/quickstart-$(shell date +%Y%m%d-%H%M%S)
endif

quickstart: $(INSTALLED)
	$(RUN) train imdb $(IMDB_SOURCE) $(QUICKSTART_SETTINGS) --output $(QUICKSTART_RUN)
	$(RUN) explain $(QUICKSTART_EXAMPLE) --run $(QUICKSTART_RUN)
	$(RUN) explain $(QUICKSTART_EXAMPLE) --run $(QUICKSTART_RUN) --format html --output $(QUICKSTART_RUN)/quickstart.html
