"""The declaration of a topic's step view: VIEWS maps a page's URL to a function (values, step) -> [Drawn]."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core import lessons as core_lessons
from core.state import Values


@dataclass(frozen=True)
class Drawn:
    """One figure as ui.show_figure takes it (the numbers and labels feed its text alternative)."""

    fig: Any
    name: str
    data: Any = None
    row_labels: Any = None
    col_labels: Any = None


StepView = Callable[[Values, core_lessons.Step], list[Drawn]]
VIEWS: dict[str, StepView] = {}
# Pages whose step view runs a model through the page's own helpers (app/models.py: the process's one copy of the
# model, the page's cache, the heavy-work queue with its place and wait): drawn on every run from those helpers'
# kept results, never inside the step views' own cache (which would keep, and replay, the queue's messages).
MODEL_PASSES: set[str] = set()
# A page whose state's context would itself run the model (its bounds need the run): how its step reads the state,
# so that run goes through the page's queue first.
READERS: dict[str, Callable[[Mapping[str, str]], Values]] = {}


def step_view(page: str, model_pass: bool = False, read: Callable[[Mapping[str, str]], Values] | None = None):
    """Declare the step view of `page` (its URL); `model_pass`: it runs the page's model (MODEL_PASSES); `read`:
    how its step's state is read (READERS), when not by the page's declaration alone."""

    def add(fn: StepView) -> StepView:
        VIEWS[page] = fn
        if model_pass:
            MODEL_PASSES.add(page)
        if read is not None:
            READERS[page] = read
        return fn

    return add


CHEAP_MODELS = (
    "minilm",
)  # loaded in seconds and kept: a step on another model (or a learner's folder) keeps the buttons


def asks(step: core_lessons.Step) -> tuple[str, Mapping]:
    """The answer function and parameters of a step's question (("", {}) without one)."""
    q = step.question
    return (q.answer_fn, q.params) if q is not None else ("", {})
