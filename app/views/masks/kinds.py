"""Part 3 of /masks: encoder self-attention, masked decoder self-attention and cross-attention, chained as in the
Transformer (a one-layer encoder, then a one-layer decoder reading its output), with their shapes."""

import pandas as pd
import streamlit as st

from app import shared, ui
from core.masks import encoder_decoder as core
from core.masks.layers import D_HEAD, D_MODEL, N_HEADS
from core.masks.state import STATE, Sentences
from viz.labels import indexed_labels
from viz.masks import attention_kind_figure

SEED = 0


def show_three_kinds(T, token_lists: list[list[str]], rows: list[str]) -> None:
    st.header(T("kinds"))
    st.markdown(T("kinds_text", d=D_MODEL, h=N_HEADS, dh=D_HEAD))
    sentences = Sentences(token_lists)
    c1, c2 = st.columns(2)
    with c1:
        src = int(ui.field(STATE["src"], T("src"), sentences, format_func=lambda k: rows[int(k)]))
    with c2:
        tgt = int(ui.field(STATE["tgt"], T("tgt"), sentences, format_func=lambda k: rows[int(k)]))
    head = int(st.session_state.get("head", 0))  # the head picked in the part above
    view = shared.view(core.encoder_decoder, token_lists[src], token_lists[tgt], seed=SEED)
    enc, dec, cross = view.kinds
    flow = T(
        "flow",
        src=enc.shapes["x"],
        mem=enc.shapes["output"],
        tgt=dec.shapes["x"],
        h=dec.shapes["output"],
        out=cross.shapes["output"],
    )
    st.code(flow, language=None)
    for col, k in zip(ui.beside(3), view.kinds):
        with col:
            st.subheader(T(k.kind))
            st.markdown(T(f"{k.kind}_text"))
            s = k.shapes
            line = T("shape_line", q=s["Q"], k=s["K"], w=s["weights"], v=s["V"], o=s["output"])
            st.code(line, language=None, wrap_lines=True)  # a third of the page: unwrapped, it stopped at "→"
            q_labels, k_labels = indexed_labels(k.query_tokens), indexed_labels(k.key_tokens)
            fig = shared.figures(attention_kind_figure, k, "masks.figure", head, q_labels, k_labels)
            ui.show_figure(
                fig,
                f"{k.kind}-head{head}",
                data=k.weights[head],
                row_labels=q_labels,
                col_labels=k_labels,
                key=f"fig-{k.kind}",
            )
    st.info(T("trained_later"), icon=":material/translate:")
    st.subheader(T("shapes"))
    st.dataframe(shared.table(shapes_table, view, "masks"), hide_index=True)


def shapes_table(view: core.EncoderDecoder, T) -> pd.DataFrame:
    return pd.DataFrame(
        {
            T("col_kind"): [T(k.kind) for k in view.kinds],
            T("col_x"): [f"{T(k.x_from)} {k.shapes['x']}" for k in view.kinds],
            T("col_ctx"): [f"{T(k.context_from)} {k.shapes['context']}" for k in view.kinds],
            "Q": [str(k.shapes["Q"]) for k in view.kinds],
            "K": [str(k.shapes["K"]) for k in view.kinds],
            "V": [str(k.shapes["V"]) for k in view.kinds],
            "softmax(QKᵀ/√d)": [str(k.shapes["weights"]) for k in view.kinds],
            T("col_output"): [str(k.shapes["output"]) for k in view.kinds],
            T("col_check"): [f"{k.sdpa_diff:.1e}" for k in view.kinds],
        }
    )
