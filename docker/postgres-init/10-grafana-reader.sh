#!/bin/sh
# Runs once, when the postgres container initialises an empty volume:
# Grafana's read-only login, made by the SQL the xaclab_server Ansible role
# runs too (docker-compose.yml mounts it at /etc/xaclab/grafana-reader.sql).
# The tables' owner is the server's role, POSTGRES_USER.
set -eu
XACLAB_GRAFANA_DB_PASSWORD=$(cat "$XACLAB_GRAFANA_DB_PASSWORD_FILE")
export XACLAB_GRAFANA_DB_PASSWORD
psql -X -q -t -A --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
     -v reader=xaclab_grafana -v owner="$POSTGRES_USER" -v set_password=true \
     -f "${XACLAB_GRAFANA_READER_SQL:-/etc/xaclab/grafana-reader.sql}"
