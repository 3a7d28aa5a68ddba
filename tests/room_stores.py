"""The room store fixture: every room test runs against SQLite (a temporary file) and PostgreSQL.

PostgreSQL comes from DATABASE_URL, else from `bash scripts/postgres.sh start` (installs and starts a local
cluster; scripts/dev.sh test does the same). A PostgreSQL that cannot be reached FAILS the test: never a skip."""

from __future__ import annotations

import hashlib
import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from core.lessons import Answer, Lesson, Question, Step
from core.room.service import Rooms
from core.room.sql import PostgresStore, SQLiteStore

ROOT = Path(__file__).resolve().parents[1]


class Clock:
    """A clock the test moves (expiry, rate-limit windows)."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


_started: list[str] = []  # the URL scripts/postgres.sh printed, once per test process


def postgres_url() -> str:
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        return url
    if _started:
        return _started[0]
    done = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "start"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"no PostgreSQL for the room tests: scripts/postgres.sh start said {done.stderr.strip()}")
    _started.append(done.stdout.strip().splitlines()[-1])
    return _started[0]


def schema_of(tmp_path: Path) -> str:
    return "test_" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:16]


def open_kind(kind: str, tmp_path: Path, clock: Clock):
    """A store of `kind` ('sqlite' | 'postgres'); a second call with the same arguments reopens the same data.
    On PostgreSQL each test has a schema of its own (rooms are counted against caps over the whole database, and
    the test cluster outlives a run)."""
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock)
    try:
        url, schema = postgres_url(), schema_of(tmp_path)
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        return PostgresStore(make_conninfo(url, options=f"-c search_path={schema}"), clock=clock)
    except Exception as e:  # noqa: BLE001 - any failure to reach PostgreSQL fails the test
        pytest.fail(f"cannot reach PostgreSQL: {type(e).__name__}: {e}")


def as_process_store(tmp_path: Path, monkeypatch):
    """The room service on a SQLite store (a temporary file), as every page of this process opens it
    (app.room.store.open_store), on the shipped lessons; a fixture yields from it. It asks no passcode to open a
    room, as on a laptop run, which the process then is (ATTENTION_LAB_LOCAL=1): AppTest's server has no address,
    which is a hosted server's, whose rooms always ask one (app.room.store.opening_passcode)."""
    import app.room.store as process
    from app import serving

    monkeypatch.setenv(serving.LOCAL_ENV, "1")
    monkeypatch.delenv(serving.HOSTED_ENV, raising=False)
    s = Rooms(SQLiteStore(tmp_path / "rooms.sqlite3"), process.lessons)
    monkeypatch.setattr(process, "_store", s)
    yield s
    s.close()


def drop_schema(tmp_path: Path) -> None:
    with psycopg.connect(postgres_url(), autocommit=True, connect_timeout=10) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema_of(tmp_path)} CASCADE")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "postgres"])
def store_kind(request) -> str:
    return request.param


@pytest.fixture
def store(store_kind, tmp_path, clock):
    s = open_kind(store_kind, tmp_path, clock)
    yield s
    s.close()
    if store_kind == "postgres":
        drop_schema(tmp_path)


# A lesson of three steps for the service's tests: a choice question on step 0, a number on step 1, none on step 2.
# Their right answers are fixed (the `rooms` fixture stands in for the engine: core.lessons.answer).
CHOICE = Answer("choice", "it", ("cat", "mat", "it"), None, {})
NUMBER = Answer("number", 0.25, (), 0.01, {})
FIXED = {"q1": CHOICE, "q2": NUMBER}


def question(qid: str, kind: str) -> Question:
    return Question(qid, kind, "fixed", {}, {"en": "?"}, (), {"en": "."})


LESSON = Lesson("qkv", {"en": "qkv"}, (Step("attention", {}, {"en": "step 1"}, question("q1", "choice")),
                                       Step("attention", {}, {"en": "step 2"}, question("q2", "number")),
                                       Step("attention", {}, {"en": "step 3"}, None)))  # fmt: skip
LESSONS = {"qkv": LESSON}


def open_rooms(kind: str, tmp_path: Path, clock: Clock) -> Rooms:
    """The room service on a store of `kind` (open_kind), on LESSONS."""
    return Rooms(open_kind(kind, tmp_path, clock), LESSONS)


@pytest.fixture
def fixed_answers(monkeypatch):
    monkeypatch.setattr("core.lessons.answer", lambda question, state: FIXED[question.id])


@pytest.fixture
def rooms(store, fixed_answers) -> Rooms:
    """The room service on the `store` fixture (SQLite, then PostgreSQL), on LESSONS."""
    return Rooms(store, LESSONS)


def counted_queries(store, monkeypatch) -> dict[str, int]:
    """Counts the transactions and statements of `store` (a SqlStore) from now on."""
    counts = {"transactions": 0, "statements": 0}
    original = store._tx

    @contextmanager
    def tx(write: bool):
        counts["transactions"] += 1
        with original(write) as run:

            def run_counted(sql, params):
                counts["statements"] += 1
                return run(sql, params)

            yield run_counted

    monkeypatch.setattr(store, "_tx", tx)
    return counts
