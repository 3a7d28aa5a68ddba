"""ALiBi part: per-head slopes, one head's linear bias, and the weights that bias alone gives."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core.positions import alibi
from core.positions.state import STATE
from viz.positions import alibi as figures


def part(T) -> None:
    st.markdown(T("alibi_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        heads = ui.field(STATE["heads"], T("heads"))
    with c2:
        n = ui.field(STATE["al_n"], T("al_n"))
    with c3:
        h = ui.field(STATE["al_head"], T("al_head"), SimpleNamespace(heads=heads)) if heads > 1 else 0
    view = alibi.alibi_view(heads, n, h)
    names = figures.head_names(view)
    ui.show_figure(
        figures.slopes_figure(view, ui.texts("positions.figure")),
        "alibi-slopes",
        data={"head": names, "slope": view.slopes},
        key="fig-slopes",
    )
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.bias_figure(view, ui.texts("positions.figure")),
            f"alibi-bias-head{view.head}",
            data=view.bias,
            row_labels=view.labels,
            col_labels=view.labels,
            key="fig-bias",
        )
    with c2:
        ui.show_figure(
            figures.weights_figure(view, ui.texts("positions.figure")),
            f"alibi-weights-head{view.head}",
            data=view.weights,
            row_labels=view.labels,
            col_labels=view.labels,
            key="fig-alibi-w",
        )
    st.dataframe({T("head"): names, T("slope"): view.slopes, T("span_col"): view.span})
    st.caption(T("span_note"))
