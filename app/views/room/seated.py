"""Being in a room on every page: app/main.py calls `sidebar()`; a learner with a seat gets the room's panel
(app/views/room/learner.py) in the sidebar, inside a fragment that the server reruns when the room's version
changes (app/room/watch.py; app/views/room/follow.py keeps the seat and the following rules) and takes a following
learner to the room's step."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app import ui
from app.room import watch
from app.room.store import open_store
from app.views.room import follow, learner
from core import room as rules
from core.room import RoomError


def sidebar(page) -> None:
    """The room's panel for a seated learner on `page` (the navigation's page this run draws), the seat put back
    from the link in a new session, and the seat in this page's link. A link whose seat is not in the store (the
    room closed, a forged token) loses it, with a notice, except on /room, which says so itself."""
    on_room_page = page.url_path == "room"
    s = follow.seat()
    if s is None and "me" in st.query_params:
        try:
            s = follow.restore()
        except RoomError as e:  # the database is busy or away: the seat stays in the link, tried again
            with st.sidebar:
                st.warning(ui.t("room", e.key))
                follow.rerun_when_back()
            return
        if s is None and not on_room_page:
            follow.leave()
            st.sidebar.warning(ui.t("room", "seat_gone"))
    elif s is None and not on_room_page:
        st.query_params.pop("room", None)  # a room code alone means something on /room only
    if s is None:
        return
    for name, value in follow.seat_params(s).items():
        if st.query_params.get(name) != value:
            st.query_params[name] = value
    follow.here(page)
    read_in(s)
    with st.sidebar:
        panel()
        controls()


def read_in(s: dict) -> None:
    """The room learns the language this learner now reads in (the facilitator counts languages, the projector
    shows the step in each): one write when the page's language is not the one this session last wrote to the
    seat, written again at the next run while a refusal (rate, busy) keeps it behind (Rooms.read_in); nothing
    when they agree."""
    try:
        s["lang"] = open_store().read_in(s["code"], s["token"], s.get("lang"), ui.lang())
    except RoomError:  # the seat is gone (the panel says so): nothing to write again
        s["lang"] = ui.lang()


@st.fragment
@follow.in_words
def controls() -> None:
    s = follow.seat()
    if s is not None and s.get("room") is not None:
        learner.controls(ui.texts("room"), s)


@follow.live
def panel() -> None:
    s = follow.seat()
    if s is None or follow.stale_run():
        return
    T = ui.texts("room")
    known = s["version"] if s.get("room") is not None else None
    fresh = open_store().follow(s["code"], s["token"], known)  # one read: the counters, the room when it moved
    watch.follow_here(s["code"], fresh and fresh.polled)
    if fresh is None or (fresh.polled[0] != known and fresh.room is None):
        st.warning(T("room_closed"))
        if st.button(T("leave"), key="room-leave-closed"):
            follow.leave()
            st.rerun()
        return
    if fresh.room is not None:
        s.update(version=fresh.polled[0], room=fresh.room, hist=None, mine_q=None)
    room = s["room"]
    lesson = follow.lesson_of(room)
    if lesson is None:  # the lesson file went away or broke: say so here, every page still works
        st.warning(T("lesson_gone", lesson=room.lesson))
        return
    room = replace(room, step=rules.step_of(room, lesson))
    if s["following"] and s["step"] != room.step:  # the room's move put the seat there: this only reads, mostly
        try:
            open_store().where(s["code"], s["token"], room.step, True, fresh.seat)
        except RoomError:
            pass  # the board lags a little; following does not wait for it
        if not s.get("switching") and follow.on_step(lesson, room.step):
            s["step"] = room.step  # its page already shows the step: no page run, this panel redraws
        else:
            follow.go_to_step(lesson, room.step)
    with ui.in_sidebar():  # the panel's figures: the step's view, the class's answers
        learner.panel(T, s, room, lesson)
