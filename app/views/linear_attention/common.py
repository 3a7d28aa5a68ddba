"""Furniture shared by the measured parts (time, generation): number cells, run captions, a progress bar."""

import streamlit as st

from core.timing import machine_info

LIVE_MIN = 256
LIVE_DEADLINE_S = 120  # no size starts after this, nor a mode that its last time says would overrun it
LIVE_BUDGET_S = 2.0  # one measurement stops repeating after this long
RESULTS_FILE = "results/bench_linear.json"


def number(x, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def results_meta(T, res: dict) -> None:
    fields = ("command", "date", "device", "device_name", "torch")
    st.caption(
        T(
            "meta",
            **{f: res.get(f, "?") for f in fields},
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
