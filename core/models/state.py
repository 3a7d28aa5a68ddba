"""/models' link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with it
(core/state.py). The picker offers the learner's folders first (the operator's, then this visitor's own: the page
is about them), then the shipped models, whose contract reads the same way; a link can only name one of those, never
a path (a folder is added through the page's form, under the allowed roots: core/models/local.py)."""

from types import SimpleNamespace

from core.state import Choice, Flag, Int, State

SHIPPED = ("minilm", "smollm2", "moe", "encoder-decoder")
MAX_ESTIMATE_TOKENS = 32_768


def offered(own: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The picker's keys: the learner's folders `own`, then the shipped models."""
    return tuple(own) + SHIPPED


def registered(values) -> SimpleNamespace:
    """The context without a visitor's session (the lessons): the operator's folders, then the shipped models."""
    from . import registry

    return SimpleNamespace(models=offered(tuple(registry.folders())))


STATE = State(
    Choice("pick", lambda c: c.models[0], options=lambda c: c.models),
    Int("tokens", 512, 1, MAX_ESTIMATE_TOKENS),  # the text length of the memory estimate and the cache
    Flag("check", False),  # load a learner's folder and check it against eager attention
    context=registered,
)
