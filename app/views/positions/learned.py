"""Learned absolute part: MiniLM's trained position vectors, compared by cosine similarity."""

import streamlit as st

from app import models, ui
from core.positions import learned
from core.positions.state import STATE
from viz.positions import learned as figures


def part(T) -> None:
    st.markdown(T("learned_intro"))
    # MiniLM first (the default and its committed figures); a learner's model with a learned table follows
    key = models.pick_model(
        options=("minilm",), needs=models.PAGE_NEEDS["positions/learned"], field=STATE["model"], part="learned"
    )
    model = models.load(key)
    if model is None:
        return
    n = ui.field(STATE["npos"], T("npos"))
    view = learned.similarity_view(model, n)
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.similarity_figure(view, ui.texts("positions.figure")),
            "minilm-position-similarity",
            data=view.shown,
            row_labels=view.axis,
            col_labels=view.axis,
            key="fig-sim",
        )
    with c2:
        ui.show_figure(
            figures.by_distance_figure(view, ui.texts("positions.figure")),
            "minilm-similarity-by-distance",
            data=view.by_distance,
            key="fig-sim-dist",
        )
    far = view.distance(learned.FAR)
    st.info(T("learned_result", s1=view.mean_at(1), s10=view.mean_at(10), far=far, sfar=view.mean_at(far)))
    sub = learned.subspace_view(model)
    st.markdown(T("hypotheses", d=sub.d, k=sub.k, energy=sub.energy, words=sub.word_share, random=sub.random_share))
    st.markdown(T("hyp_apart" if sub.kept_apart else "hyp_shared", times=sub.below_chance))
    st.markdown(T("past_intro"))
    pos = ui.field(STATE["pastpos"], T("past_position"), widget="number")
    past = learned.past_table_view(model, pos)
    if past.exists:
        numbers = ", ".join(f"{x:.4f}" for x in past.head)
        st.code(f"position_embeddings[{past.position}] = [{numbers}, …]  # |v| = {past.norm:.3f}", language=None)
        st.success(T("past_exists", pos=past.position, n=past.table_size, d=past.width))
    else:
        # the error's name only: torch's message is English, and the sentence below says it in the reader's words
        st.code(f"position_embeddings[{past.position}]  # IndexError", language=None)
        st.error(
            T(
                "past_missing",
                pos=past.position,
                n=past.table_size,
                last=past.table_size - 1,
                name=models.name_in_text(key),
            )
        )
