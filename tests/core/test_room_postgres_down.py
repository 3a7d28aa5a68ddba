"""PostgreSQL away and back, on a real local cluster of its own (scripts/postgres.sh on a private port and folder,
so the shared test cluster is never stopped): a room action says so in a sentence within 5 s, and the same store
works again once the database is back, without a restart of the app."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from core.room import RoomError
from core.room.service import Rooms
from core.room.sql import PostgresStore
from scripts.app_server import free_port
from tests.room_stores import LESSONS, ROOT


def cluster(action: str, env: dict) -> str:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), action], env=env, capture_output=True,
                          text=True, timeout=180)  # fmt: skip
    if done.returncode != 0:
        pytest.fail(f"scripts/postgres.sh {action} said {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def test_database_away_is_a_sentence_within_5_s_and_the_room_comes_back():
    data = f"/tmp/attention-lab-pg-away-{os.getpid()}"
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=data)
    store = None
    try:
        store = Rooms(PostgresStore(cluster("start", env)), LESSONS)
        code, control = store.create("qkv")
        token = store.join(code, "Ana", "en")
        cluster("stop", env)
        for action in (lambda: store.poll(code), lambda: store.room(code), lambda: store.move(code, control, 1),
                       lambda: store.join(code, "Bo", "en")):  # fmt: skip
            start = time.monotonic()
            with pytest.raises(RoomError, match="unavailable"):
                action()
            assert time.monotonic() - start < 5
        cluster("start", env)
        store.move(code, control, 1)  # the same store, reconnected: nothing restarted, nothing lost
        assert store.room(code).step == 1 and store.learner(code, token).name == "Ana"
    finally:
        if store is not None:
            store.close()
        cluster("stop", env)
        shutil.rmtree(data, ignore_errors=True)
        Path(data + ".lock").unlink(missing_ok=True)
