"""Multi-head attention end to end on a real MiniLM layer: each head's projections, h attentions in parallel, the
concatenation, W^O, the residual connections, LayerNorm and the feed-forward block; then what the number of heads
changes at a fixed d_model, and why attention needs positions (permutation equivariance)."""

import streamlit as st

from app import models, ui
from core import multi_head as mh
from core import slips
from viz import multi_head as figs

F = mh.STATE  # the page's link, declared in core


def layer_part(T, model) -> None:
    text = ui.field(F["text"], T("text"))
    if not text.strip():
        st.info(T("empty"))
        return
    c1, c2 = st.columns(2)
    with c1:
        layer = ui.field(F["layer"], T("layer"), model, widget="number")
    with c2:
        head = ui.field(F["head"], T("head"), model, widget="number")
    walk = mh.layer_walk(model, text, layer)
    if walk.truncated:
        st.info(T("cut", limit=mh.MAX_TOKENS))
    st.markdown(T("chain"))
    st.caption(" → ".join(f"{T('shape_' + step)} {' × '.join(map(str, shape))}" for step, shape in walk.shapes()))
    ui.show_figure(figs.chain_figure(walk, head, ui.texts("multi_head.figure")), f"layer{layer}-head{head}",
                   key="fig-chain")  # fmt: skip
    st.success(T("reference", l=layer, err=walk.max_reference_error))
    init = {f"i{k}": v for k, v in slips.qkv_differ_at_init(walk).items()}
    st.caption(T("slip_qkv", head=head, **slips.qkv_differ(walk, head), **init))
    drop = mh.last_token_dropout(walk, head)
    st.markdown(T("dropout" if drop.drops else "dropout_none", p=drop.p, token=walk.tokens[drop.query],
                  total=drop.training_sum))  # fmt: skip
    ui.table({T("col_key"): walk.tokens, T("col_eval"): [f"{x:.3f}" for x in drop.evaluation],
                  T("col_train"): [f"{x:.3f}" for x in drop.training]}, hide_index=True)  # fmt: skip


def heads_part(T) -> None:
    n = ui.field(F["n"], T("n"))
    rows = mh.head_count_rows(mh.PAPER_D_MODEL, n)
    st.markdown(T("heads_intro", d=mh.PAPER_D_MODEL, h=mh.PAPER_HEADS, dk=mh.PAPER_D_K))
    st.dataframe(
        {
            T("col_h"): [r.heads for r in rows],
            T("col_dk"): [r.head_dim for r in rows],
            T("col_params"): [f"{r.parameters:,}" for r in rows],
            T("col_flops"): [f"{r.flops:,}" for r in rows],
            T("col_rank"): [r.score_rank for r in rows],
            T("col_scores"): [f"{r.score_entries:,}" for r in rows],
        },
        hide_index=True,
    )
    ui.show_figure(figs.head_count_figure(rows, ui.texts("multi_head.figure")), "heads", key="fig-heads")
    st.markdown(T("heads_note"))


def order_part(T, model, key: str) -> None:
    text = ui.field(F["text"], T("text"))
    if not text.strip():
        st.info(T("empty"))
        return
    seed = ui.field(F["seed"], T("seed"), widget="number")
    check = mh.permutation_check(model, text, seed)
    st.markdown(T("order_intro", name=models.name_in_text(key)))
    st.caption(T("permutation", p=", ".join(map(str, check.permutation[:64]))))
    st.success(T("without", err=check.error_without_positions))
    st.warning(T("with", err=check.error_with_positions))


def page() -> None:
    T = ui.page_setup("multi_head")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.field(F["part"], T("part"), widget="radio", format_func=lambda p: T(f"part_{p}"), horizontal=True)
    if part == "heads":
        heads_part(T)
    else:
        # MiniLM first; a learner's own BERT-style encoder too: the walk recomputes a BERT layer from its weights
        key = models.pick_model(options=mh.SHIPPED_MODELS, needs=models.PAGE_NEEDS["multi-head"], field=F["model"])
        model = models.load(key)
        if model is not None:
            layer_part(T, model) if part == "layer" else order_part(T, model, key)
    ui.page_end()
