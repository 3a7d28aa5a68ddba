"""What the measured parts of /linear-attention share: live-run limits, the results file, and its caption (number
cells, the live caption and the progress bar are app/measured.py)."""

import streamlit as st

LIVE_MIN = 256
LIVE_DEADLINE_S = 120  # no size starts after this, nor a mode that its last time says would overrun it
LIVE_BUDGET_S = 2.0  # one measurement stops repeating after this long
RESULTS_FILE = "results/bench_linear.json"


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
