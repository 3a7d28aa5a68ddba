"""Why a head attends: one head's scores before the softmax taken apart into exact pieces that add back up.

RoPE decoders (SmolLM2, a learner's RoPE model). After rotation a score is a sum over the d/2 rotation pairs,

    s_ij = scale * sum_p  (q_i^(p) . k_j^(p))          pair p turns by theta_p radians per position,

so grouping the pairs into bands (fastest first) splits the score matrix exactly into one matrix per band; each
band's share of a head's score magnitude says which frequencies carry the head (Barbero et al. 2025, "Round and
Round We Go! What makes Rotary Positional Encodings useful?"). Two counterfactuals of the same head:
- position removed: q and k turned back to where the model would have them at one common position (position 0:
  the model's own cos and sin there), so every score is q_i . k_j with no rotation between them;
- content removed: every key replaced by the text's average key (before rotation), turned to the key's own
  position, so what is left of a score depends on the query and the distance only.
How much of the head's attention each keeps: 1 - the mean total-variation distance between its weights and the
head's own (1: the same pattern), beside what uniform attention keeps (the level to beat).

Absolute positions (MiniLM, a BERT-style encoder), first layer. Its input is LayerNorm(t + p + s): token row,
position row, the token-type row. The layer's scores with its own W_q, W_k split into four exact terms,
token.token + token.position + position.token + position.position, wherever the input is a sum of a token part and
a position part:
- "before_norm": on the sum t + s | p itself (the biases b_q, b_k and the token-type row ride with the token part).
  Exact, but the layer never sees this sum: LayerNorm stands between.
- "after_norm": LayerNorm is linear apart from dividing each token by its own spread sigma_i, which is computed
  from token and position together. Holding each sigma_i as the model computed it, LN(x_i) = gamma (C(t_i + s) /
  sigma_i) + beta + gamma (C p_i / sigma_i) (C: subtract the mean), so the four terms add up exactly to the
  model's own scores; but the position part of token i is divided by a number its token helped make.

Shapes: n tokens, d head size, H heads, D model width, b bands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .models.needs import PAGE_NEEDS
from .pooling import indexed_labels
from .positions.rope_bands import band_edges, join_pairs, mean_share, pair_parts
from .state import Choice, Int, State, Text

SPLITS = ("equal", "wavelength")
WAVELENGTH_CUTS = (10.0, 100.0, 1000.0, 10000.0)  # tokens per turn: the band edges of the "wavelength" split
TERMS = ("token_token", "token_position", "position_token", "position_position")
WHERE = ("before_norm", "after_norm")


# --- RoPE: frequencies, bands, turning pairs ------------------------------------------------------------------


def pair_frequencies(cos: torch.Tensor, sin: torch.Tensor, pairs: str = "half") -> torch.Tensor:
    """(d/2,) theta_p, radians per position of each pair, read off the model's own cos and sin at position 1
    (cos, sin (n >= 2, d) as its rotary module gives them; every theta_p of a RoPE is below pi)."""
    c, s = pair_parts(cos[1].double(), pairs)[0], pair_parts(sin[1].double(), pairs)[0]
    return torch.atan2(s, c)


def wavelengths(theta: torch.Tensor) -> torch.Tensor:
    """(d/2,) tokens per full turn of each pair: 2 pi / theta_p."""
    return 2 * math.pi / theta


def wavelength_edges(theta: torch.Tensor, cuts=WAVELENGTH_CUTS) -> list[tuple[int, int]]:
    """[start, end) pair runs whose wavelengths fall between consecutive cuts (empty runs dropped); pairs are
    ordered fastest first, so their wavelengths grow."""
    lengths = wavelengths(theta)
    bins = torch.bucketize(lengths, torch.tensor(cuts, dtype=lengths.dtype)).tolist()
    edges, start = [], 0
    for p in range(1, len(bins) + 1):
        if p == len(bins) or bins[p] != bins[start]:
            edges.append((start, p))
            start = p
    return edges


def split_edges(theta: torch.Tensor, split: str, n_bands: int | None) -> list[tuple[int, int]]:
    """The bands of a split: "equal" runs of pairs (n_bands of them) or "wavelength" decades (WAVELENGTH_CUTS, which
    need no n_bands)."""
    if split == "wavelength":
        return wavelength_edges(theta)
    return band_edges(theta.shape[0], n_bands)


def turn(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, pairs: str = "half") -> torch.Tensor:
    """x (n, d) with each pair (x1, x2) turned as transformers' apply_rotary_pos_emb turns it:
    (x1 c - x2 s, x1 s + x2 c), c and s the model's cos and sin (n, d) of each position."""
    (x1, x2), c, s = pair_parts(x, pairs), pair_parts(cos, pairs)[0], pair_parts(sin, pairs)[0]
    return join_pairs(x1 * c - x2 * s, x1 * s + x2 * c, pairs)


def unturn(y: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, pairs: str = "half") -> torch.Tensor:
    """turn undone: the turn back by the same angle, divided by c^2 + s^2 (the square of the attention factor some
    scaled RoPEs fold into cos and sin; 1 for a plain RoPE)."""
    c, s = pair_parts(cos, pairs)[0], pair_parts(sin, pairs)[0]
    return turn(y, cos, -sin, pairs) / join_pairs(c * c + s * s, c * c + s * s, pairs)


def band_scores(q: torch.Tensor, k: torch.Tensor, edges, pairs: str, scale: float) -> torch.Tensor:
    """(..., b, n_q, n_k) each band's part of the scores q . k * scale: q (..., n_q, d) and k (..., n_k, d) rotated,
    laid out as `pairs`; band [a, b) is the product of pairs a .. b-1 alone (one matrix product per member)."""
    (q1, q2), (k1, k2) = pair_parts(q, pairs), pair_parts(k, pairs)
    parts = [
        q1[..., a:b] @ k1[..., a:b].transpose(-1, -2) + q2[..., a:b] @ k2[..., a:b].transpose(-1, -2) for a, b in edges
    ]
    return torch.stack(parts, dim=-3) * scale


# --- the weights a score matrix gives, and how much of a pattern another keeps ---------------------------------


def softmax_rows(scores: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    """(..., n, n) weights of scores over each row's visible keys (the causal mask)."""
    return torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)


def pattern_kept(scores: torch.Tensor, other: torch.Tensor, visible: torch.Tensor) -> torch.Tensor:
    """(...,) 1 - the mean total-variation distance between the weights of `other` and of `scores`, over the rows
    with two keys or more to choose from (a row with one key is the same under any scores). 1: the same pattern."""
    rows = visible.sum(-1) > 1
    distance = 0.5 * (softmax_rows(scores, visible) - softmax_rows(other, visible)).abs().sum(-1)  # (..., n)
    return 1 - distance[..., rows].mean(-1)


def uniform_scores(visible: torch.Tensor) -> torch.Tensor:
    """Scores whose weights are even over each row's visible keys: the placebo every pattern is compared with."""
    return torch.zeros(visible.shape, dtype=torch.float64)


# --- RoPE decoder: one layer taken apart ---------------------------------------------------------------------


@dataclass(frozen=True)
class RopeLayerParts:
    """One layer of a RoPE decoder on one text, every head, every piece (float64, CPU)."""

    labels: list[str]  # (n,) '3 cat': each token with its position
    visible: torch.Tensor  # (n, n) bool: the causal mask
    scores: torch.Tensor  # (H, n, n) the model's scaled scores q . k * scale
    bands: torch.Tensor  # (H, b, n, n) each band's part; summed over b: scores
    edges: list[tuple[int, int]]  # (b,) [start, end) pairs of each band
    band_wavelengths: list[tuple[float, float]]  # (b,) shortest and longest wavelength (tokens) in each band
    no_position: torch.Tensor  # (H, n, n) scores with q and k at one common position
    no_content: torch.Tensor  # (H, n, n) scores with every key the average key, turned to its position


def rope_layer_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    scale: float,
    cos: torch.Tensor,
    sin: torch.Tensor,
    pairs: str,
    edges: list[tuple[int, int]],
    tokens: list[str],
) -> RopeLayerParts:
    """q (H, n, d) and k (H_kv, n, d) as the model rotated them; cos and sin (at least max(n, 2), d) as its rotary
    module gives positions 0, 1, ...; edges: the bands' [start, end) pairs."""
    q, k = q.double(), k.double()
    n_heads, n = q.shape[0], q.shape[1]
    lengths = wavelengths(pair_frequencies(cos, sin, pairs))
    cos, sin = cos[:n].double(), sin[:n].double()
    k = k.repeat_interleave(n_heads // k.shape[0], dim=0)  # (H, n, d): consecutive query heads share a key head
    raw_q, raw_k = unturn(q, cos, sin, pairs), unturn(k, cos, sin, pairs)  # as projected, before any turn
    at_zero = cos[:1].expand(n, -1), sin[:1].expand(n, -1)  # every token at position 0
    average = raw_k.mean(-2, keepdim=True).expand(-1, n, -1)  # (H, n, d) the average key at every position
    return RopeLayerParts(
        labels=indexed_labels(tokens[:n]),
        visible=torch.ones(n, n, dtype=torch.bool).tril(),
        scores=q @ k.transpose(-1, -2) * scale,
        bands=band_scores(q, k, edges, pairs, scale),
        edges=list(edges),
        band_wavelengths=[(float(lengths[a]), float(lengths[b - 1])) for a, b in edges],
        no_position=turn(raw_q, *at_zero, pairs) @ turn(raw_k, *at_zero, pairs).transpose(-1, -2) * scale,
        no_content=q @ turn(average, cos, sin, pairs).transpose(-1, -2) * scale,
    )


def band_shares(parts: RopeLayerParts) -> np.ndarray:
    """(H, b) each band's share of each head's score magnitude: |band| / sum over bands of |band|, averaged over
    the visible cells (the shares of a head sum to 1)."""
    return np.stack([mean_share(bands, parts.visible) for bands in parts.bands])


def rope_parts_of(model, text: str, layer: int, split: str, n_bands: int | None, max_tokens: int) -> RopeLayerParts:
    """rope_layer_parts for one text (its first max_tokens tokens) and one layer of a RoPE decoder, through the
    model contract: the layer's q and k (the pass stops there) and the model's own rotary cos and sin."""
    batch = model.tokenize([text], max_tokens)
    n = batch.lengths[0]
    q, k, scale = model.layer_qk(batch, layer)
    cos, sin = model.rotary_cos_sin(max(n, 2))
    pairs = model.capabilities.positions.rope_pairs
    edges = split_edges(pair_frequencies(cos, sin, pairs), split, n_bands)
    return rope_layer_parts(q[0, :, :n], k[0, :, :n], scale, cos, sin, pairs, edges, batch.tokens[0])


# --- absolute positions: the first layer's four terms ----------------------------------------------------------


def token_and_position(parts, where: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(token part, position part), each (n, D), of what the first layer reads (`parts`: the contract's
    EmbeddingParts). "before_norm": t + s and p, the sum before LayerNorm. "after_norm": LayerNorm's output split
    with each token's spread sigma_i held as the model computed it from the whole sum (the norm's bias rides with
    the token part); the two add up to the layer's real input."""
    token, position = parts.token.double() + parts.token_type.double(), parts.position.double()
    if where == "before_norm":
        return token, position
    total = token + position
    sigma = torch.sqrt(total.var(-1, unbiased=False, keepdim=True) + parts.norm_eps)  # (n, 1) each token's own
    gamma, beta = parts.norm_weight.double(), parts.norm_bias.double()
    centred = lambda x: x - x.mean(-1, keepdim=True)  # noqa: E731
    return gamma * centred(token) / sigma + beta, gamma * centred(position) / sigma


def four_terms(token, position, w_q, b_q, w_k, b_k, n_heads: int, scale: float) -> torch.Tensor:
    """(H, 4, n, n) the layer's scores (q . k * scale per head) split as TERMS: token.token, token.position,
    position.token, position.position. token, position (n, D); w_q, w_k (D, D) as nn.Linear keeps them (q = x @ w_q.T
    + b_q); the biases ride with the token part, so the four add up to the scores of token + position exactly."""
    n = token.shape[0]

    def heads(x):  # (n, D) -> (H, n, d)
        return x.reshape(n, n_heads, -1).transpose(0, 1)

    token, position = token.double(), position.double()
    w_q, b_q, w_k, b_k = w_q.double(), b_q.double(), w_k.double(), b_k.double()
    q_token, q_position = heads(token @ w_q.T + b_q), heads(position @ w_q.T)
    k_token, k_position = heads(token @ w_k.T + b_k), heads(position @ w_k.T)
    pairs = ((q_token, k_token), (q_token, k_position), (q_position, k_token), (q_position, k_position))
    return torch.stack([q @ k.transpose(-1, -2) * scale for q, k in pairs], dim=1)


@dataclass(frozen=True)
class AbsoluteLayerParts:
    """The first layer of an absolute-position encoder on one text, every head (float64, CPU)."""

    labels: list[str]  # (n,) '3 cat'
    where: str  # "before_norm" or "after_norm"
    terms: torch.Tensor  # (H, 4, n, n) as TERMS; summed over the 4: `scores`
    scores: torch.Tensor  # (H, n, n) the scores the terms add up to (where: on the sum, or the model's own)
    model_scores: torch.Tensor  # (H, n, n) the layer's own scores (after LayerNorm), for comparison


def absolute_parts_of(model, text: str, where: str, max_tokens: int) -> AbsoluteLayerParts:
    """The four terms of the first layer's scores for one text (its first max_tokens tokens), through the model
    contract: its embedding parts and its first layer's W_q, W_k (BERT-style encoders)."""
    batch = model.tokenize([text], max_tokens)
    n = batch.lengths[0]
    parts = model.embedding_parts(batch.input_ids[0, :n])
    weights = model.encoder_layer(0)
    scale = 1.0 / math.sqrt(weights.head_dim)
    split = (weights.w_q, weights.b_q, weights.w_k, weights.b_k, weights.n_heads, scale)
    terms = four_terms(*token_and_position(parts, where), *split)
    own = terms if where == "after_norm" else four_terms(*token_and_position(parts, "after_norm"), *split)
    return AbsoluteLayerParts(indexed_labels(batch.tokens[0][:n]), where, terms, terms.sum(1), own.sum(1))


def term_shares(parts: AbsoluteLayerParts) -> np.ndarray:
    """(H, 4) each term's share of each head's score magnitude, averaged over every (query, key) cell."""
    every = torch.ones(parts.scores.shape[-2:], dtype=torch.bool)
    return np.stack([mean_share(terms, every) for terms in parts.terms])


# --- what the page draws, and its link ---------------------------------------------------------------------------

PARTS = ("rope", "absolute")
SHIPPED = {"rope": ("smollm2",), "absolute": ("minilm",)}
PATTERNS = ("own", "position_only", "content_only")  # the head's weights, with content removed, with position removed
DEFAULT_TEXT = "The cat sat on the mat. The dog sat on the rug. Then the cat sat on the mat again because it was tired."
DEFAULT_LAYER = 3
MAX_TOKENS = 128  # what the page reads of a text: every view is n x n, and one layer of SmolLM2 at 128 is quick
MARGIN = 0.1  # a counterfactual keeps clearly more of the pattern than the other: by this much
KEPT = ("position_only", "content_only", "uniform")  # content removed, position removed, even attention


def _context(c):
    from .attention import ModelContext

    return ModelContext(c, SHIPPED[c.part], PAGE_NEEDS[f"why-head/{c.part}"])


STATE = State(
    Choice("part", "rope", options=PARTS),
    Choice("model", lambda c: SHIPPED[c.part][0], options=lambda c: c.models),
    Text("text", DEFAULT_TEXT),
    Int("layer", lambda c: min(DEFAULT_LAYER, c.n_layers - 1), 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Choice("split", "wavelength", options=SPLITS),
    Choice("bands", 4, options=(2, 4, 8), number=int),
    Int("band", 0, 0, lambda c: c.n_bands - 1),
    Choice("pattern", "own", options=PATTERNS),
    Choice("where", "before_norm", options=WHERE),
    Choice("term", "position_position", options=TERMS),
    context=_context,
)


@dataclass(frozen=True)
class RopeView:
    head: int
    labels: list[str]  # (n,) '3 cat'
    visible: np.ndarray  # (n, n) bool: the causal mask
    band: int  # the band drawn
    band_scores: np.ndarray  # (n, n) its part of the head's scores
    band_pairs: list[tuple[int, int]]  # (b,) first and last pair of each band
    band_wavelengths: list[tuple[float, float]]  # (b,) shortest and longest wavelength in tokens
    shares: np.ndarray  # (H, b) each band's share of each head's score magnitude
    carrier: int  # the band with the largest share of this head
    carrier_share: float  # its share
    max_diff: float  # |sum of the bands - the model's scores| over every head's visible cells
    pattern: str  # which weights are drawn (PATTERNS)
    weights: np.ndarray  # (n, n) those weights
    kept: dict[str, np.ndarray]  # "position_only", "content_only", "uniform": (H,) pattern kept of each head
    kept_here: dict[str, float]  # the same of this head
    verdict: str  # "position", "content" or "mixed": which counterfactual keeps clearly more of this head

    @property
    def head_labels(self) -> list[str]:
        """The layer's heads ('H0' ..), the rows of `shares` and of `kept`, as the figures and CSVs name them."""
        return head_labels(self.shares.shape[0])

    @property
    def kept_table(self) -> dict[str, list]:
        """`kept` as columns beside the head each row belongs to (the kept figure's bars)."""
        return {"head": self.head_labels, **{k: v.tolist() for k, v in self.kept.items()}}


def head_labels(n_heads: int) -> list[str]:
    return [f"H{h}" for h in range(n_heads)]


def verdict(position: float, content: float) -> str:
    if position - content > MARGIN:
        return "position"
    if content - position > MARGIN:
        return "content"
    return "mixed"


def rope_view(parts: RopeLayerParts, head: int, band: int, pattern: str) -> RopeView:
    """One head of a layer's parts, ready to draw (head and band clipped to what there is)."""
    head = min(max(head, 0), parts.scores.shape[0] - 1)
    band = min(max(band, 0), len(parts.edges) - 1)
    shares = band_shares(parts)
    visible = parts.visible
    kept = dict(zip(KEPT, kept_by_head(parts)))
    drawn = {"own": parts.scores, "position_only": parts.no_content, "content_only": parts.no_position}[pattern]
    return RopeView(
        head=head,
        labels=parts.labels,
        visible=visible.numpy(),
        band=band,
        band_scores=parts.bands[head, band].numpy(),
        band_pairs=[(a, b - 1) for a, b in parts.edges],
        band_wavelengths=parts.band_wavelengths,
        shares=shares,
        carrier=int(np.argmax(shares[head])),
        carrier_share=float(shares[head].max()),
        max_diff=float((parts.bands.sum(1) - parts.scores)[:, visible].abs().max()),
        pattern=pattern,
        weights=softmax_rows(drawn[head], visible).numpy(),
        kept=kept,
        kept_here={k: float(v[head]) for k, v in kept.items()},
        verdict=verdict(float(kept["position_only"][head]), float(kept["content_only"][head])),
    )


@dataclass(frozen=True)
class AbsoluteView:
    head: int
    labels: list[str]
    where: str
    term: str  # the term drawn (TERMS)
    term_scores: np.ndarray  # (n, n) its part of the head's scores
    shares: np.ndarray  # (H, 4) each term's share of each head's score magnitude
    largest: str  # the term with the largest share of this head
    largest_share: float  # its share
    max_diff: float  # |sum of the terms - the scores they split| (0 up to rounding)
    kept: float  # how much of the layer's own pattern the split scores keep, mean over heads (1 after the norm)

    @property
    def head_labels(self) -> list[str]:
        """The layer's heads ('H0' ..), the rows of `shares`."""
        return head_labels(self.shares.shape[0])


def absolute_view(parts: AbsoluteLayerParts, head: int, term: str) -> AbsoluteView:
    head = min(max(head, 0), parts.terms.shape[0] - 1)
    shares = term_shares(parts)
    every = torch.ones(parts.scores.shape[-2:], dtype=torch.bool)
    return AbsoluteView(
        head=head,
        labels=parts.labels,
        where=parts.where,
        term=term,
        term_scores=parts.terms[head, TERMS.index(term)].numpy(),
        shares=shares,
        largest=TERMS[int(np.argmax(shares[head]))],
        largest_share=float(shares[head].max()),
        max_diff=float((parts.terms.sum(1) - parts.scores).abs().max()),
        kept=float(pattern_kept(parts.model_scores, parts.scores, every).mean()),
    )


# --- many texts: which bands carry the heads the detectors found ------------------------------------------------


@dataclass(frozen=True)
class SharesOverTexts:
    """Every head of every layer of a RoPE decoder, one entry per text (float64 numpy)."""

    edges: list[tuple[int, int]]  # (b,) the bands' [start, end) pairs
    band_wavelengths: list[tuple[float, float]]  # (b,) shortest and longest wavelength in tokens
    shares: np.ndarray  # (T, L, H, b) each band's share of each head's score magnitude, per text
    kept: dict[str, np.ndarray]  # "position_only", "content_only", "uniform": (T, L, H) pattern kept, per text
    tokens: list[int]  # (T,) tokens read of each text


def shares_over_texts(model, texts: list[str], split: str, n_bands: int | None, max_tokens: int) -> SharesOverTexts:
    """One forward pass per text (every layer's q and k), then every layer taken apart as rope_parts_of does."""
    shares, kept, lengths = [], {k: [] for k in KEPT}, []
    cos, sin = model.rotary_cos_sin(max(max_tokens, 2))
    pairs = model.capabilities.positions.rope_pairs
    edges = split_edges(pair_frequencies(cos, sin, pairs), split, n_bands)
    for text in texts:
        batch = model.tokenize([text], max_tokens)
        n = batch.lengths[0]
        trace = model.run(batch, logits=False, hidden_states=False)
        per_layer = [
            rope_layer_parts(q[0, :, :n], k[0, :, :n], trace.scale, cos, sin, pairs, edges, batch.tokens[0])
            for q, k in zip(trace.queries, trace.keys)
        ]
        shares.append(np.stack([band_shares(parts) for parts in per_layer]))
        for key, value in zip(kept, zip(*(kept_by_head(parts) for parts in per_layer))):
            kept[key].append(np.stack(value))
        lengths.append(n)
    return SharesOverTexts(edges, per_layer[0].band_wavelengths, np.stack(shares),
                           {k: np.stack(v) for k, v in kept.items()}, lengths)  # fmt: skip


def kept_by_head(parts: RopeLayerParts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H,) each, in KEPT's order: how much of every head's pattern content removed, position removed and even
    attention keep (pattern_kept)."""
    visible = parts.visible
    uniform = uniform_scores(visible).expand_as(parts.scores)
    return tuple(
        pattern_kept(parts.scores, other, visible).numpy() for other in (parts.no_content, parts.no_position, uniform)
    )


# --- the committed measurement over held-out texts (scripts/why_head_bands.py) ------------------------------------

RESULT_NAME = "why_head_bands"
DETECTOR_HEADS = ("previous_token", "first_token", "induction")


@dataclass(frozen=True)
class DetectorGroup:
    detector: str
    heads: list[str]  # 'layer.head' of the group's heads
    fastest_share: float  # mean share of the fastest band (shortest wavelengths) over the group's heads and texts
    slowest_share: float  # the same of the slowest band
    kept: dict[str, float]  # KEPT -> mean pattern kept
    verdict: str  # "position", "content" or "mixed" (verdict of the group's means)


@dataclass(frozen=True)
class DetectorHeadsView:
    model: str
    provenance: dict  # command, date, load, texts, seconds
    fastest_wavelength: float  # the fastest band's longest wavelength (tokens per turn)
    all_fastest_share: float  # the fastest band's mean share over every head: the baseline
    all_slowest_share: float
    all_kept: dict[str, float]
    groups: list[DetectorGroup]
    rows: dict[str, list]  # the table: one row per detector head
    paper: str  # "agrees" or "differs": see paper_finding


def _has_heads(data) -> bool:
    return all(d in data["detector_heads"] for d in DETECTOR_HEADS) and bool(data["bands"])


def committed_detector_heads(model_key: str) -> DetectorHeadsView | None:
    """results/why_head_bands.json for `model_key`, ready to show (None when there is none for that model)."""
    from .results import load_result

    data = load_result(RESULT_NAME, _has_heads)
    if data is None or data.get("model") != model_key:
        return None
    every = data["all_heads"]
    groups, rows = [], {k: [] for k in ("detector", "head", "score", "carrier", "fastest", "rank", *KEPT)}
    for d in DETECTOR_HEADS:
        heads, group = data["detector_heads"][d], data["detector_groups"][d]
        kept = {k: float(group["kept_mean"][k]) for k in KEPT}
        groups.append(DetectorGroup(d, [f"{h['layer']}.{h['head']}" for h in heads], group["band_share_mean"][0],
                                    group["band_share_mean"][-1], kept,
                                    verdict(kept["position_only"], kept["content_only"])))  # fmt: skip
        for h in heads:
            for key, value in zip(rows, (d, f"{h['layer']}.{h['head']}", h["detector_score"], h["carrier_band"],
                                         h["band_share_mean"][0], h["fastest_band_rank"],
                                         *(h["kept_mean"][k] for k in KEPT))):  # fmt: skip
                rows[key].append(value)
    # the texts as counted (data["texts"] is the script's English sentence of them: a page says them in its words)
    provenance = {"command": data["command"], "date": data["date"], "load": data["device"].get("loadavg_1min"),
                  "n_texts": len(data["tokens_per_text"]), "text_tokens": max(data["tokens_per_text"]),
                  "seconds": data["seconds"]}  # fmt: skip
    fastest, slowest = every["band_share_mean"][0], every["band_share_mean"][-1]
    return DetectorHeadsView(model_key, provenance, data["bands"][0]["wavelength_tokens"][1], fastest, slowest,
                             {k: float(every["kept_mean"][k]) for k in KEPT}, groups, rows,
                             paper_finding(groups, fastest, slowest))  # fmt: skip


def paper_finding(groups: list[DetectorGroup], all_fastest: float, all_slowest: float) -> str:
    """Barbero et al.'s finding holds here ("agrees") when the previous-token heads' pattern comes from position and
    their fastest band's share is above every head's mean, while the induction heads' pattern comes from content and
    their slowest band's share is above every head's mean; else "differs"."""
    by = {g.detector: g for g in groups}
    previous, induction = by["previous_token"], by["induction"]
    holds = (previous.verdict == "position" and previous.fastest_share > all_fastest
             and induction.verdict == "content" and induction.slowest_share > all_slowest)  # fmt: skip
    return "agrees" if holds else "differs"
