"""A learner's own encoder-decoder on /encoder-decoder: any folder that transformers' AutoModelForSeq2SeqLM loads
(Marian, BART, T5, ...), with its own tokenizer, through core/models/seq2seq.py's contract
(core/models/local.load_seq2seq). The source text goes through the folder's tokenizer with its own special tokens;
the decoder starts from the config's start token and writes greedily, one step at a time on the KV cache, until its
end-of-sequence token or MAX_STEPS; every step keeps its probabilities, masked self-attention and cross-attention.

The run is a Translation, as the shipped model's free generation (core/encoder_decoder/translate.py), so `view`
gives the same StepView and the page draws it with the same figures: cross-attention with the decoder's queries as
rows ("input → output token") and the source tokens as columns, the decoder's masked self-attention, the encoder's
self-attention and the next-token candidates.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .translate import TOP_K, Step, Translation
from .view import StepView, translation_view

MAX_SOURCE_TOKENS = 64  # what the encoder reads of a text (special tokens included), at most
MAX_STEPS = 32  # decoder steps at most (the page's step slider runs 0..MAX_STEPS)


@dataclass(frozen=True)
class OwnRun:
    """One source text through a learner's encoder-decoder, greedy."""

    text: str
    truncated: bool  # the text had more tokens than the encoder reads here (source_limit)
    source_limit: int
    translation: Translation  # free generation: source tokens, encoder self-attention, one Step per decoder step
    finished: bool  # the decoder wrote its end-of-sequence token (rather than stop at MAX_STEPS)

    @property
    def output(self) -> list[str]:
        """The tokens written, the end-of-sequence token left out."""
        return self.translation.output


def source_limit(config, max_source: int = MAX_SOURCE_TOKENS) -> int:
    """Source tokens the encoder reads: MAX_SOURCE_TOKENS, or fewer when the model's position table is shorter."""
    return max_source if config.max_positions is None else min(max_source, int(config.max_positions))


def step_limit(config, max_steps: int = MAX_STEPS) -> int:
    """Decoder steps: MAX_STEPS, or fewer when the model's position table is shorter."""
    return max_steps if config.max_positions is None else min(max_steps, int(config.max_positions))


def _top(tokenizer, probs: torch.Tensor) -> list[tuple[str, float]]:
    values, ids = probs.topk(min(TOP_K, probs.shape[-1]))
    return list(zip(tokenizer.convert_ids_to_tokens(ids.tolist()), values.tolist()))


@torch.no_grad()
def run_text(model, tokenizer, text: str, max_steps: int = MAX_STEPS) -> OwnRun:
    """Greedy generation of `text` by a learner's encoder-decoder (model: core.models.seq2seq.Seq2Seq, tokenizer:
    its TextTokenizer), every attention kept."""
    limit = source_limit(model.config)
    source_ids, source_tokens, cut = tokenizer.source(text, limit)  # (1, S) with the tokenizer's special tokens
    encoded = model.encode(source_ids)  # encoder self-attention (L, H, S, S)
    eos = model.config.eos_token_id
    steps, output = [], []
    for token, out in model.greedy(encoded, step_limit(model.config, max_steps), eos=eos):
        best = int(out.probs.argmax())
        chosen = tokenizer.convert_ids_to_tokens(best)
        steps.append(Step(tokenizer.convert_ids_to_tokens(token), out.self_attention, out.cross_attention,
                          _top(tokenizer, out.probs), chosen, float(out.probs[best])))  # fmt: skip
        if best != eos:
            output.append(chosen)
    finished = bool(steps) and len(output) < len(steps)
    translation = Translation(list(source_tokens), [], encoded.attention, steps, output, teacher_forced=False)
    return OwnRun(text, cut, limit, translation, finished)


def view(run: OwnRun, step: int, layer: int, head: int) -> StepView:
    """Layer `layer`, head `head` of the run up to decoder step `step` (each clipped to what exists)."""
    return translation_view(run.translation, "free", step, layer, head, run.translation.source_tokens, [])
