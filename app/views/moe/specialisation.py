"""/moe, part 2: what each expert of the chosen checkpoint specialises in, on labelled held-out text."""

import streamlit as st

from app import shared, ui
from core.moe import checkpoint_views
from viz import moe as vmoe

# (the checkpoint's held-out statistics, variant, layer) -> its view: the same for every visitor whatever their text,
# so its figure is built once per language (shared.figures) and not at every run the text box starts
_views = shared.Kept(shared.ENTRIES)


def specialisation_view(stats: dict, variant: str, layer: int) -> checkpoint_views.Specialisation:
    """Keyed on the statistics object itself (models.computed keeps one per checkpoint load), which the entry keeps
    alive so its id cannot pass to another object, and on the variant and layer."""
    make = lambda: (stats, checkpoint_views.specialisation(stats, variant, layer))  # noqa: E731
    return _views.get((id(stats), variant, layer), make)[1]


def show(T, stats: dict, variant: str, layer: int) -> None:
    """stats: the checkpoint's held-out statistics (core.moe.checkpoint_views.held_out_stats, cached by the page)."""
    view = specialisation_view(stats, variant, layer)
    st.header(T("spec_h"))
    st.caption(T("spec_intro", n=view.held_out_tokens))
    words = ui.texts("moe.figure")
    ui.show_figure(
        shared.figures(vmoe.category_heatmap, view, "moe.figure"),
        f"moe-specialisation-{variant}-layer{layer}",
        data=view.shares,
        row_labels=vmoe.expert_labels(len(view.top), words),
        col_labels=vmoe.category_labels(view.category_names, words),
        key="spec",
    )
    for e, (cat, share, lift) in enumerate(view.top):
        line = (
            T("spec_line", e=e, cat=words(f"category_{cat}"), share=share, lift=lift, load=view.layer_load[e])
            if cat
            else None
        )
        st.markdown("- " + (line or T("spec_unused", e=e)))
