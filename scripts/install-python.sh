#!/usr/bin/env bash
# Create .venv with the contracts, the server, the agent, the tests' process
# helpers (testsupport/) and the development tools.
# Re-runs only when a pyproject.toml or requirements file changed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
stamp="$venv/.xaclab-stamp"
# Debian's python3 is the one the README promises; fall back to whatever
# python3 is first on PATH on machines that have another.
py=/usr/bin/python3
[ -x "$py" ] || py=python3

want=$(cat "$here/contracts/pyproject.toml" "$here/server/pyproject.toml" "$here/agent/pyproject.toml" \
           "$here/testsupport/pyproject.toml" \
           "$here/requirements-dev.txt" 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
"$venv/bin/pip" install -q -e "$here/contracts" -e "$here/server" -e "$here/agent" \
  -e "$here/testsupport" \
  -r "$here/requirements-dev.txt"
echo "$want" > "$stamp"
