# Two commands from a fresh clone: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench docs install clean

# The pass without the JIT runs the kernels as plain Python (every kernel module, by its tests):
# kernels/linear.py, perceptron.py, bandit.py: test_kernels, test_simulate, test_rcnbf, test_rcine;
# channels.py: test_feedback; diluted.py: test_diluted; regression.py: test_regression;
# teachers.py (and the solver's compiled loops): test_teachers; oracle.py: test_oracle_bandits;
# vwtext.py: test_vw_stream;
# rls.py: test_wrls; validation.py: test_hostile. Test by test across the workers (their module fixtures are
# cheap data sets): one file, test_oracle_bandits, held a worker for half the pass.
NOJIT_TESTS := tests/core/test_kernels.py tests/core/test_simulate.py tests/learners/test_rcnbf.py tests/learners/test_rcine.py \
	tests/core/test_feedback.py tests/learners/test_diluted.py tests/learners/test_regression.py tests/learners/test_teachers.py \
	tests/learners/test_oracle_bandits.py tests/learners/test_wrls.py tests/core/test_hostile.py tests/core/test_vw_stream.py \
	tests/learners/test_catalogue_greedy_first.py tests/learners/test_adaptive_gamma.py

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q uv || echo "uv unavailable: installing with pip"

# installs with uv (the same versions as pip, several times faster), else pip
INSTALL = install() { $(PY) -m uv pip install -q --python $(PY) "$$@" || $(PY) -m pip install -q "$$@"; }; install

# everything `make test` and `make demo` need: the core, the lab, the service (and its PostgreSQL log),
# the docs builder and the test tools (pyproject.toml's extras)
$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(INSTALL) -e ".[test,lab,service,postgres,docs]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/noisyfeedback demo

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): without it every
# pytest worker rewrites and compiles each test module again (collection 23 s instead of 9 s), and every
# process a test starts compiles the package's modules again.
test: export PYTHONDONTWRITEBYTECODE :=
test: $(STAMP)
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest -q -n auto --dist loadfile --durations=25
	NUMBA_DISABLE_JIT=1 $(PY) -m pytest -q -n auto --dist load -m "not slow" $(NOJIT_TESTS)

# the documentation site (guides, tutorials, API reference from the docstrings) into site/;
# tests/test_docs.py runs the same strict build as part of `make test`
docs: $(STAMP)
	$(VENV)/bin/mkdocs build --strict

bench: $(STAMP)
	$(INSTALL) -e ".[bench]" || echo "peer libraries unavailable: benchmarking ours only"
	$(PY) benchmarks/run.py --data-dir $${DATA_DIR:-../shared/data}
	$(PY) benchmarks/vw_logs.py --sizes 100000 1000000 $${VW_LOGS_10M:+10000000} --out benchmarks/results/vw_logs.md
	$(PY) benchmarks/export_log.py --events 1000000

clean:
	rm -rf $(VENV) noisyfeedback-report .pytest_cache site
