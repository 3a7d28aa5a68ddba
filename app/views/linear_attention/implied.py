"""Part 2: the attention matrix linear attention implies, next to softmax's on the same Q and K."""

import streamlit as st

from app import ui
from core.linear_attention.state import STATE
from core.linear_attention.views import implied_view
from viz.linear_attention import implied_figures


def part(T) -> None:
    st.header(T("h_implied"))
    st.markdown(T("implied"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = ui.field(STATE["im_n"], T("im_n"))
        d = ui.field(STATE["im_d"], T("im_d"))
    with c2:
        spread = ui.field(STATE["spread"], T("spread"))
        seed = ui.field(STATE["seed"], T("seed"), widget="number")
    with c3:
        causal = ui.field(STATE["causal"], T("causal"))
    view = implied_view(n, d, spread, causal, seed)
    figures = implied_figures(view, ui.texts("linear_attention.figure"))
    for col, kind, fig in zip(ui.beside(2), ("softmax", "linear"), figures):
        with col:
            ui.show_figure(
                fig,
                f"{kind}-weights-n{n}-s{spread:g}",
                data=getattr(view, kind),
                row_labels=view.queries,
                col_labels=view.keys,
                key=f"fig-{kind}",
            )
    s = view.stats
    st.markdown(
        T(
            "implied_stats",
            es=s["entropy_softmax"],
            el=s["entropy_linear"],
            uniform=view.uniform_entropy,
            causal_note=T("causal_note") if causal else "",
            ms=s["row_max_softmax"],
            ml=s["row_max_linear"],
            cs=s["check_softmax"],
            cl=s["check_linear"],
        )
    )
