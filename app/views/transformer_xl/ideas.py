"""The five masks at a small size, and how far back the last token can reach through the layers."""

import streamlit as st

from app import ui
from core import transformer_xl as tx
from viz import transformer_xl as vx

LAYERS = 30  # SmolLM2's depth
CONTEXT_N = tx.REACH_CONTEXT


def show(T) -> None:
    words = ui.texts("transformer_xl.figure")
    st.header(T("masks_header"))
    st.markdown(T("masks_text"))
    ui.show_figure(vx.masks_figure(tx.masks_view(), words), "xl-masks", key="fig-masks")
    st.markdown(T("positions_note"))
    st.header(T("reach_header"))
    c1, c2, c3 = st.columns(3)
    with c1:
        segment = ui.field(tx.STATE["seg"], T("segment"), widget="number")
    with c2:
        window = ui.field(tx.STATE["win"], T("window"), widget="number", help=T("window_help"))
    with c3:
        sinks = ui.field(tx.STATE["sinks"], T("sinks"), widget="number")
    view = tx.reach_view(CONTEXT_N, segment, window, sinks, LAYERS)
    fig = vx.lines_figure(view.lines, words)
    ui.show_figure(fig, "xl-effective-context", data=view.lines.table(), key="fig-reach")
    st.markdown(T("reach_text", seg=view.segment, xl=view.xl, win=view.window, layers=view.layers))
