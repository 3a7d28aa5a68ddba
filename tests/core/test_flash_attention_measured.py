"""core/flash_attention_measured.py: the speed-ups recomputed from the committed H200 rows by hand."""

import json
from pathlib import Path

from core import flash_attention_measured as fm

ROOT = Path(__file__).resolve().parents[2]


def test_speedups_are_standard_ms_over_kernel_ms_from_the_committed_rows():
    raw = json.loads((ROOT / "results" / "gpu-h200-2026-11-27" / "bench_sdpa.json").read_text())["cuda"]
    assert raw["device_name"] == "NVIDIA H200" and raw == fm.committed_gpu_run()
    rows = fm.measured_speedups(raw)
    ms = {(r["backend"], r["seq_len"], r["head_dim"], r["dtype"], r["causal"]): r["ms"] for r in raw["rows"]}
    like = next(r for r in rows if (r.seq_len, r.head_dim, r.dtype, r.causal) == (4096, 128, "float16", False))
    assert like.flash_speedup == ms["naive", 4096, 128, "float16", False] / ms["flash", 4096, 128, "float16", False]
    assert round(like.flash_speedup, 1) == 3.4 and like.within_claim == "within"
    fp32 = next(r for r in rows if r.dtype == "float32")
    assert fp32.flash_ms is None and fp32.flash_speedup is None and fp32.flash_reason == "unavailable"
    assert round(fp32.efficient_speedup, 1) == 1.5
    assert len(rows) == sum(1 for r in raw["rows"] if r["backend"] == "naive")


def test_the_verdict_against_the_claim():
    row = fm.MeasuredSpeedup(2, 16, 4096, 128, False, "float16", naive_ms=10.0, flash_ms=None, efficient_ms=None)
    assert row.within_claim is None
    for flash, verdict in ((6.0, "below"), (2.5, "within"), (2.0, "above")):  # 1.7x, 4x, 5x
        assert fm.MeasuredSpeedup(2, 16, 4096, 128, False, "float16", 10.0, flash, None).within_claim == verdict


def test_the_run_names_its_shapes_and_the_rows_the_verdicts_read():
    view = fm.measured_run(fm.committed_gpu_run())
    assert (view.batches, view.heads, view.head_dims, view.seq_lo, view.seq_hi) == ([2], [16], [64, 128], 1024, 16384)
    like = view.like_material
    assert (like.seq_len, like.head_dim, like.dtype, like.causal) == (4096, 128, "float16", False)
    assert view.fp32_without_flash.dtype == "float32" and view.fp32_without_flash.flash_ms is None
    row = {"batch": 2, "heads": 16, "seq_len": 4096, "head_dim": 128, "causal": False, "ms": 10.0, "status": "ok"}
    rows = [{**row, "dtype": d, "backend": "naive"} for d in ("float16", "float32")] + [
        {**row, "dtype": "float16", "backend": "flash", "status": "unavailable"},
        {**row, "dtype": "float32", "backend": "flash", "ms": 4.0},
    ]
    none = fm.measured_run({"rows": rows})  # flash timed neither the material's float16 case nor failed on float32
    assert none.like_material is None and none.fp32_without_flash is None


def without_standard(run: dict, from_seq_len: int) -> dict:
    """The committed run as a GPU run whose standard attention ran out of memory from `from_seq_len` on."""
    oom = {"status": "out of memory", "ms": None, "reason": "CUDA out of memory"}
    rows = [{**r, **oom} if r["backend"] == "naive" and r["seq_len"] >= from_seq_len else r for r in run["rows"]]
    return {**run, "rows": rows}


def test_a_run_without_standard_attention_rows_says_what_it_has():
    committed = fm.committed_gpu_run()
    shapes = {(r["seq_len"], r["head_dim"], r["dtype"], r["causal"]) for r in committed["rows"]}
    part = fm.measured_run(without_standard(committed, 8192))
    assert part.shapes == len(shapes) and part.without_standard == sum(1 for s in shapes if s[0] >= 8192) > 0
    assert {r.seq_len for r in part.rows} == {s[0] for s in shapes if s[0] < 8192}
    assert (part.seq_lo, part.seq_hi) == (1024, 16384) and part.like_material.seq_len == 4096  # N: what was timed
    none = fm.measured_run(without_standard(committed, 0))
    assert none.rows == [] and none.without_standard == none.shapes == len(shapes)
    assert none.like_material is None and none.fp32_without_flash is None
    assert (none.batches, none.head_dims, none.seq_lo, none.seq_hi) == ([2], [64, 128], 1024, 16384)
    empty = fm.measured_run({"rows": []})
    assert (empty.seq_lo, empty.seq_hi, empty.shapes, empty.without_standard) == (None, None, 0, 0)
