"""The stack with shapes for the user's sentence: where each of the three kinds of attention sits, what its
queries, keys and values come from, its mask and its shape."""

import streamlit as st

from app import models, ui
from core.encoder_decoder import original
from core.encoder_decoder import view as edv
from core.models import examples
from viz import encoder_decoder as figs


def stack_part(T, run: edv.SentenceRun, config) -> None:
    v = edv.stack_view(config, len(run.free.source_tokens), len(run.free.steps))
    st.markdown(T("stack_intro", s=v.source_len, t=v.target_len, d=v.d_model, h=v.heads, dk=v.d_k, v=v.vocab))
    words = ui.texts("encoder_decoder.figure")
    ui.show_figure(figs.stack_figure(v.blocks, config.encoder_layers, words), "stack", key="fig-stack")
    st.caption(figs.stack_said(v.blocks, config.encoder_layers, words))  # a diagram: its text alternative
    st.dataframe(
        {
            T("col_kind"): [T("kind_" + k["kind"]) for k in v.kinds],
            T("col_q"): [T("from_" + k["q"]) for k in v.kinds],
            T("col_kv"): [T("from_" + k["kv"]) for k in v.kinds],
            T("col_mask"): [T("mask_" + k["mask"]) for k in v.kinds],
            T("col_shape"): [" × ".join(map(str, k["shape"])) for k in v.kinds],
        },
        hide_index=True,
    )
    st.caption(T("stack_note"))
    st.markdown(T("arch_intro"))
    columns = ("arch_col_kind", "arch_col_attention", "arch_col_models", "arch_col_app")
    models.show_examples(T, examples.architecture_table, columns, "arch_", "arch_attention_")
    o = original.original_transformer()
    st.markdown(T("original", n=o.layers, d=o.d_model, h=o.heads, dk=o.d_k, ff=f"{o.d_ff:,}", s=o.sublayers["self"],
                  m=o.sublayers["masked_self"], c=o.sublayers["cross"], total=o.attention_sublayers,
                  att=f"{o.attention_params:,}", enc=f"{o.encoder_layer_params:,}", dec=f"{o.decoder_layer_params:,}",
                  stack=f"{o.stack_params:,}", emb=f"{o.embedding_params:,}", all=o.with_embeddings_m,
                  count=f"{o.with_embeddings:,}", paper=original.PAPER_TOTAL_M,
                  gap=o.paper_gap_m))  # fmt: skip
