"""Part 1: every SDPA backend against the naive version, committed runs per device and a small live CPU run."""

import streamlit as st

from app import shared, ui
from app.measured import live_meta, live_run, number
from core.results import GPU_RUNS_DIR
from core.sdpa_gqa import backends as sb
from core.sdpa_gqa.state import STATE
from core.sdpa_gqa.views import BackendsView, backends_view, devices_compared
from core.sdpa_gqa.views import live_run as sdpa_live_run
from core.timing import human_bytes
from viz.sdpa_gqa import backend_figures, shape_words

LIVE_HEADS, LIVE_D, LIVE_BUDGET_S = 4, 64, 1.0


def show(T, view: BackendsView, name: str, key: str, kept: bool = False) -> None:
    """Table, time and memory bars, and the sentence comparing the best backend to the naive version. `kept`: the
    view came from shared.view, so its figures are built once for every visitor (a committed run's: 35-45 ms a
    device at every page run otherwise)."""
    rows = view.rows
    words = ui.texts("sdpa_gqa.figure")
    ui.table(
        {
            T("col_shape"): [shape_words(label, words) for label in view.labels],
            T("col_backend"): [r["backend"] for r in rows],
            T("col_status"): [T(key) for key in view.statuses],
            T("col_ms"): [number(r["ms"], ",.2f") for r in rows],
            T("col_tflops"): [number(r["tflops"], ".4f") for r in rows],
            T("col_peak"): [human_bytes(r["peak_bytes"]) if r["status"] == "ok" else "–" for r in rows],
            T("col_diff"): [number(r["max_abs_diff_vs_naive"], ".1e") for r in rows],
        },
        hide_index=True,
    )
    if not view.shapes:
        return
    if kept:
        ms_fig, mem_fig = shared.figures(backend_figures, view, "sdpa_gqa.figure")
    else:
        ms_fig, mem_fig = backend_figures(view, ui.texts("sdpa_gqa.figure"))
    c1, c2 = ui.beside(2)
    with c1:
        ui.show_figure(ms_fig, f"{name}-ms", data={"shape": view.shapes, **view.ms}, key=f"{key}-ms")
    with c2:
        # a log axis has no place for 0 B (a kernel that reused freed memory): no bar there, the table says 0 B
        ui.show_figure(mem_fig, f"{name}-memory", data={"shape": view.shapes, **view.peak_bytes}, key=f"{key}-mem")
    s = view.summary
    if s:
        st.markdown(
            T(
                s["words"],
                shape=shape_words(s["shape"], words),
                best=s["best"],
                best_ms=s["best_ms"],
                naive_ms=s["naive_ms"],
                speedup=s["ratio"],
                naive_mem=human_bytes(s["naive_bytes"]),
                best_mem=human_bytes(s["best_bytes"]),
                diff=s["diff"],
            )
        )


def availability(T, avail: list[dict]) -> None:
    st.markdown(f"*{T('availability')}*")
    ui.table(  # its reasons are sentences
        {
            T("col_backend"): [a["backend"] for a in avail],
            T("col_available"): [T("yes") if a["available"] else T("no") for a in avail],
            T("col_reason"): [
                T(sb.REASON_KEYS[a["reason"]]) if a["reason"] in sb.REASON_KEYS else a["reason"] or "" for a in avail
            ],  # fmt: skip
        },
        wrap=True,
        hide_index=True,
    )


def committed(T) -> None:
    results = sb.load_results()
    if results is None:
        st.info(T("no_results"))
    for device, run in (results or {}).items():
        st.markdown(f"**{T('committed', device=device)}**")
        if isinstance(run, str):
            st.info(T("not_measured", device=device, why=run))
            continue
        availability(T, run.get("availability", []))
        view = shared.view(backends_view, run["rows"])  # keyed on the rows: a changed file makes a new view
        show(T, view, f"sdpa-{device}-committed", f"fig-sdpa-{device}", kept=True)
        meta = {f: run.get(f, "?") for f in ("date", "device_name", "torch")}
        st.caption(
            T(
                "meta",
                command=run["command"],
                **meta,
                threads=run.get("torch_threads", "?"),
                load_before=run.get("loadavg_1min_before", "?"),
                load_after=run.get("loadavg_1min_after", "?"),
                cpus=run.get("cpu_count", "?"),
                how=T(view.memory_method_key) if view.memory_method_key else view.memory_method or "?",
            )
        )
        if run.get("device") == "cuda":
            st.caption(T("gpu_meta", cuda=run.get("cuda_version", "?"), readme=f"results/{GPU_RUNS_DIR}/README.md"))
    compared = devices_compared(results)
    if compared is not None:
        c, g = compared.cpu_best, compared.gpu_best
        words = ui.texts("sdpa_gqa.figure")
        st.markdown(
            T(
                "gpu_beside",
                cpu=compared.cpu_name,
                gpu=compared.gpu_name,
                cpu_n=len(compared.cpu_backends),
                gpu_n=len(compared.gpu_backends),
                cpu_list=", ".join(compared.cpu_backends),
                gpu_list=", ".join(compared.gpu_backends),
                cpu_best=c["best"],
                cpu_shape=shape_words(c["shape"], words),
                cpu_x=c["speedup"],
                gpu_best=g["best"],
                gpu_shape=shape_words(g["shape"], words),
                gpu_x=g["speedup"],
            )
            + (" " + T("gpu_only_best", best=g["best"]) if compared.gpu_only_best else "")
        )


def live(T) -> None:
    with st.expander(T("live"), expanded=False):
        st.markdown(T("live_intro", heads=LIVE_HEADS, d=LIVE_D, budget=LIVE_BUDGET_S))
        c1, c2 = st.columns(2)
        with c1:
            n = ui.field(STATE["sd_n"], T("sd_n"))
        with c2:
            causal = ui.field(STATE["sd_causal"], T("sd_causal"))
        if st.button(T("run"), key="run-sdpa"):
            job = ("sdpa_live", n, causal, LIVE_HEADS, LIVE_D, LIVE_BUDGET_S)
            st.session_state["_sdpa_live"] = live_run(
                T, job, lambda report: sdpa_live_run(n, causal, LIVE_HEADS, LIVE_D, LIVE_BUDGET_S, report)
            )
        run = st.session_state.get("_sdpa_live")
        if run:
            availability(T, run["availability"])
            show(T, backends_view(run["rows"]), "sdpa-cpu-live", "fig-sdpa-live")
            live_meta(T)


def part(T) -> None:
    st.header(T("h_backends"))
    st.markdown(T("backends"))
    committed(T)
    live(T)
