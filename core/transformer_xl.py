"""Reaching past a fixed window: Transformer-XL's segment recurrence (Dai et al. 2019, arXiv:1901.02860) and what
came after, as attention masks over one long text, measured on SmolLM2.

A model that reads a long text in segments of L tokens can
  - "independent": read each segment alone (every segment starts from nothing);
  - "xl": keep the previous segment as memory (Transformer-XL). Token i of segment s sees all of segment s - 1 and
    segment s up to itself: at most 2L keys (the last token of a segment: L of memory, L of its own, itself
    included). The memory's own states saw the segment before it, so information travels one more segment back
    per layer: the effective context grows as L x layers.
    What XL caches is the previous segment's hidden states (each layer's input), with the gradient stopped; each
    layer computes the memory's keys and values from them with its current W_K and W_V. In training that is not the
    same as caching K and V: W_K and W_V get a gradient through the memory. At inference, with fixed weights, the
    two give the same keys and values, which is why a key/value cache of the previous segment reproduces it here;
  - "window" and "sinks_window": core/kv_cache/eviction.py's rule, the one of /kv-cache: W keys, the query's own
    included (the last W tokens), plus the first S for sinks + window (StreamingLLM, Xiao et al. 2023,
    arXiv:2309.17453). Positions are kept (the true ones); StreamingLLM renumbers them inside its cache;
  - "full": see every earlier token (the reference).

Every method is a boolean mask (n x n, True = may attend) on ONE forward pass with positions 0 .. n-1. That is not
an approximation: at layer l a token's keys come from its layer l - 1 state, which the same mask computed, exactly
as the recurrence with a cache would (tests check "xl" against segment-by-segment passes with a DynamicCache
holding the previous segment, and "independent" against separate passes). RoPE scores depend only on the distance
between positions, so continuing positions across segments (as XL does) or restarting them changes nothing but
rounding.

The page's panels are view objects built here (MasksView, LinesView, MeasuredView, LiveView), verdicts included;
viz/transformer_xl.py draws them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .kv_cache.eviction import POLICIES, policy_mask
from .results import load_result, results_path
from .state import Flag, Int, State, Text, model_choice

RESULT_NAME = "transformer_xl"
METHODS = ("independent", "xl", "window", "sinks_window", "full")


def method_mask(method: str, n: int, segment: int = 256, window: int = 256, sinks: int = 4) -> torch.Tensor:
    """Bool (n, n): query i may attend to key j under `method` (always causal, always j = i). "window" and
    "sinks_window" are the eviction policies of core/kv_cache/eviction.py (W keys, the query's own included)."""
    if n < 1 or segment < 1 or window < 1 or sinks < 0:
        raise ValueError("n, the segment length and the window must be >= 1, sinks >= 0")
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    causal = j <= i
    if method == "full":
        return causal
    if method == "independent":
        return causal & (i // segment == j // segment)
    if method == "xl":
        return causal & (j // segment >= i // segment - 1)
    if method in POLICIES:
        return policy_mask(method, n, window, sinks)
    raise ValueError(f"unknown method {method!r}; known: {METHODS}")


def receptive_field(mask: torch.Tensor, layers: int) -> np.ndarray:
    """(n,) how many positions can reach each token's output through `layers` layers of this mask (each layer
    lets a token read what its allowed keys had read): the effective context, L x layers for XL."""
    reach = mask.clone()
    step = mask.float()
    for _ in range(layers - 1):
        reach = (step @ reach.float()) > 0
    return reach.sum(dim=-1).numpy()


def token_losses(model, ids: list[int], mask: torch.Tensor) -> np.ndarray:
    """Cross-entropy (nats) of predicting ids[t + 1] from position t, for t = 0 .. n-2, with one forward pass of
    `model` (the contract: a causal LM) under `mask` (n x n bool)."""
    return model.next_token_losses(ids, mask=mask).numpy()


@dataclass
class Comparison:
    n: int
    segment: int
    window: int
    sinks: int
    losses: dict[str, np.ndarray]  # method -> (n - 1,) nats per predicted token

    def mean(self, method: str, start: int = 0) -> float:
        """Mean loss of the predictions from position `start` on."""
        return float(self.losses[method][start:].mean())

    def by_position_in_segment(self, method: str) -> np.ndarray:
        """(segment,) mean loss at each position within a segment, over all full segments."""
        values = self.losses[method]
        usable = (len(values) // self.segment) * self.segment
        return values[:usable].reshape(-1, self.segment).mean(axis=0)

    def by_block(self, method: str, block: int) -> np.ndarray:
        """Mean loss over consecutive blocks of `block` positions (the curve against position in the text)."""
        values = self.losses[method]
        usable = (len(values) // block) * block
        return values[:usable].reshape(-1, block).mean(axis=1)


def compare(model, ids: list[int], segment: int, window: int, sinks: int, methods=METHODS, progress=None):
    """Per-token losses of every method on the same ids."""
    losses = {}
    for k, method in enumerate(methods):
        if progress:
            progress(k / len(methods), method)
        losses[method] = token_losses(model, ids, method_mask(method, len(ids), segment, window, sinks))
    return Comparison(len(ids), segment, window, sinks, losses)


def reach_by_layers(mask: torch.Tensor, layers: int, row: int = -1) -> list[int]:
    """How many positions can reach token `row` through 1, 2, ..., `layers` layers of this mask: one row of
    receptive_field per depth, a vector times the mask per layer (n^2 each, never n^3)."""
    m = mask.float()
    reach = mask[row].float()  # (n,) what the token sees directly
    counts = [int((reach > 0).sum())]
    for _ in range(layers - 1):
        reach = ((reach @ m) > 0).float()
        counts.append(int(reach.sum()))
    return counts


def effective_context(n: int, segment: int, window: int, sinks: int, layers: int) -> dict[str, list[int]]:
    """For the last token of an n-token text: positions that can reach it through 1 .. layers layers, per method."""
    return {m: reach_by_layers(method_mask(m, n, segment, window, sinks), layers) for m in METHODS}


def small_masks(n: int = 12, segment: int = 4, window: int = 4, sinks: int = 1) -> dict[str, np.ndarray]:
    """The five masks at a size where every cell shows."""
    return {m: method_mask(m, n, segment, window, sinks).numpy() for m in METHODS}


def sinks_finding_holds(mean_past_window: dict[str, float], factor: float = 2.0) -> bool:
    """StreamingLLM's finding on a run, once the first tokens have left the window: the plain window's excess loss
    over full attention is more than `factor` times that of sinks + window."""
    full = mean_past_window["full"]
    window_gap = mean_past_window["window"] - full
    sinks_gap = max(mean_past_window["sinks_window"] - full, 0.0)
    return window_gap > factor * sinks_gap and window_gap > 0


def xl_beats_independent(mean_past_window: dict[str, float]) -> bool:
    """Whether XL's memory lowered the loss against independent segments on this run."""
    return mean_past_window["xl"] < mean_past_window["independent"]


# --- the views: what each panel of /transformer-xl draws and says ---------------------------------------------


@dataclass(frozen=True)
class MasksView:
    """The five masks at a size where every cell shows."""

    masks: dict[str, np.ndarray]  # method -> (n, n) bool, True = may attend
    n: int
    segment: int
    window: int
    sinks: int


def masks_view(n: int = 12, segment: int = 4, window: int = 4, sinks: int = 1) -> MasksView:
    return MasksView(small_masks(n, segment, window, sinks), n, segment, window, sinks)


@dataclass(frozen=True)
class LinesView:
    """One line per method against x. kind names the figure ("reach", "by_block", "by_segment"): its title and
    axes; title_fields fills the title's numbers; vlines are dashed markers (the window's end). bin > 1: the lines
    drawn are means over `bin` consecutive points (binned), the points themselves faint under them; note_fields
    fill the figure's note (what its numbers say), none where empty."""

    kind: str
    x: tuple[float, ...]
    series: dict[str, tuple[float, ...]]  # method -> values (NaN = none)
    title_fields: dict
    vlines: tuple[int, ...] = ()
    bin: int = 1
    note_fields: dict = field(default_factory=dict)

    def table(self) -> dict[str, list[float]]:
        """The numbers behind the figure, for the CSV download."""
        x_name = "layers" if self.kind == "reach" else "position"
        return {x_name: list(self.x), **{m: list(v) for m, v in self.series.items()}}

    def binned(self) -> tuple[tuple[float, ...], dict[str, tuple[float, ...]]]:
        """The means over consecutive bins of `bin` points (the last bin holds what is left), each at the mean of
        its points' x: five methods' lines on one text share its ups and downs (a hard passage is hard for all),
        point by point they cross too often to be told apart."""
        edges = range(0, len(self.x), self.bin)
        x = tuple(float(np.mean(self.x[a : a + self.bin])) for a in edges)
        series = {m: tuple(float(np.nanmean(v[a : a + self.bin])) for a in edges) for m, v in self.series.items()}
        return x, series


@dataclass(frozen=True)
class ReachView:
    """How many positions can reach the last of n tokens through 1 .. layers layers, per method."""

    lines: LinesView
    segment: int
    layers: int
    xl: int  # through every layer, with XL's memory
    window: int  # ... with a window


def reach_view(n: int, segment: int, window: int, sinks: int, layers: int) -> ReachView:
    reach = effective_context(n, segment, window, sinks, layers)
    lines = LinesView(
        "reach",
        tuple(range(1, layers + 1)),
        {m: tuple(reach[m]) for m in METHODS},
        {"n": n, "layers": layers},
    )
    return ReachView(lines, segment, layers, reach["xl"][-1], reach["window"][-1])


def _block_centres(block: int, count: int) -> tuple[float, ...]:
    return tuple(block * (k + 0.5) for k in range(count))


IN_SEGMENT_BINS = 16  # the loss within a segment (one value per position) is drawn as the means of this many bins


def in_segment_note(by_position: dict[str, np.ndarray], span: int) -> dict[str, float]:
    """What the loss within a segment says, against full attention (nats; mean over positions): independent
    segments over a segment's first `span` positions (no context yet) and over the rest; each other method over the
    whole segment."""
    full = np.asarray(by_position["full"], dtype=float)
    excess = {m: np.asarray(v, dtype=float) - full for m, v in by_position.items()}
    return {
        "span": span,
        "first": float(excess["independent"][:span].mean()),
        "rest": float(excess["independent"][span:].mean()),
        "xl": float(excess["xl"].mean()),
        "window": float(excess["window"].mean()),
        "sinks": float(excess["sinks_window"].mean()),
    }


@dataclass(frozen=True)
class MeasuredView:
    """The committed run of scripts/transformer_xl_losses.py, with its verdicts."""

    tokens: int
    segment: int
    window: int
    sinks: int
    past_from: int  # the first position where a plain window has dropped the first tokens
    mean: dict[str, float]  # method -> mean loss (nats)
    mean_past: dict[str, float]  # method -> mean loss from past_from on
    gap: dict[str, float]  # method -> mean_past - full's mean_past (the excess loss)
    by_block: LinesView
    by_segment: LinesView
    sinks_verdict: str  # "holds" / "fails": StreamingLLM's finding on this run (sinks_finding_holds)
    xl_verdict: str  # "xl_helps" / "xl_hurts" (xl_beats_independent)
    command: str
    date: str
    device: str


def _valid(data: dict) -> bool:
    return all(
        m in data[key]
        for key in ("loss_by_block", "mean_loss_past_window", "loss_by_position_in_segment")
        for m in METHODS
    )


def measured_view() -> MeasuredView | None:
    """results/transformer_xl.json as the page shows it; None when missing or of another shape. Read once per
    process, and again when the file changes (its size or modification time): a page run costs a stat call."""
    path = results_path(RESULT_NAME)
    try:
        info = path.stat()
    except OSError:
        return _measured_view(path, None)
    return _measured_view(path, (info.st_size, info.st_mtime_ns))


@functools.lru_cache(maxsize=1)
def _measured_view(path: Path, stamp: tuple[int, int] | None) -> MeasuredView | None:
    """The view of the results file at `path` as it was when `stamp` was taken (None: missing)."""
    data = load_result(path, required=_valid)
    if data is None:
        return None
    past, block, segment = data["mean_loss_past_window"], data["block"], data["segment"]
    by_block = {m: tuple(data["loss_by_block"][m]) for m in METHODS}
    in_segment = {m: tuple(data["loss_by_position_in_segment"][m]) for m in METHODS}
    # the text's blocks binned a segment at a time (where blocks tile a segment), its positions in IN_SEGMENT_BINS
    segment_blocks = segment // block if segment % block == 0 else 1
    in_segment_bin = max(1, segment // IN_SEGMENT_BINS)
    return MeasuredView(
        tokens=data["tokens"],
        segment=segment,
        window=data["window"],
        sinks=data["sinks"],
        past_from=data["past_window_from"],
        mean={m: data["mean_loss"][m] for m in METHODS},
        mean_past={m: past[m] for m in METHODS},
        gap={m: past[m] - past["full"] for m in METHODS},
        by_block=LinesView(
            "by_block",
            _block_centres(block, len(by_block["full"])),
            by_block,
            {"block": block},
            (data["window"],),
            bin=segment_blocks,
            note_fields={"span": segment_blocks * block, "block": block} if segment_blocks > 1 else {},
        ),
        by_segment=LinesView(
            "by_segment",
            tuple(range(segment)),
            in_segment,
            {},
            bin=in_segment_bin,
            note_fields=in_segment_note(in_segment, in_segment_bin),
        ),
        sinks_verdict="holds" if sinks_finding_holds(past) else "fails",
        xl_verdict="xl_helps" if xl_beats_independent(past) else "xl_hurts",
        command=data["command"],
        date=data["date"],
        device=data["device_name"],
    )


@dataclass(frozen=True)
class LiveView:
    """The five methods on the reader's text: status "ok", or "too_short" (fewer than two tokens)."""

    status: str
    total: int  # tokens of the whole text
    n: int  # tokens used (the first max_tokens)
    by_block: LinesView | None
    mean: dict[str, float]  # method -> mean loss (nats), rounded to 4 places for the table

    @property
    def cut(self) -> bool:
        return self.total > self.n


LIVE_BLOCKS = 16  # the live curve: about this many blocks over the text


def live_view(wrapper, text: str, segment: int, window: int, sinks: int, max_tokens: int) -> LiveView:
    """Per-token losses of every method on the first max_tokens tokens of `text` (wrapper: an HFAttentionModel
    around a causal LM), averaged over blocks of about n / LIVE_BLOCKS tokens. No more tokens than the model has
    positions (a learned table, GPT-2's, has no vector past its end)."""
    ids = wrapper.encode(text)
    used = ids[: min(max_tokens, wrapper.max_positions)]
    if len(used) < 2:
        return LiveView("too_short", len(ids), len(used), None, {})
    result = compare(wrapper, used, segment, window, sinks)
    block = max(1, len(used) // LIVE_BLOCKS)
    curves = {m: tuple(float(v) for v in result.by_block(m, block)) for m in METHODS}
    lines = LinesView("by_block", _block_centres(block, len(curves["full"])), curves, {"block": block})
    return LiveView("ok", len(ids), len(used), lines, {m: round(result.mean(m), 4) for m in METHODS})


# --- the page's link, declared once (app/ui.py binds the widgets from it; the lessons read a step's state with it)

REACH_CONTEXT = 1024  # the effective-context part's text length
LIVE_MAX_TOKENS = 256  # the live rerun reads at most this many tokens

STATE = State(
    Int("seg", 16, 1, REACH_CONTEXT),
    Int("win", 16, 1, REACH_CONTEXT),
    Int("sinks", 4, 0, 64),
    model_choice(("smollm2",)),
    Text("text", None),  # the page's words give the default (the shipped long text's opening, per language)
    Int("lseg", 32, 1, LIVE_MAX_TOKENS),
    Int("lwin", 32, 1, LIVE_MAX_TOKENS),
    Int("lsinks", 4, 0, 64),
    Flag("live", False),
)
