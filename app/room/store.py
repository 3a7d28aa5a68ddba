"""The process's rooms: the room service (core/room/service.py) over the store chosen from the environment,
PostgreSQL when DATABASE_URL is set (replicas), else the SQLite file (core.room.sql.default_path()), on this
server's lessons. The stores themselves: core/room/sql.py."""

from __future__ import annotations

import os
import threading

import streamlit as st

from app import catalog
from core.lessons import load_lessons
from core.room.service import Rooms
from core.room.sql import PostgresStore, SQLiteStore

_store: Rooms | None = None
_store_lock = threading.Lock()


@st.cache_resource(show_spinner=False)
def lessons() -> dict:
    """Every lesson (lessons/*.toml), read once per process; LessonError names the file and line."""
    return load_lessons(pages=list(catalog.BY_URL))


def open_store() -> Rooms:
    """The process's rooms: on PostgreSQL when DATABASE_URL is set, else on the SQLite file (default_path())."""
    global _store
    with _store_lock:
        if _store is None:
            url = os.environ.get("DATABASE_URL", "").strip()
            _store = Rooms(PostgresStore(url) if url else SQLiteStore(), lessons)
        return _store
