"""Part 3: softmax's exp(q·k) factors too, through an infinite-dimensional feature map; finite maps approximate it."""

import streamlit as st

from app import ui
from core.linear_attention.exp_kernel import exp_kernel_view, psd_view
from core.linear_attention.state import STATE
from viz.linear_attention import exp_kernel_figure


def part(T) -> None:
    st.header(T("h_exp"))
    st.markdown(T("exp"))
    c1, c2 = st.columns(2)
    with c1:
        d = ui.field(STATE["ek_d"], T("ek_d"))
    with c2:
        spread = ui.field(STATE["ek_spread"], T("ek_spread"))
    view = exp_kernel_view(d, spread)
    ui.show_figure(
        exp_kernel_figure(view, ui.texts("linear_attention.figure")),
        f"exp-kernel-d{d}-s{spread:g}",
        data={"order": view.orders, "taylor_features": view.taylor_counts, "taylor_error": view.taylor_error},
        key="fig-exp",
    )
    if view.order_needed is None:
        order_text = T("ek_not_reached", target=view.target, top=view.orders[-1])
    else:
        order_text = T(
            "ek_reached", target=view.target, m=view.order_needed, count=view.taylor_counts[view.order_needed]
        )
    st.markdown(
        T(
            "ek_result",
            n=view.n,
            x=view.largest_score,
            order_text=order_text,
            r=view.random_counts[-1],
            rerr=view.random_error[-1] or 0.0,
        )
    )
    st.markdown(T("psd"))
    rows = psd_view()
    st.dataframe(
        {
            T("psd_col_kind"): [T(f"psd_{r.kind}") for r in rows],
            T("psd_col_min"): [f"{r.min_eigenvalue:.3g}" for r in rows],
            T("psd_col_max"): [f"{r.max_eigenvalue:.3g}" for r in rows],
            T("psd_col_ok"): [T("psd_yes") if r.psd else T("psd_no") for r in rows],
        },
        hide_index=True,
    )
