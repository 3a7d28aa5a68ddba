"""/moe, part 2: what each expert of the chosen checkpoint specialises in, on labelled held-out text."""

import streamlit as st

from app import ui
from core.moe import checkpoint_views
from viz import moe as vmoe


def show(T, stats: dict, variant: str, layer: int) -> None:
    """stats: the checkpoint's held-out statistics (core.moe.checkpoint_views.held_out_stats, cached by the page)."""
    view = checkpoint_views.specialisation(stats, variant, layer)
    st.header(T("spec_h"))
    st.caption(T("spec_intro", n=view.held_out_tokens))
    words = ui.texts("moe.figure")
    ui.show_figure(
        vmoe.category_heatmap(view, words),
        f"moe-specialisation-{variant}-layer{layer}",
        data=view.shares,
        row_labels=vmoe.expert_labels(len(view.top), words),
        col_labels=view.category_names,
        key="spec",
    )
    for e, (cat, share, lift) in enumerate(view.top):
        line = T("spec_line", e=e, cat=cat, share=share, lift=lift, load=view.layer_load[e]) if cat else None
        st.markdown("- " + (line or T("spec_unused", e=e)))
