"""/long-maps, part 2: one head's pooled map (mean or max of each block of the full n x n matrix)."""

import streamlit as st

from app import models, ui
from core.long_maps import LayerMaps, views
from core.pooling import bin_ranges
from viz.long_maps import map_figure
from viz.style import figure_bytes

from .settings import Display


def figure(maps: LayerMaps, source: str, layer: int, display: Display, n_kv_heads: int):
    """(view, figure, its file name) of one head's pooled map (a lesson step draws the same)."""
    view = views.map_view(maps, display.head, display.stat, display.side, n_kv_heads)
    # the title names the model (escaped by viz); SmolLM2's and random's stay as committed
    name = None if source in ("random", "smollm2") else models.short_name(source)
    fig = map_figure(view, ui.texts("long_maps.figure"), source, layer, display.log_scale, name=name)
    return view, fig, f"long-maps-{source.replace(':', '-')}-l{layer}-h{view.head}-{view.stat}"


def show(T, maps: LayerMaps, source: str, layer: int, display: Display, n_kv_heads: int) -> int:
    """Draws the map at the chosen resolution; returns the bytes the figure sends to the browser."""
    view, fig, figure_name = figure(maps, source, layer, display, n_kv_heads)
    ui.show_figure(
        fig,
        figure_name,
        data=view.values,
        row_labels=bin_ranges(view.row_edges),
        col_labels=bin_ranges(view.col_edges),
        key="fig-map",
    )
    mask = "" if maps.causal else "_bidirectional"  # the masked cells' sentences only for a causal model
    if display.log_scale:
        st.caption(T(f"map_note{mask}", rows=view.cell_rows, cols=view.cell_cols, low=view.log_low))
    else:
        st.caption(T(f"map_note_linear{mask}", rows=view.cell_rows, cols=view.cell_cols))
    return figure_bytes(fig)
