"""The tiled forward on one small random head: block sizes, one query tile, and a slider over the key tiles."""

import streamlit as st

from app import ui
from core import flash_attention as fa
from viz import flash_attention as fv

MAX_N = 48
MAX_D = 16
MAX_BLOCK = 64  # larger than MAX_N on purpose: a block may exceed n


def read_settings(T) -> dict:
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        n = ui.number("n", T("n"), 1, MAX_N, 10, help=T("n_help"))
    with c2:
        d = ui.number("d", T("d"), 1, MAX_D, 4)
    with c3:
        br = ui.number("br", T("br"), 1, MAX_BLOCK, 4, help=T("br_help"))
    with c4:
        bc = ui.number("bc", T("bc"), 1, MAX_BLOCK, 3, help=T("bc_help"))
    c5, c6, c7 = st.columns(3)
    with c5:
        causal = ui.checkbox("causal", T("causal"), False)
    with c6:
        padded = ui.number("pad", T("pad"), 0, MAX_N, 0, help=T("pad_help"))
    with c7:
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    return dict(n=n, d=d, br=br, bc=bc, causal=causal, padded_keys=padded, seed=seed)


def tiling_notes(T, s: dict, view: fa.TileWalk) -> None:
    n, br, bc = s["n"], s["br"], s["bc"]
    st.markdown(T("tiling", tr=len(view.query_tiles), tc=len(view.key_tiles), n=n, br=br, bc=bc))
    for name, b in (("Br", br), ("Bc", bc)):
        if b > n:
            st.info(T("block_larger", name=name, b=b, n=n))
        elif n % b:
            st.info(T("block_uneven", name=name, b=b, n=n, last=n % b))
    if view.fully_masked_rows:
        rows = ", ".join(str(i) for i in view.fully_masked_rows)
        st.warning(T("fully_masked", rows=rows))


def show(T) -> None:
    st.header(T("tiles_header"))
    st.markdown(T("tiles_text"))
    s = read_settings(T)
    tr = len(fa.tile_ranges(s["n"], s["br"]))
    options = [str(i) for i in range(tr)]
    q_tile = int(ui.select("qtile", T("qtile"), options, "0", format_func=lambda i: T("qtile_option", i=i)))
    view = fa.walk(q_tile=q_tile, **s)
    tiling_notes(T, s, view)
    steps = len(view.steps)
    step = ui.slider("step", T("step"), 0, steps - 1, steps - 1) if steps > 1 else 0
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
    left, right = st.columns(2)
    with left:
        ui.show_figure(fv.tiles_figure(view, words, step), "flash-tiles", data=view.weights, key="fig-tiles")
    with right:
        ui.show_figure(fv.output_figure(view, words, step), "flash-partial-output", data=current.output, key="fig-out")
    ui.show_figure(fv.statistics_figure(view, words, step), "flash-m-l", key="fig-ml")
    table = fa.step_table(view, step)
    st.dataframe({T(f"col_{k}"): v for k, v in table.items()}, hide_index=True)
    st.caption(T("table_caption"))
    check = T("check_ok") if view.max_abs_diff < 1e-9 else T("check_bad")
    st.markdown(T("check", diff=f"{view.max_abs_diff:.1e}", verdict=check))
