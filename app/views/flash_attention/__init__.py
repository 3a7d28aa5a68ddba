"""FlashAttention step by step: the tiles and the online softmax on a small random head (live, CPU), the memory
traffic of standard attention and of the tiled algorithm against Theorem 2, and why the backward pass recomputes
the weights."""

import streamlit as st

from app import ui

from . import measured, tiles, traffic


def page() -> None:
    T = ui.page_setup("flash_attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    tiles.show(T)
    traffic.show(T)
    measured.show(T)
    ui.page_end()
