#!/usr/bin/env bash
# A local PostgreSQL for the room store: Debian's package, one cluster of its own, 127.0.0.1 only.
#   bash scripts/postgres.sh start    install if missing (as root, apt-get), start if stopped; prints DATABASE_URL
#   bash scripts/postgres.sh stop
#   bash scripts/postgres.sh url      the DATABASE_URL (starts nothing)
# Idempotent. PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` user (created by
# the package). Local connections are trusted (127.0.0.1 and the socket in the data folder only): a test and
# laptop setup, not a production one (there: your managed PostgreSQL's URL in DATABASE_URL).
#   ATTENTION_LAB_PGPORT (default 55432), ATTENTION_LAB_PGDATA (default /tmp/attention-lab-pg)
set -euo pipefail
PORT=${ATTENTION_LAB_PGPORT:-55432}
DATA=${ATTENTION_LAB_PGDATA:-/tmp/attention-lab-pg}
URL="postgresql://lab@127.0.0.1:$PORT/attention_lab"

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install_if_missing() {
  [ -n "$(bindir)" ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  [ -n "$(bindir)" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
}

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
  exec 9> "${DATA%/}.lock"  # two test workers starting it at once: one initialises, the other waits
  flock 9
  install_if_missing
  local bin
  bin=$(bindir)
  mkdir -p "$DATA"
  [ "$(id -u)" = 0 ] && chown postgres "$DATA" && chmod 700 "$DATA"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --no-sync >/dev/null
  fi
  if ! as_owner "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 \
      -o "-p $PORT -k $DATA -c listen_addresses=127.0.0.1" start >/dev/null 9>&-  # the server must not hold the lock
  fi
  local psql=("$bin/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qtA -v ON_ERROR_STOP=1)
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'lab'")" ]; then
    "${psql[@]}" -c "CREATE ROLE lab LOGIN" >/dev/null
  fi
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'attention_lab'")" ]; then
    "${psql[@]}" -c "CREATE DATABASE attention_lab OWNER lab" >/dev/null
  fi
  exec 9>&-
  echo "$URL"
}

stop() {
  local bin
  bin=$(bindir)
  [ -n "$bin" ] && [ -f "$DATA/PG_VERSION" ] || return 0
  as_owner "$bin/pg_ctl" -D "$DATA" status >/dev/null 2>&1 || return 0
  as_owner "$bin/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  url) echo "$URL" ;;
  *) echo "usage: bash scripts/postgres.sh [start|stop|url]" >&2; exit 2 ;;
esac
