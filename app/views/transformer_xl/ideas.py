"""The five masks at a small size, and how far back the last token can reach through the layers."""

import streamlit as st

from app import ui
from core import transformer_xl as tx
from viz import transformer_xl as vx

LAYERS = 30  # SmolLM2's depth
CONTEXT_N = 1024


def show(T) -> None:
    st.header(T("masks_header"))
    st.markdown(T("masks_text"))
    ui.show_figure(vx.masks_figure(tx.small_masks(), T), "xl-masks", key="fig-masks")
    st.header(T("reach_header"))
    c1, c2, c3 = st.columns(3)
    with c1:
        segment = ui.number("seg", T("segment"), 1, CONTEXT_N, 16)
    with c2:
        window = ui.number("win", T("window"), 1, CONTEXT_N, 16)
    with c3:
        sinks = ui.number("sinks", T("sinks"), 0, 64, 4)
    reach = tx.effective_context(CONTEXT_N, segment, window, sinks, LAYERS)
    fig = vx.lines_figure(
        range(1, LAYERS + 1),
        reach,
        T("reach_title", n=f"{CONTEXT_N:,}"),
        T("layers_axis"),
        T("reach_axis"),
        T,
    )
    ui.show_figure(fig, "xl-effective-context", data={"layers": list(range(1, LAYERS + 1)), **reach}, key="fig-reach")
    st.markdown(T("reach_text", seg=segment, xl=reach["xl"][-1], win=reach["window"][-1], layers=LAYERS))
