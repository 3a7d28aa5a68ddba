"""/long-maps, last part: how fast exact maps are, committed runs of benchmarks/bench_pooled.py on this machine's CPU
and on a GPU, each pooled path beside one SDPA forward of the same shape (core.long_maps.views)."""

import streamlit as st

from app import ui
from core.long_maps import views
from core.results import GPU_RUNS_DIR
from core.timing import human_bytes


def _table(T, timings: list[views.ExactMapsTiming]) -> None:
    ui.table(  # eight columns, their headers long in ja and ko: wrapped to the page's width
        {
            T("m_col_shape"): [
                f"H={t.heads} n={t.seq_len:,} d={t.head_dim} {t.dtype}" + (f" {T('m_causal')}" if t.causal else "")
                for t in timings
            ],
            T("m_col_path"): [t.path for t in timings],
            T("m_col_ms"): [f"{t.ms:,.1f}" for t in timings],
            T("m_col_sdpa"): [t.sdpa_path for t in timings],
            T("m_col_sdpa_ms"): [f"{t.sdpa_ms:,.1f}" for t in timings],
            T("m_col_ratio"): [f"{t.ratio:,.2f}×" for t in timings],
            T("m_col_memory"): [human_bytes(t.peak_bytes) for t in timings],
            T("m_col_check"): ["–" if t.check is None else f"{t.check:.1e}" for t in timings],
        },
        wrap=True,
        hide_index=True,
    )


def _gpu_targets(T, timings: list[views.ExactMapsTiming]) -> None:
    targets = views.gpu_targets(timings)
    if targets is None:
        return
    cases = "; ".join(
        T(
            "m_target_case",
            n=t.seq_len,
            causal=f" {T('m_causal')}" if t.causal else "",
            ms=t.ms,
            sdpa=t.sdpa_ms,
            x=t.ratio,
            target=t.target,
            verdict=T("m_met" if t.target_met else "m_not_met"),
        )
        for t in targets.aimed
    )
    st.markdown(
        T(
            "m_gpu_targets",
            cases=cases,
            memory=human_bytes(targets.most_bytes),
            memory_target=human_bytes(views.GPU_TARGET_BYTES),
            memory_verdict=T("m_met" if targets.memory_met else "m_not_met"),
        )
    )


def show(T) -> None:
    st.header(T("h_measured"))
    st.markdown(T("measured_intro"))
    runs = views.pooled_runs() or {}
    for device, run in runs.items():
        if isinstance(run, str):
            continue
        timings = views.exact_maps_timings(run)
        if not timings:
            continue
        st.markdown(f"**{T('m_device', device=run.get('device_name', device))}**")
        _table(T, timings)
        part = run.get("target") or run.get("sizes") or {}
        st.caption(
            T(
                "m_meta",
                command=part.get("command", "?"),
                date=str(part.get("date", "?"))[:10],
                device=run.get("device_name", device),
                torch=run.get("torch", "?"),
                load=part.get("loadavg_1min_before", "?"),
            )
        )
        if device == "cuda":
            st.caption(T("m_gpu_provenance", readme=f"results/{GPU_RUNS_DIR}/README.md"))
            _gpu_targets(T, timings)
