#!/usr/bin/env bash
# Every test xaclab has, in the order a failure is cheapest to find:
# static checks, the C library (plain, sanitizers, valgrind), the benchmark
# programs' output, then the Python suites against a real PostgreSQL that
# this script starts on 127.0.0.1 and stops again.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
v=$top/.venv/bin

step() { printf '\n==> %s\n' "$*"; }

work=$top/.test
rm -rf "$work" && mkdir -p "$work"
pgdir=$(mktemp -d /tmp/xaclab-pg.XXXXXX)
pgport=$("$v/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cleanup() { scripts/pg-cluster.sh stop "$pgdir" || true; rm -rf "$pgdir"; }
trap cleanup EXIT

step "static checks (ruff, mypy --strict)"
scripts/lint.sh

step "libxac unit tests"
make -s -C libxac check
step "libxac unit tests under AddressSanitizer"
make -s -C libxac SANITIZER=address check
step "libxac unit tests under UndefinedBehaviorSanitizer"
make -s -C libxac SANITIZER=undefined check
step "libxac unit tests under valgrind"
make -s -C libxac valgrind

step "benchmark programs: quick runs validated against the result schema"
PYTHON=$v/python libxac/tests/bench-smoke.sh

step "PostgreSQL on 127.0.0.1:$pgport"
scripts/pg-cluster.sh start "$pgdir" "$pgport"
export XACLAB_TEST_PG_URL="postgresql+psycopg://postgres@127.0.0.1:$pgport/postgres"

step "Python tests: server, agent, dashboards, playbooks, compose, end to end"
"$v/pytest" -q -p no:cacheprovider --import-mode=importlib \
  server/tests agent/tests dashboards/tests playbooks/tests tests
