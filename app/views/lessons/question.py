"""One question of a lesson: the widget for its kind, the hint ladder, then right or wrong, the right answer, the
explanation and the view that shows why. Learner-visible data (tokens, answers) is shown as text, never markup."""

from __future__ import annotations

import streamlit as st

from app import ui
from core import lessons as core

from . import progress
from .text import answers_figure, choice_label, in_words, plain, prose

MAX_RADIO = 8  # more options than this: a select box


def _picked(T, answer: core.Answer, key: str):
    """The picker of a choice, a token or an order (outside the form: a learner's half-given answer survives a switch
    of language, ui.pick); the raw response (None when nothing is picked)."""
    if answer.kind in ("token", "choice"):
        if len(answer.options) <= MAX_RADIO:  # a radio's labels are markdown: a token is shown escaped
            return ui.pick(T(f"pick_{answer.kind}"), answer.options, index=None, key=key, radio=True,
                           format_func=lambda o: plain(choice_label(T, o)))  # fmt: skip
        return ui.pick(
            T(f"pick_{answer.kind}"), answer.options, index=None, key=key, format_func=lambda o: choice_label(T, o)
        )  # plain text
    chosen = ui.pick_many(T("put_in_order"), answer.options, key=key, format_func=lambda o: choice_label(T, o))
    return list(chosen) or None


def _shown(T, answer: core.Answer, response) -> str:
    """A parsed response as the learner reads it: as a store keeps it (core.format_response), in words (in_words)."""
    return in_words(T, answer.kind, core.format_response(answer, response))


def _hints(T, lesson: core.Lesson, question: core.Question, answer: core.Answer) -> None:
    shown = progress.hints_shown(lesson, question)
    for i, hint in enumerate(question.hints[:shown]):
        st.caption(T(f"hint_{min(i, 2)}"))
        prose(hint, ui.lang(), answer)
    if shown < len(question.hints):
        st.button(T(f"ask_hint_{min(shown, 2)}"), key=f"hint-{lesson.id}-{question.id}", icon=":material/lightbulb:",
                  on_click=progress.more_hint, args=(lesson.id, question.id))  # fmt: skip


def _feedback(T, lesson, step, answer: core.Answer, raw: str) -> bool:
    """The answer judged, and the step's view to see why; False where the answer could not be read (no view
    offered)."""
    question = step.question
    try:
        mine = core.parse_response(answer, raw)
    except ValueError:  # an answer from an old link that no longer fits (the lesson file changed)
        st.warning(T("stale_answer"))
        progress.forget(lesson.id, question.id)
        return False
    right = core.is_correct(answer, mine)
    (st.success if right else st.error)(T("right" if right else "wrong"), icon=":material/check:" if right else None)
    c1, c2 = st.columns(2)
    with c1:
        st.caption(T("your_answer"))
        st.code(_shown(T, answer, mine), language=None)
    with c2:
        st.caption(T("right_answer") if answer.tolerance in (None, 0) else T("right_within", tol=answer.tolerance))
        st.code(_shown(T, answer, answer.correct), language=None)
    prose(question.explanation, ui.lang(), answer)
    view = core.distribution(answer, [mine], reveal=True, mine=mine)
    if view.labels:
        ui.show_figure(answers_figure(view), f"lesson-{lesson.id}-{question.id}",
                       key=f"fig-{lesson.id}-{question.id}")  # fmt: skip
    st.markdown(T("why_view"))
    progress.step_links(T, step, f"why-{question.id}")
    st.button(T("again"), key=f"again-{lesson.id}-{question.id}", on_click=progress.forget,
              args=(lesson.id, question.id))  # fmt: skip
    return True


def show(T, lesson: core.Lesson, step: core.Step, given: dict[str, str]) -> bool:
    """The question, or its answer judged; True where the step's view links were drawn with the answer (the page
    draws them once)."""
    question = step.question
    st.header(T("question"))
    prose(question.prompt, ui.lang())
    try:
        answer = progress.right_answer(question, step.state)
    except progress.NO_ANSWER as err:
        why = progress.why_no_answer(err)
        st.warning(T("no_answer") if why else T("no_answer_hosted"))
        if why:
            st.code(why, language=None)
        return False
    if question.id in given:
        return _feedback(T, lesson, step, answer, given[question.id])
    key = f"input-{lesson.id}-{question.id}"
    raw = None if answer.kind == "number" else _picked(T, answer, key)
    with st.form(f"form-{lesson.id}-{question.id}", border=answer.kind == "number"):
        if answer.kind == "number":
            raw = st.text_input(T("type_number"), key=key, max_chars=64) or None
        sent = st.form_submit_button(T("check"), icon=":material/task_alt:")
    if sent:
        if raw is None:
            st.warning(T("empty_answer"))
        else:
            try:
                response = core.parse_response(answer, raw)
            except ValueError:
                st.warning(T(f"bad_{answer.kind}"))
            else:
                given[question.id] = core.format_response(answer, response)
                st.rerun()
    _hints(T, lesson, question, answer)
    return False
