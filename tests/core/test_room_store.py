"""Room stores, each rule tested on SQLite and PostgreSQL alike (tests/room_stores.py): only the control token
moves the room, reveals or sees names; one answer per learner per question; learner actions rate-limited and
validated; unknown and expired codes refused; nothing lost when the server restarts; two replicas share a room."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from core import room as rules
from core.lessons import Answer, Lesson, Question, Step, format_response, is_correct, parse_response
from core.room import RoomError
from core.room.sql import SQLiteStore
from tests import room_stores
from tests.room_stores import open_kind

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures

CHOICE = Answer("choice", "it", ("cat", "mat", "it"), None, {})
NUMBER = Answer("number", 0.25, (), 0.01, {})


def open_choice(store, code, control, answer=CHOICE, question="q1"):
    store.open_question(code, control, question, rules.answer_to_json(answer))


def test_create_poll_and_move(store):
    code, control = store.create("qkv")
    assert rules.normal_code(code) == code
    v0, a0 = store.poll(code)
    store.move(code, control, 2)
    room = store.room(code)
    assert room.step == 2 and room.lesson == "qkv" and store.poll(code)[0] == v0 + 1
    token = store.join(code, "Ana", "ja")
    assert store.poll(code) == (v0 + 1, a0 + 1)  # a learner's action does not move followers
    assert store.learner(code, token).step == 2 and store.learner(code, token).lang == "ja"


def test_only_the_control_token_moves_reveals_and_sees_names(store):
    code, control = store.create("qkv")
    other_code, other_control = store.create("qkv")
    learner = store.join(code, "Ana", "en")
    for wrong in (None, "", learner, other_control, control + "x"):
        with pytest.raises(RoomError, match="not_control"):
            store.move(code, wrong, 1)
        with pytest.raises(RoomError, match="not_control"):
            open_choice(store, code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            store.learners(code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            store.answers(code, wrong)
        with pytest.raises(RoomError, match="not_control"):
            store.gallery(code, wrong, 0)
        with pytest.raises(RoomError, match="not_control"):
            store.show(code, wrong, "hi")
        assert not store.is_control(code, wrong)
    open_choice(store, code, control)
    with pytest.raises(RoomError, match="not_control"):
        store.reveal(code, learner)
    assert store.room(code).step == 0 and store.room(code).phase == "open"
    store.reveal(code, control)
    assert store.room(code).phase == "revealed"
    assert store.learners(code, control) == [("Ana", 0, True)]
    assert store.is_control(code, control) and not store.is_control(other_code, control)


def test_unknown_and_expired_codes(store, clock):
    assert store.room("ZZZZZZ") is None and store.poll("ZZZZZZ") is None
    with pytest.raises(RoomError, match="unknown_room"):
        store.join("ZZZZZZ", "Ana", "en")
    code, control = store.create("qkv", ttl_s=60)
    token = store.join(code, "Ana", "en")
    clock.now += 61
    assert store.room(code) is None and store.poll(code) is None
    with pytest.raises(RoomError, match="unknown_room"):
        store.join(code, "Bo", "en")
    with pytest.raises(RoomError, match="unknown_room"):
        store.move(code, control, 1)
    with pytest.raises(RoomError, match="unknown_room"):
        store.set_lost(code, token, True)


def test_default_expiry_follows_the_environment(store, clock, monkeypatch):
    monkeypatch.setenv(rules.TTL_ENV, "2")
    code, _ = store.create("qkv")
    assert store.room(code).expires - store.room(code).created == pytest.approx(7200)
    monkeypatch.delenv(rules.TTL_ENV)
    code, _ = store.create("qkv")
    assert store.room(code).expires - store.room(code).created == pytest.approx(24 * 3600)


def test_one_answer_per_learner_even_from_two_tabs(store):
    code, control = store.create("qkv")
    token = store.join(code, "Ana", "en")
    with pytest.raises(RoomError, match="question_closed"):
        rules.submit_answer(store, code, token, "it")
    open_choice(store, code, control)
    assert rules.submit_answer(store, code, token, "it") is True
    # a second tab holds the same token (the same room link): it answers nothing
    assert rules.submit_answer(store, code, token, "cat") is False
    assert store.my_answer(code, token, "q1") == ("it", True)
    assert store.responses(code, "q1") == ["it"]
    with pytest.raises(RoomError, match="not_learner"):
        rules.submit_answer(store, code, "forged-token", "it")


def test_answers_are_validated_against_the_question_kind(store):
    code, control = store.create("qkv")
    token = store.join(code, "Ana", "en")
    open_choice(store, code, control)
    for bad in ("dog", "<b>it</b>", "", 3, None, "x" * 5000):
        with pytest.raises(RoomError, match="bad_answer"):
            rules.submit_answer(store, code, token, bad)
    store.move(code, control, 1)
    open_choice(store, code, control, NUMBER, "q2")
    for bad in ("a quarter", "nan", "inf", "1e999"):
        with pytest.raises(RoomError, match="bad_answer"):
            rules.submit_answer(store, code, token, bad)
    assert rules.submit_answer(store, code, token, "０.２５５")  # full-width digits; within 0.01 of 0.25
    assert store.my_answer(code, token, "q2") == ("0.255", True)
    assert store.responses(code, "q1") == []  # nothing of the bad attempts was kept


def test_answers_close_with_the_step(store):
    code, control = store.create("qkv")
    token = store.join(code, "Ana", "en")
    open_choice(store, code, control)
    store.move(code, control, 1)
    with pytest.raises(RoomError, match="question_closed"):
        rules.submit_answer(store, code, token, "it")
    with pytest.raises(RoomError, match="question_closed"):
        store.answer(code, token, "q1", "it", True)  # the store checks too, not only the page


def test_learner_actions_are_rate_limited(store, clock):
    code, control = store.create("qkv")
    token = store.join(code, "Ana", "en")
    limit = rules.LIMITS["lost"]
    for i in range(limit.count):
        store.set_lost(code, token, i % 2 == 0)
    with pytest.raises(RoomError, match="rate"):
        store.set_lost(code, token, True)
    other = store.join(code, "Bo", "en")
    store.set_lost(code, other, True)  # one learner's limit is theirs alone
    clock.now += limit.window_s + 1
    store.set_lost(code, token, True)
    assert store.lost_count(code) == 2
    for _ in range(rules.LIMITS["gallery"].count):
        store.submit(code, token, 0, "The cat sat.")
    with pytest.raises(RoomError, match="rate"):
        store.submit(code, token, 0, "The cat sat again.")
    open_choice(store, code, control)
    for _ in range(rules.LIMITS["answer"].count):
        with pytest.raises(RoomError, match="bad_answer"):
            rules.submit_answer(store, code, token, "dog")  # invalid input never reaches the store
    assert rules.submit_answer(store, code, token, "it")


def test_joins_are_rate_limited_and_names_bounded(store):
    code, _ = store.create("qkv")
    for bad, key in (("", "name_empty"), ("   ", "name_empty"), ("x" * 41, "name_long"), (None, "name_empty")):
        with pytest.raises(RoomError, match=key):
            store.join(code, bad, "en")
    assert store.learner(code, store.join(code, "y" * 40, "en")).name == "y" * 40
    for i in range(rules.LIMITS["join"].count - 1):
        store.join(code, f"learner {i}", "en")
    with pytest.raises(RoomError, match="rate"):
        store.join(code, "one too many", "en")


def test_gallery_keeps_text_as_written_and_shows_one(store):
    code, control = store.create("qkv")
    token = store.join(code, "Ana", "en")
    html = "<script>alert(1)</script> **bold** [x](javascript:alert(1))"
    store.submit(code, token, 0, html)
    store.submit(code, token, 1, "Another step's sentence.")
    assert store.gallery(code, control, 0) == [("Ana", html)]
    store.show(code, control, html)
    assert store.room(code).shown == html  # kept verbatim; the page shows it with st.text (tests/pages)
    with pytest.raises(RoomError, match="sentence_long"):
        store.submit(code, token, 0, "x" * (rules.MAX_SENTENCE_CHARS + 1))


def test_board_and_csv_for_the_facilitator(store, clock):
    code, control = store.create("qkv")
    a, b = store.join(code, "Ana", "en"), store.join(code, "=cmd|' /C calc'!A0", "ko")
    open_choice(store, code, control)
    rules.submit_answer(store, code, a, "it")
    clock.now += 1
    rules.submit_answer(store, code, b, "cat")
    store.where(code, b, -1, False)
    board = rules.board(3, store.learners(code, control), store.answers(code, control))
    assert board.steps == (1, 0, 0) and board.elsewhere == 1
    assert board.questions == (("q1", 2, 1),)
    assert sorted(store.steps_of_learners(code)) == [-1, 0]
    csv_text = rules.answers_csv(store.answers(code, control), {"q1": 0})
    lines = csv_text.splitlines()
    assert lines[0] == "question,step,name,response,correct,answered_at"
    assert lines[1].startswith("q1,1,Ana,it,1,") and lines[2].startswith("q1,1,'=cmd|' /C calc'!A0,cat,0,")


def test_a_server_restart_loses_no_answer(store_kind, tmp_path, clock):
    first = open_kind(store_kind, tmp_path, clock)
    code, control = first.create("qkv")
    token = first.join(code, "Ana", "en")
    open_choice(first, code, control)
    rules.submit_answer(first, code, token, "mat")
    first.close()  # the process goes away
    again = open_kind(store_kind, tmp_path, clock)
    try:
        assert again.my_answer(code, token, "q1") == ("mat", False)
        assert [(r.learner, r.response) for r in again.answers(code, control)] == [("Ana", "mat")]
        assert rules.submit_answer(again, code, token, "it") is False  # still one answer after the restart
    finally:
        again.close()


def test_two_replicas_share_one_room(store_kind, tmp_path, clock):
    """The facilitator's replica and the learners' replica: two stores on one database (as two processes)."""
    facilitator_side, learner_side = open_kind(store_kind, tmp_path, clock), open_kind(store_kind, tmp_path, clock)
    try:
        code, control = facilitator_side.create("qkv")
        token = learner_side.join(code, "Ana", "ja")
        before = learner_side.poll(code)
        facilitator_side.move(code, control, 1)
        open_choice(facilitator_side, code, control, question="q2")
        assert learner_side.poll(code)[0] == before[0] + 2 and learner_side.room(code).step == 1
        assert rules.submit_answer(learner_side, code, token, "it")
        assert facilitator_side.responses(code, "q2") == ["it"]
        assert facilitator_side.learners(code, control) == [("Ana", 0, True)]
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
    code, control = store.create("t")
    token = store.join(code, "Ana", "en")
    right = rules.open_question(store, code, control, lesson)
    assert right.correct == "b" and rules.answer_from_json(store.room(code).answer) == right
    assert rules.submit_answer(store, code, token, "b")
    assert store.my_answer(code, token, "q1") == ("b", True)
    value = parse_response(right, "b")
    assert is_correct(right, value) and format_response(right, value) == "b"


def three_steps() -> Lesson:
    return Lesson("t", {"en": "t"}, tuple(Step("attention", {}, {"en": f"step {i}"}, None) for i in range(3)))


BAD_STEPS = (None, "1", "abc", 1.0, True, 3, 999, -2, 2**70)


def test_every_step_a_request_sets_is_a_step_of_the_lesson(store):
    """move (the facilitator), where (a learner's position), the gallery's step: a value a widget or a crafted
    message can send is checked against the room's lesson before the store keeps it."""
    lesson = three_steps()
    code, control = rules.create(store, {"t": lesson}, "t")
    token = store.join(code, "Ana", "en")
    for bad in BAD_STEPS:
        with pytest.raises(RoomError, match="bad_step"):
            rules.move(store, code, control, lesson, bad)
        with pytest.raises(RoomError, match="bad_step"):
            rules.where(store, code, token, lesson, bad, True)
        with pytest.raises(RoomError, match="bad_step"):
            rules.submit_sentence(store, code, token, lesson, bad, "The cat sat.")
    with pytest.raises(RoomError, match="bad_step"):
        rules.move(store, code, control, lesson, rules.EXPLORING)  # only a learner explores
    assert store.room(code).step == 0 and store.learner(code, token).step == 0
    rules.move(store, code, control, lesson, 2)
    rules.where(store, code, token, lesson, rules.EXPLORING, False)
    assert store.room(code).step == 2 and store.learner(code, token).step == rules.EXPLORING
    for bad in (None, 1, "yes"):
        with pytest.raises(RoomError, match="bad_value"):
            rules.where(store, code, token, lesson, 1, bad)
        with pytest.raises(RoomError, match="bad_value"):
            rules.set_lost(store, code, token, bad)
    assert store.gallery(code, control, 0) == [] and store.lost_count(code) == 0


def test_a_room_opens_only_on_a_lesson_of_this_server(store):
    for bad in ("no-such", None, ["t"], "t" * 10_000):
        with pytest.raises(RoomError, match="unknown_lesson"):
            rules.create(store, {"t": three_steps()}, bad)


def test_a_room_on_a_lesson_that_lost_steps_shows_its_last_step(store):
    code, control = store.create("t")
    store.move(code, control, 7)  # moved there before the lesson file was shortened
    assert rules.step_of(store.room(code), three_steps()) == 2


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
    facilitator_side = SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock)
    learner_side = SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock)
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

        facilitator_side.conn = PausingConnection(facilitator_side.conn, commit_from_the_other_process)
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

    store = SQLiteStore(tmp_path / "rooms.sqlite3", clock=clock)
    code, control = store.create("qkv")
    holder = sqlite3.connect(tmp_path / "rooms.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock and does not let go
    try:
        start = time.monotonic()
        with pytest.raises(RoomError, match="busy"):
            store.move(code, control, 1)
        assert time.monotonic() - start < 5
        assert store.room(code).step == 0  # readers still read
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.move(code, control, 1)  # and the next click lands
    assert store.room(code).step == 1
    store.close()


def test_the_sqlite_file_is_its_owners_only(tmp_path, clock):
    path = tmp_path / "rooms" / "rooms.sqlite3"
    store = SQLiteStore(path, clock=clock)
    store.create("qkv")
    assert path.stat().st_mode & 0o777 == 0o600
    assert all(p.stat().st_mode & 0o077 == 0 for p in path.parent.iterdir())  # -wal and -shm too
    store.close()
    path.chmod(0o644)  # a file from an older version
    SQLiteStore(path, clock=clock).close()
    assert path.stat().st_mode & 0o777 == 0o600


def test_joins_are_limited_per_client_per_room_and_overall(store, monkeypatch):
    rooms = [store.create("qkv")[0] for _ in range(3)]
    for i in range(rules.LIMITS["join_client"].count):
        store.join(rooms[i % 3], f"Ana {i}", "en", client="browser:a")
    with pytest.raises(RoomError, match="rate"):
        store.join(rooms[2], "Ana again", "en", client="browser:a")  # another room: the same client
    store.join(rooms[2], "Bo", "en", client="browser:b")
    monkeypatch.setattr(rules, "MAX_LEARNERS", 2)
    with pytest.raises(RoomError, match="room_full"):
        store.join(rooms[0], "Cy", "en", client="browser:c")  # rooms[0] holds Ana 0 and Ana 3
    monkeypatch.setattr(rules, "MAX_LEARNERS_ALL", 5)
    with pytest.raises(RoomError, match="server_full_rooms"):
        store.join(rooms[1], "Di", "en", client="browser:d")  # 5 seated in all rooms together


def test_rooms_opened_per_client_and_overall(store, clock, monkeypatch):
    for _ in range(rules.LIMITS["create"].count):
        store.create("qkv", client="browser:a")
    with pytest.raises(RoomError, match="rate"):
        store.create("qkv", client="browser:a")
    store.create("qkv", client="browser:b")
    clock.now += rules.LIMITS["create"].window_s + 1
    store.create("qkv", client="browser:a")
    monkeypatch.setattr(rules, "MAX_OPEN_ROOMS", 5)
    with pytest.raises(RoomError, match="server_full_rooms"):
        store.create("qkv", client="browser:c")


def test_room_codes_cannot_be_guessed(store, clock):
    code, _ = store.create("qkv")
    misses = rules.LIMITS["join_miss"].count
    for i in range(misses):
        wrong = "ZZZZZ" + rules.CODE_ALPHABET[i]
        with pytest.raises(RoomError, match="unknown_room"):
            store.join(wrong, "Eve", "en", client="browser:eve")
    with pytest.raises(RoomError, match="join_attempts"):
        store.join(code, "Eve", "en", client="browser:eve")  # past its tries, even the right code says nothing
    with pytest.raises(RoomError, match="join_attempts"):
        store.find(code, client="browser:eve")  # a link is a try too
    assert store.find(code, client="browser:ana").code == code  # another browser is not held back
    assert store.find("ZZZZZZ", client="browser:ana") is None
    clock.now += rules.LIMITS["join_miss"].window_s + 1
    assert store.learner(code, store.join(code, "Eve", "en", client="browser:eve")).name == "Eve"


def test_the_facilitator_locks_joining_removes_a_learner_and_closes_the_room(store):
    code, control = store.create("qkv")
    ana, bo = store.join(code, "Ana", "en"), store.join(code, "Bo", "en")
    open_choice(store, code, control)
    rules.submit_answer(store, code, bo, "cat")
    store.submit(code, bo, 0, "Spam spam spam.")
    store.show(code, control, "Spam spam spam.")
    with pytest.raises(RoomError, match="not_control"):
        store.lock_joining(code, ana, True)
    store.lock_joining(code, control, True)
    assert store.room(code).locked
    with pytest.raises(RoomError, match="room_locked"):
        store.join(code, "Cy", "en")
    assert store.learner(code, ana).name == "Ana"  # those seated stay
    store.lock_joining(code, control, False)
    store.join(code, "Cy", "en")
    seats = dict((name, seat) for seat, name in store.seats(code, control))
    assert sorted(seats) == ["Ana", "Bo", "Cy"] and all(len(s) == 16 and s not in bo for s in seats.values())
    for bad in ("", "x" * 16, None, seats["Bo"][:8], bo):
        with pytest.raises(RoomError, match="no_seat"):
            store.remove(code, control, bad)
    with pytest.raises(RoomError, match="not_control"):
        store.remove(code, ana, seats["Bo"])
    store.remove(code, control, seats["Bo"])
    assert store.learner(code, bo) is None and store.responses(code, "q1") == []
    assert store.gallery(code, control, 0) == [] and store.room(code).shown == ""
    with pytest.raises(RoomError, match="not_learner"):
        store.set_lost(code, bo, True)  # their link is no seat any more
    with pytest.raises(RoomError, match="not_control"):
        store.end(code, ana)
    store.end(code, control)
    assert store.room(code) is None and store.poll(code) is None
    with pytest.raises(RoomError, match="unknown_room"):
        store.set_lost(code, ana, True)


def test_a_closed_room_is_deleted_after_the_retention_time(store, clock):
    code, control = store.create("qkv", ttl_s=60)
    token = store.join(code, "Ana", "en")
    clock.now += 61
    store.create("qkv")
    assert store.learner(code, token).name == "Ana"  # kept a while after closing
    clock.now += rules.KEEP_AFTER_CLOSE_S
    store.create("qkv")
    assert store.learner(code, token) is None


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
    one, other = open_kind(store_kind, tmp_path, clock), open_kind(store_kind, tmp_path, clock)
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

        pause_after(one, "COUNT(*) FROM learners WHERE code", meanwhile)
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
    store = open_kind("postgres", tmp_path, clock)
    code, _ = store.create("qkv")
    holder = psycopg.connect(store.url, autocommit=True)
    try:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (ADMISSION_LOCK,))
            with pytest.raises(RoomError, match="busy"):
                store.join(code, "Ana", "en")
        assert store.learner(code, store.join(code, "Ana", "en")).name == "Ana"  # once it is let go
    finally:
        holder.close()
        store.close()
        room_stores.drop_schema(tmp_path)
