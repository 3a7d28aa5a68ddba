"""RoPE part: the rotation matrix, every pair's angle, one pair's circle, the check that scores depend on m - n
only, the two layouts; optionally SmolLM2's real rotated q and k split by frequency (rope_bands)."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core.positions import prefix, rope, sinusoidal
from core.positions.state import STATE, base_from_log10
from viz.positions import rope as figures

from . import rope_bands

PREFIX_COLUMNS = ("absolute_alone", "absolute_prefixed", "rope_alone", "rope_prefixed")


def part(T) -> None:
    st.markdown(T("rope_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        d = ui.field(STATE["rope_d"], T("rope_d"))
    with c2:
        base = base_from_log10(ui.field(STATE["rope_base"], T("rope_base")))
    with c3:
        m = ui.field(STATE["m"], T("m"))
    layout = ui.field(
        STATE["layout"], T("layout"), widget="radio", format_func=lambda v: T(f"layout_{v}"), horizontal=True
    )
    rot = rope.rotation_view(d, base, m, layout)
    ui.show_figure(
        figures.rotation_figure(rot, ui.texts("positions.figure")),
        f"rope-rotation-m{m}",
        data=rot.rotation,
        row_labels=rot.dims,
        col_labels=rot.dims,
        key="fig-rot",
    )

    c1, c2 = st.columns(2)
    with c1:
        n = ui.field(STATE["rope_n"], T("rope_n"))
    with c2:
        pair = ui.field(STATE["rope_pair"], T("rope_pair"), SimpleNamespace(rope_d=rot.d))
    ang = rope.angles_view(rot.inv_freq, n, pair)
    ui.show_figure(
        figures.angles_figure(ang, ui.texts("positions.figure")),
        "rope-angles",
        data=ang.angles,
        row_labels=ang.row_labels,
        col_labels=ang.col_labels,
        key="fig-angles",
    )
    ui.show_figure(figures.trajectory_figure(ang, ui.texts("positions.figure")), f"rope-pair{ang.pair}", key="fig-traj")
    big = rope.pooled_angles(*sinusoidal.MATERIAL_SIZE, base=base)
    ui.show_figure(figures.pooled_angles_figure(big, ui.texts("positions.figure")), "rope-angles-8192x3072",
                   data=big.angles, row_labels=big.row_labels, col_labels=big.col_labels,
                   key="fig-angles-pooled")  # fmt: skip
    st.caption(T("angles_pooled_note", n=big.n, d=big.d, fast=big.fastest_coherence, slow=big.slowest_coherence))

    st.header(T("check_title"))
    check = rope.check_view(rot.inv_freq, n, m)
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.check_scores_figure(check, ui.texts("positions.figure")),
            "rope-score-check",
            data=check.scores,
            row_labels=check.labels,
            col_labels=check.labels,
            key="fig-check",
        )
    with c2:
        ui.show_figure(
            figures.check_offset_figure(check, ui.texts("positions.figure")),
            "rope-score-by-offset",
            data={"offset": check.offsets, "score": check.score_by_offset},
            key="fig-check-line",
        )
    st.success(T("check_result", pairs=check.pairs, range=check.score_range, spread=check.max_spread))

    prefix_example(T)

    st.header(T("layouts"))
    perm = check.permutation
    perm_text = str(perm) if len(perm) <= 16 else str(perm[:8])[:-1] + ", …]"
    st.info(T("layouts_result", perm=perm_text, diff=check.layout_diff, nodiff=check.layout_nodiff))

    if ui.field(STATE["smol"], T("smol")):
        rope_bands.part(T)


def prefix_example(T) -> None:
    """The material's relative-position example, computed: one phrase with and without a prefix."""
    ex = prefix.prefix_view()
    st.header(T("prefix_title"))
    st.markdown(T("prefix_result", phrase=" ".join(ex.phrase), prefix=" ".join(ex.prefix), p=len(ex.prefix),
                  last=ex.last, d=ex.d, abs=ex.absolute_change, rope=ex.rope_change))  # fmt: skip
    q = ex.query
    st.dataframe(
        {
            T("prefix_col_key"): list(ex.phrase),
            **{T(f"prefix_col_{k}", q=ex.phrase[q]): [f"{x:.4f}" for x in ex.scores[k][q]] for k in PREFIX_COLUMNS},
        },
        hide_index=True,
    )
