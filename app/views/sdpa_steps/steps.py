"""Part 1 of /sdpa-steps: the four steps on the matrices the user edits, and the check against torch's SDPA."""

from types import SimpleNamespace

import pandas as pd
import streamlit as st

from app import ui
from core import sdpa_steps as core
from core import slips
from viz.sdpa_steps import step_figures

from .editor import STATE, edit_qkv, load_preset, reset

MAX_ROWS = core.MAX_ROWS


def show_steps(T) -> None:
    st.subheader(T("inputs"))
    preset = ui.field(core.STATE["preset"], T("preset"), format_func=lambda p: T(f"preset_{p}"))
    st.markdown(T(f"preset_{preset}_text"))
    load_preset(preset)
    chosen = SimpleNamespace(preset=preset)  # the widths' defaults are the preset's (core.STATE)
    c1, c2 = ui.widgets(2)
    with c1:
        d_k = ui.field(core.STATE["dk"], T("dk"), chosen, widget="number")
    with c2:
        d_v = ui.field(core.STATE["dv"], T("dv"), chosen, widget="number")
    st.button(T("reset"), on_click=reset)  # its own line: a column cut its label ('選んだウォークスルーを読み込…')
    st.caption(T("editor_help"))
    q, k, v = edit_qkv(T, d_k, d_v)

    view = core.steps_view(q, k, v, max_rows=MAX_ROWS, tokens=st.session_state[STATE].get("tokens"))
    if view.truncated:
        st.info(T("too_many_rows", k=MAX_ROWS))
    for code, a, b in view.problems:
        st.error(T(f"bad_{code}", a=a, b=b, limit=core.MAX_ABS_INPUT))
    if view.steps is None:
        return
    s = view.steps
    n_q, n_k = s.scores.shape
    st.markdown(T("shapes", nq=n_q, nk=n_k, dk=view.d_k, dv=s.output.shape[1], n=view.n_scores))
    figs = step_figures(view, ui.texts("sdpa_steps.figure"))
    labels = dict(row_labels=view.q_labels, col_labels=view.k_labels)

    # The worked lines wrap: each ends in its result, and a block is half a laptop's page wide (unwrapped, the result
    # sat past the block's edge behind a scroll bar).
    left, right = ui.beside(2)
    with left:
        st.subheader(T("step1"))
        st.markdown(T("step1_text"))
        st.code(view.lines["dot"], language=None, wrap_lines=True)
        ui.show_figure(figs["scores"], "sdpa-step1-scores", data=s.scores, key="fig-scores", **labels)
        row = "[" + ", ".join(f"{x:g}" for x in slips.qkt_second_row()) + "]"
        st.caption(T("slip_qkt", wrong=list(slips.WRONG_QKT_SECOND_ROW), right=row, preset=T("preset_classic"),
                     reset=T("reset")))  # fmt: skip
    with right:
        st.subheader(T("step2"))
        st.markdown(T("step2_text", dk=view.d_k, root=s.sqrt_d_k, scale=s.scale))
        st.code(view.lines["scale"], language=None, wrap_lines=True)
        ui.show_figure(figs["scaled"], "sdpa-step2-scaled", data=s.scaled, key="fig-scaled", **labels)
    left, right = ui.beside(2)
    with left:
        st.subheader(T("step3"))
        st.markdown(T("step3_text", sums=", ".join(f"{x:.6f}" for x in view.row_sums)))
        st.code(view.lines["softmax"], language=None, wrap_lines=True)
        ui.show_figure(figs["weights"], "sdpa-step3-weights", data=s.weights, key="fig-weights", **labels)
        keys = slips.longest_key_wins()
        st.caption(T("slip_longest", dots=", ".join(f"{x:g}" for x in keys.dots), top=f"k{keys.by_score}",
                     cosines=", ".join(f"{x:.5f}" for x in keys.cosines), closest=f"k{keys.by_direction}"))  # fmt: skip
    with right:
        st.subheader(T("step4"))
        st.markdown(T("step4_text"))
        st.code(view.lines["mix"], language=None, wrap_lines=True)
        ui.show_figure(
            figs["output"],
            "sdpa-step4-output",
            data=s.output,
            row_labels=view.q_labels,
            col_labels=view.v_labels,
            key="fig-output",
        )
        st.caption(T("slip_v"))

    st.subheader(T("check"))
    st.markdown(T("check_text"))
    query = ui.t("sdpa_steps.figure", "query")  # a named index: no empty header cell for a screen reader
    st.dataframe(pd.DataFrame(s.sdpa_output, index=pd.Index(view.q_labels, name=query), columns=view.v_labels))
    if s.matches_sdpa:
        st.success(T("check_ok", diff=s.max_abs_diff))
    else:
        st.warning(T("check_bad", diff=s.max_abs_diff))
