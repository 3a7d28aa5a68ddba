"""PyTorch's scaled-dot-product-attention backends, side by side with the naive three-step version.

`F.scaled_dot_product_attention` dispatches to one of several kernels that compute the same softmax(QK^T/sqrt(d))V:

    flash      FlashAttention (Dao et al. 2022; FA2 on CUDA): tiles Q, K, V through on-chip memory with an online
               softmax, so the (n x n) score matrix never exists in memory. PyTorch also has a CPU version.
    efficient  the memory-efficient kernel (Rabe & Staats 2021, xFormers' cutlass kernel): also tiled, CUDA only.
    cudnn      NVIDIA cuDNN's fused attention (CUDA only, recent GPUs and cuDNN versions).
    math       PyTorch's composite of ordinary ops: builds the full score matrix, like the naive version.

`torch.nn.attention.sdpa_kernel(backend)` restricts the dispatcher to one kernel; when that kernel cannot take the
inputs (wrong device, dtype, head size...) the call fails, and on CUDA PyTorch first warns why. We record that
reason instead of guessing.

FLOPs: two matrix products of (n x d) by (d x n) and (n x n) by (n x d), 2 FLOPs per multiply-add:
4 * B * H * n^2 * d. With a causal mask only about half the (query, key) pairs are computed (n(n+1)/2 exactly);
we halve the count, the convention of FlashAttention's benchmarks. Softmax and scaling are not counted.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from core.results import load_device_runs
from core.sdpa import repeat_kv
from core.timing import peak_memory_delta, time_ms

BACKENDS = {
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "math": SDPBackend.MATH,
}
NAIVE = "naive"
RESULT_NAME = "bench_sdpa"  # results/bench_sdpa.json, written by benchmarks/bench_sdpa.py
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

# PyTorch's CPU dispatcher (aten/src/ATen/native/transformers/sdp_utils_cpp.cpp, select_sdp_backend_cpp) only
# considers the flash and math kernels; the other two have no CPU implementation, and on CPU it fails without
# a warning, so this is the one reason we state ourselves.
CPU_ONLY_REASON = (
    "no CPU implementation: PyTorch's CPU dispatcher only has the flash (CPU) and math kernels; "
    "this kernel is CUDA only"
)
# the reasons stated here (not PyTorch's own messages), with their words' locale key (sdpa_gqa.<key>)
REASON_KEYS = {CPU_ONLY_REASON: "reason_cpu_only"}


class BackendUnavailable(RuntimeError):
    """The chosen SDPA kernel cannot run these inputs on this device; str() says why."""


@dataclass(frozen=True)
class AttentionShape:
    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool = False
    dtype: str = "float32"

    def __post_init__(self):
        if min(self.batch, self.heads, self.seq_len, self.head_dim) < 1:
            raise ValueError("every dimension must be >= 1")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {sorted(DTYPES)}")

    @property
    def flops(self) -> float:
        return attention_flops(self.batch, self.heads, self.seq_len, self.head_dim, self.causal)

    def label(self) -> str:
        return (
            f"B={self.batch} H={self.heads} n={self.seq_len} d={self.head_dim}"
            f"{' causal' if self.causal else ''} {self.dtype}"
        )


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int, causal: bool = False) -> float:
    """4 * B * H * n^2 * d: QK^T and (weights)V, 2 FLOPs per multiply-add; halved for a causal mask."""
    flops = 4.0 * batch * heads * seq_len * seq_len * head_dim
    return flops / 2 if causal else flops


def make_qkv(shape: AttentionShape, device="cpu", seed: int = 0):
    """Random q, k, v (B, H, n, d), drawn on the CPU so every device gets the same numbers."""
    g = torch.Generator().manual_seed(seed)
    size = (shape.batch, shape.heads, shape.seq_len, shape.head_dim)
    return tuple(torch.randn(size, generator=g).to(device=device, dtype=DTYPES[shape.dtype]) for _ in range(3))


def naive_attention(q, k, v, causal: bool = False) -> torch.Tensor:
    """matmul -> softmax -> matmul, written out: the (n x n) scores and weights are both materialised."""
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        n_q, n_k = scores.shape[-2:]
        allowed = torch.ones(n_q, n_k, dtype=torch.bool, device=q.device).tril(n_k - n_q)
        scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def run_backend(name: str, q, k, v, causal: bool = False) -> torch.Tensor:
    """SDPA restricted to one kernel ('naive' runs naive_attention). Raises BackendUnavailable with the reason."""
    if name == NAIVE:
        return naive_attention(q, k, v, causal)
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; choose from {list(BACKENDS) + [NAIVE]}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with sdpa_kernel(BACKENDS[name]):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        except RuntimeError as err:
            if "out of memory" in str(err).lower():
                raise
            reason = _reason(name, q.device, caught, err)
    raise BackendUnavailable(reason)


def _reason(name: str, device: torch.device, caught, err: Exception) -> str:
    if device.type == "cpu" and name in ("efficient", "cudnn"):
        return CPU_ONLY_REASON
    said = [" ".join(str(w.message).split()) for w in caught]
    said = [s for s in said if "not used because" in s or "requires" in s or "only" in s] or said
    return "; ".join(dict.fromkeys(said)) or " ".join(str(err).split())


def availability(device="cpu", shape: AttentionShape | None = None) -> list[dict]:
    """For each backend: whether it runs this shape (a tiny one by default) on `device`, and if not, why."""
    shape = shape or AttentionShape(1, 2, 64, 64, dtype="float32" if torch.device(device).type == "cpu" else "float16")
    q, k, v = make_qkv(shape, device)
    rows = []
    for name in BACKENDS:
        try:
            run_backend(name, q, k, v, shape.causal)
            rows.append({"backend": name, "available": True, "reason": None})
        except BackendUnavailable as err:
            rows.append({"backend": name, "available": False, "reason": str(err)})
    return rows


def _is_oom(err: Exception) -> bool:
    return isinstance(err, torch.OutOfMemoryError) or "out of memory" in str(err).lower()


def measure(
    name: str,
    shape: AttentionShape,
    device="cpu",
    reps: int = 5,
    budget_s: float | None = None,
    reference: torch.Tensor | None = None,
    qkv=None,
) -> dict:
    """One backend on one shape: median ms, TFLOP/s, peak extra memory, and the largest difference from
    `reference` (the naive output) when given. status: ok / unavailable / out of memory."""
    return _measure(name, shape, device, reps, budget_s, reference, qkv)[0]


def _measure(name, shape, device, reps, budget_s, reference, qkv) -> tuple[dict, torch.Tensor | None]:
    device = torch.device(device)
    q, k, v = qkv if qkv is not None else make_qkv(shape, device)
    row = {
        "backend": name,
        **asdict(shape),
        "flops": shape.flops,
        "status": "ok",
        "reason": None,
        "ms": None,
        "tflops": None,
        "peak_bytes": None,
        "memory_method": None,
        "max_abs_diff_vs_naive": None,
    }
    call: Callable[[], torch.Tensor] = lambda: run_backend(name, q, k, v, shape.causal)  # noqa: E731
    try:
        out, peak, how = peak_memory_delta(call, device)  # doubles as the warm-up call of time_ms
        ms = time_ms(call, reps=reps, warmup=0, device=device, budget_s=budget_s)
    except BackendUnavailable as err:
        row.update(status="unavailable", reason=str(err))
        return row, None
    except (RuntimeError, MemoryError) as err:
        if not _is_oom(err):
            raise
        row.update(status="out of memory", reason=" ".join(str(err).split())[:300])
        if device.type == "cuda":
            torch.cuda.empty_cache()
        return row, None
    row.update(ms=ms, tflops=shape.flops / (ms * 1e-3) / 1e12, peak_bytes=peak, memory_method=how)
    if reference is not None:
        row["max_abs_diff_vs_naive"] = float((out.float() - reference.float()).abs().max())
    return row, out


def benchmark(
    shapes: list[AttentionShape],
    device="cpu",
    reps: int = 5,
    budget_s: float | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> list[dict]:
    """Every shape: the naive version first (its output is the reference), then each SDPA backend."""
    rows, names = [], [NAIVE, *BACKENDS]
    total, done = len(shapes) * len(names), 0
    for shape in shapes:
        qkv = make_qkv(shape, device)
        reference = None
        for name in names:
            if progress:
                progress(done / total, f"{name}: {shape.label()}")
            row, out = _measure(name, shape, device, reps, budget_s, reference, qkv)
            if name == NAIVE:
                reference = out  # None when the naive version did not fit in memory
            rows.append(row)
            done += 1
        del qkv, reference
    if progress:
        progress(1.0, "done")
    return rows


def gqa_check(
    heads: int = 8, kv_heads: int = 2, seq_len: int = 16, head_dim: int = 16, causal: bool = True, seed: int = 0
) -> dict:
    """GQA is MHA whose key/value heads are repeated: torch's SDPA with enable_gqa=True on (H_kv) K/V against
    plain SDPA on K/V repeated so that query head h reads key/value head h // (H / H_kv). The same repetition
    in the wrong order (tiling: head h reads h % H_kv) is reported too, to show the grouping is what matters."""
    if heads % kv_heads:
        raise ValueError("heads must divide by kv_heads")
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(1, heads, seq_len, head_dim, generator=g)
    k, v = (torch.randn(1, kv_heads, seq_len, head_dim, generator=g) for _ in range(2))
    gqa = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    rep = heads // kv_heads
    mha = F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), is_causal=causal)
    tiled = F.scaled_dot_product_attention(q, k.repeat(1, rep, 1, 1), v.repeat(1, rep, 1, 1), is_causal=causal)
    return {
        "max_abs_diff_repeated": float((gqa - mha).abs().max()),
        "max_abs_diff_wrong_order": float((gqa - tiled).abs().max()),
        "kv_numbers_gqa": k.numel() + v.numel(),
        "kv_numbers_mha": 2 * repeat_kv(k, rep).numel(),
    }


def _is_run(run: dict) -> bool:
    return isinstance(run["rows"], list) and isinstance(run["command"], str)


def load_results(path: str | Path | None = None) -> dict | None:
    """The committed output of benchmarks/bench_sdpa.py: {device: run dict, or a string saying why it was not
    measured}, this machine's runs with the committed GPU run in place of "cuda"'s sentence
    (core.results.load_device_runs). Entries that are neither are dropped; None when there is none. With `path`,
    that file alone."""
    return load_device_runs(RESULT_NAME, _is_run, path)
