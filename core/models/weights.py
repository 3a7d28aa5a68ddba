"""One encoder layer's parameters as plain tensors: what a topic needs to recompute the layer by hand
(core/multi_head.py), read out of transformers' modules here, so nothing outside core/models touches one.

EncoderLayerWeights holds one post-LayerNorm BERT-style layer (BERT, RoBERTa, MiniLM, ELECTRA: the layout of
transformers' `BertLayer`):

    attention_out = Concat(heads) W^O + b^O          the heads from x W^Q + b^Q, x W^K + b^K, x W^V + b^V
    post_attention = LayerNorm_1(x + attention_out)
    output = LayerNorm_2(post_attention + act(post_attention W_up + b_up) W_down + b_down)

Every weight is in nn.Linear's layout, (out, in): a projection is x @ W.T + b.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class EncoderLayerWeights:
    """One post-LayerNorm BERT-style encoder layer, float32 on the CPU (D = model width, D_ff = FFN width)."""

    n_heads: int
    w_q: torch.Tensor  # (D, D) as nn.Linear: q = x @ w_q.T + b_q; head i is rows i*d_k:(i+1)*d_k
    b_q: torch.Tensor  # (D,)
    w_k: torch.Tensor
    b_k: torch.Tensor
    w_v: torch.Tensor
    b_v: torch.Tensor
    w_o: torch.Tensor  # (D, D): attention_out = concat @ w_o.T + b_o
    b_o: torch.Tensor
    attention_norm_weight: torch.Tensor  # (D,) LayerNorm after the attention's residual add
    attention_norm_bias: torch.Tensor
    attention_norm_eps: float
    ffn_up_weight: torch.Tensor  # (D_ff, D)
    ffn_up_bias: torch.Tensor  # (D_ff,)
    ffn_down_weight: torch.Tensor  # (D, D_ff)
    ffn_down_bias: torch.Tensor  # (D,)
    output_norm_weight: torch.Tensor  # (D,) LayerNorm after the FFN's residual add
    output_norm_bias: torch.Tensor
    output_norm_eps: float
    activation: str  # the config's hidden_act ("gelu" = the exact erf GELU in transformers)
    attention_dropout: float = 0.0  # the probability the layer's attention dropout uses in training (the config's
    # attention_probs_dropout_prob: 0.1 in BERT and MiniLM, another value or 0 in a learner's model)

    @property
    def d_model(self) -> int:
        return self.w_q.shape[1]

    @property
    def head_dim(self) -> int:
        return self.w_q.shape[0] // self.n_heads


def _tensor(parameter) -> torch.Tensor:
    return parameter.detach().float().cpu()


def bert_style_layers(base_model) -> list | None:
    """The layer modules of a BERT-style encoder (encoder.layer[i] with attention.self.query ...), else None."""
    layers = getattr(getattr(base_model, "encoder", None), "layer", None)
    if layers is None or len(layers) == 0:
        return None
    for layer in layers:
        attention = getattr(layer, "attention", None)
        parts = (
            getattr(getattr(attention, "self", None), "query", None),
            getattr(getattr(attention, "output", None), "LayerNorm", None),
            getattr(getattr(layer, "intermediate", None), "dense", None),
            getattr(getattr(layer, "output", None), "LayerNorm", None),
        )
        if any(p is None for p in parts):
            return None
    return list(layers)


def read_encoder_layer(base_model, config, layer: int, n_heads: int, name: str) -> EncoderLayerWeights:
    """The weights of layer `layer` of a transformers BERT-style encoder. ValueError, in words, for a model that is
    not one (a decoder, an encoder-decoder, another layout; a BERT run as a causal decoder or with relative
    positions in its attention) or a layer out of range."""
    layers = bert_style_layers(base_model)
    if layers is None or getattr(config, "is_decoder", False):
        raise ValueError(f"{name} is not a BERT-style encoder: this page walks a BERT layer (post-LayerNorm)")
    if getattr(config, "position_embedding_type", "absolute") not in (None, "absolute"):
        raise ValueError(
            f"{name} adds relative positions inside its attention ({config.position_embedding_type}): "
            "this page walks a BERT layer with absolute positions only"
        )
    if not 0 <= layer < len(layers):
        raise ValueError(f"{name} has layers 0..{len(layers) - 1}, not {layer}")
    module = layers[layer]
    attention, out = module.attention, module.output
    activation = getattr(config, "hidden_act", "gelu")
    return EncoderLayerWeights(
        n_heads=n_heads,
        w_q=_tensor(attention.self.query.weight),
        b_q=_tensor(attention.self.query.bias),
        w_k=_tensor(attention.self.key.weight),
        b_k=_tensor(attention.self.key.bias),
        w_v=_tensor(attention.self.value.weight),
        b_v=_tensor(attention.self.value.bias),
        w_o=_tensor(attention.output.dense.weight),
        b_o=_tensor(attention.output.dense.bias),
        attention_norm_weight=_tensor(attention.output.LayerNorm.weight),
        attention_norm_bias=_tensor(attention.output.LayerNorm.bias),
        attention_norm_eps=float(attention.output.LayerNorm.eps),
        ffn_up_weight=_tensor(module.intermediate.dense.weight),
        ffn_up_bias=_tensor(module.intermediate.dense.bias),
        ffn_down_weight=_tensor(out.dense.weight),
        ffn_down_bias=_tensor(out.dense.bias),
        output_norm_weight=_tensor(out.LayerNorm.weight),
        output_norm_bias=_tensor(out.LayerNorm.bias),
        output_norm_eps=float(out.LayerNorm.eps),
        activation=activation if isinstance(activation, str) else type(activation).__name__,
        attention_dropout=_dropout_p(attention.self, config),
    )


def _dropout_p(self_attention, config) -> float:
    """The attention dropout the module applies in training: its nn.Dropout's p, else the config's
    attention_probs_dropout_prob (transformers builds one from the other)."""
    dropout = getattr(self_attention, "dropout", None)
    if isinstance(dropout, torch.nn.Dropout):
        return float(dropout.p)
    return float(getattr(config, "attention_probs_dropout_prob", 0.0) or 0.0)


@dataclass(frozen=True)
class EmbeddingParts:
    """A BERT-style input embedding taken apart, float32 on the CPU: the embedding of token i is
    LayerNorm(token[i] + position[i] + token_type), the norm's weight, bias and eps below (D = model width)."""

    token: torch.Tensor  # (n, D) the word embedding rows
    position: torch.Tensor  # (n, D) the learned position rows of positions 0 .. n-1
    token_type: torch.Tensor  # (D,) the row of token type 0, which every token of one text gets
    norm_weight: torch.Tensor  # (D,)
    norm_bias: torch.Tensor  # (D,)
    norm_eps: float


def read_embedding_parts(base_model, token: torch.Tensor, positions: torch.Tensor | None, name: str) -> EmbeddingParts:
    """The parts of a transformers BERT-style embedding (word + position + token type, then LayerNorm), given the
    token rows and the position table the contract reads. ValueError, in words, for another layout."""
    embeddings = getattr(base_model, "embeddings", None)
    norm = getattr(embeddings, "LayerNorm", None)
    types = getattr(embeddings, "token_type_embeddings", None)
    if bert_style_layers(base_model) is None or norm is None or positions is None:
        raise ValueError(f"{name} is not a BERT-style encoder with a learned position table")
    n = token.shape[0]
    if n > positions.shape[0]:
        raise ValueError(f"{name} has {positions.shape[0]} positions, not {n}")
    token_type = _tensor(types.weight[0]) if types is not None else torch.zeros(token.shape[1])
    return EmbeddingParts(token, positions[:n], token_type, _tensor(norm.weight), _tensor(norm.bias), float(norm.eps))
