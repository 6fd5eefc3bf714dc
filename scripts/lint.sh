#!/usr/bin/env bash
# Static checks for the Python parts: ruff and mypy --strict.
set -euo pipefail
cd "$(dirname "$0")/.."
v=.venv/bin
"$v/ruff" check server agent dashboards playbooks tests
"$v/ruff" format --check server agent dashboards playbooks tests
"$v/mypy" --strict server/xaclab_server agent/xaclab_agent
