#!/usr/bin/env bash
# A throw-away PostgreSQL cluster on 127.0.0.1 for tests and the demo.
#
#   pg-cluster.sh start DIR PORT   create DIR/data if needed and start it
#   pg-cluster.sh stop DIR         stop the cluster started in DIR
#
# PostgreSQL refuses to run as root, so the cluster belongs to the
# 'postgres' system user that Debian's package creates.  Authentication is
# 'trust' and the server listens on loopback and on a socket in DIR only.
set -euo pipefail
# An unmatched glob stays as written and fails the -d test below.
bin=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n1)
[ -d "$bin" ] || { echo "pg-cluster: PostgreSQL server binaries not found; run scripts/install-deps.sh" >&2; exit 1; }
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

cmd=${1:-}; dir=${2:-}
[ -n "$dir" ] || { echo "usage: pg-cluster.sh start DIR PORT | stop DIR" >&2; exit 2; }
case "$cmd" in
  start)
    port=${3:?usage: pg-cluster.sh start DIR PORT}
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    if [ ! -f "$dir/data/PG_VERSION" ]; then
      as_pg "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    fi
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=300" start >/dev/null
    ;;
  stop)
    [ -f "$dir/data/postmaster.pid" ] || exit 0
    as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *) echo "usage: pg-cluster.sh start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
