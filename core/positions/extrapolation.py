"""Absolute positions past their length, measured: the same small decoder trained with four kinds of position
information (sinusoidal, learned absolute, ALiBi, RoPE) on a task whose answer depends on relative position,
then tested on sequences up to 4x its training length, accuracy per position.

The task, "the most recent marker": tokens 1 .. N_MARKERS are markers, the rest fillers; at every position the
answer is the last marker seen so far (position 0 always holds one). The rule is the same everywhere: look back
to the nearest marker. It needs attention by *relative* position (which marker is closest), not by where the
sequence started.

    sinusoidal  sin/cos of the absolute position added to the token embedding (Vaswani et al. 2017); computable
                at any position, but the model never saw the values past the training length
    learned     one trained vector per position, added; the table has train_length rows, nothing after
    alibi       no position vector; score(i, j) -= m_h (i - j), fixed slopes m_h = 2^(-8 h / H) (Press et al. 2022)
    rope        q and k rotated by angle position x theta_i (Su et al. 2021), so q.k depends on i - j only

scripts/train_position_extrapolation.py trains the four and writes results/position_extrapolation.json. Shapes
in comments: B batch, n positions, H heads, d head width.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ..pre_norm_block import PreNormBlock

KINDS = ("sinusoidal", "learned", "alibi", "rope")
N_MARKERS = 4


@dataclass(frozen=True)
class ExtrapolationConfig:
    vocab: int = 16  # tokens 1 .. N_MARKERS are markers, N_MARKERS + 1 .. vocab - 1 fillers, 0 unused
    marker_rate: float = 0.15  # chance that a position (after the first) holds a marker
    train_length: int = 32
    test_factor: int = 4  # tested on sequences of test_factor x train_length
    d_model: int = 64
    n_heads: int = 8
    n_layers: int = 2
    d_ff: int = 128
    batch: int = 32
    lr: float = 2e-3
    seed: int = 0

    @property
    def test_length(self) -> int:
        return self.test_factor * self.train_length


def marker_batch(cfg: ExtrapolationConfig, n: int, batch: int, generator: torch.Generator):
    """(tokens, targets), both (batch, n): targets[b, t] is the last marker in tokens[b, : t + 1]."""
    fill = torch.randint(N_MARKERS + 1, cfg.vocab, (batch, n), generator=generator)
    marks = torch.randint(1, N_MARKERS + 1, (batch, n), generator=generator)
    is_mark = torch.rand(batch, n, generator=generator) < cfg.marker_rate
    is_mark[:, 0] = True
    tokens = torch.where(is_mark, marks, fill)
    # index of the last marker at or before t: a running maximum of (t where a marker sits, else 0)
    where = torch.where(is_mark, torch.arange(n).expand(batch, n), torch.zeros(batch, n, dtype=torch.long))
    last = torch.cummax(where, dim=1).values
    return tokens, torch.gather(tokens, 1, last)


def sinusoidal_table(n: int, d: int) -> torch.Tensor:
    """(n, d): PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i + 1] = cos(same), i the pair index."""
    pos = torch.arange(n, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)
    pe = torch.zeros(n, d)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """m_h = 2^(-8 h / H) for h = 1 .. H (the paper's geometric sequence for a power-of-two H)."""
    return torch.tensor([2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)])


def rope_rotate(x: torch.Tensor) -> torch.Tensor:
    """x (B, H, n, d) rotated pairwise (i, i + d/2) by angle p theta_i, theta_i = 10000^(-2i/d): q.k then
    depends on the positions only through their difference."""
    n, d = x.shape[-2], x.shape[-1]
    theta = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float32) / d)  # (d/2,)
    angle = torch.arange(n, dtype=torch.float32)[:, None] * theta  # (n, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg: ExtrapolationConfig, kind: str):
        super().__init__()
        self.kind, self.h = kind, cfg.n_heads
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.out = nn.Linear(cfg.d_model, cfg.d_model)
        self.register_buffer("slopes", alibi_slopes(cfg.n_heads), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d_model = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.h, d_model // self.h).permute(2, 0, 3, 1, 4)  # (B, H, n, d) each
        if self.kind == "rope":
            q, k = rope_rotate(q), rope_rotate(k)
        if self.kind == "alibi":
            i = torch.arange(n)
            distance = (i[:, None] - i[None, :]).float()  # (n, n): i - j
            bias = -self.slopes[:, None, None] * distance  # (H, n, n)
            bias = bias.masked_fill(distance < 0, float("-inf"))  # causal
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, n, d_model))


class PositionModel(nn.Module):
    """Token embedding (+ a position vector for sinusoidal and learned), n_layers pre-norm blocks, a readout."""

    def __init__(self, cfg: ExtrapolationConfig, kind: str):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        self.kind, self.cfg = kind, cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        if kind == "learned":
            self.pos = nn.Embedding(cfg.train_length, cfg.d_model)  # rows 0 .. train_length - 1, nothing after
        self.blocks = nn.ModuleList(
            PreNormBlock(cfg.d_model, cfg.d_ff, Attention(cfg, kind)) for _ in range(cfg.n_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        n = tokens.shape[1]
        x = self.tok(tokens)  # (B, n, d_model)
        if self.kind == "sinusoidal":
            x = x + sinusoidal_table(n, self.cfg.d_model)
        elif self.kind == "learned":
            x = x + self.pos(torch.arange(n))  # IndexError past the table
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))  # (B, n, vocab)


def accuracy_by_position(model: PositionModel, tokens: torch.Tensor, targets: torch.Tensor) -> np.ndarray:
    """(n,) share of sequences whose answer at each position is right. A learned table has no vector past its
    length: those positions are NaN (the model cannot be run there), the earlier ones are read from a run on the
    prefix (causal attention: a position never sees later ones)."""
    n = tokens.shape[1]
    out = np.full(n, np.nan)
    m = min(n, model.cfg.train_length) if model.kind == "learned" else n
    with torch.no_grad():
        pred = model(tokens[:, :m]).argmax(-1)
    out[:m] = (pred == targets[:, :m]).double().mean(0).numpy()
    return out


def train(cfg: ExtrapolationConfig, steps: int, eval_batch: int = 256, on_log=None) -> dict:
    """Train the four kinds (same seed, same batches, one step each in turn), then test each on eval_batch held-out
    sequences of test_length. Returns per kind: training loss every 10 steps, accuracy per position, the mean
    accuracy inside and past the training length, and the CPU seconds of training."""
    models = {}
    for kind in KINDS:
        torch.manual_seed(cfg.seed)
        model = PositionModel(cfg, kind)
        models[kind] = (model, torch.optim.Adam(model.parameters(), lr=cfg.lr))
    data = torch.Generator().manual_seed(cfg.seed + 1)
    losses = {kind: [] for kind in KINDS}
    cpu = dict.fromkeys(KINDS, 0.0)
    for step in range(1, steps + 1):
        tokens, targets = marker_batch(cfg, cfg.train_length, cfg.batch, data)
        for kind, (model, opt) in models.items():
            c0 = time.process_time()
            loss = F.cross_entropy(model(tokens).reshape(-1, cfg.vocab), targets.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            cpu[kind] += time.process_time() - c0
            if step % 10 == 0 or step == 1:
                losses[kind].append(round(loss.item(), 5))
        if on_log and step % 100 == 0:
            on_log(step, {k: v[-1] for k, v in losses.items()})
    tokens, targets = marker_batch(cfg, cfg.test_length, eval_batch, torch.Generator().manual_seed(cfg.seed + 2))
    result = {}
    for kind, (model, _) in models.items():
        model.eval()
        acc = accuracy_by_position(model, tokens, targets)
        inside, past = acc[: cfg.train_length], acc[cfg.train_length :]
        result[kind] = {
            "loss_every_10_steps": losses[kind],
            "accuracy_by_position": [None if math.isnan(a) else round(float(a), 4) for a in acc],
            "accuracy_inside": round(float(np.mean(inside)), 4),
            "accuracy_past": None if np.isnan(past).all() else round(float(np.nanmean(past)), 4),
            "cpu_s": round(cpu[kind], 1),
        }
    return result


# --- what the page shows: the committed run --------------------------------------------------------------------

RESULT_NAME = "position_extrapolation"  # results/position_extrapolation.json


def _has_runs(data: dict) -> bool:
    return all(len(run[k]["accuracy_by_position"]) > 1 for run in data["runs"].values() for k in KINDS)


def load_extrapolation(path=None) -> dict | None:
    """The committed run, or None when it is missing or of another shape."""
    from core.results import load_result

    return load_result(path or RESULT_NAME, required=_has_runs)


@dataclass(frozen=True)
class ExtrapolationView:
    positions: np.ndarray  # (n,) 0 .. test_length - 1
    train_length: int
    accuracy: dict  # kind -> (n,) mean accuracy over seeds per position (NaN: no vector there)
    inside: dict  # kind -> mean accuracy over seeds, positions < train_length
    past: dict  # kind -> mean accuracy over seeds, positions >= train_length (None: cannot run there)
    past_by_seed: dict  # kind -> [accuracy past the training length, per seed]
    chance: float  # 1 / N_MARKERS: a guess among the markers
    best_past: str  # the kind with the highest accuracy past the training length
    seeds: list
    meta: dict


def extrapolation_view(data: dict) -> ExtrapolationView:
    runs = list(data["runs"].values())
    acc, inside, past, by_seed = {}, {}, {}, {}
    for kind in KINDS:
        rows = np.array([[np.nan if a is None else a for a in r[kind]["accuracy_by_position"]] for r in runs])
        acc[kind] = rows.mean(0)
        inside[kind] = float(np.mean([r[kind]["accuracy_inside"] for r in runs]))
        seeds_past = [r[kind]["accuracy_past"] for r in runs]
        by_seed[kind] = seeds_past
        past[kind] = None if any(p is None for p in seeds_past) else float(np.mean(seeds_past))
    meta_keys = ("command", "date", "device_name", "loadavg_1min_before", "loadavg_1min_after", "seconds_cpu", "steps")
    return ExtrapolationView(
        positions=np.arange(len(acc[KINDS[0]])),
        train_length=int(data["config"]["train_length"]),
        accuracy=acc,
        inside=inside,
        past=past,
        past_by_seed=by_seed,
        chance=1.0 / N_MARKERS,
        best_past=max((k for k in KINDS if past[k] is not None), key=lambda k: past[k]),
        seeds=list(data["seeds"]),
        meta={k: data.get(k) for k in meta_keys},
    )
