"""/sdpa-gqa: PyTorch's SDPA backends against a naive matmul-softmax-matmul (committed benchmark + a small live CPU
run), and grouped-query attention: what sharing key/value heads saves in the KV cache of real models. One module
per part; the math is core/sdpa_gqa/, the figures viz/sdpa_gqa.py."""

import streamlit as st

from app import ui

from . import backends, gqa


def page() -> None:
    T = ui.page_setup("sdpa_gqa")
    st.title(T("title"))
    st.markdown(T("intro"))
    backends.part(T)
    gqa.part(T)
    ui.page_end()
