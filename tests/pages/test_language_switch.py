"""After a switch of language each kind of picker shows what the learner chose in the new language, the choice kept:
the browser holds the chosen option's label, so the page sends the choice again with its new label (ui.pick,
ui.pick_many; ui.select: tests/pages/test_page_states.py). Seen in chromium: scripts/language_switch_check.py."""

from __future__ import annotations

import pytest

from app import i18n
from app.views.lessons.text import plain
from core import lessons as core
from core import room as rules
from tests.apptest_helpers import figure_by_key, open_view
from tests.room_stores import as_process_store


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from as_process_store(tmp_path, monkeypatch)


def to_japanese(at):
    at.selectbox(key="lang").select("ja").run()
    assert at.query_params["lang"] == "ja" and not at.exception
    return at


def test_the_lesson_a_facilitator_picked_stays_picked_in_japanese(store):
    """/room's lesson picker (a select box; it was in a form, which tells the server nothing until it is sent)."""
    at = open_view("room", {"lang": "en"})
    at.selectbox(key="room-lesson").select("masks").run()
    box = to_japanese(at).selectbox(key="room-lesson")
    assert box.value == "masks"
    assert box.proto.set_value and box.proto.raw_value == core.text_in(core.load_lessons()["masks"].title, "ja")


def test_a_half_answered_choice_stays_chosen_in_japanese():
    """/lessons' choice question (radio buttons): the learner's pick, not yet checked, survives the switch."""
    question = core.load_lessons()["scaling"].steps[2].question
    at = open_view("lessons", {"lang": "en", "lesson": "scaling", "lstep": "3"})
    at.radio(key=f"input-scaling-{question.id}").set_value("lower").run()
    radio = to_japanese(at).radio(key=f"input-scaling-{question.id}")
    assert radio.proto.set_value and radio.proto.raw_value == plain(i18n.text("ja", "lessons", "choice_lower"))
    assert radio.proto.raw_value in radio.options


def test_a_half_made_order_stays_in_japanese():
    """/lessons' order question (a multiselect): the items put in order so far, in the new language's words."""
    question = core.load_lessons()["masks"].steps[3].question
    at = open_view("lessons", {"lang": "en", "lesson": "masks", "lstep": "4"})
    at.multiselect(key=f"input-masks-{question.id}").select("encoder_self").select("cross").run()
    chosen = to_japanese(at).multiselect(key=f"input-masks-{question.id}")
    words = [i18n.text("ja", "lessons", f"choice_{o}") for o in ("encoder_self", "cross")]
    assert chosen.proto.set_value and list(chosen.proto.raw_values) == words


def test_the_bars_of_a_choices_answers_and_the_right_answer_are_in_the_readers_words(store):
    """A choice's bars ('higher', 'scaled': the engine's identifiers) were English on every page: /lessons' feedback
    and a room's projector now name them, and the projector the right answer, in the reader's words."""
    question = core.load_lessons()["scaling"].steps[2].question
    at = open_view("lessons", {"lang": "ja", "lesson": "scaling", "lstep": "3", f"a.{question.id}": "lower"})
    words = {o: i18n.text("ja", "lessons", f"choice_{o}") for o in ("higher", "lower", "same")}
    bars = figure_by_key(at, f"fig-scaling-{question.id}")["data"][0]["y"]
    assert [b.removesuffix(" ✓") for b in bars] == list(words.values()), bars
    code, control = store.create("scaling")
    store.move(code, control, 2)
    store.open_question(code, control, "scaling", 2)
    store.reveal(code, control)
    at = open_view("room", {"lang": "ja", "room": code, "mode": "projector"})
    right = rules.right_answer(store.room(code)).correct
    assert any(words[right] in s.value for s in at.success), [s.value for s in at.success]


def test_an_untouched_example_text_follows_the_language_and_a_typed_one_stays():
    """/transformer-xl's example text is written in the reader's language: after a switch the untouched box holds
    the new language's; a text the learner typed is kept."""
    at = open_view("transformer_xl", {"lang": "en"})
    assert at.text_area(key="text").value == i18n.text("en", "transformer_xl", "default_text")
    assert to_japanese(at).text_area(key="text").value == i18n.text("ja", "transformer_xl", "default_text")
    at = open_view("transformer_xl", {"lang": "en"})
    at.text_area(key="text").input("The cat sat.").run()
    assert to_japanese(at).text_area(key="text").value == "The cat sat."
