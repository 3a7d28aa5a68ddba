"""A facilitator's redraw reads the room once: core.room.facilitator_view is one transaction of seven statements
(the room's row with its control digest read once, then learners, answers, responses, "I'm lost", gallery, seats)
on SQLite and PostgreSQL alike, and what it returns is what the room holds."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from core import room as rules
from core.lessons import Answer, Lesson, Step
from core.room import RoomError
from tests import room_stores

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures

CHOICE = Answer("choice", "it", ("cat", "mat", "it"), None, {})
LESSON = Lesson("t", {"en": "t"}, tuple(Step("attention", {}, {"en": f"step {i}"}, None) for i in range(3)))


def counted(store, monkeypatch) -> dict[str, int]:
    """Counts the store's transactions and statements from now on."""
    counts = {"transactions": 0, "statements": 0}
    original = store._tx

    @contextmanager
    def tx(write: bool):
        counts["transactions"] += 1
        with original(write) as run:

            def run_counted(sql, params):
                counts["statements"] += 1
                return run(sql, params)

            yield run_counted

    monkeypatch.setattr(store, "_tx", tx)
    return counts


def test_a_facilitators_redraw_is_one_transaction(store, clock, monkeypatch):
    code, control = store.create("t")
    ana = store.join(code, "Ana", "en")
    clock.now += 1  # Bo joins after Ana: the board and the seats list learners in joining order
    bo = store.join(code, "Bo", "ja")
    store.move(code, control, 1)
    store.where(code, bo, 1, True)
    store.open_question(code, control, "q1", rules.answer_to_json(CHOICE))
    assert store.answer(code, ana, "q1", "it", True) and store.answer(code, bo, "q1", "cat", False)
    store.submit(code, bo, 1, "猫が寝た")
    store.set_lost(code, ana, True)
    counts = counted(store, monkeypatch)
    view = rules.facilitator_view(store, code, control, LESSON)
    assert counts == {"transactions": 1, "statements": 7}
    assert (view.room.step, view.room.question, view.learners, view.lost) == (1, "q1", 2, 1)
    assert (view.hist.labels, view.hist.counts, view.hist.right) == (("cat", "mat", "it"), (1, 0, 1), (False,) * 3)
    assert view.board.steps == (1, 1, 0) and view.board.rows == (("Ana", 0, True, 1, 1), ("Bo", 1, True, 1, 0))
    assert view.gallery == (("Bo", "猫が寝た"),) and [name for _, name in view.seats] == ["Ana", "Bo"]
    store.reveal(code, control)
    assert rules.facilitator_view(store, code, control, LESSON).hist.right == (False, False, True)
    for wrong in (None, "", ana, control + "x"):
        with pytest.raises(RoomError, match="not_control"):
            rules.facilitator_view(store, code, wrong, LESSON)


def test_a_room_without_an_open_question_has_no_histogram(store, monkeypatch):
    code, control = store.create("t")
    counts = counted(store, monkeypatch)
    view = rules.facilitator_view(store, code, control, LESSON)
    assert view.hist is None and view.learners == 0 and view.board.steps == (0, 0, 0)
    assert counts == {"transactions": 1, "statements": 6}  # no responses to read
