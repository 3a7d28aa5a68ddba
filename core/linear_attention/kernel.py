"""Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs", arXiv:2006.16236).

Softmax attention weighs key j for query i by exp(q_i . k_j) / sum_j' exp(q_i . k_j'). Linear attention replaces
exp(q . k) by a kernel phi(q) . phi(k) with a positive feature map, phi(x) = elu(x) + 1 (the paper's choice):

    out_i = phi(q_i)^T (sum_j phi(k_j) v_j^T)  /  phi(q_i)^T (sum_j phi(k_j))

Because a matrix product is associative, (phi(Q) phi(K)^T) V = phi(Q) (phi(K)^T V). The left order builds the
(n x n) matrix first: about 2 n^2 d multiply-adds. The right order builds a (d x d_v) matrix first: about
2 n d d_v. For n much larger than d the right order is linear in n: that is the whole trick.

Causal (decoder) attention sums only over j <= i: the sums become prefix sums S_i = sum_{j<=i} phi(k_j) v_j^T and
z_i = sum_{j<=i} phi(k_j), and generating token i only needs S_{i-1}, z_{i-1}: an RNN whose state has a fixed size
(d x d_v + d per head), however long the context.

Shapes: q and k (..., n, d), v (..., n, d_v); the leading dimensions (batch, heads) are carried through. No
1/sqrt(d) scaling: the paper applies phi to q and k directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

FeatureMap = Callable[[torch.Tensor], torch.Tensor]
EPS = 1e-6  # added to the normaliser, as in the paper's implementation; it only guards against underflow


def elu_feature_map(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = elu(x) + 1 = x + 1 for x > 0, e^x otherwise: positive everywhere, so every implied weight is > 0.

    Written as the two branches rather than F.elu(x) + 1: for x < -17, elu(x) rounds to -1 in float32 and adding
    1 gives exactly 0 (a key would silently drop out of every normaliser); e^x keeps it small but positive."""
    return torch.where(x > 0, x + 1.0, torch.exp(x.clamp_max(0.0)))


def linear_attention(q, k, v, feature_map: FeatureMap = elu_feature_map, eps: float = EPS) -> torch.Tensor:
    """Non-causal linear attention, (..., n, d_v). phi(K)^T V is computed first: a (d x d_v) matrix, never n x n."""
    phi_q, phi_k = feature_map(q), feature_map(k)
    kv = phi_k.transpose(-2, -1) @ v  # (..., d, d_v)  n d d_v multiply-adds
    z = phi_k.sum(-2)  # (..., d)       sum_j phi(k_j)
    numerator = phi_q @ kv  # (..., n, d_v)  n d d_v multiply-adds
    denominator = (phi_q * z.unsqueeze(-2)).sum(-1, keepdim=True)
    return numerator / (denominator + eps)


def causal_linear_attention(
    q, k, v, feature_map: FeatureMap = elu_feature_map, eps: float = EPS, chunk: int = 64
) -> torch.Tensor:
    """Causal linear attention as prefix sums, (..., n, d_v).

    Holding every S_i at once would take n x d x d_v numbers per head. We walk the sequence in chunks of `chunk`
    positions: inside a chunk S_i is the state carried in from earlier chunks plus an inclusive cumulative sum
    of phi(k_j) v_j^T, so at most chunk x d x d_v numbers per head are alive; the total work stays n d d_v."""
    if chunk < 1:
        raise ValueError("chunk must be >= 1")
    phi_q, phi_k = feature_map(q), feature_map(k)
    *lead, n, d = phi_q.shape
    d_v = v.shape[-1]
    dtype = torch.promote_types(phi_q.dtype, v.dtype)
    state = torch.zeros(*lead, d, d_v, dtype=dtype, device=q.device)  # S carried in: sum over earlier chunks
    z = torch.zeros(*lead, d, dtype=dtype, device=q.device)  # z carried in
    out = torch.empty(*lead, n, d_v, dtype=dtype, device=q.device)
    for start in range(0, n, chunk):
        pq, pk, vc = (
            phi_q[..., start : start + chunk, :],
            phi_k[..., start : start + chunk, :],
            v[..., start : start + chunk, :],
        )
        s_i = state.unsqueeze(-3) + torch.cumsum(pk.unsqueeze(-1) * vc.unsqueeze(-2), dim=-3)  # (..., c, d, d_v)
        z_i = z.unsqueeze(-2) + torch.cumsum(pk, dim=-2)  # (..., c, d)
        numerator = torch.einsum("...cd,...cde->...ce", pq, s_i)
        denominator = (pq * z_i).sum(-1, keepdim=True)
        out[..., start : start + chunk, :] = numerator / (denominator + eps)
        state, z = s_i[..., -1, :, :], z_i[..., -1, :]
    return out


# --- the RNN form ----------------------------------------------------------------------------------------------


@dataclass
class LinearAttentionState:
    """What an RNN-form linear attention remembers after some tokens: S = sum_j phi(k_j) v_j^T (..., d, d_v) and
    z = sum_j phi(k_j) (..., d). Its size does not grow with the number of tokens."""

    s: torch.Tensor
    z: torch.Tensor

    @classmethod
    def empty(cls, lead: tuple, d: int, d_v: int, dtype=torch.float32, device=None) -> LinearAttentionState:
        return cls(
            torch.zeros(*lead, d, d_v, dtype=dtype, device=device), torch.zeros(*lead, d, dtype=dtype, device=device)
        )

    def numel(self) -> int:
        return self.s.numel() + self.z.numel()


def prefill_state(k, v, feature_map: FeatureMap = elu_feature_map) -> LinearAttentionState:
    """The state after reading a whole prompt at once: S = phi(K)^T V, z = sum_j phi(k_j). k (..., n, d)."""
    phi_k = feature_map(k)
    return LinearAttentionState(phi_k.transpose(-2, -1) @ v, phi_k.sum(-2))


def linear_attention_step(
    state: LinearAttentionState, q_t, k_t, v_t, feature_map: FeatureMap = elu_feature_map, eps: float = EPS
) -> tuple[torch.Tensor, LinearAttentionState]:
    """One generation step: add token t to the state, then read it with q_t. q_t, k_t (..., d), v_t (..., d_v).
    Returns (out_t (..., d_v), the new state); the old state is not modified. Cost: O(d d_v) per head, whatever t."""
    phi_k = feature_map(k_t)
    s = state.s + phi_k.unsqueeze(-1) * v_t.unsqueeze(-2)  # S_t = S_{t-1} + phi(k_t) v_t^T
    z = state.z + phi_k  # z_t = z_{t-1} + phi(k_t)
    phi_q = feature_map(q_t)
    numerator = (phi_q.unsqueeze(-2) @ s).squeeze(-2)
    denominator = (phi_q * z).sum(-1, keepdim=True)
    return numerator / (denominator + eps), LinearAttentionState(s, z)


def linear_attention_rnn(
    q, k, v, feature_map: FeatureMap = elu_feature_map, eps: float = EPS, state: LinearAttentionState | None = None
) -> torch.Tensor:
    """Causal linear attention one token at a time with the recurrent state (..., n, d_v): the same numbers as
    causal_linear_attention, computed the way a decoder generates."""
    *lead, n, d = q.shape
    if state is None:
        state = LinearAttentionState.empty(
            tuple(lead), d, v.shape[-1], dtype=torch.promote_types(q.dtype, v.dtype), device=q.device
        )
    outs = []
    for t in range(n):
        out_t, state = linear_attention_step(state, q[..., t, :], k[..., t, :], v[..., t, :], feature_map, eps)
        outs.append(out_t)
    return torch.stack(outs, dim=-2)


# --- what a page shows -------------------------------------------------------------------------------------------


def implied_linear_weights(
    q, k, causal: bool = False, feature_map: FeatureMap = elu_feature_map, eps: float = EPS
) -> torch.Tensor:
    """The (..., n_q, n_k) attention matrix linear attention implies but never builds:
    A_ij = phi(q_i) . phi(k_j) / sum_j' phi(q_i) . phi(k_j') (j, j' <= i when causal). A @ V equals
    linear_attention (causal_linear_attention); only for display at small n."""
    kernel = feature_map(q) @ feature_map(k).transpose(-2, -1)
    if causal:
        n_q, n_k = kernel.shape[-2:]
        allowed = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril(n_k - n_q)
        kernel = kernel.masked_fill(~allowed, 0.0)
    return kernel / (kernel.sum(-1, keepdim=True) + eps)


def associativity_costs(n: int, d: int, d_v: int | None = None) -> dict[str, dict]:
    """Multiply-adds and the largest intermediate for the two orders of phi(Q) phi(K)^T V (one head, non-causal,
    normaliser included): 'quadratic' builds phi(Q) phi(K)^T (n x n) first, 'linear' builds phi(K)^T V (d x d_v)."""
    d_v = d if d_v is None else d_v
    return {
        "quadratic": {
            "first_product": "phi(Q) phi(K)^T",
            "intermediate_shape": (n, n),
            "intermediate_numbers": n * n,
            # n*n*d for the kernel matrix, n*n*d_v for multiplying it by V, n*n adds for the row sums
            "multiply_adds": n * n * d + n * n * d_v + n * n,
        },
        "linear": {
            "first_product": "phi(K)^T V",
            "intermediate_shape": (d, d_v),
            "intermediate_numbers": d * d_v,
            # n*d*d_v for phi(K)^T V, n*d*d_v for phi(Q) times it, n*d for z = sum phi(k), n*d for phi(q_i) . z
            "multiply_adds": 2 * n * d * d_v + 2 * n * d,
        },
    }
