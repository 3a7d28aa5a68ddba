"""benchmarks/bench_pooled.py's own checks: the independent check of a result's first and last row of cells, and the
sweep's bookkeeping (a wrong configuration is never the fastest, a configuration past the deadline is left out and
said so). The kernels the sweep times run here only through Triton's interpreter (TRITON_INTERPRET=1)."""

import importlib.util
import os
from types import SimpleNamespace

import pytest
import torch

from benchmarks import bench_pooled as bp
from core.long_maps import pooled as pa


def small_case(n=96, size=6, h=4, h_kv=2, causal=False, dtype="float32"):
    shape = bp.Shape(1, h, n, 16, causal, dtype, kv_heads=h_kv)
    q, k, v = bp.make_qkv(shape, "cpu", seed=3)
    return shape, (q * 2, k * 2, v)  # peaky weights: max pooling matters


@pytest.mark.parametrize("causal", [False, True])
def test_the_check_passes_the_exact_maps_and_catches_a_wrong_first_or_last_row(causal):
    _, (q, k, _) = small_case(causal=causal)
    exact = pa.pooled_attention(q, k, 6, causal=causal, backend="torch")
    assert bp.check_row_bins(q, k, exact, causal) < 1e-6
    for field, row in (("mean", 0), ("max", -1)):
        wrong = getattr(exact, field).clone()
        wrong[0, 3, row, 2] += 1e-4  # one cell of the last head (a key-value head of its own under GQA)
        result = pa.PooledAttention(**{**vars(exact), field: wrong})
        assert bp.check_row_bins(q, k, result, causal) == pytest.approx(1e-4, abs=1e-6)
    # the other mask's maps differ: the check is of the mask it is told
    assert bp.check_row_bins(q, k, exact, not causal) > 1e-3


def sweep_args(**changes):
    return SimpleNamespace(
        **{"sweep_reps": 1, "budget_s": None, "deadline_s": None, "started": 0.0, "sweep_grid": "small", **changes}
    )


def test_a_wrong_configuration_is_never_the_fastest():
    row = {"status": "ok", "ms": 1.0, "ms_min": 1.0, "peak_bytes": 10, "config": {}, "check_max_abs_diff": 2e-3}
    wrong = bp.sweep_entry(row, {"block_n": 8}, sdpa_ms=2.0)
    assert wrong["status"].startswith("wrong: checked rows differ") and wrong["ratio_to_cudnn"] is None
    right = bp.sweep_entry({**row, "ms": 3.0, "check_max_abs_diff": 1e-9}, {}, sdpa_ms=2.0)
    assert right["status"] == "ok" and right["ratio_to_cudnn"] == 1.5


def test_past_the_deadline_every_configuration_is_left_out_and_said_so():
    shape, qkv = small_case()
    case = bp.sweep_case(shape, qkv, "cpu", [{"fused_stats": True}], sweep_args(deadline_s=-1.0))
    assert [e["status"] for e in case["entries"]] == ["left out: past --deadline-s"] * 2
    assert case["fastest"] is None and case["sdpa_ms"] > 0  # the reference still timed: the sweep's summary says so


INTERPRETED = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
HAS_TRITON = importlib.util.find_spec("triton") is not None


@pytest.mark.skipif(not HAS_TRITON or not (torch.cuda.is_available() or INTERPRETED),
                    reason="needs Triton and a GPU, or TRITON_INTERPRET=1 on CPU")  # fmt: skip
@pytest.mark.parametrize("causal", [False, True])
def test_the_sweep_checks_every_configuration_and_picks_the_fastest_correct_one(monkeypatch, causal):
    monkeypatch.setattr(bp, "OUT_SIZE", 4)  # bins of 24 rows: the interpreter runs cell by cell
    device = "cuda" if torch.cuda.is_available() else "cpu"
    shape, qkv = small_case(causal=causal)
    qkv = tuple(t.to(device) for t in qkv)
    configs = [{"fused_stats": True}, {"block_n": 16, "fused_stats": True}, {"block_m": 16}, {"one_pass": True}]
    case = bp.sweep_case(shape, qkv, device, configs, sweep_args())
    assert [e["changed"] for e in case["entries"]] == [{}, *configs]
    # float32 scores carry ~1e-6 of absolute error into weights near 1 (the kernels in Triton 3.9's interpreter up to
    # 2.3e-6, the torch path 4e-7): the bench's own limit, 1e-5, is what tells a wrong configuration (off by 1e-2 and
    # more) from a right one
    assert all(e["status"] == "ok" and e["check_max_abs_diff"] <= bp.CHECK_LIMIT for e in case["entries"])
    assert case["fastest"] == min(case["entries"], key=lambda e: e["ms"])
