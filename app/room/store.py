"""The process's rooms: the room service (core/room/service.py) over the store chosen from the environment,
PostgreSQL when DATABASE_URL is set (replicas), else the SQLite file (core.room.sql.default_path()), on this
server's lessons, asking for a passcode to open a room on a hosted server (opening_passcode: the operator's
$ATTENTION_LAB_ROOM_PASSCODE, else one the processes sharing the room database agree on). The stores themselves:
core/room/sql.py."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import weakref

import streamlit as st

from app import catalog, serving
from core.lessons import load_lessons
from core.room import MAX_PASSCODE_CHARS, PASSCODE_ENV, RoomError, new_passcode, room_passcode
from core.room.service import Rooms
from core.room.sql import PostgresStore, SQLiteStore

_store: Rooms | None = None
_store_lock = threading.Lock()
LOG = logging.getLogger("attention_lab")
# How often a process applies the retention rule (Rooms.purge): a closed room's names, answers and sentences go
# within this of core.room.KEEP_AFTER_CLOSE_S, whether or not anyone opens a new room.
PURGE_EVERY_S = 60.0
# opening_passcode's: the process's rooms that agreed on their passcode (and logged it), and when those whose
# database was away are asked again
_agreed: weakref.WeakSet = weakref.WeakSet()
_agree_again: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_agree_lock = threading.Lock()
AGREE_AGAIN_S = 10


@st.cache_resource(show_spinner=False)
def lessons() -> dict:
    """Every lesson (lessons/*.toml), read once per process; LessonError names the file and line."""
    return load_lessons(pages=list(catalog.BY_URL))


def opening_passcode() -> None:
    """Where opening a room asks for a passcode the operator did not set ($ATTENTION_LAB_ROOM_PASSCODE unset, in a
    process hosted by its settings, app.serving.hosted_process: the image, a bare `streamlit run` on a server), the
    process agrees on it with every process sharing its room database (core.room.service.Rooms.agree_passcode):
    the first to ask makes one (core.room.new_passcode), keeps its digest there and writes the passcode once to its
    own log for the operator, never to a page or a link; the others write that one is set and which server's log
    has it. So replicas started by hand without one ask for the same passcode, and a lone server is never open for
    anyone to fill with rooms. app/main.py asks at every run: the log has it from the process's first visitor on
    (asked on a thread: no page waits for the database); a database away then is asked again AGREE_AGAIN_S later
    (meanwhile opening a room reads the store's own)."""
    if room_passcode() or not serving.hosted_process():
        return  # the operator's passcode (every process is given it), or a laptop run: nothing to agree on
    rooms = open_store()
    if not rooms.agrees_passcode or rooms in _agreed or time.monotonic() < _agree_again.get(rooms, 0.0):
        return
    if not _agree_lock.acquire(blocking=False):
        return  # asked already, and not answered yet
    threading.Thread(target=_agree, args=(rooms,), name="rooms-passcode", daemon=True).start()


def _agree(rooms: Rooms) -> None:
    """opening_passcode's question to the database, on a thread of its own: a database away (up to ~5 s of tries)
    holds up no visitor's page. Holds _agree_lock, which it releases."""
    try:
        if rooms in _agreed:
            return
        made_passcode = new_passcode()
        try:
            agreed = rooms.agree_passcode(made_passcode, made_by=f"{socket.gethostname()} (pid {os.getpid()})")
        except RoomError as e:  # the database busy or away: asked again a while later, not at every page's run
            _agree_again[rooms] = time.monotonic() + AGREE_AGAIN_S
            LOG.warning("rooms: the passcode for opening rooms is not agreed yet, the room database is %s; asked "
                        "again in %d s", e.key, AGREE_AGAIN_S)  # fmt: skip
            return
        except Exception:  # noqa: BLE001 - anything else: in the log, asked again a while later
            _agree_again[rooms] = time.monotonic() + AGREE_AGAIN_S
            LOG.warning("rooms: the passcode for opening rooms is not agreed yet", exc_info=True)
            return
        _agreed.add(rooms)
    finally:
        _agree_lock.release()
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(agreed.made))
    if agreed.made_here:
        LOG.warning(
            "rooms: opening a room on this server asks for the passcode %s (made by this server, %s, as %s is "
            "unset, and kept for every server sharing this room database; give it to facilitators, learners need "
            "none)", made_passcode, agreed.made_by, PASSCODE_ENV,
        )  # fmt: skip
    else:
        LOG.warning(
            "rooms: opening a room on this server asks for the passcode that the server %s made at %s and wrote to "
            "its log (%s is unset; every server sharing this room database asks for that one)",
            agreed.made_by, made, PASSCODE_ENV,
        )  # fmt: skip


def open_store() -> Rooms:
    """The process's rooms: on PostgreSQL when DATABASE_URL is set, else on the SQLite file (default_path());
    opening one asks for the operator's passcode when it is set, else, in a hosted process, for the one the
    processes sharing the database agree on (opening_passcode)."""
    global _store
    with _store_lock:
        if _store is None:
            url = os.environ.get("DATABASE_URL", "").strip()
            chosen = room_passcode()
            if len(chosen) > MAX_PASSCODE_CHARS:  # the box would cut what a facilitator types: no room would open
                LOG.error("rooms: %s has %d characters, and /room's passcode box takes %d: no facilitator can type "
                          "it, so no room opens on this server; set a shorter one", PASSCODE_ENV, len(chosen),
                          MAX_PASSCODE_CHARS)  # fmt: skip
            _store = Rooms(PostgresStore(url) if url else SQLiteStore(), lessons, passcode=chosen,
                           agreed_passcode=not chosen and serving.hosted_process())  # fmt: skip
            threading.Thread(target=_purge_while_open, args=(_store,), name="rooms-purge", daemon=True).start()
        return _store


def _purge_while_open(rooms: Rooms) -> None:
    """Apply the retention rule every PURGE_EVERY_S while `rooms` is the process's (a test may replace it)."""
    while True:
        time.sleep(PURGE_EVERY_S)
        if _store is not rooms:
            return
        try:
            rooms.purge()
        except RoomError as e:  # the database busy or away: tried again next time
            LOG.warning("rooms: the retention rule could not run now (%s)", e.key)
        except Exception:  # noqa: BLE001 - anything else: in the log, tried again next time
            LOG.warning("rooms: the retention rule could not run now", exc_info=True)
