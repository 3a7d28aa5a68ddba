"""Exact attention maps of a long document: a model's weights of every head of one layer over thousands of tokens,
pooled to at most 256 x 256 cells for the browser (computed at 512 x 512, never holding n x n), with a zoom into
any window at full resolution. The model: SmolLM2 (the default; on the GPU where there is one), or a learner's
own whose weights are softmax(q . k) alone (core.long_maps.sources: layers, heads, lengths and causal mask from its
capabilities). Without model weights, a demo on RANDOM q and k.

Parts (one module each): settings (widgets), compute (cached model run and pooling), heads, pooled_map, zoom, and
measured (the committed timings on a CPU and a GPU).
Math in core/long_maps/, figures in viz/long_maps.py."""

import streamlit as st

from app import models, ui
from core.device import default_device
from core.long_maps.views import SentBytes
from core.rope_scaling import long_context
from core.timing import human_bytes

from . import heads, measured, pooled_map, settings, zoom
from .compute import compute

COMPUTE_KEY = "_long_maps_request"


def _timings(T, result, req: settings.Request) -> None:
    maps = result.maps
    common = dict(
        n=maps.n,
        heads=maps.mean.shape[0],
        s=maps.mean.shape[-1],
        pool=maps.seconds,
        backend=maps.backend,
        device=default_device().type,
    )
    if req.source != "random":
        attention = T("attention_causal" if maps.causal else "attention_bidirectional")
        st.caption(T("timings", layer=req.layer, fwd=result.forward_s, attention=attention, **common))
    else:
        st.caption(T("timings_random", **common))


def page() -> None:
    T = ui.page_setup("long_maps")
    st.title(T("title"))
    st.markdown(T("intro"))
    req = settings.request(T)
    kind, text = settings.document(T) if req.source != "random" else ("licences", "")
    text_id = long_context.text_fingerprint(text)
    if req.source != "random" and not req.model_problem and kind == "licences":
        st.caption(T("doc", chars=len(text)))
    display = settings.display(T, req.n, req.shape.n_heads)
    key = (req.source, text_id, req.n, req.layer, req.seed)
    if st.button(T("compute"), type="primary", disabled=bool(req.model_problem)):
        st.session_state[COMPUTE_KEY] = key
    result = None
    if st.session_state.get(COMPUTE_KEY) != key or req.model_problem:
        st.info(T("press"))
    else:
        result = compute(T, req, text_id, text)
    if result is not None:
        maps = result.maps
        if kind == "own":
            st.caption(T("own_doc", chars=len(text), n=maps.n, model=models.name_in_text(req.source)))
            if maps.n < req.n:
                st.info(T("own_short", tokens=maps.n, n=req.n))
        _timings(T, result, req)
        st.header(T("h_heads"))
        bars = heads.show(T, maps, display.head)
        st.header(T("h_map"))
        map_bytes = pooled_map.show(T, maps, req.source, req.layer, display, result.qk.k.shape[1])
        sent = SentBytes(bars, map_bytes, zoom.show(T, result.qk, result.tokens, display, maps.causal))
        st.info(
            T(
                "bytes",
                total=human_bytes(sent.total),
                map=human_bytes(sent.pooled_map),
                zoom=human_bytes(sent.zoom),
                bars=human_bytes(sent.bars),
                n=maps.n,
                heads=maps.mean.shape[0],
                full=human_bytes(maps.full_bytes),
            )
        )
    measured.show(T)
    ui.page_end()
