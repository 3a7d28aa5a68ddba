"""The committed run of scripts/transformer_xl_losses.py: loss against position for the five methods."""

import streamlit as st

from app import ui
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
    words = ui.texts("transformer_xl.figure")
    ui.show_figure(vx.lines_figure(view.by_block, words), "xl-loss-by-position", data=view.by_block.table(),
                   key="fig-block")  # fmt: skip
    ui.show_figure(vx.lines_figure(view.by_segment, words), "xl-loss-in-segment", data=view.by_segment.table(),
                   key="fig-seg")  # fmt: skip
    gap = view.gap
    st.markdown(T("verdict", window=gap["window"], sinks=gap["sinks_window"], xl=gap["xl"],
                  independent=gap["independent"], p=view.past_from))  # fmt: skip
    st.markdown(T(view.sinks_verdict))
    st.markdown(T(view.xl_verdict))
    st.caption(T("provenance", command=view.command, date=view.date, device=view.device))
