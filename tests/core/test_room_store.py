"""The room stores only store (core/room/sql.py, SQLite and PostgreSQL alike): told to, they read an expired room,
write to a room without any control token, keep an answer with no question open and record actions past every
limit; the room service refuses each of those (tests/core/test_room_service.py). Each action of the service is
one transaction. The answer is typed in and out; the adapter alone turns it into text."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from core import room as rules
from core.lessons import Answer
from core.room import RoomError
from tests import room_stores

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures
rooms, fixed_answers = room_stores.rooms, room_stores.fixed_answers

ROOT = Path(__file__).resolve().parents[2]


def test_a_store_keeps_what_it_is_told_and_decides_nothing(store, clock):
    with store.atomic(write=True) as tx:
        tx.insert_room("ABCDEF", rules.digest("control"), "qkv", clock() - 100, clock() - 10)  # already expired
        tx.insert_learner("ABCDEF", "seat", "x" * 500, "en", 99, clock())  # a name no rule allows, a step past any
        for _ in range(3 * rules.LIMITS["answer"].count):
            tx.record("ABCDEF", "seat", "answer", clock())  # past every limit
        kept = tx.insert_answer("ABCDEF", "q9", "seat", "anything", True, clock())  # no question open
        tx.update_room("ABCDEF", ("version",), phase="revealed", step=-7)  # no control token asked
    with store.atomic(write=False) as tx:
        room, control = tx.room("ABCDEF")
        assert kept and control == rules.digest("control")
        assert (room.step, room.phase, room.version, room.expires < clock()) == (-7, "revealed", 2, True)
        assert tx.learner("ABCDEF", "seat").name == "x" * 500
        assert len(tx.times("ABCDEF", "seat", "answer", 0.0)) == 3 * rules.LIMITS["answer"].count
        assert tx.responses("ABCDEF", "q9") == ["anything"]


def test_the_store_module_holds_no_rule():
    """No rule of core/room reaches the adapter: it imports none, and the only refusal it raises is its own
    'busy' or 'unavailable' (the database)."""
    text = (ROOT / "core" / "room" / "sql.py").read_text(encoding="utf-8")
    for rule in ("rules.", "check_control", "check_rate", "check_join", "check_open", "check_step", "LIMITS", "same_secret", "clean_name", "clean_sentence", "ttl_seconds", "MAX_",
                 "forget_before", "seat_named", "from core import room"):  # fmt: skip
        assert rule not in text, rule
    assert re.findall(r"RoomError\((\w+)", text) == ["key"]  # attempt(): RoomError(key) for busy or away


def test_an_answer_is_stored_typed_and_read_back_typed(store, clock):
    order = Answer("order", ("k2", "k0", "k1"), ("k0", "k1", "k2"), None, {"weights": (0.2, 0.1, 0.7), "n": 3})
    with store.atomic(write=True) as tx:
        tx.insert_room("ABCDEF", "d", "qkv", clock(), clock() + 60)
        tx.update_room("ABCDEF", question="q1", phase="open", answer=order)
    with store.atomic(write=False) as tx:
        back = tx.room("ABCDEF")[0].answer
    assert (back.kind, back.correct, back.options, back.tolerance) == (order.kind, order.correct, order.options, None)
    assert back.detail == {"weights": [0.2, 0.1, 0.7], "n": 3}
    with store.atomic(write=True) as tx:
        tx.update_room("ABCDEF", answer=None)
        assert tx.room("ABCDEF")[0].answer is None


def counting(store, monkeypatch) -> list[bool]:
    """The store's transactions from now on (write or not), one entry each."""
    opened: list[bool] = []
    original = store.atomic

    @contextmanager
    def atomic(write):
        opened.append(write)
        with original(write) as tx:
            yield tx

    monkeypatch.setattr(store, "atomic", atomic)
    return opened


def test_every_action_is_one_transaction(rooms, store, monkeypatch):
    code, control = rooms.create("qkv")
    token = rooms.join(code, "Ana", "en")
    rooms.submit(code, token, 0, "The cat sat.")
    seat = rooms.seats(code, control)[0][0]
    room = rooms.room(code)
    actions = {
        "create": lambda: rooms.create("qkv"), "join": lambda: rooms.join(code, "Bo", "en"),
        "find": lambda: rooms.find(code, "browser"), "poll": lambda: rooms.poll(code),
        "room": lambda: rooms.room(code), "is_control": lambda: rooms.is_control(code, control),
        "move": lambda: rooms.move(code, control, 0), "open_question": lambda: rooms.open_question(code, control, "qkv", 0),
        "answer": lambda: rooms.answer(code, token, "it"), "my_answer": lambda: rooms.my_answer(code, token, "q1"),
        "reveal": lambda: rooms.reveal(code, control), "histogram": lambda: rooms.histogram(room),
        "show": lambda: rooms.show(code, control, "The cat sat."), "where": lambda: rooms.where(code, token, 0, True),
        "lost": lambda: rooms.set_lost(code, token, True), "gallery submit": lambda: rooms.submit(code, token, 0, "Hi."),
        "gallery": lambda: rooms.gallery(code, control, 0), "lock": lambda: rooms.lock_joining(code, control, True),
        "facilitator view": lambda: rooms.facilitator_view(code, control),
        "projector view": lambda: rooms.projector_view(code), "csv": lambda: rooms.answers_csv(code, control),
        "learner": lambda: rooms.learner(code, token), "remove": lambda: rooms.remove(code, control, seat),
        "end": lambda: rooms.end(code, control),
    }  # fmt: skip
    opened = counting(store, monkeypatch)
    for name, act in actions.items():
        opened.clear()
        act()
        assert len(opened) == 1, name
    opened.clear()
    with pytest.raises(RoomError, match="unknown_room"):
        rooms.move(code, control, 1)  # refused (the room ended): still one transaction, rolled back
    assert opened == [True]
