"""The parts of the /kv-cache page: the continuation, one step's attention and next-token candidates, every step's
attention, and the cache's memory with the KL divergence of eviction."""

import streamlit as st

from app import ui
from core.kv_cache import views
from core.timing import human_bytes
from viz import kv_cache as kv

MAX_COLS = 96  # columns of a pooled attention row


def code(token: str) -> str:
    """A token inside a markdown code span: shown as typed, never as markup ('<script>', '**', links)."""
    return "`" + token.replace("`", "ˋ").replace("\n", "⏎") + "`"


def generated_text(T, gen) -> None:
    n_prompt = len(gen.prompt_ids)
    st.subheader(T("continuation"))
    st.code("".join(gen.tokens[:n_prompt]) + " ⟶ " + "".join(gen.tokens[n_prompt:]), language=None, wrap_lines=True)
    st.caption(T("continuation_caption", n=len(gen.steps), prompt=n_prompt))
    if gen.stopped_at_eos:
        st.info(T("eos"))


def one_step(T, gen) -> None:
    st.subheader(T("step_header"))
    last = len(gen.steps) - 1
    c1, c2 = st.columns(2)
    with c1:
        step = ui.slider("step", T("step"), 0, last, last) if last > 0 else 0
    with c2:
        layer = ui.slider("layer", T("layer"), 0, gen.layers - 1, gen.layers - 1)
    view = views.step_attention(gen, step, layer, MAX_COLS)
    s = gen.steps[view.step]
    st.markdown(
        T("step_text", token=code(gen.tokens[s.position]), position=s.position, chosen=code(gen.tokens[s.position + 1]))
    )
    if view.pooled:
        st.caption(T("pooled", n=view.position + 1, bins=len(view.labels)))
    ui.show_figure(kv.step_figure(view, T), f"kv-step{view.step}-layer{view.layer}", data=view.weights, key="fig-step")
    ui.show_figure(kv.top_figure(s, s.policies, T), f"kv-top5-step{view.step}", key="fig-top")
    kept = ", ".join(
        T("kept_line", policy=T(f"policy_{p}"), kept=d["kept"], evicted=d["evicted"]) for p, d in s.policies.items()
    )
    st.caption(T("kl_caption", kept=kept))
    st.caption(T("timing", ms=f"{s.ms:.0f}", policy_ms=f"{s.policy_ms:.0f}"))


def all_steps(T, gen) -> None:
    st.subheader(T("history_header"))
    heads = ["mean"] + [str(h) for h in range(gen.heads)]
    c1, c2 = st.columns(2)
    with c1:
        layer = ui.slider("hlayer", T("layer"), 0, gen.layers - 1, 0)
    with c2:
        head = ui.select(
            "head", T("head_pick"), heads, format_func=lambda h: T("mean") if h == "mean" else T("head", h=h)
        )
    hist = views.history(gen, layer, None if head == "mean" else int(head), MAX_COLS)
    title = T("history_title", layer=layer, head=T("mean") if head == "mean" else T("head", h=head))
    ui.show_figure(
        kv.history_figure(hist, title, T), f"kv-history-layer{layer}-{head}", data=hist.weights, key="fig-hist"
    )
    st.caption(T("history_caption"))


def memory(T, gen) -> None:
    st.subheader(T("memory_header"))
    curves = views.memory_curves(gen)
    last = gen.steps[-1]
    n = last.position + 1
    c1, c2, c3 = st.columns(3)
    c1.metric(T("measured"), human_bytes(last.cache_bytes))
    c2.metric(T("formula_gqa", kv=gen.kv_heads), human_bytes(gen.formula_bytes(n)))
    c3.metric(T("formula_mha", h=gen.heads), human_bytes(gen.formula_bytes(n, gen.heads)))
    st.markdown(
        T(
            "memory_text",
            layers=gen.layers,
            kv=gen.kv_heads,
            d=gen.head_dim,
            b=gen.bytes_per_value,
            n=n,
            per_token=human_bytes(gen.formula_bytes(1)),
            h=gen.heads,
        )
    )
    ui.show_figure(kv.memory_figure(curves, T), "kv-cache-bytes", data=curves, key="fig-mem")
    labels = [gen.tokens[s.position] for s in gen.steps]
    ui.show_figure(kv.kl_figure(views.kl_curves(gen), labels, T), "kv-kl", data=views.kl_curves(gen), key="fig-kl")
    st.caption(T("kl_text", w=gen.window, s=gen.sinks))
