"""The GRU encoder-decoder translating: greedy output with its alignment (attention weights per written token),
teacher forcing on a reference, the held-out scores (exact match and chrF, as the Transformer's training report
computes them), and the alignment accuracy measured as for the Transformer's cross-attention heads
(core/encoder_decoder/alignment.py: the same hit rule, diagonal baseline, chance and intervals; the GRU has one
attention, reported as layer 0, head 0)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..encoder_decoder import alignment as al
from ..encoder_decoder import grammar
from . import model as rm


@dataclass(frozen=True)
class RNNTranslation:
    source_tokens: list[str]  # language tag first, </s> last
    output: list[str]  # written tokens without </s>
    attention: torch.Tensor  # (T, S): row t is the alignment used to write output token t (and </s> last)
    finished: bool  # wrote </s> within the length limit


def _sources(tokenizer, texts: list[str]) -> torch.Tensor:
    return rm.ed.encode(tokenizer, [grammar.Pair(t.split(), [], "", []) for t in texts])["input_ids"]


@torch.no_grad()
def translate_batch(model: rm.RNNSearch, tokenizer, texts: list[str]) -> list[RNNTranslation]:
    """Greedy translations of encoder inputs (language tag + words, as translate.source_text writes them)."""
    source = _sources(tokenizer, texts)
    tokens, weights = model.greedy(source, tokenizer.pad_token_id, tokenizer.eos_token_id)
    out = []
    for i in range(len(texts)):
        s = int((source[i] != tokenizer.pad_token_id).sum())
        ids = tokens[i].tolist()
        end = ids.index(tokenizer.eos_token_id) if tokenizer.eos_token_id in ids else len(ids)
        out.append(RNNTranslation(tokenizer.convert_ids_to_tokens(source[i, :s].tolist()),
                                  tokenizer.convert_ids_to_tokens(ids[:end]), weights[i, : end + 1, :s],
                                  end < len(ids)))  # fmt: skip
    return out


def greedy_outputs(model, tokenizer, pairs, batch_size: int = 500) -> list[str]:
    out = []
    for i in range(0, len(pairs), batch_size):
        out += [
            " ".join(t.output)
            for t in translate_batch(model, tokenizer, [p.source_text for p in pairs[i : i + batch_size]])
        ]
    return out


def scores(hyps: list[str], pairs) -> dict:
    """Exact match (whole sentence, token for token) and chrF (sacrebleu), per language and overall: the
    Transformer's report (scripts/train_encoder_decoder.py) computes the same two numbers the same way."""
    import sacrebleu

    out = {}
    for language in (None, *grammar.LANGUAGES):
        idx = [i for i, p in enumerate(pairs) if language in (None, p.language)]
        refs = [pairs[i].target_text for i in idx]
        hyp = [hyps[i] for i in idx]
        out[language or "all"] = {
            "pairs": len(idx),
            "exact_match": sum(h == r for h, r in zip(hyp, refs)) / len(idx),
            "chrf": sacrebleu.corpus_chrf(hyp, [refs]).score,
        }
    return out


@torch.no_grad()
def teacher_forced_attention(model, tokenizer, pairs) -> list[torch.Tensor]:
    """(T + 1, S) attention of each pair with its reference fed in: row t is the step that outputs target t."""
    b = rm.batch(tokenizer, pairs)
    _, weights = model(b["source_ids"], b["decoder_ids"])
    out = []
    for i, p in enumerate(pairs):
        s = int((b["source_ids"][i] != tokenizer.pad_token_id).sum())
        out.append(weights[i, : len(p.target) + 1, :s])
    return out


def measure_alignment(model, tokenizer, pairs) -> al.AlignmentReport:
    """al.measure's rule on the GRU's one attention: for every aligned target word, a hit when the step that
    outputs it puts its largest weight on the aligned source word; the same diagonal baseline and chance, and the
    same score on the off-diagonal words (those whose aligned source word is not the diagonal guess)."""
    attentions = (att[:, None, None] for att in teacher_forced_attention(model, tokenizer, pairs))  # (T, 1, 1, S)
    return al.score(pairs, attentions, (1, 1))
