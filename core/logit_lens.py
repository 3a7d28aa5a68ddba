"""The logit lens (nostalgebraist 2020): read the residual stream after each layer as if it were the last.

A decoder's output is logits = W_U · norm(h_L), with h_L the residual stream after the last layer, norm the final
RMSNorm and W_U the unembedding (SmolLM2: tied to the token embedding). The lens applies the same two steps to
the stream after every layer l = 0 .. L (stage 0 = the token embeddings, before any layer):

    lens_l = W_U · norm(h_l)        (n, V)

so stage L is exactly the model's own logits. The streams are taken with forward hooks on the embedding and
on each decoder layer (transformers' hidden_states would hand back the last one already normed).

Per position we keep the top-k tokens of every stage, the probability of the model's final prediction at every
stage and whether it is the top token there, and the first stage from which the top token is the final prediction (and stays it).
Never the (L + 1) x n x V logits: a block of rows at a time.

Speed (target: 64 tokens in at most 2 s on the 2-core CPU): the unembedding of L = 30 stages x 64 positions is
1,920 x 576 x 49,152, about 109 GFLOP, three quarters of the time. The server runs torch on one thread per call
(app/serving.py), so the blocks are split over WORKERS threads of our own (torch releases the GIL): a lone visitor
gets both cores, and under a class's load the work simply queues like any other visitor's. The last stage is not
recomputed: it is the forward pass's own logits.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import torch

from .models.needs import PAGE_NEEDS
from .pooling import clip_label
from .state import State, Text, model_choice

MAX_TOKENS = 64
TOP_K = 5
CHUNK = 256  # at most this many rows per block: 50 MB of logits
WORKERS = min(2, os.cpu_count() or 1)
_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="logit-lens")


@dataclass(frozen=True)
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

    @property
    def position_labels(self) -> list[str]:
        """The columns of `final_prob` as its figure and CSV name them: '3: cat' (unique when a token repeats),
        the token clipped to 12 characters as a tick label holds it."""
        one_line = (str(tok).replace(chr(10), "⏎").replace(chr(9), "⇥") for tok in self.tokens)
        return [f"{i}: {clip_label(tok, 12)}" for i, tok in enumerate(one_line)]


@torch.no_grad()
def residual_streams(model, batch) -> tuple[list[torch.Tensor], torch.Tensor]:
    """([h_0 .. h_L] each (B, n, D), the model's logits (B, n, V)) for a batch without padding, through the
    model's one hook layer (model.hooked: only this thread's pass is read)."""
    if not model.is_causal:
        raise ValueError(f"{model.name} is not a decoder with a final norm and unembedding: no logit lens")
    streams, out = model.residual_streams(batch)
    return streams, out.logits


@torch.no_grad()
def lens_logits(model, stream: torch.Tensor) -> torch.Tensor:
    """W_U · norm(h): (..., D) -> (..., V)."""
    return model.unembed(stream)


@torch.no_grad()
def _block_stats(logits: torch.Tensor, want: torch.Tensor, k: int):
    """(top-k ids (c, k), their probabilities (c, k), probability of `want` (c,)) of logits (c, V), want (c,)."""
    lse = logits.logsumexp(-1, keepdim=True)  # (c, 1): softmax's normaliser, without a (c, V) softmax
    top = logits.topk(k, dim=-1)
    chosen = logits.gather(1, want[:, None])  # (c, 1)
    return top.indices, (top.values - lse).exp(), (chosen - lse).exp()[:, 0]


@torch.no_grad()  # grad mode is per thread: the workers need their own
def _lens_block(model, rows: torch.Tensor, want: torch.Tensor, k: int):
    return _block_stats(lens_logits(model, rows), want, k)


@torch.no_grad()
def logit_lens(model, text: str, k: int = TOP_K, max_tokens: int = MAX_TOKENS) -> LensView:
    """The lens of `text` (first max_tokens tokens). ValueError for a text that gives no token."""
    batch = model.tokenize([text], max_tokens)  # one text: no padding
    streams, logits = residual_streams(model, batch)
    last = logits[0].float()  # (n, V) = lens_logits(streams[-1][0]): the model's own output
    final_ids = last.argmax(-1)  # (n,)
    n = final_ids.shape[0]
    rows = torch.cat([stream[0] for stream in streams[:-1]])  # ((S-1) n, D): one row per stage and position
    chosen_ids = final_ids.repeat(len(streams) - 1)  # ((S-1) n,)
    n_blocks = WORKERS * -(-rows.shape[0] // (WORKERS * CHUNK))  # a multiple of WORKERS: equal shares
    jobs = [
        _pool.submit(_lens_block, model, block, want, k)
        for block, want in zip(rows.tensor_split(n_blocks), chosen_ids.tensor_split(n_blocks))
    ]
    blocks = [job.result() for job in jobs] + [_block_stats(last, final_ids, k)]
    tops, probs, fprob = zip(*blocks)
    S = len(streams)
    top_ids = torch.cat(tops).view(S, n, k).cpu()  # the view is on the CPU wherever the model ran
    top_probs = torch.cat(probs).view(S, n, k).cpu()
    final_prob = torch.cat(fprob).view(S, n).cpu()
    final_ids = final_ids.cpu()
    is_top = top_ids[..., 0] == final_ids  # (S, n)
    first = []
    for pos in range(n):
        hit = is_top[:, pos].tolist()
        stage = next((s for s in range(len(hit)) if all(hit[s:])), None)
        first.append(stage)
    words = model.token_strings(top_ids.flatten().tolist())
    top_tokens = [[words[(s * n + i) * k : (s * n + i + 1) * k] for i in range(n)] for s in range(S)]
    return LensView(
        batch.tokens[0][:n], top_ids, top_tokens, top_probs, final_ids, final_prob,
        is_top, first, batch.truncated[0],
    )  # fmt: skip


# --- the page's table and finding ---------------------------------------------------------------------------

LATE_LAYERS = 4  # "late": the final prediction becomes (and stays) the top token only in the last 4 layers
# (in the last half of a model with fewer than 8 layers)


@dataclass(frozen=True)
class LensTable:
    """Per position: the token, the model's final prediction and the first stage from which it is the lens's top
    token (and stays it), as (catalog key, format fields); and the finding: do most positions get it late?"""

    tokens: list[str]
    final: list[str]
    first_stage: list[tuple[str, dict]]  # ("stage_embed", {}), ("stage_layer", {"l": layer}) or ("stage_none", {})
    late: int  # positions whose first stage comes after one of the last LATE_LAYERS layers
    n: int
    from_layer: int  # the first of those layers
    finding: str  # "finding_late" (most positions) or "finding_early"


def _stage_words(stage: int | None) -> tuple[str, dict]:
    if stage is None:
        return ("stage_none", {})
    return ("stage_embed", {}) if stage == 0 else ("stage_layer", {"l": stage - 1})


def lens_table(view: LensView) -> LensTable:
    n, S = len(view.tokens), view.n_stages
    k = max(1, min(LATE_LAYERS, (S - 1) // 2))  # a model of few layers (a learner's tiny one): its last half
    late = sum(1 for s in view.first_stage if s is not None and s >= S - k)
    return LensTable(
        tokens=list(view.tokens),
        final=[view.top_tokens[-1][i][0] for i in range(n)],
        first_stage=[_stage_words(s) for s in view.first_stage],
        late=late,
        n=n,
        from_layer=S - 1 - k,
        finding="finding_late" if 2 * late > n else "finding_early",
    )


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

SHIPPED_MODELS = ("smollm2",)  # the default (committed figures); learners' decoders follow
DEFAULT_TEXT = "The capital of France is Paris. The capital of Japan is Tokyo. The capital of Italy is"


def _context(c):
    from .attention import ModelContext

    return ModelContext(c, SHIPPED_MODELS, PAGE_NEEDS["logit-lens"])  # a final norm and an unembedding


STATE = State(model_choice(SHIPPED_MODELS), Text("text", DEFAULT_TEXT), context=_context)
