"""The five masks at a small size, and how far back the last token can reach through the layers. Neither depends
on the reader's text (part 4's): their views and figures are made once per process for every visitor at the same
settings (app/shared.py), not again at every run the text box starts."""

import streamlit as st

from app import shared, ui
from core import transformer_xl as tx
from viz import transformer_xl as vx

LAYERS = 30  # SmolLM2's depth
CONTEXT_N = tx.REACH_CONTEXT


def show(T) -> None:
    st.header(T("masks_header"))
    st.markdown(T("masks_text"))
    masks = shared.figures(vx.masks_figures, shared.view(tx.masks_view), "transformer_xl.figure")
    for block, (method, fig) in zip(ui.beside(len(masks), per_line=vx.MASKS_PER_LINE), masks.items()):
        with block:
            ui.show_figure(fig, f"xl-mask-{method}", key=f"fig-mask-{method}")
    st.markdown(T("positions_note"))
    st.header(T("reach_header"))
    c1, c2, c3 = st.columns(3)
    with c1:
        segment = ui.field(tx.STATE["seg"], T("segment"), widget="number")
    with c2:
        window = ui.field(tx.STATE["win"], T("window"), widget="number", help=T("window_help"))
    with c3:
        sinks = ui.field(tx.STATE["sinks"], T("sinks"), widget="number")
    view = shared.view(tx.reach_view, CONTEXT_N, segment, window, sinks, LAYERS)
    fig = shared.figures(vx.lines_figure, view.lines, "transformer_xl.figure")
    ui.show_figure(fig, "xl-effective-context", data=view.lines.table(), key="fig-reach")
    st.markdown(T("reach_text", seg=view.segment, xl=view.xl, win=view.window, layers=view.layers))
