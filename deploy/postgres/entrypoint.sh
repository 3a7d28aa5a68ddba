#!/usr/bin/env bash
# First start: a cluster in $PGDATA with a role `lab` and a database `attention_lab` (connections from 127.0.0.1
# and the container's socket only, trusted). Then PostgreSQL in the foreground. Runs as the postgres user.
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA=${PGDATA:-/var/lib/postgresql/data}
PGPORT=${PGPORT:-5432}
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  "$BIN/initdb" -D "$PGDATA" -U postgres -A trust -E UTF8 > /dev/null
  printf 'CREATE ROLE lab LOGIN;\nCREATE DATABASE attention_lab OWNER lab;\n' \
    | "$BIN/postgres" --single -D "$PGDATA" postgres > /dev/null
fi
exec "$BIN/postgres" -D "$PGDATA" -p "$PGPORT" -k /tmp -c listen_addresses=127.0.0.1
