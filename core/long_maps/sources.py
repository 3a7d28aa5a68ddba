"""What the long-maps page may compute with a model, read from its Capabilities (core/models/capabilities.py),
never from its name: which models it can read exactly, the layers and heads, the lengths it offers, and whether
attention is causal.

The pooled maps are exact for a model whose weights are softmax(scale q . k) over every key a query may see
(core/long_maps/pooled.py): a decoder (causal) or an encoder (bidirectional), with positions inside q and k (RoPE),
added to the embeddings (a learned table, sinusoidal) or none. A bias added to the scores (ALiBi, T5's relative
buckets), a sliding window, soft-capping or learned sinks would change the weights, so such models are not offered.

Lengths: a model with a learned position table has no vector for a position past its table, so the lengths stop
at its `max_positions`; other models may go past the length they were trained on, with a warning (RoPE: angles
the model never saw).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models.capabilities import Capabilities
from .maps import RANDOM_SHAPE

# SmolLM2-135M's shape, for the page when its config cannot be read here (its weight package missing)
SMOLLM2_SHAPE = {"n_layers": 30, "n_heads": 9, "n_kv_heads": 3, "max_positions": 8192}


@dataclass(frozen=True)
class SourceShape:
    """What the page offers for one source (a model, or random q and k)."""

    n_layers: int
    n_heads: int
    n_kv_heads: int
    causal: bool  # decoder: each query sees only earlier keys; encoder: every key
    trained: int | None  # positions the model was trained on (None: unknown, or random)
    table_limit: int | None  # a learned position table: no token past it
    lengths: tuple[int, ...]  # token counts offered, ascending
    default_length: int
    default_layer: int
    capped: bool  # the table cut the lengths that would otherwise be offered

    def beyond_context(self, n: int) -> bool:
        """n is past the trained positions of a model that can still run there (not a learned table)."""
        return self.trained is not None and self.table_limit is None and n > self.trained


def _lengths(offered: tuple[int, ...], limit: int | None) -> tuple[int, ...]:
    if limit is None or limit >= offered[-1]:
        return offered
    return tuple(n for n in offered if n < limit) + (limit,)


def _default(lengths: tuple[int, ...], wanted: int) -> int:
    return max((n for n in lengths if n <= wanted), default=lengths[0])


def model_shape(caps: Capabilities, offered: tuple[int, ...], default_length: int, default_layer: int) -> SourceShape:
    """The shape of a model's source: its layers and heads, causal from its kind, and the lengths of `offered`
    (ascending) it can read: all of them, or, with a learned table of P positions, those below P and P itself
    (a RoBERTa-style table's usable rows, as the capabilities count them)."""
    learned = caps.positions.kind == "learned" and caps.max_positions is not None
    table = caps.max_positions if learned else None  # usable rows (capabilities: RoBERTa's start after padding)
    lengths = _lengths(tuple(offered), table)
    return SourceShape(
        n_layers=caps.n_layers,
        n_heads=caps.n_heads,
        n_kv_heads=caps.n_kv_heads,
        causal=caps.is_causal,
        trained=caps.max_positions,
        table_limit=table,
        lengths=lengths,
        default_length=_default(lengths, default_length),
        default_layer=min(default_layer, caps.n_layers - 1),
        capped=lengths != tuple(offered),
    )


def smollm2_fallback(offered: tuple[int, ...], default_length: int, default_layer: int) -> SourceShape:
    """SmolLM2's shape without its config (SMOLLM2_SHAPE): the page still draws its widgets, with the button off."""
    s = SMOLLM2_SHAPE
    return SourceShape(
        s["n_layers"], s["n_heads"], s["n_kv_heads"], True, s["max_positions"], None, tuple(offered),
        _default(tuple(offered), default_length), min(default_layer, s["n_layers"] - 1), False,
    )  # fmt: skip


def random_shape(offered: tuple[int, ...], default_length: int) -> SourceShape:
    """Random q and k (core.long_maps.random_qk): RANDOM_SHAPE's heads, causal, any length offered."""
    return SourceShape(
        1, RANDOM_SHAPE["heads"], RANDOM_SHAPE["kv_heads"], True, None, None, tuple(offered),
        _default(tuple(offered), default_length), 0, False,
    )  # fmt: skip
