# Two commands on a fresh machine: `make train` (the main job) and `make test`
# (what CI runs). Each creates .venv and installs hierattn into it first,
# once: the install is redone only when setup.py or pyproject.toml changes.
#
#   make train                  # default HAN on IMDB, evaluated on its test split
#   make train IMDB=/path/to/aclImdb_v1.tar.gz
#   make test                   # ruff check, ruff format --check, then the tests
#   make quickstart             # a 1,000-review run, explained, in about a minute

PYTHON ?= python3
VENV ?= .venv
# The IMDB archive used when it exists. The default is the copy beside this
# project on its CI and development machines; elsewhere hierattn looks in its
# cache ($HIERATTN_DATA, else data/) and downloads the official archive.
IMDB ?= ../shared/datasets/aclImdb_v1.tar.gz
IMDB_SOURCE = $(if $(wildcard $(IMDB)),$(IMDB),)
RUN = $(VENV)/bin/python cli.py
INSTALLED = $(VENV)/.installed

.PHONY: install train test quickstart

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
	$(VENV)/bin/python -m pytest -q

quickstart: $(INSTALLED)
	$(RUN) train imdb $(IMDB_SOURCE) --limit 1000 --epochs 1
	$(RUN) explain "The plot was thin and the ending made no sense. The acting, though, was superb."
	$(RUN) explain "The plot was thin and the ending made no sense. The acting, though, was superb." \
		--format html --output quickstart-$$(date +%Y%m%d-%H%M%S).html
