"""One pre-norm transformer block for the small models this repo trains from scratch (the copy task of
/linear-attention, the extrapolation models of /positions): x + attention(LN(x)), then + FFN(LN(x)), as GPT-2 and
nanoGPT's Block. The attention is passed in, so each topic keeps only what it varies."""

from __future__ import annotations

from torch import nn


class PreNormBlock(nn.Module):
    def __init__(self, d_model: int, d_ff: int, attention: nn.Module):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = attention
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.ff(self.ln2(x))
