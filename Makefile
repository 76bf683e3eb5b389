# The two commands of a fresh machine (README "Set up"):
#   make train   creates .venv if missing, installs the project with the CPU build of torch,
#                and trains the default game (ppo-420), unless that run is already trained
#   make test    the same install, then the whole test suite (what CI runs), in parallel
# Both are idempotent: the install reruns only when pyproject.toml changes.
# make check: the fast tier of the tests (about a minute on 2 cores): every test but those
# marked slow, browser or ray (pyproject.toml [tool.pytest.ini_options] lists the markers);
# the rules, the engines, the envs' conformance and the layer test are all in it.
# Both test targets run pytest-xdist with JOBS processes (default auto: one per core; JOBS=0
# runs in this one process) and fail a test that hangs past its timeout (120 s unless marked).
# Other targets: make retrain (train again, replacing the run), make install, make clean-venv,
# make lint (ruff check and format check), make docs (the documentation site into site/, mkdocs
# build --strict; adds the docs extra),
# make mutants MUTATE=module (mutation testing by hand).
# VENV=path picks another environment (CI uses .ci-venv); ARGS=... passes options on;
# EXTRAS=... picks the optional dependencies installed (default dev,web; CI adds scale, for
# python -m train seeds / sweep on Ray, and docs).

VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
EXTRAS ?= dev,web
comma := ,
# one stamp per set of extras, so that asking for more extras installs them
stamp = $(VENV)/.installed$(if $(subst dev$(comma)web,,$(1)),-$(subst $(comma),-,$(1)))
STAMP := $(call stamp,$(EXTRAS))
# make docs needs the docs extra: EXTRAS, plus docs unless it is there already
DOCS_EXTRAS := $(if $(filter docs,$(subst $(comma), ,$(EXTRAS))),$(EXTRAS),$(EXTRAS)$(comma)docs)
DOCS_STAMP := $(call stamp,$(DOCS_EXTRAS))
RUN := checkpoints/ppo-420-seed0
# torch 2.13.0's CPU wheel: on disk on the project's machines, else PyTorch's CPU index.
TORCH_SOURCE := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu)

.PHONY: install train retrain test check lint docs mutants clean-venv

install: $(STAMP)

# $(call install,EXTRAS): create the venv if missing, install the project with those extras
define install
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(TORCH_SOURCE) -e ".[$(1)]"
	$(PY) -c "import torch; print('installed; torch', torch.__version__)"
	touch $@
endef

$(STAMP): pyproject.toml
	$(call install,$(EXTRAS))

ifneq ($(DOCS_STAMP),$(STAMP))
$(DOCS_STAMP): pyproject.toml
	$(call install,$(DOCS_EXTRAS))
endif

train: $(RUN).json
	@echo "trained: $(RUN).pt/.json (make retrain trains it again)"

$(RUN).json: $(STAMP)
	$(PY) -m train ppo-420 --overwrite $(ARGS)

retrain: $(STAMP)
	$(PY) -m train ppo-420 --overwrite $(ARGS)

# pytest-xdist: JOBS worker processes; worksteal hands a worker's queued tests to one that is idle
JOBS ?= auto
XDIST = -n $(JOBS) --dist worksteal

test: $(STAMP)
	$(PY) -m pytest $(XDIST) $(ARGS)

check: $(STAMP)
	$(PY) -m pytest $(XDIST) -m "not slow and not browser and not ray" $(ARGS)

# ruff: the linter and the format check (configured in pyproject.toml); `ruff format .` fixes the format
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The documentation site (mkdocs.yml, docs/) into site/; --strict turns every warning (a broken
# link, a page missing from the nav, a docstring griffe cannot read) into a failure.
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# Mutation testing, by hand (not in CI): make mutants MUTATE=games.dice420.game (or games.dice421.game,
# games.dice420.solver, games.dice421.solver, games.dice420.vec, games.dice421.vec); configured in setup.cfg.
MUTATE ?= games.dice420.game
mutants: $(STAMP)
	$(PY) -m pip install --quiet "mutmut>=3.8"
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 1 "$(MUTATE)*"
	$(VENV)/bin/mutmut results

clean-venv:
	rm -rf $(VENV)
