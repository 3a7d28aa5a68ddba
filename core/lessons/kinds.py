"""The kinds of lesson question and the answer the engine computes for one: below both the lesson loader
(core.lessons, which re-exports them) and the answer functions (core.lessons.answers), so that the answer functions
need nothing of the loader's."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("token", "choice", "number", "order")


@dataclass(frozen=True)
class Answer:
    kind: str
    correct: str | float | tuple[str, ...]
    options: tuple[str, ...]  # token/choice: what to pick from; order: the items (not in the right order)
    tolerance: float | None  # number: |response - correct| <= tolerance counts as right
    detail: dict = field(default_factory=dict)  # numbers the explanation may quote ({name} fields)
