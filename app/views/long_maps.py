"""Exact attention maps of a long document: SmolLM2's weights of every head of one layer over thousands of tokens,
pooled to at most 256 x 256 cells for the browser (computed at 512 x 512, never holding n x n), with a zoom into
any window at full resolution. Without the model weights, a demo on RANDOM q and k."""

from dataclasses import dataclass

import numpy as np
import streamlit as st

from app import models, ui
from core import long_context, long_maps
from core.device import default_device
from core.models import registry
from core.timing import human_bytes
from viz.long_maps import bin_range_labels, head_shares_figure, long_heatmap, payload_bytes

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
COMPUTE_KEY = "_long_maps_request"


def on_gpu() -> bool:
    return default_device().type == "cuda"


@st.cache_resource(show_spinner=False, max_entries=2)
def _smollm2_qk(_model, text_id: str, n: int, layer: int, _text: str):
    """One layer's q and k of the first n tokens of _text (the model forward, cached per text id, n, layer)."""
    import time

    batch = long_maps.document_batch(_model, _text, n)
    t0 = time.perf_counter()
    q, k, scale = _model.layer_qk(batch, layer)
    return q, k, scale, batch.tokens[0], time.perf_counter() - t0


@st.cache_resource(show_spinner=False)
def _gpu_smollm2():
    """A separate SmolLM2 on the GPU for long documents (the shared one stays on the CPU for the other pages)."""
    model = registry.LOADERS["smollm2"]()
    model.model.to("cuda")
    return model


@st.cache_resource(show_spinner=False, max_entries=2)
def _random_qk(n: int, seed: int):
    return long_maps.random_qk(n, seed=seed)


@st.cache_data(show_spinner=False, max_entries=4)
def _maps(source: str, text_id: str, n: int, layer: int, seed: int, _qk) -> long_maps.LayerMaps:
    """Pooled mean and max of every head (cached per source, text, n, layer, seed; _qk is not hashed)."""
    q, k, scale = _qk[:3]
    device = default_device()
    return long_maps.layer_maps(q.to(device), k.to(device), scale, causal=True)


@st.cache_data(show_spinner=False)
def _measured_smollm2() -> list[dict]:
    """SmolLM2 timings from results/bench_pooled.json (empty if the benchmark has not been run with --smollm2)."""
    import json

    path = long_context.ROOT / "results" / "bench_pooled.json"
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["cpu"]["smollm2"]["rows"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []


def settings(T):
    """(source, n, layer, seed) from the widgets, with the notes each choice needs; None for the model when
    SmolLM2 cannot be used."""
    source = ui.select("src", T("source"), SOURCES, "smollm2", format_func=lambda s: T(f"src_{s}"), radio=True)
    model_problem = registry.model_status().get("smollm2") if source == "smollm2" else None
    if model_problem:
        st.error(T("missing_model", message=model_problem))
    c1, c2 = st.columns(2)
    if source == "smollm2":
        lengths = GPU_LENGTHS if on_gpu() else CPU_LENGTHS
        with c1:
            n = int(ui.select("n", T("n"), lengths, DEFAULT_LENGTH))
        with c2:
            layer = ui.slider("layer", T("layer"), 0, SMOLLM2_LAYERS - 1, DEFAULT_LAYER)
        seed = 0
        if n > TRAINED_CONTEXT:
            st.warning(T("beyond_context", n=n, limit=TRAINED_CONTEXT))
        if n >= SLOW_FROM and not on_gpu():
            rows = [r for r in _measured_smollm2() if r.get("n_tokens", 0) >= SLOW_FROM]
            measured = "; ".join(
                T(
                    "measured_item",
                    n=r["n_tokens"],
                    layer=r["layer"],
                    fwd=r["forward_s"],
                    pool=r["pool_s"],
                    load=r.get("loadavg_1min", "?"),
                )
                for r in rows
            ) or T("not_measured")
            st.warning(T("slow_warning", n=n, measured=measured))
    else:
        shape = long_maps.RANDOM_SHAPE
        st.warning(T("random_banner", heads=shape["heads"], kv=shape["kv_heads"], d=shape["head_dim"]))
        with c1:
            n = int(ui.select("n", T("n"), RANDOM_LENGTHS, DEFAULT_LENGTH))
        with c2:
            seed = ui.number("seed", T("seed"), 0, 9999, 0)
        layer = 0
        if n >= 8192 and not on_gpu():
            st.warning(T("random_slow", n=n))
    return source, n, layer, seed, model_problem


def document(T) -> tuple[str, str]:
    """(kind, text) of the document SmolLM2 reads: the shipped licence texts, or the user's own."""
    kind = ui.select(
        "doc", T("document"), DOCUMENTS, "licences", format_func=lambda s: T(f"doc_{s}"), horizontal=True, radio=True
    )
    if kind == "own":
        return kind, ui.text_area("text", T("own_text"), OWN_TEXT_DEFAULT, height=150)
    return kind, long_context.load_long_text()


def compute(T, source: str, text_id: str, n: int, layer: int, seed: int, text: str = ""):
    """(maps, qk, tokens, forward seconds) or None (with a message) when nothing can be computed."""
    if source == "smollm2":
        model = _gpu_smollm2() if on_gpu() else models.load("smollm2")
        if model is None:
            return None
        with st.spinner(T("running_model", layer=layer, n=n)):
            try:
                qk = _smollm2_qk(model, text_id, n, layer, text)
            except ValueError as err:
                st.error(T("bad_input", error=str(err)))
                return None
        tokens, forward_s = qk[3], qk[4]
    else:
        qk = _random_qk(n, seed)
        tokens, forward_s = None, 0.0
    n_real = qk[0].shape[2]
    with st.spinner(T("running_pool", heads=qk[0].shape[1], n=n_real)):
        maps = _maps(source, text_id, n, layer, seed, qk)
    return maps, qk, tokens, forward_s


def show_heads(T, maps: long_maps.LayerMaps, head: int) -> int:
    summary = long_maps.head_summary(maps)
    first_w = int(maps.col_edges[1] - maps.col_edges[0])
    own_w = int(round(float(np.diff(maps.row_edges).mean())))
    first_label = T("first_share", w=first_w) if first_w > 1 else T("first_token")
    fig = head_shares_figure(
        summary["first_share"],
        summary["own_bin_share"],
        first_label,
        T("own_share", w=own_w),
        title=T("shares_title", n=maps.n),
        head_label=T("head_axis"),
        share_label=T("share_axis"),
        selected=head,
    )
    ui.show_figure(
        fig,
        "long-maps-head-shares",
        data={
            "head": list(range(len(summary["first_share"]))),
            "first_share": summary["first_share"].tolist(),
            "own_bin_share": summary["own_bin_share"].tolist(),
        },
        key="fig-shares",
    )
    st.caption(T("shares_note", err=float(summary["row_sum_error"].max())))
    return payload_bytes(fig)


@dataclass
class View:
    """How to show the computed maps: chosen before or after computing (changing it never recomputes)."""

    head: int
    stat: str  # "mean" or "max"
    side: int  # cells per side on screen
    log_scale: bool
    zoom_size: int
    zoom_q0: int
    zoom_k0: int


def view_controls(T, n: int, heads: int) -> View:
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
    return View(head, stat, side, log_scale, size, q0, k0)


def show_map(T, maps, source: str, layer: int, view: View, kv_head: int) -> int:
    head, stat = view.head, view.stat
    mean, mx, r_edges, c_edges = long_maps.coarsen(
        maps.mean[head], maps.max[head], maps.row_edges, maps.col_edges, view.side
    )
    values = mean if stat == "mean" else mx
    masked = long_maps.future_cells(r_edges, c_edges) if maps.causal else None
    rows, cols = bin_range_labels(r_edges), bin_range_labels(c_edges)
    title = T(
        "random_title" if source == "random" else "map_title",
        src="SmolLM2",
        layer=layer,
        head=head,
        kv=kv_head,
        stat=T(f"stat_{stat}"),
        s=len(rows),
    )
    fig = long_heatmap(
        values,
        rows,
        cols,
        masked=masked,
        log_scale=view.log_scale,
        title=title,
        x_title=T("x_binned"),
        y_title=T("y_binned"),
        value_name=T(f"{stat}_name"),
        row_name=T("queries"),
        col_name=T("keys"),
    )
    ui.show_figure(
        fig, f"long-maps-{source}-l{layer}-h{head}-{stat}", data=values, row_labels=rows, col_labels=cols, key="fig-map"
    )
    cell_rows = int(round(float(np.diff(r_edges).mean())))
    cell_cols = int(round(float(np.diff(c_edges).mean())))
    if view.log_scale:
        st.caption(T("map_note", rows=cell_rows, cols=cell_cols, low=float(fig.data[0].zmin)))
    else:
        st.caption(T("map_note_linear", rows=cell_rows, cols=cell_cols))
    return payload_bytes(fig)


def show_zoom(T, qk, tokens, view: View) -> int:
    st.subheader(T("h_zoom"))
    st.caption(T("zoom_intro"))
    q, k, scale = qk[:3]
    head = view.head
    weights, masked, rows, cols = long_maps.zoom_window(
        q, k, scale, True, head, view.zoom_q0, view.zoom_k0, view.zoom_size
    )
    names = tokens if tokens is not None else [""] * q.shape[2]
    row_labels = [f"{i} {names[i]}" for i in range(rows.start, rows.stop)]
    col_labels = [f"{j} {names[j]}" for j in range(cols.start, cols.stop)]
    fig = long_heatmap(
        weights,
        row_labels,
        col_labels,
        masked=masked,
        log_scale=view.log_scale,
        title=T("zoom_title", head=head, q0=rows.start, q1=rows.stop - 1, k0=cols.start, k1=cols.stop - 1),
        x_title=T("x_tokens"),
        y_title=T("y_tokens"),
        value_name=T("weight"),
        row_name=T("queries"),
        col_name=T("keys"),
    )
    ui.show_figure(
        fig,
        f"long-maps-zoom-h{head}-q{rows.start}-k{cols.start}",
        data=weights,
        row_labels=row_labels,
        col_labels=col_labels,
        key="fig-zoom",
    )
    inside = float(weights.sum(-1).mean())
    st.caption(T("zoom_mass", c=cols.stop - cols.start, inside=inside, rest=max(0.0, 1.0 - inside)))
    if tokens is not None:
        with st.expander(T("zoom_text")):
            st.text("".join(tokens[rows.start : rows.stop]))  # st.text: shown as plain text, never as HTML
    return payload_bytes(fig)


def main() -> None:
    T = ui.page_setup("long_maps")
    st.title(T("title"))
    st.markdown(T("intro"))
    source, n, layer, seed, model_problem = settings(T)
    kind, text = document(T) if source == "smollm2" else ("licences", "")
    text_id = long_context.text_fingerprint(text)
    if source == "smollm2" and not model_problem and kind == "licences":
        st.caption(T("doc", chars=len(text)))
    shape = long_maps.RANDOM_SHAPE  # SmolLM2's shape too: 9 query heads, 3 key/value heads
    view = view_controls(T, n, shape["heads"])
    request = (source, text_id, n, layer, seed)
    if st.button(T("compute"), type="primary", disabled=bool(model_problem)):
        st.session_state[COMPUTE_KEY] = request
    if st.session_state.get(COMPUTE_KEY) != request or model_problem:
        st.info(T("press"))
        ui.page_end()
        return
    result = compute(T, source, text_id, n, layer, seed, text)
    if result is None:
        ui.page_end()
        return
    maps, qk, tokens, forward_s = result
    if kind == "own":
        st.caption(T("own_doc", chars=len(text), n=maps.n))
        if maps.n < n:
            st.info(T("own_short", tokens=maps.n, n=n))
    heads = maps.mean.shape[0]
    device = default_device().type
    if source == "smollm2":
        st.caption(
            T(
                "timings",
                n=maps.n,
                heads=heads,
                layer=layer,
                fwd=forward_s,
                s=maps.mean.shape[-1],
                pool=maps.seconds,
                backend=maps.backend,
                device=device,
            )
        )
    else:
        st.caption(
            T(
                "timings_random",
                n=maps.n,
                heads=heads,
                s=maps.mean.shape[-1],
                pool=maps.seconds,
                backend=maps.backend,
                device=device,
            )
        )
    st.subheader(T("h_heads"))
    bars = show_heads(T, maps, view.head)
    st.subheader(T("h_map"))
    kv_head = view.head // (heads // qk[1].shape[1])
    map_bytes = show_map(T, maps, source, layer, view, kv_head)
    zoom_bytes = show_zoom(T, qk, tokens, view)
    st.info(
        T(
            "bytes",
            total=human_bytes(bars + map_bytes + zoom_bytes),
            map=human_bytes(map_bytes),
            zoom=human_bytes(zoom_bytes),
            bars=human_bytes(bars),
            n=maps.n,
            heads=heads,
            full=human_bytes(long_maps.full_matrix_bytes(maps.n, heads)),
        )
    )
    ui.page_end()


def page() -> None:
    main()
