"""Masks on a padded batch of the user's sentences (padding, look-ahead, both), and the three kinds of attention
of the original Transformer with their shapes. A small randomly initialised attention: labelled as such."""

import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from core import mask_walkthrough as mw
from core.tokenize_simple import simple_tokenize
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.labels import indexed_labels
from viz.masks import mask_figure

EXAMPLES = ["The cat sat on the mat.", "Dogs bark.", "It was tired because it had chased a mouse."]
MAX_SENTENCES = 4
MAX_TOKENS = 12  # per sentence: a 12 x 12 matrix still shows its numbers
SEED = 0
KIND_KEYS = {"padding": "kind_padding", "causal": "kind_causal", "both": "kind_both"}


def read_sentences(T) -> list[list[str]]:
    raw = ui.text_area("text", T("texts"), "\n".join(EXAMPLES), height=120)
    lines = [line for line in raw.splitlines() if line.strip()]
    if len(lines) > MAX_SENTENCES:
        st.info(T("too_many", k=MAX_SENTENCES))
        lines = lines[:MAX_SENTENCES]
    tokenized = [simple_tokenize(line, MAX_TOKENS) for line in lines]
    tokenized = [t for t in tokenized if t.tokens]
    if len(tokenized) < 2:
        st.info(T("need_two"))
        tokenized = [simple_tokenize(line, MAX_TOKENS) for line in EXAMPLES]
    for i, t in enumerate(tokenized):
        if t.truncated:
            st.info(T("cut", i=i, n=t.n_total, k=MAX_TOKENS))
    return [t.tokens for t in tokenized]


def show_batch(T, batch: mw.PaddedBatch) -> list[str]:
    st.subheader(T("batch"))
    b, n = batch.attention_mask.shape
    st.markdown(T("batch_text", b=b, n=n, lengths=", ".join(str(x) for x in batch.lengths), pad=f"`{mw.PAD}`"))
    rows = [f"{T('sentence')} {i}" for i in range(b)]
    st.dataframe(pd.DataFrame(batch.padded, index=rows, columns=[str(j) for j in range(n)]))
    fig = mask_figure(
        batch.attention_mask.numpy().astype(bool),
        rows,
        [str(j) for j in range(n)],
        title=T("am_title"),
        allowed_name=T("real"),
        masked_name=T("padding"),
        x_title=T("position"),
        y_title=T("sentence"),
        height=150 + 40 * b,
    )
    ui.show_figure(
        fig,
        "attention-mask",
        data=batch.attention_mask.numpy(),
        row_labels=rows,
        col_labels=[str(j) for j in range(n)],
        key="fig-am",
    )
    return rows


def show_masks_and_weights(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.subheader(T("masks"))
    c1, c2, c3 = st.columns(3)
    with c1:
        i = int(
            ui.select("row", T("pick"), [str(k) for k in range(len(rows))], "0", format_func=lambda k: rows[int(k)])
        )
    with c2:
        head = ui.number("head", T("head"), 0, mw.N_HEADS - 1, 0)
    with c3:
        kind = ui.select("mask", T("kind"), list(mw.MASK_KINDS), "both", format_func=lambda k: T(KIND_KEYS[k]))
    result = mw.masked_batch_attention(token_lists, kind, seed=SEED)
    labels = indexed_labels(result.batch.padded[i])
    axes = dict(x_title=T("key_axis"), y_title=T("query_axis"))
    cols = st.columns(3)
    for col, k in zip(cols, mw.MASK_KINDS):
        allowed = mw.mask_of_kind(k, result.batch.attention_mask)[i, 0].numpy()
        with col:
            fig = mask_figure(
                allowed, labels, labels, title=T(f"m_{k}"), allowed_name=T("may"), masked_name=T("masked"), **axes
            )
            ui.show_figure(
                fig,
                f"mask-{k}-sentence{i}",
                data=allowed.astype(int),
                row_labels=labels,
                col_labels=labels,
                key=f"fig-mask-{k}",
            )

    st.subheader(T("steps"))
    st.markdown(T("steps_text", h=head))
    allowed = result.allowed[i]
    scores, weights = result.scores[i, head], result.weights[i, head]
    cols = st.columns(3)
    with cols[0]:
        fig = matrix_heatmap(scores, labels, labels, title=T("f_scores"), value_name="QKᵀ/√d", **axes)
        ui.show_figure(
            fig, f"scores-sentence{i}-head{head}", data=scores, row_labels=labels, col_labels=labels, key="fig-scores"
        )
    with cols[1]:
        fig = mask_figure(
            allowed,
            labels,
            labels,
            title=f"{T('f_mask')}: {T(KIND_KEYS[kind])}",
            allowed_name=T("may"),
            masked_name=T("masked"),
            **axes,
        )
        ui.show_figure(
            fig,
            f"mask-{kind}-sentence{i}-applied",
            data=allowed.astype(int),
            row_labels=labels,
            col_labels=labels,
            key="fig-mask-applied",
        )
    with cols[2]:
        fig = attention_heatmap(weights, labels, labels, masked=~allowed, title=T("f_weights"), zmax=1.0, **axes)
        ui.show_figure(
            fig,
            f"weights-{kind}-sentence{i}-head{head}",
            data=weights,
            row_labels=labels,
            col_labels=labels,
            key="fig-weights",
        )
    every_allowed = np.broadcast_to(result.allowed[:, None], result.weights.shape)
    masked_max = float(result.weights[~every_allowed].max()) if (~every_allowed).any() else 0.0
    sums = result.weights.sum(-1)
    st.markdown(
        T(
            "facts",
            h=mw.N_HEADS,
            b=len(token_lists),
            mx=f"{masked_max:g}",
            lo=float(sums.min()),
            hi=float(sums.max()),
            diff=result.sdpa_diff,
        )
    )
    if len(token_lists[i]) < len(labels):
        st.caption(T("pad_rows"))


def show_three_kinds(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.header(T("kinds"))
    st.markdown(T("kinds_text", d=mw.D_MODEL, h=mw.N_HEADS, dh=mw.D_MODEL // mw.N_HEADS))
    options = [str(k) for k in range(len(rows))]
    c1, c2 = st.columns(2)
    with c1:
        src = int(ui.select("src", T("src"), options, "0", format_func=lambda k: rows[int(k)]))
    with c2:
        tgt = int(ui.select("tgt", T("tgt"), options, "1", format_func=lambda k: rows[int(k)]))
    head = int(st.session_state.get("head", 0))
    kinds = mw.three_kinds(token_lists[src], token_lists[tgt], seed=SEED)
    cols = st.columns(3)
    for col, k in zip(cols, kinds):
        with col:
            st.subheader(T(k.kind))
            st.markdown(T(f"{k.kind}_text"))
            s = k.shapes
            st.code(T("shape_line", q=s["Q"], k=s["K"], w=s["weights"], v=s["V"], o=s["output"]), language=None)
            q_labels, k_labels = indexed_labels(k.query_tokens), indexed_labels(k.key_tokens)
            fig = attention_heatmap(
                k.weights[head],
                q_labels,
                k_labels,
                masked=~k.allowed,
                zmax=1.0,
                title=f"{T(k.kind)} · {T('head')} {head}",
                x_title=T("key_axis"),
                y_title=T("query_axis"),
            )
            ui.show_figure(
                fig,
                f"{k.kind}-head{head}",
                data=k.weights[head],
                row_labels=q_labels,
                col_labels=k_labels,
                key=f"fig-{k.kind}",
            )
    st.subheader(T("shapes"))
    source = {"encoder_self": (src, src), "decoder_self": (tgt, tgt), "cross": (tgt, src)}
    st.dataframe(
        pd.DataFrame(
            {
                T("col_kind"): [T(k.kind) for k in kinds],
                T("col_x"): [f"{rows[source[k.kind][0]]} {k.shapes['x']}" for k in kinds],
                T("col_ctx"): [f"{rows[source[k.kind][1]]} {k.shapes['context']}" for k in kinds],
                "Q": [str(k.shapes["Q"]) for k in kinds],
                "K": [str(k.shapes["K"]) for k in kinds],
                "V": [str(k.shapes["V"]) for k in kinds],
                "softmax(QKᵀ/√d)": [str(k.shapes["weights"]) for k in kinds],
                "output": [str(k.shapes["output"]) for k in kinds],
                T("col_check"): [f"{k.sdpa_diff:.1e}" for k in kinds],
            }
        ),
        hide_index=True,
    )


def page() -> None:
    global T, token_lists
    T = ui.page_setup("masks")
    st.title(T("title"))
    st.markdown(T("intro"))
    st.warning(T("random", d=mw.D_MODEL, h=mw.N_HEADS, seed=SEED), icon=":material/casino:")
    token_lists = read_sentences(T)
    batch_rows = show_batch(T, mw.pad_batch(token_lists))
    show_masks_and_weights(T, token_lists, batch_rows)
    show_three_kinds(T, token_lists, batch_rows)
    ui.page_end()
