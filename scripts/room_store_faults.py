"""The room store under the faults a class meets, measured (results/room_store_faults.json):

1. Two processes on one SQLite file (what `dev.sh serve` gives its servers): a facilitator process clicks
   `move()` while a second process writes what 30 following learners write (their positions and answers). Counted:
   clicks lost (any exception), clicks refused in words (RoomError 'busy'), and each click's time.
2. PostgreSQL away: a private cluster (scripts/postgres.sh on its own port and folder) is stopped under a live
   store: the seconds until a room action says so (RoomError 'unavailable'; target under 5 s), for a refused
   connection and for an address that does not answer (connect timeout); then the cluster is started again and the
   same store's next action works (seconds from the start command to the first action that succeeds).

    python scripts/room_store_faults.py [--clicks 200] [--out results/room_store_faults.json]
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core import room as rules  # noqa: E402
from core.room import RoomError  # noqa: E402
from core.room.service import rooms_on  # noqa: E402
from core.room.sql import PostgresStore, SQLiteStore  # noqa: E402
from scripts.app_server import free_port  # noqa: E402
from scripts.load_test import loadavg  # noqa: E402

LEARNERS = 30


def learners_process(path: str, code: str, tokens: list[str], stop_at: float) -> None:
    """The other server: its learners report where they are, as fast as their rate limits let them."""
    store = rooms_on(SQLiteStore(path))
    i = 0
    while time.time() < stop_at:
        token = tokens[i % len(tokens)]
        try:
            store.where(code, token, i % 3, True)
        except RoomError:
            pass  # 'rate' (a learner's own limit) or 'busy': the learner side is not what is measured
        i += 1
    store.close()


def two_processes_on_sqlite(clicks: int) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="room-faults-"))
    path = str(folder / "rooms.sqlite3")
    store = rooms_on(SQLiteStore(path))
    code, control = store.create("qkv-softmax")
    tokens = [store.join(code, f"Learner {i}", "en") for i in range(LEARNERS)]
    other = multiprocessing.get_context("spawn").Process(
        target=learners_process, args=(path, code, tokens, time.time() + 3600)
    )
    other.start()
    time.sleep(1.0)  # the other process is writing
    lost, refused, times = [], 0, []
    for i in range(clicks):
        start = time.perf_counter()
        try:
            store.move(code, control, i % 3)
        except RoomError as e:
            refused += e.key == "busy"
        except Exception as e:  # noqa: BLE001 - a lost click, counted
            lost.append(f"{type(e).__name__}: {e}")
        times.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    other.terminate()
    other.join(10)
    store.close()
    shutil.rmtree(folder, ignore_errors=True)
    times.sort()
    return {
        "clicks": clicks,
        "learners_writing_in_the_other_process": LEARNERS,
        "lost": len(lost),
        "lost_examples": lost[:3],
        "refused_busy": refused,
        "click_ms": {
            "p50": round(statistics.median(times), 2),
            "p95": round(times[int(0.95 * len(times)) - 1], 2),
            "max": round(times[-1], 2),
        },  # fmt: skip
    }


def cluster(action: str, env: dict) -> str:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), action], env=env, capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def seconds_to_sentence(action) -> tuple[float, str]:
    start = time.monotonic()
    try:
        action()
        return round(time.monotonic() - start, 3), "no error"
    except RoomError as e:
        return round(time.monotonic() - start, 3), e.key


def postgres_away() -> dict:
    data = tempfile.mkdtemp(prefix="attention-lab-pg-faults-")
    os.rmdir(data)  # scripts/postgres.sh makes its private folder itself
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=data)
    url = cluster("start", env)
    store = rooms_on(PostgresStore(url))
    out: dict = {}
    try:
        code, control = store.create("qkv-softmax")
        cluster("stop", env)
        out["stopped_server"] = {
            name: dict(zip(("seconds", "said"), seconds_to_sentence(action)))
            for name, action in (("poll", lambda: store.poll(code)), ("move", lambda: store.move(code, control, 1)))
        }
        with socket.socket() as mute:  # a server that takes the connection and never answers (a hung database)
            mute.bind(("127.0.0.1", 0))
            mute.listen(64)
            port = mute.getsockname()[1]
            silent = rooms_on(PostgresStore(url.replace(f":{env['ATTENTION_LAB_PGPORT']}/", f":{port}/")))
            said = seconds_to_sentence(lambda: silent.poll(code))
        out["server_not_answering"] = dict(zip(("seconds", "said"), said))
        start = time.monotonic()
        cluster("start", env)
        started = time.monotonic() - start
        while True:
            try:
                store.move(code, control, 2)
                break
            except RoomError:
                time.sleep(0.1)
        out["recovery"] = {"cluster_start_s": round(started, 2), "first_action_after_start_s":
                           round(time.monotonic() - start - started, 3), "step_kept": store.room(code).step == 2}  # fmt: skip
    finally:
        store.close()
        cluster("stop", env)
        shutil.rmtree(data, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clicks", type=int, default=200)
    parser.add_argument("--out", default=str(ROOT / "results" / "room_store_faults.json"))
    parser.add_argument("--sqlite-only", action="store_true", help="measure part 1 only")
    args = parser.parse_args(argv)
    from core.results import save_result
    from core.timing import machine_info

    result = {
        "command": " ".join(["python", "scripts/room_store_faults.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": machine_info("cpu"),
        "loadavg_before": loadavg(),
        "pool": {
            "size": getattr(PostgresStore, "pool_size", None),
            "connect_s": getattr(PostgresStore, "connect_s", None),
            "statement_ms": getattr(PostgresStore, "statement_ms", None),
            "sqlite_busy_s": getattr(SQLiteStore, "busy_s", None),
        },  # fmt: skip
        "limits": {k: [v.count, v.window_s] for k, v in rules.LIMITS.items()},
    }
    result["sqlite_two_processes"] = two_processes_on_sqlite(args.clicks)
    if args.sqlite_only:  # e.g. on an older store, for a before/after figure
        path = save_result(Path(args.out), result | {"loadavg_after": loadavg()})
        print(f"lost clicks: {result['sqlite_two_processes']['lost']}\nwrote {path}")
        return 0
    result["postgres_away"] = postgres_away()
    result["loadavg_after"] = loadavg()
    away = result["postgres_away"]
    result["targets"] = {
        "no_click_lost": result["sqlite_two_processes"]["lost"] == 0,
        "database_away_said_within_5s": all(
            v["seconds"] < 5 and v["said"] == "unavailable"
            for v in [*away["stopped_server"].values(), away["server_not_answering"]]
        ),
        "recovers_without_restart": away["recovery"]["step_kept"],
    }
    path = save_result(Path(args.out), result)
    print(f"targets: {result['targets']}\nwrote {path}")
    return 0 if all(result["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
