"""Transformer-XL's segment recurrence and what came after: the masks, the effective context through the layers,
SmolLM2's loss per position over the shipped long text (committed results), and a small rerun live."""

import streamlit as st

from app import ui

from . import ideas, live, measured


def page() -> None:
    T = ui.page_setup("transformer_xl")
    st.title(T("title"))
    st.markdown(T("intro"))
    ideas.show(T)
    measured.show(T)
    live.show(T)
    ui.page_end()
