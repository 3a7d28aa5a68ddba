"""The formula part of /rope-scaling: frequencies, expected q.k by distance and resolution of every method."""

import streamlit as st

from app import collector, ui
from core.rope_scaling import formulas
from core.rope_scaling.state import STATE
from viz import rope_scaling as figures


@st.cache_data(show_spinner=False, max_entries=16)
def frequencies(factor: float, seq_len: int) -> formulas.FrequencyView:
    """The page's and its lesson steps' frequency view (app/step_views), one cache for both."""
    with collector.paused():  # the process's first call imports transformers (its RoPE functions), as a load does
        return formulas.frequency_view(factor, seq_len)


@st.cache_data(show_spinner=False, max_entries=16)
def _decay(factor: float, max_distance: int) -> formulas.DecayView:
    with collector.paused():
        return formulas.decay_view(factor, max_distance)


def part(T) -> None:
    st.markdown(T("methods"))
    c1, c2 = st.columns(2)
    with c1:
        factor = float(ui.field(STATE["factor"], T("factor")))
    with c2:
        maxd = ui.field(STATE["maxd"], T("maxd"), format_func=lambda v: f"{v:,}")
    freq = frequencies(factor, maxd)
    words = ui.texts("rope_scaling.figure")
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(
            figures.wavelength_figure(freq, words),
            f"rope-wavelengths-s{factor:g}",
            data={"pair": freq.pairs, **{r["method"]: r["wavelength"] for r in freq.rows}},
            key="fig-wl",
        )
    with c2:
        ui.show_figure(
            figures.ratio_figure(freq, words),
            f"rope-interpolation-s{factor:g}",
            data={"pair": freq.pairs, **{r["method"]: r["ratio"] for r in freq.rows}},
            key="fig-ratio",
        )
    st.dataframe(
        {
            T("col_method"): [r["method"] for r in freq.rows],
            T("col_kept"): [r["kept"] for r in freq.rows],
            T("col_interp"): [r["interpolated"] for r in freq.rows],
            T("col_between"): [r["between"] for r in freq.rows],
            T("col_att"): [round(r["attention_factor"], 4) for r in freq.rows],
        },
        hide_index=True,
    )
    st.caption(T("wl_note"))

    decay = _decay(factor, maxd)
    default = decay.envelopes["default"]
    ui.show_figure(
        figures.decay_figure(decay, ui.texts("rope_scaling.figure")),
        f"rope-qk-decay-s{factor:g}",
        data={
            "distance_from": default["start"],
            "distance_to": default["end"],
            **{f"{m}_mean": e["mean"] for m, e in decay.envelopes.items()},
        },
        key="fig-decay",
    )
    st.caption(T("decay_note", maxd=maxd, bins=len(default["mean"])))

    st.header(T("res_title"))
    measure = ui.field(
        STATE["measure"], T("measure"), widget="radio", format_func=lambda v: T(f"measure_{v}"), horizontal=True
    )
    res = formulas.resolution_view(factor)
    ui.show_figure(
        figures.resolution_figure(res, ui.texts("rope_scaling.figure"), measure),
        f"rope-resolution-{measure}",
        data={"factor": res.factors, **{m: v[measure] for m, v in res.angles.items()}},
        key="fig-res",
    )
    k = res.nearest
    st.info(
        T(
            "res_result",
            s=res.nearest_factor,
            lin=res.angles["linear"]["fastest_pair"][k],
            base=res.angles["default"]["fastest_pair"][k],
            yarn=res.angles["yarn"]["fastest_pair"][k],
        )
    )
