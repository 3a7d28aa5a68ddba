"""RoPE part, SmolLM2 section: the model's rotated q and k for a text, and its scores split by frequency band."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core.positions import rope_bands
from core.positions.state import STATE
from viz.positions import rope_bands as figures

SMOL_TOKENS = 64  # tokens of the text read (the band figure is n x n)


def part(T) -> None:
    # SmolLM2 first (the default and its figures); a learner's model with RoPE on whole heads follows
    key = models.pick_model(
        options=("smollm2",), needs=models.PAGE_NEEDS["positions/rope"], field=STATE["model"], part="rope"
    )
    model = models.load(key)
    if model is None:
        return
    text = ui.field(STATE["text"], T("text"), height=80)
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = ui.field(STATE["layer"], T("layer"), model)
    with c2:
        head = ui.field(STATE["head"], T("smol_head"), model)
    with c3:
        n_bands = ui.field(STATE["bands"], T("bands"))
    if not text.strip():
        st.info(T("empty"))
        return
    trace = models.run(key, model, [text], SMOL_TOKENS)
    view = rope_bands.bands_view(trace, layer, head, n_bands, model.capabilities.positions.rope_pairs)
    labels, dims = view.labels, view.dims
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.queries_figure(view, ui.texts("positions.figure")),
            f"smollm2-q-l{layer}-h{head}",
            data=view.q,
            row_labels=labels,
            col_labels=dims,
            key="fig-q",
        )
    with c2:
        ui.show_figure(
            figures.keys_figure(view, ui.texts("positions.figure")),
            f"smollm2-k-l{layer}-g{view.kv_head}",
            data=view.k,
            row_labels=labels,
            col_labels=dims,
            key="fig-k",
        )
    ui.show_figure(
        figures.pair_share_figure(view, ui.texts("positions.figure")),
        f"smollm2-pair-share-l{layer}-h{head}",
        data={"pair": list(range(len(view.pair_share))), "share": view.pair_share},
        key="fig-share",
    )
    band = ui.field(STATE["band"], T("band"), SimpleNamespace(bands=n_bands))
    ui.show_figure(
        figures.band_figure(view, ui.texts("positions.figure"), band),
        f"smollm2-band{band}-l{layer}-h{head}",
        data=view.band_scores[band],
        row_labels=labels,
        col_labels=labels,
        key="fig-band",
    )
    st.info(T("band_result", n=n_bands, diff=view.max_diff, shares=", ".join(f"{s:.0%}" for s in view.band_share)))
