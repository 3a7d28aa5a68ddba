"""The trained encoder-decoder translating, with every attention kept: the encoder's self-attention once, then the
decoder writing one token at a time until </s> (free generation), or all positions at once from the reference
under the look-ahead mask (teacher forcing).

Where each kind of attention sits (L layers, H heads, S source tokens, T decoder positions):
    encoder self-attention  (L, H, S, S)   every source token sees every source token (padding aside)
    decoder self-attention  (L, H, T, T)   position t sees decoder inputs 0..t only (look-ahead mask)
    cross-attention         (L, H, T, S)   Q from the decoder (its self-attention sublayer's output),
                                           K and V from the encoder stack's OUTPUT (the same for every layer)
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from . import model as ed
from .model import Seq2Seq, WordTokenizer

TOP_K = 5


@dataclass(frozen=True)
class Step:
    """One decoder position: what it read, what it attended to, what it predicted."""

    input_token: str  # the decoder input at this position (the start token, then the tokens written so far)
    self_attention: torch.Tensor  # (L, H, t + 1) over decoder inputs 0..t
    cross_attention: torch.Tensor  # (L, H, S) over the source tokens
    top: list[tuple[str, float]]  # the TOP_K most likely next tokens with their probabilities
    chosen: str  # the token written (free generation) or the reference token (teacher forcing)
    chosen_probability: float  # the model's probability of `chosen`


@dataclass(frozen=True)
class Translation:
    source_tokens: list[str]  # S tokens as the encoder reads them (language tag first, </s> last)
    unknown_words: list[str]  # source words outside the vocabulary (read as <unk>)
    encoder_attention: torch.Tensor  # (L, H, S, S)
    steps: list[Step]
    output: list[str]  # the written tokens, without </s>
    teacher_forced: bool

    @property
    def finished(self) -> bool:
        """Did the decoder write </s> (rather than stop at the length limit)?"""
        return bool(self.steps) and self.steps[-1].chosen == "</s>"


def source_text(sentence: str, language: str) -> str:
    """The encoder's input for an English sentence: the language tag, lower-case words, the full stop split off."""
    from .grammar import LANGUAGE_TAGS

    words = sentence.lower().replace(".", " . ").split()
    return " ".join([LANGUAGE_TAGS[language]] + words)


def _encode_source(tokenizer: WordTokenizer, text: str):
    ids = tokenizer.batch([text], max_length=ed.MAX_LENGTH)[0][0]
    ids = torch.cat([ids, torch.tensor([tokenizer.eos_token_id])])[None]  # (1, S) ending in </s>
    return ids, tokenizer.convert_ids_to_tokens(ids[0])


def _unknown(tokenizer: WordTokenizer, text: str) -> list[str]:
    vocab = tokenizer.get_vocab()
    return [w for w in text.split() if w not in vocab]


def _top(tokenizer: WordTokenizer, probs: torch.Tensor) -> list[tuple[str, float]]:
    values, ids = probs.topk(TOP_K)
    return list(zip(tokenizer.convert_ids_to_tokens(ids.tolist()), values.tolist()))


@torch.no_grad()
def translate(model: Seq2Seq, tokenizer: WordTokenizer, text: str, reference: list[str] | None = None) -> Translation:
    """Free generation (greedy, until </s> or MAX_LENGTH tokens) when reference is None; teacher forcing (the
    reference tokens fed in at once, under the look-ahead mask) otherwise. `text` is the encoder input
    (see source_text)."""
    source_ids, source_tokens = _encode_source(tokenizer, text)
    encoded = model.encode(source_ids)  # encoder self-attention (L, H, S, S)
    start = model.config.decoder_start_token_id
    steps: list[Step] = []
    if reference is not None:
        targets = tokenizer.convert_tokens_to_ids(list(reference)) + [tokenizer.eos_token_id]
        decoder_ids = torch.tensor([[start] + targets[:-1]])
        out = model.decode(encoded, decoder_ids)  # probs (T, V), self (L, H, T, T), cross (L, H, T, S)
        probs, self_att, cross_att = out.probs, out.self_attention, out.cross_attention
        inputs = tokenizer.convert_ids_to_tokens(decoder_ids[0])
        for t, target in enumerate(targets):
            steps.append(Step(inputs[t], self_att[:, :, t, : t + 1], cross_att[:, :, t], _top(tokenizer, probs[t]),
                              tokenizer.convert_ids_to_tokens(target), float(probs[t, target])))  # fmt: skip
        output = list(reference)
    else:
        steps, output = _generate(model, tokenizer, encoded)
    return Translation(source_tokens, _unknown(tokenizer, text), encoded.attention, steps, output,
                       reference is not None)  # fmt: skip


@torch.no_grad()
def _generate(model: Seq2Seq, tokenizer: WordTokenizer, encoded) -> tuple[list[Step], list[str]]:
    """Greedy free generation with the KV cache: each step feeds only the newest token; the cache holds the
    decoder's earlier keys and values (and cross-attention's K, V of the encoder output, computed once). Each step's
    attentions are then exactly the newest query's row: self-attention (L, H, t + 1), cross-attention (L, H, S)."""
    steps: list[Step] = []
    output: list[str] = []
    for token, out in model.greedy(encoded, ed.MAX_LENGTH, eos=tokenizer.eos_token_id):  # start: the config's
        probs = out.probs  # (V,)
        best = int(probs.argmax())
        chosen = tokenizer.convert_ids_to_tokens(best)
        steps.append(Step(tokenizer.convert_ids_to_tokens(token), out.self_attention, out.cross_attention,
                          _top(tokenizer, probs), chosen, float(probs[best])))  # fmt: skip
        if best != tokenizer.eos_token_id:
            output.append(chosen)
    return steps, output


def greedy_translate(model: Seq2Seq, tokenizer: WordTokenizer, text: str) -> list[str]:
    """Just the greedy output tokens (what the training report scores)."""
    return translate(model, tokenizer, text).output
