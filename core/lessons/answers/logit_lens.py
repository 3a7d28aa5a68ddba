"""/logit-lens: the lens of the link's text on the link's model, as the page computes it (core.logit_lens)."""

from __future__ import annotations

from core import logit_lens as lens
from core.lessons.answers.base import number, register, word_position
from core.lessons.kinds import Answer
from core.state import Int, State, Word

PAGE = "logit-lens"
AT = State(Word("word", None))  # the position asked about: a word of the text or a position; default the last


def _lens(s, word):
    view = lens.logit_lens(s.model_object, s.text)
    return view, word_position(view.tokens, word, len(view.tokens) - 1)


@register("logit_lens.final", "choice", PAGE, lens.STATE, AT)
def logit_lens_final(params, s):
    """The model's own prediction after the word `word` (the last stage's top token), among its five most likely
    there (A-Z)."""
    view, pos = _lens(s, params.word)
    top = view.top_tokens[-1][pos]
    return Answer("choice", top[0], tuple(sorted(set(top))), None,
                  {"p": float(view.top_probs[-1, pos, 0]), "position": pos, "word": view.tokens[pos]})  # fmt: skip


@register("logit_lens.top_at", "choice", PAGE, lens.STATE, AT + State(Int("layer", None, -1)))
def logit_lens_top_at(params, s):
    """The lens's top token after layer `layer` (-1: the embeddings, before any layer) at the word `word`, among
    that stage's five most likely and the model's final prediction (A-Z)."""
    view, pos = _lens(s, params.word)
    if params.layer is None or params.layer > view.n_stages - 2:
        raise ValueError(f"layer must be -1 .. {view.n_stages - 2}")
    stage = params.layer + 1
    top, final = view.top_tokens[stage][pos], view.top_tokens[-1][pos][0]
    return Answer("choice", top[0], tuple(sorted({*top, final})), None,
                  {"p": float(view.top_probs[stage, pos, 0]), "final": final, "word": view.tokens[pos],
                   "layer": params.layer})  # fmt: skip


@register("logit_lens.first_layer", "number", PAGE, lens.STATE, AT)
def logit_lens_first_layer(params, s):
    """The layer after which the model's final prediction at `word` becomes the lens's top token and stays it (-1:
    already at the embeddings); ValueError where it never settles."""
    view, pos = _lens(s, params.word)
    stage = view.first_stage[pos]
    if stage is None:
        raise ValueError("the final prediction is not the top token at every stage from any layer on")
    final = view.top_tokens[-1][pos][0]
    return number(stage - 1, params, 2, final=final, word=view.tokens[pos], layers=view.n_stages - 1)


@register("logit_lens.finding", "choice", PAGE, lens.STATE)
def logit_lens_finding(params, s):
    """'late' when most positions get their final prediction as the top token only in the last few layers (the
    page's finding), else 'early'."""
    table = lens.lens_table(lens.logit_lens(s.model_object, s.text))
    return Answer("choice", table.finding.removeprefix("finding_"), ("early", "late"), None,
                  {"late_count": table.late, "n": table.n, "from_layer": table.from_layer})  # fmt: skip
