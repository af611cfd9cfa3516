# The two commands of the README (`make run`, `make test`) and what CI runs (.ci/run).
VENV ?= .venv
PY := $(VENV)/bin/python
# Nothing but errors before "bothost is running": -qq keeps pip to errors (one -q still
# prints warnings about a machine's own pip configuration, e.g. an extra index folder that
# does not exist, dozens of lines on a first run) and the update notice is off. --no-compile: byte-compiling every module of every dependency (google's clients,
# the test-only SDKs…) was half the install's CPU time; Python compiles the ones it imports on first use.
# --no-build-isolation: the venv's own setuptools (upgraded below) builds bothost, instead of
# a throwaway env installed for each build (60 % of the editable build's CPU). The warning
# filter drops setuptools' notice that an editable install maps folders, as setup.py does on
# purpose.
PIP := PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip \
	--disable-pip-version-check install -qq --no-compile --no-build-isolation
# `make run` needs the runtime only; `make test` adds the test extra (mypy, selenium, …) to
# the same venv, so `make test` after `make run` installs just what is missing.
RUNTIME := $(VENV)/.runtime-installed
STAMP := $(VENV)/.installed
PEERS := .peers

.PHONY: run test peers lint clean

# A current pip resolves and installs in half the CPU time of the one venv bundles, and the
# build needs the setuptools pyproject.toml asks for (venv bundles an older one). So the venv
# is made without pip (ensurepip's bootstrap was a fifth of a first `make run`) and the
# system's pip, when it can target another interpreter (--python, pip >= 22.3), installs the
# current pip into it; without one, venv's own pip is bootstrapped and upgraded as before.
BOOTSTRAP := --disable-pip-version-check install -qq --no-compile --upgrade pip 'setuptools>=77'

$(PY):
	if python3 -m pip --python python3 --version >/dev/null 2>&1; then \
		python3 -m venv --without-pip $(VENV) && \
		python3 -m pip --python $(PY) $(BOOTSTRAP); \
	else \
		python3 -m venv $(VENV) && $(PY) -m pip $(BOOTSTRAP); \
	fi

$(RUNTIME): pyproject.toml setup.py | $(PY)
	$(PIP) -e .
	touch $@

# mcp-server-fetch (a test peer) simplifies pages with readabilipy, which, when Node is on PATH,
# runs `npm install` in its own package folder on first use: from inside the MCP server (15 s,
# printed on the server's protocol stdout) and racing any other fetch server doing the same,
# whose `node` then finds a half-filled node_modules and the tool crashes ("Error executing
# tool fetch"; seen in CI with two test workers). Its Node half is installed here, once.
READABILIPY_JS = $$($(PY) -c 'import os, readabilipy; print(os.path.dirname(readabilipy.__file__))')/javascript

# The test extra includes the runtime, so it is one pip run (resolving and building bothost
# once), not the runtime's run and then the extra's; the runtime's stamp is set with it.
$(STAMP): pyproject.toml setup.py | $(PY)
	$(PIP) -e '.[test]'
	if command -v npm >/dev/null; then \
		cd "$(READABILIPY_JS)" && npm install --no-audit --no-fund --silent; fi
	touch $(RUNTIME) $@

run: $(RUNTIME)
	$(VENV)/bin/bothost run

# Two pytest-xdist workers: most tests wait on subprocesses, sockets and servers more than
# they compute, so two workers on CI's 2 cores halve the suite (TEST_JOBS=0: one process).
# loadgroup keeps tests that share an expensive fixture (the built wheel) on one worker;
# tests/conftest.py hands the work out longest first (the packaging tests, then the groups).
TEST_JOBS ?= 2

# The type check runs beside the suite, not before it: cold (a fresh clone has no cache) it
# takes ~45 s of one core, and the workers wait on subprocesses and sockets often enough to
# leave that much idle. Its output follows the suite's; either failing fails `make test`.
MYPY_LOG := $(VENV)/mypy.log

# The suite starts hundreds of Python processes (`python -m bothost`, MCP servers, fakes);
# with PYTHONDONTWRITEBYTECODE set (some sandboxes and containers set it) none of them writes
# a bytecode cache, so each compiles everything it imports from source, every time (`import
# anthropic`, which the SDK peer tests do, took 5.9-6.3 s of CPU instead of 2.8-3.1 s). The tests run without it, as CI's .ci/run does; the caches are written once, on use.
test: $(STAMP)
	$(VENV)/bin/ruff check bothost plugins mcp_servers tests bench
	$(VENV)/bin/ruff format --check bothost plugins mcp_servers tests bench
	$(VENV)/bin/mypy >$(MYPY_LOG) 2>&1 & types=$$!; \
	env -u PYTHONDONTWRITEBYTECODE \
		$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadgroup $(PYTEST_ARGS); tests=$$?; \
	wait $$types; typed=$$?; cat $(MYPY_LOG); test $$tests = 0 && test $$typed = 0

# Node peers for MCP interop tests: the official conformance suite needs Node >= 22,
# which npm's `node@22` package provides without touching the system Node; the reference
# servers are what tests/interop drives (the PyPI servers come with the test extra).
# The official MCP Python SDK 1.x client gets a venv of its own (the test extra has 2.x).
SDK1 := $(PEERS)/mcp-sdk1
peers:
	mkdir -p $(PEERS)
	cd $(PEERS) && (test -f package.json || echo '{"private": true}' > package.json)
	cd $(PEERS) && npm install --no-audit --no-fund --silent node@22 \
		@modelcontextprotocol/conformance@0.1.16 \
		conformance-next@npm:@modelcontextprotocol/conformance@0.2.0-alpha.12 \
		@modelcontextprotocol/server-everything \
		@modelcontextprotocol/server-filesystem @modelcontextprotocol/server-memory
	test -x $(SDK1)/bin/python || python3 -m venv $(SDK1)
	$(SDK1)/bin/python -m pip --disable-pip-version-check install -qq --no-compile 'mcp>=1.20,<2'

lint: $(STAMP)
	$(VENV)/bin/ruff check bothost plugins mcp_servers tests bench
	$(VENV)/bin/ruff format --check bothost plugins mcp_servers tests bench

clean:
	rm -rf $(VENV) $(PEERS)
