#!/bin/sh
# Runs once, when the postgres container initialises an empty volume: a
# read-only login for Grafana, so a dashboard query can never change data.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
     -v grafana_password="$XACLAB_GRAFANA_DB_PASSWORD" <<'SQL'
CREATE ROLE xaclab_grafana LOGIN PASSWORD :'grafana_password';
GRANT pg_read_all_data TO xaclab_grafana;
SQL
