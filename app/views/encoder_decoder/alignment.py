"""Do the cross-attention heads align words? The committed measurement (scripts/encoder_decoder_alignment.py):
every head's accuracy with its interval, the best heads, the diagonal baseline and chance, and the verdict."""

import streamlit as st

from app import ui
from core.encoder_decoder import alignment as al
from core.results import load_result
from viz import encoder_decoder as figs

RESULT = "encoder_decoder_alignment"


def _interval(T, h: dict) -> str:
    return T("head_result", l=h["layer"], h=h["head"], a=h["accuracy"], lo=h["low"], hi=h["high"])


def alignment_part(T) -> None:
    data = load_result(RESULT, required=al.is_result)
    if data is None:
        st.info(T("not_measured"))
        return
    st.markdown(T("alignment_intro", pairs=data["pairs"], words=data["words"]))
    fig_t = ui.texts("encoder_decoder.figure")
    grid = al.result_grid(data)
    layers, heads = figs.alignment_labels(grid, fig_t)
    ui.show_figure(figs.alignment_map(grid, fig_t), "alignment-map", data=grid["accuracy"], row_labels=layers,
                   col_labels=heads, key="fig-align-map")  # fmt: skip
    ui.show_figure(figs.alignment_bars(data["heads"], data["diagonal"], data["chance"], fig_t), "alignment-heads",
                   key="fig-align-bars")  # fmt: skip
    st.markdown(T("best", heads="; ".join(_interval(T, h) for h in data["best"])))
    d = data["diagonal"]
    st.markdown(T("baseline", a=d["accuracy"], lo=d["low"], hi=d["high"], c=data["chance"]))
    confirm = data.get("confirmation")
    if isinstance(confirm, dict) and isinstance(confirm.get("head"), dict):
        h, cd = confirm["head"], confirm["diagonal"]
        st.markdown(T("confirm", n1=confirm["chosen_on_pairs"], n2=confirm["scored_on_pairs"], l=h["layer"],
                      h=h["head"], a=h["accuracy"], lo=h["low"], hi=h["high"], d=cd["accuracy"]))  # fmt: skip
    verdict = data["verdict"]
    (st.success if verdict == "aligns" else st.warning)(T("verdict_" + verdict))
    parts = al.off_diagonal_parts(data)
    if parts is not None:
        off, cross = parts["off"], parts["cross"]
        h, k = off["head"], cross["head"]
        st.markdown(T("off_diagonal", n=off["words"], l=h["layer"], h=h["head"], a=h["accuracy"], lo=h["low"],
                      hi=h["high"], c=off["chance"], cross_off=cross["off_diagonal_words"],
                      length_only=parts["length_only"]))  # fmt: skip
        st.markdown(T("crossing", n=cross["words"], a=k["accuracy"], lo=k["low"], hi=k["high"], c=cross["chance"]))
    st.caption(T("measured", date=data.get("date", "?"), command=data.get("command", "?")))
