"""Furniture of every measured part (timings, evaluations run live or read from results/): number cells, the
caption that says on which machine a live run ran, and a progress bar. Words come from the page's own section
(`live_meta`, `running`)."""

from __future__ import annotations

import streamlit as st

from core.timing import machine_info


def number(x, spec: str) -> str:
    """A table cell: the number formatted, or '–' when it was not measured."""
    return "–" if x is None else format(x, spec)


def live_meta(T, device: str = "cpu") -> None:
    """The caption under a live run: device, torch, threads, load now (format fields the page's `live_meta` uses)."""
    info = machine_info(device)
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


def progress_bar(T) -> tuple:
    """(bar, progress(fraction, label=None)): the fraction clamped to [0, 1], the label shown as the page's
    `running` text. bar.empty() removes it when the run is done."""
    bar = st.progress(0.0)

    def progress(frac: float, label: str | None = None) -> None:
        text = None if label is None else T("running", label=label)
        bar.progress(min(1.0, max(0.0, float(frac))), text=text)

    return bar, progress
