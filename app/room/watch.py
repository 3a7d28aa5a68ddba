"""Following a room without a script run per learner per tick.

A learner's sidebar panel and the facilitator's live panel are fragments that must redraw when the room changes.
Left to a fragment timer, every open tab asks for a script run every tick whether or not anything changed (30
learners at 1.5 s: 20 runs a second, about a fifth of a core on an idle room). Here one thread per server process
reads each watched room's two counters, (version, activity), every WATCH_S: one indexed read per room, however
many learners follow it. When a counter a session cares about changed, the server asks Streamlit to rerun that
session's fragment, the same rerun a fragment's timer would ask for, sent only when there is something new. An
idle room then costs one read per room per tick and no script run at all; a change reaches a learner within about
WATCH_S plus their panel's run (and the step's page, when the step moved).

Why not a browser timer or a version route polled by the page: either still costs a request per learner per tick,
and a browser timer races page switches (see `POLL_S` in app/views/room/follow.py). The server already holds a
websocket to every tab; this only decides when to use it.

A rerun is requested only while the session runs nothing (its script thread has ended, so the page and query
string Streamlit kept from its last run are the ones on screen): a request made while a run is under way (the
panel itself switching to the step's page) would carry the page that run is leaving, and Streamlit would run the
fragment as that page. A busy session is asked again on the next tick; a session whose rerun did not draw the
room again is asked again after RETRY_S. When a room's database does not answer, its sessions are rerun once (each
panel says so in a sentence) and once more when it answers again. A session that closed, or whose last page
drew no panel, stops being watched; its next panel run watches it again.

The panels keep a slow timer besides (FALLBACK_S in app/views/room/follow.py), for a push lost anyway and
because a page whose websocket reconnects to a restarted server runs nothing until a fragment timer fires.

This talks to Streamlit's runtime (the session manager, a session's last client state, the event loop), which is
not public API: `available()` says whether this Streamlit has what it needs, and the panels keep a short timer
of their own where it does not (tests/app/test_room_watch.py fails when these internals move)."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable

LOG = logging.getLogger("attention_lab")
WATCH_S = 0.2  # one read per watched room per process this often: a change waits at most this long
RETRY_S = 3.0  # a rerun sent that did not draw the room again (its read failed) is sent again after this
SENT, BUSY, GONE = "sent", "busy", "gone"
PUSH_TIMEOUT_S = 5.0
PUSH_ENV = "ATTENTION_LAB_ROOM_PUSH"  # "0": panels on their own POLL_S timers (to compare; scripts/load_test_room.py)

Polled = tuple[int, int] | None  # (version, activity) of a room, None when it is closed or unknown
AWAY = "away"  # what a tick read when the room's database did not answer


@dataclasses.dataclass
class Watcher:
    code: str
    fragment_id: str
    seen: Polled  # what the session's panel last drew
    any_change: bool  # False: the room's version only (a learner); True: answers and arrivals too (facilitator)
    sent: tuple[Polled, float] | None = None  # a rerun asked for (what it was for, when), not drawn yet

    def due(self, polled, now: float) -> bool:
        """The room moved on from what the panel drew, and no rerun for it is on its way; or its database went away
        (the panel says so, once) or came back (the panel is drawn again in place of that sentence)."""
        if polled is AWAY:
            return self.sent is None or self.sent[0] is not AWAY
        if self.sent is not None and self.sent[0] is AWAY:
            return True
        if polled is None or self.seen is None:
            moved = polled != self.seen
        else:
            moved = polled != self.seen if self.any_change else polled[0] != self.seen[0]
        return moved and (self.sent is None or self.sent[0] != polled or now - self.sent[1] >= RETRY_S)


class Watch:
    """Sessions watching rooms, and the thread that reads the rooms and asks for reruns. poll(code) -> Polled (may
    raise: the room is read again next tick); push([(session_id, fragment_id)]) -> {session_id: SENT|BUSY|GONE}."""

    def __init__(self, poll: Callable[[str], Polled], push: Callable, every_s: float = WATCH_S):
        self._poll, self._push, self.every_s = poll, push, every_s
        self._watchers: dict[str, Watcher] = {}  # session id -> what it watches (one panel per session)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def follow(self, session_id: str, code: str, fragment_id: str, seen: Polled, any_change: bool = False) -> None:
        """This session's fragment drew the room as `seen`: rerun it when the room moves on from there."""
        with self._lock:
            self._watchers[session_id] = Watcher(code, fragment_id, seen, any_change)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="room-watch", daemon=True)
                self._thread.start()

    def watching(self) -> dict[str, Watcher]:
        with self._lock:
            return dict(self._watchers)

    def tick(self) -> int:
        """Read every watched room once and ask for the reruns its changes call for; returns how many were sent."""
        watchers = self.watching()
        polled: dict[str, Polled] = {}
        for code in {w.code for w in watchers.values()}:
            try:
                polled[code] = self._poll(code)
            except Exception:  # noqa: BLE001 - the database is busy or away: read again next tick
                polled[code] = AWAY
        now = time.monotonic()
        due = {sid: w for sid, w in watchers.items() if w.code in polled and w.due(polled[w.code], now)}
        if not due:
            return 0
        outcome = self._push([(sid, w.fragment_id) for sid, w in due.items()])
        with self._lock:
            for sid, w in due.items():
                if self._watchers.get(sid) is not w:  # the panel drew again meanwhile: its own reading stands
                    continue
                if outcome.get(sid) == GONE:
                    del self._watchers[sid]
                elif outcome.get(sid) == SENT:
                    w.sent = (polled[w.code], now)  # its rerun draws the room and watches anew (follow())
        return sum(1 for v in outcome.values() if v == SENT)

    def _loop(self) -> None:
        while True:
            time.sleep(self.every_s)
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - a failed tick must not end following; the fallback timer covers it
                LOG.exception("room watch: a tick failed")


# --- Streamlit's side ----------------------------------------------------------------------------------------------


def _runtime():
    from streamlit.runtime import Runtime

    return Runtime.instance() if Runtime.exists() else None


def available() -> bool:
    """True inside a running Streamlit server whose runtime has what push() uses (not in AppTest, not in another
    Streamlit whose internals moved), unless ATTENTION_LAB_ROOM_PUSH=0."""
    from streamlit.runtime.app_session import AppSession, AppSessionState

    runtime = _runtime()
    return (
        os.environ.get(PUSH_ENV, "1") != "0"
        and runtime is not None
        and getattr(runtime, "_async_objs", None) is not None
        and callable(getattr(getattr(runtime, "_session_mgr", None), "get_active_session_info", None))
        and all(hasattr(AppSession, name) for name in ("request_rerun", "has_fragment"))
        and hasattr(AppSessionState, "APP_NOT_RUNNING")
    )


def _rerun_on_loop(runtime, targets: list[tuple[str, str]]) -> dict[str, str]:
    """On Streamlit's event loop (where sessions change state, so nothing runs between the check and the
    request): rerun each idle session's fragment with the client state its last run left."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.app_session import AppSessionState

    outcome = {}
    for session_id, fragment_id in targets:
        info = runtime._session_mgr.get_active_session_info(session_id)
        session = getattr(info, "session", None)
        if session is None or session._state == AppSessionState.SHUTDOWN_REQUESTED:
            outcome[session_id] = GONE  # closed, or its browser is away (it reruns its page when back)
        elif session._state != AppSessionState.APP_NOT_RUNNING or session._scriptrunner is not None:
            # a run, or between two runs of one chain (a page switch): its kept page may be the one it leaves
            outcome[session_id] = BUSY
        elif not session.has_fragment(fragment_id):
            outcome[session_id] = GONE  # its last page drew no panel (the seat left, another room's page)
        else:
            state = ClientState()
            state.CopyFrom(session._client_state)  # the page and query string its last run ended on
            # no widget states: the values the session holds stay as they are (a timer's rerun sends them all)
            state.fragment_id, state.is_auto_rerun = fragment_id, True
            session.request_rerun(state)
            outcome[session_id] = SENT
    return outcome


def push(targets: list[tuple[str, str]]) -> dict[str, str]:
    """Ask Streamlit to rerun these (session, fragment) pairs; called from the watch thread."""
    runtime = _runtime()
    if runtime is None:
        return {sid: GONE for sid, _ in targets}
    done: concurrent.futures.Future = concurrent.futures.Future()

    def on_loop() -> None:
        try:
            done.set_result(_rerun_on_loop(runtime, targets))
        except Exception as err:  # noqa: BLE001 - reported to the watch thread, which logs it
            done.set_exception(err)

    runtime._async_objs.eventloop.call_soon_threadsafe(on_loop)
    return done.result(timeout=PUSH_TIMEOUT_S)


_watch: Watch | None = None
_watch_lock = threading.Lock()


def watch() -> Watch:
    """The process's watch, reading rooms from the process's store."""
    global _watch
    with _watch_lock:
        if _watch is None:
            from app.room.store import open_store

            _watch = Watch(lambda code: open_store().poll(code), push)
        return _watch


def follow_here(code: str, seen: Polled, any_change: bool = False) -> bool:
    """Called by a panel fragment as it draws the room as `seen`: the server reruns this fragment when the room
    moves on. False where the server cannot push (the panel then keeps its short timer)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState, get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    fragment_id = getattr(ThreadState.get(), "fragment_id", None)
    if ctx is None or not fragment_id or not available():
        return False
    watch().follow(ctx.session_id, code, fragment_id, seen, any_change)
    return True
