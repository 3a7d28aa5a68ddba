"""exp(q·k) does factor: through a feature map with infinitely many coordinates (the kernel view of softmax).

Taylor: exp(x) = sum_m x^m / m!, and (q·k)^m = <q^(⊗m), k^(⊗m)> where q^(⊗m) is the m-fold tensor power of q
(d^m numbers: every product q_a1 q_a2 ... q_am). So with

    phi(x) = (x^(⊗0), x^(⊗1) / sqrt(1!), x^(⊗2) / sqrt(2!), ...)      (1 + d + d^2 + ... coordinates)

exp(q·k) = phi(q)·phi(k) exactly: the feature map exists, it is just infinite-dimensional. Cut at order M it has
sum_{m<=M} d^m coordinates and misses the tail sum_{m>M} (q·k)^m / m!, at most |x|^(M+1) e^|x| / (M+1)!.

Random features (Performer, Choromanski et al. 2021, arXiv:2009.14794) approximate it with r coordinates instead:
phi(x)_i = exp(w_i·x - |x|^2 / 2) / sqrt(r) with w_i ~ N(0, I_d) gives E[phi(q)·phi(k)] = exp(q·k), positive
everywhere, with an error that shrinks like 1 / sqrt(r). Linear attention's elu + 1 is a third, cheaper choice that
does not approximate exp at all: a different kernel.

Softmax attention uses exp(q·k / sqrt(d)); scaling q and k by d^(-1/4) each folds the 1/sqrt(d) in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch


def taylor_features(x: torch.Tensor, order: int) -> torch.Tensor:
    """The Taylor feature map cut at `order`, built explicitly: (..., d) -> (..., sum_{m<=order} d^m).
    Only for small d and order (d^order numbers per vector): the page counts these coordinates, it never builds
    them; tests build them to check taylor_kernel."""
    if order < 0:
        raise ValueError("order must be >= 0")
    power = torch.ones(*x.shape[:-1], 1, dtype=x.dtype, device=x.device)  # x^(⊗0): (..., 1)
    parts = [power]
    for m in range(1, order + 1):
        power = (power.unsqueeze(-1) * x.unsqueeze(-2)).flatten(-2)  # (..., d^(m-1)) -> (..., d^m)
        parts.append(power / math.sqrt(math.factorial(m)))
    return torch.cat(parts, dim=-1)


def taylor_kernel(q: torch.Tensor, k: torch.Tensor, order: int) -> torch.Tensor:
    """taylor_features(q) · taylor_features(k) without building them: sum_{m<=order} (q·k)^m / m!.
    q (..., n_q, d), k (..., n_k, d) -> (..., n_q, n_k)."""
    x = q @ k.transpose(-2, -1)
    term, total = torch.ones_like(x), torch.ones_like(x)
    for m in range(1, order + 1):
        term = term * x / m  # x^m / m!
        total = total + term
    return total


def taylor_feature_count(d: int, order: int) -> int:
    """Coordinates of taylor_features: 1 + d + d^2 + ... + d^order."""
    return sum(d**m for m in range(order + 1))


def random_features(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Positive random features (Performer): x (..., d), w (r, d) -> (..., r), exp(w_i·x - |x|^2 / 2) / sqrt(r)."""
    return torch.exp(x @ w.T - 0.5 * (x * x).sum(-1, keepdim=True)) / math.sqrt(w.shape[0])


def random_feature_kernel(q: torch.Tensor, k: torch.Tensor, r: int, seed: int = 0) -> torch.Tensor:
    """phi(q)·phi(k) with r random features drawn from `seed`: an unbiased estimate of exp(q·k), (..., n_q, n_k)."""
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(r, q.shape[-1], generator=g, dtype=q.dtype).to(q.device)
    return random_features(q, w) @ random_features(k, w).transpose(-2, -1)


def attention_weights(kernel: torch.Tensor) -> torch.Tensor:
    """Each row of a kernel matrix divided by its sum: the attention weights it defines (softmax for exp)."""
    return kernel / kernel.sum(-1, keepdim=True)


@dataclass(frozen=True)
class ExpKernelView:
    """How close finite feature maps get to softmax attention on n random queries and keys, against how many
    coordinates they use. Error: the largest difference between the attention weights a finite map gives (its
    kernel matrix, row-normalised) and softmax's, over all n x n pairs (None where it is exactly 0)."""

    d: int
    n: int
    spread: float
    largest_score: float  # max |q·k| / sqrt(d): the larger, the higher the Taylor order needed
    orders: list[int]
    taylor_counts: list[int]  # taylor_feature_count(d, order)
    taylor_error: list[float | None]
    random_counts: list[int]
    random_error: list[float | None]
    order_needed: int | None  # the smallest order from which the error stays below `target`
    target: float


@torch.no_grad()
def exp_kernel_view(
    d: int = 4,
    spread: float = 1.0,
    n: int = 16,
    max_order: int = 24,
    random_counts: tuple[int, ...] = (1, 4, 16, 64, 256, 1024, 4096, 16384),
    target: float = 1e-3,
    seed: int = 0,
) -> ExpKernelView:
    """q, k: n x d entries ~ N(0, spread^2), each scaled by d^(-1/4) so that q·k is softmax's q·k / sqrt(d)."""
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(n, d, generator=g, dtype=torch.float64) * spread * d**-0.25 for _ in range(2))
    exact = attention_weights(torch.exp(q @ k.T))  # (n, n) softmax(q·k / sqrt(d)) of the original q, k

    def error(kernel: torch.Tensor) -> float | None:
        e = float((attention_weights(kernel) - exact).abs().max())
        return e if e > 0 else None  # a log axis has no place for 0

    orders = list(range(max_order + 1))
    taylor_error = [error(taylor_kernel(q, k, m)) for m in orders]
    random_error = [error(random_feature_kernel(q, k, r, seed + 1)) for r in random_counts]
    below = [e is None or e < target for e in taylor_error]
    # the smallest order from which every higher one stays below target (low orders can dip below, then overshoot)
    needed = next((m for m in orders if all(below[m:])), None)
    return ExpKernelView(
        d=d,
        n=n,
        spread=spread,
        largest_score=float((q @ k.T).abs().max()),
        orders=orders,
        taylor_counts=[taylor_feature_count(d, m) for m in orders],
        taylor_error=taylor_error,
        random_counts=list(random_counts),
        random_error=random_error,
        order_needed=needed,
        target=target,
    )


# --- the kernel trick run backwards: when does a feature map exist? ----------------------------------------------------


PSD_SIMILARITIES = ("exp", "elu", "square", "tanh", "relu_dot")  # the page names them


def similarity_matrix(x: torch.Tensor, kind: str) -> torch.Tensor:
    """(n, n) s(x_i, x_j) for the points x (n, d), the same set as queries and keys:
    exp       exp(q·k / sqrt(d))       softmax's kernel: PSD, feature map infinite-dimensional
    elu       phi(q)·phi(k), phi = elu + 1   linear attention's: PSD by construction (a Gram of features)
    square    (q·k)^2                   PSD: phi(x) = the d^2 products x_a x_b
    tanh      tanh(q·k)                 not PSD: no feature map gives it
    relu_dot  max(q·k, 0)               not PSD (unlike phi = relu applied to q and k separately)"""
    s = x @ x.T
    if kind == "exp":
        return torch.exp(s / math.sqrt(x.shape[-1]))
    if kind == "elu":
        f = torch.nn.functional.elu(x) + 1
        return f @ f.T
    if kind == "square":
        return s**2
    if kind == "tanh":
        return torch.tanh(s)
    if kind == "relu_dot":
        return s.clamp_min(0)
    raise ValueError(f"kind must be one of {PSD_SIMILARITIES}")


@dataclass(frozen=True)
class PsdRow:
    kind: str
    min_eigenvalue: float
    max_eigenvalue: float

    @property
    def psd(self) -> bool:
        """All eigenvalues >= 0 up to float64 rounding (relative to the largest)."""
        return self.min_eigenvalue >= -1e-10 * max(abs(self.max_eigenvalue), 1.0)


def psd_view(n: int = 12, d: int = 4, seed: int = 0) -> list[PsdRow]:
    """Mercer's condition, checked on one Gram matrix per similarity: a feature map phi with s(q, k) = phi(q)·phi(k)
    exists only if every Gram matrix [s(x_i, x_j)] is positive semi-definite (no negative eigenvalue). One negative
    eigenvalue on some points is enough to rule a similarity out; a PSD matrix on some points is evidence, the
    proof is the formula (exp = sum of PSD powers; a Gram of features is PSD)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=torch.float64)
    rows = []
    for kind in PSD_SIMILARITIES:
        eig = torch.linalg.eigvalsh(similarity_matrix(x, kind))
        rows.append(PsdRow(kind, float(eig.min()), float(eig.max())))
    return rows
