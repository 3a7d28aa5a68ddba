"""A learner's seat in a room, and what following needs: app/views/room/seated.py puts the room's panel
(app/views/room/learner.py) in the sidebar of every page, inside a fragment that the server reruns when the room's
version changes (app/room/watch.py: one read per room per process, no script run while nothing changes) and that
takes a following learner to the room's step by opening its link: the step's page with the step's query
parameters, exactly what a shared link carries.

The seat travels with the tab: every page a seated learner opens carries `room=CODE&me=TOKEN` in its link, so a
new session on that link (a reload, a server restart, a failover to another replica, a phone woken after its
session expired) finds the same learner in the store: no second learner on the board, no second answer. Streamlit
reads cookies but cannot set them, and a cookie would be one per browser, not one per tab; the link is both."""

from __future__ import annotations

import functools
import os

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from app import catalog, serving, ui
from app.room import watch
from app.room.store import lessons, open_store
from core import room as rules
from core.lessons import LessonError
from core.room import RoomError

# Where the server pushes (app/room/watch.py), a panel keeps only a slow FALLBACK_S timer; where it cannot, a
# POLL_S timer. A fragment timer races a page switch, which is why the pushed panel's is slow, and why
# `stale_run()` and the seat's switch check in `here()` exist.
# Streamlit's frontend (1.67) clears every fragment timer when a full run's first message arrives (and before a
# page link's switch), but a timer that fires after a fragment's run has called st.switch_page and before that
# message reaches the browser (or while that fragment still runs) sends a rerun of the fragment carrying the page
# and link it is leaving. The server does not let it interrupt the new page's run, queues it, and then runs the
# fragment as that old page: the old link's query parameters come back, another page's widget values are
# dropped, and the browser is told it is on the old page.
POLL_S = 1.5
# The pushed panel's timer: a push lost anyway is made good within this, and it is what brings a page back after
# its websocket reconnects to a restarted server or another replica: Streamlit's frontend (1.67) keeps showing the
# old page then and runs nothing until a fragment timer fires (seen in chromium with a one-fragment app: the panel
# reran 57 s after a restart under a 60 s timer, the page not at all before), and the new server knows no session to
# push to until that run. 15 s bounds that wait; 30 learners cost two fragment runs a second for it (about 0.02
# of a core). FALLBACK_ENV sets another period in seconds (tests/test_browser_room.py's restart test: 5 s).
FALLBACK_ENV = "ATTENTION_LAB_ROOM_FALLBACK_S"
FALLBACK_S = float(os.environ.get(FALLBACK_ENV) or 15.0)
SEAT = "room_seat"  # session state: {"code", "token", "name", "lang", "following", "version", "step"}
SEAT_PARAMS = ("room", "me")  # in every seated page's link (app/ui.GLOBAL_PARAMS keeps them)
RETRY = "room_retry"  # session state: a rerun_when_back fragment is drawn and has run once
HERE = "room_here"  # session state: (page script hash, page, query parameters) of this session's last full run
SWITCH_TRIES = 3  # a page switch to a step that did not arrive is tried again this many times in all


def client() -> str:
    """Who asks, for the rooms' per-client limits: the one declaration the heavy queue uses too (a browser's tabs
    are one client; a client without cookies is its session)."""
    return serving.visitor() or ""


def refused(e: RoomError) -> None:
    """A facilitator's click the room refused (or its database was busy or away): said on the next draw."""
    st.session_state["room-error"] = e.key


def in_words(draw):
    """A part of a room page whose store call is refused, or whose database is busy or away for a moment, says so
    in a sentence where it would be drawn (the next poll draws it again), never a traceback. Anything else it
    raises is the app's one sentence and a traceback in the server's log once a minute (serving.unexpected), as a
    page's error is: these parts are fragments, and Streamlit catches a fragment's exception itself, before
    app/main.py could, to show its own English box and log a traceback every time (a crafted widget value in a
    learner's panel, sent again and again), and on a full run the page under a failed panel was not drawn."""

    @functools.wraps(draw)
    def guarded(*args, **kwargs):
        try:
            return draw(*args, **kwargs)
        except RoomError as e:
            st.warning(ui.texts("room")(e.key))
        except Exception as err:  # noqa: BLE001 - Streamlit's stop and rerun are BaseExceptions: they pass
            serving.unexpected(err)

    return guarded


def lesson_of(room):
    """The room's lesson, or None when its file went away or broke."""
    try:
        return lessons().get(room.lesson)
    except LessonError:
        return None


def seat() -> dict | None:
    return st.session_state.get(SEAT)


def take_seat(code: str, token: str, name: str, lang: str) -> dict:
    # step: the room step this learner's page is on, or EXPLORING (then a following learner's next poll opens
    # the room's step); lang: the language the room has for this learner (seated.read_in() keeps it the page's)
    st.session_state[SEAT] = {"code": code, "token": token, "name": name, "lang": lang, "following": True,
                              "version": 0, "step": rules.EXPLORING}  # fmt: skip
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
    s = take_seat(code, token, learner.name, learner.lang)
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
    """Open the step's link. The page's widgets start from the link, not from this session's last visit. The seat
    counts the learner on the step once that page runs (`here()`), not now: Streamlit can still replace this
    switch by a rerun that arrives meanwhile (see POLL_S), and the next panel run must then switch again."""
    page, params = step_target(lesson, step_index)
    for key in lesson.steps[step_index].state:
        st.session_state.pop(key, None)
    s = seat()
    if s is not None:
        tries = s["switching"][3] + 1 if s.get("switching") and s["switching"][0] == step_index else 1
        s["switching"] = (step_index, page.url_path, dict(lesson.steps[step_index].state), tries)
    st.switch_page(page, query_params={**params, **(seat_params(s) if s else {})})


def on_step(lesson, step_index: int) -> bool:
    """This session's page already shows the step: the page its last full run drew is the step's, and the link
    it ended on carries the step's state (the page's widgets mirror their values into the link, so they show
    it too). Opening the step's link again would only run the same page once more: a following learner whose
    room moves to a step that keeps the page and its state stays put, and only the room's panel redraws."""
    kept, step = st.session_state.get(HERE), lesson.steps[step_index]
    return (
        kept is not None
        and kept[1].url_path == step.page
        and all(st.query_params.get(k) == v for k, v in step.state.items())
    )


def live(draw):
    """A room panel that redraws when the room changes (`draw` calls watch.follow_here with what it drew): rerun
    by the server (which asks again when a rerun did not draw) with a FALLBACK_S timer besides, or on a POLL_S
    timer where the server cannot push.
    Its store errors are sentences (in_words)."""
    pushed = st.fragment(run_every=FALLBACK_S)(in_words(draw))
    polled = st.fragment(run_every=POLL_S)(in_words(draw))

    @functools.wraps(draw)
    def chosen(*args, **kwargs):
        return (pushed if watch.available() else polled)(*args, **kwargs)

    return chosen


def here(page) -> None:
    """Called by every full run of a seated learner's page, before the panel: the page it draws (its script hash,
    the page, its link) for `stale_run()`, and the step the seat is on once a switch to it has arrived. A switch
    that did not arrive leaves the seat where it was, so the panel switches again (at most SWITCH_TRIES times)."""
    ctx, s = get_script_run_ctx(), seat()
    if ctx is not None:
        st.session_state[HERE] = (ctx.page_script_hash, page, st.query_params.to_dict())
    pending = s.get("switching") if s is not None else None
    if pending is not None:
        step, url, state, tries = pending
        if page.url_path == url and all(st.query_params.get(k) == v for k, v in state.items()):
            s["step"], s["switching"] = step, None
        elif tries >= SWITCH_TRIES:  # a step page that never arrives must not switch forever
            s["step"], s["switching"] = step, None


def stale_run() -> bool:
    """True (and the learner's page opened again from its link) when this fragment run is one a timer sent for a
    page the learner has left (see POLL_S): Streamlit ran it as that page."""
    ctx, kept = get_script_run_ctx(), st.session_state.get(HERE)
    if ctx is None or kept is None or not ctx.fragment_ids_this_run or ctx.page_script_hash == kept[0]:
        return False
    st.switch_page(kept[1], query_params=kept[2])
    return True


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
