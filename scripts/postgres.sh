#!/usr/bin/env bash
# A local PostgreSQL for the room store: Debian's package, one cluster of its own, 127.0.0.1 only, with passwords.
#   bash scripts/postgres.sh start    install if missing (as root, apt-get), start if stopped; prints DATABASE_URL
#   bash scripts/postgres.sh stop
#   bash scripts/postgres.sh url      the DATABASE_URL (starts nothing; the cluster must have been made)
# Idempotent; two test workers starting it at once: one makes it, the other waits.
#
# Safe on a shared host: everything lives in one private folder ($STATE, created 0700 by this user, or 0711 by root
# so that the `postgres` user, which owns the cluster when run as root, can reach its own 0700 subfolder); a folder
# that is a link, or belongs to someone else, or is open to others, is refused. Every connection needs a password
# (scram-sha-256, no `trust` line anywhere): the superuser's is random and stays in $STATE (0600, used here only to
# make the role and database), and the app gets role `lab` (LOGIN only: not superuser, cannot create roles or
# databases), owner of database attention_lab, with its own random password, carried by the printed URL. For
# production use your managed PostgreSQL's URL in DATABASE_URL instead.
#   ATTENTION_LAB_PGPORT (default 55433), ATTENTION_LAB_PGDATA (the private folder; default
#   ${TMPDIR:-/tmp}/attention-lab-pg-<uid>)
set -euo pipefail
PORT=${ATTENTION_LAB_PGPORT:-55433}
STATE=${ATTENTION_LAB_PGDATA:-${TMPDIR:-/tmp}/attention-lab-pg-$(id -u)}
STATE=${STATE%/}
CLUSTER=$STATE/cluster
ROOT_USER=$([ "$(id -u)" = 0 ] && echo 1 || echo 0)

bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

install_if_missing() {
  [ -n "$(bindir)" ] && return
  if [ "$ROOT_USER" = 1 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  [ -n "$(bindir)" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }
}

as_owner() {
  if [ "$ROOT_USER" = 1 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

private_folder() {
  # $STATE: made here with no access for others, or refused when someone else could have prepared it
  local mode=700
  [ "$ROOT_USER" = 1 ] && mode=711
  if [ ! -e "$STATE" ] && [ ! -L "$STATE" ]; then
    mkdir -m "$mode" "$STATE" 2>/dev/null || true  # a second worker may make it first: checked below either way
  fi
  if [ -L "$STATE" ] || [ ! -d "$STATE" ] || [ "$(stat -c %u "$STATE")" != "$(id -u)" ] \
    || [ "$(stat -c %a "$STATE")" != "$mode" ]; then
    echo "refusing $STATE: it must be a folder of this user with mode $mode (set ATTENTION_LAB_PGDATA elsewhere)" >&2
    exit 1
  fi
  if [ "$ROOT_USER" = 1 ] && ! runuser -u postgres -- test -x "$STATE"; then
    echo "the postgres user cannot reach $STATE (a parent folder is closed to it): set ATTENTION_LAB_PGDATA" >&2
    exit 1
  fi
}

secret() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

url() {
  [ -f "$STATE/lab.password" ] || { echo "no cluster in $STATE yet: bash scripts/postgres.sh start" >&2; exit 1; }
  echo "postgresql://lab:$(cat "$STATE/lab.password")@127.0.0.1:$PORT/attention_lab"
}

start() {
  install_if_missing
  private_folder
  exec 9> "$STATE/lock"
  flock 9
  local bin
  bin=$(bindir)
  (umask 077; [ -f "$STATE/postgres.password" ] || secret > "$STATE/postgres.password")
  (umask 077; [ -f "$STATE/lab.password" ] || secret > "$STATE/lab.password")
  if [ ! -f "$CLUSTER/PG_VERSION" ]; then
    rm -rf "$CLUSTER"
    mkdir -m 700 "$CLUSTER"
    local pwfile=$STATE/initdb.password  # a copy the cluster's owner can read (as root: `postgres`), gone after
    (umask 077; cp "$STATE/postgres.password" "$pwfile")
    [ "$ROOT_USER" = 1 ] && chown postgres "$CLUSTER" "$pwfile"
    as_owner "$bin/initdb" -D "$CLUSTER" -U postgres --auth=scram-sha-256 --pwfile="$pwfile" -E UTF8 --no-sync \
      >/dev/null
    rm -f "$pwfile"
  fi
  if ! as_owner "$bin/pg_ctl" -D "$CLUSTER" status >/dev/null 2>&1; then
    # The server keeps none of its caller's open files: started inside `flock FILE cmd`, it held that lock for as
    # long as it ran (and this script's own lock, fd 9); a pipe it kept would keep its reader waiting for the end.
    (
      for fd in /proc/$BASHPID/fd/*; do
        fd=${fd##*/}
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
      done
      as_owner "$bin/pg_ctl" -D "$CLUSTER" -l "$CLUSTER/server.log" -w -t 60 \
        -o "-p $PORT -k $CLUSTER -c listen_addresses=127.0.0.1" start >/dev/null
    )
  fi
  local psql=("$bin/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -qtA -v ON_ERROR_STOP=1)
  export PGPASSWORD
  PGPASSWORD=$(cat "$STATE/postgres.password")
  local lab
  lab=$(cat "$STATE/lab.password")
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'lab'")" ]; then
    "${psql[@]}" -c "CREATE ROLE lab LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS" >/dev/null
  fi
  # on stdin, not in a command line that `ps` shows to every user of the host; hex: nothing to quote
  echo "ALTER ROLE lab PASSWORD '$lab'" | "${psql[@]}" >/dev/null
  if [ -z "$("${psql[@]}" -c "SELECT 1 FROM pg_database WHERE datname = 'attention_lab'")" ]; then
    "${psql[@]}" -c "CREATE DATABASE attention_lab OWNER lab" >/dev/null
  fi
  unset PGPASSWORD
  exec 9>&-
  url
}

stop() {
  local bin
  bin=$(bindir)
  [ -n "$bin" ] && [ -f "$CLUSTER/PG_VERSION" ] || return 0
  as_owner "$bin/pg_ctl" -D "$CLUSTER" status >/dev/null 2>&1 || return 0
  as_owner "$bin/pg_ctl" -D "$CLUSTER" -m fast -w stop >/dev/null
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  url) url ;;
  *) echo "usage: bash scripts/postgres.sh [start|stop|url]" >&2; exit 2 ;;
esac
