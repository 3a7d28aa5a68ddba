"""Relative part (Shaw et al. 2018): a learned vector per clipped offset, on random (seeded) Q, K and E."""

import streamlit as st

from app import ui
from core.positions import relative
from core.positions.state import STATE
from viz.positions import relative as figures


def part(T) -> None:
    st.markdown(T("rel_intro"))
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.field(STATE["rel_n"], T("rel_n"))
    with c2:
        d = ui.field(STATE["rel_d"], T("rel_d"))
    with c3:
        k = ui.field(STATE["clip"], T("clip"))
    with c4:
        seed = ui.field(STATE["seed"], T("seed"), widget="number")
    view = relative.shaw_view(n, d, k, seed)
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.offsets_figure(view, ui.texts("positions.figure")),
            "shaw-offsets",
            data=view.offsets,
            row_labels=view.labels,
            col_labels=view.labels,
            key="fig-offsets",
        )
    with c2:
        ui.show_figure(
            figures.relative_scores_figure(view, ui.texts("positions.figure")),
            "shaw-s",
            data=view.relative,
            row_labels=view.labels,
            col_labels=view.labels,
            key="fig-s",
        )
    ui.show_figure(
        figures.weights_figure(view, ui.texts("positions.figure")),
        "shaw-weights",
        data=view.weights,
        row_labels=view.labels,
        col_labels=view.labels,
        key="fig-shaw-w",
    )
    st.info(T("rel_result", k=k, spread=view.clipped_spread, delta=view.change))
    st.markdown(T("rel_music", n=n, d=d, pairwise=view.pairwise_numbers, gathered=view.gathered_numbers,
                  offsets=view.offsets_used))  # fmt: skip
