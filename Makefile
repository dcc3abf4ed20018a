# The two commands a newcomer needs: `make run` and `make test`.
# Both bootstrap themselves: a pinned uv in .tools/, then the workspace in .venv/.
SHELL := /bin/bash
PYTHON ?= python3
UV_VERSION := 0.13.8
TOOLS := .tools
UV := $(TOOLS)/bin/uv
VENV := .venv
PY := $(VENV)/bin/python
export UV_PYTHON := $(shell command -v $(PYTHON))
export UV_PYTHON_DOWNLOADS := never
export UV_PROJECT_ENVIRONMENT := $(CURDIR)/$(VENV)

.PHONY: run test test-unit test-component test-integration bench setup env clean chromium telemetry-client libdeflate

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)

# The environment is rebuilt whenever a pyproject or the lock changes.
$(VENV)/.synced: $(UV) pyproject.toml $(wildcard libs/*/pyproject.toml services/*/pyproject.toml uv.lock)
	$(UV) sync --all-packages --quiet
	touch $@

# The scan's optional C walk (services/indexer/build_fastwalk.py): built where there is a C
# compiler and zlib's header, else the scan walks in Python with the same results (docs/scan.md).
# It inflates classes with libdeflate where its header is (Debian's libdeflate-dev: installed
# with apt when missing and running as root), else with zlib alone. The jar reader's optional
# C directory walk (libs/jar/build_cdwalk.py) and the search index's C loops
# (libs/search/build_fastsearch.py) the same way: without a compiler they run in Python.
env: $(VENV)/.synced libdeflate
	@$(PY) services/indexer/build_fastwalk.py
	@$(PY) libs/jar/build_cdwalk.py
	@$(PY) libs/search/build_fastsearch.py

libdeflate:
	@[ -e /usr/include/libdeflate.h ] || [ "$$(id -u)" != 0 ] || { \
	  echo "installing Debian's libdeflate-dev for the scan's C walk"; \
	  { apt-get update -qq && env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libdeflate-dev; } \
	  || echo "could not install libdeflate-dev: the scan's C walk inflates with zlib"; }

# Whole system locally: embedded NATS + PostgreSQL (or NATS_URL / DATABASE_URL),
# migrations + streams, the four services as supervised processes. DEMO=1 adds sample mods.
run: env
	$(PY) -m indexium_devstack run $(if $(DEMO),--demo,)

# The telemetry client mod (Java, the JDK alone): services/telemetry/client-java/build/indexium-telemetry.jar.
telemetry-client:
	$(MAKE) -C services/telemetry/client-java

# Without a JDK the jar is not built; its tests then skip, saying that javac is missing.
JAVAC := $(shell command -v javac 2>/dev/null)

# Unit, component and integration tiers. Starts its own NATS + PostgreSQL unless
# NATS_URL / DATABASE_URL are given. Exit 5 (no tests collected) fails.
test: env chromium $(if $(JAVAC),telemetry-client)
	$(PY) -m pytest $(PYTEST_ARGS)

# The browser tests (tests/integration/site) drive Debian's chromium through Playwright, never
# a downloaded browser: installed with apt when missing.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@command -v chromium >/dev/null || { echo "installing Debian's chromium for the browser tests"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

test-unit: env
	$(PY) -m pytest -m unit $(PYTEST_ARGS)

test-component: env
	$(PY) -m pytest -m component $(PYTEST_ARGS)

test-integration: env chromium
	$(PY) -m pytest -m integration $(PYTEST_ARGS)

# Benchmarks print ratios against a baseline measured in the same run (see bench/README.md).
# One at a time: make bench BENCH=api (indexer, scan, api, telemetry); all by default.
# BENCH=relevance needs its catalogue built first (bench/relevance/catalogue.py), so it is not a default.
# BENCH=soak (the whole stack under load, kill -9 every few minutes; 30 min unless BENCH_ARGS="--minutes N")
# and BENCH=scale (1,000,000 mods) take tens of minutes: not defaults either.
BENCH ?= indexer scan telemetry api
bench: env
	@for b in $(BENCH); do echo "== bench/$$b"; $(PY) bench/$$b/run.py $(BENCH_ARGS) || exit 1; done

clean:
	rm -rf $(VENV) $(TOOLS) .run services/indexer/src/indexium_indexer/scan/_fastwalk*.so \
	  libs/jar/src/indexium_jar/zip/_cdwalk*.so libs/search/src/indexium_search/_fastsearch*.so
