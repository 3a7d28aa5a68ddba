"""The parts of the /kv-cache page: the continuation, one step's attention and next-token candidates, every step's
attention, and the cache's memory with the KL divergence of eviction. Each part: one core view, one figure."""

from types import SimpleNamespace

import streamlit as st

from app import ui
from core.kv_cache import views
from core.kv_cache.state import MEAN, STATE, head_options
from viz import kv_cache as kv

MAX_COLS = 96  # columns of a pooled attention row
F = STATE


def code(token: str) -> str:
    """A token inside a markdown code span: shown as typed, never as markup ('<script>', '**', links)."""
    return "`" + token.replace("`", "ˋ").replace("\n", "⏎") + "`"


def generated_text(T, gen) -> None:
    view = views.continuation(gen)
    st.header(T("continuation"))
    st.code(view.prompt + " ⟶ " + view.generated, language=None, wrap_lines=True)
    st.caption(T("continuation_caption", n=view.n_new, prompt=view.n_prompt))
    st.caption(T("full_pass_check", diff=view.full_pass_difference))
    if view.greedy:
        st.caption(T("greedy_same"))
    if view.stopped_at_eos:
        st.info(T("eos"))


def one_step(T, gen) -> None:
    st.header(T("step_header"))
    last = len(gen.steps) - 1
    c1, c2 = st.columns(2)
    with c1:
        step = ui.field(F["step"], T("step"), gen) if last > 0 else 0
    with c2:
        layer = ui.field(F["layer"], T("layer"), gen)
    words = ui.texts("kv_cache.figure")
    view = views.step_attention(gen, step, layer, MAX_COLS)
    st.markdown(T("step_text", token=code(view.fed), position=view.position, chosen=code(view.chosen)))
    if view.pooled:
        st.caption(T("pooled", n=view.n, bins=len(view.labels)))
    ui.show_figure(kv.step_figure(view, words), f"kv-step{view.step}-layer{view.layer}", data=view.rows,
                   row_labels=kv.step_rows(view, words), col_labels=view.labels, key="fig-step")  # fmt: skip
    top = views.next_tokens(gen, step)
    ui.show_figure(kv.top_figure(top, words), f"kv-top5-step{top.step}", key="fig-top")
    if top.policies:  # none for a model whose sliding-window layers evict by themselves
        window, sinks = top.outcome("window"), top.outcome("sinks_window")
        st.caption(T("kl_caption", window_kept=window.kept, window_evicted=window.evicted, sinks_kept=sinks.kept,
                     sinks_evicted=sinks.evicted))  # fmt: skip
    st.caption(T("timing", ms=top.ms, eviction_ms=top.eviction_ms, steps=top.steps, rows=top.eviction_rows))
    work = views.step_work(gen, step)
    st.markdown(T("work", n=work.n, with_cache=work.with_cache, without=work.without, ratio=work.ratio))


def all_steps(T, gen) -> None:
    st.header(T("history_header"))
    c1, c2 = st.columns(2)
    with c1:
        layer = ui.field(F["hlayer"], T("layer"), gen)
    with c2:
        shown = SimpleNamespace(head_options=head_options(gen.heads))
        head = ui.field(
            F["head"], T("head_pick"), shown, format_func=lambda h: T("mean") if h == MEAN else T("head", h=h)
        )
    view = views.history(gen, layer, None if head == MEAN else int(head), MAX_COLS)
    fig = kv.history_figure(view, ui.texts("kv_cache.figure"))
    ui.show_figure(fig, f"kv-history-layer{layer}-{head}", data=view.weights, row_labels=view.row_labels,
                   col_labels=view.col_labels, key="fig-hist")  # fmt: skip
    st.caption(T("history_caption"))


def memory(T, gen, name: str) -> None:
    """name: the model's name, ready for markdown (app/models.py: name_in_text)."""
    st.header(T("memory_header"))
    view = views.memory(gen)
    ui.metrics([(T("measured"), view.measured, None), (T("formula_gqa", kv=view.kv_heads), view.formula_gqa, None),
                (T("formula_mha", h=view.heads), view.formula_mha, None)])  # fmt: skip
    st.markdown(T("memory_text", layers=view.layers, kv=view.kv_heads, d=view.head_dim, b=view.bytes_per_value,
                  n=view.n, per_token=view.per_token, h=view.heads,
                  sharing=T(view.sharing, model=name, group=view.group, h=view.heads)))  # fmt: skip
    words = ui.texts("kv_cache.figure")
    ui.show_figure(kv.memory_figure(view, words), "kv-cache-bytes", data=view.curves, key="fig-mem")
    context = ui.field(F["ctx"], T("ctx"), widget="number", help=T("ctx_help"))
    at = views.cache_at(gen, context)
    st.markdown(T("cache_at", n=at.context, bytes=at.bytes, human=at.human, mha=at.bytes_mha, human_mha=at.human_mha,
                  model=name))  # fmt: skip
    if at.sliding_layers:
        st.caption(T("cache_at_sliding", k=at.sliding_layers, layers=view.layers, w=", ".join(map(str, at.windows))))
    evicted = views.eviction(gen)
    if not evicted.measured:
        st.info(T("no_eviction", model=name))
    else:
        ui.show_figure(kv.kl_figure(evicted, words), "kv-kl", data=evicted.table, key="fig-kl")
        st.caption(T("kl_text", w=evicted.window, s=evicted.sinks))
    st.caption(T(evicted.positions_note, model=name))
