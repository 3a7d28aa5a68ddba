"""/sdpa-steps: Q, K, V as a soft dict lookup (part `lookup`), scaled dot-product attention one step at a time on
matrices the user edits, checked against torch's SDPA on screen (part `steps`), and why the scores are divided by
√d_k (part `saturation`)."""

import streamlit as st

from app import ui

from .lookup import show_lookup
from .saturation import show_saturation
from .steps import show_steps


def page() -> None:
    T = ui.page_setup("sdpa_steps")
    st.title(T("title"))
    st.markdown(T("intro"))
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    show_lookup(T)
    show_steps(T)
    show_saturation(T)
    ui.page_end()
