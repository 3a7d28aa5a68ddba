"""RoPE part, SmolLM2 section: the model's rotated q and k for a text, and its scores split by frequency band."""

import streamlit as st

from app import models, ui
from core.positions import rope_bands
from viz.positions import rope_bands as figures

DEFAULT_TEXT = "The cat sat on the mat because it was tired. Then the cat slept."
SMOL_TOKENS = 64  # tokens of the text read (the band figure is n x n)


def part(T) -> None:
    # SmolLM2 first (the default and its figures); a learner's model with RoPE on whole heads follows
    key = models.pick_model(options=("smollm2",), needs=models.ROPE)
    model = models.load(key)
    if model is None:
        return
    text = ui.text_area("text", T("text"), DEFAULT_TEXT, height=80)
    c1, c2, c3 = st.columns(3)
    with c1:
        layer = ui.slider("layer", T("layer"), 0, model.n_layers - 1, min(3, model.n_layers - 1))
    with c2:
        head = ui.slider("head", T("smol_head"), 0, model.n_heads - 1, 0)
    with c3:
        n_bands = int(ui.select("bands", T("bands"), ["2", "4", "8"], "4"))
    if not text.strip():
        st.info(T("empty"))
        return
    trace = models.run(key, model, [text], SMOL_TOKENS)
    view = rope_bands.bands_view(trace, layer, head, n_bands, model.capabilities.positions.rope_pairs)
    labels, dims = view.labels, [str(j) for j in range(view.q.shape[1])]
    c1, c2 = st.columns(2)
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
    band = ui.slider("band", T("band"), 0, n_bands - 1, 0)
    ui.show_figure(
        figures.band_figure(view, ui.texts("positions.figure"), band),
        f"smollm2-band{band}-l{layer}-h{head}",
        data=view.band_scores[band],
        row_labels=labels,
        col_labels=labels,
        key="fig-band",
    )
    st.info(T("band_result", n=n_bands, diff=view.max_diff, shares=", ".join(f"{s:.0%}" for s in view.band_share)))
