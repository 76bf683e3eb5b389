# The two commands of a fresh machine (README "Set up"):
#   make train   creates .venv if missing, installs the project with the CPU build of torch,
#                and trains the default game (ppo-420), unless that run is already trained
#   make test    the same install, then the tests
# Both are idempotent: the install reruns only when pyproject.toml changes.
# Other targets: make retrain (train again, replacing the run), make install, make clean-venv,
# make mutants MUTATE=module (mutation testing by hand).
# VENV=path picks another environment (CI uses .ci-venv); ARGS=... passes options on;
# EXTRAS=... picks the optional dependencies installed (default dev,web; CI adds scale, for
# python -m train seeds / sweep on Ray).

VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
EXTRAS ?= dev,web
comma := ,
# one stamp per set of extras, so that asking for more extras installs them
STAMP := $(VENV)/.installed$(if $(subst dev$(comma)web,,$(EXTRAS)),-$(subst $(comma),-,$(EXTRAS)))
RUN := checkpoints/ppo-420-seed0
# torch 2.13.0's CPU wheel: on disk on the project's machines, else PyTorch's CPU index.
TORCH_SOURCE := $(if $(wildcard /opt/wheels),--find-links /opt/wheels,--extra-index-url https://download.pytorch.org/whl/cpu)

.PHONY: install train retrain test mutants clean-venv

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(TORCH_SOURCE) -e ".[$(EXTRAS)]"
	$(PY) -c "import torch; print('installed; torch', torch.__version__)"
	touch $@

train: $(RUN).json
	@echo "trained: $(RUN).pt/.json (make retrain trains it again)"

$(RUN).json: $(STAMP)
	$(PY) -m train ppo-420 --overwrite $(ARGS)

retrain: $(STAMP)
	$(PY) -m train ppo-420 --overwrite $(ARGS)

test: $(STAMP)
	$(PY) -m pytest $(ARGS)

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
