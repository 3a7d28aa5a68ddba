"""A padded batch through a real model: the attention mask, padded keys at exactly zero weight, and each
sentence's attention in the batch equal to its run alone. Data from core/padded_batch.py, figures from
viz/padded_batch.py."""

import streamlit as st

from app import models, ui
from core import padded_batch
from viz import padded_batch as figures

DEFAULT_TEXTS = "The cat sat on the mat.\nIt was tired because it had chased a mouse all night.\nDogs bark."
MAX_SENTENCES = 4
PAGE_TOKENS = 96  # per sentence on this page: the point is the padding, not long texts


def sentence_head(T, trace, rows: list[str]) -> None:
    """One sentence's head inside the batch, padded rows and columns included."""
    c1, c2, c3 = st.columns(3)
    with c1:
        options = [str(k) for k in range(len(rows))]
        i = int(ui.select("row", T("pick"), options, "0", format_func=lambda k: rows[int(k)]))
    with c2:
        layer = ui.number("layer", T("layer"), 0, trace.n_layers - 1, 0)
    with c3:
        head = ui.number("head", T("head"), 0, trace.n_heads - 1, 0)
    view = padded_batch.sentence_view(trace, i, layer, head)
    fig = figures.sentence_figure(view, ui.texts("padded_batch.figure"), i)
    ui.show_figure(
        fig,
        f"padded-sentence{i}-layer{layer}-head{head}",
        data=view.weights,
        row_labels=view.labels,
        col_labels=view.labels,
        key="fig-padded-head",
    )
    if trace.length(i) < len(view.labels):
        st.caption(T("pad_rows"))


def check(T, key: str, model, trace, lines: list[str], rows: list[str]) -> None:
    """Each sentence in the batch against its run alone."""
    st.subheader(T("check"))
    report = models.padding_report(key, tuple(lines), min(PAGE_TOKENS, model.max_positions))
    st.dataframe(
        {
            T("sentence"): rows,
            T("col_tokens"): [r["tokens"] for r in report],
            T("col_padding"): [r["padding"] for r in report],
            T("col_pad_weight"): [r["max_pad_weight"] for r in report],
            T("col_diff"): [r["max_diff_alone"] for r in report],
        }
    )
    result = padded_batch.verdict(report, trace)
    if result.ok:
        st.success(T("verdict_ok", heads=result.heads, diff=result.diff))
    else:
        st.warning(T("verdict_bad", pad=result.pad, diff=result.diff))


def page() -> None:
    T = ui.page_setup("padded_batch")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model()
    model = models.load(key)
    if model is not None:
        raw = ui.text_area("text", T("texts"), DEFAULT_TEXTS, height=120)
        lines, cut = padded_batch.split_lines(raw, MAX_SENTENCES)
        if cut:
            st.info(T("too_many", k=MAX_SENTENCES))
        if len(lines) < 2:
            st.info(T("need_two"))
        else:
            trace = models.run(key, model, lines, PAGE_TOKENS)
            rows = [f"{T('sentence')} {i}" for i in range(len(lines))]
            mask = padded_batch.mask_view(trace)
            fig = figures.mask_figure(mask, ui.texts("padded_batch.figure"))
            ui.show_figure(fig, "attention-mask", data=mask.mask, row_labels=rows, key="fig-mask")
            st.caption(T("tokens_table"))
            st.dataframe({r: toks for r, toks in zip(rows, trace.batch.tokens)}, hide_index=False)
            sentence_head(T, trace, rows)
            check(T, key, model, trace, lines, rows)
    ui.page_end()
