# tieringlab — the two commands a student needs are `make reproduce` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.tieringlab-installed
# Quiet, deterministic, CPU-only runs for tests; progress bars off (they are for people at a terminal).
TEST_ENV := TIERINGLAB_PROGRESS=0 MPLBACKEND=Agg JAX_PLATFORMS=cpu PYTHONHASHSEED=0

.PHONY: help venv test lint reproduce data report bench lab lock clean

help:
	@echo "make reproduce  - create .venv, install pinned deps, fetch pinned data, run dvc repro -> results/REPORT.md"
	@echo "make test       - create or reuse .venv, lint (ruff), run unit tests + notebooks under nbval"
	@echo "make lint       - ruff alone (configured in pyproject.toml; pinned in requirements.lock)"
	@echo "make bench      - run the benchmarks in benchmarks/ (ratios against peers, printed and saved)"
	@echo "make lab        - open the notebooks in JupyterLab (kernel python3: this .venv)"

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "tieringlab needs Python >= 3.11; found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

venv: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

test: lint data
	$(TEST_ENV) $(BIN)/python -m pytest -n 2 --dist loadfile tests --nbval-lax notebooks

data: $(STAMP)
	$(BIN)/tieringlab data fetch

# dvc runs each stage's command in a shell: put the venv first on PATH so `tieringlab` resolves there.
reproduce: data
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc repro
	@echo "Claims ledger: results/REPORT.md (and results/report.csv)"

report: $(STAMP)
	$(BIN)/python -m tieringlab.report

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# JupyterLab from the lock; its python3 kernel is this .venv's Python (the kernel every notebook names).
# Jupyter refuses to run as root unless told (CI machines and containers run as root).
lab: data
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/

# Re-pin after changing dependencies in pyproject.toml (needs network access to the package index).
lock:
	rm -rf build/lockenv && $(PYTHON) -m venv build/lockenv
	build/lockenv/bin/pip install --quiet -e .
	( echo "# Exact pins for tieringlab. Both the Makefile (pip) and environment.yml (conda) install from this file."; \
	  echo "# Regenerate with \`make lock\` after changing dependencies in pyproject.toml."; \
	  build/lockenv/bin/pip freeze --exclude-editable | grep -v '^tieringlab' ) > requirements.lock

clean:
	rm -rf $(VENV) build .pytest_cache

# The on-disk caches (tieringlab.paths.cache_dir): generated twins, numba's compiled kernels, JAX's compiled
# code. Derived data only: the next run regenerates what it needs. (A cache put elsewhere with TIERINGLAB_CACHE is left alone.)
.PHONY: clean-cache
clean-cache:
	rm -rf build/cache
