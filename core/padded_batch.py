"""The view data of /padded-batch: several texts run as one right-padded batch, the attention mask, one
sentence's weights inside the batch, and the check that padding changes nothing (padded keys get exactly 0
weight; each sentence's weights in the batch equal its run alone up to float rounding)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .attention import MatrixView, Tokens, matrix_view
from .pooling import indexed_labels

DIFF_TOLERANCE = 1e-4  # batch vs alone: float rounding of another summation order, far below any visible change


def split_lines(raw: str, max_lines: int) -> tuple[list[str], bool]:
    """The non-empty lines of a pasted text (stripped), at most max_lines; and whether some were dropped."""
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    return lines[:max_lines], len(lines) > max_lines


@dataclass
class MaskView:
    """The batch's attention_mask: one row per sentence, one column per position (1 = real token, 0 = padding)."""

    mask: np.ndarray  # (B, n) 0/1


def mask_view(trace) -> MaskView:
    return MaskView(trace.batch.attention_mask.numpy())


def sentence_view(trace, index: int, layer: int, head: int) -> MatrixView:
    """One head for sequence `index` over the WHOLE padded width (padding tokens included, masked keys NaN):
    the page shows what the batch computes, padded rows too."""
    n = trace.batch.input_ids.shape[1]
    labels = indexed_labels(trace.batch.tokens[index])
    tokens = Tokens(index, torch.arange(n), labels, trace.mask(index), False, False, tuple(labels))
    return matrix_view("head", trace.attention(layer, head, index), tokens, layer, head, trace.n_heads, None)


def padding_report(model, batch_trace, max_tokens: int | None = None) -> list[dict]:
    """For each sequence of a padded batch: how many real and padding tokens it has, the largest weight any
    real query puts on a padding key (should be exactly 0), and the largest difference, over every layer and
    head, between its weights in the batch and in a run of that text alone (should be float rounding)."""
    out = []
    width = batch_trace.batch.input_ids.shape[1]
    for i, text in enumerate(batch_trace.batch.texts):
        n = batch_trace.length(i)
        alone = model.run(model.tokenize([text], max_tokens))
        same_ids = torch.equal(alone.batch.input_ids[0], batch_trace.batch.input_ids[i, :n])
        pad_weight, diff = 0.0, 0.0
        for layer in range(batch_trace.n_layers):
            w = batch_trace.layer_attention(layer, i)  # (H, width, width)
            pad_weight = max(pad_weight, float(w[:, :n, n:].max()) if n < width else 0.0)
            if same_ids:
                diff = max(diff, float((w[:, :n, :n] - alone.layer_attention(layer, 0)).abs().max()))
        out.append(
            {
                "tokens": n,
                "padding": width - n,
                "max_pad_weight": pad_weight,
                "max_diff_alone": diff if same_ids else float("nan"),
                "same_tokens": same_ids,
            }
        )
    return out


@dataclass
class Verdict:
    ok: bool  # no weight on padding, and every sentence equal to its run alone within DIFF_TOLERANCE
    pad: float  # largest weight on a padded key over the batch
    diff: float  # largest |batch - alone| over the batch (NaN when a text tokenized differently alone)
    heads: int  # how many heads were checked (every layer's)


def verdict(report: list[dict], trace) -> Verdict:
    pad = max(r["max_pad_weight"] for r in report)
    diffs = [r["max_diff_alone"] for r in report]
    diff = float("nan") if any(np.isnan(d) for d in diffs) else max(diffs)  # max() would skip a NaN by order
    ok = pad == 0.0 and bool(np.isfinite(diff)) and diff <= DIFF_TOLERANCE
    return Verdict(ok, pad, diff, trace.n_layers * trace.n_heads)
