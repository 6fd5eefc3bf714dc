#!/bin/sh
# Makes the secrets docker-compose.yml mounts: one random value per file in
# ./secrets/ at the repository root (git ignores the directory).  Existing
# files are kept: PostgreSQL takes its passwords only when it initialises
# its volume, so a changed file would no longer match them.
#
# The directory is for its owner only (0700); the files are 0644 because the
# containers read them as their own users (postgres, uid 10001, grafana)
# through bind mounts.
set -eu
cd "$(dirname "$0")/.."
umask 077
mkdir -p secrets
chmod 0700 secrets
for name in db_password grafana_db_password grafana_admin_password registration_token admin_password; do
  file=secrets/$name.txt
  if [ -e "$file" ]; then
    echo "kept $file"
    continue
  fi
  # 32 random bytes as 64 hex digits: no character needs quoting anywhere.
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$file.tmp"
  echo >>"$file.tmp"
  chmod 0644 "$file.tmp"
  mv "$file.tmp" "$file"
  echo "made $file"
done
