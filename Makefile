# Two commands: `make run` starts the app on the demo data (this machine only: localhost),
# `make test` runs lint, the import contract (ARCHITECTURE.md) and the tests. `make serve`
# serves the app to the network, with sign-in required (README, "Serving to a team").
# Both create the virtual environment on first use; a stamp file makes later runs install
# nothing unless pyproject.toml changed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8501
# `make serve`: the interface to listen on (all of them) and whether sign-in is required.
SERVE_ADDRESS ?= 0.0.0.0
SIGN_IN ?= 1

.PHONY: test-scale test-pythons run serve test lint e2e benchmarks venv clean docs

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,docs]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/calibration-atlas app --port $(PORT) --address localhost

serve: $(STAMP)
	$(BIN)/calibration-atlas app --port $(PORT) --address $(SERVE_ADDRESS) \
		$(if $(filter 1 true yes on,$(SIGN_IN)),--sign-in)

# The documentation site (docs/): HTML in docs/_build/html. `make test` builds it too, with
# every warning an error (tests/test_docs.py).
docs: $(STAMP)
	$(BIN)/sphinx-build -b html -n -W --keep-going docs docs/_build/html

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

e2e: $(STAMP)
	$(BIN)/python -m pytest tests/e2e

test-scale: $(STAMP)
	$(BIN)/python -m pytest -m scale -s tests/e2e/test_browser_scale.py

# The built wheel on the oldest and newest supported Python (python3.10 and python3.13, on
# the PATH or under pyenv; each is skipped with a reason when missing), about 10 minutes.
test-pythons: $(STAMP)
	$(BIN)/python -m pytest -m pythons tests/e2e/test_installed_wheel.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis docs/_build docs/api/generated
