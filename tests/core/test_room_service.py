"""The room service (core/room/service.py), each rule tested once, on SQLite and PostgreSQL alike
(tests/room_stores.py): only the control token moves the room, reveals or sees names; one answer per learner per
question; learner actions rate-limited and validated; steps checked against the room's lesson; unknown and expired
codes refused; sizes bounded; nothing lost when the server restarts; two replicas share a room."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from core import room as rules
from core.lessons import Answer, Lesson, Question, Step, format_response, is_correct, parse_response
from core.room import RoomError
from core.room.service import Rooms
from core.room.sql import SQLiteStore
from tests import room_stores
from tests.room_stores import LESSONS, open_rooms

clock, store, rooms, store_kind = room_stores.clock, room_stores.store, room_stores.rooms, room_stores.store_kind
fixed_answers = room_stores.fixed_answers  # the fixtures

CHOICE = Answer("choice", "it", ("cat", "mat", "it"), None, {})
NUMBER = Answer("number", 0.25, (), 0.01, {})


def open_choice(rooms, code, control):
    """The question of the room's step 0 (q1, CHOICE) opens."""
    rooms.open_question(code, control, "qkv", 0)


def test_create_poll_and_move(rooms):
    code, control = rooms.create("qkv")
    assert rules.normal_code(code) == code
    v0, a0 = rooms.poll(code)
    rooms.move(code, control, 2)
    room = rooms.room(code)
    assert room.step == 2 and room.lesson == "qkv" and rooms.poll(code)[0] == v0 + 1
    token = rooms.join(code, "Ana", "ja")
    assert rooms.poll(code) == (v0 + 1, a0 + 1)  # a learner's action does not move followers
    assert rooms.learner(code, token).step == 2 and rooms.learner(code, token).lang == "ja"


def test_only_the_control_token_moves_reveals_and_sees_names(rooms):
    code, control = rooms.create("qkv")
    other_code, other_control = rooms.create("qkv")
    learner = rooms.join(code, "Ana", "en")
    for wrong in (None, "", learner, other_control, control + "x"):
        with pytest.raises(RoomError, match="not_control"):
            rooms.move(code, wrong, 1)
        with pytest.raises(RoomError, match="not_control"):
            open_choice(rooms, code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            rooms.learners(code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            rooms.answers(code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            rooms.gallery(code, wrong, 0)
        with pytest.raises(RoomError, match="not_control"):
            rooms.show(code, wrong, "hi")
        assert not rooms.is_control(code, wrong)
    open_choice(rooms, code, control)
    with pytest.raises(RoomError, match="not_control"):
        rooms.reveal(code, learner)
    assert rooms.room(code).step == 0 and rooms.room(code).phase == "open"
    rooms.reveal(code, control)
    assert rooms.room(code).phase == "revealed"
    assert rooms.learners(code, control) == [("Ana", 0, True)]
    assert rooms.is_control(code, control) and not rooms.is_control(other_code, control)


def test_giving_up_a_browsers_control_reaches_every_tab_holding_it(rooms, clock):
    """Giving up control on this computer dropped the control in the tab that pressed it and the browser's cookie,
    but another open tab of that browser kept acting with the same token until it was closed. A browser now acts
    with a control of its own, given from the room's control token: giving it up refuses every session holding it
    (two tabs here), moves the room's activity (their live panels run and say so), leaves the room open and other
    browsers' controls alone, and the recovery link (the control token) gives the browser a new one."""
    code, control = rooms.create("qkv")
    other_code, other_control = rooms.create("qkv")
    laptop = rooms.give_control(code, control)  # the tab that opened the room; its cookie holds `laptop`
    first_tab, second_tab = laptop, laptop  # a second tab of that browser, from its cookie
    phone = rooms.give_control(code, control)  # the facilitator's other device
    assert laptop != phone and control not in (laptop, phone)
    for tab in (first_tab, second_tab, phone):
        assert rooms.is_control(code, tab)
    rooms.move(code, second_tab, 1)
    assert not rooms.is_control(other_code, laptop)  # a room's control only
    for wrong in (laptop, "", None, rooms.join(code, "Ana", "en")):  # only the control token gives one
        with pytest.raises(RoomError, match="not_control"):
            rooms.give_control(code, wrong)
    before = rooms.poll(code)
    rooms.give_up(code, first_tab)
    assert rooms.poll(code) == (before[0], before[1] + 1)  # every facilitator's panel runs (learners' do not)
    for act in (lambda t: rooms.move(code, t, 2), lambda t: rooms.learners(code, t),
                lambda t: rooms.facilitator_view(code, t), lambda t: rooms.end(code, t)):  # fmt: skip
        with pytest.raises(RoomError, match="not_control"):
            act(second_tab)
    assert not rooms.is_control(code, first_tab) and not rooms.is_control(code, second_tab)
    rooms.give_up(code, second_tab)  # the other tab's button, pressed too: nothing more happens
    assert rooms.poll(code) == (before[0], before[1] + 1)
    assert rooms.room(code).step == 1 and rooms.is_control(code, phone) and rooms.is_control(code, control)
    rooms.give_up(code, control)  # the control token itself is never given up by a browser
    assert rooms.is_control(code, control)
    again = rooms.give_control(code, control)  # the recovery link, back at that browser
    rooms.move(code, again, 2)
    assert rooms.room(code).step == 2 and rooms.is_control(other_code, other_control)
    given = [rooms.give_control(code, control) for _ in range(rules.MAX_BROWSER_CONTROLS)]  # bounded per room
    assert not rooms.is_control(code, phone) and all(rooms.is_control(code, g) for g in given)
    rooms.end(code, given[-1])
    clock.now += rules.KEEP_AFTER_CLOSE_S + 1
    rooms.purge()
    with rooms.store.atomic(False) as tx:
        assert tx.controls(code) == []  # gone with the room


def test_unknown_and_expired_codes(rooms, clock):
    assert rooms.room("ZZZZZZ") is None and rooms.poll("ZZZZZZ") is None
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.join("ZZZZZZ", "Ana", "en")
    code, control = rooms.create("qkv", ttl_s=60)
    token = rooms.join(code, "Ana", "en")
    clock.now += 61
    assert rooms.room(code) is None and rooms.poll(code) is None
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.join(code, "Bo", "en")
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.move(code, control, 1)
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.set_lost(code, token, True)


def test_default_expiry_follows_the_environment(rooms, clock, monkeypatch):
    monkeypatch.setenv(rules.TTL_ENV, "2")
    code, _ = rooms.create("qkv")
    assert rooms.room(code).expires - rooms.room(code).created == pytest.approx(7200)
    monkeypatch.delenv(rules.TTL_ENV)
    code, _ = rooms.create("qkv")
    assert rooms.room(code).expires - rooms.room(code).created == pytest.approx(24 * 3600)


def test_one_answer_per_learner_even_from_two_tabs(rooms):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    with pytest.raises(RoomError, match="question_closed"):
        rooms.answer(code, token, "it")
    open_choice(rooms, code, control)
    assert rooms.answer(code, token, "it") is True
    # a second tab holds the same token (the same room link): it answers nothing
    assert rooms.answer(code, token, "cat") is False
    assert rooms.my_answer(code, token, "q1") == ("it", True)
    assert rooms.responses(code, "q1") == ["it"]
    with pytest.raises(RoomError, match="not_learner"):
        rooms.answer(code, "forged-token", "it")


def test_answers_are_validated_against_the_question_kind(rooms):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    open_choice(rooms, code, control)
    for bad in ("dog", "<b>it</b>", "", 3, None, "x" * 5000):
        with pytest.raises(RoomError, match="bad_answer"):
            rooms.answer(code, token, bad)
    rooms.move(code, control, 1)
    rooms.open_question(code, control, "qkv", 1)  # q2: NUMBER
    for bad in ("a quarter", "nan", "inf", "1e999"):
        with pytest.raises(RoomError, match="bad_answer"):
            rooms.answer(code, token, bad)
    assert rooms.answer(code, token, "０.２５５")  # full-width digits; within 0.01 of 0.25
    assert rooms.my_answer(code, token, "q2") == ("0.255", True)
    assert rooms.responses(code, "q1") == []  # nothing of the bad attempts was kept


def test_answers_close_with_the_step(rooms):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    open_choice(rooms, code, control)
    rooms.move(code, control, 1)
    with pytest.raises(RoomError, match="question_closed"):
        rooms.answer(code, token, "it")
    rooms.open_question(code, control, "qkv", 1)
    rooms.reveal(code, control)
    with pytest.raises(RoomError, match="question_closed"):
        rooms.answer(code, token, "0.25")  # revealed: answers are closed
    with pytest.raises(RoomError, match="question_closed"):
        rooms.reveal(code, control)  # and it cannot be revealed twice
    with pytest.raises(RoomError, match="question_closed"):
        rooms.open_question(code, control, "qkv", 0)  # a page drawn before the room moved to step 1


def test_learner_actions_are_rate_limited(rooms, clock):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    limit = rules.LIMITS["lost"]
    for i in range(limit.count):
        rooms.set_lost(code, token, i % 2 == 0)
    with pytest.raises(RoomError, match="rate"):
        rooms.set_lost(code, token, True)
    other = rooms.join(code, "Bo", "en")
    rooms.set_lost(code, other, True)  # one learner's limit is theirs alone
    clock.now += limit.window_s + 1
    rooms.set_lost(code, token, True)
    assert rooms.lost_count(code) == 2
    for _ in range(rules.LIMITS["gallery"].count):
        rooms.submit(code, token, 0, "The cat sat.")
    with pytest.raises(RoomError, match="rate"):
        rooms.submit(code, token, 0, "The cat sat again.")
    open_choice(rooms, code, control)
    for _ in range(rules.LIMITS["answer"].count):
        with pytest.raises(RoomError, match="bad_answer"):
            rooms.answer(code, token, "dog")  # invalid input never reaches the rooms
    assert rooms.answer(code, token, "it")


def test_joins_are_rate_limited_and_names_bounded(rooms):
    code, _ = rooms.create("qkv")
    for bad, key in (("", "name_empty"), ("   ", "name_empty"), ("x" * 41, "name_long"), (None, "name_empty")):
        with pytest.raises(RoomError, match=key):
            rooms.join(code, bad, "en")
    assert rooms.learner(code, rooms.join(code, "y" * 40, "en")).name == "y" * 40
    for i in range(rules.LIMITS["join"].count - 1):
        rooms.join(code, f"learner {i}", "en")
    with pytest.raises(RoomError, match="rate"):
        rooms.join(code, "one too many", "en")


def test_a_name_a_learner_of_the_room_has_is_refused(rooms):
    """The facilitator tells learners apart by their names only (board, gallery, CSV, the remove list): a second
    'Ana Kim' in a room, however written, could not be told from the first, nor removed without guessing."""
    code, _ = rooms.create("qkv")
    rooms.join(code, "Ana Kim", "en")
    for same in ("Ana Kim", "ana kim", "ＡＮＡ ＫＩＭ", " Ana  Kim ", "AnaKim", "Ana\u200bKim"):
        with pytest.raises(RoomError, match="^name_taken$"):
            rooms.join(code, same, "en")
    assert rooms.learner(code, rooms.join(code, "Ana Kim 2", "en")).name == "Ana Kim 2"
    other, _ = rooms.create("qkv")
    assert rooms.learner(other, rooms.join(other, "Ana Kim", "en")).name == "Ana Kim"  # another room's learners


def test_gallery_keeps_text_as_written_and_shows_one(rooms):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    html = "<script>alert(1)</script> **bold** [x](javascript:alert(1))"
    rooms.submit(code, token, 0, html)
    rooms.submit(code, token, 1, "Another step's sentence.")
    assert rooms.gallery(code, control, 0) == [("Ana", html)]
    rooms.show(code, control, html)
    assert rooms.room(code).shown == html  # kept verbatim; the page shows it with st.text (tests/pages)
    with pytest.raises(RoomError, match="bad_value"):
        rooms.show(code, control, "A sentence nobody sent.")  # only the room's own gallery is shown
    rooms.show(code, control, "")
    assert rooms.room(code).shown == ""
    with pytest.raises(RoomError, match="sentence_long"):
        rooms.submit(code, token, 0, "x" * (rules.MAX_SENTENCE_CHARS + 1))


def test_the_class_languages_are_counted_and_follow_a_learners_switch(rooms, clock):
    """The facilitator and the projector read how many learners read in each language (no names on the
    projector); a learner who switches the app's language moves to the other count, an activity the panels
    redraw for; a language is a short code, and switching is rate-limited like any learner action."""
    code, control = rooms.create("qkv")
    tokens = [rooms.join(code, name, lang) for name, lang in (("Ana", "ja"), ("Bo", "en"), ("Chi", "ja"),
                                                              ("Dae", "ko"))]  # fmt: skip
    assert rooms.facilitator_view(code, control).languages == (("en", 1), ("ja", 2), ("ko", 1))
    projected = rooms.projector_view(code)
    assert projected.languages == (("en", 1), ("ja", 2), ("ko", 1)) and projected.learners == 4
    activity = rooms.poll(code)[1]
    rooms.set_lang(code, tokens[0], "ko")
    assert rooms.poll(code)[1] == activity + 1 and rooms.learner(code, tokens[0]).lang == "ko"
    assert rooms.projector_view(code).languages == (("en", 1), ("ja", 1), ("ko", 2))
    for bad in ("", "<b>ja</b>", "x" * 9, None, 3, "日本語"):
        with pytest.raises(RoomError, match="bad_value"):
            rooms.set_lang(code, tokens[1], bad)
        with pytest.raises(RoomError, match="bad_value"):
            rooms.join(code, "Eve", bad)
    with pytest.raises(RoomError, match="not_learner"):
        rooms.set_lang(code, "not a seat", "en")
    for i in range(rules.LIMITS["lang"].count):
        rooms.set_lang(code, tokens[1], "ja" if i % 2 else "en")
    with pytest.raises(RoomError, match="rate"):
        rooms.set_lang(code, tokens[1], "ko")
    clock.now += rules.LIMITS["lang"].window_s + 1
    rooms.set_lang(code, tokens[1], "ko")
    assert dict(rooms.facilitator_view(code, control).languages) == {"ja": 1, "ko": 3}


def test_a_refused_switch_of_language_is_written_again_until_the_seat_has_it(rooms, store, clock, monkeypatch):
    """A learner's switch refused for now (the rate limit, the database busy) is written again at the session's
    next call, until the class's count has it; while the seat has the page's language nothing is read or written."""
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    for i in range(rules.LIMITS["lang"].count):  # ten switches within the minute: the eleventh is refused
        rooms.set_lang(code, token, "ja" if i % 2 else "en")
    flags = write_flags(store, monkeypatch)
    assert rooms.read_in(code, token, "ja", "ko") == "ja"  # refused: the session keeps what the seat has
    assert rooms.facilitator_view(code, control).languages == (("ja", 1),)
    clock.now += rules.LIMITS["lang"].window_s + 1
    flags.clear()
    assert rooms.read_in(code, token, "ja", "ko") == "ko" and flags == [True]  # the next call: one write
    assert rooms.facilitator_view(code, control).languages == (("ko", 1),)
    flags.clear()
    assert [rooms.read_in(code, token, "ko", "ko") for _ in range(3)] == ["ko"] * 3 and flags == []

    def busy(*args):
        raise RoomError("busy")

    rooms.set_lang = busy
    assert rooms.read_in(code, token, "ko", "ja") == "ko"  # the database busy: tried again next time
    del rooms.set_lang
    with pytest.raises(RoomError, match="not_learner"):  # a refusal for good is said, not tried forever
        rooms.read_in(code, "not a seat", "ko", "ja")


def write_flags(store, monkeypatch) -> list[bool]:
    """Whether each transaction of `store` (a SqlStore) from now on takes the write lock, in order."""
    flags, original = [], store._tx

    @contextmanager
    def tx(write: bool):
        flags.append(write)
        with original(write) as run:
            yield run

    monkeypatch.setattr(store, "_tx", tx)
    return flags


def test_following_learners_move_with_the_room_and_report_it_without_a_write(rooms, store, clock, monkeypatch):
    """A step moves every learner who follows the room in the facilitator's one write; their pages then report
    the step they reached with a read only (no write lock to queue on), and a learner exploring is written."""
    code, control = rooms.create("qkv")
    ana = rooms.join(code, "Ana", "en")
    clock.now += 1  # Bo joins after Ana: the board lists learners in joining order
    bo = rooms.join(code, "Bo", "ja")
    rooms.where(code, bo, rules.EXPLORING, False)
    writes = write_flags(store, monkeypatch)
    rooms.move(code, control, 2)
    assert writes == [True]
    assert rooms.learners(code, control) == [("Ana", 2, True), ("Bo", rules.EXPLORING, False)]
    del writes[:]
    rooms.where(code, ana, 2, True)  # Ana's page reached the room's step: the board has it already
    assert writes == [False]
    rooms.where(code, bo, 1, False)  # Bo opens step 1 on his own: that is news
    rooms.where(code, ana, 1, True)  # a page behind the room (it lags): written as it is, not as the room is
    assert writes[1:] == [False, True, False, True]
    assert rooms.learners(code, control) == [("Ana", 1, True), ("Bo", 1, False)]
    assert rules.board(3, rooms.learners(code, control), []).steps == (0, 2, 0)


def test_a_following_learners_panel_reads_once_per_step(rooms, store, clock, monkeypatch):
    """A learner's panel reads the room's counters, and only when the version moved the room and their seat, in one
    transaction; a seat it read that shows the room's step already spares where() its own read."""
    from tests.room_stores import counted_queries

    code, control = rooms.create("qkv")
    ana = rooms.join(code, "Ana", "en")
    known = rooms.poll(code)[0]
    rooms.move(code, control, 2)
    counts = counted_queries(store, monkeypatch)
    fresh = rooms.follow(code, ana, known)
    assert fresh.polled == rooms.poll(code) and fresh.room.step == 2 and fresh.seat.step == 2
    rooms.where(code, ana, 2, True, fresh.seat)
    assert counts == {"transactions": 2, "statements": 3 + 1}  # follow's three, then the poll above
    unchanged = rooms.follow(code, ana, fresh.polled[0])
    assert unchanged.polled == fresh.polled and unchanged.room is None and unchanged.seat is None
    assert counts == {"transactions": 3, "statements": 5}
    rooms.where(code, ana, rules.EXPLORING, False, fresh.seat)  # news: read and written
    assert rooms.learner(code, ana).following is False
    assert rooms.follow(code, "not a seat", None).seat is None
    rooms.end(code, control)
    assert rooms.follow(code, ana, None) is None


def test_board_and_csv_for_the_facilitator(rooms, clock):
    code, control = rooms.create("qkv")
    a, b = rooms.join(code, "Ana", "en"), rooms.join(code, "=cmd|' /C calc'!A0", "ko")
    open_choice(rooms, code, control)
    rooms.answer(code, a, "it")
    clock.now += 1
    rooms.answer(code, b, "cat")
    rooms.where(code, b, -1, False)
    board = rules.board(3, rooms.learners(code, control), rooms.answers(code, control))
    assert board.steps == (1, 0, 0) and board.elsewhere == 1
    assert board.questions == (("q1", 2, 1),)
    assert sorted(rooms.steps_of_learners(code)) == [-1, 0]
    csv_text = rules.answers_csv(rooms.answers(code, control), {"q1": 0})
    lines = csv_text.splitlines()
    assert lines[0] == "question,step,name,response,correct,answered_at"
    assert lines[1].startswith("q1,1,Ana,it,1,") and lines[2].startswith("q1,1,'=cmd|' /C calc'!A0,cat,0,")


def test_a_server_restart_loses_no_answer(store_kind, tmp_path, clock, fixed_answers):
    first = open_rooms(store_kind, tmp_path, clock)
    code, control = first.create("qkv")
    token = first.join(code, "Ana", "en")
    open_choice(first, code, control)
    first.answer(code, token, "mat")
    first.close()  # the process goes away
    again = open_rooms(store_kind, tmp_path, clock)
    try:
        assert again.my_answer(code, token, "q1") == ("mat", False)
        assert [(r.learner, r.response) for r in again.answers(code, control)] == [("Ana", "mat")]
        assert again.answer(code, token, "it") is False  # still one answer after the restart
    finally:
        again.close()


def test_two_replicas_share_one_room(store_kind, tmp_path, clock, fixed_answers):
    """The facilitator's replica and the learners' replica: two stores on one database (as two processes)."""
    facilitator_side, learner_side = open_rooms(store_kind, tmp_path, clock), open_rooms(store_kind, tmp_path, clock)
    try:
        code, control = facilitator_side.create("qkv")
        token = learner_side.join(code, "Ana", "ja")
        before = learner_side.poll(code)
        facilitator_side.move(code, control, 1)
        facilitator_side.open_question(code, control, "qkv", 1)
        assert learner_side.poll(code)[0] == before[0] + 2 and learner_side.room(code).step == 1
        assert learner_side.answer(code, token, "0.25")
        assert facilitator_side.responses(code, "q2") == ["0.25"]
        assert facilitator_side.learners(code, control) == [("Ana", 1, True)]  # following: moved with the room
    finally:
        facilitator_side.close()
        learner_side.close()


def test_open_question_computes_the_answer_from_the_step_state(store, monkeypatch):
    """The right answer comes from the engine at opening time (a fake answer function that echoes the state)."""
    from core.lessons import answers
    from core.state import Choice, State

    def echo(params, state):
        return Answer("choice", state.pick, ("a", "b"), None, {})

    echo.params, echo.state = State(), State(Choice("pick", "a", options=("a", "b")))
    monkeypatch.setitem(answers.ANSWER_FUNCTIONS, "test.echo", echo)
    q = Question("q1", "choice", "test.echo", {}, {"en": "?"}, (), {"en": "."})
    lesson = Lesson("t", {"en": "t"}, (Step("attention", {"pick": "b"}, {"en": "x"}, q),))
    rooms = Rooms(store, {"t": lesson})
    code, control = rooms.create("t")
    token = rooms.join(code, "Ana", "en")
    right = rooms.open_question(code, control, "t", 0)
    assert right.correct == "b" and rooms.room(code).answer == right
    assert rooms.answer(code, token, "b")
    assert rooms.my_answer(code, token, "q1") == ("b", True)
    value = parse_response(right, "b")
    assert is_correct(right, value) and format_response(right, value) == "b"


BAD_STEPS = (None, "1", "abc", 1.0, True, 3, 999, -2, 2**70)


def test_every_step_a_request_sets_is_a_step_of_the_lesson(rooms):
    """move (the facilitator), where (a learner's position), the gallery's step: a value a widget or a crafted
    message can send is checked against the room's lesson before the rooms keeps it."""
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    for bad in BAD_STEPS:
        with pytest.raises(RoomError, match="bad_step"):
            rooms.move(code, control, bad)
        with pytest.raises(RoomError, match="bad_step"):
            rooms.where(code, token, bad, True)
        with pytest.raises(RoomError, match="bad_step"):
            rooms.submit(code, token, bad, "The cat sat.")
        with pytest.raises(RoomError, match="bad_step"):
            rooms.open_question(code, control, "qkv", bad)
    with pytest.raises(RoomError, match="bad_step"):
        rooms.move(code, control, rules.EXPLORING)  # only a learner explores
    assert rooms.room(code).step == 0 and rooms.learner(code, token).step == 0
    rooms.move(code, control, 2)
    rooms.where(code, token, rules.EXPLORING, False)
    assert rooms.room(code).step == 2 and rooms.learner(code, token).step == rules.EXPLORING
    with pytest.raises(RoomError, match="no_question"):
        rooms.open_question(code, control, "qkv", 2)
    for bad in (None, 1, "yes"):
        with pytest.raises(RoomError, match="bad_value"):
            rooms.where(code, token, 1, bad)
        with pytest.raises(RoomError, match="bad_value"):
            rooms.set_lost(code, token, bad)
        with pytest.raises(RoomError, match="bad_value"):
            rooms.lock_joining(code, control, bad)
    assert rooms.gallery(code, control, 0) == [] and rooms.lost_count(code) == 0


def test_a_room_opens_only_on_a_lesson_of_this_server(rooms):
    for bad in ("no-such", None, ["t"], "t" * 10_000):
        with pytest.raises(RoomError, match="unknown_lesson"):
            rooms.create(bad)


def test_a_room_on_a_lesson_that_lost_steps_shows_its_last_step(rooms):
    code, control = rooms.create("qkv")
    with rooms.store.atomic(write=True) as tx:
        tx.update_room(code, step=7)  # moved there before the lesson file was shortened
    assert rules.step_of(rooms.room(code), LESSONS["qkv"]) == 2
    rooms.move(code, control, 1)  # and the facilitator takes it on from there
    assert rooms.room(code).step == 1


class PausingConnection:
    """A SQLite connection that calls `between()` once, right after the first SELECT it runs: the moment at which
    another process's commit used to break a writer that had read first."""

    def __init__(self, conn, between):
        self.conn, self.between = conn, between

    def execute(self, sql, params=()):
        cursor = self.conn.execute(sql, params)
        if self.between is not None and sql.lstrip().upper().startswith("SELECT"):
            between, self.between = self.between, None
            between()
        return cursor

    def __getattr__(self, name):
        return getattr(self.conn, name)


def test_two_processes_on_one_sqlite_file_lose_no_click(tmp_path, clock):
    """The facilitator's server reads the room, the learners' server commits a learner's move, then the
    facilitator's server writes: the click lands (before: 'database is locked' at once, the click lost)."""
    facilitator_side = Rooms(SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock), LESSONS)
    learner_side = Rooms(SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock), LESSONS)
    try:
        code, control = facilitator_side.create("qkv")
        token = learner_side.join(code, "Ana", "en")
        failures = []

        def learner_moves():
            try:
                learner_side.where(code, token, -1, False)
            except Exception as e:  # noqa: BLE001 - reported below
                failures.append(e)

        other = threading.Thread(target=learner_moves)

        def commit_from_the_other_process():
            other.start()
            other.join(0.5)  # without the write lock taken up front, the other side commits now

        facilitator_side.store.conn = PausingConnection(facilitator_side.store.conn, commit_from_the_other_process)
        facilitator_side.move(code, control, 1)
        other.join(10)
        assert failures == []
        assert facilitator_side.room(code).step == 1
        assert learner_side.learner(code, token).following is False
    finally:
        facilitator_side.close()
        learner_side.close()


def test_a_sqlite_file_locked_too_long_is_a_sentence(tmp_path, clock):
    import sqlite3
    import time

    rooms = Rooms(SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock), LESSONS)
    code, control = rooms.create("qkv")
    holder = sqlite3.connect(tmp_path / "rooms.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock and does not let go
    try:
        start = time.monotonic()
        with pytest.raises(RoomError, match="busy"):
            rooms.move(code, control, 1)
        assert time.monotonic() - start < 5
        assert rooms.room(code).step == 0  # readers still read
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    rooms.move(code, control, 1)  # and the next click lands
    assert rooms.room(code).step == 1
    rooms.close()


def test_a_read_does_not_wait_for_a_write_of_its_process(tmp_path, clock):
    """A class's step is a burst of reads (polls, rooms, seats): on SQLite each takes a connection of its own, so
    it neither queues behind the process's other reads nor behind a write of its process that waits for another
    process's write lock (before: every transaction of a process took turns on one connection, and a poll waited
    for that write's whole busy timeout)."""
    import sqlite3
    import time

    rooms = Rooms(SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock), LESSONS)
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    holder = sqlite3.connect(tmp_path / "rooms.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writes
    clicked = []

    def click():
        try:
            rooms.move(code, control, 1)
        except RoomError as e:
            clicked.append(e.key)  # 'busy' once its tries are over

    writer = threading.Thread(target=click)
    try:
        writer.start()
        time.sleep(0.2)  # the click waits for the other process's write lock, inside its transaction
        assert writer.is_alive()
        start = time.monotonic()
        assert rooms.poll(code) is not None and rooms.learner(code, token).name == "Ana"
        assert time.monotonic() - start < 0.5  # a read; before: the click's busy timeout, 1.5-4.5 s
        reads = [threading.Thread(target=rooms.room, args=(code,)) for _ in range(8)]
        for t in reads:
            t.start()
        for t in reads:
            t.join(1)
        assert not any(t.is_alive() for t in reads)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        writer.join(10)
        rooms.close()


def test_the_sqlite_file_is_its_owners_only(tmp_path, clock):
    path = tmp_path / "rooms" / "rooms.sqlite3"
    rooms = Rooms(SQLiteStore(path, clock=clock), LESSONS)
    rooms.create("qkv")
    assert path.stat().st_mode & 0o777 == 0o600
    assert all(p.stat().st_mode & 0o077 == 0 for p in path.parent.iterdir())  # -wal and -shm too
    rooms.close()
    path.chmod(0o644)  # a file from an older version
    SQLiteStore(path, clock=clock).close()
    assert path.stat().st_mode & 0o777 == 0o600


def test_joins_are_limited_per_client_per_room_and_overall(rooms, monkeypatch):
    codes = [rooms.create("qkv")[0] for _ in range(3)]
    for i in range(rules.LIMITS["join_client"].count):
        rooms.join(codes[i % 3], f"Ana {i}", "en", client="browser:a")
    with pytest.raises(RoomError, match="rate"):
        rooms.join(codes[2], "Ana again", "en", client="browser:a")  # another room: the same client
    rooms.join(codes[2], "Bo", "en", client="browser:b")
    monkeypatch.setattr(rules, "MAX_LEARNERS", 2)
    with pytest.raises(RoomError, match="room_full"):
        rooms.join(codes[0], "Cy", "en", client="browser:c")  # codes[0] holds Ana 0 and Ana 3
    monkeypatch.setattr(rules, "MAX_LEARNERS_ALL", 5)
    with pytest.raises(RoomError, match="server_full_rooms"):
        rooms.join(codes[1], "Di", "en", client="browser:d")  # 5 seated in all rooms together


def test_rooms_opened_per_client_and_overall(rooms, clock, monkeypatch):
    for _ in range(rules.LIMITS["create"].count):
        rooms.create("qkv", client="browser:a")
    with pytest.raises(RoomError, match="rate"):
        rooms.create("qkv", client="browser:a")
    rooms.create("qkv", client="browser:b")
    clock.now += rules.LIMITS["create"].window_s + 1
    rooms.create("qkv", client="browser:a")
    monkeypatch.setattr(rules, "MAX_OPEN_ROOMS", 5)
    with pytest.raises(RoomError, match="server_full_rooms"):
        rooms.create("qkv", client="browser:c")


def test_room_codes_cannot_be_guessed(rooms, clock):
    code, _ = rooms.create("qkv")
    misses = rules.LIMITS["join_miss"].count
    guesses = [g for g in ("ZZZZZ" + ch for ch in rules.CODE_ALPHABET) if g != code]  # never the room's own code
    for wrong in guesses[:misses]:
        with pytest.raises(RoomError, match="unknown_room"):
            rooms.join(wrong, "Eve", "en", client="browser:eve")
    with pytest.raises(RoomError, match="join_attempts"):
        rooms.join(code, "Eve", "en", client="browser:eve")  # past its tries, even the right code says nothing
    with pytest.raises(RoomError, match="join_attempts"):
        rooms.find(code, client="browser:eve")  # a link is a try too
    assert rooms.find(code, client="browser:ana").code == code  # another browser is not held back
    assert rooms.find(guesses[-1], client="browser:ana") is None
    clock.now += rules.LIMITS["join_miss"].window_s + 1
    assert rooms.learner(code, rooms.join(code, "Eve", "en", client="browser:eve")).name == "Eve"


PASSCODE = "KX7QP-M2RTW-9HNBZ-4CDFG"  # an operator's


def open_count(rooms, clock) -> int:
    with rooms.store.atomic(False) as tx:
        return tx.rooms_open_at(clock())


def test_a_server_with_the_operators_passcode_opens_rooms_only_for_it(store, clock, fixed_answers):
    """SECURITY.md's filled rooms: a client inventing a cookie for each room opened all 200 a database holds. On a
    server with a passcode a room opens only for it; a refusal says nothing of it (the service's words and its log
    name neither the passcode nor its digest); a server without one opens rooms as before."""
    rooms = Rooms(store, LESSONS, passcode=PASSCODE)
    assert rooms.asks_passcode and not Rooms(store, LESSONS).asks_passcode
    refusals = []
    for missing in (None, "", "   ", 42, ["KX7QP"]):
        with pytest.raises(RoomError, match="passcode_empty") as refused:
            rooms.create("qkv", client="browser:a", passcode=missing)
        refusals.append(refused.value)
    for wrong in (PASSCODE.lower(), PASSCODE[:-1], PASSCODE + "G", "x" * 100_000, "\u0000" + PASSCODE):
        with pytest.raises(RoomError, match="passcode_wrong") as refused:
            rooms.create("qkv", client="browser:b", passcode=wrong)
        refusals.append(refused.value)
    for e in refusals:
        assert PASSCODE not in str(e) and rules.digest(PASSCODE) not in str(e) and e.key in str(e)
    assert open_count(rooms, clock) == 0
    code, control = rooms.create("qkv", client="browser:c", passcode=f"  {PASSCODE}\n")  # pasted with spaces
    assert rooms.is_control(code, control) and open_count(rooms, clock) == 1
    assert rooms.create("qkv", passcode=PASSCODE)[0] != code  # the operator's own scripts: the same rule
    with pytest.raises(RoomError, match="passcode_empty"):
        rooms.create("qkv")
    open_for_anyone = Rooms(store, LESSONS)  # no passcode set (a laptop): nothing asked, whatever is sent
    assert open_for_anyone.create("qkv", client="browser:d")[0] and open_for_anyone.create("qkv", passcode="x")[0]


def test_where_no_passcode_guards_opening_only_the_computers_own_browser_opens_a_room(store, clock, fixed_answers):
    """A laptop run (no passcode) that its owner put behind a proxy or a tunnel: a visitor from afar could fill it
    with rooms, a cookie for each. It opens rooms for the computer's own browser only; with a passcode, for any
    browser that gives it. A refusal writes nothing (not a guess)."""
    laptop = Rooms(store, LESSONS)
    assert laptop.opens_for(from_afar=False) and not laptop.opens_for(from_afar=True)
    for client in ("browser:far", ""):
        with pytest.raises(RoomError, match="open_here_only"):
            laptop.create("qkv", client=client, from_afar=True)
    assert open_count(laptop, clock) == 0
    with laptop.store.atomic(False) as tx:
        assert tx.times("", "browser:far", "create", 0) == [] and tx.times("", "browser:far", "passcode_miss", 0) == []
    code, control = laptop.create("qkv", client="browser:here")  # the laptop's own browser
    assert laptop.is_control(code, control)
    guarded = Rooms(store, LESSONS, passcode=PASSCODE)
    assert guarded.opens_for(from_afar=True) and guarded.opens_for(from_afar=False)
    assert guarded.create("qkv", client="browser:far", passcode=PASSCODE, from_afar=True)[0]
    assert open_count(laptop, clock) == 2


def test_passcodes_tried_in_vain_hold_a_browser_back(store, clock, fixed_answers):
    """As codes tried in vain (LIMITS["join_miss"]): a browser that typed wrong passcodes too often opens nothing
    for a while, not even with the right one, so it cannot guess on; other browsers are not held back, and an
    empty box is no guess."""
    rooms = Rooms(store, LESSONS, passcode=PASSCODE)
    tries = rules.LIMITS["passcode_miss"].count
    for i in range(tries):
        with pytest.raises(RoomError, match="passcode_wrong"):
            rooms.create("qkv", client="browser:eve", passcode=f"guess-{i}")
    with pytest.raises(RoomError, match="passcode_attempts"):
        rooms.create("qkv", client="browser:eve", passcode=PASSCODE)  # past its tries, even the right one
    assert open_count(rooms, clock) == 0
    for _ in range(2 * tries):
        with pytest.raises(RoomError, match="passcode_empty"):
            rooms.create("qkv", client="browser:ana", passcode="")
    rooms.create("qkv", client="browser:ana", passcode=PASSCODE)
    reopened = Rooms(store, LESSONS, passcode=PASSCODE)  # counted in the database: another process, another replica
    with pytest.raises(RoomError, match="passcode_attempts"):
        reopened.create("qkv", client="browser:eve", passcode=PASSCODE)
    clock.now += rules.LIMITS["passcode_miss"].window_s + 1
    code, control = reopened.create("qkv", client="browser:eve", passcode=PASSCODE)
    assert rooms.is_control(code, control) and open_count(rooms, clock) == 2


def test_the_facilitator_locks_joining_removes_a_learner_and_closes_the_room(rooms):
    code, control = rooms.create("qkv")
    ana, bo = rooms.join(code, "Ana", "en"), rooms.join(code, "Bo", "en")
    open_choice(rooms, code, control)
    rooms.answer(code, bo, "cat")
    rooms.submit(code, bo, 0, "Spam spam spam.")
    rooms.show(code, control, "Spam spam spam.")
    with pytest.raises(RoomError, match="not_control"):
        rooms.lock_joining(code, ana, True)
    rooms.lock_joining(code, control, True)
    assert rooms.room(code).locked
    with pytest.raises(RoomError, match="room_locked"):
        rooms.join(code, "Cy", "en")
    assert rooms.learner(code, ana).name == "Ana"  # those seated stay
    rooms.lock_joining(code, control, False)
    rooms.join(code, "Cy", "en")
    seats = dict((name, seat) for seat, name in rooms.seats(code, control))
    assert sorted(seats) == ["Ana", "Bo", "Cy"] and all(len(s) == 16 and s not in bo for s in seats.values())
    for bad in ("", "x" * 16, None, seats["Bo"][:8], bo):
        with pytest.raises(RoomError, match="no_seat"):
            rooms.remove(code, control, bad)
    with pytest.raises(RoomError, match="not_control"):
        rooms.remove(code, ana, seats["Bo"])
    rooms.remove(code, control, seats["Bo"])
    assert rooms.learner(code, bo) is None and rooms.responses(code, "q1") == []
    assert rooms.gallery(code, control, 0) == [] and rooms.room(code).shown == ""
    with pytest.raises(RoomError, match="not_learner"):
        rooms.set_lost(code, bo, True)  # their link is no seat any more
    with pytest.raises(RoomError, match="not_control"):
        rooms.end(code, ana)
    rooms.end(code, control)
    assert rooms.room(code) is None and rooms.poll(code) is None
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.set_lost(code, ana, True)


def test_a_closed_room_is_deleted_after_the_retention_time(rooms, clock):
    code, control = rooms.create("qkv", ttl_s=60)
    token = rooms.join(code, "Ana", "en")
    clock.now += 61
    rooms.create("qkv")
    assert rooms.learner(code, token).name == "Ana"  # kept a while after closing
    rooms.purge()
    assert rooms.learner(code, token).name == "Ana"
    clock.now += rules.KEEP_AFTER_CLOSE_S
    rooms.purge()  # what a server process does on its timer (app/room/store.py), with no new room
    assert rooms.learner(code, token) is None


def pause_after(store, marker: str, between) -> None:
    """Make `store` call `between()` once, inside its next transaction, right after a statement containing
    `marker` ran: another replica's whole action can happen there."""
    original = store._tx

    @contextmanager
    def paused(write):
        with original(write) as run:

            def traced(sql, params):
                cursor = run(sql, params)
                nonlocal between
                if between is not None and marker in sql:
                    call, between = between, None
                    call()
                return cursor

            yield traced

    store._tx = paused


def test_seat_limits_hold_across_replicas(store_kind, tmp_path, clock, monkeypatch):
    """Two replicas let one learner in each at the same moment into a room with one seat left: one gets it (before,
    on PostgreSQL both counted the same free seat, then both sat)."""
    monkeypatch.setattr(rules, "MAX_LEARNERS", 1)
    one, other = open_rooms(store_kind, tmp_path, clock), open_rooms(store_kind, tmp_path, clock)
    try:
        code, control = one.create("qkv")
        outcome = []

        def join_on_the_other_replica():
            try:
                outcome.append(other.join(code, "Bo", "en"))
            except RoomError as e:
                outcome.append(e.key)

        thread = threading.Thread(target=join_on_the_other_replica)

        def meanwhile():
            thread.start()
            thread.join(0.5)

        pause_after(one.store, "COUNT(*) FROM learners WHERE code", meanwhile)
        one.join(code, "Ana", "en")
        thread.join(10)
        assert outcome == ["room_full"]
        assert [name for name, _, _ in one.learners(code, control)] == ["Ana"]
    finally:
        one.close()
        other.close()


def test_a_postgres_lock_held_past_the_timeout_is_busy_not_away(tmp_path, clock, monkeypatch):
    """Another replica's transaction holds the admission lock longer than lock_timeout: 'busy', and the pool keeps
    its healthy connections."""
    import psycopg

    from core.room.sql import ADMISSION_LOCK, PostgresStore

    monkeypatch.setattr(PostgresStore, "statement_ms", 300)
    rooms = open_rooms("postgres", tmp_path, clock)
    code, _ = rooms.create("qkv")
    holder = psycopg.connect(rooms.store.url, autocommit=True)
    try:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (ADMISSION_LOCK,))
            with pytest.raises(RoomError, match="busy"):
                rooms.join(code, "Ana", "en")
        assert rooms.learner(code, rooms.join(code, "Ana", "en")).name == "Ana"  # once it is let go
    finally:
        holder.close()
        rooms.close()
        room_stores.drop_schema(tmp_path)


def test_processes_sharing_a_database_agree_on_the_passcode_they_made(store_kind, tmp_path, clock, fixed_answers):
    """Hosted servers started by hand without the operator's passcode, sharing one room database, each made their
    own: a facilitator's passcode opened rooms on one replica and was refused on the next. The first to ask makes
    it and keeps its digest in the database; the others ask for that one and learn whose log printed it. The
    operator's passcode still wins."""
    one, other = (Rooms(room_stores.open_kind(store_kind, tmp_path, clock), LESSONS, agreed_passcode=True)
                  for _ in range(2))  # fmt: skip
    late = Rooms(room_stores.open_kind(store_kind, tmp_path, clock), LESSONS, agreed_passcode=True)  # never asked
    try:
        assert one.asks_passcode and other.asks_passcode and one.agrees_passcode
        first, second = rules.new_passcode(), rules.new_passcode()
        made = one.agree_passcode(first, "web-1 (pid 11)")
        assert made == rules.AgreedPasscode(True, "web-1 (pid 11)", clock.now)
        clock.now += 60
        assert other.agree_passcode(second, "web-2 (pid 12)") == rules.AgreedPasscode(False, "web-1 (pid 11)",
                                                                                      clock.now - 60)  # fmt: skip
        for rooms in (one, other, late):
            with pytest.raises(RoomError, match="passcode_wrong"):
                rooms.create("qkv", client="browser:a", passcode=second)
            code, control = rooms.create("qkv", client="browser:b", passcode=first)
            assert one.is_control(code, control)
        with one.store.atomic(False) as tx:
            kept = tx.opening_passcode()
        assert kept[0] == rules.digest(first) and first not in str(kept)  # its digest only
        operators = Rooms(late.store, LESSONS, passcode=PASSCODE, agreed_passcode=True)  # the operator's wins
        assert not operators.agrees_passcode and operators.create("qkv", passcode=PASSCODE)[0]
        with pytest.raises(RoomError, match="passcode_wrong"):
            operators.create("qkv", passcode=first)
    finally:
        for rooms in (one, other, late):
            rooms.close()


def test_processes_starting_at_once_agree_on_one_passcode(store_kind, tmp_path, clock, fixed_answers):
    """Two servers start at the same moment on a new database (each opens it, migrating it, then asks for the
    passcode); then a third asks while a fourth's insert is not yet committed. Each time one passcode is kept, made
    by one of them, and all ask for it."""
    made = [rules.new_passcode() for _ in range(4)]
    if store_kind == "postgres":  # the test's own schema, made once (its CREATE SCHEMA is no server's start): empty
        room_stores.open_kind(store_kind, tmp_path, clock).close()
    started: list = [None, None]
    barrier = threading.Barrier(2)

    def start(i: int) -> None:
        barrier.wait()
        rooms = Rooms(room_stores.open_kind(store_kind, tmp_path, clock), LESSONS, agreed_passcode=True)
        started[i] = (rooms, rooms.agree_passcode(made[i], f"web-{i}"))

    threads = [threading.Thread(target=start, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    rooms_of = [rooms for rooms, _ in started]
    try:
        assert sorted(a.made_here for _, a in started) == [False, True]
        winner = next(i for i, (_, a) in enumerate(started) if a.made_here)
        assert {a.made_by for _, a in started} == {f"web-{winner}"}
        for rooms in rooms_of:
            assert rooms.create("qkv", passcode=made[winner])[0]
            with pytest.raises(RoomError, match="passcode_wrong"):
                rooms.create("qkv", passcode=made[1 - winner])
        with rooms_of[0].store.atomic(True) as tx:  # a new database again, for the interleaved start
            tx.run("DELETE FROM opening_passcode", ())
        third, fourth = (Rooms(room_stores.open_kind(store_kind, tmp_path, clock), LESSONS, agreed_passcode=True)
                         for _ in range(2))  # fmt: skip
        rooms_of += [third, fourth]
        asked: list = []
        asking = threading.Thread(target=lambda: asked.append(third.agree_passcode(made[2], "web-2")))

        def meanwhile():  # the fourth has inserted its passcode and not yet committed
            asking.start()
            asking.join(0.5)

        pause_after(fourth.store, "INSERT INTO opening_passcode", meanwhile)
        assert fourth.agree_passcode(made[3], "web-3").made_here
        asking.join(10)
        assert asked == [rules.AgreedPasscode(False, "web-3", clock.now)]
        assert third.create("qkv", passcode=made[3])[0]
    finally:
        for rooms in rooms_of:
            rooms.close()
