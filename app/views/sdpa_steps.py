"""Scaled dot-product attention one step at a time on matrices the user edits, checked against torch's SDPA on
screen, and why the scores are divided by sqrt(d_k) (softmax saturation)."""

import numpy as np
import pandas as pd
import streamlit as st

from app import ui
from core import worked_example as wx
from viz.heatmap import attention_heatmap, matrix_heatmap
from viz.masks import entropy_vs_dk_figure, softmax_row_bars

MAX_WIDTH = 8  # d_k and d_v
MAX_ROWS = 12  # rows of Q, K, V used: matrices stay readable
SAT_DKS = [2**i for i in range(11)]  # 1 .. 1024
SAT_SAMPLES = 512
SAT_SEED = 0
STATE = "sdpa_editor"  # base matrices of the editors, and a generation counter that renews the editors' keys


def classic_state() -> dict:
    return {
        "gen": 0,
        "dims": (2, 3),
        "q": np.array(wx.CLASSIC_Q),
        "k": np.array(wx.CLASSIC_K),
        "v": np.array(wx.CLASSIC_V),
    }


def reset() -> None:
    gen = st.session_state.get(STATE, classic_state())["gen"] + 1
    st.session_state[STATE] = {**classic_state(), "gen": gen}
    st.session_state.pop(STATE + "_last", None)
    st.session_state["dk"], st.session_state["dv"] = 2, 3


def editor_bases(d_k: int, d_v: int) -> dict:
    """The matrices the editors start from. When d_k or d_v changes, the user's current numbers are cut or
    zero-padded to the new width and the editors start afresh (new keys) from them: an editor's stored edits
    only make sense against the exact table it was created with."""
    state = st.session_state.setdefault(STATE, classic_state())
    if state["dims"] != (d_k, d_v):
        q, k, v = st.session_state.get(STATE + "_last", (state["q"], state["k"], state["v"]))
        state.update(
            q=wx.resize(q, len(q), d_k),
            k=wx.resize(k, len(k), d_k),
            v=wx.resize(v, len(v), d_v),
            dims=(d_k, d_v),
            gen=state["gen"] + 1,
        )
    return state


def edit_matrix(label: str, base: np.ndarray, name: str, gen: int) -> np.ndarray:
    columns = [f"{name}·{j}" for j in range(base.shape[1])]
    frame = pd.DataFrame(base, columns=columns)
    config = {c: st.column_config.NumberColumn(c, required=True) for c in columns}
    st.caption(label)
    edited = st.data_editor(frame, key=f"sdpa-{name}-{gen}", num_rows="dynamic", column_config=config)
    return pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def fmt(x: float) -> str:
    return f"{x:.6g}"


def dot_line(q: np.ndarray, k: np.ndarray, score: float, i: int = 0, j: int = 0) -> str:
    terms = " + ".join(f"{fmt(a)}×{fmt(b)}" for a, b in zip(q[i], k[j]))
    return f"score[q{i}, k{j}] = q{i} · k{j} = {terms} = {fmt(score)}"


def mix_line(weights: np.ndarray, output: np.ndarray, i: int = 0) -> str:
    parts = " + ".join(f"{w:.4f}×v{j}" for j, w in enumerate(weights[i]))
    return f"out[q{i}] = {parts} = [{', '.join(fmt(x) for x in output[i])}]"


@st.cache_data(show_spinner=False, max_entries=32)
def saturation(d_ks: tuple, n_keys: int) -> wx.Saturation:
    return wx.softmax_entropy_vs_dk(list(d_ks), n_keys=n_keys, seed=SAT_SEED, n_samples=SAT_SAMPLES)


def show_steps(T) -> None:
    st.subheader(T("inputs"))
    c1, c2, c3 = st.columns([1, 1, 2])
    with c1:
        d_k = ui.number("dk", T("dk"), 1, MAX_WIDTH, 2)
    with c2:
        d_v = ui.number("dv", T("dv"), 1, MAX_WIDTH, 3)
    with c3:
        st.button(T("reset"), on_click=reset)
    st.caption(T("editor_help"))
    state = editor_bases(d_k, d_v)
    cq, ck, cv = st.columns(3)
    with cq:
        q = edit_matrix(T("q_label", n=len(state["q"])), state["q"], "Q", state["gen"])
    with ck:
        k = edit_matrix(T("k_label", n=len(state["k"])), state["k"], "K", state["gen"])
    with cv:
        v = edit_matrix(T("v_label", n=len(state["v"])), state["v"], "V", state["gen"])
    st.session_state[STATE + "_last"] = (q, k, v)
    if max(len(q), len(k), len(v)) > MAX_ROWS:
        st.info(T("too_many_rows", k=MAX_ROWS))
        q, k, v = q[:MAX_ROWS], k[:MAX_ROWS], v[:MAX_ROWS]

    problems = wx.input_problems(q, k, v)
    for code in problems:
        shapes = {"qk_width": (q.shape[1], k.shape[1]), "kv_rows": (k.shape[0], v.shape[0])}
        a, b = shapes.get(code, (0, 0))
        st.error(T(f"bad_{code}", a=a, b=b, limit=wx.MAX_ABS_INPUT))
    if problems:
        return
    s = wx.sdpa_steps(q, k, v)
    n_q, n_k = s.scores.shape
    q_labels, k_labels = [f"q{i}" for i in range(n_q)], [f"k{j}" for j in range(n_k)]
    v_labels = [f"V·{j}" for j in range(s.output.shape[1])]
    axes = dict(x_title=T("key"), y_title=T("query"))

    left, right = st.columns(2)
    with left:
        st.subheader(T("step1"))
        st.markdown(T("step1_text"))
        st.code(dot_line(s.q, s.k, s.scores[0, 0]), language=None)
        fig = matrix_heatmap(s.scores, q_labels, k_labels, title=T("fig_scores"), value_name="QKᵀ", decimals=4, **axes)
        ui.show_figure(
            fig, "sdpa-step1-scores", data=s.scores, row_labels=q_labels, col_labels=k_labels, key="fig-scores"
        )
    with right:
        st.subheader(T("step2"))
        st.markdown(T("step2_text", dk=q.shape[1], root=1 / s.scale, scale=s.scale))
        st.code(f"{fmt(s.scores[0, 0])} × {s.scale:.6f} = {fmt(s.scaled[0, 0])}", language=None)
        fig = matrix_heatmap(
            s.scaled, q_labels, k_labels, title=T("fig_scaled"), value_name="QKᵀ/√d_k", decimals=4, **axes
        )
        ui.show_figure(
            fig, "sdpa-step2-scaled", data=s.scaled, row_labels=q_labels, col_labels=k_labels, key="fig-scaled"
        )
    left, right = st.columns(2)
    with left:
        st.subheader(T("step3"))
        st.markdown(T("step3_text", sums=", ".join(f"{x:.6f}" for x in s.weights.sum(1))))
        row = ", ".join(fmt(x) for x in s.scaled[0])
        st.code(f"softmax([{row}]) = [{', '.join(f'{w:.6f}' for w in s.weights[0])}]", language=None)
        fig = attention_heatmap(s.weights, q_labels, k_labels, title=T("fig_weights"), zmax=1.0, decimals=4, **axes)
        ui.show_figure(
            fig, "sdpa-step3-weights", data=s.weights, row_labels=q_labels, col_labels=k_labels, key="fig-weights"
        )
    with right:
        st.subheader(T("step4"))
        st.markdown(T("step4_text"))
        st.code(mix_line(s.weights, s.output), language=None)
        fig = matrix_heatmap(
            s.output,
            q_labels,
            v_labels,
            title=T("fig_output"),
            x_title=T("dim"),
            y_title=T("query"),
            value_name="output",
            decimals=4,
        )
        ui.show_figure(
            fig, "sdpa-step4-output", data=s.output, row_labels=q_labels, col_labels=v_labels, key="fig-output"
        )

    st.subheader(T("check"))
    st.markdown(T("check_text"))
    st.dataframe(pd.DataFrame(s.sdpa_output, index=q_labels, columns=v_labels))
    if s.max_abs_diff <= 1e-9:
        st.success(T("check_ok", diff=s.max_abs_diff))
    else:
        st.warning(T("check_bad", diff=s.max_abs_diff))


def show_saturation(T) -> None:
    st.header(T("why"))
    st.markdown(T("why_text", samples=SAT_SAMPLES))
    c1, c2 = st.columns(2)
    with c1:
        d_k = ui.slider("sdk", T("sat_dk"), 1, 1024, 64)
    with c2:
        n = ui.slider("keys", T("sat_keys"), 2, 64, 16)
    d_ks = tuple(sorted(set(SAT_DKS) | {d_k}))
    sat = saturation(d_ks, n)
    i = d_ks.index(d_k)
    st.markdown(
        T(
            "sat_result",
            dk=d_k,
            es=sat.entropy_scaled[i],
            ms=sat.max_weight_scaled[i],
            eu=sat.entropy_unscaled[i],
            mu=sat.max_weight_unscaled[i],
            n=n,
            mx=sat.max_entropy,
        )
    )
    left, right = st.columns([3, 2])
    with left:
        fig = entropy_vs_dk_figure(
            sat.d_k,
            sat.entropy_scaled,
            sat.entropy_unscaled,
            sat.max_entropy,
            d_k,
            title=T("sat_title", n=n),
            scaled_name=T("sat_scaled"),
            unscaled_name=T("sat_unscaled"),
            max_name=T("sat_max"),
            y_title=T("sat_y"),
        )
        ui.show_figure(
            fig,
            f"softmax-saturation-n{n}",
            key="fig-saturation",
            data={
                "d_k": sat.d_k,
                "entropy_scaled": sat.entropy_scaled,
                "entropy_unscaled": sat.entropy_unscaled,
                "max_weight_scaled": sat.max_weight_scaled,
                "max_weight_unscaled": sat.max_weight_unscaled,
            },
        )
    with right:
        row = wx.example_row(d_k, n, SAT_SEED)
        fig = softmax_row_bars(
            row["weights_scaled"],
            row["weights_unscaled"],
            [f"k{j}" for j in range(n)],
            title=T("row_title", dk=d_k),
            scaled_name=T("row_scaled"),
            unscaled_name=T("row_unscaled"),
            x_title=T("row_key"),
            y_title=T("row_weight"),
        )
        ui.show_figure(
            fig,
            f"softmax-row-dk{d_k}-n{n}",
            key="fig-row",
            data={
                "key": [f"k{j}" for j in range(n)],
                "score": row["scores"],
                "weight_scaled": row["weights_scaled"],
                "weight_unscaled": row["weights_unscaled"],
            },
        )


def page() -> None:
    global T
    T = ui.page_setup("sdpa_steps")
    st.title(T("title"))
    st.markdown(T("intro"))
    st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
    show_steps(T)
    show_saturation(T)
    ui.page_end()
