"""/long-maps: the widgets. What to compute (source, length, layer or seed, document) and how to show it (head,
statistic, resolution, scale, zoom window); every widget is bound to the URL."""

from dataclasses import dataclass
from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core.device import default_device
from core.long_maps import sources
from core.long_maps.state import DEFAULT_SOURCE, RANDOM, STATE, shape_of
from core.long_maps.views import measured_smollm2
from core.models import registry
from core.rope_scaling import long_context

F = STATE  # the page's link, declared in core
SLOW_FROM = 4096  # warn from here on (CPU)


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
    return shape_of(source, None if source == RANDOM else models.capabilities(source), on_gpu())


def request(T) -> Request:
    """Source, length and layer (a model) or seed (random), with the notes each choice needs."""
    options = (DEFAULT_SOURCE, *models.own_keys(models.PAGE_NEEDS["long-maps"]), RANDOM)
    models.say_why_not_offered(
        "src", options, models.PAGE_NEEDS["long-maps"], DEFAULT_SOURCE
    )  # a link to one it cannot read
    offered = SimpleNamespace(sources=options)
    source = ui.field(F["src"], T("source"), offered, widget="radio", format_func=lambda s: _label(T, s))
    shape = _shape(source)
    model = "" if source == RANDOM else models.name_in_text(source)  # escaped: sentences are markdown
    model_problem = registry.model_status().get(source) if source != RANDOM else None
    if model_problem:
        said = models.words_about(source, models.reason_words(model_problem))  # in the reader's words
        st.error(T("missing_model", model=model, message=said))
    c1, c2 = st.columns(2)
    if source != RANDOM:
        with c1:
            n = int(ui.field(F["n"], T("n"), shape))
        with c2:
            layer = ui.field(F["layer"], T("layer"), shape) if shape.n_layers > 1 else 0
        if shape.capped:
            st.info(T("table_cap", model=model, limit=shape.table_limit))
        if shape.beyond_context(n):
            st.warning(T("beyond_context", n=n, model=model, limit=shape.trained))
        if n >= SLOW_FROM and not (on_gpu() and source == DEFAULT_SOURCE):  # a learner's model runs on the CPU
            _slow_warning(T, n, model)
        return Request(source, n, layer, 0, model_problem, shape)
    st.warning(T("random_banner", heads=shape.n_heads, kv=shape.n_kv_heads, d=sources.RANDOM_SHAPE["head_dim"]))
    with c1:
        n = int(ui.field(F["n"], T("n"), shape))
    with c2:
        seed = ui.field(F["seed"], T("seed"), widget="number")
    if n >= 8192 and not on_gpu():
        st.warning(T("random_slow", n=n))
    return Request(source, n, 0, seed, model_problem, shape)


def document(T) -> tuple[str, str]:
    """(kind, text) of the document the model reads: the shipped licence texts, or the user's own."""
    kind = ui.field(F["doc"], T("document"), widget="radio", format_func=lambda s: T(f"doc_{s}"), horizontal=True)
    if kind == "own":
        return kind, ui.field(F["text"], T("own_text"), height=150)
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
    st.header(T("h_view"))
    c1, c2, c3, c4 = ui.widgets(4)
    with c1:
        head = ui.field(F["head"], T("head"), SimpleNamespace(n_heads=heads)) if heads > 1 else 0
    with c2:
        stat = ui.field(F["stat"], T("stat"), widget="radio", format_func=lambda s: T(f"stat_{s}"))
    with c3:
        side = int(ui.field(F["side"], T("side")))
    with c4:
        log_scale = ui.field(F["log"], T("log"))
    c1, c2, c3 = st.columns(3)
    with c1:
        size = ui.field(F["zsize"], T("zoom_size"), SimpleNamespace(n=n))
    window = SimpleNamespace(n=n, zsize=size)
    with c2:
        q0 = ui.field(F["zq"], T("zoom_q0"), window, widget="number")
    with c3:
        k0 = ui.field(F["zk"], T("zoom_k0"), window, widget="number")
    return Display(head, stat, side, log_scale, int(size), q0, k0)
