"""Before the Transformer: a GRU encoder-decoder with additive (Bahdanau) attention, trained here on the shipped
Transformer's task. One sentence translated by both with the GRU's alignment; the two side by side (exact match,
chrF, alignment); the gradient that reaches a source word against its distance; time, path length and cost per
layer against length."""

import streamlit as st

from app import models, ui
from core.encoder_decoder import view as edv
from core.models import registry
from core.results import load_result
from core.rnn_attention import compare as cmp
from core.rnn_attention import model as rm
from core.rnn_attention import view as rv
from core.rnn_attention.state import STATE
from viz import rnn_attention as figs

F = STATE  # the page's link, declared in core


def _code(text: str) -> None:
    st.code(text or "∅", language=None)


def translate_part(T) -> None:
    examples = edv.example_sentences()
    text = ui.field(F["text"], T("text"), height=70)
    language = ui.field(F["target"], T("target"), widget="radio", format_func=lambda c: T("lang_" + c),
                        horizontal=True)  # fmt: skip
    st.caption(T("examples", examples=" | ".join(examples[:4])))
    if not text.strip():
        st.info(T("empty"))
        return
    if models.load(rm.RECORD) is None or models.load(registry.ENCODER_DECODER) is None:
        return
    view = models.computed(rm.RECORD, rv.sentence_view_of, text, language)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(T("gru_output"))
        _code(" ".join(view.output))
    with c2:
        st.markdown(T("transformer_output"))
        _code(" ".join(view.transformer_output))
    if view.reference is not None:
        st.markdown(T("reference"))
        _code(" ".join(view.reference))
    say = {"both_right": st.success, "neither": st.warning, "no_reference": st.info}.get(view.verdict, st.warning)
    say(T("sentence_" + view.verdict))
    fig_t = ui.texts("rnn_attention.figure")
    ui.show_figure(figs.alignment_figure(view, fig_t), "rnn-alignment", data=view.attention,
                   row_labels=view.row_labels, col_labels=view.col_labels, key="fig-rnn-align")  # fmt: skip
    st.markdown(T("bottleneck", states=len(view.source), width=view.state_width, numbers=view.attended_numbers,
                  final=view.final_width))  # fmt: skip
    st.markdown(T("cross_attention"))


def scores_part(T) -> None:
    loaded = rv.committed_scores()
    if loaded is None:
        st.info(T("not_measured"))
        return
    view, gru = loaded
    table = {T("col_measure"): [], T("col_gru"): [], T("col_transformer"): []}
    for row in view.rows:
        table[T("col_measure")].append(T("row_" + row.key))
        for col, value, interval in ((T("col_gru"), row.gru, row.gru_interval),
                                     (T("col_transformer"), row.transformer, row.transformer_interval)):  # fmt: skip
            table[col].append(T("fmt_" + row.key, v=value, lo=(interval or (0, 0))[0], hi=(interval or (0, 0))[1]))
    st.dataframe(table, hide_index=True)
    st.caption(T("scores_note", pairs=view.held_out_pairs, a_pairs=view.alignment_pairs, words=view.alignment_words,
                 l=view.transformer_head[0], h=view.transformer_head[1], heads=view.transformer_heads))  # fmt: skip
    st.markdown(T("exact_" + view.exact))
    st.markdown(T("align_" + view.alignment))
    st.markdown(T("gru_verdict_" + view.gru_alignment_verdict))
    if view.off_diagonal is not None:
        st.markdown(T("off_" + view.off_diagonal))
    st.caption(T("trained", command=gru.get("command", "?"), date=gru.get("date", "?"),
                 cpu=gru.get("train_cpu_seconds", 0.0)))  # fmt: skip


def gradient_part(T) -> None:
    data = load_result(rv.RESULT, required=rv.is_result)
    if data is None:
        st.info(T("not_measured"))
        return
    st.markdown(T("gradient_intro"))
    fig_t = ui.texts("rnn_attention.figure")
    for i, panel in enumerate(rv.gradient_panels(data)):
        ui.show_figure(figs.gradient_figure(panel, fig_t), f"rnn-gradient-{i}", key=f"fig-rnn-grad-{i}",
                       data={"distance": panel.distances, "with_attention": panel.with_attention,
                             "recurrence_only": panel.recurrence_only})  # fmt: skip
        key = "gradient_held_out" if panel.length is None else "gradient_long"
        st.markdown(T(key, pairs=panel.pairs, n=panel.length or 0, far=panel.distances[-1], decay=panel.decay,
                      decay_a=panel.decay_attention))  # fmt: skip
        st.markdown(T("gradient_" + panel.verdict))
    st.caption(T("measured", command=data.get("command", "?"), date=data.get("date", "?"),
                 load=data.get("load_average_before", ["?"])[0]))  # fmt: skip


def cost_part(T) -> None:
    c1, c2 = st.columns(2)
    with c1:
        n = ui.field(F["n"], T("n"))
    with c2:
        d = ui.field(F["d"], T("d"))
    view = cmp.cost_view(n, d)
    st.markdown(T("path", n=n, rec=view.path_recurrent, att=view.path_attention))
    fig_t = ui.texts("rnn_attention.figure")
    ui.show_figure(figs.cost_figure(view, fig_t), "rnn-cost", key="fig-rnn-cost",
                   data={"n": view.lengths, "recurrent": view.recurrent, "attention": view.attention})  # fmt: skip
    st.markdown(T("cost_formula", d=d))
    st.markdown(T("cheaper_" + view.cheaper, n=n, d=d))
    data = load_result(rv.RESULT, required=rv.is_result)
    if data is None:
        st.info(T("not_measured"))
        return
    timing = rv.timing_view(data)
    ui.show_figure(figs.timing_figure(timing, fig_t), "rnn-timing", key="fig-rnn-time",
                   data={"n": timing.lengths, "gru_ms": timing.gru_ms, "torch_gru_ms": timing.torch_gru_ms,
                         "transformer_ms": timing.transformer_ms})  # fmt: skip
    st.markdown(T("timing_" + timing.faster_at_longest, n=timing.lengths[-1], ratio=timing.ratio_at_longest,
                  ratio_torch=timing.torch_ratio_at_longest))  # fmt: skip
    st.markdown(
        T("timing_short_" + timing.faster_at_shortest, n=timing.lengths[0], ratio=timing.torch_ratio_at_shortest)
    )
    st.markdown(T("timing_note"))
    st.caption(T("measured", command=data.get("command", "?"), date=data.get("date", "?"),
                 load=data.get("load_average_before", ["?"])[0]))  # fmt: skip


def page() -> None:
    T = ui.page_setup("rnn_attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.field(F["part"], T("part"), widget="radio", format_func=lambda p: T(f"part_{p}"), horizontal=True)
    {"translate": translate_part, "scores": scores_part, "gradient": gradient_part, "cost": cost_part}[part](T)
    ui.page_end()
