"""Antecedent heads: which heads point a pronoun at which noun (part `sentence`), and a held-out test of whether
any head (or SmolLM2's own answer) resolves the pronoun or just follows the first-mentioned noun (part
`evaluation`). Data from core/antecedents/, figures from viz/antecedents.py."""

import streamlit as st

from app import models, ui
from core.antecedents.state import PRETRAINED, STATE

from .evaluation import evaluation
from .sentence import try_sentence


def page() -> None:
    T = ui.page_setup("antecedents")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(options=PRETRAINED, needs=models.PAGE_NEEDS["antecedents"], field=STATE["model"])
    model = models.load(key)
    if model is not None:
        try_sentence(T, key, model)
    evaluation(T, key, model)  # the stored results need no model; only the live recompute does
    ui.page_end()
