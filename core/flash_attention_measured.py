"""FlashAttention's claimed speed-up beside GPU figures this project measured.

Dao et al. 2022 report FlashAttention 2-4x faster than standard attention on GPUs; the study material's benchmark
shape is B = 4, H = 32, N = 4096, D = 128 (float16, and float32 in the code it times). The committed H200 run of
benchmarks/bench_sdpa.py (results/gpu-h200-2026-11-27/, copied with its README from the team's shared folder: this
machine has no GPU) times PyTorch's flash kernel and standard attention (naive: matmul, softmax, matmul) on the
same inputs at B = 2, H = 16, N = 1,024-16,384, D = 64 and 128.
"""

from __future__ import annotations

from dataclasses import dataclass

from .results import gpu_result_name
from .sdpa_gqa import backends as sb

PAPER_CLAIM = (2.0, 4.0)  # "2-4x faster" than standard attention
MATERIAL_SHAPE = {"batch": 4, "heads": 32, "seq_len": 4096, "head_dim": 128}
GPU_RESULT = gpu_result_name(sb.RESULT_NAME)  # results/<this>.json, {"cuda": run}, read by sb.load_results


# Why a backend has no time, as the page's word for it: benchmarks/bench_sdpa.py records "ok", "unavailable" (the
# kernel cannot take these inputs) or "out of memory" (core.sdpa_gqa.backends.measure). Any other status, or no row
# at all, is "other": the page says no time was recorded rather than show a status it has no words for.
WHY = {"unavailable": "unavailable", "out of memory": "out_of_memory"}


def _why(row: dict | None) -> str | None:
    """None when `row` has a time; else why not (a value of WHY, or "other")."""
    if row is not None and row["status"] == "ok":
        return None
    return WHY.get(row["status"], "other") if row is not None else "other"


@dataclass(frozen=True)
class MeasuredSpeedup:
    batch: int
    heads: int
    seq_len: int
    head_dim: int
    causal: bool
    dtype: str
    naive_ms: float | None  # None: standard attention has no time here (naive_reason says why)
    flash_ms: float | None  # None: the flash kernel has no time here (flash_reason)
    efficient_ms: float | None
    flash_reason: str | None = None  # when the time is None: "unavailable", "out_of_memory" or "other" (WHY)
    naive_reason: str | None = None
    efficient_reason: str | None = None

    @property
    def flash_speedup(self) -> float | None:
        return None if self.naive_ms is None or self.flash_ms is None else self.naive_ms / self.flash_ms

    @property
    def efficient_speedup(self) -> float | None:
        return None if self.naive_ms is None or self.efficient_ms is None else self.naive_ms / self.efficient_ms

    @property
    def within_claim(self) -> str | None:
        """'below', 'within' or 'above' the paper's 2-4x (None when flash or standard attention has no time)."""
        x = self.flash_speedup
        if x is None:
            return None
        return "below" if x < PAPER_CLAIM[0] else "above" if x > PAPER_CLAIM[1] else "within"


def _ms(rows: list[dict], backend: str, key: tuple) -> dict | None:
    return next((r for r in rows if r["backend"] == backend and _shape(r) == key), None)


def _shape(r: dict) -> tuple:
    return (r["batch"], r["heads"], r["seq_len"], r["head_dim"], bool(r["causal"]), r["dtype"])


def measured_speedups(run: dict) -> list[MeasuredSpeedup]:
    """One row per shape the run holds, in its order: the standard, flash and memory-efficient times, and each
    kernel's speed-up over standard attention (naive ms / kernel ms). Where standard attention has no time (on a
    GPU it runs out of memory first, at the longest sequences) the kernels' times stay, without a speed-up."""
    rows = run["rows"]
    out = []
    for key in dict.fromkeys(_shape(r) for r in rows):
        naive, flash, efficient = (_ms(rows, b, key) for b in ("naive", "flash", "efficient"))
        out.append(
            MeasuredSpeedup(
                *key,
                naive_ms=naive["ms"] if _why(naive) is None else None,
                flash_ms=flash["ms"] if _why(flash) is None else None,
                efficient_ms=efficient["ms"] if _why(efficient) is None else None,
                flash_reason=_why(flash),
                naive_reason=_why(naive),
                efficient_reason=_why(efficient),
            )
        )
    return out


@dataclass(frozen=True)
class MeasuredRun:
    """What the page says about a GPU run: its rows (one per shape), the shapes the run timed, how many of them
    standard attention has no time at (on a GPU the naive path runs out of memory first), and the two rows its
    verdicts read (both among the rows with a standard time, as the speed-ups are)."""

    rows: list[MeasuredSpeedup]
    batches: list[int]  # every batch size any backend timed, ascending
    heads: list[int]
    head_dims: list[int]
    seq_lo: int | None  # the shortest sequence timed; None when the run holds no row at all
    seq_hi: int | None
    shapes: int  # shapes any backend timed
    without_standard: int  # of those, shapes with no standard-attention time (rows with naive_ms None, no speed-up)
    like_material: MeasuredSpeedup | None  # float16, not causal, at the material's N and D, with flash timed
    fp32_without_flash: MeasuredSpeedup | None  # the first float32 row, when the flash kernel could not run it


def measured_run(run: dict) -> MeasuredRun:
    rows = measured_speedups(run)
    timed = {_shape(r) for r in run["rows"]}
    batch, heads, seq, dim = ([s[i] for s in timed] for i in range(4))
    m = MATERIAL_SHAPE
    standard = [r for r in rows if r.naive_ms is not None]
    like = next(
        (
            r
            for r in standard
            if (r.seq_len, r.head_dim, r.dtype, r.causal) == (m["seq_len"], m["head_dim"], "float16", False)
        ),
        None,
    )
    fp32 = next((r for r in standard if r.dtype == "float32"), None)
    return MeasuredRun(
        rows=rows,
        batches=sorted(set(batch)),
        heads=sorted(set(heads)),
        head_dims=sorted(set(dim)),
        seq_lo=min(seq, default=None),
        seq_hi=max(seq, default=None),
        shapes=len(timed),
        without_standard=len(rows) - len(standard),
        like_material=like if like is not None and like.flash_speedup is not None else None,
        fp32_without_flash=fp32 if fp32 is not None and fp32.flash_ms is None else None,
    )


def committed_gpu_run() -> dict | None:
    """The committed GPU run of benchmarks/bench_sdpa.py (the "cuda" entry /sdpa-gqa shows too), or None."""
    run = (sb.load_results() or {}).get("cuda")
    return run if isinstance(run, dict) else None
