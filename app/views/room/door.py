"""The facilitator's door to the room: lock joining (nobody new joins, those seated stay), remove a learner (with
their answers and sentences), close the room for everyone. The store checks the control token on each. Drawn
inside the facilitator's live panel (a fragment): a refusal is said here, not by the page's notice."""

from __future__ import annotations

import streamlit as st

from app.room.store import open_store
from app.views.room import control_token
from core.room import RoomError

REFUSED = "room-door-error"  # a refusal of the last click here, said on the next draw of this part


def lock_joining(code: str, control: str, locked: bool) -> None:
    try:
        open_store().lock_joining(code, control, locked)
    except RoomError as e:
        st.session_state[REFUSED] = e.key


def remove(code: str, control: str) -> None:
    try:
        open_store().remove(code, control, st.session_state.get("room-remove-pick"))
    except RoomError as e:
        st.session_state[REFUSED] = e.key


def end(code: str, control: str) -> None:
    try:
        open_store().end(code, control)
    except RoomError as e:
        st.session_state[REFUSED] = e.key
    else:
        control_token.forget(code)  # the room's cookie goes with it (expired by the next draw)


def show(T, code: str, control: str, room, seats: list[tuple[str, str]]) -> None:
    """Who is in the room: lock joining, remove a learner (seats: (seat id, name) each), close the room."""
    with st.expander(T("door_header"), expanded=room.locked or REFUSED in st.session_state):
        if REFUSED in st.session_state:
            st.error(T(st.session_state.pop(REFUSED)))
        if room.locked:
            st.info(T("locked_note"))
            st.button(T("unlock"), on_click=lock_joining, args=(code, control, False), key="room-unlock")
        else:
            st.button(T("lock"), on_click=lock_joining, args=(code, control, True), key="room-lock")
        seats = dict(seats)
        if seats:
            c1, c2 = st.columns([3, 1])
            c1.selectbox(T("remove_pick"), list(seats), format_func=seats.get, key="room-remove-pick", index=None)
            c2.button(T("remove"), on_click=remove, args=(code, control), key="room-remove")
        with st.popover(T("end")):
            st.caption(T("end_confirm"))
            st.button(T("end"), on_click=end, args=(code, control), type="primary", key="room-end")
