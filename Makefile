# xaclab: the two commands of the README, and a few for people working on one part.
#
#   make demo     install, build, start a server and a local agent, queue a quick
#                 page-touch run and print the URL to open (Ctrl-C stops all)
#   make test     install, build, and run every test (starts its own PostgreSQL)
#   make bench SUITE=page-touch PROFILE=quick   run a suite locally, no server;
#                 result-format JSON lines on stdout
#   make serve    the server alone on the embedded SQLite default,
#                 127.0.0.1:$(PORT) (default 8000)
#   make lint     ruff, mypy --strict, shellcheck (all from .venv) and gcc's
#                 static analyser over libxac: no root, no apt
#   make crash    the crash-consistency suite's nightly profile on every system:
#                 1000 crash points of each kind per configuration (minutes; make
#                 test runs 100 of them); result-format JSON lines on stdout

SUITE   ?= page-touch
PROFILE ?= quick
PORT    ?= 8000
VENV    := .venv/bin

.PHONY: demo test bench crash serve deps venv build lint clean

# Debian packages (root, apt), then the .venv.
deps:
	@scripts/install-deps.sh

# The .venv alone (PyPI, no root).
venv:
	@scripts/install-python.sh

build: deps
	@$(MAKE) -s -C libxac

demo: build
	@scripts/demo.sh

test: build
	@scripts/test.sh

bench: build
	@$(VENV)/xaclab-agent bench --suite "$(SUITE)" --profile "$(PROFILE)"

crash: build
	@$(VENV)/xaclab-agent bench --suite crash-consistency --profile nightly

serve: deps
	@scripts/serve.sh

lint: venv
	@scripts/lint.sh

clean:
	$(MAKE) -C libxac clean
	rm -rf .demo .test
