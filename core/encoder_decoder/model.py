"""The encoder-decoder's vocabulary, batches, training loop and loading.

The model is a MarianMT encoder-decoder (the seq2seq classes that Marian translation models use): encoder and
decoder stacks, sinusoidal positions, shared embeddings, decoder cross-attention; transformers is reached only
through the seq2seq contract of core/models/seq2seq.py. Small enough to train on two CPU cores in minutes: the
grammar is tiny, the point is to watch a real trained model translate.
"""

from __future__ import annotations

import math
from functools import partial
from pathlib import Path

import torch

from ..models import seq2seq
from ..models.seq2seq import Seq2Seq, Shape, WordTokenizer
from . import grammar, training

WEIGHTS_DIR = seq2seq.SHIPPED_FOLDER
MAX_LENGTH = 24  # tokens on either side: the grammar's longest sentences have 13 source and 11 target tokens


def make_tokenizer() -> WordTokenizer:
    """A word-level tokenizer over the grammar's vocabulary (ids fixed by grammar.vocabulary()): one word, one
    token; anything else is <unk>."""
    return seq2seq.word_tokenizer(grammar.vocabulary(), MAX_LENGTH)


def build(shape: Shape = Shape()) -> Seq2Seq:
    """A fresh model of the grammar's vocabulary (weights from torch's global generator)."""
    return seq2seq.build(grammar.vocabulary(), shape, MAX_LENGTH)


def encode(tokenizer: WordTokenizer, pairs: list[grammar.Pair]) -> dict[str, torch.Tensor]:
    """input_ids/attention_mask of the sources and labels (-100 on padding) of the targets, both ending in </s>."""
    eos = tokenizer.eos_token_id

    def with_eos(ids, mask):
        lengths = mask.sum(-1)
        ids = torch.cat([ids, torch.full((ids.shape[0], 1), tokenizer.pad_token_id)], dim=1)
        mask = torch.cat([mask, torch.zeros(mask.shape[0], 1, dtype=mask.dtype)], dim=1)
        ids[torch.arange(len(ids)), lengths] = eos
        mask[torch.arange(len(ids)), lengths] = 1
        return ids, mask

    input_ids, attention_mask = with_eos(*tokenizer.batch([p.source_text for p in pairs]))
    labels, label_mask = with_eos(*tokenizer.batch([p.target_text for p in pairs]))
    return {
        "input_ids": input_ids,
        "attention_mask": attention_mask,
        "labels": labels.masked_fill(label_mask == 0, -100),
    }


@torch.no_grad()
def mean_loss(model: Seq2Seq, tokenizer: WordTokenizer, pairs, batch_size: int = 256) -> float:
    model.eval()
    return training.mean_loss(model.loss, partial(encode, tokenizer), pairs, batch_size)


def train(train_pairs, held_out_pairs, seed: int = 0, epochs: int = 12, batch_size: int = 64, lr: float = 2e-3,
          shape: Shape = Shape(), log_every: int = 100, on_log=None):  # fmt: skip
    """AdamW with linear warm-up and cosine decay; returns (model, tokenizer, TrainingLog). Deterministic in seed
    (data order and initial weights) on one thread. on_log(step, loss, wall seconds)."""
    torch.manual_seed(seed)
    tokenizer = make_tokenizer()
    model = build(shape)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    total = epochs * math.ceil(len(train_pairs) / batch_size)
    warmup = max(1, total // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total)))
    )
    log = training.fit(model, model.loss, partial(encode, tokenizer), lambda: mean_loss(model, tokenizer, held_out_pairs),
                       train_pairs, optimiser, schedule, seed, epochs, batch_size, log_every, on_log)  # fmt: skip
    return model, tokenizer, log


status = seq2seq.shipped_status  # None when the shipped weights are there, else why not (with the command)


def load(folder: Path | None = None) -> tuple[Seq2Seq, WordTokenizer]:
    """(model, tokenizer) from the shipped folder (float32 on the CPU, eval mode)."""
    return seq2seq.load(folder or WEIGHTS_DIR)
