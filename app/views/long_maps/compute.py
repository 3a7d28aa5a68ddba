"""/long-maps: the heavy part, cached. One layer's q and k (a model forward that stops at that layer, or random),
then every head pooled (core.long_maps), causal or not as the model is. The page runs it only after its button is
pressed."""

from dataclasses import dataclass

import streamlit as st

from app import models, ui
from core import long_maps
from core.device import default_device
from core.models import local

from .settings import Request


@dataclass
class Computed:
    maps: long_maps.LayerMaps
    qk: long_maps.LayerQK
    tokens: list[str] | None  # None for random q and k
    forward_s: float  # seconds of the model forward (0 for random)


@st.cache_resource(show_spinner=False, max_entries=2)
def _random_qk(n: int, seed: int):
    return long_maps.random_qk(n, seed=seed)


@st.cache_data(show_spinner=False, max_entries=4)
def _random_maps(n: int, seed: int, causal: bool) -> long_maps.LayerMaps:
    """Pooled mean and max of every head of random q and k (a model's: models.computed, with its q and k)."""
    q, k, scale = _random_qk(n, seed)
    device = default_device()
    return long_maps.layer_maps(q.to(device), k.to(device), scale, causal=causal)


def compute(T, req: Request, text_id: str, text: str = "") -> Computed | None:
    """The maps of the request, or None (with a message) when nothing can be computed."""
    causal, source = req.shape.causal, req.source
    if req.source != "random":  # SmolLM2 runs on the GPU where there is one; a learner's model where it was loaded
        model = models.load(source)
        if model is None:
            return None
        causal = model.is_causal or req.shape.causal
        if models.is_own(req.source):  # a learner's model: refused above the server's budget, in words
            run = local.run_estimate(models.capabilities(req.source), req.n, model)
            if run.over:
                st.warning(ui.t("models", "over_budget"))
                st.caption(ui.t("models", f"over_{run.over}", n=run.n_tokens, need=run.need, limit=run.limit))
                return None
        with st.spinner(T("running_model", layer=req.layer, n=req.n, model=models.name_in_text(req.source))):
            try:  # the forward, then every head pooled: one job on the queue, kept per load of the model
                asked = text, req.n, req.layer, causal
                qk, maps = models.computed(source, long_maps.pooled_layer, *asked, queue="layer_qk")
            except (ValueError, IndexError) as err:  # IndexError: a position the model has no vector for
                st.error(T("bad_input", error=str(err)))
                return None
    else:
        qk = long_maps.LayerQK(*_random_qk(req.n, req.seed))
        with st.spinner(T("running_pool", heads=qk.q.shape[1], n=qk.q.shape[2])):
            maps = _random_maps(req.n, req.seed, causal)
    return Computed(maps, qk, qk.tokens, qk.forward_s)
