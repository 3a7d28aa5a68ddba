"""/kv-cache's link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with
it (core/state.py). The step, layer and head pickers are bounded by the generation the settings above them ask for
(its steps, the model's layers and heads): the context builds it on first use, as the page does."""

from __future__ import annotations

from functools import cached_property

from core.attention import ModelContext
from core.models.needs import PAGE_NEEDS
from core.state import Choice, Float, Int, State, Text, model_choice

from .generation import generate, prompt_ids

SHIPPED = ("smollm2",)  # the default; learners' own decoders follow it in the picker
DEFAULT_PROMPT = "The cat sat on the mat because it was tired. Then it"
MAX_PROMPT_TOKENS = 512  # the end of a longer prompt is kept: it is what gets continued
MAX_NEW_TOKENS = 32
DECODING = ("greedy", "sample")
MAX_CONTEXT = 10_000_000  # tokens: a million-token context and then some
MEAN = "mean"  # the history's head picker: the mean over heads, or one head by number


# The page's cache is a decoder's keys and values per key/value head (its formula and eviction): not DeepSeek's
# latent attention, which caches one compressed vector per token and layer (core/models/needs.py).
keeps_keys_per_head = PAGE_NEEDS["kv-cache"]


def generation_options(s) -> dict:
    """core.kv_cache.generate's settings for a read state: greedy ignores temperature, top-k and seed."""
    sampled = s.decode == "sample"
    return dict(max_new_tokens=s.new, temperature=s.temp if sampled else 0.0, top_k=s.topk if sampled else 0,
                seed=s.seed if sampled else 0, window=s.window, sinks=s.sinks)  # fmt: skip


class Context(ModelContext):
    """The models offered and the picked one's shape, and the generation the state's settings ask for (the page's:
    the same prompt ids and options), whose steps bound the step picker."""

    def __init__(self, values):
        super().__init__(values, SHIPPED, keeps_keys_per_head)

    @cached_property
    def prompt_ids(self) -> list[int]:
        s = self._values
        return prompt_ids(self.model_object, s.prompt, MAX_PROMPT_TOKENS, s.new)[0]

    @cached_property
    def generation(self):
        return generate(self.model_object, self.prompt_ids, **generation_options(self._values))

    @property
    def last_step(self) -> int:
        return self.generation.last_step

    @property
    def head_options(self) -> tuple[str, ...]:
        return head_options(self.n_heads)


def head_options(n_heads: int) -> tuple[str, ...]:
    return (MEAN, *map(str, range(n_heads)))


STATE = State(
    model_choice(SHIPPED),
    Text("prompt", DEFAULT_PROMPT),
    Int("new", 6, 1, MAX_NEW_TOKENS),
    Choice("decode", "greedy", options=DECODING),
    Float("temp", 0.8, 0.1, 2.0, step=0.1),
    Int("topk", 40, 0, 1000),
    Int("seed", 0, 0, 99_999),
    Int("window", 8, 1, MAX_PROMPT_TOKENS + MAX_NEW_TOKENS),  # W: keys the new token sees, its own included
    Int("sinks", 4, 0, 64),
    # one step's attention, every step's attention
    Int("step", lambda c: c.last_step, 0, lambda c: c.last_step),
    Int("layer", lambda c: c.n_layers - 1, 0, lambda c: c.n_layers - 1),
    Int("hlayer", 0, 0, lambda c: c.n_layers - 1),
    Choice("head", MEAN, options=lambda c: c.head_options),
    Int("ctx", 8192, 1, MAX_CONTEXT),  # the cache's bytes at a context the reader picks
    context=Context,
)
