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
    assert len(rows) == sum(1 for r in raw["rows"] if r["backend"] == "naive")  # H200: every shape has a standard time


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


def without_standard(run: dict, from_seq_len: int, status: str = "out of memory") -> dict:
    """The committed run as a GPU run whose standard attention has `status` (ran out of memory, by default) from
    `from_seq_len` on."""
    failed = {"status": status, "ms": None, "reason": "CUDA out of memory"}
    rows = [{**r, **failed} if r["backend"] == "naive" and r["seq_len"] >= from_seq_len else r for r in run["rows"]]
    return {**run, "rows": rows}


def _row(backend: str, seq_len: int, ms: float | None, status: str = "ok", batch: int = 2) -> dict:
    shape = {"batch": batch, "heads": 16, "seq_len": seq_len, "head_dim": 128, "causal": False, "dtype": "float16"}
    return {"backend": backend, **shape, "status": status, "ms": ms}


def test_a_shape_without_a_standard_time_keeps_its_kernel_times_and_says_why():
    run = {
        "rows": [
            *(_row("naive", 1024, 8.0), _row("flash", 1024, 2.0), _row("efficient", 1024, 5.0)),
            *(_row("naive", 16384, None, "out of memory"), _row("flash", 16384, 12.5), _row("efficient", 16384, 20.0)),
            *(_row("naive", 8192, None, "skipped"), _row("flash", 8192, None, "unavailable")),
            _row("efficient", 8192, None, "out of memory"),
            _row("flash", 2048, 1.5),  # no standard row at all
        ]
    }
    rows = fm.measured_speedups(run)
    assert [r.seq_len for r in rows] == [1024, 16384, 8192, 2048]  # every shape, in the run's order
    both, oom, other, alone = rows
    assert (both.flash_speedup, both.efficient_speedup, both.within_claim) == (4.0, 1.6, "within")  # 8/2, 8/5
    assert (both.naive_reason, both.flash_reason, both.efficient_reason) == (None, None, None)
    assert (oom.naive_ms, oom.flash_ms, oom.efficient_ms) == (None, 12.5, 20.0)
    assert (oom.naive_reason, oom.flash_speedup, oom.efficient_speedup, oom.within_claim) == (
        "out_of_memory", None, None, None)  # fmt: skip
    assert (other.naive_ms, other.flash_ms, other.efficient_ms) == (None, None, None)
    assert (other.naive_reason, other.flash_reason, other.efficient_reason) == ("other", "unavailable", "out_of_memory")
    assert (alone.naive_reason, alone.flash_ms, alone.efficient_reason) == ("other", 1.5, "other")
    view = fm.measured_run(run)
    assert (view.shapes, view.without_standard, view.rows) == (4, 3, rows)


def test_the_verdicts_read_only_rows_with_a_standard_time():
    rows = [
        _row("naive", 4096, None, "out of memory", batch=1),
        _row("flash", 4096, 1.0, batch=1),  # 1 ms, but against no standard time: not the verdict's row
        *(_row("naive", 4096, 9.0), _row("flash", 4096, 3.0)),
    ]
    fp32 = [{**r, "dtype": "float32", "head_dim": 64} for r in rows]
    fp32[1] = {**fp32[1], "ms": None, "status": "unavailable"}
    fp32[3] = {**fp32[3], "ms": None, "status": "unavailable"}
    view = fm.measured_run({"rows": rows + fp32})
    assert (view.like_material.batch, view.like_material.flash_speedup, view.like_material.within_claim) == (
        2, 3.0, "within")  # fmt: skip
    assert (view.fp32_without_flash.batch, view.fp32_without_flash.naive_ms) == (2, 9.0)
    assert view.without_standard == 2


def test_a_run_without_standard_attention_rows_says_what_it_has():
    committed = fm.committed_gpu_run()
    shapes = {(r["seq_len"], r["head_dim"], r["dtype"], r["causal"]) for r in committed["rows"]}
    part = fm.measured_run(without_standard(committed, 8192))
    assert part.shapes == len(shapes) == len(part.rows)
    assert part.without_standard == sum(1 for s in shapes if s[0] >= 8192) > 0
    long = [r for r in part.rows if r.seq_len >= 8192]
    assert {r.naive_reason for r in long} == {"out_of_memory"} and all(r.flash_speedup is None for r in long)
    flash = {(r["seq_len"], r["head_dim"], r["dtype"], r["causal"]): r["ms"] for r in committed["rows"]
             if r["backend"] == "flash"}  # fmt: skip
    assert [r.flash_ms for r in long] == [flash[r.seq_len, r.head_dim, r.dtype, r.causal] for r in long]
    assert (part.seq_lo, part.seq_hi) == (1024, 16384) and part.like_material.seq_len == 4096  # N: what was timed
    none = fm.measured_run(without_standard(committed, 0, status="a status no one wrote words for"))
    assert none.without_standard == none.shapes == len(none.rows) == len(shapes)
    assert {r.naive_reason for r in none.rows} == {"other"}
    assert none.like_material is None and none.fp32_without_flash is None
    assert (none.batches, none.head_dims, none.seq_lo, none.seq_hi) == ([2], [64, 128], 1024, 16384)
    empty = fm.measured_run({"rows": []})
    assert (empty.seq_lo, empty.seq_hi, empty.shapes, empty.without_standard) == (None, None, 0, 0)
