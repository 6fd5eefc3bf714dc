#!/usr/bin/env bash
# Static checks that need neither root nor apt: every tool comes from .venv
# (scripts/install-python.sh).  ruff (lint and format) and mypy --strict over
# the Python, shellcheck over every shell script, and gcc's static analyser
# over libxac (make -C libxac analyze: gcc and the Berkeley DB and LMDB
# headers that building libxac needs anyway).
set -euo pipefail
cd "$(dirname "$0")/.."
v=.venv/bin
py_dirs=(contracts server agent testsupport dashboards playbooks labhosts tests scripts)
"$v/ruff" check "${py_dirs[@]}"
"$v/ruff" format --check "${py_dirs[@]}"
# Each package carries its own mypy settings (plugins, paths) in pyproject.toml.
(cd contracts && "../$v/mypy")
(cd server && "../$v/mypy")
(cd agent && "../$v/mypy")
(cd testsupport && "../$v/mypy")
# The code outside the four packages (tests, dashboards, scripts) is held to
# the same standard.  xaclab_contracts is installed editable through an import
# hook, which mypy cannot follow; MYPYPATH points it at the source.
MYPYPATH=contracts "$v/mypy" --strict --explicit-package-bases \
  dashboards playbooks/tests labhosts tests scripts/demo.py scripts/test_summary.py \
  scripts/system-packages.py

# Shell scripts: *.sh, and any other file whose first line names a shell,
# among the files git tracks or would track (so a new script counts at once).
files=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files -z --cached --others --exclude-standard)
mapfile -t scripts < <(printf '%s\0' "${files[@]}" |
  xargs -0 awk 'FNR == 1 { if (FILENAME ~ /\.sh$/ || /^#!.*[\/ ](ba|da)?sh([ \t]|$)/) print FILENAME; nextfile }')
[ ${#scripts[@]} -gt 0 ] || { echo "lint: found no shell scripts" >&2; exit 1; }
"$v/shellcheck" "${scripts[@]}"

make -s -C libxac analyze
