"""Part 2: the attention matrix linear attention implies, next to softmax's on the same Q and K."""

import streamlit as st

from app import ui
from core.linear_attention.views import implied_view
from viz.linear_attention import implied_figures

IMPLIED_D = ["4", "8", "16", "32", "64"]


def part(T) -> None:
    st.subheader(T("h_implied"))
    st.markdown(T("implied"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = ui.slider("im_n", T("im_n"), 2, 48, 12)
        d = int(ui.select("im_d", T("im_d"), IMPLIED_D, "16"))
    with c2:
        spread = ui.slider("spread", T("spread"), 0.25, 4.0, 1.0, step=0.25)
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    with c3:
        causal = ui.checkbox("causal", T("causal"))
    view = implied_view(n, d, spread, causal, seed)
    figures = implied_figures(view, ui.texts("linear_attention.figure"))
    for col, kind, fig in zip(st.columns(2), ("softmax", "linear"), figures):
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
