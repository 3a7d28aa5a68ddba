"""A room's right answer travels as a typed value: the engine's Answer goes into the room service, the store
adapter alone turns it into text and back (core/room/sql.py), and pages get the same Answer (an order's tuple, a
number's tolerance), on SQLite and PostgreSQL alike; the room's histogram counts the stored responses against it."""

from __future__ import annotations

from pathlib import Path

from core.lessons import Answer, Lesson, Question, Step
from core.room.service import Rooms
from tests import room_stores

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures

ROOT = Path(__file__).resolve().parents[2]
ORDER = Answer("order", ("k2", "k0", "k1"), ("k0", "k1", "k2"), None, {"weights": (0.2, 0.1, 0.7)})
NUMBER = Answer("number", 0.25, (), 0.01, {})


def rooms_with(store, answer: Answer) -> Rooms:
    question = Question("q1", answer.kind, "fixed", {}, {"en": "?"}, (), {"en": ""})
    return Rooms(store, {"l": Lesson("l", {"en": "l"}, (Step("sdpa-steps", {}, {"en": "s"}, question),))})


def test_the_right_answer_reaches_pages_typed(store, monkeypatch):
    for right in (ORDER, NUMBER):
        monkeypatch.setattr("core.lessons.answer", lambda question, state, right=right: right)
        rooms = rooms_with(store, right)
        code, control = rooms.create("l")
        assert rooms.room(code).answer is None  # no question open yet
        rooms.open_question(code, control, "l", 0)
        typed = rooms.room(code).answer
        assert (typed.kind, typed.correct, typed.options, typed.tolerance) == (
            right.kind, right.correct, right.options, right.tolerance)  # fmt: skip
        assert type(typed.correct) is type(right.correct)  # an order stays a tuple, a number a float
        rooms.reveal(code, control)
        assert rooms.room(code).answer == typed  # revealed: still the same answer
        rooms.move(code, control, 0)
        assert rooms.room(code).answer is None  # the room moved on: no answer to read


def test_the_histogram_counts_stored_responses_against_the_typed_answer(store, monkeypatch):
    monkeypatch.setattr("core.lessons.answer", lambda question, state: ORDER)
    rooms = rooms_with(store, ORDER)
    code, control = rooms.create("l")
    assert rooms.histogram(rooms.room(code)) is None
    rooms.open_question(code, control, "l", 0)
    for name, response in (("a", "k2 > k0 > k1"), ("b", "k0 > k1 > k2"), ("c", "k2 > k0 > k1")):
        assert rooms.answer(code, rooms.join(code, name, "en"), response)
    before = rooms.histogram(rooms.room(code))
    assert (before.labels, before.counts, before.right) == (("k2 > k0 > k1", "k0 > k1 > k2"), (2, 1), (False, False))
    rooms.reveal(code, control)
    after = rooms.histogram(rooms.room(code), mine="k0 > k1 > k2")
    assert after.right == (True, False) and after.n_right == 2 and after.mine == 1


def test_only_the_store_adapter_reads_or_writes_an_answer_as_json():
    coders = [
        str(path.relative_to(ROOT))
        for folder in ("app", "core", "viz", "scripts")
        for path in (ROOT / folder).rglob("*.py")
        if any(name in path.read_text(encoding="utf-8") for name in ("answer_to_json", "answer_from_json"))
    ]
    assert coders == ["core/room/sql.py"]
