"""The original Transformer's sizes (Vaswani et al. 2017, "Attention Is All You Need", base model, table 3):
N = 6 encoder and 6 decoder layers, d_model 512, h 8 heads (d_k = 64), d_ff 2,048. Each encoder layer has one
self-attention sublayer; each decoder layer a masked self-attention and a cross-attention sublayer: 6 + 6 + 6 = 18
attention sublayers. The parameter count is what torch.nn.Transformer builds with these sizes (its own LayerNorms,
plus one final norm on each side); with the shared 37,000-token embedding (section 3.4, 5.1) it is 63,084,544, where
the paper's table 3 reports 65M (it does not list what it counted).
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = {"layers": 6, "d_model": 512, "heads": 8, "d_ff": 2048, "vocab": 37000}
PAPER_TOTAL_M = 65  # table 3, base model, millions, as the paper reports it


@dataclass(frozen=True)
class OriginalTransformer:
    layers: int
    d_model: int
    heads: int
    d_k: int
    d_ff: int
    sublayers: dict[str, int]  # self (encoder), masked_self (decoder), cross (decoder): attention sublayers
    attention_params: int  # one multi-head attention block: 4 d^2 + 4 d
    encoder_layer_params: int
    decoder_layer_params: int
    stack_params: int  # what torch.nn.Transformer(d_model, h, N, N, d_ff) holds: no embeddings
    embedding_params: int  # one shared vocab x d_model table (tied input and output embeddings)

    @property
    def with_embeddings(self) -> int:
        return self.stack_params + self.embedding_params

    @property
    def with_embeddings_m(self) -> float:
        """with_embeddings in millions, as the paper's table 3 counts."""
        return self.with_embeddings / 1e6

    @property
    def paper_gap_m(self) -> float:
        """How many millions the paper's table 3 reports more than this count."""
        return PAPER_TOTAL_M - self.with_embeddings_m

    @property
    def attention_sublayers(self) -> int:
        return sum(self.sublayers.values())


def original_transformer(
    layers: int = 6, d_model: int = 512, heads: int = 8, d_ff: int = 2048, vocab: int = 37000
) -> OriginalTransformer:
    """Counted by formula: attention 4 d^2 + 4 d (W^Q, W^K, W^V, W^O with biases); feed-forward 2 d d_ff + d_ff + d;
    LayerNorm 2 d. Encoder layer: attention, feed-forward, 2 norms; decoder layer: 2 attentions, feed-forward,
    3 norms; then one final norm per side."""
    if d_model % heads:
        raise ValueError("d_model must divide by heads")
    attention = 4 * d_model * d_model + 4 * d_model
    ffn = 2 * d_model * d_ff + d_ff + d_model
    norm = 2 * d_model
    encoder = attention + ffn + 2 * norm
    decoder = 2 * attention + ffn + 3 * norm
    return OriginalTransformer(
        layers=layers,
        d_model=d_model,
        heads=heads,
        d_k=d_model // heads,
        d_ff=d_ff,
        sublayers={"self": layers, "masked_self": layers, "cross": layers},
        attention_params=attention,
        encoder_layer_params=encoder,
        decoder_layer_params=decoder,
        stack_params=layers * (encoder + decoder) + 2 * norm,
        embedding_params=vocab * d_model,
    )
