#!/usr/bin/env bash
# Every test xaclab has, in the order a failure is cheapest to find:
# static checks, the C library (plain, sanitizers, valgrind), the benchmark
# programs' output, then the Python suites against a real PostgreSQL that
# this script starts on 127.0.0.1 and stops again.  Each part's Python
# tests run in their own pytest process (each part is its own project with
# its own `tests` package; pytest.ini says which settings each one reads);
# the last line adds every count up.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
v=$top/.venv/bin
work=$top/.test
rm -rf "$work" && mkdir -p "$work"

step() { printf '\n==> %s\n' "$*"; }
failed_steps=()
# Run a step; remember a failure and go on, so one run shows every problem.
run() {
  local name=$1; shift
  step "$name"
  if ! "$@" 2>&1 | tee "$work/$name.log"; then failed_steps+=("$name"); fi
}

pgdir=$(mktemp -d /tmp/xaclab-pg.XXXXXX)
pgport=$("$v/python" -c 'import xaclab_testsupport as t; print(t.free_port())')
cleanup() { scripts/pg-cluster.sh stop "$pgdir" || true; rm -rf "$pgdir"; }
trap cleanup EXIT
set -o pipefail

run lint scripts/lint.sh
run libxac-check make -s -C libxac check
run libxac-asan make -s -C libxac SANITIZER=address check
run libxac-ubsan make -s -C libxac SANITIZER=undefined check
run libxac-valgrind make -s -C libxac valgrind
run bench-smoke env PYTHON="$v/python" libxac/tests/bench-smoke.sh

step "PostgreSQL on 127.0.0.1:$pgport"
scripts/pg-cluster.sh start "$pgdir" "$pgport"
export XACLAB_TEST_PG_URL="postgresql+psycopg://postgres@127.0.0.1:$pgport/postgres"

pytest_in() {
  local dir=$1; shift
  (cd "$dir" && "$v/pytest" -q -p no:cacheprovider "$@")
}
run contracts-tests pytest_in contracts
run testsupport-tests pytest_in . testsupport/tests
run server-tests pytest_in server
run agent-tests pytest_in . agent/tests
run dashboards-tests pytest_in . dashboards/tests
run playbooks-tests pytest_in . playbooks/tests
run e2e-tests pytest_in . tests

"$v/python" scripts/test_summary.py "$work" "${failed_steps[@]}"
