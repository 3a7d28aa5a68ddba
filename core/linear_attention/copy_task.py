"""Linear attention's quality, not only its speed: the sequence-copy task of Katharopoulos et al. 2020 (section
4.1, "convergence analysis"), trained here at a small size with softmax and with linear (elu + 1) attention.

The task: a random string of symbols, a separator, then the same string again. A causal language model reads
it left to right; only the second copy is predictable, so the loss is the cross-entropy on those positions.

    [SEP] s_1 ... s_L [SEP] s_1 ... s_L        (2 L + 2 tokens; loss on the last L predictions)

To copy s_i the query at position L + 1 + i must find the key at position i: attention by position (the model
has learned absolute positions), which softmax can make sharp and linear attention only approximately.

The paper: 10 symbols, length up to 128, a 4-layer, 8-head model, RAdam, 1e-3 then 1e-4 after 3000 steps;
linear attention reached softmax's loss, converging a little more slowly in steps. Here everything is smaller
(scripts/train_linear_quality.py writes results/linear_quality.json); the model is the same for both kinds
apart from the attention. Shapes in comments: B batch, n positions, H heads, d head width.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, fields

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..pre_norm_block import PreNormBlock
from .kernel import causal_linear_attention

KINDS = ("softmax", "linear")
SEP = 0  # the separator; symbols are 1 .. n_symbols
FIRST_STEPS_LOGGED = 10  # every one of the first steps is logged: a rerun of a few steps checks them


@dataclass(frozen=True)
class CopyConfig:
    n_symbols: int = 10  # as in the paper
    length: int = 24  # L: symbols per copy (the paper: up to 128)
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128
    batch: int = 32
    lr: float = 1e-3
    seed: int = 0

    @property
    def n_positions(self) -> int:
        return 2 * self.length + 2

    @property
    def vocab(self) -> int:
        return self.n_symbols + 1


CONFIG_FIELDS = {f.name for f in fields(CopyConfig)}


def copy_batch(cfg: CopyConfig, generator: torch.Generator) -> torch.Tensor:
    """(B, 2 L + 2) token ids: [SEP] s [SEP] s with s uniform over the symbols."""
    s = torch.randint(1, cfg.n_symbols + 1, (cfg.batch, cfg.length), generator=generator)
    sep = torch.full((cfg.batch, 1), SEP)
    return torch.cat([sep, s, sep, s], dim=1)


def copy_loss(logits: torch.Tensor, tokens: torch.Tensor, length: int) -> torch.Tensor:
    """Mean cross-entropy of the predictions of the second copy: position t predicts token t + 1, and the
    tokens at positions L + 2 .. 2 L + 1 are the copy, predicted from positions L + 1 .. 2 L."""
    pred = logits[:, length + 1 : 2 * length + 1]  # (B, L, vocab)
    target = tokens[:, length + 2 : 2 * length + 2]  # (B, L)
    return F.cross_entropy(pred.reshape(-1, pred.shape[-1]), target.reshape(-1))


def copy_accuracy(logits: torch.Tensor, tokens: torch.Tensor, length: int) -> float:
    """Share of the copied symbols predicted exactly (greedy), teacher-forced."""
    pred = logits[:, length + 1 : 2 * length + 1].argmax(-1)
    return (pred == tokens[:, length + 2 : 2 * length + 2]).double().mean().item()


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention whose inner product is softmax(q k^T / sqrt(d)) or linear
    phi(q) phi(k)^T with phi = elu + 1 (no scaling, as in the paper), over j <= i."""

    def __init__(self, d_model: int, n_heads: int, kind: str):
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}")
        self.kind, self.n_heads = kind, n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def heads(self, x: torch.Tensor):
        """x (B, n, d_model) -> q, k, v each (B, H, n, d)."""
        b, n, d_model = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.n_heads, d_model // self.n_heads).permute(2, 0, 3, 1, 4)
        return qkv[0], qkv[1], qkv[2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d_model = x.shape
        q, k, v = self.heads(x)
        if self.kind == "softmax":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            y = causal_linear_attention(q, k, v)  # prefix sums: O(n d^2), never n x n
        return self.out(y.transpose(1, 2).reshape(b, n, d_model))


class CopyModel(nn.Module):
    """A small pre-norm decoder: token + learned position embeddings, n_layers blocks, a linear readout."""

    def __init__(self, cfg: CopyConfig, kind: str):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.n_positions, cfg.d_model)
        self.blocks = nn.ModuleList(
            PreNormBlock(cfg.d_model, cfg.d_ff, CausalSelfAttention(cfg.d_model, cfg.n_heads, kind))
            for _ in range(cfg.n_layers)
        )
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[1]))  # (B, n, d_model)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))  # (B, n, vocab)


def build(cfg: CopyConfig, kind: str) -> tuple[CopyModel, torch.optim.Optimizer]:
    """The model and its optimiser, initialised from cfg.seed: both kinds start from the same weights (the
    attention has the same parameters either way) and see the same batches."""
    torch.manual_seed(cfg.seed)
    model = CopyModel(cfg, kind)
    return model, torch.optim.Adam(model.parameters(), lr=cfg.lr)


def train(
    cfg: CopyConfig,
    steps: int,
    log_every: int = 10,
    eval_batches: int = 4,
    on_log=None,
) -> dict:
    """Train a softmax and a linear model side by side, one step of each in turn (a load change on a shared
    machine then hits both alike), on the same batches. Returns, per kind, the loss at every logged step with
    the cumulative training seconds (wall and CPU) up to it, and the final held-out loss and copy accuracy."""
    models = {kind: build(cfg, kind) for kind in KINDS}
    data = torch.Generator().manual_seed(cfg.seed + 1)
    curves = {kind: {"step": [], "loss": [], "wall_s": [], "cpu_s": []} for kind in KINDS}
    wall = dict.fromkeys(KINDS, 0.0)
    cpu = dict.fromkeys(KINDS, 0.0)
    for step in range(1, steps + 1):
        tokens = copy_batch(cfg, data)
        for kind, (model, opt) in models.items():
            w0, c0 = time.perf_counter(), time.process_time()
            loss = copy_loss(model(tokens), tokens, cfg.length)
            opt.zero_grad()
            loss.backward()
            opt.step()
            wall[kind] += time.perf_counter() - w0
            cpu[kind] += time.process_time() - c0
            if step <= FIRST_STEPS_LOGGED or step % log_every == 0 or step == steps:
                c = curves[kind]
                c["step"].append(step)
                c["loss"].append(round(loss.item(), 5))
                c["wall_s"].append(round(wall[kind], 3))
                c["cpu_s"].append(round(cpu[kind], 3))
        if on_log and (step == 1 or step % (log_every * 10) == 0):
            on_log(step, {kind: curves[kind]["loss"][-1] for kind in KINDS})
    held = torch.Generator().manual_seed(cfg.seed + 2)
    held_out = [copy_batch(cfg, held) for _ in range(eval_batches)]
    final = {}
    with torch.no_grad():
        for kind, (model, _) in models.items():
            logits = [model(t) for t in held_out]
            final[kind] = {
                "held_out_loss": round(
                    sum(copy_loss(lg, t, cfg.length).item() for lg, t in zip(logits, held_out)) / eval_batches, 5
                ),
                "held_out_copy_accuracy": round(
                    sum(copy_accuracy(lg, t, cfg.length) for lg, t in zip(logits, held_out)) / eval_batches, 4
                ),
            }
    return {"curves": curves, "final": final, "chance_loss": round(math.log(cfg.n_symbols), 5)}


# --- what the page shows: the committed run --------------------------------------------------------------------

RESULT_NAME = "linear_quality"  # results/linear_quality.json, written by scripts/train_linear_quality.py
SOLVED_FRACTION = 0.05  # "copies": loss below 5 % of chance (ln n_symbols), i.e. almost every symbol right


def _has_curves(data: dict) -> bool:
    return all(len(data["curves"][k]["loss"]) == len(data["curves"][k]["wall_s"]) > 1 for k in KINDS)


def load_quality(path=None) -> dict | None:
    """The committed run, or None when it is missing or of another shape."""
    from core.results import load_result  # core.results is pure (json, pathlib)

    return load_result(path or RESULT_NAME, required=_has_curves)


@dataclass(frozen=True)
class QualityView:
    """Loss against steps and against training seconds for both kinds, and when each first copies."""

    curves: dict  # kind -> {"step", "loss", "wall_s", "cpu_s"} lists
    final: dict  # kind -> {"held_out_loss", "held_out_copy_accuracy"}
    chance: float  # ln(n_symbols): the loss of guessing uniformly
    threshold: float  # SOLVED_FRACTION x chance
    solved_step: dict  # kind -> first logged step with loss below the threshold (None: never)
    solved_cpu_s: dict  # kind -> CPU seconds of training up to that step (None: never)
    ms_per_step: dict  # kind -> mean CPU milliseconds per training step
    slowdown: float  # linear's CPU time per step / softmax's
    verdict: str  # "linear_later" / "linear_earlier" / "same" (steps to copy), or "not_solved" (one never copies)
    step_ratio: float | None  # linear's steps to copy / softmax's
    config: dict
    positions: int  # tokens in one sequence of the run: [SEP] s [SEP] s
    meta: dict  # command, date, loads, seconds


def quality_view(data: dict) -> QualityView:
    curves = {k: data["curves"][k] for k in KINDS}
    chance = float(data["chance_loss"])
    threshold = SOLVED_FRACTION * chance
    solved_step, solved_cpu = {}, {}
    for kind, c in curves.items():
        hit = next((i for i, loss in enumerate(c["loss"]) if loss < threshold), None)
        solved_step[kind] = None if hit is None else c["step"][hit]
        solved_cpu[kind] = None if hit is None else c["cpu_s"][hit]
    ms = {k: 1000 * c["cpu_s"][-1] / c["step"][-1] for k, c in curves.items()}
    s_step, l_step = solved_step["softmax"], solved_step["linear"]
    if s_step is None or l_step is None:
        verdict, ratio = "not_solved", None
    else:
        ratio = l_step / s_step
        verdict = "same" if l_step == s_step else ("linear_later" if l_step > s_step else "linear_earlier")
    meta_keys = ("command", "date", "device_name", "loadavg_1min_before", "loadavg_1min_after", "seconds_cpu")
    return QualityView(
        curves=curves,
        final=data["final"],
        chance=chance,
        threshold=threshold,
        solved_step=solved_step,
        solved_cpu_s=solved_cpu,
        ms_per_step=ms,
        slowdown=ms["linear"] / ms["softmax"],
        verdict=verdict,
        step_ratio=ratio,
        config=data["config"],
        positions=CopyConfig(**{k: v for k, v in data["config"].items() if k in CONFIG_FIELDS}).n_positions,
        meta={k: data.get(k) for k in meta_keys},
    )
