"""core/multi_head.py against transformers' own BertLayer, torch's multi-head attention, torch's FLOP counter, and
the permutation property."""

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from core import multi_head as mh
from core.models import local
from tests.references import assert_close_in_scale
from tests.tiny_models import TEXTS, build

TEXT = "The cat sat on the mat because it was tired."


@pytest.mark.parametrize("layer", range(6))
def test_the_chain_reproduces_the_models_own_layer_output(layer, minilm):
    walk = mh.layer_walk(minilm, TEXT, layer)
    # LayerNorm outputs reach ~10 here: the tolerance follows their scale (tests/references.py)
    assert walk.max_reference_error == float((walk.output - walk.reference).abs().max())
    assert_close_in_scale(walk.output, walk.reference, what="the model's own layer output")
    # ... and transformers' BertLayer module called directly on the same input
    bert_layer = minilm.model.base_model.encoder.layer[layer]
    with torch.no_grad():
        direct = bert_layer(walk.x[None])[0]
    assert_close_in_scale(walk.output, direct.reshape(walk.output.shape), what="BertLayer")


def test_the_reference_the_page_quotes_is_the_models_own_output_of_the_layer(minilm, monkeypatch):
    """The page reports the walk's distance from the model's own output of the layer: that reference must come from
    the model's forward pass, not from the walk (the two agree to ~1e-6, so only moving one can tell). transformers'
    BertLayer of layer 3 made to return its output moved by 2^-10: the reference and the error the page quotes must
    carry the shift, the walk (from the layer's input and weights) must not."""
    layer, shift = 3, 2.0**-10
    before = mh.layer_walk(minilm, TEXT, layer)
    module = minilm.model.base_model.encoder.layer[layer]
    real = module.forward

    def moved(*args, **kwargs):
        out = real(*args, **kwargs)
        return (out[0] + shift, *out[1:]) if isinstance(out, tuple) else out + shift

    monkeypatch.setattr(module, "forward", moved)
    walk = mh.layer_walk(minilm, TEXT, layer)
    monkeypatch.undo()
    assert torch.equal(walk.output, before.output)
    torch.testing.assert_close(walk.reference, before.reference + shift, rtol=0, atol=1e-6)
    assert walk.max_reference_error == pytest.approx(shift, abs=2e-5)


def test_every_step_has_the_shape_of_the_paper(minilm):
    walk = mh.layer_walk(minilm, TEXT, 2)
    n, H, d_k = len(walk.tokens), 12, 32
    assert walk.x.shape == (n, 384) and walk.q.shape == walk.k.shape == walk.v.shape == (H, n, d_k)
    assert walk.w_q.shape == (H, 384, d_k) and walk.weights.shape == (H, n, n) and walk.z.shape == (H, n, d_k)
    assert walk.concat.shape == (n, H * d_k) == walk.output.shape
    assert walk.ffn_hidden.shape == (n, 1536)
    assert [name for name, _ in walk.shapes()][0] == "x" and dict(walk.shapes())["concat"] == (n, 384)
    assert dict(walk.shapes())["a"] == (n, n) and dict(walk.shapes())["w_o"] == (384, 384)


def test_heads_are_joined_side_by_side_and_rows_sum_to_one(minilm):
    walk = mh.layer_walk(minilm, TEXT, 0)
    assert torch.allclose(walk.weights.sum(-1), torch.ones(walk.weights.shape[:2]), atol=1e-6)
    assert torch.allclose(walk.z, walk.weights @ walk.v, atol=1e-6)
    for i in range(walk.n_heads):
        assert torch.equal(walk.concat[:, i * 32 : (i + 1) * 32], walk.z[i])


def test_each_heads_weights_are_the_contracts_weights(minilm):
    model = minilm
    walk = mh.layer_walk(model, TEXT, 4)
    trace = model.run(model.tokenize([TEXT]))
    n = len(walk.tokens)
    for head in (0, 5, 11):
        assert torch.allclose(walk.weights[head], trace.attention(4, head)[:n, :n], atol=1e-5)


def test_attention_output_equals_torch_multi_head_attention_with_the_same_weights(minilm):
    """F.multi_head_attention_forward (what nn.MultiheadAttention runs) with MiniLM's W^Q, W^K, W^V, W^O."""
    walk = mh.layer_walk(minilm, TEXT, 1)
    att = minilm.model.base_model.encoder.layer[1].attention
    in_w = torch.cat([att.self.query.weight, att.self.key.weight, att.self.value.weight])
    in_b = torch.cat([att.self.query.bias, att.self.key.bias, att.self.value.bias])
    x = walk.x[:, None, :]  # (n, batch 1, D)
    with torch.no_grad():
        out, weights = F.multi_head_attention_forward(
            x, x, x, 384, 12, in_w, in_b, None, None, False, 0.0,
            att.output.dense.weight, att.output.dense.bias, training=False, need_weights=True,
            average_attn_weights=False,
        )  # fmt: skip
    assert_close_in_scale(walk.attention_out, out[:, 0], what="attention output")
    assert torch.allclose(walk.weights, weights[0], atol=1e-6)


def test_padding_keys_get_exactly_zero_weight(minilm):
    x = torch.randn(5, 384, generator=torch.Generator().manual_seed(0))
    walk = mh.walk_bert_layer(minilm.encoder_layer(0), x, key_mask=torch.tensor([1, 1, 1, 0, 0]).bool())
    assert torch.all(walk.weights[..., 3:] == 0)
    assert torch.allclose(walk.weights.sum(-1), torch.ones(12, 5), atol=1e-6)


@pytest.mark.parametrize("heads", mh.HEAD_COUNTS)
def test_parameters_and_flops_do_not_depend_on_h(heads):
    """Parameter count against nn.MultiheadAttention itself, FLOPs against torch's FLOP counter."""
    module = torch.nn.MultiheadAttention(512, heads)
    assert mh.attention_parameters(512) == sum(p.numel() for p in module.parameters()) == 1_050_624
    x = torch.randn(64, 1, 512)
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        module(x, x, x, need_weights=True)
    assert mh.attention_flops(512, 64, heads) == counter.get_total_flops()
    assert len({(r.parameters, r.flops) for r in mh.head_count_rows(512, 64)}) == 1


def test_the_paper_has_eight_heads_of_64():
    rows = {r.heads: r for r in mh.head_count_rows(mh.PAPER_D_MODEL, 100)}
    assert rows[mh.PAPER_HEADS].head_dim == 64 == mh.PAPER_D_K and rows[32].head_dim == 16 and rows[1].head_dim == 512
    assert rows[32].score_rank == 16 and rows[1].score_rank == 100  # min(n, d_k)


@pytest.mark.parametrize("heads", [4, 16, 32])
def test_a_heads_score_matrix_has_rank_at_most_d_k(heads):
    ranks = mh.score_ranks(128, 48, heads)
    assert len(ranks) == heads and all(r == min(48, 128 // heads) for r in ranks)


def test_without_positions_attention_is_permutation_equivariant_and_with_them_it_is_not(minilm):
    check = mh.permutation_check(minilm, TEXT, seed=3)
    assert sorted(check.permutation) == list(range(len(check.permutation)))
    assert check.permutation != sorted(check.permutation)
    assert check.error_without_positions < 1e-4
    assert check.error_with_positions > 1e-2
    # the error the page quotes without positions is measured on the layer's outputs: a layer that adds 0.01 x its
    # row number to each output (no longer equivariant) must show 0.01 x the largest distance a token moved
    real = mh.walk_bert_layer

    def numbered(layer, x, **kwargs):
        walk = real(layer, x, **kwargs)
        return dataclasses.replace(walk, output=walk.output + 0.01 * torch.arange(x.shape[0])[:, None])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mh, "walk_bert_layer", numbered)
        bent = mh.permutation_check(minilm, TEXT, seed=3)
    moved = max(abs(i - p) for i, p in enumerate(bent.permutation))
    assert moved > 0 and bent.error_without_positions == pytest.approx(0.01 * moved, abs=1e-4)


def test_a_layer_out_of_range_or_an_encoder_less_model_is_a_clear_error(minilm):
    with pytest.raises(ValueError, match="layers 0..5"):
        mh.layer_walk(minilm, TEXT, 6)


@pytest.mark.parametrize("layer", [0, 5])
def test_the_contracts_layer_weights_are_the_modules_parameters(layer, minilm):
    """model.encoder_layer hands out plain tensors equal to transformers' BertLayer parameters, and the word
    embeddings and position table equal the embedding module's."""
    weights = minilm.encoder_layer(layer)
    module = minilm.model.base_model.encoder.layer[layer]
    att, out = module.attention, module.output
    pairs = {
        "w_q": att.self.query.weight, "b_q": att.self.query.bias, "w_k": att.self.key.weight,
        "b_k": att.self.key.bias, "w_v": att.self.value.weight, "b_v": att.self.value.bias,
        "w_o": att.output.dense.weight, "b_o": att.output.dense.bias,
        "attention_norm_weight": att.output.LayerNorm.weight, "attention_norm_bias": att.output.LayerNorm.bias,
        "ffn_up_weight": module.intermediate.dense.weight, "ffn_up_bias": module.intermediate.dense.bias,
        "ffn_down_weight": out.dense.weight, "ffn_down_bias": out.dense.bias,
        "output_norm_weight": out.LayerNorm.weight, "output_norm_bias": out.LayerNorm.bias,
    }  # fmt: skip
    for field, parameter in pairs.items():
        assert torch.equal(getattr(weights, field), parameter.detach()), field
    assert weights.attention_norm_eps == att.output.LayerNorm.eps and weights.output_norm_eps == out.LayerNorm.eps
    assert (weights.n_heads, weights.head_dim, weights.d_model, weights.activation) == (12, 32, 384, "gelu")
    embeddings = minilm.model.base_model.embeddings
    ids = torch.tensor([101, 1996, 4937, 102])
    assert torch.equal(minilm.token_embeddings(ids), embeddings.word_embeddings(ids).detach())
    assert torch.equal(minilm.learned_position_embeddings(), embeddings.position_embeddings.weight.detach())


@pytest.fixture(scope="module")
def tiny_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi-head-tiny")
    for family in ("bert", "roberta", "llama"):
        build(family, root / f"tiny-{family}")
    return root


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_the_walk_reproduces_any_bert_style_encoder(family, tiny_folders):
    """A learner's tiny BERT and RoBERTa (4 heads of 8): the same chain reproduces their own layers."""
    model = local.load_folder(tiny_folders / f"tiny-{family}")
    for layer in range(model.n_layers):
        walk = mh.layer_walk(model, TEXTS[0], layer)
        assert walk.n_heads == 4 and walk.head_dim == 8
        assert_close_in_scale(walk.output, walk.reference, what=f"{family} layer {layer}")
    check = mh.permutation_check(model, TEXTS[0])
    assert check.error_without_positions < 1e-4 < check.error_with_positions


def test_a_model_that_is_not_a_bert_style_encoder_is_told_so_in_words(tiny_folders):
    model = local.load_folder(tiny_folders / "tiny-llama")
    for call in (lambda: model.encoder_layer(0), lambda: mh.layer_walk(model, TEXTS[0], 0),
                 lambda: mh.permutation_check(model, TEXTS[0])):  # fmt: skip
        with pytest.raises(ValueError, match="tiny-llama is not a BERT-style encoder"):
            call()


@pytest.mark.parametrize("p", [0.25, 0.0])
def test_attention_dropout_is_read_from_the_models_config(p, tiny_folders, tmp_path):
    """The page's dropout probability is the model's attention_probs_dropout_prob, not BERT's 0.1 typed in."""
    import json
    import shutil

    folder = tmp_path / f"tiny-bert-p{p}"
    shutil.copytree(tiny_folders / "tiny-bert", folder)
    config = json.loads((folder / "config.json").read_text())
    config["attention_probs_dropout_prob"] = p
    (folder / "config.json").write_text(json.dumps(config))
    walk = mh.layer_walk(local.load_folder(folder), TEXTS[0], 0)
    assert walk.attention_dropout == p
