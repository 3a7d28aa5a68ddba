"""/encoder-decoder, steps part: the shipped model translating the link's sentence, at its step, layer and head."""

from __future__ import annotations

import functools

from core.encoder_decoder import view as edv
from core.encoder_decoder.state import SHIPPED, STATE
from core.lessons.answers.base import argmax_label, number, register
from core.lessons.kinds import Answer
from core.pooling import indexed_labels

PAGE = "encoder-decoder"


@functools.lru_cache(maxsize=8)
def _run(text: str, language: str):
    from core.models import registry

    model, tokenizer = registry.shared(registry.ENCODER_DECODER)  # the same copy the /encoder-decoder page uses
    return edv.run_sentence(model, tokenizer, text, language)


def _step(s):
    if s.model != SHIPPED:
        raise ValueError("the lessons ask about the encoder-decoder trained in this repository")
    run = _run(s.text, s.target)
    return run, edv.step_view(run, s.mode, s.step, s.layer, s.head)


@register("encoder_decoder.cross_top", "token", PAGE, STATE)
def encoder_decoder_cross_top(params, s):
    """The source token the picked cross-attention head weighs most at the picked decoder step."""
    _, v = _step(s)
    labels = indexed_labels(v.source_tokens)
    w = v.cross[v.step]
    return Answer("token", argmax_label(w, labels), tuple(labels), None,
                  {"step": v.step, "weight": float(w.max()), "input": v.input_tokens[v.step]})  # fmt: skip


@register("encoder_decoder.next_token", "choice", PAGE, STATE)
def encoder_decoder_next_token(params, s):
    """The token the decoder rates most likely at the picked step, among its five most likely (sorted A-Z)."""
    _, v = _step(s)
    return Answer("choice", v.top[0][0], tuple(sorted({t for t, _ in v.top})), None,
                  {"p": float(v.top[0][1]), "step": v.step})  # fmt: skip


@register("encoder_decoder.probability", "number", PAGE, STATE)
def encoder_decoder_probability(params, s):
    """The probability of the most likely next token at the picked step."""
    _, v = _step(s)
    return number(float(v.top[0][1]), params, 0.05, token=v.top[0][0], step=v.step)


@register("encoder_decoder.source_length", "number", PAGE, STATE)
def encoder_decoder_source_length(params, s):
    """S: the tokens the encoder reads (language tag first, </s> last): each cross-attention row has S weights."""
    _, v = _step(s)
    return number(len(v.source_tokens), params, 0, steps=v.steps)


@register("encoder_decoder.agrees", "choice", PAGE, STATE)
def encoder_decoder_agrees(params, s):
    """Does free generation write the grammar's reference exactly? 'yes', 'no', or 'no_reference'."""
    run, _ = _step(s)
    correct = "no_reference" if run.agrees is None else ("yes" if run.agrees else "no")
    return Answer("choice", correct, ("yes", "no", "no_reference"), None, {"output": " ".join(run.free.output)})
