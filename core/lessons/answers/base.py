"""The answer functions' registry and the helpers every topic's answers use: below the topic modules
(core/lessons/answers/<topic>.py import from here, the package imports them), so that they register without
importing the package that imports them."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np

from core.lessons.kinds import Answer
from core.state import Float, State, Values

AnswerFunction = Callable[[Values, Values], Answer]
ANSWER_FUNCTIONS: dict[str, AnswerFunction] = {}
PAGE_STATES: dict[str, State] = {}  # page URL -> the state its link carries
TOLERANCES = State(Float("tolerance", None, 0), Float("rel_tolerance", None, 0))  # any number question takes them


def register(name: str, kind: str, page: str, state: State, params: State | None = None, *,
             model_pass: bool | Callable[[Values], bool] = True):  # fmt: skip
    """Add an answer function to ANSWER_FUNCTIONS under `name`: it gives a `kind` answer about `page`, whose link
    carries `state`; `params` declares the question's fixed parameters (number questions also take TOLERANCES).
    `model_pass`: whether computing it runs a model (a forward, a generation, a model's weights loaded), so the app
    computes it on its heavy-work queue; False for arithmetic on small tensors and committed results, computed where
    asked; a function of the step's read state where the state decides (random q and k, or a model's)."""
    params = params or State()
    if kind == "number":
        params = params + TOLERANCES

    def add(fn):
        fn.kind, fn.page, fn.state, fn.params, fn.model_pass = kind, page, state, params, model_pass
        known = PAGE_STATES.setdefault(page, state)
        if known is not state:
            raise ValueError(f"{name}: page {page} has another state declaration")
        ANSWER_FUNCTIONS[name] = fn
        return fn

    return add


def compute(name: str, params: dict, state: dict[str, str]) -> Answer:
    """The answer of function `name` for a question's params and a step's state (a link's parameters)."""
    fn = ANSWER_FUNCTIONS[name]
    return fn(fn.params.read(params), fn.state.read(state))


def needs_model_pass(name: str, state: dict[str, str]) -> bool:
    """Whether function `name` runs a model for a step's state (its declaration in register)."""
    fn = ANSWER_FUNCTIONS[name]
    return bool(fn.model_pass(fn.state.read(state)) if callable(fn.model_pass) else fn.model_pass)


# ---- helpers every topic uses ---------------------------------------------------------------------------------


def number(value: float, params: Values, tolerance: float, **detail) -> Answer:
    tol = params.tolerance
    if tol is None and params.rel_tolerance is not None:
        tol = abs(value) * params.rel_tolerance
    return Answer("number", float(value), (), float(tolerance if tol is None else tol), {"value": value, **detail})


def mixed(items) -> tuple[str, ...]:
    """Items in a fixed order that does not give an order question away (sorted by a hash of the text)."""
    return tuple(sorted(items, key=lambda s: hashlib.md5(str(s).encode()).hexdigest()))


def argmax_label(weights, labels: list[str]) -> str:
    return labels[int(np.argmax(np.asarray(weights)))]


def word_position(tokens: list[str], word, default: int) -> int:
    """Position of the first token that reads `word` (wordpiece marks ignored), else `default`."""
    if isinstance(word, int) and not isinstance(word, bool):
        return word if 0 <= word < len(tokens) else default
    if isinstance(word, str) and word:
        want = word.lower().strip()
        for i, t in enumerate(tokens):
            if str(t).lower().replace("##", "").replace("Ġ", "").replace("▁", "").strip() == want:
                return i
    return default


def pair_index(pair, n_pairs: int) -> int:
    """A pair named by its index, or "middle" / "last"."""
    if pair == "last":
        return n_pairs - 1
    if pair == "middle":
        return n_pairs // 2
    if not isinstance(pair, int) or not 0 <= pair < n_pairs:
        raise ValueError(f"pair {pair!r} is not one of 0 .. {n_pairs - 1}, 'middle' or 'last'")
    return pair


def model(key: str):
    """The process's one copy of the model, the same object the pages use (core.models.registry.shared)."""
    from core.models import registry

    return registry.shared(key)
