"""A lesson step's view: the figure a topic page draws at the step's declared state, drawn beside the step's question
(/lessons, and a learner's room panel) so the learner does not leave the question to see it.

One declaration per topic: VIEWS maps a page's URL to a function (values, step) -> [Drawn]. The values are the
step's state read by the topic's own declaration (core's STATE, the same reader the page's widgets and the
answer functions use); the function makes the page's core call for that part and hands the view to the page's viz
builder, nothing more. Which part of a many-part page a step shows follows from its state (the part it names,
the keys it sets) and its question (the matrix a question asks about). A page without an entry, or a view that
cannot be drawn here (a model not installed), leaves the step with its buttons that open the page."""

from __future__ import annotations

import streamlit as st

from app import ui
from core import lessons as core_lessons
from core.lessons.answers import PAGE_STATES

from . import model_pages, pages  # noqa: F401  (each declares its topics' views)
from .registry import MODEL_PASSES, READERS, VIEWS, Drawn, asks

# ---- drawing ------------------------------------------------------------------------------------------------


@st.cache_resource(show_spinner=False, max_entries=64)
def _drawn(page: str, state: tuple, fn: str, params: tuple, lang: str) -> list[Drawn]:
    """A step's figures, made once per process for a (page, state, question, language) and shared read-only by
    every session (no copy, which would rebuild each figure: a room's learners all draw them at each step)."""
    del lang  # in the key: the figures' words are the reader's
    drawn = _draw_step(_step(page, dict(state), fn, dict(params)))
    for d in drawn:
        ui.read_only(d.fig)  # what each draw of it reads, made once
    return drawn


def _step(page: str, state: dict, fn: str, params: dict) -> core_lessons.Step:
    return core_lessons.Step(page, state, {}, None if not fn else core_lessons.Question(
        "q", "choice", fn, params, {}, (), {}))  # fmt: skip


def _draw_step(step: core_lessons.Step) -> list[Drawn]:
    read = READERS.get(step.page, PAGE_STATES[step.page].read)
    return VIEWS[step.page](read(step.state), step)


def figures(step: core_lessons.Step) -> list[Drawn]:
    """The figures of a step's view ([] when its page has none here or it cannot be drawn). A view that runs a
    model does so through its page's helpers (their cache, the heavy-work queue), on every run."""
    if step.page not in VIEWS or step.page not in PAGE_STATES:
        return []
    fn, params = asks(step)
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items()))
    try:
        if step.page in MODEL_PASSES:
            return _draw_step(step)
        return _drawn(step.page, tuple(sorted(step.state.items())), fn, frozen, ui.lang())
    except (ValueError, LookupError, RuntimeError, OSError):  # a state the page would refuse, a missing model
        return []


def show(step: core_lessons.Step, key: str, side_by_side: bool = True, held_back: str | None = None) -> bool:
    """Draw a step's view (side by side on a wide screen; stacked in a narrow panel); False when there is none.
    Each figure keeps its text alternative; the numbers' table and CSV stay on the page itself (its buttons, under
    the question), so the figure and the question fit one screen. `held_back`: the label of a closed box the view
    waits in, for a question not answered yet (the learner predicts first, then opens it)."""
    drawn = figures(step)
    if not drawn:
        return False
    box = st.expander(held_back, expanded=False) if held_back else st.container()
    with box:
        _draw(drawn, key, side_by_side)
    return True


def _draw(drawn: list, key: str, side_by_side: bool) -> None:
    # side by side as the pages stand them (ui.beside: each figure fitted for its block, as on its page)
    places = ui.beside(len(drawn)) if side_by_side and len(drawn) > 1 else [st.container() for _ in drawn]
    for i, (place, d) in enumerate(zip(places, drawn)):
        with place:
            ui.show_figure(d.fig, d.name, data=d.data, row_labels=d.row_labels, col_labels=d.col_labels,
                           key=f"{key}-{i}", toolbar=side_by_side, tables=False)  # fmt: skip
