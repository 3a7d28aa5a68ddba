"""The training loop both translation models share: the Transformer (model.py, through the seq2seq contract) and the
GRU with additive attention (core/rnn_attention/model.py). Each brings its own batches, loss, optimiser and
schedule; the loop, the held-out loss and the log are the same code.

Deterministic in the seed on one thread: the data order comes from Python's random.Random(seed), the weights from
torch's generator (seeded by the caller before it builds the model).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass
class TrainingLog:
    steps: list[int] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    held_out_steps: list[int] = field(default_factory=list)
    held_out_loss: list[float] = field(default_factory=list)
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0  # process CPU time, all threads together (wall time is inflated on a loaded machine)


@torch.no_grad()
def mean_loss(loss_of: Callable, make_batch: Callable, pairs, batch_size: int) -> float:
    """The loss per target token over `pairs`: each batch's mean loss weighted by its labelled tokens (labels
    -100 are padding)."""
    total, count = 0.0, 0
    for i in range(0, len(pairs), batch_size):
        batch = make_batch(pairs[i : i + batch_size])
        n = int((batch["labels"] != -100).sum())
        total += float(loss_of(batch)) * n
        count += n
    return total / max(count, 1)


def fit(model, loss_of: Callable, make_batch: Callable, held_out_loss: Callable[[], float], train_pairs,
        optimiser, schedule, seed: int, epochs: int, batch_size: int, log_every: int, on_log=None,
        clock: Callable[[], float] = time.perf_counter, cpu_budget: float | None = None) -> TrainingLog:  # fmt: skip
    """Shuffle, step (gradient norm clipped at 1), log every `log_every` steps and the last one, then the held-out
    loss after each epoch. on_log(step, loss, seconds of `clock` since the start); cpu_budget (seconds): stop early
    once the process has used this much CPU time. Leaves the model in eval mode."""
    total = epochs * math.ceil(len(train_pairs) / batch_size)
    rng = random.Random(seed)
    log, t0, cpu0, clock0, step = TrainingLog(), time.perf_counter(), time.process_time(), clock(), 0

    def over_budget() -> bool:
        return cpu_budget is not None and time.process_time() - cpu0 > cpu_budget

    order = list(range(len(train_pairs)))
    for _ in range(epochs):
        rng.shuffle(order)
        model.train()
        for i in range(0, len(order), batch_size):
            loss = loss_of(make_batch([train_pairs[j] for j in order[i : i + batch_size]]))
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % log_every == 0 or step == total:
                log.steps.append(step)
                log.train_loss.append(float(loss.detach()))
                if on_log:
                    on_log(step, float(loss.detach()), clock() - clock0)
            if over_budget():
                break
        model.eval()
        log.held_out_steps.append(step)
        log.held_out_loss.append(held_out_loss())
        if over_budget():
            break
    log.seconds = time.perf_counter() - t0
    log.cpu_seconds = time.process_time() - cpu0
    model.eval()
    return log
