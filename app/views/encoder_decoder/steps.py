"""Translate step by step: the encoder's self-attention once, then the decoder at one step (a slider): its masked
self-attention, its cross-attention over the source and its next-token probabilities; free generation or teacher
forcing, and the two side by side."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core.encoder_decoder import view as edv
from core.encoder_decoder.state import STATE as F
from viz import encoder_decoder as figs


def head_picker(T, config) -> tuple[int, int]:
    shape = SimpleNamespace(n_layers=config.decoder_layers, n_heads=config.decoder_attention_heads)
    c1, c2 = st.columns(2)
    with c1:
        layer = ui.field(F["layer"], T("layer"), shape, widget="number")
    with c2:
        head = ui.field(F["head"], T("head"), shape, widget="number")
    return layer, head


def outputs(T, run: edv.SentenceRun) -> None:
    """What the model wrote, the reference, and whether they agree: as code text, never markup."""
    st.markdown(T("free_output", out=f"`{' '.join(run.free.output) or '∅'}`"))
    if not run.free.finished:
        st.warning(T("unfinished"))
    if run.reference is None:
        st.info(T("no_reference"))
        return
    st.markdown(T("reference", ref=f"`{' '.join(run.reference)}`"))
    (st.success if run.agrees else st.warning)(T("agrees" if run.agrees else "disagrees"))


def comparison(T, run: edv.SentenceRun) -> None:
    rows = edv.comparison_rows(run)
    if not rows:
        return
    st.header(T("compare_head"))
    st.caption(T("compare_note"))
    st.dataframe(
        {
            T("col_position"): [r["position"] for r in rows],
            T("col_free"): [r["free"] for r in rows],
            T("col_reference"): [r["reference"] for r in rows],
            T("col_p"): [round(r["p_reference"], 4) for r in rows],
            T("col_top"): [r["forced_top"] for r in rows],
            T("col_same"): ["✓" if r["same"] else "✗" for r in rows],
        },
        hide_index=True,
    )


def steps_part(T, run: edv.SentenceRun, config) -> None:
    outputs(T, run)
    layer, head = head_picker(T, config)
    mode = ui.field(F["mode"], T("mode"), widget="radio", format_func=lambda m: T("mode_" + m), horizontal=True)
    if mode == "forced" and run.forced is None:
        st.info(T("no_reference"))
    step = ui.field(F["step"], T("step"), SimpleNamespace(max_steps=edv.MAX_STEPS))
    v = edv.step_view(run, mode, step, layer, head)
    st.caption(T("step_of", t=v.step, n=v.steps, last=v.steps - 1))
    st.caption(T("mode_" + v.mode + "_note"))
    step_figures(T, v, T("decoder_head", t=v.step, input=v.input_tokens[v.step], output=v.chosen,
                         p=v.chosen_probability))  # fmt: skip
    comparison(T, run)


def step_figures(T, v: edv.StepView, heading: str, cross_note: str = "cross_note") -> None:
    """The encoder's self-attention, then the decoder at the view's step under `heading`: its masked
    self-attention, the next-token candidates and cross-attention (the shipped model's steps and a learner's)."""
    fig_t = ui.texts("encoder_decoder.figure")

    st.header(T("encoder_head"))
    st.caption(T("encoder_note"))
    ui.show_figure(figs.encoder_figure(v, fig_t), f"encoder-L{v.layer}-H{v.head}", data=v.encoder,
                   row_labels=v.source_labels, col_labels=v.source_labels, key="fig-encoder")  # fmt: skip

    st.header(heading)
    c1, c2 = ui.beside(2)
    with c1:
        st.caption(T("self_note"))
        ui.show_figure(figs.self_figure(v, fig_t), f"masked-self-L{v.layer}-H{v.head}-t{v.step}",
                       data=v.self_attention, row_labels=v.query_labels, col_labels=v.input_labels, key="fig-self")  # fmt: skip
    with c2:
        st.caption(T("top_note"))
        ui.show_figure(figs.top_figure(v, fig_t), f"next-token-t{v.step}", key="fig-top")
    st.caption(T(cross_note))
    ui.show_figure(figs.cross_figure(v, fig_t), f"cross-L{v.layer}-H{v.head}-t{v.step}", data=v.cross,
                   row_labels=v.query_labels, col_labels=v.source_labels, key="fig-cross")  # fmt: skip
