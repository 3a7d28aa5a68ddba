"""The projector view (/room?room=CODE&mode=projector): what a facilitator shows the class. The join link and its
QR code, the room's step, the open question, how many have answered and the live histogram (the right answer
coloured once revealed), the sentence the facilitator chose to show. It holds no control and no secret: its link
is the room code only, and it reads nothing a learner could not see (no names, no board, no gallery)."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.room import watch
from app.room.store import open_store
from app.views.lessons.text import answers_figure, in_words
from app.views.room import facilitator, follow
from core import room as rules
from core.lessons import text_in


def snapshot(code: str, polled) -> dict:
    room, hist, learners = open_store().projector_view(code) or (None, None, 0)
    return {"polled": polled, "room": room, "hist": hist, "learners": learners}


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
    room, hist = snap["room"], snap["hist"]
    step = lesson.steps[room.step]
    st.subheader(T("step_of", step=room.step + 1, n=len(lesson.steps)))
    st.markdown(text_in(step.text, lang))
    c1, c2 = st.columns(2)
    c1.metric(T("learners_n"), snap["learners"])
    c2.metric(T("answered_n"), hist.total if hist else 0)
    if step.question is not None and room.question == step.question.id:
        st.markdown(text_in(step.question.prompt, lang))
        fig = answers_figure(hist)
        ui.show_figure(fig, "room-answers", key="room-projector-hist", toolbar=False)
        if room.phase == "revealed":
            right = rules.right_answer(room)
            st.success(T("right_answer", answer=in_words(ui.texts("lessons"), right.kind, rules.answer_to_text(right))))
    if room.shown:
        st.caption(T("shown"))
        st.text(room.shown)  # a learner's sentence: plain text


def show(T, code: str, lessons: dict) -> None:
    room = open_store().room(code)
    lesson = lessons.get(room.lesson)
    if lesson is None:
        st.error(T("lesson_gone", lesson=room.lesson))
        return
    st.header(T("projector_header", code=code, title=text_in(lesson.title, ui.lang())))
    facilitator.join_panel(T, code, qr_width=240)
    live(code, lesson)
