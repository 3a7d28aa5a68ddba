"""The room watch (app/room/watch.py): one read per watched room per tick, however many sessions follow it; a rerun
asked for only when what a session cares about changed, once per change, again when it did not draw; busy
sessions asked on a later tick, gone ones forgotten. The Streamlit side is exercised by a real server in
tests/test_load_test_room.py (its idle room runs no script at all, and its learners follow)."""

from __future__ import annotations

from types import SimpleNamespace

from app.room import watch as w
from core.room import RoomError


class Room:
    """A room's counters as the store reports them, and how often they were read."""

    def __init__(self):
        self.polled = {"ABC": (1, 1), "XYZ": (1, 1)}
        self.reads = 0
        self.away = False

    def poll(self, code):
        self.reads += 1
        if self.away:
            raise RoomError("unavailable")
        return self.polled[code]


class Sessions:
    """What Streamlit answers for each session (SENT unless told otherwise), and the reruns asked for."""

    def __init__(self):
        self.answer: dict[str, str] = {}
        self.asked: list[tuple[str, str]] = []

    def push(self, targets):
        self.asked += targets
        return {sid: self.answer.get(sid, w.SENT) for sid, _ in targets}


def make():
    room, sessions = Room(), Sessions()
    return room, sessions, w.Watch(room.poll, sessions.push, every_s=3600)  # ticks by hand


def test_one_read_per_room_per_tick_and_nothing_while_the_room_is_still():
    room, sessions, watch = make()
    for i in range(30):
        watch.follow(f"s{i}", "ABC", "panel", (1, 1))
    watch.follow("f", "XYZ", "live", (1, 1), any_change=True)
    for _ in range(5):
        assert watch.tick() == 0
    assert room.reads == 10 and sessions.asked == []  # two rooms, five ticks; no rerun at all


def test_a_version_change_reruns_every_follower_once_and_an_answer_only_the_facilitator(monkeypatch):
    # The watch's clock stands still: on the real one, a pause of RETRY_S between two ticks (a busy machine) would
    # ask the followers again, as for reruns that never drew, and the last tick would not be 0.
    monkeypatch.setattr(w, "time", SimpleNamespace(monotonic=lambda: 1000.0, sleep=w.time.sleep))
    room, sessions, watch = make()
    watch.follow("a", "ABC", "panel", (1, 1))
    watch.follow("b", "ABC", "panel", (1, 1))
    watch.follow("f", "ABC", "live", (1, 1), any_change=True)
    room.polled["ABC"] = (1, 2)  # an answer, an arrival: the facilitator's panel only
    assert watch.tick() == 1 and sessions.asked == [("f", "live")]
    room.polled["ABC"] = (2, 2)  # the step moved
    sessions.asked.clear()
    assert watch.tick() == 3 and sorted(sessions.asked) == [("a", "panel"), ("b", "panel"), ("f", "live")]
    sessions.asked.clear()
    assert watch.tick() == 0 and sessions.asked == []  # asked once: their reruns are on their way


def test_a_rerun_that_drew_is_not_repeated_and_one_that_did_not_is_asked_again(monkeypatch):
    room, sessions, watch = make()
    watch.follow("a", "ABC", "panel", (1, 1))
    watch.follow("b", "ABC", "panel", (1, 1))
    room.polled["ABC"] = (2, 1)
    watch.tick()
    watch.follow("a", "ABC", "panel", (2, 1))  # a's rerun drew the room; b's read failed and drew nothing
    sessions.asked.clear()
    monkeypatch.setattr(w, "RETRY_S", 0.0)
    assert watch.tick() == 1 and sessions.asked == [("b", "panel")]


def test_a_busy_session_is_asked_on_a_later_tick_and_a_gone_one_is_forgotten():
    room, sessions, watch = make()
    watch.follow("busy", "ABC", "panel", (1, 1))
    watch.follow("gone", "ABC", "panel", (1, 1))
    sessions.answer = {"busy": w.BUSY, "gone": w.GONE}
    room.polled["ABC"] = (2, 1)
    assert watch.tick() == 0
    assert set(watch.watching()) == {"busy"}
    sessions.answer, sessions.asked = {}, []
    assert watch.tick() == 1 and sessions.asked == [("busy", "panel")]


def test_a_database_away_is_said_once_and_redrawn_when_back_and_a_closed_room_reruns_once():
    room, sessions, watch = make()
    watch.follow("a", "ABC", "panel", (1, 1))
    room.away = True
    assert watch.tick() == 1  # the panel's run says the database is away
    assert watch.tick() == 0 and watch.tick() == 0  # once
    room.away = False
    assert watch.tick() == 1  # back, nothing changed: the panel is drawn again in place of the sentence
    watch.follow("a", "ABC", "panel", (1, 1))
    room.polled["ABC"] = (2, 1)
    assert watch.tick() == 1
    watch.follow("a", "ABC", "panel", (2, 1))
    room.polled["ABC"] = None  # closed or expired: the panel says so, then nothing more to follow
    assert watch.tick() == 1
    watch.follow("a", "ABC", "panel", None)
    sessions.asked.clear()
    assert watch.tick() == 0 and sessions.asked == []


def test_outside_a_streamlit_server_nothing_is_pushed(monkeypatch):
    assert not w.available()  # no runtime here: the panels keep their own timer
    assert w.push([("a", "panel")]) == {"a": w.GONE}
