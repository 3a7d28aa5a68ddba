"""Part 1 of /masks: the user's sentences and the padded batch they make, with its attention_mask."""

import pandas as pd
import streamlit as st

from app import shared, ui
from core.masks import batch as core
from core.masks import state as masks_state
from viz.masks import attention_mask_figure

MAX_SENTENCES, MAX_TOKENS = masks_state.MAX_SENTENCES, masks_state.MAX_TOKENS
MATERIAL_PAD_TO = masks_state.MATERIAL_PAD_TO


def read_sentences(T) -> list[list[str]]:
    raw = ui.field(masks_state.STATE["text"], T("texts"), height=120)
    sentences = core.read_sentences(raw, MAX_SENTENCES, MAX_TOKENS)
    if sentences.too_many:
        st.info(T("too_many", k=MAX_SENTENCES))
    if sentences.empty:
        st.info(T("empty"))
    elif sentences.fell_back:
        st.info(T("need_two"))
    for i, n_total in sentences.cut:
        st.info(T("cut", i=i, n=n_total, k=MAX_TOKENS))
    return sentences.token_lists


def show_batch(T, token_lists: list[list[str]]) -> list[str]:
    """The padded batch as a table and its attention_mask; returns the sentences' row names."""
    st.header(T("batch"))
    batch = shared.view(core.pad_batch, token_lists)
    b, n = batch.real.shape
    st.markdown(T("batch_text", b=b, n=n, lengths=", ".join(str(x) for x in batch.lengths), pad=f"`{core.PAD}`"))
    rows = [f"{T('sentence')} {i}" for i in range(b)]
    positions = [str(j) for j in range(n)]
    st.dataframe(shared.table(padded_table, batch, "masks", rows, positions))
    fig = shared.figures(attention_mask_figure, batch, "masks.figure", rows)
    ui.show_figure(
        fig, "attention-mask", data=batch.attention_mask.numpy(), row_labels=rows, col_labels=positions, key="fig-am"
    )
    fixed = ui.field(masks_state.STATE["pad_to"], T("pad_to"), widget="number")
    c = shared.view(core.padding_comparison, token_lists, fixed)
    st.markdown(T("pad_fixed", n1=c.longest.length, p1=c.longest.padding, pos1=c.longest.positions,
                  n2=c.fixed.length, p2=c.fixed.padding, pos2=c.fixed.positions, s1=c.longest.scores,
                  s2=c.fixed.scores, ratio=c.score_ratio, real=c.fixed.real_scores,
                  diff=c.real_weights_diff, material=MATERIAL_PAD_TO))  # fmt: skip
    return rows


def padded_table(batch: core.PaddedBatch, T, rows: list[str], positions: list[str]) -> pd.DataFrame:
    return pd.DataFrame(batch.padded, index=pd.Index(rows, name=T("sentence")), columns=positions)
