"""/long-maps' link, declared once: app/ui.py binds the page's widgets from it, the lessons read a step's state with
it (core/state.py). What a source offers (layers, heads, lengths) comes from its Capabilities (sources.py): the
context, known once the source is read. The zoom window's size and start are bounded by the length read before
them, so a window never runs past the document."""

from __future__ import annotations

import functools

from core.state import Choice, Flag, Int, State, Text

from . import sources

DEFAULT_SOURCE = "smollm2"  # first and default: links and committed figures stay as they were
RANDOM = "random"  # random q and k: the demo without model weights
DOCUMENTS = ("licences", "own")
OWN_TEXT_DEFAULT = (
    "The cat sat on the mat because it was tired. Later the dog came in, saw the cat and lay down next to it. "
) * 8
CPU_LENGTHS = (512, 1024, 2048, 4096, 8192)
GPU_LENGTHS = CPU_LENGTHS + (16384, 32768)  # SmolLM2 on the GPU only: a learner's model runs on the CPU
RANDOM_LENGTHS = (512, 1024, 2048, 4096, 8192, 16384)
DEFAULT_LENGTH = 2048  # SmolLM2 to layer 12 + pooling: ~4 s on the 2-core CPU when idle, ~15 s when busy
DEFAULT_LAYER = 12  # SmolLM2: a layer whose heads differ (some sink into the first tokens, some stay local)
STATS = ("mean", "max")
SIDES = ("64", "128", "256")  # 256 x 256 float32 cells are ~0.45 MB of JSON; 512 x 512 would be ~1.8 MB
ZOOM_SIZES = (16, 32, 64, 128, 256)
DEFAULT_ZOOM = 64


def shape_of(source: str, caps, gpu: bool = False) -> sources.SourceShape:
    """What the page offers for `source`: random q and k's shape, or the model's from its capabilities `caps`
    (None: SmolLM2's config unreadable here, its package missing: its known shape, the button off anyway). `gpu`:
    SmolLM2 runs on the GPU here, which offers longer documents."""
    if source == RANDOM:
        return sources.random_shape(RANDOM_LENGTHS, DEFAULT_LENGTH)
    offered = GPU_LENGTHS if source == DEFAULT_SOURCE and gpu else CPU_LENGTHS
    if caps is None:
        return sources.smollm2_fallback(offered, DEFAULT_LENGTH, DEFAULT_LAYER)
    return sources.model_shape(caps, offered, DEFAULT_LENGTH, DEFAULT_LAYER)


def zoom_sizes(n: int) -> tuple[str, ...]:
    """The zoom window sizes offered on a document of n tokens: those shorter than it, and n itself when it is no
    longer than the largest (a window is never larger than the document)."""
    return tuple(str(z) for z in ZOOM_SIZES if z < n) + ((str(n),) if n <= ZOOM_SIZES[-1] else ())


class SourceContext:
    """The context of a /long-maps state: the sources offered (SmolLM2, the registered folders whose weights are
    softmax(q . k) alone, random) and the picked one's shape, from its capabilities (no model is loaded)."""

    def __init__(self, values):
        from core.models import registry
        from core.models.needs import EXACT_SOFTMAX

        self._values = values
        self.sources = (
            DEFAULT_SOURCE,
            *(k for k, r in registry.folders().items() if EXACT_SOFTMAX(r.capabilities)),
            RANDOM,
        )

    @functools.cached_property
    def shape(self) -> sources.SourceShape:
        """The picked source's (read after the source: the source's own options do not need it)."""
        from core.device import default_device
        from core.models import registry

        source = self._values.src
        caps = None if source == RANDOM else registry.capabilities(source)
        return shape_of(source, caps, default_device().type == "cuda")

    def __getattr__(self, name: str):  # lengths, default_length, n_layers, default_layer, n_heads, causal, ...
        if name.startswith("_") or name == "shape":
            raise AttributeError(name)
        return getattr(self.shape, name)


def _n(c) -> int:
    return int(c.n)


STATE = State(
    Choice("src", DEFAULT_SOURCE, options=lambda c: c.sources),
    Choice("n", lambda c: str(c.default_length), options=lambda c: tuple(str(n) for n in c.lengths)),
    Int("layer", lambda c: c.default_layer, 0, lambda c: c.n_layers - 1),  # a model's
    Int("seed", 0, 0, 9999),  # random q and k's
    Choice("doc", "licences", options=DOCUMENTS),
    Text("text", OWN_TEXT_DEFAULT),  # the learner's own document (doc = own)
    Int("head", 0, 0, lambda c: c.n_heads - 1),
    Choice("stat", "mean", options=STATS),
    Choice("side", SIDES[-1], options=SIDES),
    Flag("log", True),
    Choice("zsize", lambda c: str(min(DEFAULT_ZOOM, _n(c))), options=lambda c: zoom_sizes(_n(c))),
    # the window's first query and key: by default the last tokens, on the diagonal
    Int("zq", lambda c: _n(c) - int(c.zsize), 0, lambda c: _n(c) - 1),
    Int("zk", lambda c: _n(c) - int(c.zsize), 0, lambda c: _n(c) - 1),
    context=SourceContext,
)
