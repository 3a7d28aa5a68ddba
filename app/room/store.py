"""The process's rooms: the room service (core/room/service.py) over the store chosen from the environment,
PostgreSQL when DATABASE_URL is set (replicas), else the SQLite file (core.room.sql.default_path()), on this
server's lessons, asking for the operator's passcode to open a room when $ATTENTION_LAB_ROOM_PASSCODE is set
(core.room.room_passcode). The stores themselves: core/room/sql.py."""

from __future__ import annotations

import logging
import os
import threading
import time

import streamlit as st

from app import catalog
from core.lessons import load_lessons
from core.room import RoomError, room_passcode
from core.room.service import Rooms
from core.room.sql import PostgresStore, SQLiteStore

_store: Rooms | None = None
_store_lock = threading.Lock()
LOG = logging.getLogger("attention_lab")
# How often a process applies the retention rule (Rooms.purge): a closed room's names, answers and sentences go
# within this of core.room.KEEP_AFTER_CLOSE_S, whether or not anyone opens a new room.
PURGE_EVERY_S = 60.0


@st.cache_resource(show_spinner=False)
def lessons() -> dict:
    """Every lesson (lessons/*.toml), read once per process; LessonError names the file and line."""
    return load_lessons(pages=list(catalog.BY_URL))


def open_store() -> Rooms:
    """The process's rooms: on PostgreSQL when DATABASE_URL is set, else on the SQLite file (default_path()); the
    operator's passcode, when set, to open one."""
    global _store
    with _store_lock:
        if _store is None:
            url = os.environ.get("DATABASE_URL", "").strip()
            _store = Rooms(PostgresStore(url) if url else SQLiteStore(), lessons, passcode=room_passcode())
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
