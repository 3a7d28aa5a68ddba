"""Sinusoidal part: the PE matrix and its distance-only dot products, why each frequency needs sine AND cosine,
and which columns barely move over a long context."""

from types import SimpleNamespace

import streamlit as st

from app import shared, ui
from core import slips
from core.positions import sinusoidal, training_step
from core.positions.state import STATE, base_from_log10
from viz.positions import sinusoidal as figures


def part(T) -> None:
    st.markdown(T("sin_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.field(STATE["d"], T("d"))
    with c2:
        n = ui.field(STATE["n"], T("n"))
    with c3:
        base = base_from_log10(ui.field(STATE["base"], T("base")))
    st.caption(T("base_now", base=base))
    ex = slips.sinusoidal_exponent(d, base)
    st.markdown(T("exponent_note", longest=ex["right_longest"], limit=ex["limit"]))
    st.caption(T("slip_sinusoidal", d=d, ratio=ex["pair_ratio"], typo=ex["typo_longest"], right=ex["right_longest"],
                 share=ex["typo_beyond"]))  # fmt: skip
    enc = sinusoidal.encoding_view(n, d, base)
    ui.show_figure(
        figures.encoding_figure(enc, ui.texts("positions.figure")),
        "sinusoidal-pe",
        data=enc.pe,
        row_labels=enc.positions,
        col_labels=enc.dims,
        key="fig-pe",
    )
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.dot_figure(enc, ui.texts("positions.figure")),
            "sinusoidal-dot",
            data=enc.dots,
            row_labels=enc.positions,
            col_labels=enc.positions,
            key="fig-dot",
        )
    with c2:
        ui.show_figure(
            figures.dot_distance_figure(enc, ui.texts("positions.figure")),
            "sinusoidal-dot-distance",
            data={"distance": enc.distances, "dot": enc.dot_by_distance},
            key="fig-dot-line",
        )
    st.success(T("dot_check", pairs=enc.pairs, spread=enc.diagonal_spread))
    sin, learned = training_step.one_step("sinusoidal"), training_step.one_step("learned")
    st.markdown(T("what_learns", before=sin.loss_before, after=sin.loss_after, wq=sin.w_q, tok=sin.tokens,
                  pos=sin.positions, lpos=learned.positions, lr=sin.lr))  # fmt: skip

    st.header(T("why_both"))
    pair = ui.field(STATE["pair"], T("pair"), SimpleNamespace(d=d))
    col = sinusoidal.collision_view(n, d, base, pair)
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.collision_figure(col, ui.texts("positions.figure")),
            "sine-collision",
            data={"position": col.positions, "sin": col.points[:, 0]},
            key="fig-collision",
        )
    with c2:
        ui.show_figure(
            figures.pair_circle_figure(col, ui.texts("positions.figure")), "sin-cos-circle", key="fig-circle"
        )
    c = col.collision
    st.info(
        T("collision", p=c["p"], q=c["q"], sp=c["sin_p"], sq=c["sin_q"], gap=c["sine_gap"], dist=c["pair_distance"])
    )
    st.info(T("sine_only", lo=col.sine_only_lo, hi=col.sine_only_hi))

    st.header(T("sparsity"))
    c1, c2, c3 = st.columns(3)
    with c1:
        sp_d = ui.field(STATE["sp_d"], T("sp_d"))
    with c2:
        sp_n = ui.field(STATE["sp_n"], T("sp_n"), format_func=lambda v: f"{v:,}")
    with c3:
        thr = float(ui.field(STATE["thr"], T("thr"), format_func=lambda v: f"{float(v):.1%}"))
    sp = shared.view(sinusoidal.sparsity_view, sp_n, sp_d, base, thr)  # a changed d above leaves it as it was
    pooled = shared.view(sinusoidal.pooled_encoding, sp_n, sp_d, base)  # the same few sizes for every visitor
    pooled_fig = shared.figures(figures.pooled_encoding_figure, pooled, "positions.figure")
    ui.show_figure(pooled_fig, f"sinusoidal-pe-{sp_n}x{sp_d}", data=pooled.pe, row_labels=pooled.row_labels,
                   col_labels=pooled.col_labels, key="fig-pe-pooled")  # fmt: skip
    st.caption(T("pe_pooled_note", n=sp_n, d=pooled.d))
    ui.show_figure(  # built, and its caption read, once per settings for every visitor (8 ms a run)
        shared.figures(figures.variation_figure, sp, "positions.figure"),
        "sinusoidal-variation",
        data={"dimension": sp.columns, "variation": sp.variation},
        key="fig-var",
    )
    share = sp.slow
    st.info(
        T(
            "sparsity_result",
            share=share["share"],
            d=sp.d,
            count=share["count"],
            thr=thr,
            n=sp_n,
            s_share=share["sin_share"],
            c_share=share["cos_share"],
            least=sp.least,
            step=sp.neighbour_share,
        )
    )
    st.caption(T("sparsity_note"))
