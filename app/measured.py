"""Furniture of every measured part (timings, evaluations run live or read from results/): number cells, the
caption that says on which machine a live run ran, and a live run through the server's heavy-work queue with its
progress bar. Words come from the page's own section (`live_meta`, `running`)."""

from __future__ import annotations

import streamlit as st

from app import serving, ui
from core.results import device_of
from core.timing import machine_info


def number(x, spec: str) -> str:
    """A table cell: the number formatted, or '–' when it was not measured."""
    return "–" if x is None else format(x, spec)


def device_line(res: dict) -> str:
    """The machine a results file (or run) was measured on, in the reader's words ([common] device_*): kind and name,
    then cores, torch's threads and version where the file records them. A line no reader of core.results.device_of
    understands is shown as the file has it (the file's own text: data)."""
    device = device_of(res)
    if device is None:
        return str(res.get("device", "?"))
    parts = [ui.t("common", f"device_{device.kind}", name=device.name or device.kind)]
    if device.cores is not None:
        parts.append(ui.t("common", "device_cores", cores=device.cores))
    if device.threads is not None:
        parts.append(ui.t("common", "device_threads", threads=device.threads))
    if device.torch is not None:
        parts.append(ui.t("common", "device_torch", torch=device.torch))
    return ui.t("common", "device_join").join(parts)


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


def live_run(T, key: tuple, work):
    """work(report) through the server's heavy-work queue (app/serving.heavy): one live run at a time per process
    (a timing measured beside another one would measure the contention), identical runs computed once, at most
    one waiting run per visitor and kind. The page shows its place in line, then the run's progress bar, whose
    label is the page's `running` text; report(fraction, label=None). key[0] is the kind of run, the rest names
    every setting the result depends on."""
    return serving.heavy(key, work, key[0], progress=lambda label: T("running", label=label))
