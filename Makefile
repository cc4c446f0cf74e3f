# Two commands: `make run` starts the app on the demo data, `make test` runs lint, the import
# contract (ARCHITECTURE.md) and the tests.
# Both create the virtual environment on first use; a stamp file makes later runs install
# nothing unless pyproject.toml changed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8501

.PHONY: test-scale run test lint e2e benchmarks venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/streamlit run dashboard/app.py --server.port $(PORT)

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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
