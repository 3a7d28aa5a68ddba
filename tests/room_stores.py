"""The room store fixture: every room test runs against SQLite (a temporary file) and PostgreSQL.

PostgreSQL comes from DATABASE_URL, else from `bash scripts/postgres.sh start` (installs and starts a local
cluster; scripts/dev.sh test does the same). A PostgreSQL that cannot be reached FAILS the test: never a skip."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

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
    """A SQLite store (a temporary file) as the one every page of this process opens (app.room.store.open_store);
    a fixture yields from it."""
    import app.room.store as process

    s = SQLiteStore(tmp_path / "rooms.sqlite3")
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
