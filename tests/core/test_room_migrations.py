"""The room schema's version and numbered migrations, on SQLite and PostgreSQL alike: a running class's database,
made by an earlier version of the app (no schema_version table), upgrades in place with its rooms, learners,
answers and sentences; each migration is applied once, in order, in one transaction; two processes starting at
once do not both migrate."""

from __future__ import annotations

import sqlite3
import threading
import time

import psycopg
import pytest

from core import room as rules
from core.lessons import Answer
from core.room.service import Rooms
from core.room.sql import MIGRATIONS, SqlStore
from tests import room_stores
from tests.room_stores import LESSONS, open_kind, open_rooms, postgres_url, schema_of

clock, store_kind = room_stores.clock, room_stores.store_kind  # the fixtures

# The CREATE statements of the app before the schema had a version, as they ran then (every start), with and
# without the `locked` column that the app's ALTER TABLE added to older files.
BEFORE_VERSIONS = """
CREATE TABLE IF NOT EXISTS rooms (
  code TEXT PRIMARY KEY, control TEXT NOT NULL, lesson TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0,
  question TEXT NOT NULL DEFAULT '', phase TEXT NOT NULL DEFAULT '', answer TEXT NOT NULL DEFAULT '',
  shown TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, activity INTEGER NOT NULL DEFAULT 0,
  created {real} NOT NULL, expires {real} NOT NULL{locked});
CREATE TABLE IF NOT EXISTS learners (
  code TEXT NOT NULL, token TEXT NOT NULL, name TEXT NOT NULL, lang TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0,
  following INTEGER NOT NULL DEFAULT 1, lost INTEGER NOT NULL DEFAULT 0, joined {real} NOT NULL,
  PRIMARY KEY (code, token));
CREATE TABLE IF NOT EXISTS answers (
  code TEXT NOT NULL, question TEXT NOT NULL, token TEXT NOT NULL, response TEXT NOT NULL,
  correct INTEGER NOT NULL, at {real} NOT NULL, PRIMARY KEY (code, question, token));
CREATE TABLE IF NOT EXISTS gallery (
  id {serial}, code TEXT NOT NULL, token TEXT NOT NULL, step INTEGER NOT NULL, sentence TEXT NOT NULL,
  at {real} NOT NULL);
CREATE TABLE IF NOT EXISTS events (code TEXT NOT NULL, who TEXT NOT NULL, kind TEXT NOT NULL, at {real} NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_who ON events (code, who, kind, at);
CREATE INDEX IF NOT EXISTS gallery_by_room ON gallery (code, step);
"""
DIALECT = {
    "sqlite": {"real": "REAL", "serial": "INTEGER PRIMARY KEY AUTOINCREMENT"},
    "postgres": {"real": "DOUBLE PRECISION", "serial": "BIGSERIAL PRIMARY KEY"},
}
CONTROL, ANA, BO = "control-secret", "ana-token", "bo-token"
ANSWER = Answer("choice", "it", ("cat", "mat", "it"), None, {})
ANSWER_AS_KEPT = '{"kind": "choice", "correct": "it", "options": ["cat", "mat", "it"], "tolerance": null, "detail": {}}'


def run_raw(kind, tmp_path, statements):
    """Run SQL on the test's database as another program would (not through a store)."""
    if kind == "sqlite":
        with sqlite3.connect(tmp_path / "rooms.sqlite3") as conn:
            return [conn.execute(s, p).fetchall() if s.lstrip().startswith("SELECT") else conn.execute(s, p)
                    for s, p in statements]  # fmt: skip
    with psycopg.connect(postgres_url(), autocommit=True, options=f"-c search_path={schema_of(tmp_path)}") as conn:
        out = []
        for s, p in statements:
            cur = conn.execute(s.replace("?", "%s"), p)
            out.append(cur.fetchall() if s.lstrip().startswith("SELECT") else None)
        return out


def make_old_class(kind, tmp_path, now, with_locked):
    """A class in progress in a database made before versions: a room on step 2 with its question open, two
    learners, one answer and one gallery sentence."""
    if kind == "postgres":
        with psycopg.connect(postgres_url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema_of(tmp_path)}")
    locked = ", locked INTEGER NOT NULL DEFAULT 0" if with_locked else ""
    ddl = BEFORE_VERSIONS.format(locked=locked, **DIALECT[kind])
    rows = [(s, ()) for s in ddl.split(";") if s.strip()]
    rows += [
        ("INSERT INTO rooms (code, control, lesson, step, question, phase, answer, version, activity, created, "
         "expires) VALUES (?, ?, ?, 2, 'q1', 'open', ?, 5, 7, ?, ?)",
         ("ABCDEF", rules.digest(CONTROL), "qkv", ANSWER_AS_KEPT, now - 60, now + 3600)),
        ("INSERT INTO learners (code, token, name, lang, step, joined) VALUES (?, ?, ?, ?, 2, ?)",
         ("ABCDEF", rules.digest(ANA), "Ana", "ja", now - 50)),
        ("INSERT INTO learners (code, token, name, lang, step, joined) VALUES (?, ?, ?, ?, 2, ?)",
         ("ABCDEF", rules.digest(BO), "보라", "ko", now - 40)),
        ("INSERT INTO answers (code, question, token, response, correct, at) VALUES (?, ?, ?, ?, 1, ?)",
         ("ABCDEF", "q1", rules.digest(ANA), "it", now - 30)),
        ("INSERT INTO gallery (code, token, step, sentence, at) VALUES (?, ?, 2, ?, ?)",
         ("ABCDEF", rules.digest(BO), "猫が寝た", now - 20)),
    ]  # fmt: skip
    run_raw(kind, tmp_path, rows)


@pytest.mark.parametrize("with_locked", [False, True], ids=["before-locked", "with-locked"])
def test_a_running_class_database_upgrades_in_place(store_kind, tmp_path, clock, with_locked):
    make_old_class(store_kind, tmp_path, clock(), with_locked)
    store = open_rooms(store_kind, tmp_path, clock)
    try:
        assert store.store.schema_version() == len(MIGRATIONS)
        room = store.room("ABCDEF")
        assert (room.lesson, room.step, room.question, room.phase, room.version, room.locked) == (
            "qkv", 2, "q1", "open", 5, False)  # fmt: skip
        assert room.answer == ANSWER  # the answer as the app kept it then, read back typed
        assert store.learners("ABCDEF", CONTROL) == [("Ana", 2, True), ("보라", 2, True)]
        assert [(a.learner, a.response, a.correct) for a in store.answers("ABCDEF", CONTROL)] == [("Ana", "it", True)]
        assert store.gallery("ABCDEF", CONTROL, 2) == [("보라", "猫が寝た")]
        assert store.my_answer("ABCDEF", ANA, "q1") == ("it", True)
        # the class goes on: the seated learner answers, the facilitator uses what migration 2 added
        assert store.answer("ABCDEF", BO, "cat") is True
        assert store.my_answer("ABCDEF", BO, "q1") == ("cat", False)
        store.lock_joining("ABCDEF", CONTROL, True)
        assert store.room("ABCDEF").locked
        versions = run_raw(store_kind, tmp_path, [("SELECT version FROM schema_version ORDER BY version", ())])[0]
        assert [v for (v,) in versions] == list(range(1, len(MIGRATIONS) + 1))
    finally:
        store.close()
        if store_kind == "postgres":
            room_stores.drop_schema(tmp_path)


def test_a_new_migration_is_applied_once_and_a_failing_one_changes_nothing(store_kind, tmp_path, clock):
    store = open_kind(store_kind, tmp_path, clock)
    try:
        assert store.migrate() == []  # a start after the first finds nothing to do
        code, control = Rooms(store, LESSONS).create("qkv")
        added = MIGRATIONS + (("ALTER TABLE rooms ADD COLUMN note TEXT NOT NULL DEFAULT ''",
                               "UPDATE rooms SET note = 'was here'"),)  # fmt: skip
        assert store.migrate(added) == [len(MIGRATIONS) + 1]
        assert store.migrate(added) == []
        assert run_raw(store_kind, tmp_path, [("SELECT note FROM rooms WHERE code = ?", (code,))])[0] == [("was here",)]
        broken = added + (("CREATE TABLE extra (x INTEGER)", "INSERT INTO no_such_table VALUES (1)"),)
        with pytest.raises(Exception, match="no_such_table"):
            store.migrate(broken)
        assert store.schema_version() == len(added)
        tables = run_raw(store_kind, tmp_path, [(
            "SELECT name FROM sqlite_master WHERE name = 'extra'" if store_kind == "sqlite" else
            "SELECT table_name FROM information_schema.tables WHERE table_name = 'extra' "
            "AND table_schema = current_schema()", ())])[0]  # fmt: skip
        assert tables == []  # the failed migration's first statement went with it
        assert Rooms(store, LESSONS).room(code).lesson == "qkv"
    finally:
        store.close()
        if store_kind == "postgres":
            room_stores.drop_schema(tmp_path)


def test_two_processes_starting_at_once_do_not_both_migrate(store_kind, tmp_path, clock, monkeypatch):
    """Each start reads the version, then (held up here for 0.3 s, the window a slow disk gives) applies what is
    missing: without the write lock (SQLite) or the advisory lock (PostgreSQL) both would read 0 and both create."""
    read_version = SqlStore._version

    def slow_version(self, run):
        version = read_version(self, run)
        time.sleep(0.3)
        return version

    monkeypatch.setattr(SqlStore, "_version", slow_version)
    if store_kind == "postgres":
        with psycopg.connect(postgres_url(), autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema_of(tmp_path)}")
    stores, errors, gate = [], [], threading.Barrier(2)

    def start():
        try:
            gate.wait()
            s = Rooms(open_kind(store_kind, tmp_path, clock), LESSONS)  # SQLite migrates here, PostgreSQL at its first
            stores.append(s)
            s.poll("ABCDEF")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert errors == []
        versions = run_raw(store_kind, tmp_path, [("SELECT version FROM schema_version ORDER BY version", ())])[0]
        assert [v for (v,) in versions] == list(range(1, len(MIGRATIONS) + 1))
        code, control = stores[0].create("qkv")
        assert stores[1].room(code).lesson == "qkv"
    finally:
        for s in stores:
            s.close()
        if store_kind == "postgres":
            room_stores.drop_schema(tmp_path)
