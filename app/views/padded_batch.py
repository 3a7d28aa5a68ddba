"""A padded batch through a real model: the attention mask, padded keys at exactly zero weight, and each
sentence's attention in the batch equal to its run alone."""

import numpy as np
import streamlit as st

from app import attention_figures as figs
from app import models, ui
from core import views
from viz.heatmap import matrix_heatmap
from viz.labels import indexed_labels

DEFAULT_TEXTS = "The cat sat on the mat.\nIt was tired because it had chased a mouse all night.\nDogs bark."
MAX_SENTENCES = 4
PAGE_TOKENS = 96  # per sentence on this page: the point is the padding, not long texts
DIFF_TOLERANCE = 1e-4


def page() -> None:
    T = ui.page_setup("padded_batch")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model()
    model = models.load(key)
    if model is not None:
        raw = ui.text_area("text", T("texts"), DEFAULT_TEXTS, height=120)
        lines = [line.strip() for line in raw.splitlines() if line.strip()]
        if len(lines) > MAX_SENTENCES:
            st.info(T("too_many", k=MAX_SENTENCES))
            lines = lines[:MAX_SENTENCES]
        if len(lines) < 2:
            st.info(T("need_two"))
        else:
            trace = models.run(key, model, lines, PAGE_TOKENS)
            batch = trace.batch
            mask = batch.attention_mask.numpy()
            rows = [f"{T('sentence')} {i}" for i in range(len(lines))]
            fig = matrix_heatmap(
                mask,
                rows,
                [str(j) for j in range(mask.shape[1])],
                title=T("mask_title"),
                x_title=T("position"),
                colorscale="Blues",
                zmid=None,
                value_name="attention_mask",
                show_values=mask.size <= 40 * 4,
                decimals=0,
                height=160 + 40 * len(lines),
            )
            ui.show_figure(fig, "attention-mask", data=mask, row_labels=rows, key="fig-mask")
            st.caption(T("tokens_table"))
            st.dataframe({r: toks for r, toks in zip(rows, batch.tokens)}, hide_index=False)

            c1, c2, c3 = st.columns(3)
            with c1:
                i = int(
                    ui.select(
                        "row", T("pick"), [str(k) for k in range(len(lines))], "0", format_func=lambda k: rows[int(k)]
                    )
                )
            with c2:
                layer = ui.number("layer", T("layer"), 0, trace.n_layers - 1, 0)
            with c3:
                head = ui.number("head", T("head"), 0, trace.n_heads - 1, 0)
            w = trace.attention(layer, head, i)
            labels = indexed_labels(batch.tokens[i])
            fig = figs.square_figure(
                w,
                ~trace.mask(i),
                labels,
                T("head_title", i=i, l=layer, h=head),
                lambda k, **f: ui.t("attention.figure", k, **f),
            )
            ui.show_figure(
                fig,
                f"padded-sentence{i}-layer{layer}-head{head}",
                data=w.numpy(),
                row_labels=labels,
                col_labels=labels,
                key="fig-padded-head",
            )
            if views.real_length(trace, i) < mask.shape[1]:
                st.caption(T("pad_rows"))

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
            pad = max(r["max_pad_weight"] for r in report)
            diff = max(r["max_diff_alone"] for r in report)
            if pad == 0.0 and np.isfinite(diff) and diff <= DIFF_TOLERANCE:
                st.success(T("verdict_ok", heads=trace.n_layers * trace.n_heads, diff=diff))
            else:
                st.warning(T("verdict_bad", pad=pad, diff=diff))
    ui.page_end()
