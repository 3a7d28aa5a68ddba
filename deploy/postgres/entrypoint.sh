#!/usr/bin/env bash
# First start: a cluster in $PGDATA with role `lab` (LOGIN only: no superuser, cannot create roles or databases),
# owner of database `attention_lab`. No `trust` line anywhere: over the network only `lab` may connect, to its
# database, with its password (scram-sha-256); the superuser `postgres` has no password and is reached only
# through the container's own socket by the OS user postgres (peer: `docker compose exec db psql -h /tmp`). Then
# PostgreSQL in the foreground. Runs as the postgres user.
#   LAB_DB_PASSWORD, or LAB_DB_PASSWORD_FILE (a mounted secret): lab's password, needed on the first start only;
#   at least 16 letters, digits, `_` and `-` (it goes into the replicas' DATABASE_URL), e.g. `openssl rand -hex 24`.
set -euo pipefail
BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGDATA=${PGDATA:-/var/lib/postgresql/data}
PGPORT=${PGPORT:-5432}
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  if [ -n "${LAB_DB_PASSWORD_FILE:-}" ]; then
    password=$(cat "$LAB_DB_PASSWORD_FILE")
  else
    password=${LAB_DB_PASSWORD:-}
  fi
  [ -n "$password" ] || { echo "set LAB_DB_PASSWORD (or LAB_DB_PASSWORD_FILE) for the first start" >&2; exit 1; }
  case "$password" in
    *[!A-Za-z0-9_-]*) echo "LAB_DB_PASSWORD: letters, digits, _ and - only (it goes into a URL)" >&2; exit 1 ;;
  esac
  # the database listens on compose's network: a short password is one a neighbour there could guess
  [ ${#password} -ge 16 ] || { echo "LAB_DB_PASSWORD: at least 16 characters (openssl rand -hex 24 gives 48)" >&2; exit 1; }
  "$BIN/initdb" -D "$PGDATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 -E UTF8 > /dev/null
  printf '%s\n' \
    "local   all             postgres                                peer" \
    "host    attention_lab   lab             0.0.0.0/0               scram-sha-256" \
    "host    attention_lab   lab             ::/0                    scram-sha-256" > "$PGDATA/pg_hba.conf"
  # the password on stdin (never in a command line), stored as a SCRAM verifier
  printf "CREATE ROLE lab LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '%s';\n%s\n" \
    "$password" "CREATE DATABASE attention_lab OWNER lab;" \
    | "$BIN/postgres" --single -D "$PGDATA" -c password_encryption=scram-sha-256 postgres > /dev/null
fi
# Every address of the container: it sits on compose's private `rooms` network (compose.yaml), not the host's.
exec "$BIN/postgres" -D "$PGDATA" -p "$PGPORT" -k "${PGSOCKET:-/tmp}" -c listen_addresses="${PGLISTEN:-*}" \
  -c password_encryption=scram-sha-256
