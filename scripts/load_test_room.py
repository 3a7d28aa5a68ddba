"""Load test of a study room (/room): one facilitator and N following learners on one `streamlit run` server (or
--processes N behind nginx), each a session speaking Streamlit's websocket protocol (scripts/load_test.py's
client; no browser), localhost only.

A session here stays open like a browser tab and does what Streamlit's frontend (1.67) does with what the server
sends: a reader handles every ForwardMsg, including runs the server starts on its own (following: the server reruns
a room panel when the room changed, app/room/watch.py); a fragment with `run_every` (a panel where the server
cannot push) is rerun on its timer, armed by the auto_rerun message, cleared when a full run starts, and fired
whether or not a run is under way, carrying the page the tab believes it is on.

Stages, on a room of the lesson --lesson in a temporary SQLite store (--postgres: DATABASE_URL instead):
  join    the facilitator opens the control link; N learners open their seat links (over --ramp s) and press
          "Go to the room's step": all are on step 1's page, following.
  idle    --idle-seconds with nothing happening: the servers' CPU (what following costs while nothing changes).
  follow  --steps times: the facilitator presses "Next step"; time from that click to each learner's tab showing
          the step (the end of the first run that drew their room panel at the new step: the step page's full run
          after the panel's rerun switched to it, or the panel's own run where the step keeps the page and its
          state): p50 and max per change, and to their panel's rerun beginning (the server's notice),
          and whether every learner ended on the step's page (a fragment run the server ran as another page than
          the tab's, which empties the page a learner sees, is counted too).
  answer  the facilitator opens the current step's question; once a learner's panel shows it, the learner answers
          (within --answer-spread s); time from each answer's click to the facilitator's histogram counting it.

    python scripts/load_test_room.py                                   # -> results/load_test_room.json
    python scripts/load_test_room.py --processes 2 --out results/load_test_room_2proc.json
    python scripts/load_test_room.py --learners 5 --idle-seconds 10 --steps 2 --out /tmp/room.json   # a quick one

Targets, 30 learners: on one process every learner shows every step within 3 s and no page is emptied; on two
processes a step reaches the last learner within 1 s, the last answer reaches the facilitator within 1 s and an
idle room costs at most 0.05 of a core. The JSON records the machine's cores and load (/proc/loadavg) around each
stage: on a shared machine, load from elsewhere shows there.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from core import room as rules
from scripts.app_server import free_port, start_server, stop_server
from scripts.load_test import (
    HOST,
    StreamlitSession,
    client_heap_frozen,
    count_error,
    cpu_s,
    git_version,
    loadavg,
    percentiles,
    process_tree,
    rss_mb,
)

ROOT = Path(__file__).resolve().parents[1]
SETTLE_S = 1.0  # no learner's run for this long: their clicks' runs are over
DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR,
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}  # fmt: skip


class LiveSession(StreamlitSession):
    """A tab that stays open: one reader for all messages, fragment timers, actions that wait for their run."""

    def __init__(self, port: int, timeout_s: float, name: str):
        super().__init__(port, timeout_s)
        self.name = name
        self.fragments: dict[str, float] = {}  # fragment id -> interval (s): the timers armed (auto_rerun messages)
        self.armed: dict[str, asyncio.Task] = {}  # fragment id -> its timer
        self.full_page = ""  # page script hash of the last full run (the page on screen)
        self.stale_runs = 0  # fragment runs the server ran as another page than the one on screen
        self.pages_by_url: dict[str, str] = {}  # url path -> page script hash (the navigation message)
        self.run_widgets: dict[str, object] = {}  # widgets the run in progress drew
        self.in_flight = False
        self.waiting_since: float | None = None  # an action in flight was sent then
        self.run_started = 0.0  # when the run now drawing began
        self.running = False  # a run has begun and not finished (as far as this tab has heard)
        self.run_ended = 0.0  # when the last run finished
        self.idle = asyncio.Event()
        self.idle.set()
        self.pages: list[tuple[float, str]] = []  # (time, query string) of every finished full run
        self.run_texts: list[str] = []  # the markdown the run in progress drew
        self.shown: list[tuple[float, str]] = []  # (time, markdown drawn) of every finished run, fragments' too
        self.histogram: list[tuple[float, int]] = []  # (time, total) of the facilitator's histogram, per run
        self.exceptions: list[str] = []
        self.fragment_runs = 0
        self.fragment_starts: list[float] = []  # when each fragment run began (its first message arrived)
        self.fragment_of: dict[str, str] = {}  # widget id -> the fragment that drew it ("" for the page)
        self.tasks: list[asyncio.Task] = []
        self.chart_total: int | None = None

    # -- messages --------------------------------------------------------------------------------------------

    def handle(self, raw: bytes) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        kind = msg.WhichOneof("type")
        if kind == "delta":
            self.delta(msg.delta)
        elif kind == "new_session":  # every run starts with one, a fragment's run too
            page = msg.new_session.page_script_hash
            self.page_hash = page or self.page_hash
            self.run_widgets: dict[str, object] = {}
            self.run_texts = []
            self.run_started = time.monotonic()
            self.running = True
            if not msg.metadata.run.fragment_ids:  # a full run: the frontend clears every fragment timer
                self.disarm()
                self.full_page = self.page_hash
            else:  # a fragment's run replaces what that fragment drew
                rerun = set(msg.metadata.run.fragment_ids)
                for wid in [w for w, f in self.fragment_of.items() if f in rerun]:
                    self.widgets.pop(wid, None)
                    del self.fragment_of[wid]
                self.fragment_starts.append(time.monotonic())
                if page and self.full_page and page != self.full_page:
                    self.stale_runs += 1
        elif kind == "navigation":
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
            self.pages_by_url = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":  # sent by full runs, for each fragment with run_every they drew: a timer armed
            self.arm(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "script_finished" and msg.script_finished in DONE:
            now = time.monotonic()
            self.running, self.run_ended = False, now
            self.shown.append((now, "\n".join(self.run_texts)))
            if msg.script_finished == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                self.fragment_runs += 1
            else:  # a full run: a page drawn (after a page switch too)
                self.pages.append((now, self.query))
                self.widgets = dict(self.run_widgets)  # what this page drew, not what an earlier page did
            if self.chart_total is not None:
                self.histogram.append((now, self.chart_total))
            if self.waiting_since is None or self.run_started >= self.waiting_since:
                self.in_flight = False  # an action's own run (not one the server started before it arrived)
                self.idle.set()

    def delta(self, delta) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind == "markdown":
            self.run_texts.append(element.markdown.body)
        count_error(element, self.exceptions)
        if kind == "plotly_chart" and element.plotly_chart.id.endswith("-room-hist"):
            data = json.loads(element.plotly_chart.spec)["data"]
            self.chart_total = int(sum(data[0]["x"])) if data and data[0].get("x") else 0
        inner = getattr(element, kind) if kind else None
        wid = getattr(inner, "id", "") if inner is not None else ""
        if wid:
            self.widgets[wid] = inner
            self.run_widgets[wid] = inner
            self.fragment_of[wid] = delta.fragment_id

    async def reader(self) -> None:
        try:
            async for raw in self.ws:
                self.handle(raw)
        except websockets.ConnectionClosed:
            pass

    # -- runs ------------------------------------------------------------------------------------------------

    async def post(self, client_state: ClientState) -> None:
        """Send a rerun request now, as the frontend does (it does not wait for a run under way)."""
        client_state.context_info.timezone = "UTC"
        client_state.context_info.locale = "en-US"
        client_state.context_info.url = f"http://{HOST}:{self.port}/"
        msg = BackMsg()
        msg.rerun_script.CopyFrom(client_state)
        await self.ws.send(msg.SerializeToString())

    async def send(self, client_state: ClientState) -> None:
        """A visitor's action: sent once no run is in flight, then waited for (a page switch included)."""
        await asyncio.wait_for(self.idle.wait(), self.timeout_s)
        self.in_flight = True
        self.idle.clear()
        self.waiting_since = time.monotonic()
        try:
            await self.post(client_state)
            await asyncio.wait_for(self.idle.wait(), self.timeout_s)
        finally:
            self.waiting_since = None

    async def start(self, url: str, query: str) -> None:
        """Open the link as a browser does (the page, the websocket, the first run), the reader handling it all."""
        await asyncio.to_thread(self._get, f"http://{HOST}:{self.port}/{url}" + (f"?{query}" if query else ""))
        self.ws = await websockets.connect(
            f"ws://{HOST}:{self.port}/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=self.timeout_s,
            ping_interval=None,
            proxy=None,  # 127.0.0.1 only, never through a proxy from the environment
            # the cookies the page's answer set (nginx's lab_route: each tab its own browser, with its affinity)
            additional_headers={"Cookie": self.cookie_header()} if len(self.cookies) else None,
        )
        self.query = query
        self.tasks = [asyncio.create_task(self.reader())]
        await self.send(ClientState(query_string=query, page_name=url))

    async def timer(self, fid: str, every: float) -> None:
        """A fragment's timer as the frontend's setInterval runs it: every `every` s from when it was armed,
        whether or not a run is under way, with the page and query the tab holds at that moment."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.post(ClientState(query_string=self.query, page_script_hash=self.page_hash,
                                            fragment_id=fid, is_auto_rerun=True))  # fmt: skip
            except websockets.ConnectionClosed:
                return

    def arm(self, fid: str, every: float) -> None:
        if self.fragments.get(fid) == every:
            return  # the frontend keeps a timer armed with the same interval
        self.disarm(fid)
        self.fragments[fid], self.armed[fid] = every, asyncio.get_running_loop().create_task(self.timer(fid, every))

    def disarm(self, fid: str | None = None) -> None:
        for f in [fid] if fid is not None else list(self.armed):
            task = self.armed.pop(f, None)
            if task is not None:
                task.cancel()
            self.fragments.pop(f, None)

    async def click(self, key: str, fragment: str = "", **also) -> float:
        """Press the button (or form submit) with this key; `also`: other widget states {key: WidgetState kwargs}.
        A widget drawn inside a fragment reruns that fragment, as in the browser. Returns when the click was sent."""
        await asyncio.wait_for(self.idle.wait(), self.timeout_s)
        # a run the server started (the panel's slow fallback timer) may be redrawing the widget: the tab shows the
        # old one meanwhile and a person clicks it once it is back
        await wait_for(lambda: self.has(key), self.timeout_s)
        wid, _ = self.widget(key)
        fragment = fragment or self.fragment_of.get(wid, "")
        cs = ClientState(query_string=self.query, page_script_hash=self.page_hash, fragment_id=fragment)
        cs.widget_states.widgets.append(WidgetState(id=wid, trigger_value=True))
        for other, kwargs in also.items():
            oid, _ = self.widget(other)
            cs.widget_states.widgets.append(WidgetState(id=oid, **kwargs))
        sent = time.monotonic()
        await self.send(cs)
        return sent

    def has(self, key: str) -> bool:
        return any(w.endswith(f"-{key}") for w in self.widgets)

    async def close(self) -> None:
        self.disarm()
        for t in self.tasks:
            t.cancel()
        await super().close()


# --- the stages ----------------------------------------------------------------------------------------------


def settled(sessions: list[LiveSession], quiet_s: float, now: float | None = None) -> bool:
    """No run under way in any of these tabs, and none finished in the last `quiet_s` seconds."""
    now = time.monotonic() if now is None else now
    return all(not s.running and now - s.run_ended >= quiet_s for s in sessions)


async def wait_for(check, timeout_s: float, every_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        await asyncio.sleep(every_s)
    return check()


class Servers:
    """The server processes whose CPU the test reads: one `streamlit run`, or the servers behind nginx."""

    def __init__(self, pids: list[int]):
        self.pids = pids


def server_cpu(server: Servers) -> float:
    return sum(cpu_s(p) for pid in server.pids for p in process_tree(pid))


async def measure(args, server, port: int, store, code: str, control: str) -> dict:
    out: dict = {}
    facilitator = LiveSession(port, args.timeout, "facilitator")
    await facilitator.start("room", f"room={code}&key={control}")
    learners = [LiveSession(port, args.timeout, f"learner{i}") for i in range(args.learners)]
    tokens = [
        store.join(code, f"Learner {i}", random.Random(i).choice(["en", "ja", "ko"])) for i in range(args.learners)
    ]

    async def arrive(i: int, s: LiveSession) -> None:
        await asyncio.sleep(args.ramp * i / max(1, args.learners))
        await s.start("room", f"room={code}&me={tokens[i]}")
        await s.click("room-go-step")  # the seat page's button: opens the room's step (a page switch)

    t0 = time.monotonic()
    await asyncio.gather(*(arrive(i, s) for i, s in enumerate(learners)))
    on_step = await wait_for(lambda: all(s.pages and s.has("room-follow") for s in learners), args.timeout)
    out["join"] = {"learners": args.learners, "all_following": on_step, "seconds": round(time.monotonic() - t0, 1)}
    print(f"join: {out['join']}", flush=True)
    await asyncio.sleep(3)

    load0, cpu0, w0 = loadavg(), server_cpu(server), time.monotonic()
    runs0 = sum(s.fragment_runs for s in learners) + facilitator.fragment_runs
    await asyncio.sleep(args.idle_seconds)
    wall = time.monotonic() - w0
    used = server_cpu(server) - cpu0
    runs = sum(s.fragment_runs for s in learners) + facilitator.fragment_runs - runs0
    out["idle"] = {"seconds": round(wall, 1), "server_cpu_s": round(used, 2), "server_cores_used": round(used / wall, 3),
                   "fragment_runs": runs, "server_cpu_ms_per_poll": round(1000 * used / runs, 2) if runs else None,
                   "loadavg_before": load0, "loadavg_after": loadavg(), "rss_mb": sum(rss_mb(pid) for pid in server.pids)}  # fmt: skip
    print(f"idle: {out['idle']}", flush=True)

    changes = []
    for _ in range(args.steps):
        cpu_before, tx_before = server_cpu(server), store_times(args.store_stats)
        sent = await facilitator.click("room-next")
        seat = seat_lines(store, code)

        def showing(s: LiveSession) -> float | None:
            return next((when for when, text in s.shown if when >= sent and any(x in text for x in seat)), None)

        reached = await wait_for(lambda: all(showing(s) is not None for s in learners), args.timeout)
        lat = [t - sent for t in map(showing, learners) if t is not None]
        # the panel's rerun reaching the tab (what the room watch decides), before the step's page runs
        told = [min((t for t in s.fragment_starts if t >= sent), default=None) for s in learners]
        told = [t - sent for t in told if t is not None]
        cpu = server_cpu(server) - cpu_before  # the facilitator's click, every follower's poll and page run
        changes.append({"reached": len(lat), "all": reached, "ms": [round(1000 * x) for x in sorted(lat)],
                        "panel_rerun_ms": percentiles([1000 * x for x in told]),
                        "server_cpu_s": round(cpu, 2), "server_cpu_ms_per_learner": round(1000 * cpu / max(1, len(lat)))})  # fmt: skip
        print(f"step change: {len(lat)}/{len(learners)} learners, p50 {percentiles([1000 * x for x in lat])}",
              flush=True)  # fmt: skip
        await asyncio.sleep(args.settle)
        changes[-1]["on_the_step_page"] = sum(on_step_page(s, target(store, code)) for s in learners)
        changes[-1]["store"] = per_learner(store_times(args.store_stats), tx_before, max(1, len(lat)))
    every = [ms for c in changes for ms in c["ms"]]
    print("store per learner per step:", [c["store"] for c in changes], flush=True)
    out["follow"] = {"changes": changes, "all_ms": percentiles(every),
                     "max_per_change_ms": [max(c["ms"]) if c["ms"] else None for c in changes],
                     "fragment_runs_as_another_page": sum(s.stale_runs for s in learners)}  # fmt: skip

    out["answer"] = await answers(args, facilitator, learners, store, code)
    out["exception_boxes"] = facilitator.exceptions + [e for s in learners for e in s.exceptions]
    for s in [facilitator, *learners]:
        await s.close()
    return out


def store_times(folder: str) -> dict:
    """Every server process's room-store transaction times so far (core.room.sql.TxTimes), summed."""
    out = {kind: {"n": 0, "wait_s": 0.0, "held_s": 0.0, "max_wait_s": 0.0} for kind in ("read", "write")}
    for path in Path(folder).glob("*.json"):
        for kind, t in json.loads(path.read_text()).items():
            for k, v in t.items():
                out[kind][k] = max(out[kind][k], v) if k.startswith("max") else out[kind][k] + v
    return out


def per_learner(after: dict, before: dict, learners: int) -> dict:
    """A step's transactions in all server processes (the facilitator's click, the room watch's reads, every
    follower's panel and page runs) per learner who reached the step: how many, the ms they waited before they
    began (a lock of their process, SQLite's write lock) and held their connection, read and write apart."""
    out = {}
    for kind in ("read", "write"):
        a, b = after[kind], before[kind]
        out[kind] = {"tx": round((a["n"] - b["n"]) / learners, 1),
                     "wait_ms": round(1000 * (a["wait_s"] - b["wait_s"]) / learners, 1),
                     "held_ms": round(1000 * (a["held_s"] - b["held_s"]) / learners, 1)}  # fmt: skip
    out["wait_ms"] = round(out["read"]["wait_ms"] + out["write"]["wait_ms"], 1)
    return out


def seat_lines(store, code: str) -> list[str]:
    """The room panel's heading at the room's step now, in each language ('Room CODE · step 2 of 7'): a run that
    drew it shows the step."""
    from app import catalog, i18n
    from core.lessons import load_lessons

    room = store.room(code)
    n = len(load_lessons(pages=list(catalog.BY_URL))[room.lesson].steps)
    return [i18n.text(lang, "room", "seat", code=code, step=room.step + 1, n=n) for lang in i18n.languages()]


def target(store, code: str) -> tuple[str, dict]:
    """(page url, query parameters) of the room's step now: where a following learner's page must be."""
    from app import catalog
    from core.lessons import load_lessons

    room = store.room(code)
    step = load_lessons(pages=list(catalog.BY_URL))[room.lesson].steps[room.step]
    return step.page, step.state


def on_step_page(s: LiveSession, where: tuple[str, dict]) -> bool:
    """The learner's tab shows the step's page at the step's link: its last full run was that page, no later run
    told it another page, and its address carries the step's query parameters."""
    url, state = where
    query = dict(parse_qsl(s.query))
    return s.full_page == s.page_hash == s.pages_by_url.get(url) and all(query.get(k) == v for k, v in state.items())


async def answers(args, facilitator: LiveSession, learners: list[LiveSession], store, code: str) -> dict:
    if not facilitator.has("room-open-q"):
        return {"skipped": "the current step has no question (choose --steps so that it lands on one)"}
    await facilitator.click("room-open-q")
    shown = await wait_for(lambda: all(s.has("room-submit") for s in learners), args.timeout)
    right = rules.right_answer(store.room(code))  # its kind says which widget a learner fills
    rng = random.Random(0)
    sent_at: list[float] = []

    async def answer(s: LiveSession) -> None:
        await asyncio.sleep(rng.uniform(0, args.answer_spread))
        if right.kind == "number":
            widget = {"room-number": {"string_value": "1"}}
        elif right.kind == "order":
            widget = {"room-order": {"string_array_value": {"data": list(right.options)}}}
        else:
            widget = {"room-pick": {"string_value": rng.choice(right.options)}}  # radios send the option
        sent_at.append(await s.click("room-submit", **widget))  # inside the panel: reruns the panel

    await asyncio.gather(*(answer(s) for s in learners if s.has("room-submit")))
    n = len(sent_at)
    # A click can return before the run that stores its answer: the run it waited for may be one the server had
    # begun for a push as the click went out. What the room kept is read once every answer is in, or else once
    # the learners' runs have settled (an answer refused or lost shows as kept < answers).
    question = store.room(code).question
    stored = lambda: len(store.responses(code, question))  # noqa: E731
    await wait_for(lambda: stored() >= n or settled(learners, SETTLE_S), args.timeout, every_s=0.1)
    kept = stored()
    await wait_for(lambda: any(total >= kept for _, total in facilitator.histogram), args.timeout)  # drawn, not sent
    sent_at.sort()
    lat = []
    for k, t in enumerate(sent_at, start=1):
        seen = next((when for when, total in facilitator.histogram if total >= k and when >= t), None)
        if seen is not None:
            lat.append(1000 * (seen - t))
    result = {"question_shown_to_all": shown, "answers": n, "kept": kept, "on_histogram": facilitator.chart_total,
              "answer_to_histogram_ms": percentiles(lat)}  # fmt: skip
    print(f"answers: {result}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--lesson", default="qkv-softmax", help="a lesson whose first steps are light pages")
    parser.add_argument("--idle-seconds", type=float, default=30)
    parser.add_argument("--steps", type=int, default=3, help="step changes to time")
    parser.add_argument("--settle", type=float, default=3.0, help="s between step changes")
    parser.add_argument("--ramp", type=float, default=5.0, help="learners arrive over this many seconds")
    parser.add_argument("--answer-spread", type=float, default=5.0, help="learners answer within this many s")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--postgres", action="store_true", help="the store at DATABASE_URL (default: a temp SQLite)")
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="servers: 1 = one `streamlit run`; N > 1 = one per core behind nginx (scripts/serve_class.py)",
    )
    parser.add_argument("--server-log", default="/tmp/attention-lab-room-load-test.log")
    parser.add_argument("--out", default=str(ROOT / "results" / "load_test_room.json"))
    args = parser.parse_args(argv)
    if args.learners > 200:
        raise SystemExit("at most 200 learners (a room's limit)")

    from core.results import save_result
    from core.room.service import rooms_on
    from core.room.sql import STATS_ENV, PostgresStore, SQLiteStore
    from core.timing import machine_info

    tmp = tempfile.TemporaryDirectory(prefix="room-load-")
    args.store_stats = str(Path(tmp.name) / "store-stats")  # the servers' transaction times (core.room.sql.TxTimes)
    os.makedirs(args.store_stats)
    environ = {k: os.environ.get(k) for k in ("DATABASE_URL", "ATTENTION_LAB_ROOMS", STATS_ENV)}  # restored at the end
    if args.postgres:
        store = rooms_on(PostgresStore(os.environ["DATABASE_URL"]))
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ["ATTENTION_LAB_ROOMS"] = str(Path(tmp.name) / "rooms.sqlite3")
        store = rooms_on(SQLiteStore(os.environ["ATTENTION_LAB_ROOMS"]))
    code, control = store.create(args.lesson)
    os.environ[STATS_ENV] = args.store_stats  # the servers' environment (this process's own store counts nothing)
    result: dict = {
        "command": " ".join(["python", "scripts/load_test_room.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": git_version(),
        "machine": machine_info("cpu"),
        "store": "postgresql" if args.postgres else "sqlite",
        "client": "asyncio + websockets, Streamlit's protocol, runs the server starts handled and fragment timers "
        "fired as Streamlit 1.67's frontend does; one client process on the same cores as the servers",
        "config": {
            k: getattr(args, k)
            for k in ("learners", "lesson", "idle_seconds", "steps", "ramp", "answer_spread", "processes")
        },
        "loadavg_before": loadavg(),
    }
    with open(args.server_log, "w") as log:
        if args.processes == 1:
            port = free_port()
            server = start_server(port, log)
            servers, stop = Servers([server.pid]), lambda: stop_server(server)
        else:  # the same servers and cookie-affine nginx as `bash scripts/dev.sh serve`; one room store file
            from scripts.serve_class import Class

            ports: list[int] = []
            while len(ports) < args.processes + 1:
                if (p := free_port()) not in ports:
                    ports.append(p)
            lab = Class(ports[:-1], ports[-1], Path(tmp.name) / "class", Path(tmp.name) / "logs")
            lab.start()
            port, servers, stop = lab.listen, Servers(lab.server_pids()), lab.stop
        try:
            with client_heap_frozen():
                result |= asyncio.run(measure(args, servers, port, store, code, control))
        finally:
            stop()
            store.close()
            tmp.cleanup()
            for k, v in environ.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    result["loadavg_after"] = loadavg()
    follow_max = result["follow"]["all_ms"].get("max_ms")
    hist_max = result["answer"].get("answer_to_histogram_ms", {}).get("max_ms")
    pages_kept = result["follow"]["fragment_runs_as_another_page"] == 0 and all(
        c["on_the_step_page"] == args.learners for c in result["follow"]["changes"]
    )
    if args.processes == 1:
        result["targets"] = {
            "step_to_all_within_3s": follow_max is not None and follow_max <= 3000,
            "no_page_emptied": pages_kept,
        }
    else:
        result["targets"] = {
            "step_to_all_within_1s": follow_max is not None and follow_max <= 1000,
            "answer_to_histogram_within_1s": hist_max is not None and hist_max <= 1000,
            "idle_at_most_0.05_core": result["idle"]["server_cores_used"] <= 0.05,
            "no_page_emptied": pages_kept,
        }
    path = save_result(Path(args.out), result)
    print(f"targets: {result['targets']}\nwrote {path}")
    return 1 if result["exception_boxes"] else 0


if __name__ == "__main__":
    sys.exit(main())
