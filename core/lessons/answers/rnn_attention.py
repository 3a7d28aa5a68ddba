"""/rnn-attention: the shipped GRU encoder-decoder with additive attention translating the link's sentence (its
alignment, the numbers attention lets the decoder read), and the cost part's path length and cost per layer."""

from __future__ import annotations

import functools

from core.lessons.answers.base import argmax_label, mixed, number, register, word_position
from core.lessons.kinds import Answer
from core.pooling import indexed_labels
from core.rnn_attention import compare as cmp
from core.rnn_attention.state import STATE
from core.state import Choice, Int, State, Text

PAGE = "rnn-attention"
KINDS = (cmp.RECURRENT, cmp.ATTENTION)


@functools.lru_cache(maxsize=1)
def _model():
    from core.rnn_attention import model as rm

    if rm.status():
        raise ValueError(rm.status())
    return rm.load()


@functools.lru_cache(maxsize=8)
def _translation(text: str, language: str):
    """The GRU's greedy translation with its alignment, as the page's translate part computes it
    (core.rnn_attention.view.sentence_view runs the same translate_batch on the same encoder input)."""
    from core.encoder_decoder.translate import source_text
    from core.rnn_attention.translate import translate_batch

    model, tokenizer = _model()
    return translate_batch(model, tokenizer, [source_text(text, language)])[0]


@register("rnn_attention.aligned_source", "token", PAGE, STATE, State(Text("word", "")))
def rnn_attention_aligned_source(params, s):
    """The source token the GRU's attention weighs most while writing the output word `word` (its first occurrence;
    default the first written word), for the page's sentence and target language."""
    t = _translation(s.text, s.target)
    row = word_position(t.output, params.word, 0)
    weights = t.attention[row]
    labels = indexed_labels(t.source_tokens)
    return Answer("token", argmax_label(weights, labels), tuple(labels), None,
                  {"word": t.output[row], "weight": float(weights.max()), "output": " ".join(t.output)})  # fmt: skip


@register("rnn_attention.encoder_numbers", "number", PAGE, STATE,
          State(Choice("what", "attended", options=("attended", "final"))))  # fmt: skip
def rnn_attention_encoder_numbers(params, s):
    """Numbers the decoder can read from the encoder while writing one word: "attended" with attention (every
    encoder state: S source tokens x 2H), "final" without it (the forward encoder's last state: H, whatever the
    sentence's length)."""
    shape = _model()[0].shape
    states = len(_translation(s.text, s.target).source_tokens)
    value = shape.attended_numbers(states) if params.what == "attended" else shape.hidden
    return number(value, params, 0, states=states, width=shape.state_width, final=shape.hidden)


@register(
    "rnn_attention.path_length",
    "number",
    PAGE,
    STATE,
    State(Choice("kind", cmp.RECURRENT, options=KINDS)),
    model_pass=False,
)
def rnn_attention_path_length(params, s):
    """Layer applications between the first and the last of the page's n positions in one `kind` layer."""
    return number(cmp.path_length(s.n, params.kind), params, 0, n=s.n, kind=params.kind)


@register("rnn_attention.cheaper", "choice", PAGE, STATE, State(Int("to_n", None, 2, 2048)), model_pass=False)
def rnn_attention_cheaper(params, s):
    """A prediction: with the length slider moved to `to_n` (default: the page's n) at the page's d, which layer
    needs fewer operations: 'recurrent', 'attention' or 'equal'?"""
    n = params.to_n or s.n
    view = cmp.cost_view(n, s.d)
    return Answer("choice", view.cheaper, mixed((*KINDS, "equal")), None, {"n": n, "d": s.d})
