"""Part 2 of /masks: the three masks of one sentence, then scores -> mask -> weights for one head."""

import streamlit as st

from app import shared, ui
from core.masks import batch as core
from core.masks.state import STATE, Sentences
from viz.labels import indexed_labels
from viz.masks import mask_steps_figures

SEED = 0


def show_masks_and_weights(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.header(T("masks"))
    c1, c2, c3 = st.columns(3)
    with c1:
        sentences = Sentences(token_lists)
        i = int(ui.field(STATE["row"], T("pick"), sentences, format_func=lambda k: rows[int(k)]))
    with c2:
        head = ui.field(STATE["head"], T("head"), widget="number")
    with c3:
        kind = ui.field(STATE["mask"], T("kind"), format_func=lambda k: T(f"kind_{k}"))
    view = shared.view(core.mask_steps_view, token_lists, i, head, kind, seed=SEED)
    labels = indexed_labels(view.tokens)
    figs = shared.figures(mask_steps_figures, view, "masks.figure", labels)
    st.caption(T("f_mask_legend"))
    for col, k in zip(ui.beside(3), core.MASK_KINDS):
        with col:
            data = view.masks[k].astype(int)
            ui.show_figure(
                figs[k], f"mask-{k}-sentence{i}", data=data, row_labels=labels, col_labels=labels, key=f"fig-mask-{k}"
            )

    st.header(T("steps"))
    st.markdown(T("steps_text", h=head))
    shown = [
        ("scores", f"scores-sentence{i}-head{head}", view.scores, "fig-scores"),
        ("applied", f"mask-{kind}-sentence{i}-applied", view.allowed.astype(int), "fig-mask-applied"),
        ("weights", f"weights-{kind}-sentence{i}-head{head}", view.weights, "fig-weights"),
    ]
    for col, (name, file_name, data, key) in zip(ui.beside(3), shown):
        with col:
            ui.show_figure(figs[name], file_name, data=data, row_labels=labels, col_labels=labels, key=key)
    facts = T(
        "facts",
        h=view.n_heads,
        b=view.n_sentences,
        mx=f"{view.masked_max:g}",
        lo=view.row_sum_min,
        hi=view.row_sum_max,
        diff=view.sdpa_diff,
    )
    st.markdown(facts)
    if view.has_padding:
        st.caption(T("pad_rows"))
