"""A learner's seat in a room, and what following needs: app/views/room/seated.py puts the room's panel
(app/views/room/learner.py) in the sidebar of every page, inside a fragment that polls the room's version every POLL_S seconds
(one indexed read) and takes a following learner to the room's step by opening its link: the step's page with
the step's query parameters, exactly what a shared link carries.

The seat travels with the tab: every page a seated learner opens carries `room=CODE&me=TOKEN` in its link, so a
new session on that link (a reload, a server restart, a failover to another replica, a phone woken after its
session expired) finds the same learner in the store: no second learner on the board, no second answer. Streamlit
reads cookies but cannot set them, and a cookie would be one per browser, not one per tab; the link is both."""

from __future__ import annotations

import functools

import streamlit as st

from app import catalog, serving, ui
from app.room.store import lessons, open_store
from core import room as rules
from core.lessons import LessonError
from core.room import RoomError

POLL_S = (
    1.5  # a follower's check: a step reaches everyone within about this plus a page run (scripts/load_test_room.py)
)
SEAT = "room_seat"  # session state: {"code", "token", "name", "following", "version", "step"}
SEAT_PARAMS = ("room", "me")  # in every seated page's link (app/ui.GLOBAL_PARAMS keeps them)
RETRY = "room_retry"  # session state: a rerun_when_back fragment is drawn and has run once


def client() -> str:
    """Who asks, for the rooms' per-client limits: the one declaration the heavy queue uses too (a browser's tabs
    are one client; a client without cookies is its session)."""
    return serving.visitor() or ""


def refused(e: RoomError) -> None:
    """A facilitator's click the room refused (or its database was busy or away): said on the next draw."""
    st.session_state["room-error"] = e.key


def in_words(draw):
    """A part of a room page whose store call is refused, or whose database is busy or away for a moment, says so
    in a sentence where it would be drawn (the next poll draws it again), never a traceback."""

    @functools.wraps(draw)
    def guarded(*args, **kwargs):
        try:
            return draw(*args, **kwargs)
        except RoomError as e:
            st.warning(ui.texts("room")(e.key))

    return guarded


def lesson_of(room):
    """The room's lesson, or None when its file went away or broke."""
    try:
        return lessons().get(room.lesson)
    except LessonError:
        return None


def seat() -> dict | None:
    return st.session_state.get(SEAT)


def take_seat(code: str, token: str, name: str) -> dict:
    # step: the room step this learner's page is on, or EXPLORING (then a following learner's next poll opens
    # the room's step)
    st.session_state[SEAT] = {"code": code, "token": token, "name": name, "following": True, "version": 0,
                              "step": rules.EXPLORING}  # fmt: skip
    return st.session_state[SEAT]


def leave() -> None:
    st.session_state.pop(SEAT, None)
    for name in SEAT_PARAMS:
        st.query_params.pop(name, None)


def seat_params(s: dict) -> dict:
    return {"room": s["code"], "me": s["token"]}


def restore() -> dict | None:
    """The seat a new session's link carries, as the store has it (where the learner was, following or not, lost
    or not), or None when the link carries none or one the store does not know."""
    code, token = rules.normal_code(st.query_params.get("room") or ""), st.query_params.get("me")
    if not code or not token:
        return None
    learner = open_store().learner(code, token)
    if learner is None:
        return None
    s = take_seat(code, token, learner.name)
    s["following"], s["lost"] = learner.following, learner.lost
    s["step"] = learner.step  # following: no page switch unless the room moved meanwhile
    return s


def step_target(lesson, step_index: int) -> tuple[st.Page, dict]:
    """(page, query parameters) of a step: the same link a learner would share, in this learner's language."""
    step = lesson.steps[step_index]
    return catalog.streamlit_page(catalog.BY_URL[step.page]), dict(step.state, lang=ui.lang())


def room_page() -> st.Page:
    return catalog.streamlit_page(catalog.BY_URL["room"])


def go_to_step(lesson, step_index: int) -> None:
    """Open the step's link. The page's widgets start from the link, not from this session's last visit."""
    page, params = step_target(lesson, step_index)
    for key in lesson.steps[step_index].state:
        st.session_state.pop(key, None)
    s = seat()
    st.switch_page(page, query_params={**params, **(seat_params(s) if s else {})})


@st.fragment(run_every=POLL_S)
def rerun_when_back(code: str = "") -> None:
    """Drawn under the sentence that the room's database is busy or away: the page is drawn anew once it answers
    (a learner's seat found again, the facilitator's page back), with nobody having to reload. Its first draw,
    inside the page's own run, only arms it: a store that answers this check but not the page's cannot loop."""
    armed = st.session_state.get(RETRY, False)
    st.session_state[RETRY] = True
    if not armed:
        return
    try:
        open_store().poll(code)
    except RoomError:
        return
    st.session_state[RETRY] = False
    st.rerun()
