"""Linear attention (Katharopoulos et al. 2020): which product is computed first and what it costs, the attention
matrix it implies next to softmax's on the same Q and K, measured time against n with the log-log slope, and
generation speed of its RNN form against softmax with and without a KV cache."""

import math

import streamlit as st

from app import ui
from core import linear_scaling as ls
from core.linear_attention import associativity_costs
from core.timing import machine_info
from viz.heatmap import attention_heatmap
from viz.scaling import loglog_figure

COST_SIZES = [2**k for k in range(4, 18)]  # 16 .. 131,072
TRICK_N = [str(n) for n in COST_SIZES]
TRICK_D = ["16", "32", "64", "128", "256"]
IMPLIED_D = ["4", "8", "16", "32", "64"]
TIMING_MAX = ["512", "1024", "2048", "4096", "8192", "16384"]
GEN_MAX = ["256", "512", "1024", "2048", "4096", "8192"]
LIVE_MIN = 256
LIVE_DEADLINE_S = 120  # no size starts after this, nor a mode that its last time says would overrun it
LIVE_BUDGET_S = 2.0  # one measurement stops repeating after this long
MODES = ("rnn", "kv_cache", "no_cache")


def number(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def associativity(T) -> None:
    st.subheader(T("h_trick"))
    st.markdown(T("trick"))
    c1, c2 = st.columns(2)
    with c1:
        n = int(ui.select("n", T("n"), TRICK_N, "4096", format_func=lambda v: f"{int(v):,}"))
    with c2:
        d = int(ui.select("d", T("d"), TRICK_D, "64"))
    costs = associativity_costs(n, d)
    orders = ("quadratic", "linear")
    st.dataframe(
        {
            T("col_order"): [T(f"order_{o}") for o in orders],
            T("col_first"): [costs[o]["first_product"] for o in orders],
            T("col_shape"): [" × ".join(f"{s:,}" for s in costs[o]["intermediate_shape"]) for o in orders],
            T("col_numbers"): [f"{costs[o]['intermediate_numbers']:,}" for o in orders],
            T("col_madds"): [f"{costs[o]['multiply_adds']:,}" for o in orders],
        },
        hide_index=True,
    )
    quad, lin = costs["quadratic"], costs["linear"]
    st.markdown(
        T(
            "trick_result",
            n=n,
            d=d,
            quad=quad["multiply_adds"],
            qnum=quad["intermediate_numbers"],
            lin=lin["multiply_adds"],
            lnum=lin["intermediate_numbers"],
            ratio=quad["multiply_adds"] / lin["multiply_adds"],
            cross=ls.associativity_crossover(d),
        )
    )
    curves = ls.cost_curves(COST_SIZES, d)
    series = {T("order_quadratic"): curves["quadratic"], T("order_linear"): curves["linear"]}
    fig = loglog_figure(
        COST_SIZES, series, title=T("cost_title", d=d), x_title=T("n_axis"), y_title=T("multiply_adds"), height=360
    )
    ui.show_figure(fig, f"associativity-d{d}", data={"n": COST_SIZES, **curves}, key="fig-cost")


def implied(T) -> None:
    st.subheader(T("h_implied"))
    st.markdown(T("implied"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = ui.slider("im_n", T("im_n"), 2, 48, 12)
        d = int(ui.select("im_d", T("im_d"), IMPLIED_D, "16"))
    with c2:
        spread = ui.slider("spread", T("spread"), 0.25, 4.0, 1.0, step=0.25)
        seed = ui.number("seed", T("seed"), 0, 9999, 0)
    with c3:
        causal = ui.checkbox("causal", T("causal"))
    r = ls.implied_matrices(n, d, spread, causal, seed)
    queries = [f"q{i}" for i in range(n)]
    keys = [f"k{j}" for j in range(n)]
    c1, c2 = st.columns(2)
    for col, kind in ((c1, "softmax"), (c2, "linear")):
        with col:
            fig = attention_heatmap(
                r[kind],
                queries,
                keys,
                masked=r["mask"],
                title=T(f"{kind}_title"),
                x_title=T("key_axis"),
                y_title=T("query_axis"),
                zmax=1.0,
            )
            ui.show_figure(
                fig,
                f"{kind}-weights-n{n}-s{spread:g}",
                data=r[kind],
                row_labels=queries,
                col_labels=keys,
                key=f"fig-{kind}",
            )
    st.markdown(
        T(
            "implied_stats",
            es=r["entropy_softmax"],
            el=r["entropy_linear"],
            uniform=math.log(n),
            causal_note=T("causal_note") if causal else "",
            ms=r["row_max_softmax"],
            ml=r["row_max_linear"],
            cs=r["check_softmax"],
            cl=r["check_linear"],
        )
    )


# --- timing -----------------------------------------------------------------------------------------------------


def timing_view(T, rows: list[dict], slopes: dict, heads: int, d: int, causal: bool, name: str, key: str) -> None:
    sizes = [r["n"] for r in rows]
    series = {T("softmax"): [r["softmax_ms"] for r in rows], T("linear"): [r["linear_ms"] for r in rows]}
    fits = {T("softmax"): _fit(slopes, "softmax"), T("linear"): _fit(slopes, "linear")}
    fig = loglog_figure(
        sizes,
        series,
        fits,
        fit_from=slopes.get("fit_from"),
        x_title=T("n_axis"),
        y_title=T("ms_axis"),
        fit_label=T("fit_label"),
        title=T("time_title", heads=heads, d=d, kind=T("kind_causal" if causal else "kind_full")),
    )
    ui.show_figure(
        fig, name, data={"n": sizes, "softmax_ms": series[T("softmax")], "linear_ms": series[T("linear")]}, key=key
    )
    done = [r for r in rows if not r.get("skipped") and r.get("softmax_ms") is not None]
    if slopes.get("softmax") is not None and slopes.get("linear") is not None and done:
        last = done[-1]
        st.markdown(
            T(
                "slopes",
                fit_from=slopes["fit_from"],
                soft=slopes["softmax"],
                lin=slopes["linear"],
                n=last["n"],
                soft_ms=last["softmax_ms"],
                lin_ms=last["linear_ms"],
            )
        )
    else:
        st.markdown(T("slopes_none"))
    st.dataframe(
        {
            T("col_n"): [f"{r['n']:,}" for r in rows],
            T("col_soft_ms"): [T("skipped") if r.get("skipped") else number(r["softmax_ms"], ",.3f") for r in rows],
            T("col_lin_ms"): [T("skipped") if r.get("skipped") else number(r["linear_ms"], ",.3f") for r in rows],
            T("col_ratio"): [
                "" if r.get("skipped") or not r.get("linear_ms") else f"{r['softmax_ms'] / r['linear_ms']:,.1f}"
                for r in rows
            ],
        },
        hide_index=True,
    )


def _fit(slopes: dict, kind: str):
    if slopes.get(kind) is None:
        return None
    return slopes[kind], slopes[f"{kind}_intercept"]


def results_meta(T, res: dict) -> None:
    st.caption(
        T(
            "meta",
            command=res.get("command", "?"),
            date=res.get("date", "?"),
            device=res.get("device", "?"),
            device_name=res.get("device_name", "?"),
            torch=res.get("torch", "?"),
            threads=res.get("torch_threads", "?"),
            load_before=res.get("loadavg_1min_before", "?"),
            load_after=res.get("loadavg_1min_after", "?"),
            cpus=res.get("cpu_count", "?"),
        )
    )


def live_meta(T) -> None:
    info = machine_info("cpu")
    st.caption(
        T(
            "live_meta",
            device=info["device"],
            device_name=info["device_name"],
            torch=info["torch"],
            threads=info["torch_threads"],
            load=info["loadavg_1min"],
        )
    )


def progress_bar(T):
    bar = st.progress(0.0)
    return bar, lambda frac, label: bar.progress(min(1.0, max(0.0, frac)), text=T("running", label=label))


def timing(T, res: dict | None) -> None:
    st.subheader(T("h_timing"))
    st.markdown(T("timing"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path="results/bench_linear.json"))
    else:
        sc = res["scaling"]
        timing_view(
            T,
            sc["rows"],
            sc["slopes"],
            sc.get("heads", HEADS),
            sc.get("head_dim", HEAD_DIM),
            bool(sc.get("causal")),
            "linear-vs-softmax-time-committed",
            "fig-time-committed",
        )
        results_meta(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", limit=LIVE_DEADLINE_S))
        c1, c2 = st.columns(2)
        with c1:
            max_n = int(ui.select("max_n", T("max_n"), TIMING_MAX, "2048", format_func=lambda v: f"{int(v):,}"))
        with c2:
            causal = ui.checkbox("t_causal", T("causal"))
        if st.button(T("run_timing"), key="run-timing"):
            bar, progress = progress_bar(T)
            rows = ls.time_scaling(
                ls.power_of_two_sizes(LIVE_MIN, max_n),
                heads=HEADS,
                head_dim=HEAD_DIM,
                causal=causal,
                reps=3,
                budget_s=LIVE_BUDGET_S,
                deadline_s=LIVE_DEADLINE_S,
                progress=progress,
            )
            bar.empty()
            st.session_state["_linear_timing"] = {"rows": rows, "slopes": ls.fit_slopes(rows), "causal": causal}
        live = st.session_state.get("_linear_timing")
        if live:
            st.markdown(f"**{T('live_result')}**")
            timing_view(
                T,
                live["rows"],
                live["slopes"],
                HEADS,
                HEAD_DIM,
                live["causal"],
                "linear-vs-softmax-time-live",
                "fig-time-live",
            )
            live_meta(T)


# --- generation -------------------------------------------------------------------------------------------------


def generation_view(T, rows: list[dict], name: str, key: str) -> None:
    contexts = [r["context"] for r in rows]
    series = {T(m): [r.get(f"{m}_tok_s") for r in rows] for m in MODES}
    fig = loglog_figure(contexts, series, title=T("gen_title"), x_title=T("ctx_axis"), y_title=T("tok_axis"))
    ui.show_figure(fig, name, data={"context": contexts, **{f"{m}_tok_s": series[T(m)] for m in MODES}}, key=key)
    st.dataframe(
        {
            T("col_ctx"): [f"{c:,}" for c in contexts],
            **{
                T(m): [
                    T("skipped") if r.get("skipped") or r.get(f"{m}_skipped") else number(r.get(f"{m}_tok_s"), ",.2f")
                    for r in rows
                ]
                for m in MODES
            },
            T("col_rnn_kv"): [number(r.get("rnn_over_kv_cache"), ",.2f") for r in rows],
            T("col_kv_none"): [number(r.get("kv_cache_over_no_cache"), ",.1f") for r in rows],
        },
        hide_index=True,
    )
    full = [r for r in rows if r.get("rnn_over_kv_cache") and r.get("kv_cache_over_no_cache")]
    if full:
        last = full[-1]
        st.markdown(
            T(
                "gen_result",
                ctx=last["context"],
                rnn=last["rnn_tok_s"],
                kv=last["kv_cache_tok_s"],
                none=last["no_cache_tok_s"],
                r1=last["rnn_over_kv_cache"],
                r2=last["kv_cache_over_no_cache"],
            )
        )


def generation(T, res: dict | None) -> None:
    st.subheader(T("h_generation"))
    st.markdown(T("generation"))
    st.markdown(f"**{T('committed')}**")
    if res is None:
        st.info(T("no_results", path="results/bench_linear.json"))
    else:
        generation_view(T, res["generation"]["rows"], "generation-speed-committed", "fig-gen-committed")
        results_meta(T, res)
    with st.expander(T("live"), expanded=False):
        st.markdown(T("gen_live_intro", budget=LIVE_BUDGET_S, limit=LIVE_DEADLINE_S))
        max_ctx = int(ui.select("max_ctx", T("max_ctx"), GEN_MAX, "512", format_func=lambda v: f"{int(v):,}"))
        if st.button(T("run_gen"), key="run-gen"):
            bar, progress = progress_bar(T)
            rows = ls.generation_table(
                ls.power_of_two_sizes(LIVE_MIN, max_ctx),
                steps=16,
                budget_s=LIVE_BUDGET_S,
                deadline_s=LIVE_DEADLINE_S,
                progress=progress,
            )
            bar.empty()
            st.session_state["_linear_generation"] = rows
        live = st.session_state.get("_linear_generation")
        if live:
            st.markdown(f"**{T('live_result')}**")
            generation_view(T, live, "generation-speed-live", "fig-gen-live")
            live_meta(T)


def page() -> None:
    global HEADS, HEAD_DIM, T
    HEADS, HEAD_DIM = 1, 64  # the timing shape, as in benchmarks/bench_linear.py
    T = ui.page_setup("linear_attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    associativity(T)
    implied(T)
    results = ls.load_results()
    timing(T, results)
    generation(T, results)
    ui.page_end()
