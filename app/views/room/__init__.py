"""/room: a study group learns together. A facilitator opens a room on a lesson and gets a short code, a join link
with a QR code and a secret control link; learners join with a display name only and follow the facilitator from
step to step (the sidebar panel, app/views/room/seated.py), answer the questions whose right answers the engine
computes (core/lessons), and see the room's distribution after the reveal. Rules: core/room; stores:
core/room/sql.py (app/room/store.py picks the process's).

Links: /room (start), /room?room=CODE (join), /room?room=CODE&me=TOKEN (a learner's seat, carried by every page the
learner opens: a reload or a second tab is the same learner), /room?room=CODE&mode=projector (what the class sees),
/room?room=CODE&mode=control (the facilitator, in a tab or browser that holds the control token),
/room?room=CODE&key=CONTROL (the facilitator's recovery link: checked, gives this browser a control of its own, and
is taken out of the address bar)."""

from __future__ import annotations

import streamlit as st

from app import serving, ui
from app.room.store import open_store
from app.views.lessons.text import label, plain
from app.views.room import control_token, facilitator, follow, projector
from core import room as rules
from core.lessons import LessonError
from core.room import RoomError

PARAMS = ("room", "me", "key", "mode")  # this page's own query parameters (no widget mirrors them)


def create(T, lessons: dict) -> None:
    from_afar = serving.hosted()  # not this computer's own browser (a laptop run behind a proxy or a tunnel)
    with st.container(border=True):
        st.header(T("open_header"))
        if not open_store().opens_for(from_afar):
            st.info(T("open_here_only"))
            return
        lang = ui.lang()  # the labels this run draws, whenever they are asked for (AppTest asks after the run)
        pick = ui.pick(
            T("lesson"), list(lessons), format_func=lambda i: label(lessons[i].title, lang), key="room-lesson"
        )
        with st.form("room-create", border=False):
            passcode = None
            if open_store().asks_passcode:  # a hosted server's operator set one: never in the link, never kept
                passcode = st.text_input(T("passcode"), type="password", help=T("passcode_help"),
                                         max_chars=rules.MAX_PASSCODE_CHARS)  # fmt: skip
            if not st.form_submit_button(T("open"), type="primary"):
                return
    try:  # a selectbox may send free text, a crafted message any passcode: the room service checks both
        code, control = open_store().create(pick, client=follow.client(), passcode=passcode, from_afar=from_afar)
    except RoomError as e:
        st.error(T(e.key))
        return
    control_token.take_control(code, control)  # kept in this session (and a cookie), never in the link
    st.query_params.update({"room": code, "mode": "control"})
    st.rerun()


def join(T, code: str | None) -> None:
    with st.form("room-join", border=True):
        st.header(T("join_header"))
        typed = st.text_input(T("code"), value=code or "", max_chars=12)
        name = st.text_input(T("name"), max_chars=rules.MAX_NAME_CHARS)
        if not st.form_submit_button(T("join"), type="primary"):
            return
    normal = rules.normal_code(typed)
    try:
        if not typed.strip():
            raise RoomError("code_empty")
        if normal is None:
            raise RoomError("unknown_room")
        token = open_store().join(normal, name, ui.lang(), follow.client())
    except RoomError as e:
        st.error(T(e.key))
        return
    follow.take_seat(normal, token, rules.clean_name(name), ui.lang())
    st.query_params.update({"room": normal, "me": token})
    st.rerun()  # the sidebar panel takes the learner to the room's step


def seat(T, code: str, token: str) -> None:
    """A learner's room link (a second tab, a reload): the same seat, never a second learner."""
    learner = open_store().learner(code, token)
    if learner is None:
        st.error(T("not_learner"))
        join(T, code)
        return
    s = follow.seat()
    if s is None or s["code"] != code or s["token"] != token:
        s = follow.take_seat(code, token, learner.name, learner.lang)
    st.success(T("seated", code=code, name=plain(learner.name)))  # markdown: the name escaped, drawn as typed
    st.caption(T("seat_link"))
    if st.button(T("go_step"), type="primary", key="room-go-step"):
        room = open_store().room(code)
        lesson = None if room is None else follow.lesson_of(room)
        if lesson is None:
            st.error(T("room_closed") if room is None else T("lesson_gone", lesson=room.lesson))
            return
        s["following"] = True
        follow.go_to_step(lesson, rules.step_of(room, lesson))


def page() -> None:
    T = ui.page_setup("room")
    st.session_state["_ui_params"].update(PARAMS)  # kept in the URL by ui.page_end
    st.title(T("title"))
    try:
        lessons = follow.lessons()
    except LessonError as e:
        st.error(T("no_lessons"))
        st.code(e.shown, language=None)  # the file's name: not the server's folders
        ui.page_end()
        return
    control_token.forget_in_browser()  # a control given up, or a room closed, in the last click
    try:
        open_room(T, lessons)
    except RoomError as e:
        st.warning(T(e.key))
        if e.key in ("busy", "unavailable"):  # a recovery link keeps its token until the database can check it
            follow.rerun_when_back(st.query_params.get("room") or "")
        else:  # refused unchecked (codes tried in vain): a control token never stays in the address bar
            st.query_params.pop("key", None)
    ui.page_end()


def facilitator_page(T, code: str, lessons: dict) -> None:
    """The facilitator's page in a tab that holds this browser's control, else why not: never had it, or gave it up
    (here, or in another tab of this browser, which the store says by refusing it)."""
    control = control_token.held_control(code)
    if control:
        try:
            facilitator.show(T, code, control, lessons)
            return
        except RoomError as e:
            if e.key != "not_control":
                raise
            control_token.given_up_elsewhere(code)
    control_token.without_control(T, code)


def open_room(T, lessons: dict) -> None:
    """The part of /room the link asks for: a facilitator's, a learner's seat, joining, or the start."""
    raw = st.query_params.get("room")
    code = rules.normal_code(raw) if raw is not None else None
    if raw is not None and (code is None or open_store().find(code, follow.client()) is None):
        st.error(T("unknown_room"))
        join(T, None)
    elif code and "key" in st.query_params:  # a recovery link: the token leaves the address bar at once
        token = st.query_params["key"]
        held = control_token.take_control(code, token)  # a database away: the link keeps it until it is checked
        del st.query_params["key"]
        if held:
            st.query_params["mode"] = "control"
            facilitator_page(T, code, lessons)
        else:
            st.error(T("not_control"))
    elif code and st.query_params.get("mode") == "control":
        facilitator_page(T, code, lessons)
    elif code and st.query_params.get("mode") == "projector":
        projector.show(T, code, lessons)
    elif code and "me" in st.query_params:
        seat(T, code, st.query_params["me"])
    elif code:
        join(T, code)
    else:
        st.markdown(T("intro"))
        c1, c2 = st.columns(2)
        with c1:
            join(T, None)
        with c2:
            create(T, lessons)
