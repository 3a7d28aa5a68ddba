"""Logit lens on SmolLM2 (or a learner's own decoder): the residual stream after every layer read through the final norm and the unembedding,
as if that layer were the last: the top tokens per position at each stage, and the first layer from which the
model's final prediction is already the top token."""

import streamlit as st

from app import models, ui
from core import logit_lens as lens
from viz import logit_lens as figures

F = lens.STATE  # the page's link, declared in core


def page() -> None:
    T = ui.page_setup("logit_lens")
    st.title(T("title"))
    intro = st.empty()  # names the model picked below
    key = models.pick_model(options=lens.SHIPPED_MODELS, needs=models.PAGE_NEEDS["logit-lens"], field=F["model"])
    name = models.name_in_text(key)
    intro.markdown(T("intro", model=name))
    text = ui.field(F["text"], T("text"))
    if not text.strip():
        st.info(T("empty", model=name))
        ui.page_end()
        return
    model = models.load(key)
    if model is not None:
        try:
            view = models.computed(key, lens.logit_lens, text, queue="logit_lens")
        except ValueError as err:
            st.warning(T("cannot", reason=str(err)))
            view = None
        if view is not None:
            if view.truncated:
                st.info(T("cut", limit=lens.MAX_TOKENS))
            words = ui.texts("logit_lens.figure")
            ui.show_figure(figures.lens_figure(view, words), "logit-lens", data=view.final_prob.numpy(),
                           row_labels=figures.stage_labels(view, words), col_labels=view.position_labels,
                           key="fig-lens")  # fmt: skip
            table = lens.lens_table(view)
            ui.table(
                {T("col_pos"): list(range(table.n)), T("col_token"): table.tokens, T("col_final"): table.final,
                 T("col_first"): [T(key, **fields) for key, fields in table.first_stage]},
                hide_index=True,
            )  # fmt: skip
            st.markdown(T(table.finding, late=table.late, n=table.n, last=table.from_layer))
    st.markdown(T("method"))
    ui.page_end()
