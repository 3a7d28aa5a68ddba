"""The lessons a walk reads, where a learner is, and what they answered: in the session and in the URL (a link
brings a learner back to the same step with the same answers). Also the links that open a step's page."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import streamlit as st

from app import catalog, serving, ui
from core import lessons as core

ANSWERS = "lesson_answers"  # session: {lesson id: {question id: response as one string}}
HINTS = "lesson_hints"  # session: {(lesson id, question id): hints shown}
PREFIX = "a."  # URL: a.<question id>=<response> for the lesson on screen


def _signature(folder: Path) -> tuple:
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(folder.glob("*.toml")))


@st.cache_resource(show_spinner=False, max_entries=2)
def _load(folder: str, signature: tuple) -> dict[str, core.Lesson]:
    return core.load_lessons(folder, pages=catalog.BY_URL)


def load_lessons(folder: Path | None = None) -> dict[str, core.Lesson]:
    """Every lesson file, read again when one changes (a facilitator edits them while the app runs). Raises
    core.LessonError naming the file and line of a malformed one."""
    folder = folder or core.DEFAULT_FOLDER
    return _load(str(folder), _signature(folder))


def right_answer(question: core.Question, state: dict[str, str]) -> core.Answer:
    """core.answer for a step's question at a state, the one place the app computes one (/lessons, and a room's
    facilitator opening a question), computed once per process for a (question, state), the same for every learner.
    An answer that runs a model waits its turn on the heavy-work queue, as the pages' own model passes do (one slot
    per visitor); arithmetic on small tensors is computed here, not behind other visitors' model passes."""
    params = tuple(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in question.params.items()))
    key = ("lesson_answer", question.answer_fn, params, tuple(sorted(state.items())), question.kind)
    asked = core.Question("q", question.kind, question.answer_fn, dict(params), {}, (), {})
    if not core.needs_model_pass(asked, dict(state)):
        return _computed_here(key, asked, dict(state))
    return serving.heavy(key, lambda: core.answer(asked, dict(state)), "lesson_answer")


# What right_answer may raise when the engine cannot compute an answer here (a model not installed, a file it
# needs unreadable, a state it refuses)
NO_ANSWER = (ValueError, RuntimeError, OSError, KeyError)


def why_no_answer(err: Exception) -> str | None:
    """The engine's reason for an answer it could not compute, for the page to show under its sentence on a laptop
    run (what to install, which file); None on a hosted server, where it goes to the server's log instead: an
    OSError's words name the server's files, and the reason is the operator's to act on, not the visitor's."""
    if not serving.hosted():
        return str(err)[:500]
    serving.LOG.warning("a lesson answer could not be computed: %s", serving.exception_words(err))
    return None


@st.cache_resource(show_spinner=False, max_entries=128)
def _computed_here(key: tuple, _asked: core.Question, _state: dict[str, str]) -> core.Answer:
    """An answer without a model pass, kept per `key` (which names the question and state) as the queue keeps the
    others."""
    return core.answer(_asked, _state)


def answers(lesson: core.Lesson) -> dict[str, str]:
    """This lesson's answers so far (a dict the page updates), taken from the link on the first visit."""
    store = st.session_state.setdefault(ANSWERS, {})
    if lesson.id not in store:
        store[lesson.id] = {
            q.id: st.query_params[PREFIX + q.id][: core.MAX_RESPONSE_CHARS]
            for q in lesson.questions
            if PREFIX + q.id in st.query_params
        }
    return store[lesson.id]


def mirror_answers(lesson: core.Lesson, given: dict[str, str]) -> None:
    """Put the answers in the URL (and keep ui.page_end from dropping them)."""
    for q in lesson.questions:
        name = PREFIX + q.id
        st.session_state["_ui_params"].add(name)
        if q.id in given and len(given[q.id]) <= ui.MAX_LINK_TEXT_CHARS:
            if st.query_params.get(name) != given[q.id]:
                st.query_params[name] = given[q.id]
        elif name in st.query_params:
            del st.query_params[name]


def hints_shown(lesson: core.Lesson, question: core.Question) -> int:
    return st.session_state.setdefault(HINTS, {}).get((lesson.id, question.id), 0)


def more_hint(lesson_id: str, question_id: str) -> None:
    hints = st.session_state.setdefault(HINTS, {})
    hints[(lesson_id, question_id)] = hints.get((lesson_id, question_id), 0) + 1


def forget(lesson_id: str, question_id: str) -> None:
    """Try again: drop the answer (the hints stay shown)."""
    st.session_state.get(ANSWERS, {}).get(lesson_id, {}).pop(question_id, None)


def step_url(step: core.Step) -> str:
    """A relative link to the step's page with its state and the current language: a new tab is a new session,
    so the page reads every parameter from it."""
    return f"{step.page}?{urlencode({**step.state, 'lang': ui.lang()})}"


def open_here(step: core.Step) -> None:
    """Go to the step's page in this tab. Widgets keep their values in the session, and a page reads the URL only
    for keys the session does not have yet: forget the step's keys first so its state applies."""
    for key in step.state:
        st.session_state.pop(key, None)
        st.session_state.pop(f"_ui_shape_{key}", None)
    st.switch_page(catalog.streamlit_page(catalog.BY_URL[step.page]), query_params=step.state)


def step_links(T, step: core.Step, key: str) -> None:
    """The two ways to open a step's view: here, or in a new tab (a projector, a second window)."""
    title = ui.t(f"nav.{catalog.BY_URL[step.page].topic}", "title")
    st.caption(T("view_caption", page=title))
    c1, c2 = st.columns(2)
    with c1:
        if st.button(T("open_here"), key=f"here-{key}", icon=":material/open_in_browser:"):
            open_here(step)
    with c2:
        st.link_button(T("open_tab"), step_url(step), icon=":material/open_in_new:")
