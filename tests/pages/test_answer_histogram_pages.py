"""One histogram of answers for /lessons and /room: the same responses give the same bars, counts and colours on
both pages, and a room's numbers are binned (twelve equal bins over the responses) rather than one bar each."""

from __future__ import annotations

import pytest

from tests.apptest_helpers import assert_no_exception, figure_by_key, open_view, run_view
from tests.room_stores import as_process_store

LESSON = "qkv-softmax"


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from as_process_store(tmp_path, monkeypatch)


def bars(figure: dict) -> dict:
    bar = figure["data"][0]
    return {"labels": list(bar["y"]), "counts": list(bar["x"]), "colours": list(bar["marker"]["color"]),
            "outlined": list(bar["marker"]["line"]["width"])}  # fmt: skip


def room_on(store, step: int):
    code, control = store.create(LESSON)
    store.move(code, control, step)
    assert store.open_question(code, control, LESSON, store.room(code).step).kind in ("number", "choice")
    return code, control


@pytest.mark.parametrize(
    ("step", "question", "response", "labels"),  # revealed: the right bar's label ends in a check mark
    [
        (1, "score-q0-k0", "14", ["14 ✓"]),
        (1, "score-q0-k0", "13.5", ["13.5"]),
        (3, "top-key-q1", "k0", ["k0", "k1", "k2 ✓"]),
    ],
)
def test_a_learners_answer_is_drawn_alike_on_lessons_and_in_a_room(store, step, question, response, labels):
    lessons = open_view("lessons", {"lesson": LESSON, "lstep": str(step), f"a.{question}": response})
    mine_on_lessons = bars(figure_by_key(lessons, f"fig-{LESSON}-{question}"))
    code, control = room_on(store, step - 1)  # /lessons counts steps from 1, a room from 0
    token = store.join(code, "Ana", "en")
    assert store.answer(code, token, response)
    store.reveal(code, control)
    learner = run_view("room", {"room": code, "me": token})
    learner.run()  # the panel's first poll opens the room's step, with the revealed question
    assert_no_exception(learner)
    mine_in_room = bars(figure_by_key(learner, "room-hist-learner"))
    assert mine_in_room == mine_on_lessons
    assert mine_in_room["labels"] == labels and sum(mine_in_room["counts"]) == 1
    assert mine_in_room["outlined"][[y.removesuffix(" ✓") for y in labels].index(response)] == 3  # the learner's own


def test_a_rooms_numbers_are_binned_as_lessons_bins_them(store):
    """Thirteen learners answer 0, 1, ..., 12: more distinct numbers than bars, so twelve bins of width 1 over
    [0, 12] (the last one closed: 11 and 12 share it), on the facilitator's page and the projector alike."""
    code, control = room_on(store, 0)  # score-q0-k0
    for n in range(13):
        assert store.answer(code, store.join(code, f"L{n}", "en"), str(n))
    expected_labels = [f"{a}–{a + 1}" for a in range(12)]
    expected_counts = [1] * 11 + [2]
    facilitator = run_view("room", {"room": code, "key": control})
    assert_no_exception(facilitator)
    projector = run_view("room", {"room": code, "mode": "projector"})
    assert_no_exception(projector)
    for page, key in ((facilitator, "room-hist"), (projector, "room-projector-hist")):
        drawn = bars(figure_by_key(page, key))
        assert drawn["labels"] == expected_labels and drawn["counts"] == expected_counts, key
        assert len(set(drawn["colours"])) == 1  # not revealed yet: no bar gives the answer away
