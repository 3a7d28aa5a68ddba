"""Load test: one `streamlit run` server, many sessions speaking Streamlit's own websocket protocol (no browser).

A session does what a browser does, without drawing anything: HTTP GET of the page, a websocket at
/_stcore/stream, a BackMsg `rerun_script` (query string, page, widget states) per action, then ForwardMsgs until
`script_finished`. What it does is what a study group does, with think time between actions:

    /attention     open the class's link, paste a sentence, open one head (view=head), pick another head
    /padded-batch  paste three sentences
    /moe           paste a sentence, move the layer slider
    /sdpa-steps    edit a cell of Q

Every sentence is new (a counter per session), so each paste runs the model instead of hitting the run cache.
Measured per action: time from sending the BackMsg to `script_finished`, errors shown (Exception elements, and
the app's own sentence for an unexpected error, which a hosted server shows with no Exception element) and "page
not found" messages in the ForwardMsg stream; the server's resident memory (its process tree, /proc)
and CPU time; /proc/loadavg before and after every stage (the machine is shared: load from elsewhere shows there).

The default run is the whole measurement, in stages on one server started as `bash scripts/dev.sh run` starts it
(so .streamlit/config.toml applies), warmed by one visit to each page:
  burst  N sessions arrive at once on /attention (the class opens the link together): first-page times;
  sweep  10/20/30/40 sessions doing the study-group loop for --seconds each: p50/p95 per page and action;
  soak   --soak-sessions sessions for --soak-seconds (10 minutes): memory over time, flat or not.
Capacity is the largest swept count whose /attention p95 (first pages excluded) stays <= --target-p95.

    python scripts/load_test.py                                       # all stages (~16 min) -> results/load_test.json
    python scripts/load_test.py --sweep 10 --seconds 20 --soak-seconds 0 --out /tmp/x.json     # a quick one

Only 127.0.0.1 is ever contacted. Figures depend on the machine: the JSON records its cores and load.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import gc
import http.cookiejar
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from app import i18n
from scripts.app_server import free_port, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"  # never anything else
SENTENCES = [
    "The cat sat on the mat because it was tired.",
    "The trophy did not fit in the suitcase because it was too big.",
    "Alice gave Bob the book because she had finished it.",
    "The council refused the demonstrators a permit because they feared violence.",
    "猫はマットの上に座った。疲れていたからだ。",
    "고양이가 매트 위에 앉았다. 피곤했기 때문이다.",
    "The 🐱 chased the 🐭 until it hid.",
]
TEXT_BOXES = ("TextArea", "TextInput")
FINISHED = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR}
# The app's sentence for an error no page expected (app/serving.unexpected), in every language: a hosted server
# shows it alone, a developer's run (client.showErrorDetails full) with the traceback's Exception element after it.
UNEXPECTED = frozenset(i18n.text(lang, "common", "unexpected") for lang in i18n.languages())
APP_SENTENCE = "the app's sentence for an unexpected error"


def count_error(element, errors: list[str]) -> bool:
    """Add the error a drawn element shows to `errors`, once per error (the app's sentence, or the traceback drawn
    under it, not both); True when the element is one. Streamlit's warnings are not errors."""
    kind = element.WhichOneof("type")
    if kind == "alert" and element.alert.body in UNEXPECTED:
        errors.append(APP_SENTENCE)
        return True
    if kind != "exception" or element.exception.is_warning:
        return False
    text = f"{element.exception.type}: {element.exception.message}"[:300]
    if errors and errors[-1] == APP_SENTENCE:
        errors[-1] = text  # the same error, its traceback shown under the sentence
    else:
        errors.append(text)
    return True


# One widget per user key on these pages: its element id ends with "-<key>" (streamlit's compute_element_id).
STUDY_LOOP = (
    ("attention", "type"),
    ("attention", "view"),
    ("attention", "head"),
    ("padded-batch", "navigate"),
    ("padded-batch", "type"),
    ("moe", "navigate"),
    ("moe", "type"),
    ("moe", "slider"),
    ("sdpa-steps", "navigate"),
    ("sdpa-steps", "edit"),
    ("attention", "navigate"),
)
ATTENTION_LOOP = (("attention", "type"), ("attention", "view"), ("attention", "head"))


class ProtocolError(RuntimeError):
    pass


@dataclass
class RunResult:
    ms: float
    exceptions: list[str] = field(default_factory=list)
    warnings: int = 0
    page_not_found: bool = False
    received_bytes: int = 0


class StreamlitSession:
    """One visitor: a websocket to the server's /_stcore/stream and what the browser would keep of the app's
    state (current page, query string, widget ids and element protos by id), and of its cookies (a browser's
    proxy cookie keys nginx's stickiness and its per-browser limits, deploy/nginx.conf)."""

    def __init__(
        self,
        port: int,
        timeout_s: float,
        cookies: http.cookiejar.CookieJar | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.port = port
        self.headers = headers or {}  # more headers for the websocket's opening request (those a proxy adds)
        self.timeout_s = timeout_s
        self.ws = None
        self.page_hash = ""
        self.pages: dict[str, str] = {}  # url path -> page_script_hash (from the Navigation message)
        self.query = ""
        self.widgets: dict[str, object] = {}  # element id -> its proto (text_area, radio, slider, ...)
        self.texts: dict[str, str] = {}  # a text box's id -> the text the server last put in it
        # one per visitor, as each browser keeps its own; a jar shared by several sessions is one browser's tabs
        self.cookies = cookies if cookies is not None else http.cookiejar.CookieJar()
        self._http = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(self.cookies)
        )

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.cookies)

    async def open(self, url: str, query: str = "") -> RunResult:
        """What opening a link does: GET the page (the HTML shell), open the websocket, run the page."""
        start = time.monotonic()
        page_url = f"http://{HOST}:{self.port}/{url}" + (f"?{query}" if query else "")
        await asyncio.to_thread(self._get, page_url)
        await asyncio.to_thread(self._get, f"http://{HOST}:{self.port}/_stcore/health")
        self.ws = await websockets.connect(
            f"ws://{HOST}:{self.port}/_stcore/stream",
            subprotocols=["streamlit"],
            max_size=None,
            open_timeout=self.timeout_s,
            ping_interval=None,
            proxy=None,  # never through a proxy from the environment: 127.0.0.1 only
            additional_headers={**self.headers, **({"Cookie": self.cookie_header()} if len(self.cookies) else {})},
        )
        result = await self.rerun(ClientState(query_string=query, page_name=url))
        result.ms = (time.monotonic() - start) * 1000
        return result

    def _get(self, url: str) -> None:
        with self._http.open(url, timeout=self.timeout_s) as r:
            r.read()

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()

    async def navigate(self, url: str) -> RunResult:
        """A click on the sidebar's link: the target page's script hash; query parameters are dropped."""
        if url not in self.pages:
            raise ProtocolError(f"no page /{url} in the navigation")
        self.widgets.clear()
        return await self.rerun(ClientState(query_string="", page_script_hash=self.pages[url], page_name=url))

    def widget(self, key: str):
        for wid, proto in self.widgets.items():
            if wid.endswith(f"-{key}"):
                return wid, proto
        raise ProtocolError(f"no widget with key {key!r} on this page")

    def widget_with_prefix(self, prefix: str):
        """(id, user key) of the first widget whose key starts with `prefix` (case-insensitive)."""
        for wid in self.widgets:
            at = wid.lower().find(f"-{prefix.lower()}")
            if at >= 0:
                return wid, wid[at + 1 :]
        raise ProtocolError(f"no widget with a key starting {prefix!r} on this page")

    async def set_widget(self, state: WidgetState) -> RunResult:
        """A widget changed in the browser: rerun the current page with that widget's new value (the server keeps
        the others' last values)."""
        client_state = ClientState(query_string=self.query, page_script_hash=self.page_hash)
        client_state.widget_states.widgets.append(state)
        return await self.rerun(client_state)

    async def rerun(self, client_state: ClientState) -> RunResult:
        client_state.context_info.timezone = "UTC"
        client_state.context_info.locale = "en-US"
        client_state.context_info.url = f"http://{HOST}:{self.port}/"
        msg = BackMsg()
        msg.rerun_script.CopyFrom(client_state)
        start = time.monotonic()
        await self.ws.send(msg.SerializeToString())
        result = RunResult(ms=0.0)
        deadline = start + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no script_finished within {self.timeout_s:g} s")
            raw = await asyncio.wait_for(self.ws.recv(), left)
            result.received_bytes += len(raw)
            fmsg = ForwardMsg()
            fmsg.ParseFromString(raw)
            kind = fmsg.WhichOneof("type")
            if kind == "delta":
                self._delta(fmsg.delta, result)
            elif kind == "new_session":
                self.page_hash = fmsg.new_session.page_script_hash
            elif kind == "navigation":
                self.page_hash = fmsg.navigation.page_script_hash or self.page_hash
                self.pages = {p.url_pathname: p.page_script_hash for p in fmsg.navigation.app_pages}
            elif kind == "page_info_changed":
                self.query = fmsg.page_info_changed.query_string
            elif kind == "page_not_found":
                result.page_not_found = True
            elif kind == "script_finished" and fmsg.script_finished in FINISHED:
                result.ms = (time.monotonic() - start) * 1000
                return result

    def _delta(self, delta, result: RunResult) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if count_error(element, result.exceptions):
            return
        if kind == "exception":  # a warning
            result.warnings += 1
            return
        inner = getattr(element, kind) if kind else None
        wid = getattr(inner, "id", "") if inner is not None else ""
        if wid:
            self.widgets[wid] = inner
            if type(inner).__name__ in TEXT_BOXES and inner.set_value:  # (a run that does not set it sends none)
                self.texts[wid] = inner.value


# --- what a visitor does -------------------------------------------------------------------------------------


def fresh_sentence(rng: random.Random, session: int, n: int, line: int = 0) -> str:
    return f"{rng.choice(SENTENCES)} ({session}.{n}{f'.{line}' if line else ''})"


def typed_text(shown: str, sentence: Callable[[int], str]) -> str:
    """What a visitor types into a text box that shows `shown`: new sentences, one a line, as many as it shows
    lines (one at least); `sentence(k)` is the k-th. A page that takes one sentence a line (/masks' batch,
    /padded-batch) answers a single sentence with a note ('write at least two lines'), not with its work."""
    return "\n".join(sentence(k) for k in range(max(1, len(shown.strip().splitlines()))))


async def act(s: StreamlitSession, page: str, kind: str, rng: random.Random, session: int, n: int) -> RunResult:
    if kind == "navigate":
        return await s.navigate(page)
    if kind == "type":
        wid, _ = s.widget("text")  # as many new sentences as the box shows lines (/padded-batch: a batch of three)
        text = typed_text(s.texts.get(wid, ""), lambda line: fresh_sentence(rng, session, n, line))
        return await s.set_widget(WidgetState(id=wid, string_value=text))
    if kind == "view":  # open the head view; from there, back to the grid (a click on the radio changes it)
        wid, _ = s.widget("view")
        view = "grid" if "view=head" in s.query else "head"
        return await s.set_widget(WidgetState(id=wid, string_value=i18n.text("en", "attention", view)))
    if kind == "head":
        wid, proto = s.widget("head")
        return await s.set_widget(WidgetState(id=wid, double_value=float(rng.randint(0, int(proto.max)))))
    if kind == "slider":
        wid, proto = s.widget("layer")
        return await s.set_widget(WidgetState(id=wid, double_array_value={"data": [rng.randint(0, int(proto.max))]}))
    if kind == "edit":
        # the Q editor (key "sdpa-<name>-<generation>"); its columns are "<name>·0", "<name>·1", ...
        wid, key = s.widget_with_prefix("sdpa-q-")
        column = f"{key.split('-')[1]}·0"
        edits = {"edited_rows": {"0": {column: round(rng.uniform(-2, 2), 2)}}, "added_rows": [], "deleted_rows": []}
        return await s.set_widget(WidgetState(id=wid, string_value=json.dumps(edits)))
    raise ValueError(kind)


@dataclass
class Recorder:
    t0: float
    timings: list[dict] = field(default_factory=list)  # {"page", "kind", "ms", "session", "t"}
    errors: list[dict] = field(default_factory=list)
    exception_boxes: list[dict] = field(default_factory=list)
    warnings: int = 0
    page_not_found: int = 0
    received_bytes: int = 0

    def record(self, session: int, page: str, kind: str, result: RunResult, started: float) -> None:
        self.timings.append(
            {
                "page": page,
                "kind": kind,
                "ms": round(result.ms, 1),
                "session": session,
                "t": round(started - self.t0, 1),
            }
        )
        self.warnings += result.warnings
        self.received_bytes += result.received_bytes
        self.page_not_found += int(result.page_not_found)
        for e in result.exceptions:
            self.exception_boxes.append({"session": session, "page": page, "kind": kind, "exception": e})

    def error(self, session: int, page: str, kind: str, err: BaseException) -> None:
        self.errors.append(
            {"session": session, "page": page, "kind": kind, "error": f"{type(err).__name__}: {err}"[:300]}
        )


async def visitor(
    i: int, port: int, loop: tuple, rec: Recorder, deadline: float, args, arrive_after_s: float = 0.0
) -> None:
    """One session: arrive (after arrive_after_s), open /<first page of the loop>, then the loop until deadline."""
    rng = random.Random(args.seed * 1000 + i)
    await asyncio.sleep(arrive_after_s)
    s = StreamlitSession(port, args.timeout)
    first_page = loop[0][0]
    n = 0
    try:
        started = time.monotonic()
        try:
            rec.record(i, first_page, "open", await s.open(first_page), started)
        except Exception as err:  # noqa: BLE001 - a failed load is counted, the visitor leaves
            rec.error(i, first_page, "open", err)
            return
        step = 0
        while True:
            await asyncio.sleep(rng.uniform(*args.think))
            if time.monotonic() >= deadline:
                break
            page, kind = loop[step % len(loop)]
            step += 1
            n += 2
            started = time.monotonic()
            try:
                rec.record(i, page, kind, await act(s, page, kind, rng, i, n), started)
            except (ProtocolError, TimeoutError, websockets.ConnectionClosed) as err:
                rec.error(i, page, kind, err)
                if not isinstance(err, ProtocolError):
                    return
    finally:
        await s.close()


# --- the server's memory and CPU -----------------------------------------------------------------------------


def process_tree(pid: int) -> list[int]:
    """pid and all its descendants, from /proc/<pid>/stat (field 4 is the parent's pid)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])  # the name in (...) may hold spaces
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def rss_mb(pid: int) -> float:
    total_kb = 0
    for p in process_tree(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
                    break
        except OSError:
            pass
    return round(total_kb / 1024, 1)


def cpu_s(pid: int) -> float:
    """utime + stime of one process in seconds (fields 14 and 15 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg() -> list[float]:
    return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]


async def sample_memory(pid: int, t0: float, series: list, stop: asyncio.Event, every_s: float) -> None:
    while not stop.is_set():
        series.append([round(time.monotonic() - t0, 1), rss_mb(pid)])
        try:
            await asyncio.wait_for(stop.wait(), every_s)
        except TimeoutError:
            pass


# --- stages --------------------------------------------------------------------------------------------------


def percentiles(ms: list[float]) -> dict:
    if not ms:
        return {"n": 0}
    ms = sorted(ms)
    q = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
    return {"n": len(ms), "p50_ms": round(q[49]), "p95_ms": round(q[94]), "max_ms": round(ms[-1])}


def summarise(rec: Recorder, server_pid: int, cpu_before: float, client_cpu_before: float, wall_s: float) -> dict:
    after_first = [t for t in rec.timings if t["kind"] != "open"]
    server_cpu = sum(cpu_s(p) for p in process_tree(server_pid)) - cpu_before
    pages = sorted({t["page"] for t in rec.timings})
    kinds = sorted({t["kind"] for t in rec.timings})
    return {
        "wall_s": round(wall_s, 1),
        "actions": len(rec.timings),
        "actions_per_s": round(len(rec.timings) / wall_s, 2) if wall_s else None,
        "first_page": percentiles([t["ms"] for t in rec.timings if t["kind"] == "open"]),
        "after_first_page": percentiles([t["ms"] for t in after_first]),
        "by_page": {p: percentiles([t["ms"] for t in after_first if t["page"] == p]) for p in pages},
        "by_action": {k: percentiles([t["ms"] for t in rec.timings if t["kind"] == k]) for k in kinds},
        "errors": len(rec.errors),
        "error_samples": rec.errors[:5],
        "exception_boxes": len(rec.exception_boxes),
        "exception_samples": rec.exception_boxes[:5],
        "warning_boxes": rec.warnings,
        "page_not_found": rec.page_not_found,
        "received_mb": round(rec.received_bytes / 2**20, 1),
        "server_cpu_s": round(server_cpu, 1),
        # what the server got of the machine (<= its cores) and what one action cost it: on a shared machine the
        # first says how much of a replica the measurement really had
        "server_cores_used": round(server_cpu / wall_s, 2) if wall_s else None,
        "server_cpu_ms_per_action": round(1000 * server_cpu / len(rec.timings)) if rec.timings else None,
        "client_cpu_s": round(time.process_time() - client_cpu_before, 1),
    }


async def stage(name: str, server, port: int, loop: tuple, sessions: int, seconds: float, args, ramp_s: float) -> dict:
    """`sessions` visitors arriving over ramp_s (0: all at once), each doing `loop` until `seconds` have passed."""
    load_before = loadavg()
    memory: list = []
    stop = asyncio.Event()
    t0 = time.monotonic()
    sampler = asyncio.create_task(sample_memory(server.pid, t0, memory, stop, args.memory_every))
    cpu_before = sum(cpu_s(p) for p in process_tree(server.pid))
    client_before = time.process_time()
    rec = Recorder(t0)
    deadline = t0 + seconds
    await asyncio.gather(
        *(
            visitor(i, port, loop, rec, deadline, args, arrive_after_s=ramp_s * i / max(1, sessions))
            for i in range(sessions)
        )
    )
    wall = time.monotonic() - t0
    stop.set()
    await sampler
    out = {"stage": name, "sessions": sessions, "seconds": seconds, "ramp_s": ramp_s}
    out.update(summarise(rec, server.pid, cpu_before, client_before, wall))
    rss = [m for _, m in memory]
    out["rss_mb"] = {"start": rss[0], "end": rss[-1], "max": max(rss)} if rss else {}
    if args.keep_series or name == "soak":
        out["rss_series_mb"] = memory
    out["loadavg_before"], out["loadavg_after"] = load_before, loadavg()
    print(stage_line(out), flush=True)
    return out


def stage_line(s: dict) -> str:
    att = s["by_page"].get("attention", {})
    first = s["first_page"]
    return (
        f"{s['stage']:>6} {s['sessions']:>3} sessions {s['wall_s']:>6.1f} s  actions {s['actions']:>5}"
        f"  first page p50/p95/max {first.get('p50_ms', '-')}/{first.get('p95_ms', '-')}/{first.get('max_ms', '-')} ms"
        f"  /attention p50/p95 {att.get('p50_ms', '-')}/{att.get('p95_ms', '-')} ms"
        f"  errors {s['errors']}  exception boxes {s['exception_boxes']}"
        f"  RSS {s['rss_mb'].get('start', '-')}->{s['rss_mb'].get('end', '-')} MB"
        f"  server used {s['server_cores_used']} cores  load {s['loadavg_before'][0]:.1f}->{s['loadavg_after'][0]:.1f}"
    )


async def warm_up(port: int, loop: tuple, args) -> dict:
    """One visitor through every step of the loop (weights load here, not in the measured stages)."""
    rec = Recorder(time.monotonic())
    s = StreamlitSession(port, max(args.timeout, 300))
    rng = random.Random(args.seed)
    try:
        started = time.monotonic()
        rec.record(-1, loop[0][0], "open", await s.open(loop[0][0]), started)
        for n, (page, kind) in enumerate(loop):
            started = time.monotonic()
            try:
                rec.record(-1, page, kind, await act(s, page, kind, rng, -1, n), started)
            except (ProtocolError, TimeoutError) as err:
                rec.error(-1, page, kind, err)
    finally:
        await s.close()
    return {
        "actions": [{k: t[k] for k in ("page", "kind", "ms")} for t in rec.timings],
        "errors": rec.errors,
        "exception_boxes": rec.exception_boxes,
    }


def cold_start(port_log: Path, extra_args: list[str]) -> dict:
    """Seconds from `streamlit run` to a healthy server, and to the first /attention page (models load then)."""
    port = free_port()
    t0 = time.monotonic()
    with open(port_log, "w") as log:
        server = start_server(port, log, extra_args=extra_args)
        healthy = time.monotonic() - t0
        try:
            s = StreamlitSession(port, 300)

            async def first() -> RunResult:
                try:
                    return await s.open("attention")
                finally:
                    await s.close()

            result = asyncio.run(first())
            first_page = time.monotonic() - t0
            rss = rss_mb(server.pid)
        finally:
            stop_server(server)
    return {
        "healthy_s": round(healthy, 1),
        "first_attention_page_s": round(first_page, 1),
        "first_page_run_s": round(result.ms / 1000, 1),
        "exception_boxes": len(result.exceptions),
        "rss_after_first_page_mb": rss,
    }


def capacity(sweep: list[dict], target_ms: float) -> int | None:
    ok = [
        s["sessions"]
        for s in sweep
        if s["by_page"].get("attention", {}).get("p95_ms", float("inf")) <= target_ms
        and not s["errors"]
        and not s["exception_boxes"]
    ]
    return max(ok) if ok else None


async def measure(args, server, port: int, loop: tuple) -> dict:
    out: dict = {"warm_up": await warm_up(port, loop, args)}
    out["rss_after_warm_up_mb"] = rss_mb(server.pid)
    print(f"warm-up done: RSS {out['rss_after_warm_up_mb']} MB", flush=True)
    if args.burst:
        out["burst"] = await stage("burst", server, port, loop, args.burst, args.burst_seconds, args, ramp_s=0)
    out["sweep"] = [
        await stage("sweep", server, port, loop, n, args.seconds, args, ramp_s=args.ramp) for n in args.sweep
    ]
    if args.soak_seconds > 0:
        out["soak"] = await stage(
            "soak", server, port, loop, args.soak_sessions, args.soak_seconds, args, ramp_s=args.ramp
        )
    return out


@contextlib.contextmanager
def client_heap_frozen():
    """Leave the client's heap as it is now (torch, streamlit and the protos imported: about 220,000 objects) out of
    its own collections while the sessions run: a full collection of it took 0.23 s while a burst's messages
    arrived, which held back every session's timestamps and took a core's share from the servers (the browsers the
    client stands for run elsewhere). Its later collections walk only what it made since."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def git_version() -> str | None:
    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sweep", type=lambda s: [int(v) for v in s.split(",")], default=[10, 20, 30, 40])
    parser.add_argument("--seconds", type=float, default=60, help="per sweep step")
    parser.add_argument("--burst", type=int, default=30, help="sessions arriving at once (0: skip)")
    parser.add_argument("--burst-seconds", type=float, default=20)
    parser.add_argument("--soak-sessions", type=int, default=30)
    parser.add_argument("--soak-seconds", type=float, default=600, help="0: skip the memory soak")
    parser.add_argument("--think", type=float, nargs=2, default=[2.0, 6.0], metavar=("MIN", "MAX"))
    parser.add_argument("--ramp", type=float, default=5.0, help="sweep and soak visitors arrive over this")
    parser.add_argument("--loop", choices=["study", "attention"], default="study")
    parser.add_argument("--timeout", type=float, default=60, help="per action")
    parser.add_argument("--target-p95", type=float, default=1500, help="ms, on /attention")
    parser.add_argument("--memory-every", type=float, default=2.0)
    parser.add_argument("--keep-series", action="store_true", help="RSS series of every stage, not only the soak")
    parser.add_argument("--cold-start", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--server-arg", action="append", default=[], help="extra `streamlit run` argument")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server-log", default="/tmp/attention-lab-load-test-server.log")
    parser.add_argument("--out", default=str(ROOT / "results" / "load_test.json"))
    args = parser.parse_args(argv)
    loop = STUDY_LOOP if args.loop == "study" else ATTENTION_LOOP
    extra = [a for arg in args.server_arg for a in arg.split()]

    from core.results import save_result
    from core.timing import machine_info

    result: dict = {
        "command": " ".join(["python", "scripts/load_test.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "git": git_version(),
        "machine": machine_info("cpu"),
        "client": "asyncio + websockets, Streamlit's BackMsg/ForwardMsg protobufs, one process on the same cores",
        "config": {
            k: getattr(args, k)
            for k in ("sweep", "seconds", "burst", "burst_seconds", "soak_sessions", "soak_seconds", "think", "ramp")
        }
        | {"loop": [f"/{p} {k}" for p, k in loop], "server_args": extra, "target_p95_ms": args.target_p95},
        "loadavg_before": loadavg(),
    }
    if args.cold_start:
        result["cold_start"] = cold_start(Path(args.server_log + ".cold"), extra)
        print(f"cold start: {result['cold_start']}", flush=True)
    port = free_port()
    with open(args.server_log, "w") as log:
        try:
            server = start_server(port, log, extra_args=extra)
        except RuntimeError as err:
            raise SystemExit(f"{err}; see {args.server_log}") from err
        try:
            with client_heap_frozen():
                result |= asyncio.run(measure(args, server, port, loop))
        finally:
            stop_server(server)
    result["loadavg_after"] = loadavg()
    result["capacity_sessions_at_target"] = capacity(result["sweep"], args.target_p95)
    if "soak" in result:
        series = [m for _, m in result["soak"]["rss_series_mb"]]
        third = max(1, len(series) // 3)
        result["soak_rss_growth_mb"] = {
            "first_third_mean": round(statistics.mean(series[:third]), 1),
            "last_third_mean": round(statistics.mean(series[-third:]), 1),
        }
    path = save_result(Path(args.out), result)
    print(f"capacity at /attention p95 <= {args.target_p95:g} ms: {result['capacity_sessions_at_target']} sessions")
    print(f"wrote {path}")
    stages = [result.get("burst"), *result["sweep"], result.get("soak")]
    bad = len(result["warm_up"]["errors"]) + len(result["warm_up"]["exception_boxes"])
    bad += sum(s["errors"] + s["exception_boxes"] for s in stages if s)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
