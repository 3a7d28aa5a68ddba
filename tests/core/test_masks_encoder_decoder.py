"""core/masks/encoder_decoder.py: the three kinds of attention chained as in the Transformer (encoder, then a
decoder whose cross-attention reads the encoder's output), each step checked against torch.nn.MultiheadAttention
with the same weights."""

import numpy as np
import torch
import torch.nn.functional as F

from core.masks.encoder_decoder import encoder_decoder, three_kinds
from core.masks.layers import embed
from tests.references import assert_close_in_scale

ENC, DEC = ["le", "chat", "dort", "bien", "."], ["the", "cat", "sleeps"]


def test_three_kinds_shapes_and_masks():
    enc, dec = ["le", "chat", "dort", "bien", "."], ["the", "cat", "sleeps"]
    kinds = {k.kind: k for k in three_kinds(enc, dec, seed=0)}
    H, dh = 4, 4
    e, d = kinds["encoder_self"], kinds["decoder_self"]
    c = kinds["cross"]
    assert e.shapes["Q"] == e.shapes["K"] == (1, H, 5, dh) and e.weights.shape == (H, 5, 5) and e.allowed.all()
    assert d.shapes["Q"] == d.shapes["K"] == (1, H, 3, dh) and d.weights.shape == (H, 3, 3)
    assert np.array_equal(d.allowed, np.tril(np.ones((3, 3), dtype=bool)))
    assert np.all(d.weights[:, ~d.allowed] == 0.0)
    # cross: Q from the decoder (3 rows), K and V from the encoder (5 rows)
    assert c.shapes["Q"] == (1, H, 3, dh) and c.shapes["K"] == c.shapes["V"] == (1, H, 5, dh)
    assert c.weights.shape == (H, 3, 5) and c.shapes["output"] == (1, 3, 16)
    assert c.query_tokens == dec and c.key_tokens == enc
    for k in kinds.values():
        np.testing.assert_allclose(k.weights.sum(-1), 1.0, atol=1e-6)
        assert k.sdpa_diff < 1e-5


def torch_mha(ours) -> torch.nn.MultiheadAttention:
    """torch's own multi-head attention carrying our layer's weights (no biases, like ours)."""
    ref = torch.nn.MultiheadAttention(ours.d_model, ours.n_heads, bias=False, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.w_q.weight, ours.w_k.weight, ours.w_v.weight]))
        ref.out_proj.weight.copy_(ours.w_o.weight)
    return ref.eval()


def test_every_step_matches_torch_multihead_attention():
    ed = encoder_decoder(ENC, DEC, seed=0)
    kinds = {k.kind: k for k in ed.kinds}
    d = ed.x_src.shape[-1]
    # the inputs are the page's embeddings of the two sentences
    torch.testing.assert_close(ed.x_src, embed([ENC], d, 0))
    torch.testing.assert_close(ed.x_tgt, embed([DEC], d, 0))

    def ln(x):
        return F.layer_norm(x, (d,))

    with torch.no_grad():
        # encoder: self-attention over the source, no mask
        enc = torch_mha(ed.layers["encoder_self"])
        att, w = enc(ed.x_src, ed.x_src, ed.x_src, need_weights=True, average_attn_weights=False)
        memory = ln(ed.x_src + att)
        assert_close_in_scale(ed.memory, memory, what="memory")
        np.testing.assert_allclose(kinds["encoder_self"].weights, w[0].numpy(), atol=1e-6)
        # decoder self-attention: torch's boolean attn_mask is True where attention is NOT allowed
        blocked = torch.triu(torch.ones(len(DEC), len(DEC), dtype=torch.bool), diagonal=1)
        dec = torch_mha(ed.layers["decoder_self"])
        att, w = dec(ed.x_tgt, ed.x_tgt, ed.x_tgt, attn_mask=blocked, need_weights=True, average_attn_weights=False)
        h = ln(ed.x_tgt + att)
        assert_close_in_scale(ed.decoder_self_output, h, what="decoder self-attention output")
        np.testing.assert_allclose(kinds["decoder_self"].weights, w[0].numpy(), atol=1e-6)
        # cross-attention: queries from the decoder's self-attention output, keys and values from the encoder's
        cross = torch_mha(ed.layers["cross"])
        att, w = cross(h, memory, memory, need_weights=True, average_attn_weights=False)
        assert_close_in_scale(ed.output, ln(h + att), what="output")
        np.testing.assert_allclose(kinds["cross"].weights, w[0].numpy(), atol=1e-6)
        # and the same cross-attention through F.scaled_dot_product_attention, head by head
        layer = ed.layers["cross"]
        q = layer.w_q(h).view(1, len(DEC), layer.n_heads, -1).transpose(1, 2)
        k = layer.w_k(memory).view(1, len(ENC), layer.n_heads, -1).transpose(1, 2)
        v = layer.w_v(memory).view(1, len(ENC), layer.n_heads, -1).transpose(1, 2)
        heads = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(1, len(DEC), d)
        assert_close_in_scale(ed.output, ln(h + layer.w_o(heads)), what="output through SDPA")


def test_cross_attention_reads_the_encoder_output_not_the_embeddings():
    """Changing the source sentence changes what cross-attention sees; its queries depend only on the target
    (the decoder's self-attention never reads the source)."""
    a, b = encoder_decoder(ENC, DEC, seed=0), encoder_decoder(["un", "chien", "aboie"], DEC, seed=0)
    torch.testing.assert_close(a.decoder_self_output, b.decoder_self_output)
    assert a.kinds[2].shapes["context"] == (1, 5, 16) and b.kinds[2].shapes["context"] == (1, 3, 16)
    ka = a.kinds[2]
    assert (ka.x_from, ka.context_from) == ("decoder_self_output", "encoder_output")
    assert (a.kinds[0].x_from, a.kinds[1].context_from) == ("src_embeddings", "tgt_embeddings")
    # the decoder's self-attention output is not its input embeddings: Q of cross-attention differs from a
    # projection of the raw target embeddings
    assert not torch.allclose(a.decoder_self_output, a.x_tgt)


def test_one_token_sentences_work():
    ed = encoder_decoder(["x"], ["y"], seed=0)
    for k in ed.kinds:
        assert k.weights.shape == (4, 1, 1) and np.allclose(k.weights, 1.0)
