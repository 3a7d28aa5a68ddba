"""Extrapolation part: a small model trained here with each kind of position (scripts/train_position_extrapolation
.py, committed results/position_extrapolation.json), tested on sequences up to 4x its training length."""

import streamlit as st

from app import ui
from app.measured import number
from core.positions import extrapolation
from viz.positions.extrapolation import accuracy_figure


def pct(x) -> str:
    return number(x, ".1%")


def part(T) -> None:
    st.markdown(T("ex_intro"))
    data = extrapolation.load_extrapolation()
    if data is None:
        st.info(T("ex_no_results"))
        return
    view = extrapolation.extrapolation_view(data)
    table = {"position": view.positions, **{k: view.accuracy[k] for k in view.accuracy}}
    ui.show_figure(
        accuracy_figure(view, ui.texts("positions.figure")),
        "position-extrapolation",
        data=table,
        key="fig-extrapolation",
    )
    kinds = list(view.accuracy)
    st.dataframe(
        {
            T("ex_col_kind"): [T(f"ex_{k}") for k in kinds],
            T("ex_col_inside", n=view.train_length): [pct(view.inside[k]) for k in kinds],
            T("ex_col_past", n=view.train_length): [
                pct(view.past[k]) if view.past[k] is not None else T("ex_no_vector") for k in kinds
            ],
            T("ex_col_seeds"): [", ".join(pct(p) for p in view.past_by_seed[k]) for k in kinds],
        },
        hide_index=True,
    )
    st.markdown(
        T(
            "ex_result",
            n=view.train_length,
            seeds=len(view.seeds),
            best=T(f"ex_{view.best_past}"),
            best_past=view.past[view.best_past],
            alibi_past=view.past["alibi"],
            rope_past=view.past["rope"],
        )
    )
    m = view.meta
    st.caption(
        T(
            "ex_meta",
            command=m["command"],
            date=m["date"],
            steps=m["steps"],
            cpu=m["seconds_cpu"],
            load_before=m["loadavg_1min_before"],
            load_after=m["loadavg_1min_after"],
        )
    )
