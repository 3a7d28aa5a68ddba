"""/masks: masks on a padded batch of the user's sentences (padding, look-ahead, both), and the three kinds of
attention of the original Transformer chained as in the model, with their shapes. A small randomly initialised
attention: labelled as such."""

import streamlit as st

from app import ui
from core.masks.layers import D_MODEL, N_HEADS

from .batch import read_sentences, show_batch
from .kinds import SEED, show_three_kinds
from .mask_steps import show_masks_and_weights


def page() -> None:
    T = ui.page_setup("masks")
    st.title(T("title"))
    st.markdown(T("intro"))
    st.warning(T("random", d=D_MODEL, h=N_HEADS, seed=SEED), icon=":material/casino:")
    token_lists = read_sentences(T)
    rows = show_batch(T, token_lists)
    show_masks_and_weights(T, token_lists, rows)
    show_three_kinds(T, token_lists, rows)
    ui.page_end()
