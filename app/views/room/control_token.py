"""Who controls a room: the control token kept in this tab's session and in a cookie of this browser (so a
reload, a server restart or a failover keeps it), never left in the address bar, and the recovery link that carries
it, behind a button on the facilitator's page only (never on the projector view)."""

from __future__ import annotations

import json
import time

import streamlit as st

from app.room.store import open_store
from app.views.room import links
from core import room as rules

CONTROL = "room_control"  # session state: {room code: control token} of the rooms this tab controls
COOKIE_PREFIX = "lab_control_"  # + room code: the control token in this browser, for as long as the room lives


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
    if held:
        return held
    cookie = st.context.cookies.get(COOKIE_PREFIX + code)
    return cookie if take_control(code, cookie) else None


def keep_in_browser(code: str, control: str, expires: float) -> None:
    """Write the control cookie (Streamlit reads cookies but cannot set them: a line of script does). Path=/ and
    SameSite=Strict; Secure on https; it lasts as long as the room."""
    if st.context.cookies.get(COOKIE_PREFIX + code) == control:
        return
    cookie = (
        f"{COOKIE_PREFIX}{code}={control}; Path=/; Max-Age={rules.seconds_left(expires, time.time())}; SameSite=Strict"
    )
    st.html(f"<script>document.cookie = {json.dumps(cookie)} + (location.protocol === 'https:' ? '; Secure' : '');"
            "</script>", unsafe_allow_javascript=True)  # fmt: skip


def recovery(T, code: str, control: str) -> None:
    """The control link, behind a button: for the facilitator's other device or a browser that lost the cookie."""
    with st.popover(T("recovery"), icon=":material/key:"):
        st.warning(T("recovery_warning"))
        st.code(links.link("room", {"room": code, "key": control}), language=None)
