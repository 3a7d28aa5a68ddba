"""/rope-scaling: what linear, dynamic NTK, YaRN, LongRoPE and llama3 scaling do to each frequency (computed by
transformers' own RoPE code), and what they do to SmolLM2's loss past its 8,192-token training context. Two parts
on one page: the formulas, then the experiment. The math is core.rope_scaling, the figures viz.rope_scaling."""

import streamlit as st

from app import ui

from . import experiment, formulas


def page() -> None:
    T = ui.page_setup("rope_scaling")
    st.title(T("title"))
    st.markdown(T("intro"))
    formulas.part(T)
    experiment.part(T)
    ui.page_end()
