"""/long-maps: the widgets. What to compute (source, length, layer or seed, document) and how to show it (head,
statistic, resolution, scale, zoom window); every widget is bound to the URL."""

from dataclasses import dataclass

import streamlit as st

from app import ui
from core.device import default_device
from core.long_maps import RANDOM_SHAPE
from core.long_maps.views import measured_smollm2
from core.models import registry
from core.rope_scaling import long_context

SOURCES = ("smollm2", "random")
DOCUMENTS = ("licences", "own")
OWN_TEXT_DEFAULT = (
    "The cat sat on the mat because it was tired. Later the dog came in, saw the cat and lay down next to it. "
) * 8
CPU_LENGTHS = ("512", "1024", "2048", "4096", "8192")
GPU_LENGTHS = CPU_LENGTHS + ("16384", "32768")
RANDOM_LENGTHS = ("512", "1024", "2048", "4096", "8192", "16384")
DEFAULT_LENGTH = "2048"  # SmolLM2 to layer 12 + pooling: ~4 s on the 2-core CPU when idle, ~15 s when busy
SMOLLM2_LAYERS = 30
TRAINED_CONTEXT = 8192  # SmolLM2's max_position_embeddings: longer documents reach unseen RoPE angles
DEFAULT_LAYER = 12  # a layer whose heads differ: some sink into the first tokens, some stay local
SLOW_FROM = 4096  # warn from here on (CPU)
SIDES = ("64", "128", "256")  # 256 x 256 float32 cells are ~0.45 MB of JSON; 512 x 512 would be ~1.8 MB
ZOOM_SIZES = ("16", "32", "64", "128", "256")


def on_gpu() -> bool:
    return default_device().type == "cuda"


@dataclass
class Request:
    """What to compute: changing any of it needs the button again."""

    source: str  # "smollm2" or "random"
    n: int
    layer: int
    seed: int
    model_problem: str | None  # why SmolLM2 cannot be used here, or None


def _slow_warning(T, n: int) -> None:
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
    st.warning(T("slow_warning", n=n, measured=measured))


def request(T) -> Request:
    """Source, length and layer (SmolLM2) or seed (random), with the notes each choice needs."""
    source = ui.select("src", T("source"), SOURCES, "smollm2", format_func=lambda s: T(f"src_{s}"), radio=True)
    model_problem = registry.model_status().get("smollm2") if source == "smollm2" else None
    if model_problem:
        st.error(T("missing_model", message=model_problem))
    c1, c2 = st.columns(2)
    if source == "smollm2":
        with c1:
            n = int(ui.select("n", T("n"), GPU_LENGTHS if on_gpu() else CPU_LENGTHS, DEFAULT_LENGTH))
        with c2:
            layer = ui.slider("layer", T("layer"), 0, SMOLLM2_LAYERS - 1, DEFAULT_LAYER)
        if n > TRAINED_CONTEXT:
            st.warning(T("beyond_context", n=n, limit=TRAINED_CONTEXT))
        if n >= SLOW_FROM and not on_gpu():
            _slow_warning(T, n)
        return Request(source, n, layer, 0, model_problem)
    st.warning(T("random_banner", heads=RANDOM_SHAPE["heads"], kv=RANDOM_SHAPE["kv_heads"], d=RANDOM_SHAPE["head_dim"]))
    with c1:
        n = int(ui.select("n", T("n"), RANDOM_LENGTHS, DEFAULT_LENGTH))
    with c2:
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    if n >= 8192 and not on_gpu():
        st.warning(T("random_slow", n=n))
    return Request(source, n, 0, seed, model_problem)


def document(T) -> tuple[str, str]:
    """(kind, text) of the document SmolLM2 reads: the shipped licence texts, or the user's own."""
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
        head = ui.slider("head", T("head"), 0, heads - 1, 0)
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
