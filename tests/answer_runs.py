"""Lesson answers computed with the engine's model runs shared between questions of one step state.

Several questions of a lesson ask about the same run: the five /kv-cache questions read one SmolLM2 generation (new=1,
window=64), the five /logit-lens ones one lens of the same text. core.answer runs it again for each (a few seconds of
CPU each). Inside shared_runs(), those engine functions (as the answer functions call them) give the run they gave
for the same model and arguments before, in this test process. Only answers go through it: a page opened by a test
computes its own runs (app/models.computed, which calls the engine through other names), so a page's number is
still compared with an answer computed apart from it. The runs are deterministic functions of their arguments
(greedy decoding, or a seeded sample), so a shared one is the one a fresh call would give."""

from __future__ import annotations

import contextlib

import pytest

_RUNS: dict[tuple, object] = {}


def _once(name: str, function):
    def shared(model, *args, **kwargs):
        key = (name, id(model), tuple(map(_frozen, args)), tuple(sorted((k, _frozen(v)) for k, v in kwargs.items())))
        if key not in _RUNS:  # the model kept with its run: its id cannot pass to another object
            _RUNS[key] = model, function(model, *args, **kwargs)
        return _RUNS[key][1]

    return shared


def _frozen(value):
    return tuple(value) if isinstance(value, list) else value


@contextlib.contextmanager
def shared_runs():
    """While inside: the /kv-cache generation and the /logit-lens lens behind answers are computed once per model and
    arguments."""
    from core import logit_lens
    from core.kv_cache import state as kv_state

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kv_state, "generate", _once("kv_cache.generate", kv_state.generate))
        patch.setattr(logit_lens, "logit_lens", _once("logit_lens.logit_lens", logit_lens.logit_lens))
        yield
