"""A learner's own encoder-decoder folder (Marian, BART, T5, ...), picked in the steps part: the source text through
its own tokenizer, greedy generation, and at each step the decoder's masked self-attention and cross-attention
(rows: the decoder's queries, each writing an output token; columns: the source tokens), per layer and head.
Folder names go into markdown escaped (models.name_in_text); tokens only into figures, st.code and st.text."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core.encoder_decoder import own
from core.encoder_decoder.state import STATE as F
from core.models import registry

from .steps import head_picker, step_figures


def own_part(T, key: str) -> None:
    text = ui.field(F["text"], T("own_text"), height=70)
    loaded = models.load(registry.seq2seq_key(key))
    if loaded is None:
        return
    if not text.strip():
        st.info(T("own_empty"))
        return
    run = models.computed(registry.seq2seq_key(key), own.run_text, text, queue="seq2seq")
    name = models.name_in_text(key)
    if run.truncated:
        st.info(T("own_cut", n=run.source_limit))
    st.markdown(T("own_output", name=name))
    st.code(" ".join(run.output) or "∅", language=None)
    if not run.finished:
        st.warning(T("own_unfinished", n=len(run.translation.steps)))
    layer, head = head_picker(T, loaded[0].config)
    step = ui.field(F["step"], T("step"), SimpleNamespace(max_steps=own.MAX_STEPS))
    v = own.view(run, step, layer, head)
    st.caption(T("step_of", t=v.step, n=v.steps, last=v.steps - 1))
    st.caption(T("own_note", name=name))
    st.text(T("own_reads", t=v.step, input=v.input_tokens[v.step], output=v.chosen, p=v.chosen_probability))
    step_figures(T, v, T("own_decoder_head", t=v.step), cross_note="own_cross_note")
