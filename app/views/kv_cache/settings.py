"""The prompt, decoding and eviction settings (bound to the URL through the page's declared state,
core/kv_cache/state.py), and the generation they ask for (cached in app/models.py, so moving the display sliders
does not generate again)."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core import kv_cache as kc
from core.kv_cache.state import MAX_PROMPT_TOKENS, STATE, generation_options

F = STATE


def read(T) -> dict:
    """The settings as the state's fields name them (prompt, new, decode, temp, topk, seed, window, sinks)."""
    chosen = {f: F[f].default_in() for f in ("temp", "topk", "seed")}  # greedy: not shown, not used
    chosen["prompt"] = ui.field(F["prompt"], T("prompt"), height=90)
    # half the page for the decoding's box: in a quarter its choice was cut ('貪欲法（最も確率の高…' at 1280 px)
    c1, c2 = st.columns(2)
    with c1:
        chosen["new"] = ui.field(F["new"], T("new"))
    with c2:
        chosen["decode"] = ui.field(F["decode"], T("decode"), format_func=lambda k: T(f"decode_{k}"))
    if chosen["decode"] == "sample":
        c3, c4, c5 = st.columns(3)
        with c3:
            chosen["temp"] = ui.field(F["temp"], T("temp"))
        with c4:
            chosen["topk"] = ui.field(F["topk"], T("topk"), widget="number", help=T("topk_help"))
        with c5:
            chosen["seed"] = ui.field(F["seed"], T("seed"), widget="number")
    st.markdown(T("eviction_text"))
    c5, c6 = st.columns(2)
    with c5:
        chosen["window"] = ui.field(F["window"], T("window"), widget="number", help=T("window_help"))
    with c6:
        chosen["sinks"] = ui.field(F["sinks"], T("sinks"), widget="number", help=T("sinks_help"))
    return chosen


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
        options = generation_options(SimpleNamespace(**chosen))
        return models.computed(key, kc.generate, tuple(ids), **options, queue="generate")
