"""/positions' RoPE bands on a learner's model pair the dimensions the way its family rotates them: Llama and Qwen2
pair (i, i + d/2), Cohere (2i, 2i + 1). The reference is the family's own rotation (transformers'
apply_rotary_pos_emb of its modeling file): turning q and k further by one common angle per pair leaves each true
pair's part of q . k unchanged, so every per-pair part must survive that turn; a wrong pairing mixes two pairs and
does not."""

from __future__ import annotations

import importlib

import pytest
import torch

from core.models import local
from core.positions import rope_bands
from tests.tiny_models import TEXTS, build


@pytest.mark.parametrize("family, pairs", [("llama", "half"), ("qwen2", "half"), ("cohere", "interleaved")])
def test_each_pair_part_survives_a_common_turn_of_the_familys_own_rope(tmp_path, family, pairs):
    build(family, tmp_path)
    model = local.load_folder(tmp_path)
    assert model.capabilities.positions.rope_pairs == pairs
    trace = model.run(model.tokenize(TEXTS[:1]))
    layer, head = 1, 0
    view = rope_bands.bands_view(trace, layer, head, 4, model.capabilities.positions.rope_pairs)
    q, k = torch.from_numpy(view.q), torch.from_numpy(view.k)  # (n, d) as the model rotated them
    n, d = q.shape
    rotary = model.model.model.rotary_emb
    cos, sin = rotary(q[None], torch.full((1, n), 7))  # the same 7 positions' turn for every token
    own = importlib.import_module(type(model.model).__module__).apply_rotary_pos_emb
    q7, k7 = own(q[None, None].float(), k[None, None].float(), cos, sin)
    per_pair = rope_bands.frequency_band_contributions(q.double(), k.double(), d // 2, pairs)
    per_pair_7 = rope_bands.frequency_band_contributions(q7[0, 0].double(), k7[0, 0].double(), d // 2, pairs)
    torch.testing.assert_close(per_pair_7, per_pair, atol=1e-5, rtol=0)
    assert view.max_diff < 1e-5
    other = "half" if pairs == "interleaved" else "interleaved"
    wrong = rope_bands.frequency_band_contributions(q.double(), k.double(), d // 2, other)
    wrong_7 = rope_bands.frequency_band_contributions(q7[0, 0].double(), k7[0, 0].double(), d // 2, other)
    assert float((wrong_7 - wrong).abs().max()) > 1e-3  # the property tells the two pairings apart
