#!/usr/bin/env bash
# The server alone, on the embedded SQLite default, at 127.0.0.1:$PORT.
# A registration token is generated on first use and kept in .demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .demo
umask 077
[ -s .demo/registration-token ] || .venv/bin/python -c 'import secrets; print(secrets.token_urlsafe(32))' > .demo/registration-token
export XACLAB_DATA_DIR=${XACLAB_DATA_DIR:-$PWD/.demo}
XACLAB_REGISTRATION_TOKEN=$(cat .demo/registration-token)
export XACLAB_REGISTRATION_TOKEN
exec .venv/bin/xaclab-server --host 127.0.0.1 --port "${PORT:-8000}"
