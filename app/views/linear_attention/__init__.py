"""/linear-attention (Katharopoulos et al. 2020): which product is computed first and what it costs, the attention
matrix linear attention implies next to softmax's, why softmax's exp kernel factors only through an
infinite-dimensional feature map, measured time against n with its slopes, and generation speed of the RNN form
against softmax with and without a KV cache, and both kinds trained on the paper's copy task (quality, not
only speed). One module per part; the math is core/linear_attention/, the figures
viz/linear_attention.py."""

import streamlit as st

from app import ui
from core.linear_attention import measure

from . import associativity, exp_kernel, generation, implied, quality, timing


def page() -> None:
    T = ui.page_setup("linear_attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    associativity.part(T)
    implied.part(T)
    exp_kernel.part(T)
    results = measure.load_results()
    timing.part(T, results)
    generation.part(T, results)
    quality.part(T)
    ui.page_end()
