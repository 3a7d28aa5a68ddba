"""A small rerun on the reader's text (or the shipped one): the five methods on SmolLM2, live, when asked."""

import streamlit as st

from app import models, ui
from core import transformer_xl as tx
from viz import transformer_xl as vx

MAX_TOKENS = 256


def show(T) -> None:
    st.header(T("live_header"))
    st.markdown(T("live_text", k=MAX_TOKENS))
    text = ui.text_area("text", T("text"), T("default_text"), height=120)
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        segment = ui.number("lseg", T("segment"), 1, MAX_TOKENS, 32)
    with c2:
        window = ui.number("lwin", T("window"), 1, MAX_TOKENS, 32)
    with c3:
        sinks = ui.number("lsinks", T("sinks"), 0, 64, 4)
    with c4:
        run = ui.checkbox("live", T("run"), False)
    if not run:
        return
    if not text.strip():
        st.info(T("empty"))
        return
    model = models.load("smollm2")
    if model is None:
        return
    ids = model.tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) < 2:
        st.info(T("too_short"))
        return
    if len(ids) > MAX_TOKENS:
        st.info(T("cut", n=len(ids), k=MAX_TOKENS))
        ids = ids[:MAX_TOKENS]
    with st.spinner(T("running")):
        result = tx.compare(model.model, ids, segment, window, sinks)
    block = max(1, len(ids) // 16)
    curves = {m: result.by_block(m, block).tolist() for m in tx.METHODS}
    x = [block * (k + 0.5) for k in range(len(curves["full"]))]
    fig = vx.lines_figure(x, curves, T("by_block_title", block=block), T("position_axis"), T("loss_axis"), T)
    ui.show_figure(fig, "xl-live-loss", data={"position": x, **curves}, key="fig-live")
    st.dataframe(
        {
            T("col_method"): [T(f"method_{m}") for m in tx.METHODS],
            T("col_mean"): [round(result.mean(m), 4) for m in tx.METHODS],
        },
        hide_index=True,
    )
