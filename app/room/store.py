"""The process's room store, chosen from its environment: PostgreSQL when DATABASE_URL is set (replicas), else the
SQLite file (core.room.sql.default_path()). The stores themselves: core/room/sql.py."""

from __future__ import annotations

import os
import threading

from core.room.sql import PostgresStore, SQLiteStore
from core.room.store import Store

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
