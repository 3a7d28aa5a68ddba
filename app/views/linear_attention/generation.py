"""Part 5: generating tokens with the RNN form, softmax with a KV cache and softmax without one."""

import streamlit as st

from app import ui
from app.measured import live_meta, live_run, number
from core.linear_attention import measure
from core.linear_attention.decoding import MODES
from core.linear_attention.state import STATE
from core.linear_attention.views import GenerationView, generation_on_devices, generation_view
from core.results import GPU_RUNS_DIR
from viz.linear_attention import generation_figure

from .common import LIVE_BUDGET_S, LIVE_DEADLINE_S, LIVE_MIN, RESULTS_FILE, results_meta


def show(T, view: GenerationView, name: str, key: str) -> None:
    data = {"context": view.contexts, **{f"{m}_tok_s": view.tok_s[m] for m in MODES}}
    ui.show_figure(generation_figure(view, ui.texts("linear_attention.figure")), name, data=data, key=key)
    st.dataframe(
        {
            T("col_ctx"): [f"{c:,}" for c in view.contexts],
            **{
                T(m): [T("skipped") if sk else number(v, ",.2f") for sk, v in zip(view.skipped[m], view.tok_s[m])]
                for m in MODES
            },
            T("col_rnn_kv"): [number(v, ",.2f") for v in view.rnn_over_kv],
            T("col_kv_none"): [number(v, ",.1f") for v in view.kv_over_none],
        },
        hide_index=True,
    )
    last = view.last
    if last:
        st.markdown(
            T(
                view.last_words,
                ctx=last["context"],
                rnn=last["rnn_tok_s"],
                kv=last["kv_cache_tok_s"],
                none=last["no_cache_tok_s"],
                r1=view.last_speedup,
                r2=last["kv_cache_over_no_cache"],
            )
        )


def gpu(T, cpu: dict | None) -> None:
    """The committed GPU run, and where it changes what the CPU's run says."""
    run = measure.load_results(measure.GPU_RESULT)
    if run is None:
        return
    st.markdown(f"**{T('gpu_committed', device_name=run.get('device_name', '?'))}**")
    show(T, generation_view(run["generation"]["rows"]), "generation-speed-gpu", "fig-gen-gpu")
    results_meta(T, run)
    st.caption(T("gpu_provenance", readme=f"results/{GPU_RUNS_DIR}/README.md"))
    both = generation_on_devices(cpu, run)
    if both is None:
        return
    lo, hi = both.contexts[0], both.contexts[-1]
    st.markdown(
        T(
            "gen_gpu_changes" if both.conclusion_changes else "gen_gpu_same",
            cpu=both.cpu_name,
            gpu=both.gpu_name,
            n=len(both.contexts),
            lo=lo,
            hi=hi,
            cpu_n=len(both.cpu_rnn_faster),
            gpu_n=len(both.gpu_rnn_faster),
            cpu_rnn=both.cpu["rnn_tok_s"],
            cpu_kv=both.cpu["kv_cache_tok_s"],
            gpu_rnn=both.gpu["rnn_tok_s"],
            gpu_kv=both.gpu["kv_cache_tok_s"],
            rnn_lo=both.gpu_rnn_range[0],
            rnn_hi=both.gpu_rnn_range[1],
            kv_lo=both.gpu_kv_range[0],
            kv_hi=both.gpu_kv_range[1],
            growth=both.context_growth,
        )
    )


def part(T, res: dict | None) -> None:
    st.header(T("h_generation"))
    st.markdown(T("generation"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path=RESULTS_FILE))
    else:
        show(T, generation_view(res["generation"]["rows"]), "generation-speed-committed", "fig-gen-committed")
        results_meta(T, res)
    gpu(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("gen_live_intro", budget=LIVE_BUDGET_S, limit=LIVE_DEADLINE_S))
        max_ctx = ui.field(STATE["max_ctx"], T("max_ctx"), format_func=lambda v: f"{v:,}")
        if st.button(T("run_gen"), key="run-gen"):
            rows = live_run(
                T,
                ("linear_generation", max_ctx, 16, LIVE_BUDGET_S, LIVE_DEADLINE_S),
                lambda report: measure.generation_table(
                    measure.power_of_two_sizes(LIVE_MIN, max_ctx),
                    steps=16,
                    budget_s=LIVE_BUDGET_S,
                    deadline_s=LIVE_DEADLINE_S,
                    progress=report,
                ),
            )
            st.session_state["_linear_generation"] = generation_view(rows)
        live = st.session_state.get("_linear_generation")
        if live:
            st.markdown(f"**{T('live_result')}**")
            show(T, live, "generation-speed-live", "fig-gen-live")
            live_meta(T)
