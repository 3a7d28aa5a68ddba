"""Part 1: the two orders of φ(Q)·φ(K)ᵀ·V, counted."""

import streamlit as st

from app import ui
from core.linear_attention.sparse import GLOBAL, RANDOM, WINDOW, bigbird_scores
from core.linear_attention.state import COST_SIZES, STATE
from core.linear_attention.views import associativity_view
from viz.linear_attention import cost_figure

ORDERS = ("quadratic", "linear")


def part(T) -> None:
    st.header(T("h_trick"))
    st.markdown(T("trick"))
    c1, c2 = st.columns(2)
    with c1:
        n = ui.field(STATE["n"], T("n"), format_func=lambda v: f"{v:,}")
    with c2:
        d = ui.field(STATE["d"], T("d"))
    view = associativity_view(n, d, list(COST_SIZES))
    costs = view.costs
    st.dataframe(
        {
            T("col_order"): [T(f"order_{o}") for o in ORDERS],
            T("col_first"): [costs[o]["first_product"] for o in ORDERS],
            T("col_shape"): [" × ".join(f"{s:,}" for s in costs[o]["intermediate_shape"]) for o in ORDERS],
            T("col_numbers"): [f"{costs[o]['intermediate_numbers']:,}" for o in ORDERS],
            T("col_madds"): [f"{costs[o]['multiply_adds']:,}" for o in ORDERS],
        },
        hide_index=True,
    )
    quad, lin = costs["quadratic"], costs["linear"]
    st.markdown(
        T(
            view.words,
            n=n,
            d=d,
            quad=quad["multiply_adds"],
            qnum=quad["intermediate_numbers"],
            lin=lin["multiply_adds"],
            lnum=lin["intermediate_numbers"],
            ratio=view.fewer,
            cross=view.crossover,
        )
    )
    sparse = bigbird_scores(n)
    st.markdown(T("bigbird", n=sparse.n, block=sparse.block, window=WINDOW, globals=GLOBAL, random=RANDOM,
                  scores=sparse.scores, full=sparse.full, share=sparse.share))  # fmt: skip
    ui.show_figure(
        cost_figure(view, ui.texts("linear_attention.figure")),
        f"associativity-d{d}",
        data={"n": view.sizes, **view.curves},
        key="fig-cost",
    )
