"""Where rooms live: outside the Streamlit process, so a server restart loses nothing and several replicas serve
one class. SQLiteStore (a file, the standard library, WAL) by default; PostgresStore (psycopg) when DATABASE_URL
is set. Both run the same SQL and the same tests (tests/core/test_room_store.py); what differs between them is
in DIALECTS.

A store only stores: in one transaction (`atomic`) it reads and writes what the room service
(core/room/service.py) asks, which decides what is allowed (the control token, the phase, the step, rate limits,
expiry, sizes). A store decides nothing; the one refusal it says is its own: the database busy or away.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from core.lessons import Answer
from core.room import AnswerRow, RoomError
from core.room.store import Learner, Room


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
    for_update: str  # a writer's read of a room holds its row until it commits ('': the write lock already does)


DIALECTS = {
    "sqlite": Dialect("?", "REAL", "INTEGER PRIMARY KEY AUTOINCREMENT",
                      "SELECT name FROM sqlite_master WHERE type = 'table'", "", ""),
    "postgresql": Dialect("%s", "DOUBLE PRECISION", "BIGSERIAL PRIMARY KEY",
                          "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
                          "SELECT pg_advisory_xact_lock(?)", " FOR UPDATE"),
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
    (  # 3: the passcode for opening rooms that the first server of this database made, where the operator set none:
        # its digest only (one row, id 1), and which server process made it when (whose log printed it)
        """CREATE TABLE opening_passcode (
  id INTEGER PRIMARY KEY, digest TEXT NOT NULL, made_by TEXT NOT NULL, made {real} NOT NULL)""",
    ),
    (  # 4: the control each browser holds, given from the room's control token, until that browser gives it up
        """CREATE TABLE controls (
  id {serial}, code TEXT NOT NULL, token TEXT NOT NULL, given {real} NOT NULL)""",
        "CREATE UNIQUE INDEX controls_by_room ON controls (code, token)",
    ),
)
VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied {real} NOT NULL)"
ROOM_COLUMNS = "code, lesson, step, question, phase, answer, shown, version, activity, created, expires, locked"
MIGRATION_LOCK = 7205  # PostgreSQL: replicas starting together migrate one at a time
ADMISSION_LOCK = 7206  # PostgreSQL: joins and room openings, from every replica, one at a time


class Busy(Exception):
    """Every connection of the pool is in use."""


STATS_ENV = "ATTENTION_LAB_ROOM_STORE_STATS"  # a folder: each process writes its store's transaction times there


class TxTimes:
    """How long this process's transactions waited before they began (for a lock of this process, a connection,
    SQLite's write lock) and how long they held their connection, read and write apart: what
    scripts/load_test_room.py reads per step. Kept always (two clock reads a transaction); written to
    $ATTENTION_LAB_ROOM_STORE_STATS/<pid>.json at most every DUMP_S when that is set."""

    DUMP_S = 0.25

    def __init__(self, folder: str | None = None):
        self.folder = Path(folder) if folder else None
        self.totals = {kind: {"n": 0, "wait_s": 0.0, "held_s": 0.0, "max_wait_s": 0.0} for kind in ("read", "write")}
        self.lock = threading.Lock()
        self.dumped = 0.0

    def add(self, write: bool, wait_s: float, held_s: float) -> None:
        with self.lock:
            t = self.totals["write" if write else "read"]
            t["n"] += 1
            t["wait_s"] += wait_s
            t["held_s"] += held_s
            t["max_wait_s"] = max(t["max_wait_s"], wait_s)
            now = time.monotonic()
            if self.folder is None or now - self.dumped < self.DUMP_S:
                return
            self.dumped = now
            text = json.dumps(self.totals)
        path = self.folder / f"{os.getpid()}.json"
        path.with_suffix(".tmp").write_text(text)
        path.with_suffix(".tmp").replace(path)  # a reader never sees half a file


ATTEMPTS = 3  # tries of one action while the database is busy or away
DEADLINE_S = 4.5  # no new try starts later than this after the first: a visitor reads a sentence within ~5 s


class SqlStore:
    """What both stores share: the schema's migrations, transactions (`atomic`) and, in a transaction (SqlTx),
    the reads and writes the room service (core/room/service.py) asks for; a subclass gives the connection
    (`_tx`) and the parameter style."""

    dialect = DIALECTS["sqlite"]

    def __init__(self, clock: Callable[[], float] = time.time):
        self.clock = clock
        self.lock = threading.Lock()
        self.times = TxTimes(os.environ.get(STATS_ENV))

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

    @contextmanager
    def atomic(self, write: bool):
        """One transaction: a SqlTx whose reads and writes commit together when the block ends (write: it will
        write; a writer holds the room rows it reads until it commits), or not at all when it raises."""
        asked = time.perf_counter()
        with self._tx(write) as run:
            begun = time.perf_counter()
            yield SqlTx(run, self.dialect, write)
        self.times.add(write, begun - asked, time.perf_counter() - begun)

    def attempt(self, action: Callable[[], object]):
        """Run `action` (which opens one transaction). While the database is busy (another process holds SQLite's
        write lock, PostgreSQL reports a serialization failure) or away (PostgreSQL restarting), it is run again
        briefly; then RoomError('busy' | 'unavailable'): a sentence, never a database traceback."""
        start = time.monotonic()
        for n in range(1, ATTEMPTS + 1):
            try:
                return action()
            except RoomError:
                raise
            except Exception as error:
                key = self._transient(error)
                if key is None:
                    raise
                if n == ATTEMPTS or time.monotonic() - start > DEADLINE_S / 2:
                    raise RoomError(key, f"{type(error).__name__}: {error}") from None
                time.sleep(0.05 * 2**n)
        raise AssertionError("unreachable")

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

    def close(self) -> None:
        raise NotImplementedError


def _answer_to_json(answer: Answer | None) -> str:
    """A room's right answer as its column keeps it ('' for none): the one place that writes it."""
    if answer is None:
        return ""
    correct = list(answer.correct) if isinstance(answer.correct, tuple) else answer.correct
    detail = {k: (list(v) if isinstance(v, tuple) else v) for k, v in answer.detail.items()}
    return json.dumps(
        {"kind": answer.kind, "correct": correct, "options": list(answer.options), "tolerance": answer.tolerance,
         "detail": detail}, default=str, ensure_ascii=False)  # fmt: skip


def _answer_from_json(text: str) -> Answer | None:
    """The column read back as the engine's typed Answer (an order's tuple, a number's float): the one reader."""
    if not text:
        return None
    d = json.loads(text)
    correct = tuple(d["correct"]) if d["kind"] == "order" else d["correct"]
    return Answer(d["kind"], correct, tuple(d["options"]), d["tolerance"], d.get("detail") or {})


ROOM_FIELDS = ("step", "question", "phase", "answer", "shown", "expires", "locked")  # what update_room may set
LEARNER_FIELDS = ("step", "following", "lost", "lang")  # what update_learner may set
COUNTERS = ("version", "activity")


class SqlTx:
    """One transaction's reads and writes, as the room service asks for them: it keeps what it is told and reads
    what is there (an expired room, any control digest), deciding nothing. Tokens arrive as their digests."""

    def __init__(self, run, dialect: Dialect, write: bool):
        self.run, self.dialect, self.write = run, dialect, write

    def hold_admissions(self) -> None:
        """Joins and room openings, from every process and replica, one at a time until this transaction ends (the
        counts they read stay true until they write)."""
        if self.dialect.hold:
            self.run(self.dialect.hold, (ADMISSION_LOCK,))

    # -- rooms ---------------------------------------------------------------------------------------------

    def room(self, code: str) -> tuple[Room, str] | None:
        """The room as stored, expired or not, and its control token's digest; a writer holds its row."""
        lock = self.dialect.for_update if self.write else ""
        row = self.run(f"SELECT {ROOM_COLUMNS}, control FROM rooms WHERE code = ?{lock}", (code,)).fetchone()
        if row is None:
            return None
        fields = list(row[:12])
        fields[5], fields[11] = _answer_from_json(fields[5]), bool(fields[11])
        return Room(*fields), row[12]

    def counters(self, code: str) -> tuple[int, int, float] | None:
        """(version, activity, expires): one indexed read."""
        row = self.run("SELECT version, activity, expires FROM rooms WHERE code = ?", (code,)).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def code_taken(self, code: str) -> bool:
        return self.run("SELECT 1 FROM rooms WHERE code = ?", (code,)).fetchone() is not None

    def rooms_open_at(self, now: float) -> int:
        return self.run("SELECT COUNT(*) FROM rooms WHERE expires > ?", (now,)).fetchone()[0]

    def insert_room(self, code: str, control_digest: str, lesson: str, created: float, expires: float) -> None:
        self.run("INSERT INTO rooms (code, control, lesson, created, expires) VALUES (?, ?, ?, ?, ?)",
                 (code, control_digest, lesson, created, expires))  # fmt: skip

    def update_room(self, code: str, bump: tuple[str, ...] = (), **fields) -> None:
        """Set `fields` (of ROOM_FIELDS) and add one to each counter in `bump` ('version', 'activity')."""
        unknown = set(fields) - set(ROOM_FIELDS) | set(bump) - set(COUNTERS)
        if unknown:
            raise ValueError(f"not a room column: {sorted(unknown)}")
        values = {
            k: (_answer_to_json(v) if k == "answer" else int(v) if k == "locked" else v) for k, v in fields.items()
        }
        sets = [f"{k} = ?" for k in values] + [f"{c} = {c} + 1" for c in bump]
        if sets:
            self.run(f"UPDATE rooms SET {', '.join(sets)} WHERE code = ?", (*values.values(), code))

    def rooms_expired_before(self, moment: float) -> list[str]:
        return [r[0] for r in self.run("SELECT code FROM rooms WHERE expires < ?", (moment,)).fetchall()]

    def delete_room(self, code: str) -> None:
        """The room with everything in it: learners, answers, sentences, counted actions."""
        for table in ("answers", "learners", "gallery", "events", "controls", "rooms"):
            self.run(f"DELETE FROM {table} WHERE code = ?", (code,))

    # -- browsers' controls --------------------------------------------------------------------------------

    def holds_control(self, code: str, token_digest: str) -> bool:
        row = self.run("SELECT 1 FROM controls WHERE code = ? AND token = ?", (code, token_digest)).fetchone()
        return row is not None

    def insert_control(self, code: str, token_digest: str, given: float) -> None:
        self.run("INSERT INTO controls (code, token, given) VALUES (?, ?, ?)", (code, token_digest, given))

    def controls(self, code: str) -> list[str]:
        """The digests of the browsers' controls of room `code`, oldest given first."""
        rows = self.run("SELECT token FROM controls WHERE code = ? ORDER BY id", (code,)).fetchall()
        return [r[0] for r in rows]

    def delete_control(self, code: str, token_digest: str) -> bool:
        """True when that control was held (and is no more)."""
        cur = self.run("DELETE FROM controls WHERE code = ? AND token = ?", (code, token_digest))
        return cur.rowcount == 1

    # -- learners ------------------------------------------------------------------------------------------

    def learner(self, code: str, token_digest: str) -> Learner | None:
        row = self.run("SELECT name, lang, step, following, lost FROM learners WHERE code = ? AND token = ?",
                       (code, token_digest)).fetchone()  # fmt: skip
        return None if row is None else Learner(row[0], row[1], row[2], bool(row[3]), bool(row[4]))

    def learners_in(self, code: str) -> int:
        return self.run("SELECT COUNT(*) FROM learners WHERE code = ?", (code,)).fetchone()[0]

    def learners_seated_at(self, now: float) -> int:
        """Learners in every room open at `now`, all rooms of the database together."""
        return self.run("SELECT COUNT(*) FROM learners l JOIN rooms r ON l.code = r.code WHERE r.expires > ?",
                        (now,)).fetchone()[0]  # fmt: skip

    def insert_learner(self, code: str, token_digest: str, name: str, lang: str, step: int, joined: float) -> None:
        self.run("INSERT INTO learners (code, token, name, lang, step, joined) VALUES (?, ?, ?, ?, ?, ?)",
                 (code, token_digest, name, lang, step, joined))  # fmt: skip

    def update_learner(self, code: str, token_digest: str, **fields) -> None:
        """Set `fields` (of LEARNER_FIELDS) of one learner."""
        if set(fields) - set(LEARNER_FIELDS):
            raise ValueError(f"not a learner column: {sorted(set(fields) - set(LEARNER_FIELDS))}")
        values = [v if k == "lang" else int(v) for k, v in fields.items()]
        sets = ", ".join(f"{k} = ?" for k in fields)
        self.run(f"UPDATE learners SET {sets} WHERE code = ? AND token = ?", (*values, code, token_digest))

    def move_following(self, code: str, step: int) -> None:
        """Every learner of room `code` who follows it, to `step`."""
        self.run("UPDATE learners SET step = ? WHERE code = ? AND following = 1", (step, code))

    def delete_learner(self, code: str, token_digest: str) -> None:
        """A learner with their answers, sentences and counted actions."""
        for table in ("answers", "gallery", "learners"):
            self.run(f"DELETE FROM {table} WHERE code = ? AND token = ?", (code, token_digest))
        self.run("DELETE FROM events WHERE code = ? AND who = ?", (code, token_digest))

    def learners(self, code: str) -> list[tuple[str, int, bool]]:
        """(name, step, following) of every learner, in joining order."""
        rows = self.run("SELECT name, step, following FROM learners WHERE code = ? ORDER BY joined", (code,))
        return [(n, s, bool(f)) for n, s, f in rows.fetchall()]

    def seats(self, code: str) -> list[tuple[str, str]]:
        """(token digest, name) of every learner, in joining order."""
        rows = self.run("SELECT token, name FROM learners WHERE code = ? ORDER BY joined", (code,)).fetchall()
        return [(t, n) for t, n in rows]

    def lost(self, code: str) -> int:
        return self.run("SELECT COUNT(*) FROM learners WHERE code = ? AND lost = 1", (code,)).fetchone()[0]

    def steps_of_learners(self, code: str) -> list[int]:
        return [r[0] for r in self.run("SELECT step FROM learners WHERE code = ?", (code,)).fetchall()]

    def languages(self, code: str) -> list[tuple[str, int]]:
        """(language, how many learners joined or switched to it), by language."""
        rows = self.run("SELECT lang, COUNT(*) FROM learners WHERE code = ? GROUP BY lang ORDER BY lang", (code,))
        return [(lang, n) for lang, n in rows.fetchall()]

    # -- answers and sentences -----------------------------------------------------------------------------

    def insert_answer(self, code: str, question: str, token_digest: str, response: str, correct: bool,
                      at: float) -> bool:  # fmt: skip
        """Keep one response: True, or False when this learner's answer to `question` is already kept."""
        cur = self.run("INSERT INTO answers (code, question, token, response, correct, at) VALUES (?, ?, ?, ?, ?, ?) "
                       "ON CONFLICT DO NOTHING", (code, question, token_digest, response, int(correct), at))  # fmt: skip
        return cur.rowcount == 1

    def my_answer(self, code: str, question: str, token_digest: str) -> tuple[str, bool] | None:
        row = self.run("SELECT response, correct FROM answers WHERE code = ? AND question = ? AND token = ?",
                       (code, question, token_digest)).fetchone()  # fmt: skip
        return None if row is None else (row[0], bool(row[1]))

    def responses(self, code: str, question: str) -> list[str]:
        rows = self.run("SELECT response FROM answers WHERE code = ? AND question = ?", (code, question))
        return [r[0] for r in rows.fetchall()]

    def answers(self, code: str) -> list[AnswerRow]:
        rows = self.run("SELECT a.question, l.name, a.response, a.correct, a.at FROM answers a JOIN learners l "
                        "ON a.code = l.code AND a.token = l.token WHERE a.code = ? ORDER BY a.at, l.joined, l.name",
                        (code,))  # fmt: skip
        return [AnswerRow(q, n, r, bool(c), at) for q, n, r, c, at in rows.fetchall()]

    def insert_sentence(self, code: str, token_digest: str, step: int, sentence: str, at: float) -> None:
        self.run("INSERT INTO gallery (code, token, step, sentence, at) VALUES (?, ?, ?, ?, ?)",
                 (code, token_digest, step, sentence, at))  # fmt: skip

    def gallery(self, code: str, step: int) -> list[tuple[str, str]]:
        """(name, sentence) for `step`, oldest first."""
        rows = self.run("SELECT l.name, g.sentence FROM gallery g JOIN learners l ON g.code = l.code AND "
                        "g.token = l.token WHERE g.code = ? AND g.step = ? ORDER BY g.id", (code, step))  # fmt: skip
        return [(n, s) for n, s in rows.fetchall()]

    def has_sentence(self, code: str, sentence: str) -> bool:
        row = self.run("SELECT 1 FROM gallery WHERE code = ? AND sentence = ? LIMIT 1", (code, sentence)).fetchone()
        return row is not None

    # -- counted actions -----------------------------------------------------------------------------------

    def times(self, code: str, who: str, kind: str, since: float) -> list[float]:
        rows = self.run("SELECT at FROM events WHERE code = ? AND who = ? AND kind = ? AND at > ?",
                        (code, who, kind, since))  # fmt: skip
        return [r[0] for r in rows.fetchall()]

    def record(self, code: str, who: str, kind: str, at: float) -> None:
        self.run("INSERT INTO events (code, who, kind, at) VALUES (?, ?, ?, ?)", (code, who, kind, at))

    def delete_events_before(self, moment: float) -> None:
        self.run("DELETE FROM events WHERE at < ?", (moment,))

    # -- the servers' own passcode for opening rooms -------------------------------------------------------

    def opening_passcode(self) -> tuple[str, str, float] | None:
        """(digest, made_by, made) of the passcode a server of this database made, or None."""
        row = self.run("SELECT digest, made_by, made FROM opening_passcode WHERE id = 1", ()).fetchone()
        return None if row is None else (row[0], row[1], row[2])

    def keep_opening_passcode(self, passcode_digest: str, made_by: str, made: float) -> None:
        """Keep this one unless one is kept already. Two servers at once: one insert wins, the other's does nothing
        (SQLite: they take turns on the write lock; PostgreSQL: the second waits on the first's row, then finds it)."""
        self.run("INSERT INTO opening_passcode (id, digest, made_by, made) VALUES (1, ?, ?, ?) ON CONFLICT DO NOTHING",
                 (passcode_digest, made_by, made))  # fmt: skip


def default_path() -> Path:
    """$ATTENTION_LAB_ROOMS, else rooms.sqlite3 in $ATTENTION_LAB_CACHE or ~/.cache/attention-lab."""
    if os.environ.get("ATTENTION_LAB_ROOMS"):
        return Path(os.environ["ATTENTION_LAB_ROOMS"])
    cache = os.environ.get("ATTENTION_LAB_CACHE") or Path.home() / ".cache" / "attention-lab"
    return Path(cache) / "rooms.sqlite3"


class SQLiteStore(SqlStore):
    """A file; several processes on one host may share it (WAL). Only its owner may read it (0600): it holds
    learners' names and answers.

    Writers take turns on one connection (the process's lock, then SQLite's write lock across processes); readers
    each take a connection of their own, so a read never waits for a write of this process (in WAL mode a reader
    reads the last commit while a writer writes). A class's step is a burst of reads, most of a learner's
    transactions: on the one connection they queued behind each other and behind a writer waiting for another
    process's write lock (scripts/load_test_room.py counts the wait)."""

    busy_s = 1.5  # one attempt waits this long for another process's write lock (three attempts at most)
    idle_readers = 8  # reading connections kept open for the next read; more are opened while reads overlap

    def __init__(self, path: str | Path | None = None, clock: Callable[[], float] = time.time):
        super().__init__(clock)
        self.path = Path(path) if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))  # SQLite's -wal and -shm copy these bits
        os.chmod(self.path, 0o600)  # a file made by an older version or another umask
        self.conn = self._connect()  # the writers'
        self._write_ahead_log()
        self.conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a committed answer survives a crash of the app
        self._readers: list[sqlite3.Connection] = []  # idle reading connections (under self._pool)
        self._pool = threading.Lock()
        self.migrate()  # BEGIN IMMEDIATE: processes starting together migrate one at a time

    def _write_ahead_log(self) -> None:
        """WAL mode (kept in the file). Asked while another process starting at once switches a new file to it or
        migrates, SQLite may say 'locked' at once, without waiting out the busy timeout: asked again meanwhile."""
        deadline = time.monotonic() + self.busy_s
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=self.busy_s, isolation_level=None, check_same_thread=False)

    def _transient(self, error: Exception) -> str | None:
        if isinstance(error, sqlite3.OperationalError):
            return "busy" if "locked" in str(error) or "busy" in str(error) else "unavailable"
        return None

    @contextmanager
    def _tx(self, write: bool):
        """One transaction. A writer takes the file's write lock before it reads (BEGIN IMMEDIATE): a deferred
        transaction that read first could not write after another process's commit ('database is locked' at
        once, the busy timeout does not apply). A reader does not, on a connection of its own: reads from every
        thread and process go side by side in WAL mode."""
        if write:
            with self.lock:
                yield from self._in_transaction(self.conn, "BEGIN IMMEDIATE")
            return
        with self._pool:
            conn = self._readers.pop() if self._readers else None
        conn = conn or self._connect()
        try:
            yield from self._in_transaction(conn, "BEGIN")
        finally:
            with self._pool:
                keep = len(self._readers) < self.idle_readers and not conn.in_transaction
                if keep:
                    self._readers.append(conn)
            if not keep:
                conn.close()

    @staticmethod
    def _in_transaction(conn: sqlite3.Connection, begin: str):
        conn.execute(begin)
        try:
            yield lambda sql, params: conn.execute(sql, params)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()
        with self._pool:
            idle, self._readers = self._readers, []
        for conn in idle:
            conn.close()


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
