"""Part 2 of /sdpa-steps: why the scores are divided by √d_k. The variance of q·k under the stated assumption,
measured, and the softmax saturating without the scaling."""

import streamlit as st

from app import ui
from core import sdpa_steps as core
from viz.sdpa_steps import saturation_figures

SEED = 0


@st.cache_data(show_spinner=False, max_entries=32)
def saturation(d_k: int, n_keys: int) -> core.SaturationView:
    return core.saturation_view(d_k, n_keys, seed=SEED)


def show_saturation(T) -> None:
    st.header(T("why"))
    st.markdown(T("why_text", samples=core.SAT_SAMPLES))
    c1, c2 = st.columns(2)
    with c1:
        d_k = ui.field(core.STATE["sdk"], T("sat_dk"))
    with c2:
        n = ui.field(core.STATE["keys"], T("sat_keys"))
    view = saturation(d_k, n)
    var = view.variance
    st.markdown(T("var_result", dk=d_k, pairs=var.n_samples, raw=var.var_raw, scaled=var.var_scaled))
    st.markdown(T("cosine_analogy", dk=d_k, root=view.root_d_k, norm=var.mean_norm, prod=var.mean_norm_product,
                  cos_var=var.var_cosine, inv=view.inv_d_k, scaled=var.var_scaled))  # fmt: skip
    c, i = view.curve, view.index
    st.markdown(
        T(
            "sat_result",
            dk=d_k,
            es=c.entropy_scaled[i],
            ms=c.max_weight_scaled[i],
            eu=c.entropy_unscaled[i],
            mu=c.max_weight_unscaled[i],
            n=n,
            mx=c.max_entropy,
        )
    )
    figs = saturation_figures(view, ui.texts("sdpa_steps.figure"))
    left, right = ui.beside(2)
    with left:
        curve = {
            "d_k": c.d_k,
            "entropy_scaled": c.entropy_scaled,
            "entropy_unscaled": c.entropy_unscaled,
            "max_weight_scaled": c.max_weight_scaled,
            "max_weight_unscaled": c.max_weight_unscaled,
        }
        ui.show_figure(figs["entropy"], f"softmax-saturation-n{n}", key="fig-saturation", data=curve)
    with right:
        row = {
            "key": view.key_labels,
            "score": view.row["scores"],
            "weight_scaled": view.row["weights_scaled"],
            "weight_unscaled": view.row["weights_unscaled"],
        }
        ui.show_figure(figs["row"], f"softmax-row-dk{d_k}-n{n}", key="fig-row", data=row)
