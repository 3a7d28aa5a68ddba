"""The Q, K, V editors of /sdpa-steps: three st.data_editor tables that keep the user's numbers when d_k or d_v
changes, the preloaded walkthroughs (core.PRESETS), and a button back to the chosen one."""

import numpy as np
import pandas as pd
import streamlit as st

from core import sdpa_steps as core

STATE = "sdpa_editor"  # base matrices of the editors, and a generation counter that renews the editors' keys


def preset_state(name: str = "classic", gen: int = 0) -> dict:
    p = core.PRESETS[name]()
    return {"gen": gen, "preset": name, "dims": p.dims, "q": p.q, "k": p.k, "v": p.v, "tokens": p.tokens}


def reset() -> None:
    """The button: the current preset's numbers again, at its own widths."""
    name = st.session_state.get("preset", "classic")
    gen = st.session_state.get(STATE, preset_state())["gen"] + 1
    st.session_state[STATE] = preset_state(name, gen)
    st.session_state.pop(STATE + "_last", None)
    st.session_state["dk"], st.session_state["dv"] = st.session_state[STATE]["dims"]


def load_preset(name: str) -> tuple[int, int]:
    """Before the width widgets: when the chosen preset is not the one in the editors, load it (and set d_k, d_v
    to its widths, unless this is the session's first run, where a link's d_k and d_v win). Returns the preset's
    widths, the widgets' defaults."""
    state = st.session_state.get(STATE)
    if state is None:
        st.session_state[STATE] = preset_state(name)
    elif state.get("preset", "classic") != name:
        st.session_state[STATE] = preset_state(name, state["gen"] + 1)
        st.session_state.pop(STATE + "_last", None)
        st.session_state["dk"], st.session_state["dv"] = st.session_state[STATE]["dims"]
    return core.PRESETS[name]().dims


def editor_bases(d_k: int, d_v: int) -> dict:
    """The matrices the editors start from. When d_k or d_v changes, the user's current numbers are cut or
    zero-padded to the new width and the editors start afresh (new keys) from them: an editor's stored edits
    only make sense against the exact table it was created with."""
    state = st.session_state.setdefault(STATE, preset_state())
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
