"""SDPA backends: every backend that runs here gives the naive matmul-softmax-matmul output within fp32 tolerance,
the naive version itself matches a float64 numpy softmax, the FLOP count matches a hand count and torch's own
FLOP counter, and unavailable backends say why."""

import json
import math

import numpy as np
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core.sdpa_gqa import backends as sb

ATOL = 1e-5  # fp32 tolerance, as in tests/core/test_attention.py

SHAPES = [
    sb.AttentionShape(2, 3, 37, 16),
    sb.AttentionShape(1, 4, 64, 64, causal=True),
    sb.AttentionShape(2, 2, 129, 32, causal=True),
    sb.AttentionShape(1, 1, 1, 8),
]


def numpy_attention(q, k, v, causal):
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)) @ v


def available_on_cpu():
    return [a["backend"] for a in sb.availability("cpu") if a["available"]]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label().replace(" ", "-"))
def test_naive_matches_float64_numpy(shape):
    q, k, v = sb.make_qkv(shape)
    np.testing.assert_allclose(
        sb.naive_attention(q, k, v, shape.causal).numpy(), numpy_attention(q, k, v, shape.causal), atol=ATOL, rtol=0
    )


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.label().replace(" ", "-"))
def test_every_available_backend_equals_naive(shape):
    q, k, v = sb.make_qkv(shape, seed=3)
    reference = sb.naive_attention(q, k, v, shape.causal)
    names = available_on_cpu()
    assert "math" in names  # the fallback runs everywhere
    for name in names:
        torch.testing.assert_close(
            sb.run_backend(name, q, k, v, shape.causal),
            reference,
            atol=ATOL,
            rtol=0,
            msg=lambda m, name=name: f"{name}: {m}",
        )


def test_cpu_availability_and_reasons():
    avail = {a["backend"]: a for a in sb.availability("cpu")}
    assert list(avail) == ["flash", "efficient", "cudnn", "math"]
    assert avail["math"]["available"] and avail["math"]["reason"] is None
    for name in ("efficient", "cudnn"):  # no CPU kernels in PyTorch
        assert not avail[name]["available"] and "CUDA only" in avail[name]["reason"]
    with pytest.raises(sb.BackendUnavailable, match="CUDA only"):
        sb.run_backend("efficient", *sb.make_qkv(SHAPES[0]))
    with pytest.raises(ValueError):
        sb.run_backend("bogus", *sb.make_qkv(SHAPES[0]))


def test_flops_hand_worked():
    # B=2, H=3, n=5, d=7: QK^T is 2*3 products of (5x7)(7x5) = 175 multiply-adds each, (weights)V the same:
    # 2 * 3 * 2 * 175 = 2,100 multiply-adds = 4,200 FLOPs; causal counts half
    assert sb.attention_flops(2, 3, 5, 7) == 4200
    assert sb.attention_flops(2, 3, 5, 7, causal=True) == 2100
    assert sb.AttentionShape(1, 8, 4096, 64).flops == 4 * 8 * 4096**2 * 64


def test_flops_match_torch_flop_counter():
    shape = sb.AttentionShape(2, 3, 33, 16)
    q, k, v = sb.make_qkv(shape)
    with FlopCounterMode(display=False) as counter:
        sb.naive_attention(q, k, v)
    assert counter.get_total_flops() == shape.flops


def test_measure_reports_what_it_timed():
    shape = sb.AttentionShape(1, 2, 64, 32)
    row = sb.measure("math", shape, reps=2)
    assert row["status"] == "ok" and row["ms"] > 0
    assert row["tflops"] == pytest.approx(shape.flops / (row["ms"] * 1e-3) / 1e12)
    assert row["peak_bytes"] is None or row["peak_bytes"] >= 0
    gone = sb.measure("cudnn", shape, reps=2)
    assert gone["status"] == "unavailable" and gone["ms"] is None and "CUDA only" in gone["reason"]


def test_benchmark_compares_each_backend_with_naive():
    seen = []
    shapes = [sb.AttentionShape(1, 2, 48, 16), sb.AttentionShape(1, 2, 48, 16, causal=True)]
    rows = sb.benchmark(shapes, reps=1, progress=lambda f, label: seen.append(f))
    assert len(rows) == 2 * 5 and seen[-1] == 1.0 and seen == sorted(seen)
    for r in rows:
        if r["backend"] == sb.NAIVE:
            assert r["status"] == "ok" and r["max_abs_diff_vs_naive"] is None
        elif r["status"] == "ok":
            assert r["max_abs_diff_vs_naive"] < ATOL
    assert {r["backend"] for r in rows if r["status"] == "unavailable"} == {"efficient", "cudnn"}


def test_naive_score_matrix_shows_in_peak_memory():
    """The naive version stores B*H*n*n scores and as many weights; flash does not. Linux only."""
    shape = sb.AttentionShape(1, 4, 1024, 32)
    naive = sb.measure(sb.NAIVE, shape, reps=1)
    flash = sb.measure("flash", shape, reps=1)
    if naive["peak_bytes"] is None or flash["status"] != "ok":
        pytest.skip("peak memory not measurable here")
    scores = 4 * 1024 * 1024 * 4  # one (4, 1024, 1024) float32 matrix: 16 MiB
    assert naive["peak_bytes"] >= scores
    assert flash["peak_bytes"] < scores / 2


@pytest.mark.parametrize("heads,kv_heads", [(8, 2), (9, 3), (6, 1), (4, 4)])
def test_gqa_is_mha_with_repeated_kv(heads, kv_heads):
    r = sb.gqa_check(heads, kv_heads)
    assert r["max_abs_diff_repeated"] < 1e-6
    assert r["kv_numbers_mha"] == r["kv_numbers_gqa"] * heads // kv_heads
    if 1 < kv_heads < heads:  # with 1 or all kv heads, interleaving and tiling are the same repetition
        assert r["max_abs_diff_wrong_order"] > 0.1
    else:
        assert r["max_abs_diff_wrong_order"] < 1e-6


def test_load_results(tmp_path):
    assert sb.load_results(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert sb.load_results(tmp_path / "bad.json") is None
    (tmp_path / "odd.json").write_text(json.dumps({"cpu": {"rows": "x"}, "cuda": 3}))
    assert sb.load_results(tmp_path / "odd.json") is None
    (tmp_path / "ok.json").write_text(json.dumps({"cpu": {"rows": [], "command": "c"}, "cuda": "not measured"}))
    assert sb.load_results(tmp_path / "ok.json") == {"cpu": {"rows": [], "command": "c"}, "cuda": "not measured"}


def test_committed_results_file():
    res = sb.load_results()
    if res is None:
        pytest.skip("no results/bench_sdpa.json")
    cpu = res["cpu"]
    assert cpu["device"] == "cpu" and cpu["command"].startswith("python benchmarks/bench_sdpa.py")
    assert {"torch", "date"} <= set(cpu)
    assert isinstance(res["cuda"], (str, dict))
    for r in cpu["rows"]:
        if r["status"] == "ok" and r["max_abs_diff_vs_naive"] is not None:
            assert r["max_abs_diff_vs_naive"] < ATOL
            assert r["tflops"] == pytest.approx(r["flops"] / (r["ms"] * 1e-3) / 1e12)
