"""Where rooms live: outside the Streamlit process, so a server restart loses nothing and several replicas serve
one class. SQLiteStore (a file, the standard library, WAL) by default; PostgresStore (psycopg) when DATABASE_URL
is set. Both run the same SQL and the same tests (tests/core/test_room_store.py).

Every change a learner must follow (step, question opened or revealed, gallery sentence shown) bumps the room's
`version`; every learner action bumps `activity`. Followers poll those two integers (poll(): one indexed read) and
rerun only when they changed. Only the control token moves the room, reveals, sees names or exports answers.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from core import room as rules
from core.room import AnswerRow, RoomError

SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (
  code TEXT PRIMARY KEY, control TEXT NOT NULL, lesson TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0,
  question TEXT NOT NULL DEFAULT '', phase TEXT NOT NULL DEFAULT '', answer TEXT NOT NULL DEFAULT '',
  shown TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, activity INTEGER NOT NULL DEFAULT 0,
  created {real} NOT NULL, expires {real} NOT NULL);
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
ROOM_COLUMNS = "code, lesson, step, question, phase, answer, shown, version, activity, created, expires"


@dataclass(frozen=True)
class Room:
    code: str
    lesson: str
    step: int
    question: str  # '' when none is open
    phase: str  # '' | 'open' | 'revealed'
    answer: str  # the open question's right answer (core.room.answer_to_json), '' when none
    shown: str  # the gallery sentence the facilitator shows to everyone, '' when none
    version: int
    activity: int
    created: float
    expires: float


@dataclass(frozen=True)
class Learner:
    name: str
    lang: str
    step: int
    following: bool
    lost: bool


class Store(Protocol):
    def create(self, lesson: str, ttl_s: float | None = None) -> tuple[str, str]: ...
    def room(self, code: str) -> Room | None: ...
    def poll(self, code: str) -> tuple[int, int] | None: ...
    def is_control(self, code: str, control: str | None) -> bool: ...
    def move(self, code: str, control: str, step: int) -> None: ...
    def open_question(self, code: str, control: str, question: str, answer_json: str) -> None: ...
    def reveal(self, code: str, control: str) -> None: ...
    def show(self, code: str, control: str, sentence: str) -> None: ...
    def join(self, code: str, name: str, lang: str) -> str: ...
    def learner(self, code: str, token: str | None) -> Learner | None: ...
    def where(self, code: str, token: str, step: int, following: bool) -> None: ...
    def set_lost(self, code: str, token: str, lost: bool) -> None: ...
    def lost_count(self, code: str) -> int: ...
    def answer(self, code: str, token: str, question: str, response: str, correct: bool) -> bool: ...
    def my_answer(self, code: str, token: str, question: str) -> tuple[str, bool] | None: ...
    def responses(self, code: str, question: str) -> list[str]: ...
    def steps_of_learners(self, code: str) -> list[int]: ...
    def learners(self, code: str, control: str) -> list[tuple[str, int, bool]]: ...
    def answers(self, code: str, control: str) -> list[AnswerRow]: ...
    def submit(self, code: str, token: str, step: int, sentence: str) -> None: ...
    def gallery(self, code: str, control: str, step: int) -> list[tuple[str, str]]: ...
    def close(self) -> None: ...


class SqlStore:
    """The rules and SQL both stores share; a subclass gives the connection (`_tx`) and the parameter style."""

    placeholder = "?"
    real, serial = "REAL", "INTEGER PRIMARY KEY AUTOINCREMENT"

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.lock = threading.Lock()

    # -- plumbing ------------------------------------------------------------------------------------------

    @contextmanager
    def _tx(self, write: bool = True):  # yields run(sql, params) -> cursor; one transaction
        raise NotImplementedError
        yield

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _create_schema(self) -> None:
        with self._tx(write=False) as run:
            for statement in SCHEMA.format(real=self.real, serial=self.serial).split(";"):
                if statement.strip():
                    run(statement, ())

    def _live(self, run, code: str) -> Room:
        row = run(f"SELECT {ROOM_COLUMNS} FROM rooms WHERE code = ?", (code,)).fetchone()
        if row is None or row[10] <= self.clock():
            raise RoomError("unknown_room", code)
        return Room(*row)

    def _control(self, run, code: str, control: str | None) -> Room:
        room = self._live(run, code)
        stored = run("SELECT control FROM rooms WHERE code = ?", (code,)).fetchone()[0]
        if not rules.same_secret(control, stored):
            raise RoomError("not_control")
        return room

    def _learner_row(self, run, code: str, token: str | None):
        if not token:
            raise RoomError("not_learner")
        row = run("SELECT name FROM learners WHERE code = ? AND token = ?", (code, rules.digest(token))).fetchone()
        if row is None:
            raise RoomError("not_learner")
        return row

    def _rate(self, run, code: str, who: str, kind: str) -> None:
        now, limit = self.clock(), rules.LIMITS[kind]
        times = [r[0] for r in run("SELECT at FROM events WHERE code = ? AND who = ? AND kind = ? AND at > ?",
                                   (code, who, kind, now - limit.window_s)).fetchall()]  # fmt: skip
        if not rules.allowed(times, now, limit):
            raise RoomError("rate")
        run("INSERT INTO events (code, who, kind, at) VALUES (?, ?, ?, ?)", (code, who, kind, now))

    def _bump(self, run, code: str, column: str) -> None:
        run(f"UPDATE rooms SET {column} = {column} + 1 WHERE code = ?", (code,))

    # -- the facilitator -----------------------------------------------------------------------------------

    def create(self, lesson: str, ttl_s: float | None = None) -> tuple[str, str]:
        """A new room on `lesson`: (code, control token). Rooms long expired are purged here."""
        now = self.clock()
        ttl = rules.ttl_seconds() if ttl_s is None else float(ttl_s)
        control = rules.new_token()
        with self._tx(write=False) as run:
            gone = [r[0] for r in run("SELECT code FROM rooms WHERE expires < ?", (now - 3600,)).fetchall()]
            for old in gone:
                for table in ("answers", "learners", "gallery", "events", "rooms"):
                    run(f"DELETE FROM {table} WHERE code = ?", (old,))
            for _ in range(20):
                code = rules.new_code()
                if run("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone() is None:
                    break
            run("INSERT INTO rooms (code, control, lesson, created, expires) VALUES (?, ?, ?, ?, ?)",
                (code, rules.digest(control), lesson, now, now + ttl))  # fmt: skip
        return code, control

    def room(self, code: str) -> Room | None:
        """The room, or None when the code is unknown or the room expired."""
        try:
            with self._tx(write=False) as run:
                return self._live(run, code)
        except RoomError:
            return None

    def poll(self, code: str) -> tuple[int, int] | None:
        """(version, activity): what a follower reads every few seconds. None: unknown or expired."""
        with self._tx(write=False) as run:
            row = run("SELECT version, activity, expires FROM rooms WHERE code = ?", (code,)).fetchone()
        return None if row is None or row[2] <= self.clock() else (row[0], row[1])

    def is_control(self, code: str, control: str | None) -> bool:
        try:
            with self._tx(write=False) as run:
                self._control(run, code, control)
            return True
        except RoomError:
            return False

    def move(self, code: str, control: str, step: int) -> None:
        """The room goes to `step` (its question, if any, waits closed until opened)."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET step = ?, question = '', phase = '', answer = '', shown = '' WHERE code = ?",
                (int(step), code))  # fmt: skip
            self._bump(run, code, "version")

    def open_question(self, code: str, control: str, question: str, answer_json: str) -> None:
        with self._tx(write=False) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET question = ?, phase = 'open', answer = ? WHERE code = ?",
                (question, answer_json, code))  # fmt: skip
            self._bump(run, code, "version")

    def reveal(self, code: str, control: str) -> None:
        with self._tx(write=False) as run:
            room = self._control(run, code, control)
            if room.phase != "open":
                raise RoomError("question_closed")
            run("UPDATE rooms SET phase = 'revealed' WHERE code = ?", (code,))
            self._bump(run, code, "version")

    def show(self, code: str, control: str, sentence: str) -> None:
        """Show one gallery sentence to everyone ('' hides it)."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET shown = ? WHERE code = ?", (sentence, code))
            self._bump(run, code, "version")

    def learners(self, code: str, control: str) -> list[tuple[str, int, bool]]:
        """(name, step, following) of every learner, in joining order: names for the facilitator only."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            rows = run("SELECT name, step, following FROM learners WHERE code = ? ORDER BY joined", (code,))
            return [(n, s, bool(f)) for n, s, f in rows.fetchall()]

    def answers(self, code: str, control: str) -> list[AnswerRow]:
        with self._tx(write=False) as run:
            self._control(run, code, control)
            rows = run("SELECT a.question, l.name, a.response, a.correct, a.at FROM answers a JOIN learners l "
                       "ON a.code = l.code AND a.token = l.token WHERE a.code = ? ORDER BY a.at, l.joined, l.name", (code,))  # fmt: skip
            return [AnswerRow(q, n, r, bool(c), at) for q, n, r, c, at in rows.fetchall()]

    def gallery(self, code: str, control: str, step: int) -> list[tuple[str, str]]:
        """(name, sentence) submitted for `step`, oldest first."""
        with self._tx() as run:
            self._control(run, code, control)
            rows = run("SELECT l.name, g.sentence FROM gallery g JOIN learners l ON g.code = l.code AND "
                       "g.token = l.token WHERE g.code = ? AND g.step = ? ORDER BY g.id", (code, int(step)))  # fmt: skip
            return [(n, s) for n, s in rows.fetchall()]

    # -- learners ------------------------------------------------------------------------------------------

    def join(self, code: str, name: str, lang: str) -> str:
        """A learner joins with a display name: their token (keep it; it is their identity in the room)."""
        name = rules.clean_name(name)
        token = rules.new_token()
        with self._tx() as run:
            room = self._live(run, code)
            self._rate(run, code, "", "join")
            n = run("SELECT COUNT(*) FROM learners WHERE code = ?", (code,)).fetchone()[0]
            if n >= rules.MAX_LEARNERS:
                raise RoomError("room_full")
            run("INSERT INTO learners (code, token, name, lang, step, joined) VALUES (?, ?, ?, ?, ?, ?)",
                (code, rules.digest(token), name, str(lang)[:8], room.step, self.clock()))  # fmt: skip
            self._bump(run, code, "activity")
        return token

    def learner(self, code: str, token: str | None) -> Learner | None:
        if not token:
            return None
        with self._tx() as run:
            row = run("SELECT name, lang, step, following, lost FROM learners WHERE code = ? AND token = ?",
                      (code, rules.digest(token))).fetchone()  # fmt: skip
        return None if row is None else Learner(row[0], row[1], row[2], bool(row[3]), bool(row[4]))

    def where(self, code: str, token: str, step: int, following: bool) -> None:
        """Where a learner is: the room's step number, or -1 while exploring elsewhere."""
        with self._tx() as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "where")
            run("UPDATE learners SET step = ?, following = ? WHERE code = ? AND token = ?",
                (int(step), int(bool(following)), code, rules.digest(token)))  # fmt: skip
            self._bump(run, code, "activity")

    def set_lost(self, code: str, token: str, lost: bool) -> None:
        with self._tx() as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "lost")
            run("UPDATE learners SET lost = ? WHERE code = ? AND token = ?", (int(lost), code, rules.digest(token)))
            self._bump(run, code, "activity")

    def lost_count(self, code: str) -> int:
        with self._tx() as run:
            return run("SELECT COUNT(*) FROM learners WHERE code = ? AND lost = 1", (code,)).fetchone()[0]

    def answer(self, code: str, token: str, question: str, response: str, correct: bool) -> bool:
        """Keep a learner's (validated) response to the open question: True, or False when this learner already
        answered it (a second tab answers nothing). RoomError when the question is not open."""
        with self._tx() as run:
            room = self._live(run, code)
            self._learner_row(run, code, token)
            if room.phase != "open" or room.question != question:
                raise RoomError("question_closed")
            self._rate(run, code, rules.digest(token), "answer")
            cur = run("INSERT INTO answers (code, question, token, response, correct, at) VALUES (?, ?, ?, ?, ?, ?) "
                      "ON CONFLICT DO NOTHING", (code, question, rules.digest(token), response, int(correct),
                                                 self.clock()))  # fmt: skip
            kept = cur.rowcount == 1
            if kept:
                self._bump(run, code, "activity")
        return kept

    def my_answer(self, code: str, token: str, question: str) -> tuple[str, bool] | None:
        with self._tx() as run:
            row = run("SELECT response, correct FROM answers WHERE code = ? AND question = ? AND token = ?",
                      (code, question, rules.digest(token))).fetchone()  # fmt: skip
        return None if row is None else (row[0], bool(row[1]))

    def responses(self, code: str, question: str) -> list[str]:
        """Every response to a question, without names (the room's distribution)."""
        with self._tx() as run:
            rows = run("SELECT response FROM answers WHERE code = ? AND question = ?", (code, question))
            return [r[0] for r in rows.fetchall()]

    def steps_of_learners(self, code: str) -> list[int]:
        """The step each learner is on (-1: exploring), without names."""
        with self._tx() as run:
            return [r[0] for r in run("SELECT step FROM learners WHERE code = ?", (code,)).fetchall()]

    def submit(self, code: str, token: str, step: int, sentence: str) -> None:
        sentence = rules.clean_sentence(sentence)
        with self._tx() as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "gallery")
            run("INSERT INTO gallery (code, token, step, sentence, at) VALUES (?, ?, ?, ?, ?)",
                (code, rules.digest(token), int(step), sentence, self.clock()))  # fmt: skip
            self._bump(run, code, "activity")


def default_path() -> Path:
    """$ATTENTION_LAB_ROOMS, else rooms.sqlite3 in $ATTENTION_LAB_CACHE or ~/.cache/attention-lab."""
    if os.environ.get("ATTENTION_LAB_ROOMS"):
        return Path(os.environ["ATTENTION_LAB_ROOMS"])
    cache = os.environ.get("ATTENTION_LAB_CACHE") or Path.home() / ".cache" / "attention-lab"
    return Path(cache) / "rooms.sqlite3"


class SQLiteStore(SqlStore):
    """A file; several processes on one host may share it (WAL, a busy timeout)."""

    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed answer survives a crash of the app
        self._create_schema()

    @contextmanager
    def _tx(self, write: bool = True):
        """One transaction; a writer takes the file's write lock up front (no upgrade deadlock between
        processes), a reader does not (polls from several processes read side by side in WAL mode)."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield lambda sql, params: self.conn.execute(sql, params)
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def close(self) -> None:
        with self.lock:
            self.conn.close()


class PostgresStore(SqlStore):
    """PostgreSQL (psycopg 3) at a URL such as postgresql://lab@127.0.0.1:55432/attention_lab: for replicas."""

    placeholder = "%s"
    real, serial = "DOUBLE PRECISION", "BIGSERIAL PRIMARY KEY"

    def __init__(self, url: str, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.url = url
        self.conn = None
        self._connect()
        with self._tx() as run:  # replicas starting together: one creates the schema at a time
            run("SELECT pg_advisory_xact_lock(7205)", ())
            for statement in SCHEMA.format(real=self.real, serial=self.serial).split(";"):
                if statement.strip():
                    run(statement, ())

    def _connect(self):
        import psycopg

        self.conn = psycopg.connect(self.url, connect_timeout=10, autocommit=True)

    @contextmanager
    def _tx(self, write: bool = True):
        with self.lock:
            if self.conn is None or self.conn.closed or self.conn.broken:
                self._connect()
            with self.conn.transaction():
                cur = self.conn.cursor()
                yield lambda sql, params: cur.execute(self._sql(sql), params)

    def close(self) -> None:
        with self.lock:
            if self.conn is not None:
                self.conn.close()


_store: Store | None = None
_store_lock = threading.Lock()


def open_store() -> Store:
    """The process's store: PostgreSQL when DATABASE_URL is set, else the SQLite file (default_path())."""
    global _store
    with _store_lock:
        if _store is None:
            url = os.environ.get("DATABASE_URL", "").strip()
            _store = PostgresStore(url) if url else SQLiteStore()
        return _store
