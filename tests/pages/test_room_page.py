"""/room driven through AppTest: start, join, follow, answer, reveal; the facilitator's control link; unknown
codes; a second tab of one learner; learners' words shown as plain text only. The store is a temporary SQLite
file (the same rules on PostgreSQL: tests/core/test_room_store.py)."""

from __future__ import annotations

import pytest

import app.room.store as store_module
from app.room.store import SQLiteStore
from app.views.room import follow
from core import room as rules
from tests.apptest_helpers import assert_no_exception, run_view, shown_text

LESSON = "qkv-softmax"


@pytest.fixture
def store(tmp_path, monkeypatch):
    s = SQLiteStore(tmp_path / "rooms.sqlite3")
    monkeypatch.setattr(store_module, "_store", s)
    yield s
    s.close()


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


def test_only_the_control_link_shows_the_facilitator_view(store):
    code, control = store.create(LESSON)
    token = store.join(code, "Ana", "en")
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any(b.label == "Next step" for b in at.button)
    text = shown_text(at)
    assert f"Room code: **{code}**" in text and "You are the facilitator" in text
    for wrong in (token, control[:-1] + "x", ""):
        at = run_view("room", {"room": code, "key": wrong})
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

    assert rules.answer_from_json(room.answer) == rules.answer_from_json(
        rules.answer_to_json(answer(q, lesson().steps[1].state))
    )
    next(b for b in at.button if b.label == "Reveal the answer").click().run()
    assert_no_exception(at)
    assert store.room(code).phase == "revealed"
    assert any(s.value.startswith("Right answer:") for s in at.success)


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
    right = rules.open_question(store, code, control, lesson())
    at.run()
    assert_no_exception(at)
    assert any(text_of(m) == lesson().steps[0].question.prompt["en"] for m in at.markdown)
    assert rules.submit_answer(store, code, seat["token"], rules.answer_to_text(right)) is True
    assert rules.submit_answer(store, code, seat["token"], "0") is False  # the same seat from a second tab


def text_of(element) -> str:
    return str(element.value)


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


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_facilitator_on_one_replica_learners_on_the_other(kind, tmp_path, monkeypatch):
    """Two replicas = two processes with their own store connection to one database: the facilitator's clicks on
    one reach the learner served by the other (the learner's session never touches the facilitator's replica)."""
    import time

    from tests.room_stores import open_kind

    replica_a, replica_b = open_kind(kind, tmp_path, time.time), open_kind(kind, tmp_path, time.time)
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
        assert any(m.value == lesson().steps[1].question.prompt["en"] for m in learner.markdown)
        monkeypatch.setattr(store_module, "_store", replica_a)
        assert [name for name, _, _ in replica_a.learners(code, control)] == ["Ana"]
    finally:
        replica_a.close()
        replica_b.close()


def test_a_room_whose_lesson_went_away_says_so(store):
    code, control = store.create("no-such-lesson")
    at = run_view("room", {"room": code, "key": control})
    assert_no_exception(at)
    assert any("no-such-lesson" in e.value and "not on this server" in e.value for e in at.error)
    learner = run_view("room", {"room": code, "me": store.join(code, "Ana", "en")})
    learner.run()  # the sidebar panel, on every page: a warning, not an exception
    assert_no_exception(learner)
    assert any("no-such-lesson" in w.value for w in learner.warning)
