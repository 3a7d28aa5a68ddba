"""Common slips of study material in circulation, each with the right number computed by the core function the
page itself uses. A page shows a short "common slip" note next to the part where the app gets it right; the
numbers on screen come from here, never typed into the words.

    qkt_second_row        /sdpa-steps   the classic example's Q K^T row 2 is [32, 46, 60] (printed as [38, 56, 74])
    longest_key_wins      /sdpa-steps   q1 = [3, 4] weighs k2 most because k2 is longest, not closest in direction
    sinusoidal_exponent   /positions    the exponent uses the PAIR index i (2i/d), not the element index
    gqa_ratios            /sdpa-gqa     8:1 is not general: Llama-3-8B groups 32 query heads over 8 K/V heads (4:1)
    rope_unscaled         /rope-scaling unscaled RoPE does not extrapolate: SmolLM2's measured loss past 8,192
    moe_active_shares     /moe          active parameters are 5.5-27.7 % of the listed MoEs (not "15-40 %")
    mixtral_8x22b         /moe          141B parameters from the config (not 176B = 8 x 22B)
    qkv_differ            /multi-head   Q, K and V come from one X through three different matrices: not equal
    qkv_differ_at_init    /multi-head   ... already at initialisation (independent random W^Q, W^K, W^V)
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import torch

from .moe.catalog import MIXTRAL_8X22B_CONFIG, REAL_MOE_MODELS, mixtral_parameters
from .positions.sinusoidal import sinusoidal_frequencies
from .sdpa_gqa.configs import PRESETS
from .sdpa_steps import CLASSIC_K, CLASSIC_Q, CLASSIC_V, KeyComparison, compare_keys, sdpa_steps

WRONG_QKT_SECOND_ROW = (38, 56, 74)  # as printed in notes in circulation
WRONG_MIXTRAL_TOTAL_B = 176  # 8 x 22B, as if the experts were whole models
WRONG_ACTIVE_SHARE = (0.15, 0.40)  # "15-40 % of an MoE's parameters are active"


def qkt_second_row() -> list[float]:
    """Row 2 of Q K^T for the classic example (Q = [[1, 2], [3, 4]], K = [[4, 5], [6, 7], [8, 9]])."""
    return [float(x) for x in sdpa_steps(CLASSIC_Q, CLASSIC_K, CLASSIC_V).scores[1]]


def longest_key_wins(query: int = 1) -> KeyComparison:
    """Query `query` of the classic example against its three keys. Notes in circulation say the key that wins
    "points most along the query"; the dot product rewards length as well as direction: q1 = [3, 4] gives k2
    = [8, 9] the largest score (60 against 32 and 46) while k0 = [4, 5] is the closest in direction."""
    return compare_keys(CLASSIC_Q[query], CLASSIC_K)


def sinusoidal_exponent(d: int = 512, base: float = 10000.0) -> dict:
    """The paper's PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(p / base^(2i/d)) with the PAIR index i,
    against the typo that puts the element index j (0 .. d-1) in the exponent, base^(2j/d):
        right: sin and cos of a pair share omega_i, the longest wavelength is 2 pi base^((d-2)/d) (< 2 pi base);
        typo:  the two columns of a pair get different frequencies (ratio base^(2/d)) and the exponent runs to
               2(d-1)/d ~ 2, so about half the columns get wavelengths beyond 2 pi base and barely move: "high
               dimensions carry no position" is the typo's consequence, not the paper's."""
    pair = sinusoidal_frequencies(d, base)  # (d/2,)
    right = np.repeat(pair, 2)  # (d,) column j uses omega_{j // 2}
    typo = base ** (-2 * np.arange(d, dtype=np.float64) / d)  # column j uses base^(-2j/d)
    limit = 2 * np.pi * base
    return {
        "d": d,
        "right_longest": float(2 * np.pi / right.min()),
        "typo_longest": float(2 * np.pi / typo.min()),
        "right_beyond": float((2 * np.pi / right > limit).mean()),
        "typo_beyond": float((2 * np.pi / typo > limit).mean()),
        "pair_ratio": float(typo[0] / typo[1]),  # frequency of column 0 (sin) over column 1 (cos) under the typo
        "limit": float(limit),
    }


def gqa_ratios() -> dict[str, str]:
    """Query heads : key/value heads of every preset model, as 'H:H_kv = g:1'."""
    return {c.name: f"{c.heads}:{c.kv_heads} = {c.group_size}:1" for c in PRESETS.values()}


def rope_unscaled(runs: list[dict], original_context: int) -> dict | None:
    """SmolLM2's measured mean loss with plain RoPE within and beyond its training context L0 (from the committed
    long-context runs), or None when that run is missing."""
    run = next((r for r in runs if r.get("method") == "default"), None)
    if run is None or run.get("mean_loss_beyond_context") is None:
        return None
    return {
        "within": float(run["mean_loss_within_context"]),
        "beyond": float(run["mean_loss_beyond_context"]),
        "l0": int(original_context),
    }


def moe_active_shares() -> tuple[float, float]:
    """The smallest and largest active-parameter share of the listed MoE models."""
    shares = [m.active_fraction for m in REAL_MOE_MODELS]
    return min(shares), max(shares)


def mixtral_8x22b() -> dict:
    """Mixtral 8x22B's parameters from its config.json (billions, total and active per token)."""
    total, active = mixtral_parameters(MIXTRAL_8X22B_CONFIG)
    return {"total_b": total / 1e9, "active_b": active / 1e9, "wrong_b": WRONG_MIXTRAL_TOTAL_B}


def qkv_differ(walk, head: int) -> dict:
    """How far apart head `head`'s Q_i, K_i and V_i are on the walked text: ||A - B|| / ||A|| for each pair (0 would
    mean equal). They come from the same X, through three different learned matrices."""

    def rel(a, b) -> float:
        return float((a - b).norm() / a.norm().clamp_min(1e-12))

    q, k, v = walk.q[head], walk.k[head], walk.v[head]
    return {"qk": rel(q, k), "qv": rel(q, v), "kv": rel(k, v)}


BERT_INIT_STD = 0.02  # BertConfig.initializer_range: nn.Linear weights start as N(0, 0.02^2), biases 0


def qkv_differ_at_init(walk, seed: int = 0) -> dict:
    """The same distances for one head of width d_k on the same layer input X, with W^Q, W^K, W^V drawn the way BERT
    initialises them (independent N(0, 0.02^2), biases 0): before any training. Independent projections of one X
    are about sqrt(2) apart relative to their size."""
    g = torch.Generator().manual_seed(seed)
    x = walk.x.float()
    d_k = walk.q.shape[-1]
    q, k, v = (x @ (torch.randn(x.shape[-1], d_k, generator=g) * BERT_INIT_STD) for _ in range(3))
    return qkv_differ(SimpleNamespace(q=q[None], k=k[None], v=v[None]), 0)
