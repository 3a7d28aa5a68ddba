"""Who controls a room: the control token kept in this tab's session and in a cookie of this browser (so a
reload, a server restart or a failover keeps it), never left in the address bar, and the recovery link that carries
it, behind a button on the facilitator's page only (never on the projector view). A facilitator on a shared computer
gives the control up on it (the room stays open; the recovery link takes it back), and a room that closed leaves
no control behind in the browser either."""

from __future__ import annotations

import json
import time

import streamlit as st

from app.room.store import open_store
from app.views.room import links
from core import room as rules

CONTROL = "room_control"  # session state: {room code: control token} of the rooms this tab controls
COOKIE_PREFIX = "lab_control_"  # + room code: the control token in this browser, for as long as the room lives
# session state: codes of the rooms whose control this tab gave up (or whose room closed). Streamlit's cookies are
# those the session's first request carried, so the cookie this tab expired still shows there: it counts no more.
FORGOTTEN = "room_control_forgotten"
EXPIRE = "room_control_expire"  # session state: codes whose cookie the next draw expires in the browser


def take_control(code: str, token: str | None) -> bool:
    """Keep the control token in this session when it controls the room."""
    if not token or not open_store().is_control(code, token):
        return False
    st.session_state.setdefault(CONTROL, {})[code] = token
    return True


def held_control(code: str) -> str | None:
    """The control token this tab holds for the room: this session's (checked when it was taken; every action
    checks it again), else this browser's cookie (a new session after a reload, a restart or a failover), checked
    against the room now."""
    held = st.session_state.get(CONTROL, {}).get(code)
    if held or code in st.session_state.get(FORGOTTEN, ()):
        return held
    cookie = st.context.cookies.get(COOKIE_PREFIX + code)
    return cookie if take_control(code, cookie) else None


def keep_in_browser(code: str, control: str, expires: float) -> None:
    """Write the control cookie (Streamlit reads cookies but cannot set them: a line of script does). Path=/ and
    SameSite=Strict; Secure on https; it lasts as long as the room."""
    if st.context.cookies.get(COOKIE_PREFIX + code) == control and code not in st.session_state.get(FORGOTTEN, ()):
        return  # (a cookie this tab expired, then took back with the recovery link, is written again)
    _set_cookie(f"{COOKIE_PREFIX}{code}={control}", rules.seconds_left(expires, time.time()))


def _set_cookie(value: str, max_age: int) -> None:
    cookie = f"{value}; Path=/; Max-Age={max_age}; SameSite=Strict"
    st.html(f"<script>document.cookie = {json.dumps(cookie)} + (location.protocol === 'https:' ? '; Secure' : '');"
            "</script>", unsafe_allow_javascript=True)  # fmt: skip


def forget(code: str) -> None:
    """This tab holds the room's control no more, nor does this browser once the next draw expires its cookie
    (forget_in_browser): given up on a shared computer, or the room closed. The room is untouched."""
    held = st.session_state.get(CONTROL, {}).pop(code, None)
    forgotten = st.session_state.setdefault(FORGOTTEN, set())
    if held is None and code in forgotten:
        return  # gone already (a closed room's panel runs on): its cookie is not expired again at every run
    forgotten.add(code)
    st.session_state.setdefault(EXPIRE, set()).add(code)


def forget_in_browser() -> None:
    """Expire the control cookies forget() named, in this draw (a page's run, or a panel's when the room closed)."""
    for code in sorted(st.session_state.pop(EXPIRE, ())):
        _set_cookie(f"{COOKIE_PREFIX}{code}=", 0)


def give_up(T, code: str) -> None:
    """The facilitator leaves a shared computer: the control leaves this tab and this browser, the room stays open."""
    with st.popover(T("give_up"), icon=":material/logout:"):
        st.caption(T("give_up_confirm"))
        st.button(T("give_up"), on_click=forget, args=(code,), key="room-give-up")


def without_control(T, code: str) -> None:
    """The facilitator's link in a tab without the control: said so, in the words of why."""
    if code in st.session_state.get(FORGOTTEN, ()):
        st.info(T("given_up"))
    else:
        st.error(T("no_control"))


def recovery(T, code: str, control: str) -> None:
    """The control link, behind a button: for the facilitator's other device or a browser that lost the cookie."""
    with st.popover(T("recovery"), icon=":material/key:"):
        st.warning(T("recovery_warning"))
        st.code(links.link("room", {"room": code, "key": control}), language=None)
