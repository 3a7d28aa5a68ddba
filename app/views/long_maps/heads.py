"""/long-maps, part 1: every head of the layer at a glance (attention sink vs local attention)."""

import streamlit as st

from app import ui
from core.long_maps import LayerMaps, views
from viz.long_maps import head_shares_figure
from viz.style import figure_bytes


def show(T, maps: LayerMaps, head: int) -> int:
    """Draws the per-head shares; returns the bytes the figure sends to the browser."""
    view = views.head_shares(maps, head)
    fig = head_shares_figure(view, ui.texts("long_maps.figure"))
    ui.show_figure(
        fig,
        "long-maps-head-shares",
        data={
            "head": list(range(len(view.first_share))),
            "first_share": view.first_share.tolist(),
            "own_bin_share": view.own_bin_share.tolist(),
        },
        key="fig-shares",
    )
    st.caption(T("shares_note", err=view.row_sum_error))
    return figure_bytes(fig)
