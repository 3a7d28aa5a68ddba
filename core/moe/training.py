"""Training and evaluating the small MoE language model (used by scripts/train_moe.py and the tests).

Loss = next-token cross-entropy + aux_coef * (Switch load-balancing loss, computed per layer, averaged over
layers). transformers' own Mixtral loss pools the counts of all layers before multiplying, so one layer's
imbalance can hide behind another's; per layer it cannot.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field

import torch

from ..models import moe_model
from ..models.moe_model import lm_loss  # the loss the held-out evaluation (moe_model.evaluate) reports too
from . import data as moe_data
from .balance import switch_balance_loss
from .layer import route_tokens

TRAIN_SEED_OFFSET = 0
HELD_OUT_SEED = 987_654  # the held-out text never shares a generator stream with training


def word_ids() -> dict[str, int]:
    return {w: i for i, w in enumerate(moe_model.vocabulary())}


def packed_batch(rng: random.Random, batch_size: int, seq_len: int) -> torch.Tensor:
    """(batch_size, seq_len) token ids: each row is [BOS] then whole generated sentences, cut at seq_len."""
    ids = word_ids()
    rows = []
    for _ in range(batch_size):
        row = [moe_model.BOS_ID]
        while len(row) < seq_len:
            row.extend(ids[w] for w in moe_data.generate_sentence(rng).words)
        rows.append(row[:seq_len])
    return torch.tensor(rows, dtype=torch.long)


def held_out_batch(n_rows: int = 64, seq_len: int = moe_model.MAX_POSITIONS) -> torch.Tensor:
    return packed_batch(random.Random(HELD_OUT_SEED), n_rows, seq_len)


def balance_loss(router_logits, top_k: int) -> torch.Tensor:
    """Mean over layers of the Switch loss (1.0 = perfectly balanced)."""
    losses = []
    for logits in router_logits:
        r = route_tokens(logits, top_k)
        losses.append(switch_balance_loss(r.probs, r.top_k_index))
    return torch.stack(losses).mean()


@dataclass
class TrainResult:
    model: torch.nn.Module
    log: list[dict] = field(default_factory=list)  # step, lm_loss, balance_loss, seconds
    seconds: float = 0.0


def train(
    steps: int,
    seed: int,
    aux_coef: float,
    batch_size: int = 16,
    seq_len: int = 128,
    lr: float = 3e-3,
    warmup: int = 50,
    log_every: int = 25,
    on_log=None,
    **arch,
) -> TrainResult:
    """AdamW with linear warm-up then cosine decay. Deterministic for a seed (same machine and threads)."""
    torch.manual_seed(seed)
    model = moe_model.new_model(seed, **arch).train()
    top_k = model.config.num_experts_per_tok
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)

    def lr_at(step: int) -> float:
        if step < warmup:
            return lr * (step + 1) / warmup
        progress = (step - warmup) / max(1, steps - warmup)
        return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))

    rng = random.Random(seed + TRAIN_SEED_OFFSET)
    result = TrainResult(model)
    start = time.perf_counter()
    for step in range(steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step)
        x = packed_batch(rng, batch_size, seq_len)
        out = model(input_ids=x, output_router_logits=True, use_cache=False)
        lm = lm_loss(out.logits, x)
        bal = balance_loss(out.router_logits, top_k)
        loss = lm + aux_coef * bal if aux_coef > 0 else lm
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            entry = {
                "step": step,
                "lm_loss": round(lm.item(), 5),
                "balance_loss": round(bal.item(), 5),
                "seconds": round(time.perf_counter() - start, 2),
            }
            result.log.append(entry)
            if on_log:
                on_log(entry)
    result.seconds = time.perf_counter() - start
    model.eval()
    return result
