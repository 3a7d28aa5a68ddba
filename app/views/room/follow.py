"""Being in a room on every page: app/main.py calls `sidebar()`; a learner with a seat gets the room's panel
(app/views/room/learner.py) in the sidebar, inside a fragment that polls the room's version every POLL_S seconds
(one indexed read) and takes a following learner to the room's step by opening its link: the step's page with
the step's query parameters, exactly what a shared link carries."""

from __future__ import annotations

import functools
from dataclasses import replace

import streamlit as st

from app import catalog, ui
from app.room.store import open_store
from core import room as rules
from core.lessons import LessonError, load_lessons
from core.room import RoomError

POLL_S = (
    1.5  # a follower's check: a step reaches everyone within about this plus a page run (scripts/load_test_room.py)
)
SEAT = "room_seat"  # session state: {"code", "token", "name", "following", "version", "step"}


@st.cache_resource(show_spinner=False)
def lessons() -> dict:
    """Every lesson (lessons/*.toml), read once per process; LessonError names the file and line."""
    return load_lessons(pages=list(catalog.BY_URL))


def store():
    return open_store()


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
    st.switch_page(page, query_params=params)


def sidebar() -> None:
    if seat() is not None:
        with st.sidebar:
            panel()
            controls()


@st.fragment
@in_words
def controls() -> None:
    from app.views.room import learner

    s = seat()
    if s is not None and s.get("room") is not None:
        learner.controls(ui.texts("room"), s)


@st.fragment(run_every=POLL_S)
@in_words
def panel() -> None:
    from app.views.room import learner

    s = seat()
    if s is None:
        return
    T = ui.texts("room")
    polled = store().poll(s["code"])
    if polled is None:
        st.warning(T("room_closed"))
        if st.button(T("leave"), key="room-leave-closed"):
            leave()
            st.rerun()
        return
    room = s.get("room")
    if polled[0] != s["version"] or room is None:
        room = store().room(s["code"])
        s.update(version=polled[0], room=room, responses=None, mine_q=None)
    lesson = lesson_of(room)
    if lesson is None:  # the lesson file went away or broke: say so here, every page still works
        st.warning(T("lesson_gone", lesson=room.lesson))
        return
    room = replace(room, step=rules.step_of(room, lesson))
    if s["following"] and s["step"] != room.step:
        s["step"] = room.step
        try:
            rules.where(store(), s["code"], s["token"], lesson, room.step, True)
        except RoomError:
            pass  # the board lags a little; following does not wait for it
        go_to_step(lesson, room.step)
    learner.panel(T, s, room, lesson)


def link(path: str, params: dict) -> str:
    """An absolute link to one of the app's pages on the host the visitor reached (join link, projector tab)."""
    from urllib.parse import urlencode, urlsplit

    here = urlsplit(st.context.url or "http://localhost:8501/")
    base = here.path.rsplit("/", 1)[0] if here.path.count("/") > 1 else ""
    return f"{here.scheme}://{here.netloc}{base}/{path.strip('/')}" + (f"?{urlencode(params)}" if params else "")
