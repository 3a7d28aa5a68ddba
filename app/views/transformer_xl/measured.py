"""The committed run of scripts/transformer_xl_losses.py: loss against position for the five methods."""

import streamlit as st

from app import ui
from core import transformer_xl as tx
from core.results import load_result
from viz import transformer_xl as vx


def valid(data) -> bool:
    return all(m in data["loss_by_block"] and m in data["mean_loss_past_window"] for m in tx.METHODS)


def show(T) -> None:
    st.header(T("measured_header"))
    data = load_result("transformer_xl", required=valid)
    if data is None:
        st.info(T("no_results"))
        return
    st.markdown(
        T("measured_text", n=f"{data['tokens']:,}", seg=data["segment"], win=data["window"], sinks=data["sinks"])
    )
    st.dataframe(
        {
            T("col_method"): [T(f"method_{m}") for m in tx.METHODS],
            T("col_mean"): [data["mean_loss"][m] for m in tx.METHODS],
            T("col_past", p=data["past_window_from"]): [data["mean_loss_past_window"][m] for m in tx.METHODS],
        },
        hide_index=True,
    )
    block = data["block"]
    x = [block * (k + 0.5) for k in range(len(data["loss_by_block"]["full"]))]
    fig = vx.lines_figure(
        x,
        data["loss_by_block"],
        T("by_block_title", block=block),
        T("position_axis"),
        T("loss_axis"),
        T,
        vlines=[data["window"]],
    )
    ui.show_figure(fig, "xl-loss-by-position", data={"position": x, **data["loss_by_block"]}, key="fig-block")
    seg = data["loss_by_position_in_segment"]
    fig = vx.lines_figure(range(data["segment"]), seg, T("by_segment_title"), T("in_segment_axis"), T("loss_axis"), T)
    ui.show_figure(fig, "xl-loss-in-segment", data={"position": list(range(data["segment"])), **seg}, key="fig-seg")
    full, past = data["mean_loss_past_window"]["full"], data["mean_loss_past_window"]
    st.markdown(
        T(
            "verdict",
            window=f"{past['window'] - full:+.3f}",
            sinks=f"{past['sinks_window'] - full:+.3f}",
            xl=f"{past['xl'] - full:+.3f}",
            independent=f"{past['independent'] - full:+.3f}",
            p=data["past_window_from"],
        )
    )
    st.markdown(T("holds" if tx.sinks_finding_holds(past) else "fails"))
    st.markdown(T("xl_helps" if tx.xl_beats_independent(past) else "xl_hurts"))
    st.caption(T("provenance", command=data["command"], date=data["date"], device=data["device_name"]))
