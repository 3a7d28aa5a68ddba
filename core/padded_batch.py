"""The view data of /padded-batch: several texts run as one padded batch (padding on the right, as the tokenizer
pads, or moved to the left; the attention mask given to the model, or all ones), the attention mask, one sentence's
weights inside the batch, and the check that padding changes nothing (padded keys get exactly 0 weight; each
sentence's weights in the batch equal its run alone up to float rounding). The page's link is declared here too
(STATE): its widgets and the lessons' answers read it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from .attention import SHIPPED_MODELS, MatrixView, ModelContext, Tokens, matrix_view, through_contract
from .models.base import Batch, Trace
from .pooling import indexed_labels
from .state import Choice, Flag, Int, State, Text, model_choice

DIFF_TOLERANCE = 1e-4  # batch vs alone: float rounding of another summation order, far below any visible change
DEFAULT_TEXTS = "The cat sat on the mat.\nIt was tired because it had chased a mouse all night.\nDogs bark."
MAX_SENTENCES = 4
PAGE_TOKENS = 96  # per sentence on this page: the point is the padding, not long texts
SIDES = ("right", "left")  # where a short sentence's padding goes


def split_lines(raw: str, max_lines: int) -> tuple[list[str], bool]:
    """The non-empty lines of a pasted text (stripped), at most max_lines; and whether some were dropped."""
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    return lines[:max_lines], len(lines) > max_lines


def page_tokens(model) -> int:
    """The tokens the page reads of each sentence: PAGE_TOKENS, or fewer where the model has fewer positions."""
    return min(PAGE_TOKENS, model.max_positions)


def arranged(batch: Batch, side: str = "right", masked: bool = True) -> Batch:
    """The tokenizer's right-padded `batch` as the page feeds it to the model: with side "left" each row's padding
    moved in front of its tokens (the model then numbers the real tokens from the padding's count: a learned
    position table gives them other vectors than in a run alone); with masked False the attention mask is all ones,
    so every query may attend to the padding too."""
    if side not in SIDES:
        raise ValueError(f"padding side {side!r} is not one of {', '.join(SIDES)}")
    ids, mask, special, tokens = batch.input_ids, batch.attention_mask, batch.special, batch.tokens
    if side == "left":
        width = ids.shape[1]
        shifts = [width - int(m.sum()) for m in mask]
        ids, mask, special = (torch.stack([row.roll(k) for row, k in zip(x, shifts)]) for x in (ids, mask, special))
        tokens = [row[len(row) - k :] + row[: len(row) - k] for row, k in zip(tokens, shifts)]
    if not masked:
        mask = torch.ones_like(mask)
    return dataclasses.replace(batch, input_ids=ids, attention_mask=mask, special=special, tokens=tokens)


@dataclass
class BatchRun:
    """One padded batch through a model, as the page arranged it."""

    trace: Trace  # what the model computed on the batch as fed (its attention mask: all ones when unmasked)
    real: torch.Tensor  # (B, n) bool: where each sentence's real tokens are (its padding: the rest)
    side: str  # "right" or "left"
    masked: bool  # whether the model got the attention mask

    def length(self, index: int) -> int:
        """The real tokens of sentence `index`."""
        return int(self.real[index].sum())

    @property
    def padding(self) -> int:
        """Padding tokens the whole batch carries."""
        return int((~self.real).sum())


def run_batch(model, texts: list[str], max_tokens: int | None = None, side: str = "right", masked: bool = True):
    """`texts` tokenized as one batch (each cut to max_tokens), arranged (padding side, mask or not) and run."""
    right = model.tokenize(list(texts), max_tokens)
    real = arranged(right, side).attention_mask.bool()
    trace = model.run(arranged(right, side, masked), logits=False, hidden_states=False)
    return BatchRun(trace, real, side, masked)


@dataclass
class MaskView:
    """The batch's attention_mask: one row per sentence, one column per position (1 = real token, 0 = padding),
    and each sentence's tokens as the batch holds them (padding included)."""

    mask: np.ndarray  # (B, n) 0/1
    tokens: tuple[tuple[str, ...], ...] = ()  # (B, n)

    @property
    def positions(self) -> list[str]:
        """The columns of `mask`, as its figure and CSV number them."""
        return [str(j) for j in range(self.mask.shape[1])]


def mask_view(trace) -> MaskView:
    return MaskView(trace.batch.attention_mask.numpy(), tuple(tuple(row) for row in trace.batch.tokens))


@dataclass
class SentenceView(MatrixView):
    """One sentence's head over the batch's whole padded width, and whether its last rows are padding queries."""

    has_padding: bool  # shorter than the batch's longest: padding rows computed too, their outputs never used
    # the weights with the padding queries' rows NaN: what a caption may name as the map's largest weights (a padding
    # query's row is computed but never used, so its weights are no finding)
    real_query_weights: np.ndarray


def sentence_view(batch_run: BatchRun, index: int, layer: int, head: int) -> SentenceView:
    """One head for sequence `index` over the WHOLE padded width (padding tokens included, masked keys NaN):
    the page shows what the batch computes, padded rows too. Padding is where the sentence has no real token,
    also when the model was not given the mask."""
    trace = batch_run.trace
    n = trace.batch.input_ids.shape[1]
    labels = indexed_labels(trace.batch.tokens[index])
    tokens = Tokens(index, torch.arange(n), labels, trace.mask(index), False, False, tuple(labels))
    view = matrix_view("head", trace.attention(layer, head, index), tokens, layer, head, trace.n_heads, None)
    real = batch_run.real[index].numpy()[:, None]
    return SentenceView(
        **vars(view),
        has_padding=batch_run.length(index) < n,
        real_query_weights=np.where(real, view.weights, np.nan).astype(view.weights.dtype),
    )


def run_alone(model, text: str, max_tokens: int | None = None) -> Trace:
    """One text run alone, cut to max_tokens: what padding_report compares its row of a batch with."""
    return model.run(model.tokenize([text], max_tokens), logits=False, hidden_states=False)


def batch_report(batch_run: BatchRun, alone: list[Trace]) -> list[dict]:
    """padding_report of a batch the page ran (run_batch), against each sentence's run alone (run_alone, in the
    batch's order): the /padded-batch page's table, with no model pass of its own."""
    return padding_report(None, batch_run.trace, real=batch_run.real, alone=alone)


def padding_report(
    model,
    batch_trace,
    max_tokens: int | None = None,
    real: torch.Tensor | None = None,
    alone: list[Trace] | None = None,
) -> list[dict]:
    """For each sequence of a padded batch: how many real and padding tokens it has, the largest weight any
    real query puts on a padding key (exactly 0 under the mask), and the largest difference, over every layer and
    head, between its real tokens' weights in the batch and in a run of that text alone (float rounding, when
    neither the padding nor its side reaches a real token). `real` (B, n) bool: where the real tokens are (default:
    the batch's attention mask, right padding as the tokenizer pads). `alone`: each text's run alone, already made
    (default: run_alone with `model` and max_tokens here)."""
    out = []
    width = batch_trace.batch.input_ids.shape[1]
    real = batch_trace.batch.attention_mask.bool() if real is None else real
    for i, text in enumerate(batch_trace.batch.texts):
        keep = real[i].nonzero()[:, 0]
        n = len(keep)
        alone_run = run_alone(model, text, max_tokens) if alone is None else alone[i]
        same_ids = torch.equal(alone_run.batch.input_ids[0], batch_trace.batch.input_ids[i, keep])
        pad_weight, diff = 0.0, 0.0
        for layer in range(batch_trace.n_layers):
            w = batch_trace.layer_attention(layer, i)[:, keep]  # (H, n, width): the real queries
            pad_weight = max(pad_weight, float(w[:, :, ~real[i]].max()) if n < width else 0.0)
            if same_ids:
                diff = max(diff, float((w[:, :, keep] - alone_run.layer_attention(layer, 0)).abs().max()))
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

    @property
    def kind(self) -> str:
        """ "ok"; "moved": no weight on padding, yet the real tokens' weights differ from their run alone (their
        positions moved: left padding numbers them from the padding's count); "bad": weight leaks onto padding."""
        return "ok" if self.ok else "moved" if self.pad == 0.0 and np.isfinite(self.diff) else "bad"


def verdict(report: list[dict], trace) -> Verdict:
    pad = max(r["max_pad_weight"] for r in report)
    diffs = [r["max_diff_alone"] for r in report]
    diff = float("nan") if any(np.isnan(d) for d in diffs) else max(diffs)  # max() would skip a NaN by order
    ok = pad == 0.0 and bool(np.isfinite(diff)) and diff <= DIFF_TOLERANCE
    return Verdict(ok, pad, diff, trace.n_layers * trace.n_heads)


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)


class BatchContext(ModelContext):
    """What /padded-batch's bounds depend on: the models offered and the picked one's shape (ModelContext), and the
    sentences of the text (its non-empty lines, at most MAX_SENTENCES)."""

    def __init__(self, values):
        super().__init__(values, SHIPPED_MODELS, through_contract)
        self.lines, self.cut = split_lines(values.text, MAX_SENTENCES)

    @property
    def n_sentences(self) -> int:
        return len(self.lines)

    @property
    def max_tokens(self) -> int:
        return page_tokens(self.model_object)


STATE = State(
    model_choice(SHIPPED_MODELS),
    Text("text", DEFAULT_TEXTS),
    Choice("pad", "right", options=SIDES),
    Flag("nomask", False),  # the model run without the attention mask
    Choice("row", "0", options=lambda c: tuple(str(k) for k in range(c.n_sentences))),
    Int("layer", 0, 0, lambda c: c.n_layers - 1),
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    context=BatchContext,
)
