"""A facilitator's redraw reads the room once: Rooms.facilitator_view is one transaction of eight statements
(the room's row with its control digest read once, then learners, answers, responses, "I'm lost", gallery, seats,
the learners' languages)
on SQLite and PostgreSQL alike, and what it returns is what the room holds."""

from __future__ import annotations

import pytest

from core.room import RoomError
from tests import room_stores

clock, store, store_kind = room_stores.clock, room_stores.store, room_stores.store_kind  # the fixtures
rooms, fixed_answers = room_stores.rooms, room_stores.fixed_answers
counted = room_stores.counted_queries


def test_a_facilitators_redraw_is_one_transaction(rooms, store, clock, monkeypatch):
    code, control = rooms.create("qkv")
    ana = rooms.join(code, "Ana", "en")
    clock.now += 1  # Bo joins after Ana: the board and the seats list learners in joining order
    bo = rooms.join(code, "Bo", "ja")
    rooms.where(code, bo, 1, True)
    rooms.open_question(code, control, "qkv", 0)
    assert rooms.answer(code, ana, "it") and rooms.answer(code, bo, "cat")
    rooms.submit(code, bo, 0, "猫が寝た")
    rooms.set_lost(code, ana, True)
    counts = counted(store, monkeypatch)
    view = rooms.facilitator_view(code, control)
    assert counts == {"transactions": 1, "statements": 8}
    assert (view.room.step, view.room.question, view.learners, view.lost) == (0, "q1", 2, 1)
    assert (view.hist.labels, view.hist.counts, view.hist.right) == (("cat", "mat", "it"), (1, 0, 1), (False,) * 3)
    assert view.board.steps == (1, 1, 0) and view.board.rows == (("Ana", 0, True, 1, 1), ("Bo", 1, True, 1, 0))
    assert view.gallery == (("Bo", "猫が寝た"),) and [name for _, name in view.seats] == ["Ana", "Bo"]
    assert view.languages == (("en", 1), ("ja", 1))
    assert view.polled == rooms.poll(code)  # what the panel compares its next poll with
    rooms.reveal(code, control)
    assert rooms.facilitator_view(code, control).hist.right == (False, False, True)
    for wrong in (None, "", ana, control + "x"):
        with pytest.raises(RoomError, match="not_control"):
            rooms.facilitator_view(code, wrong)


def test_a_room_without_an_open_question_has_no_histogram(rooms, store, monkeypatch):
    code, control = rooms.create("qkv")
    counts = counted(store, monkeypatch)
    view = rooms.facilitator_view(code, control)
    assert view.hist is None and view.learners == 0 and view.board.steps == (0, 0, 0)
    assert view.languages == ()
    assert counts == {"transactions": 1, "statements": 7}  # no responses to read
