"""Study paths on /lessons: a link from the landing page carries ?path=<id> beside ?lesson=<id>, so the link says
where a learner is on the path (lessons/paths.toml, core/lessons/paths.py). The page says which lesson of the path
is on screen and, at a lesson's last step, offers the path's next lesson."""

from __future__ import annotations

import streamlit as st

from app import ui
from core import lessons as core
from core.lessons import paths as study

from . import progress
from .text import label, plain

PARAM = "path"


@st.cache_resource(show_spinner=False, max_entries=2)
def _load(folder: str, signature: tuple) -> dict[str, study.StudyPath]:
    return study.load_paths(progress.load_lessons(), folder)


def load_paths() -> dict[str, study.StudyPath]:
    """Every study path, read again when a file of the lessons folder changes. Raises core.LessonError."""
    folder = core.DEFAULT_FOLDER
    return _load(str(folder), progress._signature(folder))


def current(lesson_id: str) -> study.StudyPath | None:
    """The path the link names, while the lesson on screen is on it. An unknown path is reported as an ignored
    parameter; choosing a lesson off the path leaves the path (the parameter goes)."""
    raw = st.query_params.get(PARAM)
    if raw is None:
        return None
    try:
        on = load_paths().get(raw)
    except core.LessonError:
        on = None
    if on is None:
        st.session_state["_ui_bad"].append(PARAM)
        return None
    if on.position(lesson_id) is None:
        del st.query_params[PARAM]
        return None
    st.session_state["_ui_params"].add(PARAM)
    return on


def where(T, on: study.StudyPath, lesson_id: str) -> None:
    title = plain(label(on.title, ui.lang()))
    st.caption(T("path_where", path=title, i=on.position(lesson_id) + 1, n=len(on.lessons)))


def _go(lesson_id: str) -> None:
    st.session_state["lesson"] = lesson_id
    st.session_state["lstep"] = 1


def offer_next(T, on: study.StudyPath, lessons: dict[str, core.Lesson], lesson_id: str) -> None:
    """At a lesson's last step: the path's next lesson (the path stays in the link), or the path's end."""
    following = on.after(lesson_id)
    if following is None:
        st.success(T("path_done", path=plain(label(on.title, ui.lang()))))
        return
    title = plain(label(lessons[following].title, ui.lang()))  # a button's label is markdown too
    st.button(T("path_next", title=title), key="path-next", on_click=_go, args=(following,), type="primary",
              icon=":material/skip_next:")  # fmt: skip
