"""Part 0 of /sdpa-steps: Q, K, V as a lookup. A Python dict's hard lookup beside attention's soft one on the same
keys and values, and a temperature that takes the soft lookup towards the hard one."""

import streamlit as st

from app import ui
from core import sdpa_steps as core
from viz.sdpa_steps import lookup_figures

OTHER = core.LOOKUP_OTHER_KEY  # the query equal to no key


def show_lookup(T) -> None:
    st.header(T("lookup"))
    st.markdown(T("lookup_text"))
    names = [s.strip() for s in T("lookup_names").split(",")]
    c1, c2 = st.columns(2)
    with c1:
        choice = ui.field(
            core.STATE["lq"],
            T("lookup_query"),
            format_func=lambda o: T("lookup_other") if o == OTHER else names[int(o)],
        )
    with c2:
        tau = ui.field(core.STATE["tau"], T("lookup_tau"), help=T("lookup_tau_help"))
    view = core.lookup_view(None if choice == OTHER else int(choice), tau, names)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**{T('lookup_hard')}**")
        st.code(view.code, language="python")
    with right:
        st.markdown(f"**{T('lookup_soft')}**")
        st.code(view.mix, language=None, wrap_lines=True)
    if view.hard is None:
        st.markdown(T("lookup_result_miss", soft=view.soft, sdpa=view.sdpa))
    else:
        st.markdown(T("lookup_result_hit", hard=view.hard, soft=view.soft, sdpa=view.sdpa, gap=view.gap))
    figs = lookup_figures(view, ui.texts("sdpa_steps.figure"))
    left, right = ui.beside(2)
    with left:
        data = {"key": view.names, "score": view.scores, "soft_weight": view.weights, "dict_weight": view.hard_weights}
        ui.show_figure(figs["weights"], f"lookup-weights-tau{tau:g}", key="fig-lookup-weights", data=data)
    with right:
        curve = {"tau": view.taus, "soft_result": view.soft_by_tau}
        ui.show_figure(figs["curve"], "lookup-soft-vs-tau", key="fig-lookup-curve", data=curve)
