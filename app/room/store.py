"""The process's rooms: the room service (core/room/service.py) over the store chosen from the environment,
PostgreSQL when DATABASE_URL is set (replicas), else the SQLite file (core.room.sql.default_path()), on this
server's lessons, asking for a passcode to open a room on a hosted server (opening_passcode: the operator's
$ATTENTION_LAB_ROOM_PASSCODE, else one the process makes). The stores themselves: core/room/sql.py."""

from __future__ import annotations

import logging
import os
import threading
import time

import streamlit as st

from app import catalog, serving
from core.lessons import load_lessons
from core.room import PASSCODE_ENV, RoomError, new_passcode, room_passcode
from core.room.service import Rooms
from core.room.sql import PostgresStore, SQLiteStore

_store: Rooms | None = None
_store_lock = threading.Lock()
LOG = logging.getLogger("attention_lab")
# How often a process applies the retention rule (Rooms.purge): a closed room's names, answers and sentences go
# within this of core.room.KEEP_AFTER_CLOSE_S, whether or not anyone opens a new room.
PURGE_EVERY_S = 60.0
_made_passcode: str | None = None  # made by this process for its life (opening_passcode)
_made_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def lessons() -> dict:
    """Every lesson (lessons/*.toml), read once per process; LessonError names the file and line."""
    return load_lessons(pages=list(catalog.BY_URL))


def opening_passcode() -> str:
    """The passcode opening a room asks for in this process: the operator's $ATTENTION_LAB_ROOM_PASSCODE; else, in a
    process hosted by its settings (app.serving.hosted_process: the image, a bare `streamlit run` on a server), one
    made once for the process's life (core.room.new_passcode) and written once to its log for the operator, never
    to a page or a link, so a lone server is never open for anyone to fill with rooms; else '' (a laptop run: anyone
    who reaches it opens rooms). Processes that share rooms are all given the operator's one (scripts/serve_class.py,
    compose.yaml, deploy/k8s), so none of them makes its own. app/main.py asks at every run: the log has it from
    the process's first visitor on."""
    global _made_passcode
    chosen = room_passcode()
    if chosen or not serving.hosted_process():
        return chosen
    with _made_lock:
        if _made_passcode is None:
            _made_passcode = new_passcode()
            LOG.warning(
                "rooms: opening a room on this server asks for the passcode %s (made by this server, as %s is unset; "
                "give it to facilitators, learners need none; it lasts until this server stops)",
                _made_passcode, PASSCODE_ENV,
            )  # fmt: skip
        return _made_passcode


def open_store() -> Rooms:
    """The process's rooms: on PostgreSQL when DATABASE_URL is set, else on the SQLite file (default_path());
    opening one asks for opening_passcode() when there is one."""
    global _store
    with _store_lock:
        if _store is None:
            url = os.environ.get("DATABASE_URL", "").strip()
            _store = Rooms(PostgresStore(url) if url else SQLiteStore(), lessons, passcode=opening_passcode())
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
