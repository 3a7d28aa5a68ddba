"""Who controls a room: this browser's own control of it, given for the room's control token (core.room.service
Rooms.give_control) and kept in this tab's session and in a cookie of this browser (so a reload, a server restart or
a failover keeps it), never left in the address bar; and the recovery link that carries the control token itself,
behind a button on the facilitator's page only (never on the projector view). A facilitator on a shared computer
gives the control up on it: the store drops this browser's control, so every tab of this browser acting with it is
refused from then on and says so (the room stays open; the recovery link gives a new one), and a room that closed
leaves no control behind in the browser either."""

from __future__ import annotations

import json
import time

import streamlit as st

from app.room.store import open_store
from app.views.room import follow, links
from core import room as rules
from core.room import RoomError

CONTROL = "room_control"  # session state: {room code: this browser's control} of the rooms this tab controls
RECOVERY = "room_recovery"  # session state: {room code: the room's control token}, for the recovery link only
COOKIE_PREFIX = "lab_control_"  # + room code: "CONTROL.TOKEN" in this browser, for as long as the room lives
# session state: codes of the rooms whose control this tab gave up (or whose room closed, or whose control another
# tab of this browser gave up). Streamlit's cookies are those the session's first request carried, so the cookie
# this tab expired still shows there: it counts no more.
FORGOTTEN = "room_control_forgotten"
EXPIRE = "room_control_expire"  # session state: codes whose cookie the next draw expires in the browser


def take_control(code: str, token: str | None) -> bool:
    """Keep in this session a control of the room for this browser, given for the room's control `token` (the
    room just opened here, or its recovery link). False when `token` does not control the room; the database busy
    or away is raised (a recovery link then keeps its token until it is checked)."""
    if not token or not isinstance(token, str):
        return False
    try:
        given = open_store().give_control(code, token)
    except RoomError as e:
        if e.passing:
            raise
        return False
    _hold(code, given, token)
    return True


def _hold(code: str, control: str, token: str) -> None:
    st.session_state.setdefault(CONTROL, {})[code] = control
    st.session_state.setdefault(RECOVERY, {})[code] = token


def held_control(code: str) -> str | None:
    """This browser's control of the room as this tab holds it: this session's (every action checks it), else the
    browser's cookie (a new session after a reload, a restart or a failover, or another tab), checked against the
    room now. A cookie of a version that kept the control token alone gives this browser a control of its own."""
    held = st.session_state.get(CONTROL, {}).get(code)
    if held or code in st.session_state.get(FORGOTTEN, ()):
        return held
    cookie = st.context.cookies.get(COOKIE_PREFIX + code)
    control, _, token = cookie.rpartition(".") if isinstance(cookie, str) else ("", "", "")
    if not control:
        return st.session_state[CONTROL][code] if take_control(code, token) else None
    if not token or not open_store().is_control(code, control):
        return None
    _hold(code, control, token)
    return control


def keep_in_browser(code: str, expires: float) -> None:
    """Write the control cookie (Streamlit reads cookies but cannot set them: a line of script does). Path=/ and
    SameSite=Strict; Secure on https; it lasts as long as the room."""
    value = f"{st.session_state[CONTROL][code]}.{st.session_state[RECOVERY][code]}"
    if st.context.cookies.get(COOKIE_PREFIX + code) == value and code not in st.session_state.get(FORGOTTEN, ()):
        return  # (a cookie this tab expired, then took back with the recovery link, is written again)
    _set_cookie(f"{COOKIE_PREFIX}{code}={value}", rules.seconds_left(expires, time.time()))


def _set_cookie(value: str, max_age: int) -> None:
    cookie = f"{value}; Path=/; Max-Age={max_age}; SameSite=Strict"
    st.html(f"<script>document.cookie = {json.dumps(cookie)} + (location.protocol === 'https:' ? '; Secure' : '');"
            "</script>", unsafe_allow_javascript=True)  # fmt: skip


def forget(code: str, in_browser: bool = True) -> None:
    """This tab holds the room's control no more, nor does this browser once the next draw expires its cookie
    (forget_in_browser): given up on a shared computer, or the room closed. The room is untouched. `in_browser`
    False: another tab gave this browser's control up, and may have taken a new one into the cookie since."""
    held = st.session_state.get(CONTROL, {}).pop(code, None)
    st.session_state.get(RECOVERY, {}).pop(code, None)
    forgotten = st.session_state.setdefault(FORGOTTEN, set())
    if held is None and code in forgotten:
        return  # gone already (a closed room's panel runs on): its cookie is not expired again at every run
    forgotten.add(code)
    if in_browser:
        st.session_state.setdefault(EXPIRE, set()).add(code)


def given_up_elsewhere(code: str) -> None:
    """This tab's control was refused: another tab of this browser gave it up (or the room gave a newer browser's
    in its place). This tab forgets it and says so, the cookie is left to the tab that last wrote it."""
    forget(code, in_browser=False)


def give_up_here(code: str) -> None:
    """The store drops this browser's control (every tab acting with it is refused from now on), then this tab and
    the cookie forget it. A database busy or away: said, and nothing forgotten, so the button is pressed again."""
    held = st.session_state.get(CONTROL, {}).get(code)
    if held:
        try:
            open_store().give_up(code, held)
        except RoomError as e:
            follow.refused(e)
            return
    forget(code)


def forget_in_browser() -> None:
    """Expire the control cookies forget() named, in this draw (a page's run, or a panel's when the room closed)."""
    for code in sorted(st.session_state.pop(EXPIRE, ())):
        _set_cookie(f"{COOKIE_PREFIX}{code}=", 0)


def give_up(T, code: str) -> None:
    """The facilitator leaves a shared computer: the control leaves this tab and this browser, the room stays open."""
    with st.popover(T("give_up"), icon=":material/logout:"):
        st.caption(T("give_up_confirm"))
        st.button(T("give_up"), on_click=give_up_here, args=(code,), key="room-give-up")


def without_control(T, code: str) -> None:
    """The facilitator's link in a tab without the control: said so, in the words of why."""
    if code in st.session_state.get(FORGOTTEN, ()):
        st.info(T("given_up"))
    else:
        st.error(T("no_control"))


def recovery(T, code: str) -> None:
    """The control link, behind a button: for the facilitator's other device or a browser that lost the cookie."""
    with st.popover(T("recovery"), icon=":material/key:"):
        st.warning(T("recovery_warning"))
        st.code(links.link("room", {"room": code, "key": st.session_state[RECOVERY][code]}), language=None)
