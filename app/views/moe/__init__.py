"""Mixture-of-Experts routing you can see: the repo's own small Mixtral-style model, trained on labelled simple
English, shows for your text where each token goes, how full each expert is, what capacity drops, and what each
expert specialises in; a balanced and a collapsed checkpoint side by side; and the sizes of real MoE models.

Parts (one module each): routing (your text), specialisation and comparison (held-out text), real_models.
Math in core/moe/ (core.moe.views and core.moe.checkpoint_views build each part's data), figures in
viz/moe.py."""

import streamlit as st

from app import models, ui
from core.models import moe_model, registry
from core.moe import checkpoint_views
from core.moe import state as moe_state

from . import comparison, real_models, routing, specialisation

F = moe_state.STATE  # the page's link, declared in core
DEFAULT_TEXT = moe_state.DEFAULT_TEXT


def page() -> None:
    T = ui.page_setup("moe")
    st.title(T("title"))
    st.markdown(T("intro"))
    # each load says once how its weights were made (with, without the load-balancing loss): the page repeats none
    checkpoints = {v: models.load(registry.moe_key(v)) for v in moe_model.VARIANTS}  # None: said why not
    if None in checkpoints.values():
        checkpoints = None
    else:
        text = ui.field(F["text"], T("text"))
        c1, c2, c3 = st.columns(3)
        with c1:
            variant = ui.field(F["ckpt"], T("ckpt"), format_func=T)
        model = checkpoints[variant]
        with c2:
            layer = ui.field(F["layer"], T("layer"), model)
        with c3:
            cf = ui.field(F["cf"], T("cf"), help=T("cf_help"))
        text_view = routing.show(T, tuple(checkpoints), variant, text, layer, cf)
        held_out = checkpoint_views.held_out_stats  # a few seconds a checkpoint: through the queue, kept there
        stats = {v: models.computed(registry.moe_key(v), held_out, queue="moe_held_out") for v in moe_model.VARIANTS}
        specialisation.show(T, stats[variant], variant, layer)
        comparison.show(T, checkpoints, stats, text_view)
    real_models.show(T, None if checkpoints is None else checkpoints["balanced"])
    ui.page_end()
