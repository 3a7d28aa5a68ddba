"""The projector view (/room?room=CODE&mode=projector): what a facilitator shows the class. The join link and its
QR code, the room's step, the open question, how many have answered and the live histogram (the right answer
coloured once revealed), the right answer and its explanation once revealed, the sentence the facilitator chose to
show. The step's text, its question and the revealed answer are shown in the projector's language and, below, in
every other language a learner of the room reads in (a mixed class reads the one screen). It holds no control and
no secret: its link is the room code only, and it reads nothing a learner could not see (no names, no board, no
gallery)."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import streamlit as st

from app import i18n, ui
from app.room import watch
from app.room.store import open_store
from app.views.lessons.text import answers_figure, draw, in_words, label, plain
from app.views.room import facilitator, follow
from core import room as rules
from core.lessons import for_the_class


def snapshot(code: str, polled) -> dict:
    view = open_store().projector_view(code)
    return {"polled": polled, "room": view and view.room, "view": view}


def readers(languages) -> list[str]:
    """The languages this server has words for that the class reads (the view's (code, learners) pairs)."""
    return [code for code, _ in languages if code in ui.LANGS]


def in_the_class(words: dict[str, str], lang: str, languages) -> None:
    """A lesson's words in the projector's language (a stand-in said so), then in each other language the class
    reads that the lesson is written in, under that language's own name (core.lessons.for_the_class): a reader
    finds theirs, and never finds English under their language's name."""
    for i, shown in enumerate(for_the_class(words, lang, readers(languages))):
        if i:
            st.caption(ui.LANGS[shown.lang])
        draw(shown)


def revealed(question, right, lang: str, languages) -> None:
    """The right answer in the projector's language and each other language the class reads, each in that
    language's words (a choice's 'scaled' said as its readers say it), each with its explanation where the lesson
    has one in that language (for_the_class: the stand-in once, under the projector's language, said so)."""
    answers = {}
    for code in ui.LANGS:
        said = in_words(partial(i18n.text, code, "lessons"), right.kind, rules.answer_to_text(right))
        answers[code] = i18n.text(code, "room", "right_answer", answer=plain(said))
    explanations = for_the_class(question.explanation, lang, readers(languages))
    explained = {lang: explanations[0], **{shown.lang: shown for shown in explanations[1:]}}
    for i, shown in enumerate(for_the_class(answers, lang, readers(languages))):
        if i:
            st.caption(ui.LANGS[shown.lang])
        st.success(shown.text)
        if shown.lang in explained:
            draw(explained[shown.lang], right)


@follow.live
def live(code: str, lesson) -> None:
    T, lang = ui.texts("room"), ui.lang()
    polled = open_store().poll(code)
    watch.follow_here(code, polled, any_change=True)
    snap = st.session_state.get("room-projector")
    if polled is not None and (snap is None or snap["polled"] != polled or snap["room"].code != code):
        snap = st.session_state["room-projector"] = snapshot(code, polled)
    if polled is None or snap["room"] is None:
        st.warning(T("room_closed"))
        return
    view = snap["view"]
    room, hist = replace(view.room, step=rules.step_of(view.room, lesson)), view.hist  # a shortened lesson file
    step = lesson.steps[room.step]
    st.subheader(T("step_of", step=room.step + 1, n=len(lesson.steps)))
    in_the_class(step.text, lang, view.languages)
    ui.metrics([(T("learners_n"), view.learners, None), (T("answered_n"), hist.total if hist else 0, None)])
    if step.question is not None and room.question == step.question.id:
        in_the_class(step.question.prompt, lang, view.languages)
        fig = answers_figure(hist)
        ui.show_figure(fig, "room-answers", key="room-projector-hist", toolbar=False)
        if room.phase == "revealed":
            revealed(step.question, rules.right_answer(room), lang, view.languages)
    if room.shown:
        st.caption(T("shown"))
        st.text(room.shown)  # a learner's sentence: plain text


def show(T, code: str, lessons: dict) -> None:
    room = open_store().room(code)
    lesson = lessons.get(room.lesson)
    if lesson is None:
        st.error(T("lesson_gone", lesson=room.lesson))
        return
    st.header(T("projector_header", code=code, title=plain(label(lesson.title, ui.lang()))))
    facilitator.join_panel(T, code, qr_width=240)
    live(code, lesson)
