"""The logit lens (nostalgebraist 2020): read the residual stream after each layer as if it were the last.

A decoder's output is logits = W_U · norm(h_L), with h_L the residual stream after the last layer, norm the final
RMSNorm and W_U the unembedding (SmolLM2: tied to the token embedding). The lens applies the same two steps to
the stream after every layer l = 0 .. L (stage 0 = the token embeddings, before any layer):

    lens_l = W_U · norm(h_l)        (n, V)

so stage L is exactly the model's own logits. The streams are taken with forward hooks on the embedding and
on each decoder layer (transformers' hidden_states would hand back the last one already normed).

Per position we keep the top-k tokens of every stage, the probability of the model's final prediction at every
stage and whether it is the top token there, and the first stage from which the top token is the final prediction (and stays it).
Never the (L + 1) x n x V logits: one stage at a time.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

import torch

# The hooks sit on the shared model: they record only the pass of the context that registered them (other
# sessions' threads may run the same model meanwhile).
_owner: contextvars.ContextVar[object | None] = contextvars.ContextVar("attention_lab_logit_lens", default=None)
MAX_TOKENS = 64
TOP_K = 5
CHUNK = 512


@dataclass
class LensView:
    tokens: list[str]  # n display tokens of the input
    top_ids: torch.Tensor  # (S, n, k) S = L + 1 stages: embeddings, after layer 0, ..., after layer L-1
    top_tokens: list[list[list[str]]]  # (S, n, k) their display text
    top_probs: torch.Tensor  # (S, n, k) softmax probabilities
    final_ids: torch.Tensor  # (n,) the model's own top prediction at each position
    final_prob: torch.Tensor  # (S, n) probability of that prediction at each stage
    final_is_top: torch.Tensor  # (S, n) bool: is it the lens's top token at that stage?
    first_stage: list[int | None]  # per position: first stage from which the top-1 is the final prediction
    truncated: bool = False

    @property
    def n_stages(self) -> int:
        return self.top_ids.shape[0]


def _parts(model):
    hf = model.model
    head = hf.get_output_embeddings() if hasattr(hf, "get_output_embeddings") else None
    base = hf.base_model
    norm = getattr(base, "norm", None)
    if head is None or norm is None or not hasattr(base, "layers") or not model.is_causal:
        raise ValueError(f"{model.name} is not a decoder with a final norm and unembedding: no logit lens")
    return base, norm, head


@torch.no_grad()
def residual_streams(model, input_ids: torch.Tensor) -> tuple[list[torch.Tensor], torch.Tensor]:
    """([h_0 .. h_L] each (B, n, D), the model's logits (B, n, V)) for a batch of ids (no padding)."""
    base, _, _ = _parts(model)
    streams: list[torch.Tensor] = []
    marker = object()

    def keep(module, args, out):
        if _owner.get() is marker:
            streams.append(out[0] if isinstance(out, tuple) else out)

    hooks = [base.embed_tokens.register_forward_hook(keep)] + [
        layer.register_forward_hook(keep) for layer in base.layers
    ]
    token = _owner.set(marker)
    try:
        logits = model.model(input_ids=input_ids, use_cache=False).logits
    finally:
        _owner.reset(token)
        for h in hooks:
            h.remove()
    return streams, logits


@torch.no_grad()
def lens_logits(model, stream: torch.Tensor) -> torch.Tensor:
    """W_U · norm(h): (..., D) -> (..., V)."""
    _, norm, head = _parts(model)
    return head(norm(stream)).float()


@torch.no_grad()
def logit_lens(model, text: str, k: int = TOP_K, max_tokens: int = MAX_TOKENS) -> LensView:
    """The lens of `text` (first max_tokens tokens). ValueError for a text that gives no token."""
    batch = model.tokenize([text], max_tokens)
    ids = batch.input_ids[:, : int(batch.attention_mask[0].sum())]  # (1, n) one text: no padding
    streams, _ = residual_streams(model, ids)
    final_ids = lens_logits(model, streams[-1][0]).argmax(-1)  # (n,)
    n = final_ids.shape[0]
    rows = torch.cat([stream[0] for stream in streams])  # (S n, D): every stage's stream, one row per position
    chosen_ids = final_ids.repeat(len(streams))  # (S n,)
    tops, probs, fprob = [], [], []
    # The unembedding (D x V, V = 49,152) is nearly all of the time: a few large products run faster than one
    # per stage; CHUNK rows keep each block of logits at 100 MB.
    for start in range(0, rows.shape[0], CHUNK):
        logits = lens_logits(model, rows[start : start + CHUNK])  # (c, V)
        want = chosen_ids[start : start + CHUNK, None]  # (c, 1)
        lse = logits.logsumexp(-1, keepdim=True)  # (c, 1): softmax's normaliser, without a (c, V) softmax
        top = logits.topk(k, dim=-1)
        chosen = logits.gather(1, want)  # (c, 1)
        tops.append(top.indices)
        probs.append((top.values - lse).exp())
        fprob.append((chosen - lse).exp()[:, 0])
    S = len(streams)
    top_ids = torch.cat(tops).view(S, n, k)
    top_probs = torch.cat(probs).view(S, n, k)
    final_prob = torch.cat(fprob).view(S, n)
    is_top = top_ids[..., 0] == final_ids  # (S, n)
    first = []
    for pos in range(n):
        hit = is_top[:, pos].tolist()
        stage = next((s for s in range(len(hit)) if all(hit[s:])), None)
        first.append(stage)
    pieces = model.tokenizer.convert_ids_to_tokens(top_ids.flatten().tolist())
    words = [model.tokenizer.convert_tokens_to_string([p]) for p in pieces]
    top_tokens = [[words[(s * n + i) * k : (s * n + i + 1) * k] for i in range(n)] for s in range(S)]
    return LensView(
        batch.tokens[0][:n], top_ids, top_tokens, top_probs, final_ids, final_prob,
        is_top, first, batch.truncated[0],
    )  # fmt: skip
