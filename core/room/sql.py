"""Where rooms live: outside the Streamlit process, so a server restart loses nothing and several replicas serve
one class. SQLiteStore (a file, the standard library, WAL) by default; PostgresStore (psycopg) when DATABASE_URL
is set. Both run the same SQL and the same tests (tests/core/test_room_store.py); what differs between them is
in DIALECTS.

Every change a learner must follow (step, question opened or revealed, gallery sentence shown) bumps the room's
`version`; every learner action bumps `activity`. Followers poll those two integers (poll(): one indexed read) and
rerun only when they changed. Only the control token moves the room, reveals, sees names or exports answers.

What is allowed is core/room's to decide (check_control, check_open_question, check_rate, check_join, check_open,
seat_named, the retention times); a store reads what a rule needs and writes what it allowed in the same
transaction, so that no other process or replica comes between the check and the write.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core import room as rules
from core.room import AnswerRow, RoomError
from core.room.store import Learner, Panel, Room


@dataclass(frozen=True)
class Dialect:
    """What differs between SQLite and PostgreSQL in the store's SQL, in one table (as Django's database backends
    keep theirs); what differs in their drivers (connections, which errors mean busy or away) is in SQLiteStore and
    PostgresStore."""

    placeholder: str  # a query parameter
    real: str  # a float column
    serial: str  # an auto-incrementing key
    tables: str  # the names of the tables of the store's schema
    hold: str  # holds a lock key until the transaction ends, across processes ('': the write lock already does)


DIALECTS = {
    "sqlite": Dialect("?", "REAL", "INTEGER PRIMARY KEY AUTOINCREMENT",
                      "SELECT name FROM sqlite_master WHERE type = 'table'", ""),
    "postgresql": Dialect("%s", "DOUBLE PRECISION", "BIGSERIAL PRIMARY KEY",
                          "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
                          "SELECT pg_advisory_xact_lock(?)"),
}  # fmt: skip

# The schema, as numbered migrations: a database at version n has had migrations 1..n applied, each once, in
# order, and records them in schema_version. A start applies the missing ones in one transaction (one process at a
# time), so a running class's database upgrades in place. Append only: never edit or reorder a migration that has
# shipped. {real} and {serial} are the dialect's (SQLiteStore, PostgresStore).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (  # 1: rooms, learners, their answers and sentences, and the counted actions of the rate limits
        """CREATE TABLE rooms (
  code TEXT PRIMARY KEY, control TEXT NOT NULL, lesson TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0,
  question TEXT NOT NULL DEFAULT '', phase TEXT NOT NULL DEFAULT '', answer TEXT NOT NULL DEFAULT '',
  shown TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, activity INTEGER NOT NULL DEFAULT 0,
  created {real} NOT NULL, expires {real} NOT NULL)""",
        """CREATE TABLE learners (
  code TEXT NOT NULL, token TEXT NOT NULL, name TEXT NOT NULL, lang TEXT NOT NULL, step INTEGER NOT NULL DEFAULT 0,
  following INTEGER NOT NULL DEFAULT 1, lost INTEGER NOT NULL DEFAULT 0, joined {real} NOT NULL,
  PRIMARY KEY (code, token))""",
        """CREATE TABLE answers (
  code TEXT NOT NULL, question TEXT NOT NULL, token TEXT NOT NULL, response TEXT NOT NULL,
  correct INTEGER NOT NULL, at {real} NOT NULL, PRIMARY KEY (code, question, token))""",
        """CREATE TABLE gallery (
  id {serial}, code TEXT NOT NULL, token TEXT NOT NULL, step INTEGER NOT NULL, sentence TEXT NOT NULL,
  at {real} NOT NULL)""",
        "CREATE TABLE events (code TEXT NOT NULL, who TEXT NOT NULL, kind TEXT NOT NULL, at {real} NOT NULL)",
        "CREATE INDEX events_by_who ON events (code, who, kind, at)",
        "CREATE INDEX gallery_by_room ON gallery (code, step)",
    ),
    (  # 2: the facilitator can close the door
        "ALTER TABLE rooms ADD COLUMN locked INTEGER NOT NULL DEFAULT 0",
    ),
)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied {real} NOT NULL)"
ROOM_COLUMNS = "code, lesson, step, question, phase, answer, shown, version, activity, created, expires, locked"
MIGRATION_LOCK = 7205  # PostgreSQL: replicas starting together migrate one at a time
ADMISSION_LOCK = 7206  # PostgreSQL: joins and room openings, from every replica, one at a time


class Busy(Exception):
    """Every connection of the pool is in use."""


ATTEMPTS = 3  # tries of one action while the database is busy or away
DEADLINE_S = 4.5  # no new try starts later than this after the first: a visitor reads a sentence within ~5 s


def transaction(action):
    """A store action: one transaction. While the database is busy (another process holds SQLite's write lock,
    PostgreSQL reports a serialization failure) or away (PostgreSQL restarting), the action is tried again
    briefly; then it is refused in words, RoomError('busy' | 'unavailable'), never a database traceback."""

    @functools.wraps(action)
    def attempt(self, *args, **kwargs):
        start = time.monotonic()
        for n in range(1, ATTEMPTS + 1):
            try:
                return action(self, *args, **kwargs)
            except RoomError:
                raise
            except Exception as error:
                key = self._transient(error)
                if key is None:
                    raise
                if n == ATTEMPTS or time.monotonic() - start > DEADLINE_S / 2:
                    raise RoomError(key, f"{type(error).__name__}: {error}") from None
                time.sleep(0.05 * 2**n)

    return attempt


class SqlStore:
    """The rules and SQL both stores share; a subclass gives the connection (`_tx`) and the parameter style."""

    dialect = DIALECTS["sqlite"]

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.lock = threading.Lock()

    # -- plumbing ------------------------------------------------------------------------------------------

    @contextmanager
    def _tx(self, write: bool):  # yields run(sql, params) -> cursor; one transaction (write: it will write)
        raise NotImplementedError
        yield

    def _transient(self, error: Exception) -> str | None:
        """'busy' or 'unavailable' when `error` says the database is busy or away for now (try again), else None."""
        return "busy" if isinstance(error, Busy) else None

    def _sql(self, sql: str) -> str:
        return sql.replace("?", self.dialect.placeholder)

    def _tables(self, run) -> set[str]:
        return {r[0] for r in run(self.dialect.tables, ()).fetchall()}

    def _version(self, run) -> int:
        """The schema version of the database, made now where missing. A database made before versions were kept
        has its version read from what it holds: no rooms table, 0; rooms without `locked`, 1; with it, 2."""
        if "schema_version" not in self._tables(run):
            run(VERSION_TABLE.format(real=self.dialect.real), ())
            if "rooms" in self._tables(run):
                columns = [d[0] for d in run("SELECT * FROM rooms LIMIT 0", ()).description]
                for n in range(1, (2 if "locked" in columns else 1) + 1):
                    run("INSERT INTO schema_version (version, applied) VALUES (?, ?)", (n, self.clock()))
        return run("SELECT COALESCE(MAX(version), 0) FROM schema_version", ()).fetchone()[0]

    def _migrate(self, run, migrations: tuple[tuple[str, ...], ...] = MIGRATIONS) -> list[int]:
        """Apply the migrations this database lacks, in order, inside the caller's transaction (which holds the
        store's write lock: two processes starting at once migrate one after the other, the second finds nothing
        left to do). The numbers applied. A database newer than this code (a replica not yet upgraded) is left as
        it is: migrations only add."""
        done = self._version(run)
        for number, statements in enumerate(migrations[done:], start=done + 1):
            for statement in statements:
                run(statement.format(real=self.dialect.real, serial=self.dialect.serial), ())
            run("INSERT INTO schema_version (version, applied) VALUES (?, ?)", (number, self.clock()))
        return list(range(done + 1, len(migrations) + 1))  # empty when the database is at or past the last

    def migrate(self, migrations: tuple[tuple[str, ...], ...] = MIGRATIONS) -> list[int]:
        """Bring the database to the last of `migrations` (a start does this): the numbers applied, [] when none."""
        with self._tx(write=True) as run:
            self._serialise(run, MIGRATION_LOCK)
            return self._migrate(run, migrations)

    def schema_version(self) -> int:
        with self._tx(write=False) as run:
            return run("SELECT COALESCE(MAX(version), 0) FROM schema_version", ()).fetchone()[0]

    def _serialise(self, run, key: int) -> None:
        """Hold `key` until this transaction ends, across processes (SQLite: its write lock already does)."""
        if self.dialect.hold:
            run(self.dialect.hold, (key,))

    def _room_and_control(self, run, code: str) -> tuple[Room, str]:
        """The open room and its control token's digest, in one read of its row."""
        row = run(f"SELECT {ROOM_COLUMNS}, control FROM rooms WHERE code = ?", (code,)).fetchone()
        if row is None or row[10] <= self.clock():
            raise RoomError("unknown_room", code)
        return Room(*row[:11], locked=bool(row[11])), row[12]

    def _live(self, run, code: str) -> Room:
        return self._room_and_control(run, code)[0]

    def _control(self, run, code: str, control: str | None) -> Room:
        room, stored = self._room_and_control(run, code)
        rules.check_control(control, stored)
        return room

    def _learners_of(self, run, code: str) -> list[tuple[str, int, bool]]:
        rows = run("SELECT name, step, following FROM learners WHERE code = ? ORDER BY joined", (code,))
        return [(n, s, bool(f)) for n, s, f in rows.fetchall()]

    def _answers_of(self, run, code: str) -> list[AnswerRow]:
        rows = run("SELECT a.question, l.name, a.response, a.correct, a.at FROM answers a JOIN learners l "
                   "ON a.code = l.code AND a.token = l.token WHERE a.code = ? ORDER BY a.at, l.joined, l.name", (code,))  # fmt: skip
        return [AnswerRow(q, n, r, bool(c), at) for q, n, r, c, at in rows.fetchall()]

    def _gallery_of(self, run, code: str, step: int) -> list[tuple[str, str]]:
        rows = run("SELECT l.name, g.sentence FROM gallery g JOIN learners l ON g.code = l.code AND "
                   "g.token = l.token WHERE g.code = ? AND g.step = ? ORDER BY g.id", (code, int(step)))  # fmt: skip
        return [(n, s) for n, s in rows.fetchall()]

    def _seats_of(self, run, code: str) -> list[tuple[str, str]]:
        rows = run("SELECT token, name FROM learners WHERE code = ? ORDER BY joined", (code,)).fetchall()
        return [(rules.seat_id(t), n) for t, n in rows]

    def _responses_of(self, run, code: str, question: str) -> list[str]:
        rows = run("SELECT response FROM answers WHERE code = ? AND question = ?", (code, question))
        return [r[0] for r in rows.fetchall()]

    def _lost_of(self, run, code: str) -> int:
        return run("SELECT COUNT(*) FROM learners WHERE code = ? AND lost = 1", (code,)).fetchone()[0]

    def _learner_row(self, run, code: str, token: str | None):
        if not token:
            raise RoomError("not_learner")
        row = run("SELECT name FROM learners WHERE code = ? AND token = ?", (code, rules.digest(token))).fetchone()
        if row is None:
            raise RoomError("not_learner")
        return row

    def _times(self, run, code: str, who: str, kind: str) -> list[float]:
        since = self.clock() - rules.LIMITS[kind].window_s
        rows = run("SELECT at FROM events WHERE code = ? AND who = ? AND kind = ? AND at > ?", (code, who, kind, since))
        return [r[0] for r in rows.fetchall()]

    def _record(self, run, code: str, who: str, kind: str) -> None:
        run("INSERT INTO events (code, who, kind, at) VALUES (?, ?, ?, ?)", (code, who, kind, self.clock()))

    def _rate(self, run, code: str, who: str, kind: str) -> None:
        """One more action of `kind` by `who` in room `code` ('' for any room), counted and recorded in this
        transaction (core.room.check_rate decides)."""
        rules.check_rate(kind, self._times(run, code, who, kind), self.clock())
        self._record(run, code, who, kind)

    def _purge(self, run) -> None:
        """The retention rule (core.room.KEEP_AFTER_CLOSE_S): closed rooms go with everything in them."""
        now = self.clock()
        gone = [r[0] for r in run("SELECT code FROM rooms WHERE expires < ?", (rules.forget_before(now),)).fetchall()]
        for old in gone:
            for table in ("answers", "learners", "gallery", "events", "rooms"):
                run(f"DELETE FROM {table} WHERE code = ?", (old,))
        run("DELETE FROM events WHERE at < ?", (rules.events_before(now),))

    def _bump(self, run, code: str, column: str) -> None:
        run(f"UPDATE rooms SET {column} = {column} + 1 WHERE code = ?", (code,))

    # -- the facilitator -----------------------------------------------------------------------------------

    @transaction
    def create(self, lesson: str, ttl_s: float | None = None, client: str = "") -> tuple[str, str]:
        """A new room on `lesson`: (code, control token). Rooms closed long enough are purged here. `client`: the
        browser that asks (per-client limit); '' for the operator's own scripts (no per-client limit)."""
        now = self.clock()
        ttl = rules.ttl_seconds() if ttl_s is None else float(ttl_s)
        control = rules.new_token()
        with self._tx(write=True) as run:
            self._serialise(run, ADMISSION_LOCK)
            self._purge(run)
            if client:
                self._rate(run, "", client, "create")
            rules.check_open(run("SELECT COUNT(*) FROM rooms WHERE expires > ?", (now,)).fetchone()[0])
            for _ in range(20):
                code = rules.new_code()
                if run("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone() is None:
                    break
            run("INSERT INTO rooms (code, control, lesson, created, expires) VALUES (?, ?, ?, ?, ?)",
                (code, rules.digest(control), lesson, now, now + ttl))  # fmt: skip
        return code, control

    @transaction
    def room(self, code: str) -> Room | None:
        """The room, or None when the code is unknown or the room expired."""
        try:
            with self._tx(write=False) as run:
                return self._live(run, code)
        except RoomError:
            return None

    @transaction
    def poll(self, code: str) -> tuple[int, int] | None:
        """(version, activity): what a follower reads every few seconds. None: unknown or expired."""
        with self._tx(write=False) as run:
            row = run("SELECT version, activity, expires FROM rooms WHERE code = ?", (code,)).fetchone()
        return None if row is None or row[2] <= self.clock() else (row[0], row[1])

    @transaction
    def is_control(self, code: str, control: str | None) -> bool:
        try:
            with self._tx(write=False) as run:
                self._control(run, code, control)
            return True
        except RoomError:
            return False

    @transaction
    def move(self, code: str, control: str, step: int) -> None:
        """The room goes to `step` (its question, if any, waits closed until opened)."""
        with self._tx(write=True) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET step = ?, question = '', phase = '', answer = '', shown = '' WHERE code = ?",
                (int(step), code))  # fmt: skip
            self._bump(run, code, "version")

    @transaction
    def open_question(self, code: str, control: str, question: str, answer_json: str) -> None:
        with self._tx(write=True) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET question = ?, phase = 'open', answer = ? WHERE code = ?",
                (question, answer_json, code))  # fmt: skip
            self._bump(run, code, "version")

    @transaction
    def reveal(self, code: str, control: str) -> None:
        with self._tx(write=True) as run:
            rules.check_open_question(self._control(run, code, control))
            run("UPDATE rooms SET phase = 'revealed' WHERE code = ?", (code,))
            self._bump(run, code, "version")

    @transaction
    def show(self, code: str, control: str, sentence: str) -> None:
        """Show one gallery sentence to everyone ('' hides it)."""
        with self._tx(write=True) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET shown = ? WHERE code = ?", (sentence, code))
            self._bump(run, code, "version")

    @transaction
    def learners(self, code: str, control: str) -> list[tuple[str, int, bool]]:
        """(name, step, following) of every learner, in joining order: names for the facilitator only."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            return self._learners_of(run, code)

    @transaction
    def answers(self, code: str, control: str) -> list[AnswerRow]:
        with self._tx(write=False) as run:
            self._control(run, code, control)
            return self._answers_of(run, code)

    @transaction
    def panel(self, code: str, control: str) -> Panel:
        """What a facilitator's live panel draws, read in one transaction: the room (its row read once, the control
        compared once), learners, answers, the responses to the open question, "I'm lost", the gallery of the room's
        step and the seats."""
        with self._tx(write=False) as run:
            room = self._control(run, code, control)
            responses = self._responses_of(run, code, room.question) if room.question else []
            return Panel(room, self._learners_of(run, code), self._answers_of(run, code), responses,
                         self._lost_of(run, code), self._gallery_of(run, code, room.step), self._seats_of(run, code))  # fmt: skip

    @transaction
    def gallery(self, code: str, control: str, step: int) -> list[tuple[str, str]]:
        """(name, sentence) submitted for `step`, oldest first."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            return self._gallery_of(run, code, step)

    @transaction
    def lock_joining(self, code: str, control: str, locked: bool) -> None:
        """The facilitator closes the door (nobody new joins; seated learners stay) or opens it again."""
        with self._tx(write=True) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET locked = ? WHERE code = ?", (int(bool(locked)), code))
            self._bump(run, code, "version")

    @transaction
    def seats(self, code: str, control: str) -> list[tuple[str, str]]:
        """(seat id, name) of every learner in joining order: the id names a seat to remove without its token."""
        with self._tx(write=False) as run:
            self._control(run, code, control)
            return self._seats_of(run, code)

    @transaction
    def remove(self, code: str, control: str, seat: str) -> None:
        """A learner leaves the room for good, with their answers and sentences (their link is no seat any more)."""
        with self._tx(write=True) as run:
            self._control(run, code, control)
            rows = run("SELECT token FROM learners WHERE code = ?", (code,)).fetchall()
            token = rules.seat_named(seat, [t for (t,) in rows])
            for table in ("answers", "gallery", "learners"):
                run(f"DELETE FROM {table} WHERE code = ? AND token = ?", (code, token))
            run("DELETE FROM events WHERE code = ? AND who = ?", (code, token))
            run("UPDATE rooms SET shown = '' WHERE code = ? AND shown != '' AND NOT EXISTS (SELECT 1 FROM gallery g "
                "WHERE g.code = rooms.code AND g.sentence = rooms.shown)", (code,))  # fmt: skip
            self._bump(run, code, "version")
            self._bump(run, code, "activity")

    @transaction
    def end(self, code: str, control: str) -> None:
        """The facilitator closes the room now: every page says so, and its data goes with the retention rule."""
        with self._tx(write=True) as run:
            self._control(run, code, control)
            run("UPDATE rooms SET expires = ? WHERE code = ?", (self.clock(), code))
            self._bump(run, code, "version")

    # -- learners ------------------------------------------------------------------------------------------

    def _find(self, run, code: str, client: str) -> Room | None:
        """The open room behind a typed or linked code; a code that opens none counts against `client`, and a
        client past its tries learns nothing more (not even whether the next code exists)."""
        if client:
            rules.check_rate("join_miss", self._times(run, "", client, "join_miss"), self.clock())
        try:
            return self._live(run, code)
        except RoomError:
            if client:
                self._record(run, "", client, "join_miss")
            return None

    @transaction
    def find(self, code: str, client: str = "") -> Room | None:
        """The room a visitor's link or typed code names, or None (counted: core.room.LIMITS['join_miss']). A hit
        only reads (every load of a room page asks): the write lock is taken for a miss."""
        with self._tx(write=False) as run:
            if client:
                rules.check_rate("join_miss", self._times(run, "", client, "join_miss"), self.clock())
            try:
                return self._live(run, code)
            except RoomError:
                pass
        with self._tx(write=True) as run:
            self._serialise(run, ADMISSION_LOCK)
            return self._find(run, code, client)

    @transaction
    def join(self, code: str, name: str, lang: str, client: str = "") -> str:
        """A learner joins with a display name: their token (keep it; it is their identity in the room). `client`:
        the browser that asks (per-client limits); '' for the operator's own scripts."""
        name = rules.clean_name(name)
        token = rules.new_token()
        with self._tx(write=True) as run:
            self._serialise(run, ADMISSION_LOCK)  # count and insert as one step, whichever replica
            room = self._find(run, code, client)
            if room is not None:
                in_room = run("SELECT COUNT(*) FROM learners WHERE code = ?", (code,)).fetchone()[0]
                seated = run("SELECT COUNT(*) FROM learners l JOIN rooms r ON l.code = r.code WHERE r.expires > ?",
                             (self.clock(),)).fetchone()[0]  # fmt: skip
                rules.check_join(room.locked, in_room, seated)
                self._rate(run, code, "", "join")
                if client:
                    self._rate(run, "", client, "join_client")
                run("INSERT INTO learners (code, token, name, lang, step, joined) VALUES (?, ?, ?, ?, ?, ?)",
                    (code, rules.digest(token), name, str(lang)[:8], room.step, self.clock()))  # fmt: skip
                self._bump(run, code, "activity")
        if room is None:  # said after the commit: the miss stays counted
            raise RoomError("unknown_room", code)
        return token

    @transaction
    def learner(self, code: str, token: str | None) -> Learner | None:
        if not token:
            return None
        with self._tx(write=False) as run:
            row = run("SELECT name, lang, step, following, lost FROM learners WHERE code = ? AND token = ?",
                      (code, rules.digest(token))).fetchone()  # fmt: skip
        return None if row is None else Learner(row[0], row[1], row[2], bool(row[3]), bool(row[4]))

    @transaction
    def where(self, code: str, token: str, step: int, following: bool) -> None:
        """Where a learner is: the room's step number, or -1 while exploring elsewhere."""
        with self._tx(write=True) as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "where")
            run("UPDATE learners SET step = ?, following = ? WHERE code = ? AND token = ?",
                (int(step), int(bool(following)), code, rules.digest(token)))  # fmt: skip
            self._bump(run, code, "activity")

    @transaction
    def set_lost(self, code: str, token: str, lost: bool) -> None:
        with self._tx(write=True) as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "lost")
            run("UPDATE learners SET lost = ? WHERE code = ? AND token = ?", (int(lost), code, rules.digest(token)))
            self._bump(run, code, "activity")

    @transaction
    def lost_count(self, code: str) -> int:
        with self._tx(write=False) as run:
            return self._lost_of(run, code)

    @transaction
    def answer(self, code: str, token: str, question: str, response: str, correct: bool) -> bool:
        """Keep a learner's (validated) response to the open question: True, or False when this learner already
        answered it (a second tab answers nothing). RoomError when the question is not open."""
        with self._tx(write=True) as run:
            room = self._live(run, code)
            self._learner_row(run, code, token)
            rules.check_open_question(room, question)
            self._rate(run, code, rules.digest(token), "answer")
            cur = run("INSERT INTO answers (code, question, token, response, correct, at) VALUES (?, ?, ?, ?, ?, ?) "
                      "ON CONFLICT DO NOTHING", (code, question, rules.digest(token), response, int(correct),
                                                 self.clock()))  # fmt: skip
            kept = cur.rowcount == 1
            if kept:
                self._bump(run, code, "activity")
        return kept

    @transaction
    def my_answer(self, code: str, token: str, question: str) -> tuple[str, bool] | None:
        with self._tx(write=False) as run:
            row = run("SELECT response, correct FROM answers WHERE code = ? AND question = ? AND token = ?",
                      (code, question, rules.digest(token))).fetchone()  # fmt: skip
        return None if row is None else (row[0], bool(row[1]))

    @transaction
    def responses(self, code: str, question: str) -> list[str]:
        """Every response to a question, without names (the room's distribution)."""
        with self._tx(write=False) as run:
            return self._responses_of(run, code, question)

    @transaction
    def steps_of_learners(self, code: str) -> list[int]:
        """The step each learner is on (-1: exploring), without names."""
        with self._tx(write=False) as run:
            return [r[0] for r in run("SELECT step FROM learners WHERE code = ?", (code,)).fetchall()]

    @transaction
    def submit(self, code: str, token: str, step: int, sentence: str) -> None:
        sentence = rules.clean_sentence(sentence)
        with self._tx(write=True) as run:
            self._live(run, code)
            self._learner_row(run, code, token)
            self._rate(run, code, rules.digest(token), "gallery")
            self._rate(run, code, "", "gallery_room")
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
    """A file; several processes on one host may share it (WAL). Only its owner may read it (0600): it holds
    learners' names and answers."""

    busy_s = 1.5  # one attempt waits this long for another process's write lock (three attempts at most)

    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # SQLite's -wal and -shm copy these bits
        os.chmod(self.path, 0o600)  # a file made by an older version or another umask
        self.conn = sqlite3.connect(self.path, timeout=self.busy_s, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed answer survives a crash of the app
        self.migrate()  # BEGIN IMMEDIATE: processes starting together migrate one at a time

    def _transient(self, error: Exception) -> str | None:
        if isinstance(error, sqlite3.OperationalError):
            return "busy" if "locked" in str(error) or "busy" in str(error) else "unavailable"
        return None

    @contextmanager
    def _tx(self, write: bool):
        """One transaction. A writer takes the file's write lock before it reads (BEGIN IMMEDIATE): a deferred
        transaction that read first could not write after another process's commit ('database is locked' at
        once, the busy timeout does not apply). A reader does not: polls from several processes read side by
        side in WAL mode."""
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield lambda sql, params: self.conn.execute(sql, params)
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()


class PostgresStore(SqlStore):
    """PostgreSQL (psycopg 3) at a URL such as postgresql://lab:...@127.0.0.1:55432/attention_lab: for replicas.

    A small pool of connections, each with a connect timeout and statement and lock timeouts, so that a database
    that is away or stuck costs a visitor a sentence within about 5 s (RoomError 'unavailable'), never a stalled
    page; the next action after it comes back reconnects (no restart). Nothing connects before the first action:
    a server starts while its database is still starting."""

    dialect = DIALECTS["postgresql"]
    pool_size = 4  # connections per process (Streamlit runs every visitor in one process)
    connect_s = 2  # libpq's smallest connect timeout
    statement_ms = 3000  # a statement longer than this is cancelled; a lock wait after two thirds of it ("busy")
    wait_s = 3.0  # an action waits this long for a free connection of the pool

    def __init__(self, url: str, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.url = url
        self._idle: list = []  # connections ready for the next transaction (under self.lock)
        self._slots = threading.BoundedSemaphore(self.pool_size)
        self._ready = False  # schema made

    def _connect(self):
        import psycopg

        ms = self.statement_ms
        given = psycopg.conninfo.conninfo_to_dict(self.url).get("options") or ""  # the URL's own (search_path...)
        return psycopg.connect(self.url, connect_timeout=self.connect_s, autocommit=True,
                               options=f"{given} -c statement_timeout={ms} -c lock_timeout={ms * 2 // 3} "
                                       f"-c idle_in_transaction_session_timeout={4 * ms}".strip())  # fmt: skip

    def _transient(self, error: Exception) -> str | None:
        import psycopg

        if isinstance(error, Busy):
            return "busy"
        errors = psycopg.errors
        if isinstance(error, errors.SerializationFailure | errors.DeadlockDetected | errors.LockNotAvailable):
            return "busy"  # another replica's transaction held what this one needed past lock_timeout
        if isinstance(error, psycopg.OperationalError | psycopg.InterfaceError):
            with self.lock:  # the server went away: every idle connection is as dead as this one
                dead, self._idle = self._idle, []
            for conn in dead:
                conn.close()
            return "unavailable"
        return None

    @contextmanager
    def _tx(self, write: bool):
        if not self._slots.acquire(timeout=self.wait_s):
            raise Busy("no free database connection")
        conn = None
        try:
            with self.lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None or conn.closed or conn.broken:
                conn = self._connect()
            if not self._ready:
                self._make_schema(conn)
            with conn.transaction():
                cur = conn.cursor()
                yield lambda sql, params: cur.execute(self._sql(sql), params)
        finally:
            if conn is not None and not conn.closed and not conn.broken:
                with self.lock:
                    self._idle.append(conn)
            self._slots.release()

    def _make_schema(self, conn) -> None:
        with conn.transaction():  # replicas starting together: one migrates at a time
            cur = conn.cursor()
            run = lambda sql, params: cur.execute(self._sql(sql), params)  # noqa: E731
            self._serialise(run, MIGRATION_LOCK)
            self._migrate(run)
        self._ready = True

    def close(self) -> None:
        with self.lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
