"""Attention while generating: a decoder (SmolLM2 by default, or a learner's own) continues the user's prompt with
its KV cache; per new token its attention over prompt and generated tokens, the top-5 next tokens, the cache's bytes
against multi-head attention's, and eviction (sliding window, sinks + window) with its KL divergence from the full
cache."""

import streamlit as st

from app import models, ui
from core.kv_cache.state import SHIPPED, STATE

from . import settings, show


def page() -> None:
    T = ui.page_setup("kv_cache")
    st.title(T("title"))
    intro = st.empty()  # names the model picked below
    key = models.pick_model(options=SHIPPED, needs=models.PAGE_NEEDS["kv-cache"], field=STATE["model"])
    intro.markdown(T("intro", model=models.name_in_text(key)))
    chosen = settings.read(T)
    model = models.load(key)
    gen = settings.generation(T, key, model, chosen) if model is not None else None
    if gen is not None:
        show.generated_text(T, gen)
        show.one_step(T, gen)
        show.all_steps(T, gen)
        show.memory(T, gen, models.name_in_text(key))
    ui.page_end()
