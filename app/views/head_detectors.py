"""Head detectors: five attention patterns (previous token, duplicate token, induction, first-token sink, local
window) scored on every head of MiniLM and SmolLM2 over repeated random-token sequences. The committed map comes
from scripts/head_detectors.py (results/head_detectors.json); a small version can be recomputed live."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core import head_detectors as hd
from viz import head_detectors as figures

PRETRAINED = hd.SHIPPED_MODELS
TOP = 8


def show_map(T, view: hd.DetectorView) -> None:
    name = T(f"name_{view.detector}")
    fig = figures.detector_grid(view, ui.texts("head_detectors.figure"))
    ui.show_figure(fig, f"{view.model_key}-{view.detector}", data=view.scores, row_labels=view.layer_labels,
                   col_labels=view.head_labels, key=f"fig-{view.detector}")  # fmt: skip
    st.markdown(T("top_heads", k=len(view.top_scores), detector=name))
    st.dataframe({T("col_layer"): view.top_layers, T("col_head"): view.top_heads, T("col_score"): view.top_scores},
                 hide_index=True)  # fmt: skip
    st.markdown(T(view.finding, detector=name, best=view.best, uniform=view.uniform))


def page() -> None:
    T = ui.page_setup("head_detectors")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(options=PRETRAINED, field=hd.STATE["model"], needs=models.PAGE_NEEDS["head-detectors"])
    detector = ui.field(hd.STATE["detector"], T("detector"), format_func=lambda d: T(f"name_{d}"))
    st.info(T(f"define_{detector}", w=hd.WINDOW))
    # a learner's own folder has no committed map: its map is computed live from the start
    live = ui.field(hd.STATE["live"], T("live"), SimpleNamespace(model=key), help=T("live_help"))
    if live:
        s = hd.LIVE_SETTINGS
        st.markdown(T("live_note", b=s["n_sequences"], t=s["half_length"], seed=s["seed"]))
        if models.load(key) is not None:
            with st.spinner(T("computing")):
                settings = s["n_sequences"], s["half_length"], s["seed"]
                found = models.computed(key, hd.detector_map, *settings, queue="detector_map")
            view = hd.detector_view(found, detector, key, TOP)
            st.caption(T("live_seconds", seconds=view.seconds))
            show_map(T, view)
    else:
        view = hd.committed_view(key, detector, TOP)
        if view is None:
            st.warning(T("missing"))
        else:
            s = view.settings
            st.markdown(T("committed_note", b=s["n_sequences"], t=s["half_length"], seed=s["seed"]))
            st.caption(T("provenance", **view.provenance))
            show_map(T, view)
    st.markdown(T("next"))
    ui.page_end()
