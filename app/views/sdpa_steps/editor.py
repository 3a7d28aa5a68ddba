"""The Q, K, V editors of /sdpa-steps: three st.data_editor tables that keep the user's numbers when d_k or d_v
changes, and a button back to the classic example."""

import numpy as np
import pandas as pd
import streamlit as st

from core import sdpa_steps as core

STATE = "sdpa_editor"  # base matrices of the editors, and a generation counter that renews the editors' keys


def classic_state() -> dict:
    return {
        "gen": 0,
        "dims": (2, 3),
        "q": np.array(core.CLASSIC_Q),
        "k": np.array(core.CLASSIC_K),
        "v": np.array(core.CLASSIC_V),
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
            q=core.resize(q, len(q), d_k),
            k=core.resize(k, len(k), d_k),
            v=core.resize(v, len(v), d_v),
            dims=(d_k, d_v),
            gen=state["gen"] + 1,
        )
    return state


def edit_matrix(label: str, base: np.ndarray, name: str, gen: int) -> np.ndarray:
    """One editor; blank or non-numeric cells come back as NaN (core reports them as 'not_numeric')."""
    columns = [f"{name}·{j}" for j in range(base.shape[1])]
    frame = pd.DataFrame(base, columns=columns)
    config = {c: st.column_config.NumberColumn(c, required=True) for c in columns}
    st.caption(label)
    edited = st.data_editor(frame, key=f"sdpa-{name}-{gen}", num_rows="dynamic", column_config=config)
    return pd.DataFrame(edited).apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)


def edit_qkv(T, d_k: int, d_v: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three editors side by side; returns the edited Q, K, V (remembered for the next change of width)."""
    state = editor_bases(d_k, d_v)
    cq, ck, cv = st.columns(3)
    with cq:
        q = edit_matrix(T("q_label", n=len(state["q"])), state["q"], "Q", state["gen"])
    with ck:
        k = edit_matrix(T("k_label", n=len(state["k"])), state["k"], "K", state["gen"])
    with cv:
        v = edit_matrix(T("v_label", n=len(state["v"])), state["v"], "V", state["gen"])
    st.session_state[STATE + "_last"] = (q, k, v)
    return q, k, v
