"""/moe, part 3: the balanced and the collapsed checkpoint side by side (held-out loss and loads, both on the
user's text, training curves)."""

import streamlit as st

from app import shared, ui
from core.moe import checkpoint_views, views
from viz import moe as vmoe

# (each checkpoint's held-out statistics and training report, top-k) -> the comparison: the same for every visitor
# whatever their text, so its figures are built once per language (shared.figures), not at every run
_views = shared.Kept(shared.ENTRIES)


def comparison_view(stats: dict, reports: dict, top_k: int) -> checkpoint_views.Comparison:
    """Keyed on the statistics and report objects themselves (one per checkpoint load), which the entry keeps alive
    so their ids cannot pass to other objects, and on top-k."""
    key = (tuple((v, id(s), id(reports[v])) for v, s in stats.items()), top_k)
    return _views.get(key, lambda: ((stats, reports), checkpoint_views.comparison(stats, reports, top_k)))[1]


def show(T, checkpoints: dict, stats: dict, text_view: views.TextRouting | None) -> None:
    """stats: variant -> held-out statistics; text_view: the routing part's view (None for a blank text)."""
    view = comparison_view(stats, {v: m.report for v, m in checkpoints.items()}, next(iter(checkpoints.values())).top_k)
    words = ui.texts("moe.figure")
    experts = vmoe.expert_labels(view.n_experts, words)
    st.header(T("compare_h"))
    st.caption(T("compare_intro"))
    for col, (variant, summary) in zip(ui.beside(len(view.checkpoints)), view.checkpoints.items()):
        with col:
            ui.metrics([(T("m_loss"), f"{summary.held_out_loss:.3f}", None),
                        (T("m_min"), f"{summary.min_load:.1%}", T("m_min_help", u=view.uniform_load)),
                        (T("m_max"), f"{summary.max_load:.1%}", T("m_max_help", k=view.bounds.top_k))])  # fmt: skip
            ui.show_figure(
                shared.figures(vmoe.layer_load_heatmap, view, "moe.figure", variant),
                f"moe-layer-load-{variant}",
                data=summary.loads,
                row_labels=vmoe.layer_labels(len(summary.loads), words),
                col_labels=experts,
                key=f"layer-load-{variant}",
            )
    if text_view is not None:
        ui.show_figure(
            vmoe.compare_figure(text_view, words),
            f"moe-compare-layer{text_view.layer}",
            data={"expert": experts, **{words(f"{v}_short"): x.tolist() for v, x in text_view.load_by_variant.items()}},
            along={words(f"{v}_short"): "y" for v in text_view.load_by_variant},
            key="compare",
        )
    ui.show_figure(shared.figures(vmoe.loss_curves, view, "moe.figure"), "moe-training-loss", key="curves")
    st.caption(T("curves_note"))
