"""The prompt, decoding and eviction settings (bound to the URL), and the generation they ask for (cached in
app/models.py, so moving the display sliders does not generate again)."""

import streamlit as st

from app import models, ui
from core import kv_cache as kc

DEFAULT_PROMPT = "The cat sat on the mat because it was tired. Then it"
MAX_PROMPT_TOKENS = 512  # the end of a longer prompt is kept: it is what gets continued
MAX_NEW_TOKENS = 32
SHIPPED = ("smollm2",)  # the default; learners' own decoders follow it in the picker


def read(T) -> dict:
    prompt = ui.text_area("prompt", T("prompt"), DEFAULT_PROMPT, height=90)
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        new = ui.slider("new", T("new"), 1, MAX_NEW_TOKENS, 6)
    with c2:
        decode = ui.select("decode", T("decode"), ["greedy", "sample"], format_func=lambda k: T(f"decode_{k}"))
    temperature, top_k, seed = 0.0, 0, 0
    if decode == "sample":
        with c3:
            temperature = ui.slider("temp", T("temp"), 0.1, 2.0, 0.8, step=0.1)
            top_k = ui.number("topk", T("topk"), 0, 1000, 40, help=T("topk_help"))
        with c4:
            seed = ui.number("seed", T("seed"), 0, 99_999, 0)
    st.markdown(T("eviction_text"))
    c5, c6 = st.columns(2)
    with c5:
        window = ui.number("window", T("window"), 1, MAX_PROMPT_TOKENS + MAX_NEW_TOKENS, 8, help=T("window_help"))
    with c6:
        sinks = ui.number("sinks", T("sinks"), 0, 64, 4, help=T("sinks_help"))
    return dict(prompt=prompt, new=new, temperature=temperature, top_k=top_k, seed=seed, window=window, sinks=sinks)


def generation(T, key: str, model, chosen: dict):
    """The Generation for these settings (from the session when nothing changed), or None after saying why."""
    if not chosen["prompt"].strip():
        st.info(T("empty", model=models.name_in_text(key)))
        return None
    try:
        ids, total = kc.prompt_ids(model, chosen["prompt"], MAX_PROMPT_TOKENS, chosen["new"])
    except ValueError:
        st.info(T("empty", model=models.name_in_text(key)))
        return None
    if total > len(ids):
        st.info(T("prompt_cut", n=total, k=len(ids)))
    with st.spinner(T("generating", n=chosen["new"])):
        return models.generate(
            key,
            ids,
            max_new_tokens=chosen["new"],
            temperature=chosen["temperature"],
            top_k=chosen["top_k"],
            seed=chosen["seed"],
            window=chosen["window"],
            sinks=chosen["sinks"],
        )
