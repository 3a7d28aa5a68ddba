"""Answer functions: (params, state) -> Answer, one registry of same-signature functions (like transformers'
ROPE_INIT_FUNCTIONS). `params` are the question's fixed parameters from the lesson file; `state` is the step's live
state (the page's query parameters as strings, as a shared link carries them). Each function reads the state the
way its page does (same keys, same defaults) and calls the core engine, so the answer follows the sentence, the
model, the layer and the sliders the room is looking at.

Kinds: "token" (pick a token: options are indexed labels '3 cat'), "choice" (pick among options), "number" (within
a tolerance), "order" (put items in order).
"""

from __future__ import annotations

from collections.abc import Callable

from core.lessons import Answer

AnswerFunction = Callable[[dict, dict[str, str]], Answer]
ANSWER_FUNCTIONS: dict[str, AnswerFunction] = {}


def register(name: str, kind: str):
    """Add an answer function to ANSWER_FUNCTIONS under `name`; `kind` is the kind of Answer it returns."""

    def add(fn):
        fn.kind = kind
        ANSWER_FUNCTIONS[name] = fn
        return fn

    return add
