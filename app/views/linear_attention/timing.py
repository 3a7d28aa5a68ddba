"""Part 4: time against n, committed and live, with three readings of the slope."""

import streamlit as st

from app import ui
from app.measured import live_meta, live_run, number
from core.linear_attention import measure
from core.linear_attention.state import STATE
from core.linear_attention.views import TimingView, timing_view
from viz.linear_attention import timing_figure

from .common import LIVE_BUDGET_S, LIVE_DEADLINE_S, LIVE_MIN, RESULTS_FILE, results_meta

HEADS, HEAD_DIM = 1, 64  # the timing shape, as in benchmarks/bench_linear.py


def show(T, view: TimingView, name: str, key: str) -> None:
    ms = view.ms
    ui.show_figure(
        timing_figure(view, ui.texts("linear_attention.figure")),
        name,
        data={"n": view.sizes, "softmax_ms": ms["softmax"], "linear_ms": ms["linear"]},
        key=key,
    )
    s, big, last = view.slopes, view.large, view.last
    if s.get("softmax") is not None and s.get("linear") is not None and last:
        st.markdown(
            T(
                "slopes",
                fit_from=s["fit_from"],
                soft=s["softmax"],
                lin=s["linear"],
                n=last["n"],
                soft_ms=last["softmax_ms"],
                lin_ms=last["linear_ms"],
            )
        )
    else:
        st.markdown(T("slopes_none"))
    if big["linear"] is not None and big["softmax"] is not None and view.steepest:
        st.markdown(T("slopes_large", fit_from=big["fit_from"], soft=big["softmax"], lin=big["linear"]))
        st.markdown(T("slopes_why", **view.steepest))
    st.dataframe(
        {
            T("col_n"): [f"{n:,}" for n in view.sizes],
            T("col_soft_ms"): [T("skipped") if sk else number(v, ",.3f") for sk, v in zip(view.skipped, ms["softmax"])],
            T("col_lin_ms"): [T("skipped") if sk else number(v, ",.3f") for sk, v in zip(view.skipped, ms["linear"])],
            T("col_ratio"): ["" if v is None else f"{v:,.1f}" for v in view.ratio],
            T("col_soft_local"): ["" if v is None else f"{v:.2f}" for v in view.local["softmax"]],
            T("col_lin_local"): ["" if v is None else f"{v:.2f}" for v in view.local["linear"]],
        },
        hide_index=True,
    )


def part(T, res: dict | None) -> None:
    st.header(T("h_timing"))
    st.markdown(T("timing"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path=RESULTS_FILE))
    else:
        sc = res["scaling"]
        view = timing_view(
            sc["rows"], sc["slopes"], sc.get("heads", HEADS), sc.get("head_dim", HEAD_DIM), bool(sc.get("causal"))
        )
        show(T, view, "linear-vs-softmax-time-committed", "fig-time-committed")
        results_meta(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", limit=LIVE_DEADLINE_S))
        c1, c2 = st.columns(2)
        with c1:
            max_n = ui.field(STATE["max_n"], T("max_n"), format_func=lambda v: f"{v:,}")
        with c2:
            causal = ui.field(STATE["t_causal"], T("causal"))
        if st.button(T("run_timing"), key="run-timing"):
            rows = live_run(
                T,
                ("linear_timing", max_n, causal, HEADS, HEAD_DIM, LIVE_BUDGET_S, LIVE_DEADLINE_S),
                lambda report: measure.time_scaling(
                    measure.power_of_two_sizes(LIVE_MIN, max_n),
                    heads=HEADS,
                    head_dim=HEAD_DIM,
                    causal=causal,
                    reps=3,
                    budget_s=LIVE_BUDGET_S,
                    deadline_s=LIVE_DEADLINE_S,
                    progress=report,
                ),
            )
            st.session_state["_linear_timing"] = timing_view(rows, None, HEADS, HEAD_DIM, causal)
        live = st.session_state.get("_linear_timing")
        if live:
            st.markdown(f"**{T('live_result')}**")
            show(T, live, "linear-vs-softmax-time-live", "fig-time-live")
            live_meta(T)
