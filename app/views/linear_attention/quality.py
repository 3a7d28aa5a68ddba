"""Part 6: linear attention's quality, not only its speed. Softmax and linear (elu + 1) attention trained on the
copy task of Katharopoulos et al. 2020 (scripts/train_linear_quality.py, committed results/linear_quality.json):
loss against steps and against training time, and what the paper's "4000x" measures."""

import streamlit as st

from app import ui
from app.measured import number
from core.linear_attention import copy_task, views
from core.results import load_result
from viz.linear_attention import quality_figures

from .common import results_meta


def part(T) -> None:
    st.header(T("h_quality"))
    data = copy_task.load_quality()
    if data is None:
        st.info(T("q_no_results"))
        st.markdown(T("q_paper"))
        return
    view = copy_task.quality_view(data)
    c = view.config
    st.markdown(
        T(
            "q_intro",
            symbols=c["n_symbols"],
            length=c["length"],
            n=view.positions,
            layers=c["n_layers"],
            heads=c["n_heads"],
            d=c["d_model"],
            batch=c["batch"],
            steps=view.curves["softmax"]["step"][-1],
            seed=c["seed"],
        )
    )
    figs = quality_figures(view, ui.texts("linear_attention.figure"))
    left, right = ui.beside(2)
    for col, name in ((left, "steps"), (right, "time")):
        with col:
            data_cols = {
                f"{kind}_{field}": view.curves[kind][field]
                for kind in ("softmax", "linear")
                for field in ("step", "loss", "wall_s", "cpu_s")
            }
            ui.show_figure(figs[name], f"linear-quality-{name}", data=data_cols, key=f"fig-quality-{name}")
    st.dataframe(
        {
            T("q_col_kind"): [T("q_softmax"), T("q_linear")],
            T("q_col_solved"): [number(view.solved_step[k], ",") for k in ("softmax", "linear")],
            T("q_col_solved_s"): [number(view.solved_cpu_s[k], ".1f") for k in ("softmax", "linear")],
            T("q_col_ms"): [number(view.ms_per_step[k], ".1f") for k in ("softmax", "linear")],
            T("q_col_loss"): [number(view.final[k]["held_out_loss"], ".4f") for k in ("softmax", "linear")],
            T("q_col_acc"): [number(view.final[k]["held_out_copy_accuracy"], ".1%") for k in ("softmax", "linear")],
        },
        hide_index=True,
    )
    steps = {f"{k}_steps": view.solved_step[k] or 0 for k in ("softmax", "linear")}
    st.markdown(T(f"q_verdict_{view.verdict}", threshold=view.threshold, ratio=view.step_ratio or 0.0, **steps))
    st.markdown(T("q_cost", slowdown=view.slowdown, n=view.positions))
    st.markdown(T("q_paper"))
    results_meta(T, data)
    paper_lengths(T)


def paper_lengths(T) -> None:
    """The paper's generation speed-ups beside this app's own ratios at the same sequence lengths."""
    run = load_result(views.PAPER_LENGTHS_RESULT, required=lambda d: isinstance(d["generation"]["rows"], list))
    view = None if run is None else views.paper_lengths(run["generation"]["rows"])
    if view is None:
        return
    rows = view.rows
    st.markdown(T("q_paper_lengths", kv_lo=view.kv_lo, kv_hi=view.kv_hi, none_lo=view.none_lo, none_hi=view.none_hi))
    st.dataframe(
        {
            T("col_ctx"): [f"{r.context:,}" for r in rows],
            T("q_col_paper"): [f"{r.paper:,}×" for r in rows],
            T("col_rnn_kv"): [f"{r.rnn_over_kv:,.1f}×" for r in rows],
            T("q_col_rnn_none"): [f"{r.rnn_over_none:,.0f}×" for r in rows],
        },
        hide_index=True,
    )
    results_meta(T, run)
