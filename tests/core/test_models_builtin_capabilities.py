"""The shipped models expose their capabilities without loading weights (registry.capabilities), and they are
what the loaded model reads from its own transformers config (HFAttentionModel.capabilities)."""

from __future__ import annotations

from core.models import registry
from core.models import smollm2 as smollm2_package
from core.models.capabilities import capabilities_of


def test_minilm_capabilities_before_loading_equal_the_loaded_models(minilm):
    caps = registry.capabilities("minilm")
    assert caps == minilm.capabilities
    assert (caps.kind, caps.n_layers, caps.n_heads, caps.positions.kind) == ("encoder", 6, 12, "learned")


def test_smollm2_capabilities_before_loading_equal_the_loaded_models(smollm2):
    caps = registry.capabilities("smollm2")
    assert caps == smollm2.capabilities
    # the model card: 30 layers, 9 query heads over 3 key/value heads, RoPE theta 100,000, 8,192 positions
    assert (caps.kind, caps.n_layers, caps.n_heads, caps.n_kv_heads) == ("decoder", 30, 9, 3)
    assert (caps.positions.kind, caps.positions.rope_theta, caps.max_positions) == ("rope", 100_000.0, 8192)


def test_smollm2_config_from_the_gguf_metadata_when_there_is_no_cached_copy(smollm2, monkeypatch):
    monkeypatch.setattr(smollm2_package.cache, "is_valid", lambda folder, stamp: False)
    assert capabilities_of(smollm2_package.config()) == smollm2.capabilities


def test_moe_capabilities_before_loading_equal_the_loaded_models(moe):
    caps = registry.capabilities("moe")
    assert caps == moe.capabilities
    assert caps.kind == "decoder" and caps.n_experts == moe.n_experts and caps.experts_per_token == moe.top_k


def test_a_model_without_a_config_reader_has_no_capabilities():
    assert registry.capabilities("no-such-model") is None
