"""core/long_maps/sources.py: which models /long-maps reads exactly, and the layers, heads, lengths and mask it offers,
from Capabilities read off transformers' own config classes (tests/tiny_models.py's families, no weights). The
expected values are worked by hand from each config."""

from __future__ import annotations

import pytest
import transformers

from core.long_maps import sources
from core.models import registry
from core.models.capabilities import capabilities_of
from core.models.needs import exact_here
from tests.tiny_models import FAMILIES

OFFERED = (512, 1024, 2048, 4096, 8192)  # the page's CPU lengths


def caps_of(family: str, **overrides):
    config_name, _, kwargs, _ = FAMILIES[family]
    return capabilities_of(getattr(transformers, config_name)(**{**kwargs, **overrides}))


# softmax(q . k) alone: encoders and decoders with positions inside q and k or added to the embeddings
EXACT = ("bert", "roberta", "gpt2", "gpt_neox", "llama", "qwen2", "phi3", "mixtral")
# a sliding window (Mistral), soft-capping and sliding layers (Gemma 2), sinks and sliding layers (gpt-oss),
# an encoder-decoder (Marian)
NOT_EXACT = ("mistral", "gemma2", "gpt_oss", "marian")


@pytest.mark.parametrize("family", EXACT + NOT_EXACT)
def test_exact_here_takes_plain_softmax_models_only(family):
    assert exact_here(caps_of(family)) == (family in EXACT)


def test_a_score_bias_is_not_exact():
    """ALiBi adds a bias to the scores: q and k alone do not give the weights (BLOOM's config)."""
    caps = capabilities_of(transformers.BloomConfig(n_layer=2, n_head=4, hidden_size=32))
    assert caps.positions.kind == "alibi" and not exact_here(caps)


def test_an_encoders_learned_table_stops_the_lengths_at_its_size():
    shape = sources.model_shape(caps_of("bert"), OFFERED, 2048, 12)  # table of 64 < 512
    assert shape.lengths == (64,) and shape.default_length == 64 and shape.capped
    assert not shape.causal and shape.table_limit == 64 and not shape.beyond_context(64)
    assert (shape.n_layers, shape.n_heads, shape.n_kv_heads, shape.default_layer) == (3, 4, 4, 2)


def test_a_decoders_table_keeps_the_lengths_below_it_and_itself():
    caps = caps_of("gpt2", n_positions=1024)
    shape = sources.model_shape(caps, OFFERED, 2048, 12)
    assert shape.lengths == (512, 1024) and shape.default_length == 1024 and shape.capped and shape.causal
    big = sources.model_shape(caps_of("gpt2", n_positions=8192), OFFERED, 2048, 12)
    assert big.lengths == OFFERED and not big.capped and big.default_length == 2048


def test_a_roberta_table_holds_two_positions_fewer_than_its_rows():
    """RoBERTa numbers positions from padding_idx + 1 = 2: a 514-row table holds 512 tokens."""
    shape = sources.model_shape(caps_of("roberta", max_position_embeddings=514, pad_token_id=1), OFFERED, 2048, 12)
    assert shape.lengths == (512,) and shape.table_limit == 512


def test_rope_runs_past_its_trained_positions_with_a_warning():
    shape = sources.model_shape(caps_of("llama"), OFFERED, 2048, 12)  # trained on 64 positions
    assert shape.lengths == OFFERED and not shape.capped and shape.table_limit is None and shape.causal
    assert shape.beyond_context(512) and not shape.beyond_context(64)
    assert (shape.n_heads, shape.n_kv_heads, shape.default_layer) == (6, 2, 2)


def test_the_smollm2_fallback_is_its_configs_shape():
    caps = registry.capabilities("smollm2")
    if caps is None:
        pytest.skip("SmolLM2's config cannot be read here")
    assert sources.smollm2_fallback(OFFERED, 2048, 12) == sources.model_shape(caps, OFFERED, 2048, 12)


def test_random_q_and_k_have_the_random_demos_shape():
    shape = sources.random_shape(OFFERED + (16384,), 2048)
    assert (shape.n_heads, shape.n_kv_heads, shape.causal) == (9, 3, True)
    assert shape.default_length == 2048 and not shape.beyond_context(16384)
