"""The math of /sdpa-steps: scaled dot-product attention one step at a time, and why the scores are divided by
sqrt(d_k).

    scores  = Q K^T                      (n_q, n_k)   one dot product per (query, key) pair
    scaled  = scores / sqrt(d_k)
    weights = softmax(scaled) over keys  (n_q, n_k)   each row sums to 1
    output  = weights V                  (n_q, d_v)   each query gets a weighted mix of the value rows

`sdpa_steps` returns every intermediate for small, user-edited matrices, plus torch's fused
`scaled_dot_product_attention` run on the same input, so a page can show that the four steps are exactly what
SDPA computes. Everything is float64: the numbers on screen are then limited by display rounding only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from .sdpa import entropy
from .state import Choice, Float, Int, State

# The worked example used in many tutorials (and pinned by tests/test_sdpa_steps.py).
CLASSIC_Q = [[1.0, 2.0], [3.0, 4.0]]
CLASSIC_K = [[4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]
CLASSIC_V = [[10.0, 11.0, 12.0], [13.0, 14.0, 15.0], [16.0, 17.0, 18.0]]

MAX_ABS_INPUT = 1e6  # larger entries would let Q K^T overflow the display and hide the point of the page


# --- the classic walkthroughs, preloaded (each selectable on the page and in its link) -------------------------


@dataclass(frozen=True)
class Preset:
    """Q, K, V of one walkthrough, with the tokens its rows stand for (None: rows are just numbered)."""

    q: np.ndarray  # (n, d_k)
    k: np.ndarray  # (n, d_k)
    v: np.ndarray  # (n, d_v)
    tokens: tuple[str, ...] | None = None

    @property
    def dims(self) -> tuple[int, int]:
        return self.q.shape[1], self.v.shape[1]


STUDENT_TOKENS = ("i", "am", "a", "student")
STUDENT_KEY_ONES = (64, 48, 32, 56)  # key t is 1 on its first STUDENT_KEY_ONES[t] of 64 dimensions, 0 after
NINE_TOKENS = ("the", "student", "reads", "a", "book", "in", "the", "quiet", "library")


def student_preset() -> Preset:
    """The walkthrough "i am a student" at the paper's width d_k = d_v = 64. Every query is twice its token's key, so
    q_i · k_j = 2 min(ones_i, ones_j): q_i · k_i = 2 x 64 = 128 and 128 / sqrt(64) = 16; the row of "i" scales to
    [16, 12, 8, 14]. Value t is t + 1 in every dimension, so the output shows the reweighting as one number."""
    k = np.array([[1.0] * m + [0.0] * (64 - m) for m in STUDENT_KEY_ONES])
    v = np.array([[t + 1.0] * 64 for t in range(4)])
    return Preset(q=2 * k, k=k, v=v, tokens=STUDENT_TOKENS)


def nine_preset(seed: int = 0) -> Preset:
    """A 9-token sentence at d_k = d_v = 64: 9 queries, 81 scores, each row one product (1 x 64)(64 x 9). Entries
    drawn from N(0, 1) with a fixed seed, rounded to one decimal so they can be typed and checked."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(9, 64, generator=g, dtype=torch.float64).mul(10).round().div(10).numpy() for _ in range(3))
    return Preset(q=q, k=k, v=v, tokens=NINE_TOKENS)


def ones_preset() -> Preset:
    """The all-ones embedding at d_k = 4 (W_Q = W_K = W_V = identity): every score is 4, scaled 4 / sqrt(4) = 2,
    every weight 1/4, and the output is ones again: identical tokens cannot tell each other apart."""
    ones = np.ones((4, 4))
    return Preset(q=ones, k=ones.copy(), v=ones.copy(), tokens=STUDENT_TOKENS)


PRESETS = {
    "classic": lambda: Preset(q=np.array(CLASSIC_Q), k=np.array(CLASSIC_K), v=np.array(CLASSIC_V)),
    "student": student_preset,
    "nine": nine_preset,
    "ones": ones_preset,
}


@dataclass(frozen=True)
class SdpaSteps:
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray  # Q K^T
    scale: float  # 1 / sqrt(d_k)
    scaled: np.ndarray  # Q K^T / sqrt(d_k)
    weights: np.ndarray  # softmax over keys
    output: np.ndarray  # weights V
    sdpa_output: np.ndarray  # torch.nn.functional.scaled_dot_product_attention(Q, K, V)

    @property
    def sqrt_d_k(self) -> float:
        """The divisor sqrt(d_k) (= 1 / scale)."""
        return 1.0 / self.scale

    @property
    def max_abs_diff(self) -> float:
        """Largest |step-by-step output - SDPA output|."""
        return float(np.abs(self.output - self.sdpa_output).max())

    @property
    def matches_sdpa(self) -> bool:
        """The step-by-step output is torch's SDPA up to float64 rounding (the page's check)."""
        return self.max_abs_diff <= 1e-9


def input_problems(q, k, v) -> list[str]:
    """What is wrong with Q, K, V as attention inputs, as codes a page translates (empty list = fine):
    'empty'       a matrix has no rows or no columns
    'not_numeric' a cell is blank or not a number
    'not_finite'  a cell is inf/NaN or larger in size than MAX_ABS_INPUT
    'qk_width'    Q and K have different widths (a query and a key must have the same length d_k to be dotted)
    'kv_rows'     K and V have different numbers of rows (every key needs exactly one value)
    """
    problems = []
    arrays = []
    for m in (q, k, v):
        try:
            a = np.asarray(m, dtype=np.float64)
        except (TypeError, ValueError):
            problems.append("not_numeric")
            arrays.append(None)
            continue
        if a.ndim != 2 or 0 in a.shape:
            problems.append("empty")
            arrays.append(None)
            continue
        if not np.isfinite(a).all() or (np.abs(a[np.isfinite(a)]) > MAX_ABS_INPUT).any():
            # pandas turns a blank editor cell into NaN: say "not a number" for those, "too large" otherwise
            problems.append("not_numeric" if np.isnan(a).any() else "not_finite")
        arrays.append(a)
    qa, ka, va = arrays
    if qa is not None and ka is not None and qa.shape[1] != ka.shape[1]:
        problems.append("qk_width")
    if ka is not None and va is not None and ka.shape[0] != va.shape[0]:
        problems.append("kv_rows")
    return list(dict.fromkeys(problems))  # unique, in order


def sdpa_steps(q, k, v) -> SdpaSteps:
    """Every intermediate of softmax(Q K^T / sqrt(d_k)) V for 2-D Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v).
    Raises ValueError with the problem codes of `input_problems` when the input is not valid."""
    problems = input_problems(q, k, v)
    if problems:
        raise ValueError(", ".join(problems))
    qt, kt, vt = (torch.tensor(np.array(m, dtype=np.float64)) for m in (q, k, v))
    scores = qt @ kt.T
    scale = 1.0 / math.sqrt(qt.shape[-1])
    scaled = scores * scale
    weights = torch.softmax(scaled, dim=-1)
    output = weights @ vt
    fused = F.scaled_dot_product_attention(qt[None, None], kt[None, None], vt[None, None])[0, 0]
    return SdpaSteps(
        q=qt.numpy(),
        k=kt.numpy(),
        v=vt.numpy(),
        scores=scores.numpy(),
        scale=scale,
        scaled=scaled.numpy(),
        weights=weights.numpy(),
        output=output.numpy(),
        sdpa_output=fused.numpy(),
    )


MAX_TERMS_WRITTEN = 8  # wider dot products are written with their first and last products only


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def worked_lines(s: SdpaSteps) -> dict[str, str]:
    """The numbers of query 0 (and key 0) written out, one line per step: what the page prints under each step
    so the reader can redo it by hand. Math notation only, no words: the same in every language."""
    products = [f"{_fmt(a)}×{_fmt(b)}" for a, b in zip(s.q[0], s.k[0])]
    if len(products) > MAX_TERMS_WRITTEN:  # d_k = 64: the first and last products, and how many in all
        products = [*products[:3], f"… ({len(products)} products) …", *products[-2:]]
    terms = " + ".join(products)
    row = ", ".join(_fmt(x) for x in s.scaled[0])
    mix = " + ".join(f"{w:.4f}×v{j}" for j, w in enumerate(s.weights[0]))
    out = [_fmt(x) for x in s.output[0]]
    if len(out) > MAX_TERMS_WRITTEN:
        out = [*out[:3], f"… ({len(out)} numbers) …", *out[-2:]]
    return {
        "dot": f"score[q0, k0] = q0 · k0 = {terms} = {_fmt(s.scores[0, 0])}",
        "scale": f"{_fmt(s.scores[0, 0])} × {s.scale:.6f} = {_fmt(s.scaled[0, 0])}",
        "softmax": f"softmax([{row}]) = [{', '.join(f'{w:.6f}' for w in s.weights[0])}]",
        "mix": f"out[q0] = {mix} = [{', '.join(out)}]",
    }


@dataclass(frozen=True)
class StepsView:
    """Everything the step-by-step part shows for the edited Q, K, V: the steps (None when the input is not
    valid), what is wrong with the input, labels, and the worked lines."""

    problems: list[tuple[str, int, int]]  # (code of input_problems, a, b): the two sizes that disagree, or 0, 0
    truncated: bool  # some matrix had more than max_rows rows: only the first max_rows are used
    d_k: int
    steps: SdpaSteps | None = None
    q_labels: list[str] = field(default_factory=list)  # q0, q1, ...
    k_labels: list[str] = field(default_factory=list)  # k0, k1, ...
    v_labels: list[str] = field(default_factory=list)  # V·0, V·1, ... (columns of V and of the output)
    lines: dict[str, str] = field(default_factory=dict)  # worked_lines
    row_sums: np.ndarray | None = None  # (n_q,) every row of the weights sums to 1

    @property
    def n_scores(self) -> int:
        """n_q x n_k dot products: one per (query, key) pair; one query's row is (1 x d_k)(d_k x n_k)."""
        return 0 if self.steps is None else self.steps.scores.size


def _token(tokens, i: int) -> str:
    return f" {tokens[i]}" if tokens is not None and i < len(tokens) else ""


def _shape(m) -> tuple[int, int]:
    shape = np.shape(m)
    return (shape[0], shape[1]) if len(shape) == 2 else (0, 0)


def steps_view(q, k, v, max_rows: int = 12, tokens=None) -> StepsView:
    """The step-by-step view of Q (n_q, d_k), K (n_k, d_k), V (n_k, d_v), cut to max_rows rows each (the
    matrices stay readable). Never raises on bad input: the problems are returned for the page to explain.
    `tokens` (one per row, as in a preset) are added to the row labels: q0 i, k0 i, ..."""
    truncated = max(len(q), len(k), len(v)) > max_rows
    q, k, v = q[:max_rows], k[:max_rows], v[:max_rows]
    (_, q_w), (k_rows, k_w), (v_rows, _) = _shape(q), _shape(k), _shape(v)
    sizes = {"qk_width": (q_w, k_w), "kv_rows": (k_rows, v_rows)}
    problems = [(code, *sizes.get(code, (0, 0))) for code in input_problems(q, k, v)]
    if problems:
        return StepsView(problems=problems, truncated=truncated, d_k=q_w)
    s = sdpa_steps(q, k, v)
    n_q, n_k = s.scores.shape
    return StepsView(
        problems=[],
        truncated=truncated,
        d_k=q_w,
        steps=s,
        q_labels=[f"q{i}" + _token(tokens, i) for i in range(n_q)],
        k_labels=[f"k{j}" + _token(tokens, j) for j in range(n_k)],
        v_labels=[f"V·{j}" for j in range(s.output.shape[1])],
        lines=worked_lines(s),
        row_sums=s.weights.sum(1),
    )


@dataclass(frozen=True)
class KeyComparison:
    """One query against every key: the dot products the softmax ranks, beside the cosines that say which key
    points most along the query. The two rankings differ when the keys differ in length."""

    dots: list[float]  # q . k_j
    cosines: list[float]  # q . k_j / (|q| |k_j|)
    by_score: int  # the key with the largest dot product: the one the softmax weighs most
    by_direction: int  # the key with the largest cosine: the one closest in direction


def compare_keys(query, keys) -> KeyComparison:
    """`query` (d,) against `keys` (n, d). A zero vector has cosine 0 with everything."""
    q, k = np.asarray(query, dtype=np.float64), np.asarray(keys, dtype=np.float64)
    dots = k @ q
    norms = np.linalg.norm(k, axis=1) * np.linalg.norm(q)
    cosines = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return KeyComparison(
        [float(x) for x in dots], [float(x) for x in cosines], int(np.argmax(dots)), int(np.argmax(cosines))
    )


def resize(matrix, n_rows: int, n_cols: int) -> np.ndarray:
    """`matrix` cut or zero-padded to (n_rows, n_cols): the editors keep the user's numbers when a size changes."""
    a = np.asarray(matrix, dtype=np.float64)
    out = np.zeros((n_rows, n_cols))
    r, c = min(n_rows, a.shape[0]), min(n_cols, a.shape[1])
    out[:r, :c] = a[:r, :c]
    return out


# --- why sqrt(d_k): softmax saturation --------------------------------------------------------------------


@dataclass(frozen=True)
class Saturation:
    d_k: np.ndarray  # (m,)
    entropy_scaled: np.ndarray  # (m,) mean entropy (nats) of softmax(q.k / sqrt(d_k)) rows
    entropy_unscaled: np.ndarray  # (m,) mean entropy of softmax(q.k) rows
    max_weight_scaled: np.ndarray  # (m,) mean largest weight in a row (1.0 = one key takes everything)
    max_weight_unscaled: np.ndarray
    max_entropy: float  # ln(n_keys): the entropy of uniform attention
    n_keys: int
    n_samples: int


def random_scores(d_k: int, n_keys: int, n_samples: int, generator: torch.Generator) -> torch.Tensor:
    """(n_samples, n_keys) unscaled scores q.k_j, every component of q and of each k_j drawn from N(0, 1).
    Each score is a sum of d_k products of unit variance, so its variance is d_k (standard deviation sqrt(d_k)).

    Drawn exactly in distribution but without materialising the keys: given q, the k_j are independent and
    rotation-invariant, so q.k_j = |q| z_j with z_j ~ N(0, 1) independent. That costs d_k + n_keys numbers per
    row instead of d_k * n_keys (d_k = 1024 with 64 keys stays instant)."""
    q = torch.randn(n_samples, d_k, generator=generator, dtype=torch.float64)
    z = torch.randn(n_samples, n_keys, generator=generator, dtype=torch.float64)
    return q.norm(dim=-1, keepdim=True) * z


def softmax_entropy_vs_dk(d_ks, n_keys: int = 16, seed: int = 0, n_samples: int = 512) -> Saturation:
    """For each d_k: mean over n_samples random rows of the softmax entropy, with and without the 1/sqrt(d_k)
    scaling. Without it the scores spread as sqrt(d_k), the largest one wins by a wide margin, and the
    softmax saturates towards a one-hot row (entropy -> 0, vanishing gradients); with it the scores keep
    unit variance and the entropy stays put whatever d_k is."""
    if n_keys < 1 or n_samples < 1:
        raise ValueError("n_keys and n_samples must be positive")
    d_ks = [int(d) for d in d_ks]
    if any(d < 1 for d in d_ks):
        raise ValueError("every d_k must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    rows = {"es": [], "eu": [], "ms": [], "mu": []}
    for d_k in d_ks:
        raw = random_scores(d_k, n_keys, n_samples, gen)
        w_scaled = torch.softmax(raw / math.sqrt(d_k), dim=-1)
        w_unscaled = torch.softmax(raw, dim=-1)
        rows["es"].append(entropy(w_scaled).mean().item())
        rows["eu"].append(entropy(w_unscaled).mean().item())
        rows["ms"].append(w_scaled.max(-1).values.mean().item())
        rows["mu"].append(w_unscaled.max(-1).values.mean().item())
    return Saturation(
        d_k=np.array(d_ks),
        entropy_scaled=np.array(rows["es"]),
        entropy_unscaled=np.array(rows["eu"]),
        max_weight_scaled=np.array(rows["ms"]),
        max_weight_unscaled=np.array(rows["mu"]),
        max_entropy=math.log(n_keys),
        n_keys=n_keys,
        n_samples=n_samples,
    )


def example_row(d_k: int, n_keys: int, seed: int = 0) -> dict[str, np.ndarray]:
    """One random row of scores and its softmax with and without scaling (for a bar chart)."""
    gen = torch.Generator().manual_seed(seed)
    raw = random_scores(d_k, n_keys, 1, gen)[0]
    return {
        "scores": raw.numpy(),
        "weights_scaled": torch.softmax(raw / math.sqrt(d_k), -1).numpy(),
        "weights_unscaled": torch.softmax(raw, -1).numpy(),
    }


# --- why sqrt(d_k): the variance of a dot product -------------------------------------------------------------


@dataclass(frozen=True)
class DotVariance:
    d_k: int
    n_samples: int
    var_raw: float  # sample variance of q·k
    var_scaled: float  # sample variance of q·k / sqrt(d_k)
    # the cosine-similarity analogy, on the same pairs: cos = q·k / (|q| |k|) divides each pair by its own lengths
    mean_norm: float = 0.0  # mean |q|: about sqrt(d_k)
    mean_norm_product: float = 0.0  # mean |q| |k|: about d_k, not sqrt(d_k)
    var_cosine: float = 0.0  # sample variance of the cosine: about 1 / d_k


def dot_product_variance(
    d_k: int, n_samples: int = 2000, seed: int = 0, mean: float = 0.0, std: float = 1.0
) -> DotVariance:
    """Sample variance of q·k over n_samples pairs of explicit vectors, every entry of q and k independent
    N(mean, std^2). The claim behind the scaling holds under exactly this assumption with mean 0, std 1:
    each product q_i k_i then has mean 0 and variance 1, the d_k products are independent, so var(q·k) = d_k
    and var(q·k / sqrt(d_k)) = 1. In general var(q·k) = d_k (std^4 + 2 std^2 mean^2): the tests use this to
    show that the assumption matters."""
    if d_k < 1 or n_samples < 2:
        raise ValueError("d_k must be >= 1 and n_samples >= 2")
    gen = torch.Generator().manual_seed(seed)
    q = mean + std * torch.randn(n_samples, d_k, generator=gen, dtype=torch.float64)  # (n_samples, d_k)
    k = mean + std * torch.randn(n_samples, d_k, generator=gen, dtype=torch.float64)
    dots = (q * k).sum(-1)  # (n_samples,)
    q_norm, k_norm = q.norm(dim=-1), k.norm(dim=-1)
    return DotVariance(
        d_k=d_k,
        n_samples=n_samples,
        var_raw=dots.var().item(),
        var_scaled=(dots / math.sqrt(d_k)).var().item(),
        mean_norm=q_norm.mean().item(),
        mean_norm_product=(q_norm * k_norm).mean().item(),
        var_cosine=(dots / (q_norm * k_norm).clamp_min(1e-300)).var().item(),
    )


SAT_DKS = tuple(2**i for i in range(11))  # 1 .. 1024: the d_k of the entropy curve
SAT_SAMPLES = 512  # random rows per d_k
VAR_SAMPLES = 2000  # pairs (q, k) for the measured variance


@dataclass(frozen=True)
class SaturationView:
    """The "why sqrt(d_k)" part at one chosen d_k and number of keys."""

    d_k: int
    n_keys: int
    curve: Saturation  # over SAT_DKS and the chosen d_k
    index: int  # of the chosen d_k in curve.d_k
    key_labels: list[str]  # k0 .. k{n-1}
    row: dict[str, np.ndarray]  # example_row at the chosen d_k
    variance: DotVariance  # measured at the chosen d_k

    @property
    def root_d_k(self) -> float:
        """√d_k: what scaled attention divides every score by."""
        return math.sqrt(self.d_k)

    @property
    def inv_d_k(self) -> float:
        return 1 / self.d_k


def saturation_view(d_k: int, n_keys: int, seed: int = 0) -> SaturationView:
    d_ks = sorted(set(SAT_DKS) | {int(d_k)})
    return SaturationView(
        d_k=int(d_k),
        n_keys=n_keys,
        curve=softmax_entropy_vs_dk(d_ks, n_keys=n_keys, seed=seed, n_samples=SAT_SAMPLES),
        index=d_ks.index(int(d_k)),
        key_labels=[f"k{j}" for j in range(n_keys)],
        row=example_row(d_k, n_keys, seed),
        variance=dot_product_variance(d_k, VAR_SAMPLES, seed),
    )


# --- Q, K, V as a lookup: a dict's hard lookup beside attention's soft one ------------------------------------

# Four keys of width d_k = 4, unit length, in two similar pairs (0 ~ 1, 2 ~ 3), each with a number as its value.
# A dict finds the key equal to the query and returns its value; attention scores the query against every key
# and returns the softmax-weighted mix of all values. Unit keys make the exact match the best score (q·k <= 1
# with equality only for k = q), so a low temperature turns the soft lookup into the hard one.
LOOKUP_KEYS = (
    (1.0, 0.6, 0.0, 0.0),
    (0.6, 1.0, 0.0, 0.0),
    (0.0, 0.0, 1.0, 0.6),
    (0.0, 0.0, 0.6, 1.0),
)
LOOKUP_VALUES = (3.0, 5.0, 20.0, 40.0)
LOOKUP_OTHER = (1.0, 0.8, 0.1, 0.0)  # a query equal to no key: between keys 0 and 1, a little towards key 2
LOOKUP_TAUS = tuple(float(x) for x in np.round(np.logspace(-2, 1, 61), 6))  # 0.01 .. 10 for the curve


def _unit(rows) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float64)
    return a / np.linalg.norm(a, axis=-1, keepdims=True)


def soft_lookup(query, keys, values, tau: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores q·k_j, weights softmax(scores / tau), result weights · values) for one query (d_k,), keys
    (n, d_k), values (n,) or (n, d_v). tau = sqrt(d_k) is attention's scaling; tau -> 0 gives the argmax key."""
    if not tau > 0:
        raise ValueError("tau must be > 0")
    q, k, v = (torch.tensor(np.asarray(m, dtype=np.float64)) for m in (query, keys, values))
    scores = k @ q  # (n,)
    weights = torch.softmax(scores / tau, dim=-1)
    return scores.numpy(), weights.numpy(), (weights @ v).numpy()


def hard_lookup(query, keys, values):
    """What a dict does: the value of the key equal to the query (exact equality, no similarity), else None
    (Python raises KeyError)."""
    table = {tuple(np.asarray(k, dtype=np.float64).tolist()): v for k, v in zip(keys, values)}
    return table.get(tuple(np.asarray(query, dtype=np.float64).tolist()))


@dataclass(frozen=True)
class LookupView:
    """The lookup part of /sdpa-steps for one query and one temperature."""

    names: list[str]  # the keys' names (words from the page)
    keys: np.ndarray  # (n, d_k) unit rows
    values: np.ndarray  # (n,)
    query: np.ndarray  # (d_k,)
    query_index: int | None  # the key the query equals, None for a query in no key
    tau: float
    d_k: int
    scores: np.ndarray  # (n,) q·k_j
    weights: np.ndarray  # (n,) softmax(scores / tau)
    hard_weights: np.ndarray  # (n,) one-hot on the matching key, zeros when none matches
    soft: float  # weights · values
    hard: float | None  # the dict's answer, None = KeyError
    sdpa: float  # torch's scaled_dot_product_attention(q, K, V, scale=1/tau): the same soft result
    taus: np.ndarray  # (m,) temperatures of the curve
    soft_by_tau: np.ndarray  # (m,) the soft result at each
    code: str  # the dict and the lookup as Python, with the names
    mix: str  # the soft result written out

    @property
    def gap(self) -> float | None:
        """How far the soft result is from the dict's answer (None when the dict raises KeyError)."""
        return None if self.hard is None else abs(self.soft - self.hard)

    @property
    def nearest(self) -> int:
        """The key with the largest score: the one whose value the soft result tends to as tau -> 0 (the matching
        key when there is one; the most similar key for a query equal to no key, where the dict raises KeyError)."""
        return int(np.argmax(self.scores))


def lookup_view(query_index: int | None, tau: float, names) -> LookupView:
    """query_index: the key the query equals (0 .. 3), or None for LOOKUP_OTHER, a query equal to no key."""
    names = [str(n) for n in names]
    if len(names) != len(LOOKUP_KEYS):
        raise ValueError(f"need {len(LOOKUP_KEYS)} names")
    keys, values = _unit(LOOKUP_KEYS), np.array(LOOKUP_VALUES)
    query = keys[query_index] if query_index is not None else _unit(LOOKUP_OTHER)
    scores, weights, soft = soft_lookup(query, keys, values, tau)
    hard = hard_lookup(query, keys, values)
    hard_weights = np.zeros(len(keys))
    if query_index is not None:
        hard_weights[query_index] = 1.0
    q, k, v = (torch.tensor(m)[None, None] for m in (query[None], keys, values[:, None]))
    sdpa = F.scaled_dot_product_attention(q, k, v, scale=1.0 / tau)[0, 0, 0, 0].item()
    curve = np.array([soft_lookup(query, keys, values, t)[2] for t in LOOKUP_TAUS])
    entries = ", ".join(f'"{n}": {_fmt(x)}' for n, x in zip(names, values))
    asked = f'"{names[query_index]}"' if query_index is not None else "q"  # q: a vector equal to no key
    answer = f"# → {_fmt(hard)}" if hard is not None else "# KeyError"
    mix = " + ".join(f"{w:.4f}×{_fmt(x)}" for w, x in zip(weights, values))
    return LookupView(
        names=names,
        keys=keys,
        values=values,
        query=query,
        query_index=query_index,
        tau=float(tau),
        d_k=keys.shape[1],
        scores=scores,
        weights=weights,
        hard_weights=hard_weights,
        soft=float(soft),
        hard=None if hard is None else float(hard),
        sdpa=sdpa,
        taus=np.array(LOOKUP_TAUS),
        soft_by_tau=curve,
        code=f"table = {{{entries}}}\ntable[{asked}]  {answer}",
        mix=f"softmax(q·K / {tau:g}) · V = {mix} = {_fmt(soft)}",
    )


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

MAX_WIDTH = 64  # d_k and d_v of the editors: the paper's d_k = d_v = 64
MAX_ROWS = 12  # rows of Q, K, V used: matrices stay readable
LOOKUP_OTHER_KEY = "other"  # the lookup's query equal to no key

STATE = State(
    Choice("lq", "0", options=(*(str(i) for i in range(len(LOOKUP_KEYS))), LOOKUP_OTHER_KEY)),
    Float("tau", 2.0, 0.01, 4.0, step=0.01),
    Choice("preset", "classic", options=tuple(PRESETS)),
    Int("dk", lambda c: PRESETS[c.preset]().dims[0], 1, MAX_WIDTH),
    Int("dv", lambda c: PRESETS[c.preset]().dims[1], 1, MAX_WIDTH),
    Int("sdk", 64, 1, 1024),
    Int("keys", 16, 2, 64),
)


def preset_view(preset: str, d_k: int, d_v: int) -> StepsView:
    """The four steps of a walkthrough as the page starts it: the preset's matrices cut or zero-padded to the
    link's widths (the editors' start before any edit)."""
    p = PRESETS[preset]()
    q, k, v = (resize(m, len(m), w) for m, w in ((p.q, d_k), (p.k, d_k), (p.v, d_v)))
    return steps_view(q, k, v, max_rows=MAX_ROWS, tokens=p.tokens)
