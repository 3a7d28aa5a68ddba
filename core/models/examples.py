"""Which well-known models use which position encoding and which architecture, read by this app's own
capability reader (core/models/capabilities.py) from transformers' default config of each family (no download,
no weights), beside this app's shipped models: the tables /positions and /encoder-decoder show."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from . import registry
from .capabilities import Capabilities, capabilities_of

# The study material's examples per kind of position, and per architecture (transformers' model_type names).
POSITION_EXAMPLES = {
    "sinusoidal": ("marian",),
    "learned": ("bert", "gpt2"),
    "relative-buckets": ("t5",),
    "alibi": ("bloom", "mpt"),
    "rope": ("llama", "qwen2", "mistral"),
}
ARCHITECTURE_EXAMPLES = {
    "encoder": ("bert", "roberta"),
    "decoder": ("gpt2", "llama", "mistral"),
    "encoder-decoder": ("t5", "bart", "marian"),
}
APP_MODELS = ("minilm", "smollm2", "moe", registry.ENCODER_DECODER)


@lru_cache(maxsize=32)
def family_capabilities(model_type: str) -> Capabilities:
    """Capabilities of a family's default config (transformers' AutoConfig.for_model: sizes of the family's
    reference model, nothing downloaded)."""
    from transformers import AutoConfig

    return capabilities_of(AutoConfig.for_model(model_type))


@dataclass(frozen=True)
class ExampleRow:
    kind: str  # a position kind or an architecture
    examples: tuple[tuple[str, str], ...]  # (model_type, what the reader finds in its config)
    app_models: tuple[str, ...]  # keys of this app's models of this kind (the pages name them)

    @property
    def confirmed(self) -> bool:
        """Every example's config reads as this row's kind."""
        return all(found == self.kind for _, found in self.examples)


def _app_models() -> list[tuple[str, Capabilities]]:
    found = []
    for key in APP_MODELS:
        caps = registry.capabilities(key)
        if caps is not None:
            found.append((key, caps))
    return found


def position_table() -> list[ExampleRow]:
    apps = _app_models()
    return [
        ExampleRow(
            kind,
            tuple((t, family_capabilities(t).positions.kind) for t in types),
            tuple(key for key, caps in apps if caps.positions.kind == kind),
        )  # fmt: skip
        for kind, types in POSITION_EXAMPLES.items()
    ]


def architecture_table() -> list[ExampleRow]:
    apps = _app_models()
    return [
        ExampleRow(
            kind,
            tuple((t, family_capabilities(t).kind) for t in types),
            tuple(key for key, caps in apps if caps.kind == kind),
        )  # fmt: skip
        for kind, types in ARCHITECTURE_EXAMPLES.items()
    ]
