"""Traces of random queries and keys, for testing what is built on the model contract without loading a model; and a
small random-weight encoder-decoder (seeded) of the shipped model's architecture; a hand-built KV-cache Generation."""

import functools

import numpy as np
import torch

from core.kv_cache.generation import Generation, GenerationStep
from core.models.base import Batch, Trace


def fake_trace(
    lengths=(7, 5), n_layers=3, n_heads=4, n_kv_heads=2, d=8, causal=False, special_at=(0,), seed=0, tokens=None
) -> Trace:
    """A Trace with random q/k: right-padded batch, GQA, specials at `special_at` (and the last real token)."""
    g = torch.Generator().manual_seed(seed)
    B, n = len(lengths), max(lengths)
    mask = torch.tensor([[1] * m + [0] * (n - m) for m in lengths])
    special = mask == 0
    for b, m in enumerate(lengths):
        for s in special_at:
            special[b, s] = True
        special[b, m - 1] = True
    toks = tokens or [[f"t{j}" if mask[b, j] else "[PAD]" for j in range(n)] for b in range(B)]
    batch = Batch(torch.zeros(B, n, dtype=torch.long), mask, toks, special, [False] * B, ["x"] * B)
    q = [torch.randn(B, n_heads, n, d, generator=g) * 1.5 for _ in range(n_layers)]
    k = [torch.randn(B, n_kv_heads, n, d, generator=g) * 1.5 for _ in range(n_layers)]
    return Trace(batch=batch, queries=q, keys=k, scale=d**-0.5, is_causal=causal)


@functools.cache
def random_marian():
    """(model, tokenizer) as the seq2seq contract gives them (core/models/seq2seq.py): core/encoder_decoder's
    architecture at d_model 32, 2 layers, 4 heads, random weights from seed 0, eager attention (the weights are
    read)."""
    from core.encoder_decoder import model as ed

    torch.manual_seed(0)
    return ed.build(ed.Shape(**RANDOM_MARIAN_SHAPE)).eval(), ed.make_tokenizer()


RANDOM_MARIAN_SHAPE = dict(d_model=32, layers=2, heads=4, ffn=64)


def random_marian_hf():
    """random_marian's model as transformers' own MarianMTModel (the same config and seed, so the same weights), for
    tests that check the contract (core/models/seq2seq.py) against transformers' modules."""
    from transformers import MarianMTModel

    from core.encoder_decoder import grammar
    from core.encoder_decoder import model as ed
    from core.models.seq2seq import marian_config

    torch.manual_seed(0)
    config = marian_config(grammar.vocabulary(), ed.Shape(**RANDOM_MARIAN_SHAPE), ed.MAX_LENGTH)
    config._attn_implementation = "eager"
    return MarianMTModel(config).eval()


KV_TOKENS = ["A", " b", " c", " d", " e", " f", " g"]  # 4 prompt tokens, then 3 generated


def fake_generation_step(position: int, heads: int = 2) -> GenerationStep:
    """One generated token: uniform attention over the position + 1 keys, the two eviction policies' outcomes."""
    w = np.full((1, heads, position + 1), 1.0 / (position + 1), dtype=np.float16)
    outcome = {"kept": 3, "evicted": position - 2, "kl": 0.25, "top_ids": [1], "top_tokens": [" x"], "top_probs": [0.5]}
    return GenerationStep(
        position=position, fed_id=position, chosen_id=position + 1, attention=w, top_ids=[1], top_tokens=[" y"],
        top_probs=[0.75], cache_bytes=2 * 1 * 1 * 4 * 4 * (position + 1), ms=12.4,
        policies={"window": dict(outcome), "sinks_window": dict(outcome, kept=4, evicted=position - 3)},
    )  # fmt: skip


def fake_generation(greedy: bool = True) -> Generation:
    """A hand-built KV-cache Generation: 4 prompt tokens, 3 generated, 1 layer, 2 heads over 1 key/value head."""
    return Generation(
        prompt_ids=[0, 1, 2, 3], tokens=KV_TOKENS, steps=[fake_generation_step(p) for p in (3, 4, 5)], layers=1, heads=2, kv_heads=1,
        head_dim=4, bytes_per_value=4, window=2, sinks=1, stopped_at_eos=False, greedy=greedy, eviction_ms=30.6,
    )  # fmt: skip
