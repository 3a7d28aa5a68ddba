"""The tiled forward on one small random head: block sizes, one query tile, and a slider over the key tiles."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core import flash_attention as fa
from viz import flash_attention as fv

F = fa.STATE  # the page's link, declared in core


def read_settings(T) -> dict:
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.field(F["n"], T("n"), widget="number", help=T("n_help"))
    with c2:
        d = ui.field(F["d"], T("d"), widget="number")
    with c3:
        br = ui.field(F["br"], T("br"), widget="number", help=T("br_help"))
    with c4:
        bc = ui.field(F["bc"], T("bc"), widget="number", help=T("bc_help"))
    c5, c6, c7 = st.columns(3)
    with c5:
        causal = ui.field(F["causal"], T("causal"))
    with c6:
        padded = ui.field(F["pad"], T("pad"), widget="number", help=T("pad_help"))
    with c7:
        seed = ui.field(F["seed"], T("seed"), widget="number")
    return dict(n=n, d=d, br=br, bc=bc, causal=causal, padded_keys=padded, seed=seed)


def tiling_notes(T, s: dict, view: fa.TileWalk) -> None:
    n, br, bc = s["n"], s["br"], s["bc"]
    st.markdown(T("tiling", tr=len(view.query_tiles), tc=len(view.key_tiles), n=n, br=br, bc=bc))
    for name, kind, b, last in view.block_notes:
        st.info(T(f"block_{kind}", name=name, b=b, n=n, last=last))
    if view.fully_masked_rows:
        rows = ", ".join(str(i) for i in view.fully_masked_rows)
        st.warning(T("fully_masked", rows=rows))


def show(T) -> None:
    st.header(T("tiles_header"))
    st.markdown(T("tiles_text"))
    s = read_settings(T)
    q_tile = int(ui.field(F["qtile"], T("qtile"), SimpleNamespace(**s), format_func=lambda i: T("qtile_option", i=i)))
    view = fa.walk(q_tile=q_tile, **s)
    tiling_notes(T, s, view)
    steps = len(view.steps)
    step = ui.field(F["step"], T("step"), SimpleNamespace(n_steps=steps)) if steps > 1 else 0
    current = view.steps[step]
    st.markdown(
        T(
            "step_text",
            step=step,
            j=current.key_tile,
            k0=current.keys[0],
            k1=current.keys[1] - 1,
            q0=view.queries[0],
            q1=view.queries[1] - 1,
        )
    )
    if current.skipped:
        st.info(T("skipped"))
    words = ui.texts("flash_attention.figure")
    left, right = ui.beside(2)
    with left:
        ui.show_figure(fv.tiles_figure(view, words, step), "flash-tiles", data=view.weights, row_labels=view.labels,
                       col_labels=view.labels, key="fig-tiles")  # fmt: skip
    with right:
        ui.show_figure(fv.output_figure(view, words, step), "flash-partial-output", data=current.output,
                       row_labels=view.tile_rows, col_labels=view.dims, key="fig-out")  # fmt: skip
    ui.show_figure(fv.statistics_figure(view, words, step), "flash-m-l", key="fig-ml")
    table = fa.step_table(view, step)
    st.dataframe({T(f"col_{k}"): v for k, v in table.items()}, hide_index=True)
    st.caption(T("table_caption"))
    check = T("check_ok") if view.matches_sdpa else T("check_bad")
    st.markdown(T("check", diff=f"{view.max_abs_diff:.1e}", verdict=check))
