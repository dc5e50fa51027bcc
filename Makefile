# Two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/noisyfeedback demo

test: $(STAMP)
	$(PY) -m pytest -q
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -m "not slow" tests/test_kernels.py tests/test_simulate.py tests/test_rcnbf.py tests/test_diluted.py tests/test_regression.py

bench: $(STAMP)
	$(PY) -m pip install -q -e ".[bench]" || echo "peer libraries unavailable: benchmarking ours only"
	$(PY) benchmarks/run.py --data-dir $${DATA_DIR:-../shared/data}

clean:
	rm -rf $(VENV) noisyfeedback-report .pytest_cache
