"""A small rerun on the reader's text (or the shipped one): the five methods on SmolLM2 (the committed comparison's
model) or the reader's own decoder, live, when asked."""

import streamlit as st

from app import models, ui
from core import transformer_xl as tx
from viz import transformer_xl as vx

MAX_TOKENS = tx.LIVE_MAX_TOKENS


def show(T) -> None:
    st.header(T("live_header"))
    key = models.pick_model(options=("smollm2",), needs=models.PAGE_NEEDS["transformer-xl"], field=tx.STATE["model"])
    st.markdown(T("live_text", k=MAX_TOKENS, name=models.name_in_text(key)))
    text = ui.field(tx.STATE["text"], T("text"), default=T("default_text"), height=120)
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        segment = ui.field(tx.STATE["lseg"], T("segment"), widget="number")
    with c2:
        window = ui.field(tx.STATE["lwin"], T("window"), widget="number", help=T("window_help"))
    with c3:
        sinks = ui.field(tx.STATE["lsinks"], T("sinks"), widget="number")
    with c4:
        run = ui.field(tx.STATE["live"], T("run"))
    if not run:
        return
    if not text.strip():
        st.info(T("empty"))
        return
    if models.load(key) is None:
        return
    with st.spinner(T("running", name=models.name_in_text(key), k=len(tx.METHODS))):
        view = models.computed(key, tx.live_view, text, segment, window, sinks, MAX_TOKENS, queue="transformer_xl")
    if view.status == "too_short":
        st.info(T("too_short"))
        return
    if view.cut:
        st.info(T("cut", n=view.total, k=view.n))
    fig = vx.lines_figure(view.by_block, ui.texts("transformer_xl.figure"))
    ui.show_figure(fig, "xl-live-loss", data=view.by_block.table(), key="fig-live")
    st.dataframe(
        {T("col_method"): [T(f"method_{m}") for m in view.mean], T("col_mean"): list(view.mean.values())},
        hide_index=True,
    )
