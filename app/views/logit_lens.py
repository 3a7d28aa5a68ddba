"""Logit lens on SmolLM2: the residual stream after every layer read through the final norm and the unembedding,
as if that layer were the last: the top tokens per position at each stage, and the first layer from which the
model's final prediction is already the top token."""

import streamlit as st

from app import models, ui
from core import logit_lens as lens
from viz import logit_lens as figures

MODEL = "smollm2"
DEFAULT_TEXT = "The capital of France is Paris. The capital of Japan is Tokyo. The capital of Italy is"


def stage_name(T, stage) -> str:
    if stage is None:
        return "—"
    return T("stage_embed") if stage == 0 else T("stage_layer", l=stage - 1)


def page() -> None:
    T = ui.page_setup("logit_lens")
    st.title(T("title"))
    st.markdown(T("intro"))
    text = ui.text_area("text", T("text"), DEFAULT_TEXT)
    if not text.strip():
        st.info(T("empty"))
        ui.page_end()
        return
    model = models.load(MODEL)
    if model is not None:
        try:
            view = models.logit_lens(MODEL, text)
        except ValueError as err:
            st.warning(T("cannot", reason=str(err)))
            view = None
        if view is not None:
            if view.truncated:
                st.info(T("cut", limit=lens.MAX_TOKENS))
            ui.show_figure(figures.lens_figure(view, ui.texts("logit_lens.figure")), "logit-lens",
                           data=view.final_prob.numpy(), key="fig-lens")  # fmt: skip
            final = [view.top_tokens[-1][i][0] for i in range(len(view.tokens))]
            st.dataframe(
                {T("col_pos"): list(range(len(view.tokens))), T("col_token"): view.tokens, T("col_final"): final,
                 T("col_first"): [stage_name(T, s) for s in view.first_stage]},
                hide_index=True,
            )  # fmt: skip
            late = sum(1 for s in view.first_stage if s is not None and s >= view.n_stages - 4)
            st.markdown(
                T(
                    "finding_late" if 2 * late > len(view.tokens) else "finding_early",
                    late=late,
                    n=len(view.tokens),
                    last=view.n_stages - 5,
                )
            )
    st.markdown(T("method"))
    ui.page_end()
