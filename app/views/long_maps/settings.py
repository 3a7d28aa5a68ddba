"""/long-maps: the widgets. What to compute (source, length, layer or seed, document) and how to show it (head,
statistic, resolution, scale, zoom window); every widget is bound to the URL."""

from dataclasses import dataclass

import streamlit as st

from app import models, ui
from core.device import default_device
from core.long_maps import sources
from core.long_maps.views import measured_smollm2
from core.models import registry
from core.rope_scaling import long_context

DEFAULT_SOURCE = "smollm2"  # first and default: links and committed figures stay as they were
DOCUMENTS = ("licences", "own")
OWN_TEXT_DEFAULT = (
    "The cat sat on the mat because it was tired. Later the dog came in, saw the cat and lay down next to it. "
) * 8
CPU_LENGTHS = (512, 1024, 2048, 4096, 8192)
GPU_LENGTHS = CPU_LENGTHS + (16384, 32768)  # SmolLM2's GPU copy only: a learner's model runs on the CPU
RANDOM_LENGTHS = (512, 1024, 2048, 4096, 8192, 16384)
DEFAULT_LENGTH = 2048  # SmolLM2 to layer 12 + pooling: ~4 s on the 2-core CPU when idle, ~15 s when busy
DEFAULT_LAYER = 12  # SmolLM2: a layer whose heads differ (some sink into the first tokens, some stay local)
SLOW_FROM = 4096  # warn from here on (CPU)
SIDES = ("64", "128", "256")  # 256 x 256 float32 cells are ~0.45 MB of JSON; 512 x 512 would be ~1.8 MB
ZOOM_SIZES = ("16", "32", "64", "128", "256")


def on_gpu() -> bool:
    return default_device().type == "cuda"


@dataclass
class Request:
    """What to compute: changing any of it needs the button again."""

    source: str  # "smollm2", a learner's model key, or "random"
    n: int
    layer: int
    seed: int
    model_problem: str | None  # why the model cannot be used here, or None
    shape: sources.SourceShape  # layers, heads, lengths, causal: from the model's capabilities


def _slow_warning(T, n: int, model: str) -> None:
    measured = "; ".join(
        T(
            "measured_item",
            n=r["n_tokens"],
            layer=r["layer"],
            fwd=r["forward_s"],
            pool=r["pool_s"],
            load=r.get("loadavg_1min", "?"),
        )
        for r in measured_smollm2(SLOW_FROM)
    ) or T("not_measured")
    st.warning(T("slow_warning", n=n, model=model, measured=measured))


def _label(T, source: str) -> str:
    """A source's radio label (radio labels are markdown: a folder's name goes in escaped)."""
    caps = models.capabilities(source) if models.is_own(source) else None
    if caps is None:
        return T(f"src_{source}")
    kind = ui.t("models", f"kind_{caps.kind}")
    return T("src_own", name=models.name_in_text(source), kind=kind, layers=caps.n_layers, heads=caps.n_heads)


def _shape(source: str) -> sources.SourceShape:
    if source == "random":
        return sources.random_shape(RANDOM_LENGTHS, DEFAULT_LENGTH)
    offered = GPU_LENGTHS if source == "smollm2" and on_gpu() else CPU_LENGTHS
    caps = models.capabilities(source)
    if caps is None:  # SmolLM2's config unreadable here (its package missing): the button is off anyway
        return sources.smollm2_fallback(offered, DEFAULT_LENGTH, DEFAULT_LAYER)
    return sources.model_shape(caps, offered, DEFAULT_LENGTH, DEFAULT_LAYER)


def request(T) -> Request:
    """Source, length and layer (a model) or seed (random), with the notes each choice needs."""
    options = (DEFAULT_SOURCE, *models.own_keys(models.EXACT_SOFTMAX), "random")
    models.say_why_not_offered("src", options, models.EXACT_SOFTMAX, DEFAULT_SOURCE)  # a link to one it cannot read
    source = ui.select("src", T("source"), options, DEFAULT_SOURCE, format_func=lambda s: _label(T, s), radio=True)
    shape = _shape(source)
    model = "" if source == "random" else models.name_in_text(source)  # escaped: sentences are markdown
    model_problem = registry.model_status().get(source) if source != "random" else None
    if model_problem:
        st.error(T("missing_model", model=model, message=models.words_about(source, model_problem)))
    lengths = tuple(str(n) for n in shape.lengths)
    c1, c2 = st.columns(2)
    if source != "random":
        with c1:
            n = int(ui.select("n", T("n"), lengths, str(shape.default_length)))
        with c2:
            layer = (
                ui.slider("layer", T("layer"), 0, shape.n_layers - 1, shape.default_layer) if shape.n_layers > 1 else 0
            )
        if shape.capped:
            st.info(T("table_cap", model=model, limit=shape.table_limit))
        if shape.beyond_context(n):
            st.warning(T("beyond_context", n=n, model=model, limit=shape.trained))
        if n >= SLOW_FROM and not (on_gpu() and source == "smollm2"):  # a learner's model runs on the CPU
            _slow_warning(T, n, model)
        return Request(source, n, layer, 0, model_problem, shape)
    st.warning(T("random_banner", heads=shape.n_heads, kv=shape.n_kv_heads, d=sources.RANDOM_SHAPE["head_dim"]))
    with c1:
        n = int(ui.select("n", T("n"), lengths, str(shape.default_length)))
    with c2:
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    if n >= 8192 and not on_gpu():
        st.warning(T("random_slow", n=n))
    return Request(source, n, 0, seed, model_problem, shape)


def document(T) -> tuple[str, str]:
    """(kind, text) of the document the model reads: the shipped licence texts, or the user's own."""
    kind = ui.select(
        "doc", T("document"), DOCUMENTS, "licences", format_func=lambda s: T(f"doc_{s}"), horizontal=True, radio=True
    )
    if kind == "own":
        return kind, ui.text_area("text", T("own_text"), OWN_TEXT_DEFAULT, height=150)
    return kind, long_context.load_long_text()


@dataclass
class Display:
    """How to show the computed maps: chosen before or after computing (changing it never recomputes)."""

    head: int
    stat: str  # "mean" or "max"
    side: int  # cells per side on screen
    log_scale: bool
    zoom_size: int
    zoom_q0: int
    zoom_k0: int


def display(T, n: int, heads: int) -> Display:
    """Every display widget, drawn before the results whether or not they exist yet: a shared link then keeps
    head, zoom and the rest (a widget missing from a run would have its link parameter dropped)."""
    st.subheader(T("h_view"))
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    with c1:
        head = ui.slider("head", T("head"), 0, heads - 1, 0) if heads > 1 else 0
    with c2:
        stat = ui.select("stat", T("stat"), ("mean", "max"), "mean", format_func=lambda s: T(f"stat_{s}"), radio=True)
    with c3:
        side = int(ui.select("side", T("side"), SIDES, "256"))
    with c4:
        log_scale = ui.checkbox("log", T("log"), True)
    c1, c2, c3 = st.columns(3)
    with c1:
        size = min(int(ui.select("zsize", T("zoom_size"), ZOOM_SIZES, "64")), n)
    start = max(0, n - size)  # default window: the last tokens, on the diagonal
    with c2:
        q0 = ui.number("zq", T("zoom_q0"), 0, n - 1, start)
    with c3:
        k0 = ui.number("zk", T("zoom_k0"), 0, n - 1, start)
    return Display(head, stat, side, log_scale, size, q0, k0)
