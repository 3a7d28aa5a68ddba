"""/room driven through AppTest: start, join, follow, answer, reveal; the facilitator's control link; unknown
codes; a second tab of one learner; learners' words shown as plain text only. The store is a temporary SQLite
file (the same rules on PostgreSQL: tests/core/test_room_store.py)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import time

import pytest

import app.room.store as store_module
from app import i18n, serving
from app.views.lessons.text import plain
from app.views.room import control_token, follow, links
from core import room as rules
from tests.apptest_helpers import assert_no_exception, run_fragment, run_view, send_raw, shown_text, switch_to
from tests.room_stores import Clock, as_process_store

LESSON = "qkv-softmax"


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from as_process_store(tmp_path, monkeypatch)


def lesson():
    return follow.lessons()[LESSON]


def test_start_page_offers_join_and_open(store):
    at = run_view("room")
    assert_no_exception(at)
    assert [b.label for b in at.get("form_submit_button")] == ["Join", "Open a room"]


def test_unknown_or_expired_code_gets_a_clear_message(store):
    for code in ("ZZZZZZ", "not a code", "<b>x</b>"):
        at = run_view("room", {"room": code})
        assert_no_exception(at)
        assert any("no open room with this code" in e.value for e in at.error)
    code, _ = store.create(LESSON, ttl_s=-1)  # already expired
    at = run_view("room", {"room": code})
    assert any("no open room with this code" in e.value for e in at.error)


def test_joining_with_no_code_asks_for_the_code(store):
    """An empty code is not "no open room with this code": the visitor is asked to type one."""
    at = run_view("room")
    at.text_input[1].set_value("Ana")
    at.get("form_submit_button")[0].click().run()
    assert_no_exception(at)
    assert [e.value for e in at.error] == [i18n.text("en", "room", "code_empty")]


def test_only_the_control_link_shows_the_facilitator_view(store):
    code, control = store.create(LESSON)
    token = store.join(code, "Ana", "en")
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any(b.label == "Next step" for b in at.button)
    text = shown_text(at)
    assert f"Room code: **{code}**" in text and "You are the facilitator" in text
    altered = control[:-1] + ("y" if control.endswith("x") else "x")  # one character off, never the token itself
    for wrong in (token, altered, ""):
        at = run_view("room", {"room": code, "key": wrong})
        assert_no_exception(at)
        assert any("does not control the room" in e.value for e in at.error)
        assert not any(b.label == "Next step" for b in at.button)


def test_facilitator_moves_opens_and_reveals(store):
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    next(b for b in at.button if b.label == "Next step").click().run()
    assert store.room(code).step == 1
    next(b for b in at.button if b.label == "Open the question").click().run()
    room = store.room(code)
    q = lesson().steps[1].question
    assert room.phase == "open" and room.question == q.id
    # the stored right answer is the engine's, from the step's state (core.lessons.answer)
    from core.lessons import answer

    assert room.answer == answer(q, lesson().steps[1].state)
    next(b for b in at.button if b.label == "Reveal the answer").click().run()
    assert_no_exception(at)
    assert store.room(code).phase == "revealed"
    assert any(s.value.startswith("Right answer:") for s in at.success)


def test_an_answer_the_engine_cannot_compute_names_no_server_file_to_a_hosted_facilitator(store, monkeypatch):
    """The facilitator of a room on a hosted server is an anonymous visitor too: the engine's reason for an answer
    it cannot compute (its words may name the server's files) goes to the server's log, the page says one sentence."""
    from app.views.lessons import progress

    def refused(question, state):
        raise ValueError("cannot read /srv/private-models/smollm2/config.json")

    monkeypatch.setattr(progress, "right_answer", refused)
    monkeypatch.setenv("ATTENTION_LAB_HOSTED", "1")
    code, control = store.create(LESSON)
    store.move(code, control, 1)
    at = run_view("room", {"room": code, "key": control})
    next(b for b in at.button if b.label == "Open the question").click().run()
    assert_no_exception(at)
    shown = shown_text(at)
    assert "/srv/private-models" not in shown, shown
    assert i18n.text("en", "lessons", "no_answer_hosted") in shown
    assert store.room(code).phase != "open"


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_name_that_draws_nothing_is_asked_for_again_in_the_visitors_language(store, lang):
    """A prankster's name of Hangul fillers and blank Braille would be a blank row on the board and projector."""
    code, _ = store.create(LESSON)
    at = run_view("room", {"room": code, "lang": lang})
    at.text_input[1].input("\u3164\u2800\u3000\u200b")
    at.get("form_submit_button")[0].click().run()
    assert_no_exception(at)
    assert [e.value for e in at.error] == [i18n.text(lang, "room", "name_empty")]
    assert follow.SEAT not in at.session_state and store.steps_of_learners(code) == []


def test_a_learner_joins_follows_and_answers_once(store):
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code})
    at.text_input[1].input("Ana")
    at.get("form_submit_button")[0].click()
    at.run()
    assert_no_exception(at)
    seat = at.session_state[follow.SEAT]
    assert seat["code"] == code and store.learner(code, seat["token"]).name == "Ana"
    # following: the learner is now on the room's step, opened with the step's link parameters
    step = lesson().steps[0]
    for k, v in step.state.items():
        assert at.query_params[k] in (v, [v])
    store.move(code, control, 0)
    right = store.open_question(code, control, lesson().id, store.room(code).step)
    at.run()
    assert_no_exception(at)
    assert any(text_of(m) == lesson().steps[0].question.prompt["en"] for m in at.markdown)
    assert store.answer(code, seat["token"], rules.answer_to_text(right)) is True
    assert store.answer(code, seat["token"], "0") is False  # the same seat from a second tab


def text_of(element) -> str:
    """What a reader sees of an element's markdown: lesson words are drawn escaped (app/views/lessons/text.plain)."""
    return re.sub(r"\\(.)", r"\1", str(element.value)).replace("  \n", "\n")


def test_second_tab_is_the_same_learner(store):
    code, _ = store.create(LESSON)
    token = store.join(code, "Ana", "ko")
    at = run_view("room", {"room": code, "me": token})
    assert_no_exception(at)
    assert any("as Ana" in s.value for s in at.success)
    assert at.session_state[follow.SEAT]["token"] == token
    assert len(store.steps_of_learners(code)) == 1
    at = run_view("room", {"room": code, "me": "forged"})
    assert any("not a seat in this room" in e.value for e in at.error)


def test_learner_words_are_plain_text_for_others(store):
    code, control = store.create(LESSON)
    evil = "<img src=x onerror=alert(1)> **bold** <script>x</script>"
    token = store.join(code, "<b>Eve</b>", "en")
    store.submit(code, token, 0, evil)
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any(t.value == f"<b>Eve</b>: {evil}" for t in at.text)  # st.text: never markdown or HTML
    assert not any("<script>" in m.value or "<b>Eve" in m.value for m in at.markdown)
    store.show(code, control, evil)
    learner = run_view("room", {"room": code, "me": store.join(code, "Bo", "en")})
    learner.run()  # the sidebar panel appears once the seat is taken
    assert any(t.value == evil for t in learner.text)
    assert not any("<script>" in m.value for m in learner.markdown)


def test_a_learners_name_on_their_seat_page_is_plain_text(store):
    """The seat page (/room?room=CODE&me=TOKEN: a learner's reload, second tab, or a link shared against the
    advice) greets the learner by name in a box Streamlit draws as markdown: a name is shown as typed there too,
    never a link, an image (a request to another site) or emphasis."""
    code, _ = store.create(LESSON)
    name = "[a](https://e.example) ![t](/t.png)**x**"
    at = run_view("room", {"room": code, "me": store.join(code, name, "en")})
    assert_no_exception(at)
    (greeting,) = [s.value for s in at.success]
    assert greeting == i18n.text("en", "room", "seated", code=code, name=plain(name))  # escaped: drawn as typed
    assert not re.search(r"(?<!\\)\]\(|(?<!\\)\*\*", greeting), greeting


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_facilitator_on_one_replica_learners_on_the_other(kind, tmp_path, monkeypatch):
    """Two replicas = two processes with their own store connection to one database: the facilitator's clicks on
    one reach the learner served by the other (the learner's session never touches the facilitator's replica)."""
    import time

    from core.room.service import Rooms
    from tests.room_stores import open_kind

    replica_a, replica_b = (Rooms(open_kind(kind, tmp_path, time.time), store_module.lessons) for _ in range(2))
    try:
        monkeypatch.setattr(store_module, "_store", replica_a)
        code, control = replica_a.create(LESSON)
        fac = run_view("room", {"room": code, "key": control})
        monkeypatch.setattr(store_module, "_store", replica_b)
        learner = run_view("room", {"room": code})
        learner.text_input[1].input("Ana")
        learner.get("form_submit_button")[0].click()
        learner.run()
        assert_no_exception(learner)
        monkeypatch.setattr(store_module, "_store", replica_a)
        next(b for b in fac.button if b.label == "Next step").click().run()
        next(b for b in fac.button if b.label == "Open the question").click().run()
        assert_no_exception(fac)
        monkeypatch.setattr(store_module, "_store", replica_b)
        learner.run()  # the panel's poll: the room moved on the other replica
        assert_no_exception(learner)
        assert learner.session_state[follow.SEAT]["step"] == 1
        assert any("step 2 of" in m.value for m in learner.markdown)
        assert any(text_of(m) == lesson().steps[1].question.prompt["en"] for m in learner.markdown)
        monkeypatch.setattr(store_module, "_store", replica_a)
        assert [name for name, _, _ in replica_a.learners(code, control)] == ["Ana"]
    finally:
        replica_a.close()
        replica_b.close()


def test_a_room_whose_lesson_went_away_says_so(store):
    import time

    code, control = "ABCDEF", "control-token"
    with store.store.atomic(write=True) as tx:  # opened before its lesson file was taken away
        tx.insert_room(code, rules.digest(control), "no-such-lesson", time.time(), time.time() + 600)
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any("no-such-lesson" in e.value and "not on this server" in e.value for e in at.error)
    learner = run_view("room", {"room": code, "me": store.join(code, "Ana", "en")})
    learner.run()  # the sidebar panel, on every page: a warning, not an exception
    assert_no_exception(learner)
    assert any("no-such-lesson" in w.value for w in learner.warning)


def learner_on_the_room_step(store, code):
    """A learner who joined and whose sidebar panel has taken them to the room's step."""
    token = store.join(code, "Ana", "en")
    at = run_view("room", {"room": code, "me": token})
    at.run()  # the panel's first poll opens the room's step
    assert_no_exception(at)
    return at, token


def test_follow_switched_off_and_on_twice_within_one_poll(store):
    """The follow toggle lives in its own fragment: a click reruns only it, so four clicks can come between two
    redraws of the panel. The learner's stored position is a step or 'exploring', never None, and no error shows;
    following again opens the room's step at once (the server reruns the panel only when the room changes)."""
    code, control = store.create(LESSON)
    store.move(code, control, 2)
    at, token = learner_on_the_room_step(store, code)
    assert store.learner(code, token).step == 2
    for value in (False, True, False, True):
        at.toggle(key="room-follow").set_value(value)
        run_fragment(at, "controls")
        assert_no_exception(at)
        kept = store.learner(code, token)
        assert kept.following is value and kept.step in (-1, 2)  # -1: exploring until the next poll
    # following again takes the learner back to the room's step at once, though the room did not change
    assert store.learner(code, token).step == 2 and at.session_state[follow.SEAT]["step"] == 2


@pytest.mark.parametrize("typed", ["999", "5", "-1", "abc", ""])
def test_go_to_step_refuses_a_step_the_lesson_does_not_have(store, typed):
    """'Go to step' is a selectbox; what a browser sends is text, and text that is no option arrives as is."""
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    send_raw(at.selectbox(key="room-go"), string_value=typed)
    at.run()
    assert_no_exception(at)
    assert store.room(code).step == 0
    assert any(e.value == "There is no such step in this lesson." for e in at.error)
    at.selectbox(key="room-go").select(3).run()  # a real option still moves the room
    assert_no_exception(at)
    assert store.room(code).step == 3


def test_an_answer_that_is_no_option_is_refused_in_words(store):
    code, control = store.create(LESSON)
    store.move(code, control, 2)  # a choice question
    store.open_question(code, control, lesson().id, store.room(code).step)
    at, token = learner_on_the_room_step(store, code)
    send_raw(at.radio(key="room-pick"), string_value="<b>not an option</b>")
    next(b for b in at.get("form_submit_button") if b.label == "Answer").click().run()
    assert_no_exception(at)
    assert any("That is not an answer to this question" in w.value for w in at.warning)
    assert store.my_answer(code, token, store.room(code).question) is None


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_crafted_value_in_a_room_panel_is_the_apps_one_sentence_and_the_page_still_runs(store, lang, caplog):
    """A seated learner's sidebar panel is a fragment, which Streamlit runs under its own error handler: an answer
    picker sent a number where it holds text (a crafted websocket frame; it fails inside Streamlit's register_widget,
    TypeError) showed Streamlit's English error box, wrote a full traceback per frame past the app's once-a-minute
    rule, and on a full run cut the learner's page short. It is the app's one sentence in the learner's language
    instead, the step's page is still drawn, and the traceback goes through app/serving.py once a minute."""
    import logging

    from streamlit import config

    from app import serving

    code, control = store.create(LESSON)
    store.move(code, control, 2)  # a choice question
    store.open_question(code, control, lesson().id, 2)

    def learner_sends_a_number(run):
        token = store.join(code, f"Ana {len(store.learners(code, control))}", lang)
        at = run_view("room", {"room": code, "me": token, "lang": lang})
        at.run()  # the panel's first poll opens the room's step
        assert_no_exception(at)
        title = [t.value for t in at.title]
        send_raw(at.radio(key="room-pick"), int_value=999)
        run(at)
        assert not at.exception, [e.value for e in at.exception]
        assert [e.value for e in at.error] == [i18n.text(lang, "common", "unexpected")]
        return title, [t.value for t in at.title]

    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "none")  # as .streamlit/config.toml sets it for visitors
    serving._tracebacks.clear()
    try:
        with caplog.at_level(logging.ERROR):
            learner_sends_a_number(lambda at: run_fragment(at, "panel"))  # the panel alone, as its timer reruns it
            drawn, after = learner_sends_a_number(lambda at: at.run())  # a full run: the page under it is drawn
            assert after == drawn
    finally:
        config.set_option("client.showErrorDetails", before)
    tracebacks = [r for r in caplog.records if r.exc_info or "Traceback (most recent call last)" in r.getMessage()]
    assert [r.name for r in tracebacks] == ["attention_lab"], [(r.name, r.getMessage()) for r in tracebacks]


def test_a_click_from_a_page_drawn_before_the_room_moved_is_a_sentence(store):
    """The facilitator's second tab (or a slow redraw) still shows 'Reveal' after the room moved on."""
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    next(b for b in at.button if b.label == "Open the question").click().run()
    store.move(code, control, 1)  # another tab of the facilitator moved the room
    next(b for b in at.button if b.label == "Reveal the answer").click().run()
    assert_no_exception(at)
    assert any(e.value == "This question is not open." for e in at.error)
    assert store.room(code).phase == ""


def test_a_click_while_another_server_holds_the_file_is_a_sentence(store, tmp_path):
    import sqlite3

    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    holder = sqlite3.connect(tmp_path / "rooms.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the other server's write lock, held too long
    try:
        next(b for b in at.button if b.label == "Next step").click().run()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert_no_exception(at)
    assert any("The room is busy" in e.value for e in at.error)
    next(b for b in at.button if b.label == "Next step").click().run()  # the next click lands
    assert store.room(code).step == 1


def test_a_database_away_is_a_sentence_on_every_page_of_a_learner(store, monkeypatch):
    code, _ = store.create(LESSON)
    at, _ = learner_on_the_room_step(store, code)

    def away(*args, **kwargs):
        raise rules.RoomError("unavailable")

    for action in ("poll", "room", "find", "learner", "is_control"):
        monkeypatch.setattr(store, action, away)
    at.run()  # the sidebar's poll on the step's page
    assert_no_exception(at)
    assert any("cannot be reached just now" in w.value for w in at.warning)
    at = run_view("room", {"room": code})
    assert_no_exception(at)
    assert any("cannot be reached just now" in w.value for w in at.warning)


# ---- the control token out of the link, the projector view, the join link's address ------------------------


def test_a_new_room_keeps_its_control_token_out_of_the_link(store):
    at = run_view("room")
    next(b for b in at.get("form_submit_button") if b.label == "Open a room").click()
    at.run()
    assert_no_exception(at)
    assert "key" not in at.query_params and at.query_params["mode"] in ("control", ["control"])
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    control = at.session_state[control_token.RECOVERY][code]  # the room's control token
    browsers = at.session_state[control_token.CONTROL][code]  # the control this browser acts with, given for it
    assert store.is_control(code, control) and store.is_control(code, browsers) and browsers != control
    assert any(b.label == "Next step" for b in at.button)  # the facilitator's page, from the session
    assert control not in shown_text(at) and browsers not in shown_text(at)  # the recovery link: in its popover
    assert [c.value for c in at.code if control in c.value] == [c.value for c in at.get("popover")[0].code]
    assert not [c.value for c in at.code if browsers in c.value]
    at.run()
    assert any(b.label == "Next step" for b in at.button)


def test_a_recovery_link_is_checked_then_leaves_the_address_bar(store):
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert "key" not in at.query_params and at.query_params["mode"] in ("control", ["control"])
    assert any(b.label == "Next step" for b in at.button)
    next(b for b in at.button if b.label == "Next step").click().run()  # the session still holds the control
    assert store.room(code).step == 1 and "key" not in at.query_params
    recovery = [c.value for c in at.code if "key=" in c.value]
    assert recovery == [f"http://localhost:8501/room?room={code}&key={control}"]  # the popover's link
    # the same link without the token, in a session (or browser) that never held it: no control
    other = run_view("room", {"room": code, "mode": "control"})
    assert_no_exception(other)
    assert any("does not hold the control" in e.value for e in other.error)
    assert not any(b.label == "Next step" for b in other.button)


def test_the_control_cookie_is_strict_to_this_site_and_ends_with_the_room(store):
    """The control lives in a cookie only this site's own pages send (SameSite=Strict: a link or a form on another
    site does not carry it), on every path, for no longer than the room lasts, Secure when the page is on https."""
    at = run_view("room")
    next(b for b in at.get("form_submit_button") if b.label == "Open a room").click()
    at.run()
    assert_no_exception(at)
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    control = at.session_state[control_token.CONTROL][code]
    token = at.session_state[control_token.RECOVERY][code]
    scripts = [h.proto.body for h in at.get("html") if "document.cookie" in h.proto.body]
    assert len(scripts) == 1, scripts
    cookie = re.search(r'document\.cookie = "([^"]*)"', scripts[0]).group(1)
    parts = [p.strip() for p in cookie.split(";")]
    assert parts[0] == f"{control_token.COOKIE_PREFIX}{code}={control}.{token}"
    assert {"Path=/", "SameSite=Strict"} <= set(parts[1:]), parts
    age = int(next(p for p in parts if p.startswith("Max-Age=")).split("=")[1])
    assert 0 < age <= rules.DEFAULT_TTL_H * 3600, age
    assert "'; Secure'" in scripts[0] and "location.protocol === 'https:'" in scripts[0]


def cookie_writes(at) -> list[list[str]]:
    """The cookies the page's scripts write (document.cookie = ...), each as its parts."""
    scripts = [h.proto.body for h in at.get("html") if "document.cookie" in h.proto.body]
    return [[p.strip() for p in re.search(r'document\.cookie = "([^"]*)"', s).group(1).split(";")] for s in scripts]


def arriving_with(monkeypatch, cookies: dict) -> None:
    """The cookies a session's first request carried (Streamlit's st.context.cookies keeps those for the whole
    session, whatever a script of the page changes in the browser since)."""
    from types import SimpleNamespace

    from streamlit.runtime import context

    monkeypatch.setattr(context, "_get_client_context", lambda: SimpleNamespace(headers={}, cookies=dict(cookies)))


def test_a_facilitator_gives_up_the_control_on_a_shared_computer_and_takes_it_back(store, monkeypatch):
    """A facilitator who leaves a school computer left the room's control to whoever sat down next: the tab's
    session and the browser's cookie (as long as the room) both held it. Giving it up drops both and leaves the room
    open; this session's own cookie, which Streamlit keeps as the session's first request sent it, counts no more;
    the recovery link takes the control back, and the cookie is written again."""
    code, control = store.create(LESSON)
    cookie = f"{control_token.COOKIE_PREFIX}{code}"
    arriving_with(monkeypatch, {cookie: control})  # a reload: the browser's cookie holds the control
    at = run_view("room", {"room": code, "mode": "control"})
    assert any(b.label == "Next step" for b in at.button)
    give_up = next(b for b in at.button if b.key == "room-give-up")
    assert give_up.label == i18n.text("en", "room", "give_up")
    give_up.click().run()
    assert_no_exception(at)
    assert code not in at.session_state[control_token.CONTROL]
    assert cookie_writes(at) == [[f"{cookie}=", "Path=/", "Max-Age=0", "SameSite=Strict"]]  # expired in the browser
    assert not any(b.label == "Next step" for b in at.button) and not at.error
    assert [i.value for i in at.info] == [i18n.text("en", "room", "given_up")]
    at.run()  # the session's cookie from its first request is still there: no control from it
    assert not any(b.label == "Next step" for b in at.button) and not cookie_writes(at)
    assert store.room(code) is not None and store.is_control(code, control)  # the room goes on, its link controls
    arriving_with(monkeypatch, {})  # the next person at that browser: the cookie is gone
    other = run_view("room", {"room": code, "mode": "control"})
    assert any("does not hold the control" in e.value for e in other.error)
    assert not any(b.label == "Next step" for b in other.button)
    arriving_with(monkeypatch, {cookie: control})  # back in the first tab, whose session arrived with the cookie
    at.query_params["key"] = control  # the recovery link
    at.run()
    assert_no_exception(at)
    assert any(b.label == "Next step" for b in at.button) and "key" not in at.query_params
    again = at.session_state[control_token.CONTROL][code]  # a new control of this browser's
    assert [w[0] for w in cookie_writes(at)] == [f"{cookie}={again}.{control}"]  # this browser holds it again


def test_giving_up_the_control_in_one_tab_reaches_the_browsers_other_tabs(store, monkeypatch):
    """Giving up control on a shared computer dropped it in the tab that pressed the button and in the cookie, but
    another tab of the facilitator's page in that browser kept the control until it was closed, for the next person
    at it. Every tab of the browser now acts with the browser's own control, which giving up drops in the store:
    the other tab's live panel finds it refused and its page says the control was given up (no step buttons, no
    recovery link), as does a click on a button it still showed; the recovery link takes the control back."""
    at = run_view("room")
    next(b for b in at.get("form_submit_button") if b.label == "Open a room").click()
    at.run()
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    [link] = [c.value for c in at.get("popover")[0].code]  # the recovery link
    token = link.split("&key=")[1]
    [written] = [w[0] for w in cookie_writes(at)]
    name, value = written.split("=", 1)
    arriving_with(monkeypatch, {name: value})  # the browser's other tabs, opened on the facilitator's page
    tabs = [run_view("room", {"room": code, "mode": "control"}) for _ in range(2)]
    for tab in tabs:
        assert_no_exception(tab)
        assert any(b.label == "Next step" for b in tab.button)
    next(b for b in at.button if b.key == "room-give-up").click().run()
    assert_no_exception(at)
    given_up = i18n.text("en", "room", "given_up")
    run_fragment(tabs[0], "live")  # the server reruns its live panel: the room's activity moved
    next(b for b in tabs[1].button if b.label == "Next step").click().run()  # a button it still showed
    assert store.room(code).step == 0 and store.room(code) is not None
    for tab in (*tabs, at):
        assert_no_exception(tab)
        assert [i.value for i in tab.info] == [given_up] and not tab.error
        assert not any(b.label == "Next step" for b in tab.button)
        assert not [c.value for c in tab.code if token in c.value]  # no recovery link left on its page
        assert code not in tab.session_state[control_token.CONTROL]
    tabs[0].query_params["key"] = token  # the recovery link, in one of them
    tabs[0].run()
    assert_no_exception(tabs[0])
    assert any(b.label == "Next step" for b in tabs[0].button)
    next(b for b in tabs[0].button if b.label == "Next step").click().run()
    assert store.room(code).step == 1


def test_closing_the_room_expires_the_control_cookie(store, monkeypatch):
    """The control cookie lasted as long as the room was to live (24 hours) after the facilitator closed it: it now
    goes with the room, whether closed by this page's button or elsewhere (the live panel finds the room closed)."""
    for where in ("here", "elsewhere"):
        code, control = store.create(LESSON)
        cookie = f"{control_token.COOKIE_PREFIX}{code}"
        arriving_with(monkeypatch, {cookie: control})
        at = run_view("room", {"room": code, "mode": "control"})
        assert any(b.label == "Next step" for b in at.button)
        if where == "here":
            next(b for b in at.button if b.key == "room-end").click().run()
        else:  # the facilitator's other device: this page's live panel finds the room closed at its next run
            store.end(code, control)
            run_fragment(at, "live")
        assert_no_exception(at)
        assert store.room(code) is None and code not in at.session_state[control_token.CONTROL]
        assert cookie_writes(at) == [[f"{cookie}=", "Path=/", "Max-Age=0", "SameSite=Strict"]], where


def test_the_projector_view_shows_the_room_without_control_or_names(store):
    code, control = store.create(LESSON)
    ana = store.join(code, "Ana Secretname", "en")
    store.move(code, control, 1)
    store.open_question(code, control, lesson().id, store.room(code).step)
    at = run_view("room", {"room": code, "mode": "projector"})
    assert_no_exception(at)
    text = shown_text(at)
    assert f"Room code: **{code}**" in text and any(h.value == "Step 2 of 5" for h in at.subheader)
    assert any(c.value == f"http://localhost:8501/room?room={code}" for c in at.code)  # the join link
    assert any(text_of(m) == lesson().steps[1].question.prompt["en"] for m in at.markdown)
    assert [m.value for m in at.metric] == ["1", "0"]  # learners, answered
    right = store.room(code).answer
    store.answer(code, ana, rules.answer_to_text(right))
    at.run()
    assert [m.value for m in at.metric] == ["1", "1"] and len(at.get("plotly_chart")) == 1
    assert not at.button and not at.get("form_submit_button") and not at.get("popover")  # nothing controls
    everything = text + " ".join(c.value for c in at.code) + " ".join(t.value for t in at.text)
    assert control not in everything and "Secretname" not in everything
    store.reveal(code, control)
    at.run()
    assert any(s.value.startswith("Right answer:") for s in at.success)


def test_a_mixed_class_is_counted_by_language_and_the_projector_shows_each_ones_text(store):
    """The facilitator reads how many learners read in each language, in their own words; the projector shows the
    step's text and question in its language and below in each other language a learner reads (under that
    language's own name), not in one nobody reads; a learner who switches the app's language moves to it."""
    code, control = store.create(LESSON)
    ana = store.join(code, "Ana", "ja")
    store.join(code, "Bo", "en")
    store.join(code, "Chi", "ja")
    store.move(code, control, 1)
    store.open_question(code, control, lesson().id, 1)
    at = open_facilitator(code, control, "en")
    assert "Reading in: English 1, Japanese 2" in [c.value for c in at.caption]
    at = open_facilitator(code, control, "ja")
    assert "読んでいる言語：英語 1人、日本語 2人" in [c.value for c in at.caption]
    step = lesson().steps[1]
    at = run_view("room", {"room": code, "mode": "projector"})
    assert_no_exception(at)
    shown = [text_of(m) for m in at.markdown]
    for words in (step.text, step.question.prompt):
        assert words["en"] in shown and words["ja"] in shown and words["ko"] not in shown
    assert "日本語" in [c.value for c in at.caption] and "한국어" not in [c.value for c in at.caption]
    seated = run_view("room", {"room": code, "me": ana, "lang": "ja"})
    seated.selectbox(key="lang").select("ko").run()  # Ana switches to Korean
    assert_no_exception(seated)
    assert store.learner(code, ana).lang == "ko"
    at.run()
    shown = [text_of(m) for m in at.markdown]
    assert step.text["ko"] in shown and step.text["ja"] in shown  # Chi still reads Japanese


def test_the_projector_reveals_the_answer_in_each_language_the_class_reads(store):
    """The right answer (a choice, said in each reader's words) and its explanation follow the question's rule:
    the projector's language, then each other language a learner reads, not one nobody reads."""
    from core.lessons import fill

    scaling = follow.lessons()["scaling"]
    step = next(i for i, s in enumerate(scaling.steps) if s.question and s.question.id == "more-peaked")
    code, control = store.create("scaling")
    store.join(code, "Ana", "ja")
    store.move(code, control, step)
    store.open_question(code, control, scaling.id, step)
    store.reveal(code, control)
    at = run_view("room", {"room": code, "mode": "projector"})
    assert_no_exception(at)
    right, explanation = store.room(code).answer, scaling.steps[step].question.explanation

    def said(lang):
        return i18n.text(lang, "lessons", f"choice_{right.correct}")

    assert [text_of(s) for s in at.success] == [f"Right answer: {said('en')}", f"正解：{said('ja')}"]
    shown = [text_of(m) for m in at.markdown]
    for lang in ("en", "ja"):
        assert fill(explanation[lang], dataclasses.replace(right, correct=said(lang))) in shown
    assert not any(explanation["ko"][:8] in m for m in shown)


def open_facilitator(code: str, control: str, lang: str):
    at = run_view("room", {"room": code, "key": control, "lang": lang})
    assert_no_exception(at)
    return at


def rows_of(at) -> list[list[tuple[str, str]]]:
    """The elements in each row the browser wraps (ui.metrics', ui.buttons'), as (kind, label): a popover's label
    is its block's."""
    rows = [b for b in at.container if b.proto.flex_container.direction == b.proto.flex_container.HORIZONTAL]
    assert all(r.proto.flex_container.wrap for r in rows)
    return [[(type(c).__name__, c.proto.popover.label if type(c).__name__ == "Block" else c.label)
             for c in r.children.values()] for r in rows]  # fmt: skip


def test_the_rooms_counts_and_the_facilitators_links_stand_in_rows_that_wrap(store):
    """Never cut to a third or a half of a tablet's column (st.columns): the counts in ui.metrics' row, each card as
    wide as its label and value, the projector link, the control link and giving the control up behind buttons in
    ui.buttons' row."""
    code, control = store.create(LESSON)
    for lang in ("ja", "ko"):
        said = functools.partial(i18n.text, lang, "room")
        rows = rows_of(open_facilitator(code, control, lang))
        assert [("Metric", said(k)) for k in ("learners_n", "answered_n", "lost_n")] in rows
        assert [("LinkButton", said("projector")), ("Block", said("recovery")), ("Block", said("give_up"))] in rows
        rows = rows_of(run_view("room", {"room": code, "mode": "projector", "lang": lang}))
        assert [("Metric", said("learners_n")), ("Metric", said("answered_n"))] in rows


def test_the_join_link_is_on_the_configured_public_address(store, monkeypatch):
    code, control = store.create(LESSON)
    monkeypatch.setenv(links.PUBLIC_URL_ENV, "https://lab.example.org/class/")
    for params in ({"room": code, "key": control}, {"room": code, "mode": "projector"}):
        at = run_view("room", params)
        assert_no_exception(at)
        assert any(c.value == f"https://lab.example.org/class/room?room={code}" for c in at.code), params
        assert not any("localhost" in c.value for c in at.code)


@pytest.mark.parametrize(
    ("raw", "base"),
    [("https://lab.example.org", "https://lab.example.org"), ("http://10.0.0.5:8080/lab/", "http://10.0.0.5:8080/lab"),
     ("", None), ("lab.example.org", None), ("javascript:alert(1)", None), ("https://x.org/?a=1", None),
     ("ftp://x.org/", None), ("http://[::1", None)],
)  # fmt: skip
def test_public_base_takes_an_http_address_only(raw, base):
    assert links.public_base({links.PUBLIC_URL_ENV: raw}) == base


# ---- a learner's seat survives a new session -------------------------------------------------------------------


def test_a_reload_of_a_step_page_is_the_same_learner(store):
    """A reload, a server restart, a failover and a phone woken after its session expired all start a new session
    on the page's link: that link carries the seat, so the new session is the same learner."""
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code})
    at.text_input[1].input("Ana")
    at.get("form_submit_button")[0].click()
    at.run()
    token = at.session_state[follow.SEAT]["token"]
    store.move(code, control, 1)
    right = store.open_question(code, control, lesson().id, store.room(code).step)
    at.run()  # the poll takes her to step 2's page
    assert store.answer(code, token, rules.answer_to_text(right)) is True
    link = {k: at.query_params[k] for k in at.query_params}
    link = {k: v[0] if isinstance(v, list) else v for k, v in link.items()}
    assert link["me"] == token and link["room"] == code  # the step page's own link carries the seat
    page = lesson().steps[1].page
    again = run_view(page, link)  # a new session on that link
    assert_no_exception(again)
    s = again.session_state[follow.SEAT]
    assert s["token"] == token and s["name"] == "Ana" and s["step"] == 1 and s["following"]
    assert any("Your answer:" in t.value for t in again.text)  # her kept answer, not a new form
    assert store.steps_of_learners(code) == [1]  # one learner on the board
    assert store.answer(code, token, "0") is False  # and no second answer
    assert again.query_params["me"] in (token, [token])


def test_a_seat_link_of_a_closed_room_says_so_and_drops_the_seat(store):
    code, _ = store.create(LESSON)
    token = store.join(code, "Ana", "en")
    at = run_view("sdpa-steps", {"room": code, "me": token + "x"})
    assert_no_exception(at)
    assert any("not in an open room" in w.value for w in at.sidebar.warning)
    assert follow.SEAT not in at.session_state and "me" not in at.query_params and "room" not in at.query_params


def test_a_reload_while_the_database_is_away_keeps_the_seat_in_the_link(store, monkeypatch):
    code, _ = store.create(LESSON)
    token = store.join(code, "Ana", "en")
    learner = store.learner

    def away(*args, **kwargs):
        raise rules.RoomError("unavailable")

    monkeypatch.setattr(store, "learner", away)
    at = run_view("sdpa-steps", {"room": code, "me": token})
    assert_no_exception(at)
    assert any("cannot be reached just now" in w.value for w in at.sidebar.warning)
    assert follow.SEAT not in at.session_state and at.query_params["me"] in (token, [token])  # not dropped
    monkeypatch.setattr(store, "learner", learner)  # the database is back: the next poll seats her
    at.run()
    assert_no_exception(at)
    assert at.session_state[follow.SEAT]["token"] == token and store.steps_of_learners(code) == [0]


def test_the_facilitator_locks_joining_removes_a_learner_and_closes_the_room(store):
    code, control = store.create(LESSON)
    bo = store.join(code, "Bo", "en")
    at = run_view("room", {"room": code, "key": control})
    next(b for b in at.button if b.label == "Lock joining (nobody new joins)").click().run()
    assert_no_exception(at)
    assert store.room(code).locked and any("Joining is locked" in i.value for i in at.info)
    learner = run_view("room", {"room": code})
    learner.text_input[1].input("Cy")
    learner.get("form_submit_button")[0].click().run()
    assert any("closed this room to new learners" in e.value for e in learner.error)
    next(b for b in at.button if b.label == "Open joining again").click().run()
    assert not store.room(code).locked
    at.selectbox(key="room-remove-pick").set_value(store.seats(code, control)[0][0])  # Bo, by name on the page
    next(b for b in at.button if b.label == "Remove from the room").click().run()
    assert_no_exception(at)
    assert store.learner(code, bo) is None
    next(b for b in at.button if b.key == "room-end").click().run()
    assert_no_exception(at)
    assert store.room(code) is None
    assert any("no open room with this code" in e.value for e in at.error)


def passcode_box(at):
    boxes = [t for t in at.text_input if t.label == i18n.text(at.session_state["lang"], "room", "passcode")]
    return boxes[0] if boxes else None


def open_a_room(at, passcode: str | None = None):
    if passcode is not None:
        passcode_box(at).input(passcode)
    next(
        b for b in at.get("form_submit_button") if b.label == i18n.text(at.session_state["lang"], "room", "open")
    ).click()
    return at.run()


def assert_refused(at, typed: str, key: str, rooms_before: int, lang: str = "en") -> None:
    """Opening a room with `typed` as the passcode is refused in one sentence (`key`, in the page's language): no
    room opened, none in the link."""
    open_a_room(at, typed)
    assert_no_exception(at)
    assert [e.value for e in at.error] == [i18n.text(lang, "room", key)]
    assert "room" not in at.query_params and rooms_open() == rooms_before


@pytest.fixture
def rooms_from_env(tmp_path, monkeypatch):
    """The process's rooms as app.room.store.open_store opens them from the environment, on a SQLite file: the test
    sets the passcode and hosting it wants before the first run. Calling it closes them, so that the next run opens
    them anew (under another environment); they are closed after the test too."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("ATTENTION_LAB_ROOMS", str(tmp_path / "rooms.sqlite3"))
    monkeypatch.setattr(store_module, "_store", None)

    def reopen() -> None:
        if store_module._store is not None:
            store_module._store.close()
        store_module._store = None

    yield reopen
    reopen()


def rooms_open() -> int:
    rooms = store_module.open_store()
    with rooms.store.atomic(False) as tx:
        return tx.rooms_open_at(time.time())


def test_a_server_with_the_operators_passcode_opens_a_room_only_for_it(rooms_from_env, monkeypatch):
    """The process's rooms read $ATTENTION_LAB_ROOM_PASSCODE: set, the open-a-room form has a password box and a
    room opens only for the operator's passcode, refused in one sentence otherwise, the passcode never in the link
    or on the page; unset (a laptop run), the form is as it was. (Each refusal's words in ja and ko: test_i18n.)"""
    monkeypatch.delenv(rules.PASSCODE_ENV, raising=False)
    monkeypatch.delenv(serving.HOSTED_ENV, raising=False)
    monkeypatch.setenv(serving.LOCAL_ENV, "1")
    at = run_view("room")
    assert passcode_box(at) is None
    open_a_room(at)
    assert_no_exception(at)
    assert at.query_params["mode"] in ("control", ["control"]) and rooms_open() == 1
    rooms_from_env()
    passcode = "KX7QP-M2RTW-9HNBZ-4CDFG"
    monkeypatch.setenv(rules.PASSCODE_ENV, f" {passcode} ")
    for typed, key in (("", "passcode_empty"), ("  ", "passcode_empty"), (passcode.lower(), "passcode_wrong")):
        at = run_view("room")
        box = passcode_box(at)
        assert box.proto.type == box.proto.PASSWORD and box.proto.help
        assert_refused(at, typed, key, rooms_before=1)
    open_a_room(at, passcode)
    assert_no_exception(at)
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    assert store_module._store.is_control(code, at.session_state[control_token.CONTROL][code])
    assert rooms_open() == 2 and any(b.label == "Next step" for b in at.button) and not at.error
    assert passcode not in str(at.query_params) and passcode not in shown_text(at)


def test_an_operators_passcode_longer_than_the_box_takes_is_named_in_the_log(rooms_from_env, monkeypatch, caplog):
    """/room's passcode box takes MAX_PASSCODE_CHARS characters and Streamlit cuts what is sent to that (a crafted
    megabyte too): an operator's passcode longer than that could never be typed, and every facilitator was told it
    was the wrong one. The server's log says so from the first run on, without the passcode."""
    import logging

    operators = "K" * (rules.MAX_PASSCODE_CHARS + 1)
    monkeypatch.setenv(rules.PASSCODE_ENV, operators)
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    with caplog.at_level(logging.ERROR, logger="attention_lab"):
        at = run_view("room")
    assert_no_exception(at)
    assert passcode_box(at).proto.max_chars == rules.MAX_PASSCODE_CHARS
    said = [r.getMessage() for r in caplog.records if rules.PASSCODE_ENV in r.getMessage()]
    assert said and str(rules.MAX_PASSCODE_CHARS + 1) in said[0] and operators not in said[0], said
    with pytest.raises(rules.RoomError, match="^passcode_wrong$"):  # a megabyte sent past the box is not even hashed
        rules.check_passcode(operators, rules.digest(operators))


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_laptop_run_reached_from_afar_opens_rooms_for_its_own_browser_only(rooms_from_env, monkeypatch, lang):
    """A laptop run (no passcode: not hosted by its settings) that its owner put behind a proxy or a tunnel: a
    visitor it brings is told in one sentence that rooms open on the laptop itself, with no form to send; the
    laptop's own browser opens rooms as before."""
    monkeypatch.delenv(rules.PASSCODE_ENV, raising=False)
    monkeypatch.delenv(serving.HOSTED_ENV, raising=False)
    monkeypatch.delenv(serving.LOCAL_ENV, raising=False)
    monkeypatch.setattr(serving, "hosted_process", lambda: False)
    monkeypatch.setattr(serving, "came_from_afar", lambda headers: True)
    at = run_view("room", {"lang": lang})
    assert_no_exception(at)
    assert [i.value for i in at.info] == [i18n.text(lang, "room", "open_here_only")]
    assert i18n.text(lang, "room", "open") not in [b.label for b in at.get("form_submit_button")]
    assert passcode_box(at) is None and rooms_open() == 0
    monkeypatch.setattr(serving, "came_from_afar", lambda headers: False)  # the laptop's own browser
    at = run_view("room", {"lang": lang})
    assert not at.info
    open_a_room(at)
    assert_no_exception(at)
    assert rooms_open() == 1 and not at.error


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_passcode_refusals_are_in_the_readers_words_and_the_picked_lesson_opens(rooms_from_env, monkeypatch, lang):
    """A Japanese or Korean facilitator picks a lesson, is refused in their words without the passcode and with a
    wrong one, and opens the room on the lesson they picked. The lesson box's labels were read in the language of
    whenever they were asked for: AppTest asks after the run, outside the session, and read them in English, so it
    could not send the form of a ja or ko page (a browser sends back the label it shows and was never refused)."""
    passcode = "KX7QP-M2RTW-9HNBZ-4CDFG"
    monkeypatch.setenv(rules.PASSCODE_ENV, passcode)
    picked = list(follow.lessons())[2]  # not the first, which the box shows unasked
    at = run_view("room", {"lang": lang})
    at.selectbox(key="room-lesson").set_value(picked).run()
    for typed, key in (("", "passcode_empty"), (passcode.lower(), "passcode_wrong")):
        assert_refused(at, typed, key, rooms_before=0, lang=lang)
    open_a_room(at, passcode)
    assert_no_exception(at)
    code = at.query_params["room"]
    code = code[0] if isinstance(code, list) else code
    assert store_module._store.room(code).lesson == picked and not at.error


def said_of_passcodes(caplog) -> list[str]:
    """What the server's log says of the passcode for opening rooms, once its thread has asked the database."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not [r for r in caplog.records if "rooms: " in r.getMessage()]:
        time.sleep(0.02)
    return [r.getMessage() for r in caplog.records if "passcode" in r.getMessage()]


def test_a_database_away_holds_up_no_page_while_the_passcode_is_agreed(rooms_from_env, monkeypatch, caplog):
    """A hosted server with no passcode set asks its room database for the one its servers agree on at its first
    run; a database away took up to 5 s of tries in that visitor's page run, every 10 s. The page is drawn while
    the question is still unanswered, and the log says when it is."""
    import threading

    from core.room import RoomError
    from core.room.service import Rooms

    monkeypatch.delenv(rules.PASSCODE_ENV, raising=False)
    monkeypatch.delenv(serving.LOCAL_ENV, raising=False)
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    caplog.set_level("WARNING", logger="attention_lab")
    answer, events = threading.Event(), []

    def away(self, made, made_by):
        answer.wait(20)
        events.append("answered")
        raise RoomError("unavailable")

    monkeypatch.setattr(Rooms, "agree_passcode", away)
    at = run_view("room")
    events.append("drawn")
    answer.set()
    assert_no_exception(at)
    assert passcode_box(at) is not None  # the form asks for the passcode all the same
    assert any("not agreed yet" in m for m in said_of_passcodes(caplog))
    assert events == ["drawn", "answered"]


def test_a_hosted_server_with_no_passcode_set_makes_one_in_its_log_and_asks_for_it(rooms_from_env, monkeypatch, caplog):
    """A lone hosted server (the image's `docker run`, a bare `streamlit run` on a server) whose operator set no
    passcode was open for anyone to fill with rooms. It makes one at its first run and writes it once to its own
    log: opening a room asks for it, refused without it, opened with it; never on the page or in the link. A laptop
    run (not hosted) asks for none."""
    monkeypatch.delenv(rules.PASSCODE_ENV, raising=False)
    monkeypatch.delenv(serving.LOCAL_ENV, raising=False)
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    caplog.set_level("WARNING", logger="attention_lab")
    made = re.compile(r"[A-Z2-9]{5}(?:-[A-Z2-9]{5}){3}")
    at = run_view("room")
    logged = [m for r in said_of_passcodes(caplog) for m in made.findall(r)]
    assert len(logged) == 1, logged  # once, in the server's log
    passcode = logged[0]
    for typed, key in (("", "passcode_empty"), (rules.new_passcode(), "passcode_wrong")):
        at = run_view("room")
        assert_refused(at, typed, key, rooms_before=0)
    open_a_room(at, passcode)
    assert_no_exception(at)
    assert rooms_open() == 1 and any(b.label == "Next step" for b in at.button) and not at.error
    assert passcode not in str(at.query_params) and passcode not in shown_text(at)
    assert [m for r in said_of_passcodes(caplog) for m in made.findall(r)] == [passcode]  # made once
    rooms_from_env()
    caplog.clear()
    monkeypatch.delenv(serving.HOSTED_ENV)
    monkeypatch.setenv(serving.LOCAL_ENV, "1")
    at = run_view("room")
    assert passcode_box(at) is None
    open_a_room(at)
    assert_no_exception(at)
    assert rooms_open() == 2 and not at.error and not made.findall(caplog.text)


def test_hosted_servers_sharing_a_database_ask_for_the_passcode_the_first_one_made(rooms_from_env, monkeypatch,
                                                                                   caplog):  # fmt: skip
    """Servers started by hand without a passcode, sharing one room database, each made their own: a facilitator
    who read one server's log was refused on the next replica. The first server makes it and writes it once to its
    log; a second one (another process on the same database) writes that a passcode is set and which server's log
    has it, not a passcode of its own, and opens rooms with the first's."""
    monkeypatch.delenv(rules.PASSCODE_ENV, raising=False)
    monkeypatch.delenv(serving.LOCAL_ENV, raising=False)
    monkeypatch.setenv(serving.HOSTED_ENV, "1")
    caplog.set_level("WARNING", logger="attention_lab")
    made = re.compile(r"[A-Z2-9]{5}(?:-[A-Z2-9]{5}){3}")
    run_view("room")
    [passcode] = [m for r in said_of_passcodes(caplog) for m in made.findall(r)]
    caplog.clear()
    rooms_from_env()  # the next server process, on the same database
    at = run_view("room")
    said = said_of_passcodes(caplog)
    assert len(said) == 1 and not made.findall(said[0]), said
    assert f"(pid {os.getpid()})" in said[0] and rules.PASSCODE_ENV in said[0]  # whose log has it
    assert_refused(at, rules.new_passcode(), "passcode_wrong", rooms_before=0)
    open_a_room(at, passcode)
    assert_no_exception(at)
    assert rooms_open() == 1 and any(b.label == "Next step" for b in at.button) and not at.error


def test_a_closed_room_and_its_names_go_an_hour_later_though_no_room_opens(rooms_from_env, monkeypatch):
    """SECURITY.md: a closed or expired room is deleted with its names, answers and sentences an hour later. The
    deletion ran only when someone opened a new room: after a class's last room of the day, its learners' names
    stayed in the database until the next room, days later perhaps. The process's rooms delete it on a timer."""
    monkeypatch.setattr(store_module, "PURGE_EVERY_S", 0.05, raising=False)
    monkeypatch.delenv(serving.HOSTED_ENV, raising=False)
    monkeypatch.setenv(serving.LOCAL_ENV, "1")  # rooms opened with no passcode, as on a laptop
    clock = Clock(time.time())
    rooms = store_module.open_store()
    rooms.clock = clock
    code, control = rooms.create(LESSON)
    token = rooms.join(code, "Ana", "en")
    rooms.submit(code, token, 0, "a sentence of Ana's")
    rooms.end(code, control)
    time.sleep(0.3)
    assert rooms.learner(code, token) is not None  # kept a while after closing
    clock.now += rules.KEEP_AFTER_CLOSE_S + 1
    deadline = time.monotonic() + 10
    while rooms.learner(code, token) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rooms.learner(code, token) is None


def test_codes_tried_in_vain_hold_a_browser_back(store):
    code, _ = store.create(LESSON)
    guesses = [g for g in ("ZZZZZ" + ch for ch in rules.CODE_ALPHABET) if g != code]  # never the room's own code
    for guess in guesses[: rules.LIMITS["join_miss"].count]:
        at = run_view("room", {"room": guess})  # a link with a guessed code
        assert any("no open room with this code" in e.value for e in at.error)
    at = run_view("room", {"room": code})
    assert_no_exception(at)
    assert any("Too many codes were tried from this browser" in w.value for w in at.warning)
    assert not any(e.value.startswith("Join") for e in at.get("form_submit_button"))


def test_a_recovery_link_refused_unchecked_leaves_the_address_bar_too(store):
    """A browser past its codes tried in vain (a classroom computer learners typed codes on) opens the facilitator's
    recovery link: the code is not even looked up, so the control token was never checked, and it stayed in the
    address bar under the warning, on a screen the class may see. Only a database that is away keeps it there, to
    be checked when it answers."""
    code, control = store.create(LESSON)
    guesses = [g for g in ("ZZZZZ" + ch for ch in rules.CODE_ALPHABET) if g != code]
    for guess in guesses[: rules.LIMITS["join_miss"].count]:
        run_view("room", {"room": guess})
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any("Too many codes were tried from this browser" in w.value for w in at.warning)
    assert "key" not in at.query_params and control not in str(at.query_params)


def test_a_learner_who_just_joined_is_removed_from_the_live_panel(store):
    """The door is drawn by the facilitator's live panel (a fragment that polls): a prankster who joined after the
    page was drawn is in the list at the next poll, and removing them reruns only the panel."""
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    eve = store.join(code, "Eve", "en")
    run_fragment(at, "live")  # the panel's next poll
    assert_no_exception(at)
    at.selectbox(key="room-remove-pick").set_value(store.seats(code, control)[0][0])
    next(b for b in at.button if b.label == "Remove from the room").click()
    run_fragment(at, "live")
    assert_no_exception(at)
    assert store.learner(code, eve) is None
    bo = store.join(code, "Bo", "en")
    run_fragment(at, "live")
    send_raw(at.selectbox(key="room-remove-pick"), string_value="0" * 16)  # a seat that is not (or no longer) there
    next(b for b in at.button if b.label == "Remove from the room").click()
    run_fragment(at, "live")
    assert_no_exception(at)
    assert any(e.value == "That learner is no longer in the room." for e in at.error)
    assert store.learner(code, bo).name == "Bo"


def test_go_to_the_rooms_step_when_the_lesson_lost_that_step(store):
    """A room moved to step 8 of a lesson that has 5 now (the file was edited under an open room)."""
    code, control = store.create(LESSON)
    with store.store.atomic(write=True) as tx:
        tx.update_room(code, step=7)  # moved there before the lesson file was shortened
    token = store.join(code, "Ana", "en")
    exploring = {"code": code, "token": token, "name": "Ana", "following": False, "version": 0, "step": -1}
    at = run_view("room", {"room": code, "me": token}, state={follow.SEAT: exploring})
    next(b for b in at.button if b.key == "room-go-step").click().run()
    assert_no_exception(at)
    assert at.session_state[follow.SEAT]["step"] == len(lesson().steps) - 1
    n = len(lesson().steps)
    projected = run_view("room", {"room": code, "mode": "projector"})  # the class sees the last step too
    assert_no_exception(projected)
    assert any(h.value == f"Step {n} of {n}" for h in projected.subheader)


def test_a_choice_is_offered_and_revealed_in_the_readers_words(store):
    """The engine's choice identifiers ('scaled', 'unscaled') are said as /lessons says them (choice_<id>)."""
    scaling = follow.lessons()["scaling"]
    step = next(i for i, s in enumerate(scaling.steps) if s.question and s.question.id == "more-peaked")
    code, control = store.create("scaling")
    store.move(code, control, step)
    store.open_question(code, control, scaling.id, store.room(code).step)
    at, token = learner_on_the_room_step(store, code)

    def words(key):
        return i18n.text("en", "lessons", key)

    shown = [plain(words(f"choice_{o}")) for o in ("scaled", "unscaled", "same")]  # as markdown, escaped
    assert list(at.radio(key="room-pick").options) == shown
    at.radio(key="room-pick").set_value("unscaled")
    next(b for b in at.get("form_submit_button") if b.label == "Answer").click()
    run_fragment(at, "panel")  # the form is in the panel's fragment: a submit reruns only it
    run_fragment(at, "panel")  # its own rerun after keeping the answer
    assert_no_exception(at)
    assert store.my_answer(code, token, "more-peaked")[0] == "unscaled"  # the store keeps the identifier
    assert any(words("choice_unscaled") in t.value for t in at.text)


def test_a_facilitators_click_and_redraw_read_the_room_once(store, monkeypatch):
    """'Next step' and the page drawn after it: the move (one transaction, which moves the following learners too),
    the code looked up, and one read of the room for the whole page and its live panel (before the room service:
    6 transactions, 14 statements; the browser's control, which giving it up drops, is one statement in each of
    the move and the read)."""
    from tests.room_stores import counted_queries

    code, control = store.create(LESSON)
    at = run_view("room", {"room": code, "key": control})
    counts = counted_queries(store.store, monkeypatch)
    next(b for b in at.button if b.label == "Next step").click().run()
    assert_no_exception(at)
    assert counts == {"transactions": 3, "statements": 14}
    assert store.room(code).step == 1 and at.selectbox(key="room-go").value == 1  # the page shows the new step


def test_a_following_learners_panel_reads_the_room_once_per_step(store, monkeypatch):
    """What the server's push runs for each follower when the room moves: one read (the counters, the room and the
    seat, which shows the step already: nothing to write); before, three (poll, room, the seat's position)."""
    from tests.room_stores import counted_queries

    code, control = store.create(LESSON)
    at = run_view("room", {"room": code})
    at.text_input[1].input("Ana")
    at.get("form_submit_button")[0].click()
    at.run()
    switch_to(at, lesson().steps[0].page).run()
    store.move(code, control, 1)
    counts = counted_queries(store.store, monkeypatch)
    run_fragment(at, "panel")
    assert_no_exception(at)
    assert counts == {"transactions": 1, "statements": 3}
    assert at.session_state[follow.SEAT]["step"] == 1 and store.steps_of_learners(code) == [1]


def test_a_step_that_keeps_the_page_and_its_state_reruns_only_the_panel(store, monkeypatch):
    """Following costs a learner one panel run where the room's next step keeps the page and the state theirs shows
    (no page switch, no second run of the same page); a step whose state their page no longer shows opens its link."""
    steps = lesson().steps
    assert steps[0].page == steps[1].page == steps[2].page and steps[0].state == steps[1].state == steps[2].state
    code, control = store.create(LESSON)
    at = run_view("room", {"room": code})
    at.text_input[1].input("Ana")
    at.get("form_submit_button")[0].click()
    at.run()  # following: its panel opened step 1's page
    switch_to(at, steps[0].page).run()  # the tab is on that page now (AppTest keeps the page it was told)
    switched, switch = [], follow.go_to_step
    monkeypatch.setattr(follow, "go_to_step", lambda lesson, i: (switched.append(i), switch(lesson, i))[1])
    store.move(code, control, 1)
    run_fragment(at, "panel")  # what the server's push runs
    assert_no_exception(at)
    assert switched == [] and at.session_state[follow.SEAT]["step"] == 1
    assert any(f"step 2 of {len(steps)}" in text_of(m) for m in at.markdown)  # the panel shows the new step
    at.run()  # the page again (AppTest's tree holds the fragment's elements only)
    assert switched == []
    at.number_input(key="dk").set_value(4).run()  # the learner explores: d_k = 4 on the page and in its link
    assert at.query_params["dk"] in ("4", ["4"])
    store.move(code, control, 2)
    run_fragment(at, "panel")
    assert_no_exception(at)
    assert switched == [2] and at.query_params["dk"] in ("2", ["2"])  # taken back to the step's state


def test_a_switch_of_language_refused_for_now_reaches_the_room_at_the_next_run(store, monkeypatch):
    """A learner who switches language past the rate limit is counted in the old one until their next run, which
    writes the switch; a run with the seat's language unchanged writes nothing."""
    clock = Clock(time.time())
    monkeypatch.setattr(store, "clock", clock)
    code, _ = store.create(LESSON)
    token = store.join(code, "Ana", "en")
    for i in range(rules.LIMITS["lang"].count):  # the learner's ten switches of the minute, the last to Japanese
        store.set_lang(code, token, "ja" if i % 2 else "en")
    tries, set_lang = [], store.set_lang
    monkeypatch.setattr(store, "set_lang", lambda *args: tries.append(args[2]) or set_lang(*args))
    seated = run_view("room", {"room": code, "me": token, "lang": "ja"})
    assert tries == []  # the seat has the page's language
    seated.selectbox(key="lang").select("ko").run()
    assert_no_exception(seated)
    assert tries == ["ko"] and store.learner(code, token).lang == "ja"  # refused: the count lags
    clock.now += rules.LIMITS["lang"].window_s + 1
    seated.run()  # the learner's next run
    assert tries == ["ko", "ko"] and store.learner(code, token).lang == "ko"
    seated.run()
    assert tries == ["ko", "ko"]


def test_the_answers_csv_reads_the_room_once_however_often_the_facilitator_asks(store, monkeypatch):
    """Streamlit runs a download's callable at every request a client sends (a websocket message of a few bytes):
    each request for the answers' CSV read every answer of the room from the database and wrote the CSV again. It
    is built once and serves the next CSV_FRESH_S seconds' requests; a request after that sees new answers."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    from app import ui
    from app.views.room import facilitator

    code, control = store.create(LESSON)
    store.open_question(code, control, LESSON, 0)
    store.answer(code, store.join(code, "Ana", "en"), "14")
    reads, answers_csv = [], store.answers_csv
    monkeypatch.setattr(store, "answers_csv", lambda *a: reads.append(1) or answers_csv(*a))
    clock = [1000.0]
    monkeypatch.setattr(ui, "_clock", lambda: clock[0])
    asked, add_deferred = {}, MediaFileManager.add_deferred  # what Streamlit runs at each request, by file name

    def kept(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        asked[file_name] = data_callable
        return add_deferred(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", kept)
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    request = asked[f"room-{code}.csv"]
    served = {request() for _ in range(20)}
    assert len(reads) == 1 and len(served) == 1 and "Ana" in next(iter(served))
    store.answer(code, store.join(code, "Bo", "en"), "3")
    clock[0] += facilitator.CSV_FRESH_S
    served.add(request())
    assert len(reads) == 2 and len(served) == 2


def test_an_answer_sent_with_a_run_of_the_whole_page_is_kept_and_shown(store):
    """A browser sends the answer's click as the panel's fragment run; one that comes with a run of the whole page (a
    client's own, or a click merged with a page run already waiting) kept the answer, then showed the app's
    unexpected-error sentence instead of it (a fragment's own rerun raises in a full run)."""
    code, control = store.create(LESSON)
    store.open_question(code, control, LESSON, 0)
    token = store.join(code, "Ana", "en")
    at = run_view("room", {"room": code, "me": token})
    at.run()  # the panel's first poll opens the room's step
    at.text_input(key="room-number").input("14")
    next(b for b in at.get("form_submit_button") if b.proto.id.endswith("room-submit")).click()
    at.run()
    assert_no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert store.my_answer(code, token, store.room(code).question) is not None
    assert any(t.value == i18n.text("en", "room", "your_answer", answer="14") for t in at.text)
