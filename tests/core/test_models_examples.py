"""core/models/examples.py: the tables of example models, against transformers' own modules built from the same
default configs on the meta device (no weights): where each family keeps its positions, and whether it has an
encoder and a decoder."""

import pytest
import torch
import transformers

from core.models import examples, registry


def _model(model_type: str):
    config = transformers.AutoConfig.for_model(model_type)
    with torch.device("meta"):
        return transformers.AutoModel.from_config(config), config


def _positions_by_modules(model_type: str) -> str:
    model, config = _model(model_type)
    names = {type(m).__name__ for m in model.modules()}
    params = dict(model.named_parameters())
    if any("SinusoidalPositionalEmbedding" in n for n in names):
        return "sinusoidal"
    if any(k.endswith(("position_embeddings.weight", "wpe.weight", "embed_positions.weight")) for k in params):
        return "learned"
    if any("relative_attention_bias" in k for k in params):
        return "relative-buckets"
    if any("RotaryEmbedding" in n for n in names):
        return "rope"
    module = __import__(type(model).__module__, fromlist=["x"])
    if hasattr(module, "build_alibi_tensor") or getattr(getattr(config, "attn_config", None), "alibi", False):
        return "alibi"
    return "none"


@pytest.mark.parametrize("kind,types", list(examples.POSITION_EXAMPLES.items()))
def test_position_examples_read_as_their_modules_say(kind, types):
    row = next(r for r in examples.position_table() if r.kind == kind)
    assert row.confirmed
    for t in types:
        assert _positions_by_modules(t) == kind, t


def test_architecture_examples_and_the_apps_models():
    for row in examples.architecture_table():
        assert row.confirmed
        for t, _ in row.examples:
            model, config = _model(t)
            has_decoder = hasattr(model, "decoder") or hasattr(model, "get_decoder") and config.is_encoder_decoder
            if row.kind == "encoder-decoder":
                assert config.is_encoder_decoder and has_decoder, t
            else:
                assert not config.is_encoder_decoder, t
    table = {r.kind: r.app_models for r in examples.architecture_table()}
    assert "minilm" in table["encoder"] and "smollm2" in table["decoder"]  # keys: the pages name them
    assert registry.ENCODER_DECODER in table["encoder-decoder"]
    positions = {r.kind: r.app_models for r in examples.position_table()}
    assert "minilm" in positions["learned"] and "smollm2" in positions["rope"]
