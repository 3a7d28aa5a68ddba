"""A room's right answer travels as a typed value: the store keeps text, core.room.right_answer hands pages the
engine's Answer (an order's tuple, a number's tolerance), on SQLite and PostgreSQL alike; nothing else reads the
stored text back; the room's histogram counts the stored responses against that typed answer."""

from __future__ import annotations

from pathlib import Path

from core import room as rules
from core.lessons import Answer, Lesson, Question, Step
from tests import room_stores

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures

ROOT = Path(__file__).resolve().parents[2]
ORDER = Answer("order", ("k2", "k0", "k1"), ("k0", "k1", "k2"), None, {"weights": (0.2, 0.1, 0.7)})
NUMBER = Answer("number", 0.25, (), 0.01, {})


def lesson_with(answer: Answer) -> Lesson:
    question = Question("q1", answer.kind, "fixed", {}, {"en": "?"}, (), {"en": ""})
    return Lesson("l", {"en": "l"}, (Step("sdpa-steps", {}, {"en": "s"}, question),))


def test_the_right_answer_reaches_pages_typed(store, monkeypatch):
    for right in (ORDER, NUMBER):
        monkeypatch.setattr("core.lessons.answer", lambda question, state, right=right: right)
        code, control = store.create("l")
        assert rules.right_answer(store.room(code)) is None  # no question open yet
        rules.open_question(store, code, control, lesson_with(right))
        room = store.room(code)
        assert isinstance(room.answer, str)  # the store keeps text
        typed = rules.right_answer(room)
        assert (typed.kind, typed.correct, typed.options, typed.tolerance) == (
            right.kind, right.correct, right.options, right.tolerance)  # fmt: skip
        assert type(typed.correct) is type(right.correct)  # an order stays a tuple, a number a float
        store.reveal(code, control)
        assert rules.right_answer(store.room(code)) == typed  # revealed: still the same answer
        store.move(code, control, 0)
        assert rules.right_answer(store.room(code)) is None  # the room moved on: no answer to read


def test_the_histogram_counts_stored_responses_against_the_typed_answer(store, monkeypatch):
    monkeypatch.setattr("core.lessons.answer", lambda question, state: ORDER)
    code, control = store.create("l")
    assert rules.histogram(store, store.room(code)) is None
    rules.open_question(store, code, control, lesson_with(ORDER))
    for name, response in (("a", "k2 > k0 > k1"), ("b", "k0 > k1 > k2"), ("c", "k2 > k0 > k1")):
        assert rules.submit_answer(store, code, store.join(code, name, "en"), response)
    before = rules.histogram(store, store.room(code))
    assert (before.labels, before.counts, before.right) == (("k2 > k0 > k1", "k0 > k1 > k2"), (2, 1), (False, False))
    store.reveal(code, control)
    after = rules.histogram(store, store.room(code), mine="k0 > k1 > k2")
    assert after.right == (True, False) and after.n_right == 2 and after.mine == 1


def test_nothing_but_core_room_reads_a_stored_answer_back():
    readers = [
        str(path.relative_to(ROOT))
        for folder in ("app", "core", "viz", "scripts")
        for path in (ROOT / folder).rglob("*.py")
        if "answer_from_json" in path.read_text(encoding="utf-8")
    ]
    assert readers == ["core/room/__init__.py"]
