"""/long-maps, part 3: a window of one head's exact weights at full resolution, with its text."""

import streamlit as st

from app import ui
from core import long_maps
from core.long_maps import views
from viz.long_maps import zoom_figure
from viz.style import figure_bytes

from .settings import Display


def show(T, qk: long_maps.LayerQK, tokens: list[str] | None, display: Display, causal: bool) -> int:
    """Draws the window; returns the bytes the figure sends to the browser."""
    st.header(T("h_zoom"))
    st.caption(T("zoom_intro"))
    q, k, scale = qk.q, qk.k, qk.scale
    view = views.zoom_view(
        q, k, scale, tokens, display.head, display.zoom_q0, display.zoom_k0, display.zoom_size, causal=causal
    )
    fig = zoom_figure(view, ui.texts("long_maps.figure"), display.log_scale)
    ui.show_figure(
        fig,
        f"long-maps-zoom-h{view.head}-q{view.rows.start}-k{view.cols.start}",
        data=view.weights,
        row_labels=view.row_labels,
        col_labels=view.col_labels,
        key="fig-zoom",
    )
    st.caption(T("zoom_mass", c=view.keys, inside=view.inside, rest=view.outside))
    if view.text is not None:
        with st.expander(T("zoom_text")):
            st.text(view.text)  # st.text: shown as plain text, never as HTML
    return figure_bytes(fig)
