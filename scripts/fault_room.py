"""Faults during a study room, on two server processes behind nginx (scripts/serve_class.py, what `dev.sh serve`
starts) with the rooms in a PostgreSQL cluster of its own (scripts/postgres.sh on a private port and folder).

A facilitator, a projector view and N learners, each a session speaking Streamlit's websocket protocol with its
own cookies (scripts/load_test_room.py's client). When a connection drops, a session does what the browser's page
does: it opens the websocket again (nginx sends it to a live server) and reruns the page at the link it shows.
A browser runs the line of script that keeps the facilitator's control cookie; this client keeps the same cookie.

Acts, in one room of the lesson --lesson:
  kill      a question is open, half the learners have answered; the server with the most learners is killed
            (SIGKILL). Its sessions reconnect to the other: each is the same learner (the link carries the seat),
            the board still has N learners, the rest answer, every answer is kept once.
  restart   the next question is open, half have answered; both servers and nginx are stopped and started
            again. Every session comes back; nothing is lost; the rest answer.
  db-away   PostgreSQL is stopped for --db-away-s seconds: every session says so in a sentence (timed), the
            facilitator's click meanwhile is a sentence too; once it is back, the reveal reaches every learner.
Throughout: no exception box and no "something went wrong" sentence on any session.

    python scripts/fault_room.py                                  # -> results/fault_room.json
    python scripts/fault_room.py --learners 3 --db-away-s 6 --out /tmp/fault.json   # the test's short version
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from app import i18n
from scripts.app_server import free_port
from scripts.load_test import HOST, git_version, loadavg
from scripts.load_test_room import LiveSession, wait_for

ROOT = Path(__file__).resolve().parents[1]
UNAVAILABLE = i18n.text("en", "room", "unavailable")
UNEXPECTED = i18n.text("en", "common", "unexpected")
RIGHT = i18n.text("en", "room", "right_answer", answer="")


class FaultSession(LiveSession):
    """A tab that survives its connection: reconnects as the page does, and remembers the alerts it was shown."""

    def __init__(self, port: int, timeout_s: float, name: str):
        super().__init__(port, timeout_s, name)
        self.connected = asyncio.Event()
        self.closing = False
        self.replica = ""  # the server nginx sent this browser to (its X-Lab-Replica header)
        self.extra_cookies: dict[str, str] = {}  # what a browser's page script sets (the control cookie)
        self.drops: list[float] = []  # when the connection dropped
        self.back: list[float] = []  # when a page was drawn again after a drop
        self.alerts: list[tuple[float, str]] = []  # (time, text) of every warning / error / success drawn
        self.unexpected: list[str] = []

    def cookie_header(self) -> str:
        jar = [f"{c.name}={c.value}" for c in self.cookies] + [f"{k}={v}" for k, v in self.extra_cookies.items()]
        return "; ".join(jar)

    def _get(self, url: str) -> None:
        with self._http.open(url, timeout=self.timeout_s) as r:
            r.read()
            self.replica = r.headers.get("X-Lab-Replica", self.replica)

    def delta(self, delta) -> None:
        super().delta(delta)
        if delta.WhichOneof("type") == "new_element" and delta.new_element.WhichOneof("type") == "alert":
            body = delta.new_element.alert.body
            self.alerts.append((time.monotonic(), body))
            if UNEXPECTED in body:
                self.unexpected.append(body[:300])

    def handle(self, raw: bytes) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        done = msg.WhichOneof("type") == "script_finished" and msg.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
        super().handle(raw)
        if done and self.drops and len(self.back) < len(self.drops):
            self.back.append(time.monotonic())

    async def connect(self) -> None:
        self.ws = await websockets.connect(
            f"ws://{HOST}:{self.port}/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=min(self.timeout_s, 10),
            ping_interval=None,
            proxy=None,
            additional_headers={"Cookie": self.cookie_header()},
        )
        self.connected.set()

    async def start(self, url: str, query: str) -> None:
        await asyncio.to_thread(self._get, f"http://{HOST}:{self.port}/{url}" + (f"?{query}" if query else ""))
        await self.connect()
        self.query = query
        self.tasks = [asyncio.create_task(self.reader())]  # fragment timers: armed by the server's messages
        await self.send(ClientState(query_string=query, page_name=url))

    async def send(self, client_state: ClientState) -> None:
        await asyncio.wait_for(self.connected.wait(), self.timeout_s)
        try:
            await super().send(client_state)
        except websockets.ConnectionClosed:
            pass  # the reader reconnects; the page reruns then

    async def reader(self) -> None:
        while not self.closing:
            try:
                async for raw in self.ws:
                    self.handle(raw)
            except websockets.ConnectionClosed:
                pass
            if self.closing:
                return
            self.connected.clear()
            self.drops.append(time.monotonic())
            self.disarm()  # the rerun below arms them again
            self.in_flight = False
            self.idle.set()
            while not self.closing:  # the page retries until a server answers
                try:
                    await self.connect()
                    break
                except (OSError, TimeoutError, websockets.InvalidHandshake):
                    await asyncio.sleep(0.5)
            # the page reruns at the link it shows; sent from a task, since this reader must read the answer
            rerun = ClientState(query_string=self.query, page_script_hash=self.page_hash)
            self.tasks.append(asyncio.create_task(self.send(rerun)))

    async def close(self) -> None:
        self.closing = True
        await super().close()

    def said_since(self, text: str, since: float) -> float | None:
        """Seconds from `since` to the first alert containing `text`, or None."""
        return next((t - since for t, body in self.alerts if t >= since and text in body), None)


def cluster(action: str, env: dict) -> str:
    done = subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), action], env=env, capture_output=True,
                          text=True, timeout=180)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"scripts/postgres.sh {action} said {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def ms(seconds: list[float]) -> dict:
    values = sorted(round(1000 * s) for s in seconds)
    return {"n": len(values), "max_ms": values[-1] if values else None, "all_ms": values}


class Room:
    """The sessions of one room and what they do."""

    def __init__(self, args, port: int, store, code: str, control: str, tokens: list[str]):
        self.args, self.store, self.code, self.control, self.tokens = args, store, code, control, tokens
        self.facilitator = FaultSession(port, args.timeout, "facilitator")
        self.projector = FaultSession(port, args.timeout, "projector")
        self.learners = [FaultSession(port, args.timeout, f"learner{i}") for i in range(len(tokens))]

    @property
    def sessions(self) -> list[FaultSession]:
        return [self.facilitator, self.projector, *self.learners]

    async def open(self) -> None:
        self.facilitator.extra_cookies[f"lab_control_{self.code}"] = self.control
        await self.facilitator.start("room", f"room={self.code}&key={self.control}")
        await self.projector.start("room", f"room={self.code}&mode=projector")
        for s, token in zip(self.learners, self.tokens):
            await s.start("room", f"room={self.code}&me={token}")
            await s.click("room-go-step")
        following = await wait_for(lambda: all(s.fragments for s in self.learners), self.args.timeout)
        assert following, "not every learner is on the room's step"

    async def next_question(self) -> str:
        """The facilitator goes to the next step with a question and opens it; every learner sees its form."""
        for _ in range(5):
            await self.facilitator.click("room-next")
            if await wait_for(lambda: self.facilitator.has("room-open-q"), 5):
                break
        await self.facilitator.click("room-open-q")
        shown = await wait_for(lambda: all(s.has("room-submit") for s in self.learners), self.args.timeout)
        assert shown, "not every learner was shown the question"
        return self.store.room(self.code).question

    async def answer(self, learners: list[FaultSession]) -> None:
        from core import room as rules

        right = rules.right_answer(self.store.room(self.code))
        for s in learners:
            assert await wait_for(lambda s=s: s.has("room-submit"), self.args.timeout), f"{s.name} has no form"
            fid = next(iter(s.fragments), "")
            if right.kind == "number":
                widget = {"room-number": {"string_value": "0.5"}}
            elif right.kind == "order":
                widget = {"room-order": {"string_array_value": {"data": list(right.options)}}}
            else:
                widget = {"room-pick": {"string_value": right.options[0]}}
            await s.click("room-submit", fid, **widget)

    def counts(self, question: str) -> dict:
        return {"learners": len(self.store.steps_of_learners(self.code)),
                "answers": len(self.store.responses(self.code, question))}  # fmt: skip

    async def back_after(self, sessions: list[FaultSession], drops_before: list[int], timeout: float) -> bool:
        return await wait_for(
            lambda: all(len(s.back) > n and (s is not self.facilitator or s.has("room-next")) and
                        (s in (self.facilitator, self.projector) or s.fragments)
                        for s, n in zip(sessions, drops_before)), timeout)  # fmt: skip


async def act_kill(room: Room, lab) -> dict:
    n = len(room.learners)
    question = await room.next_question()
    first, rest = room.learners[: n // 2], room.learners[n // 2 :]
    await room.answer(first)
    by_replica: dict[str, int] = {}
    for s in room.learners:
        by_replica[s.replica] = by_replica.get(s.replica, 0) + 1
    victim_addr = max(by_replica, key=by_replica.get)
    index = [f"127.0.0.1:{p}" for p in lab.ports].index(victim_addr)
    moved = [s for s in room.sessions if s.replica == victim_addr]
    drops = [len(s.drops) for s in moved]
    t0 = time.monotonic()
    os.killpg(lab.procs[index].pid, signal.SIGKILL)
    back = await room.back_after(moved, drops, room.args.timeout)
    recovered = [s.back[d] - t0 for s, d in zip(moved, drops) if len(s.back) > d]
    await room.answer(rest)
    kept = await wait_for(lambda: room.counts(question)["answers"] == n, room.args.timeout)
    drawn = await wait_for(lambda: room.facilitator.chart_total == n, room.args.timeout)
    return {"killed": victim_addr, "learners_on_it": by_replica[victim_addr], "sessions_moved": len(moved),
            "facilitator_moved": room.facilitator in moved, "all_back": back, "kill_to_page_drawn": ms(recovered),
            "after": room.counts(question), "all_answers_kept": kept, "histogram_shows_all": drawn,
            "ok": back and kept and drawn and room.counts(question) == {"learners": n, "answers": n}}  # fmt: skip


async def act_restart(room: Room, lab_factory) -> tuple[dict, object]:
    n = len(room.learners)
    question = await room.next_question()
    first, rest = room.learners[: n // 2], room.learners[n // 2 :]
    await room.answer(first)
    before = room.counts(question)
    drops = [len(s.drops) for s in room.sessions]
    t0 = time.monotonic()
    lab = await asyncio.to_thread(lab_factory, True)
    stopped = time.monotonic() - t0
    await asyncio.to_thread(lab.start)
    up = time.monotonic() - t0
    back = await room.back_after(room.sessions, drops, room.args.timeout)
    recovered = [s.back[d] - t0 for s, d in zip(room.sessions, drops) if len(s.back) > d]
    kept_before = room.counts(question) == before
    await room.answer(rest)
    kept = await wait_for(lambda: room.counts(question)["answers"] == n, room.args.timeout)
    result = {"answers_before": before, "stop_s": round(stopped, 1), "servers_up_s": round(up, 1),
              "all_back": back, "restart_to_page_drawn": ms(recovered), "answers_kept_over_restart": kept_before,
              "after": room.counts(question), "ok": back and kept and kept_before and
              room.counts(question) == {"learners": n, "answers": n}}  # fmt: skip
    return result, lab


async def act_db_away(room: Room, env: dict) -> dict:
    away_s = room.args.db_away_s
    t0 = time.monotonic()
    await asyncio.to_thread(cluster, "stop", env)
    stopped = time.monotonic()
    await asyncio.sleep(1.0)
    await room.facilitator.click("room-reveal")  # a click while the database is away: a sentence, no traceback
    # Every page's sentence is waited for, not looked for after a fixed time, and counted from the moment the stop
    # was asked (a page may say it while a busy machine's pg_ctl is still waiting for the cluster to exit): the
    # time to it is an upper bound. The database stays away --db-away-s all the same.
    await wait_for(lambda: all(s.said_since(UNAVAILABLE, t0) is not None for s in room.sessions), room.args.timeout)
    await asyncio.sleep(max(0.0, away_s - (time.monotonic() - t0)))
    said = {s.name: s.said_since(UNAVAILABLE, t0) for s in room.sessions}
    await asyncio.to_thread(cluster, "start", env)
    t_back = time.monotonic()
    not_revealed = room.store.room(room.code).phase == "open"
    # the facilitator's page, a sentence while the database was away, is drawn again by itself once it is back
    redrawn = await wait_for(lambda: room.facilitator.has("room-reveal"), room.args.timeout)
    await room.facilitator.click("room-reveal")
    revealed = await wait_for(lambda: all(s.said_since(RIGHT, t_back) is not None for s in room.learners),
                              room.args.timeout)  # fmt: skip
    reach = [s.said_since(RIGHT, t_back) for s in room.learners]
    timed = [v for v in said.values() if v is not None]
    return {"away_s": round(t_back - t0, 1), "stop_s": round(stopped - t0, 1), "sessions_told": f"{len(timed)}/{len(said)}",
            "stop_to_sentence": ms(timed), "click_while_away_kept_nothing": not_revealed,
            "db_back_to_reveal_on_every_learner": ms([r for r in reach if r is not None]),
            "facilitator_page_redrawn": redrawn,
            "ok": len(timed) == len(said) and not_revealed and redrawn and revealed and max(timed, default=99) <= 5.0 + 1.5}  # fmt: skip


async def run(args, lab_factory, env: dict, store, code: str, control: str, tokens: list[str]) -> dict:
    lab = lab_factory()
    room = Room(args, lab.listen, store, code, control, tokens)
    out: dict = {}
    try:
        await room.open()
        print("room open: facilitator, projector, learners following", flush=True)
        out["kill"] = await act_kill(room, lab)
        print(f"kill: {out['kill']}", flush=True)
        out["restart"], lab = await act_restart(room, lab_factory)
        print(f"restart: {out['restart']}", flush=True)
        out["db_away"] = await act_db_away(room, env)
        print(f"db away: {out['db_away']}", flush=True)
    except AssertionError as e:  # an act that could not go on: said in the result, the run ends there
        out["failed"] = str(e)
        print(f"failed: {e}", flush=True)
    finally:
        out["exception_boxes"] = [e for s in room.sessions for e in s.exceptions]
        out["something_went_wrong"] = [e for s in room.sessions for e in s.unexpected]
        for s in room.sessions:
            await s.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=8)
    parser.add_argument("--lesson", default="qkv-softmax", help="a lesson with two questions after its first step")
    parser.add_argument("--db-away-s", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--out", default=str(ROOT / "results" / "fault_room.json"))
    args = parser.parse_args(argv)
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        raise SystemExit("nginx is not installed (Debian: apt-get install nginx-light)")

    from core.results import save_result
    from core.room.service import rooms_on
    from core.room.sql import PostgresStore
    from core.timing import machine_info
    from scripts.serve_class import Class

    tmp = Path(tempfile.mkdtemp(prefix="room-fault-"))
    data = f"/tmp/attention-lab-pg-fault-{os.getpid()}"  # a cluster of its own: the shared one is never stopped
    env = dict(os.environ, ATTENTION_LAB_PGPORT=str(free_port()), ATTENTION_LAB_PGDATA=data)
    saved = os.environ.get("DATABASE_URL")
    result: dict = {
        "command": " ".join(["python", "scripts/fault_room.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": git_version(),
        "machine": machine_info("cpu"),
        "setup": "2 `streamlit run` processes behind nginx (scripts/serve_class.py), PostgreSQL (scripts/postgres.sh)",
        "client": "asyncio + websockets, Streamlit's protocol, fragment timers and the page's reconnection emulated",
        "config": {"learners": args.learners, "lesson": args.lesson, "db_away_s": args.db_away_s},
        "loadavg_before": loadavg(),
    }
    ports = [free_port(), free_port()]
    listen = free_port()
    labs: list = []

    def lab_factory(restart: bool = False):
        """The class's servers and nginx: started now, or (restart) the running ones stopped and new ones made
        on the same ports, for the caller to start."""
        if restart:
            labs[-1].stop()
        lab = Class(ports, listen, tmp / "run", tmp / f"logs{len(labs)}")
        labs.append(lab)
        if not restart:
            lab.start()
        return lab

    store = None
    try:
        os.environ["DATABASE_URL"] = cluster("start", env)
        store = rooms_on(PostgresStore(os.environ["DATABASE_URL"]))
        code, control = store.create(args.lesson)
        tokens = [store.join(code, f"Learner {i}", "en") for i in range(args.learners)]
        result |= asyncio.run(run(args, lab_factory, env, store, code, control, tokens))
    finally:
        for lab in labs:
            lab.stop()
        if store is not None:
            store.close()
        cluster("stop", env)
        shutil.rmtree(data, ignore_errors=True)
        Path(data + ".lock").unlink(missing_ok=True)
        os.environ.pop("DATABASE_URL", None) if saved is None else os.environ.__setitem__("DATABASE_URL", saved)
    result["loadavg_after"] = loadavg()
    acts = [result.get(k, {}).get("ok", False) for k in ("kill", "restart", "db_away")]
    result["ok"] = all(acts) and not result.get("exception_boxes") and not result.get("something_went_wrong")
    if result["ok"]:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"server logs kept in {tmp}")
    path = save_result(Path(args.out), result)
    print(f"ok: {result['ok']}\nwrote {path}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
