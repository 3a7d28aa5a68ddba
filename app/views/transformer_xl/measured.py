"""The committed run of scripts/transformer_xl_losses.py: loss against position for the five methods."""

import streamlit as st

from app import shared, ui
from core import transformer_xl as tx
from viz import transformer_xl as vx


def show(T) -> None:
    st.header(T("measured_header"))
    view = tx.measured_view()
    if view is None:
        st.info(T("no_results"))
        return
    st.markdown(T("measured_text", n=view.tokens, seg=view.segment, win=view.window, sinks=view.sinks))
    st.dataframe(
        {
            T("col_method"): [T(f"method_{m}") for m in tx.METHODS],
            T("col_mean"): list(view.mean.values()),
            T("col_past", p=view.past_from): list(view.mean_past.values()),
        },
        hide_index=True,
    )
    # the view is read once per process (until its file changes): its figures are built once per language
    block_fig = shared.figures(vx.lines_figure, view.by_block, "transformer_xl.figure")
    segment_fig = shared.figures(vx.lines_figure, view.by_segment, "transformer_xl.figure")
    ui.show_figure(block_fig, "xl-loss-by-position", data=view.by_block.table(), key="fig-block")
    ui.show_figure(segment_fig, "xl-loss-in-segment", data=view.by_segment.table(), key="fig-seg")
    gap = view.gap
    st.markdown(T("verdict", window=gap["window"], sinks=gap["sinks_window"], xl=gap["xl"],
                  independent=gap["independent"], p=view.past_from))  # fmt: skip
    st.markdown(T(view.sinks_verdict))
    st.markdown(T(view.xl_verdict))
    st.caption(T("provenance", command=view.command, date=view.date, device=view.device))
