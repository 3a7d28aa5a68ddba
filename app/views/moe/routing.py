"""/moe, part 1: the user's text routed at one layer (router probabilities, balance metrics and their bounds,
expert load, router entropy, what capacity drops, each expert's first-choice tokens)."""

import streamlit as st

from app import models, shared, ui
from core.models import registry
from core.moe import views
from viz import moe as vmoe

SHOWN_TOKENS = 40  # first-choice tokens listed per expert


def show_metrics(T, view: views.TextRouting) -> None:
    bounds = view.bounds
    ui.metrics(
        [
            (
                T("m_switch"),
                f"{view.switch_loss:.3f}",
                T("m_switch_help", n=view.n_experts, k=view.top_k, max=bounds.switch_max),
            ),
            (
                T("m_dev"),
                f"{view.deviation:.3f}",
                T("m_dev_help", n=view.n_experts, k=view.top_k, max=bounds.deviation_max),
            ),
            (T("m_entropy"), f"{view.mean_entropy:.3f}", T("m_entropy_help", n=view.n_experts, max=bounds.entropy_max)),
            (
                T("m_dropped"),
                f"{view.n_dropped} / {view.n_assignments}",
                T("m_dropped_help", tokens=view.tokens_lost, k=view.top_k, cap=view.capacity),
            ),
        ]
    )
    b = view.blind
    st.caption(T("prob_loss", loss=view.probability_loss, switch=view.switch_loss))
    st.caption(T("prob_blind", n=b.n_experts, k=b.top_k, eps=b.eps, p_loss=b.probability_loss, s_loss=b.switch_loss,
                 p_grad=b.probability_push, s_grad=b.switch_push, dev=b.deviation))  # fmt: skip
    st.caption(
        T(
            "bounds_note",
            n=view.n_experts,
            k=view.top_k,
            load=bounds.max_load,
            switch=bounds.switch_max,
            dev=bounds.deviation_max,
        )
    )


def show_first_choices(T, view: views.TextRouting) -> None:
    st.markdown(f"**{T('first_choice', layer=view.layer)}**")
    listed = [" · ".join(p[:SHOWN_TOKENS]) + (" …" if len(p) > SHOWN_TOKENS else "") for p in view.first_choice]
    rows = {T("col_expert"): vmoe.expert_labels(view.n_experts, ui.texts("moe.figure")), T("col_tokens"): listed}
    st.dataframe(rows, hide_index=True, width="stretch")  # dataframe cells are text, never HTML


def text_run(variant: str, text: str) -> views.TextRun | None:
    """The checkpoint's forward pass on the text (kept per checkpoint load and text: a new layer or capacity factor
    only re-routes these router logits)."""
    return models.computed(registry.moe_key(variant), views.run_text, text)


def text_view(variants: tuple[str, ...], variant: str, text: str, layer: int, cf: float) -> views.TextRouting | None:
    """The text routed by every checkpoint at this layer and capacity factor, seen from `variant` (a lesson step
    draws from the same)."""
    return views.text_routing({v: text_run(v, text) for v in variants}, variant, layer, cf)


def show(T, variants: tuple[str, ...], variant: str, text: str, layer: int, cf: float) -> views.TextRouting | None:
    """Route the text once per checkpoint at this layer and draw; returns the view for the comparison part. The view
    and its figures are made once for every visitor asking the same (a room's learners on one step: shared.view,
    shared.figures)."""
    view = shared.view(text_view, variants, variant, text, layer, cf)
    if view is None:
        st.info(T("empty"))
        return None
    if view.truncated:
        st.info(T("truncated", n=view.n_text_tokens, limit=view.max_positions))
    if view.n_unknown:
        st.warning(T("unknown", n=view.n_unknown, total=view.n_words))
    words = ui.texts("moe.figure")
    labels, experts = vmoe.token_labels(view), vmoe.expert_labels(view.n_experts, words)

    st.header(T("routing_h", layer=layer))
    show_metrics(T, view)
    ui.show_figure(
        shared.figures(vmoe.router_heatmap, view, "moe.figure"),
        f"moe-router-{variant}-layer{layer}",
        data=view.probs,
        row_labels=labels,
        col_labels=experts,
        key="router",
    )
    left, right = ui.beside(2)
    with left:
        ui.show_figure(
            shared.figures(vmoe.load_figure, view, "moe.figure"),
            f"moe-load-{variant}-layer{layer}",
            data={"expert": experts, "share": view.load.tolist(), "count": view.counts.tolist()},
            along={"share": "y"},
            key="load",
        )
        ui.show_figure(
            shared.figures(vmoe.dropped_curve, view, "moe.figure"),
            f"moe-dropped-{variant}-layer{layer}",
            data={"capacity_factor": view.factors, "dropped_share": view.dropped_by_factor},
            along={"capacity_factor": "x", "dropped_share": "y"},
            key="dropped",
        )
    with right:
        ui.show_figure(
            shared.figures(vmoe.entropy_bars, view, "moe.figure"),
            f"moe-entropy-{variant}-layer{layer}",
            data={"token": labels, "entropy_nats": view.entropy.tolist()},
            key="entropy",
        )
    show_first_choices(T, view)
    return view
