"""HBM traffic of standard attention and of the tiled algorithm for the user's n, d and on-chip memory M, next to
Theorem 2's orders; and the memory the backward pass would need for the weights against the statistics."""

import streamlit as st

from app import ui
from core import flash_attention as fa
from core.timing import human_bytes
from viz import flash_attention as fv


def show(T) -> None:
    st.header(T("traffic_header"))
    st.markdown(T("traffic_text"))
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.field(fa.STATE["tn"], T("tn"), widget="number")
    with c2:
        d = ui.field(fa.STATE["td"], T("td"))
    with c3:
        kib = ui.field(fa.STATE["sram"], T("sram"), widget="number", help=T("sram_help"))
    with c4:
        nbytes = ui.field(fa.STATE["bytes"], T("bytes"), format_func=lambda b: T(f"bytes_{b}"))
    view = fa.traffic_view(n, d, fa.sram_elements(kib, nbytes), nbytes)
    st.markdown(T("blocks", m=f"{view.m_sram:,}", br=view.br, bc=view.bc, d=d))
    rows = [("naive", view.naive), ("flash1", view.flash1), ("flash2", view.flash2)]
    st.dataframe(
        {
            T("col_algorithm"): [T(f"alg_{k}") for k, _ in rows],
            T("col_reads"): [f"{tr.reads:,}" for _, tr in rows],
            T("col_writes"): [f"{tr.writes:,}" for _, tr in rows],
            T("col_total"): [f"{tr.total:,}" for _, tr in rows],
            T("col_bytes"): [human_bytes(view.bytes_of(tr)) for _, tr in rows],
            T("col_theta"): [
                f"{view.theta_naive:,.0f}",
                T("theta_outside") if view.theta_flash is None else f"{view.theta_flash:,.0f}",
                "–",
            ],
        },
        hide_index=True,
    )
    st.markdown(T("ratio", ratio=f"{view.ratio:,.1f}", n=f"{n:,}"))
    st.caption(T("theta_caption", c=f"{view.theta_constant:.2f}"))
    if view.theta_flash is None:
        st.warning(T("theta_range", m=f"{view.m_sram:,}", d=d, nd=f"{view.nd:,}"))
    ui.show_figure(
        fv.traffic_figure(view, ui.texts("flash_attention.figure")),
        "flash-hbm-traffic",
        data={"n": view.sizes, **view.curves},
        key="fig-tr",
    )

    st.header(T("backward_header"))
    st.markdown(T("backward_text"))
    heads = ui.field(fa.STATE["heads"], T("heads"), widget="number", help=T("heads_help"))
    mem = fa.backward_memory(n, heads, nbytes)
    ui.metrics([(T("stored_p"), human_bytes(mem.stored_p_bytes), None), (T("stats"), human_bytes(mem.statistics_bytes), None),
                (T("lse"), human_bytes(mem.logsumexp_bytes), None)])  # fmt: skip
    st.markdown(T("backward_ratio", n=f"{n:,}", heads=heads, ratio=f"{mem.ratio:,.1f}"))
