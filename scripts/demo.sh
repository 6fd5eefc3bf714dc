#!/usr/bin/env bash
# make demo: a server and a local agent on this machine, one quick page-touch run.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python scripts/demo.py "$@"
