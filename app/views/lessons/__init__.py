"""/lessons: walk a lesson alone, step by step. Each step shows its text, opens its page with the step's state,
and may ask a question whose right answer the engine computes (core/lessons/answers/); a hint ladder before
answering, then right or wrong, the explanation and the view that shows why. Position and answers live in the
session and in the URL. Lessons are files in lessons/ (core/lessons)."""

import streamlit as st

from app import ui
from core import lessons as core

from . import paths, progress, question
from .text import label, prose

CURRENT = "_lesson_on_screen"


def go(step: int) -> None:
    st.session_state["lstep"] = step


def navigation(T, lesson: core.Lesson, index: int) -> None:
    n, shown = len(lesson.steps), index + 1  # go() takes the step as the step widget shows it, from 1
    row = ui.buttons()
    row.button(T("prev"), on_click=go, args=(shown - 1,), disabled=index == 0, icon=":material/arrow_back:")
    row.button(T("next"), on_click=go, args=(shown + 1,), disabled=index == n - 1, icon=":material/arrow_forward:")


def summary(T, lesson: core.Lesson, given: dict[str, str]) -> None:
    """How the walk went so far: questions answered, and right."""
    judged = []
    for step in lesson.steps:
        q = step.question
        if q is None or q.id not in given:
            continue
        try:
            judged.append((progress.right_answer(q, step.state), given[q.id]))
        except (ValueError, RuntimeError, OSError, KeyError):
            continue
    st.caption(T("score", answered=len(given), right=core.count_right(judged), n=len(lesson.questions)))


def page() -> None:
    T = ui.page_setup("lessons")
    st.title(T("title"))
    st.markdown(T("intro"))
    try:
        lessons = progress.load_lessons()
    except core.LessonError as err:
        st.error(T("bad_file"))
        st.code(err.shown, language=None)  # the file's name: not the server's folders
        ui.page_end()
        return
    if not lessons:
        st.info(T("none"))
        ui.page_end()
        return
    lang = ui.lang()
    lesson_id = ui.select("lesson", T("lesson"), list(lessons), format_func=lambda i: label(lessons[i].title, lang))
    lesson = lessons[lesson_id]
    if st.session_state.get(CURRENT, lesson_id) != lesson_id:
        st.session_state["lstep"] = 1  # another lesson starts at its first step
    st.session_state[CURRENT] = lesson_id
    on_path = paths.current(lesson_id)
    n = len(lesson.steps)
    index = ui.number("lstep", T("step"), 1, n, 1) - 1
    step = lesson.steps[index]
    given = progress.answers(lesson)
    st.progress(core.share_reached(index, n), text=T("where", i=index + 1, n=n))
    summary(T, lesson, given)
    if on_path is not None:
        paths.where(T, on_path, lesson_id)
    prose(step.text, lang)
    unanswered = step.question is not None and step.question.id not in given
    held_back = T("view_after_predict") if unanswered else None  # predict first, then look
    from app import step_views  # imported where a step is drawn: the navigation imports this module on every page

    drawn = step_views.show(step, f"step-fig-{index}", held_back=held_back)  # the page's figure, above the question
    answered = step.question is not None and not unanswered
    if not drawn and not answered:  # the view is not on this page: its links come first
        progress.step_links(T, step, f"step-{index}")
    # an answer judged offers the view itself, under "why" (once on the page: two rows of the same buttons confused)
    linked = step.question is not None and question.show(T, lesson, step, given)
    if (drawn or answered) and not linked:  # the page itself, to explore further, under the question
        progress.step_links(T, step, f"step-{index}")
    navigation(T, lesson, index)
    if on_path is not None and index == n - 1:
        paths.offer_next(T, on_path, lessons, lesson_id)
    progress.mirror_answers(lesson, given)
    ui.page_end()
