"""Head detectors: five attention patterns (previous token, duplicate token, induction, first-token sink, local
window) scored on every head of MiniLM and SmolLM2 over repeated random-token sequences. The committed map comes
from scripts/head_detectors.py (results/head_detectors.json); a small version can be recomputed live."""

import streamlit as st

from app import models, ui
from core import head_detectors as hd
from viz import head_detectors as figures

PRETRAINED = ("minilm", "smollm2")
TOP = 8


def provenance(T, data: dict, entry: dict) -> None:
    device = data["device"]
    st.caption(T("provenance", command=data["command"], date=data["date"], device=device.get("device_name", "?"),
                 threads=data.get("torch_threads", "?"), seconds=entry["seconds"],
                 load=entry.get("load_average", "?")))  # fmt: skip


def show_map(T, found: hd.DetectorMap, detector: str, key: str) -> None:
    name = T(f"name_{detector}")
    fig = figures.detector_grid(
        found.scores[detector], found.uniform[detector], name, ui.texts("head_detectors.figure")
    )
    ui.show_figure(fig, f"{key}-{detector}", data=found.scores[detector].numpy(), key=f"fig-{detector}")
    top = found.top(detector, TOP)
    st.markdown(T("top_heads", k=len(top), detector=name))
    st.dataframe(
        {T("col_layer"): [a for a, _, _ in top], T("col_head"): [b for _, b, _ in top],
         T("col_score"): [round(s, 3) for _, _, s in top]},
        hide_index=True,
    )  # fmt: skip
    best = top[0][2] if top else 0.0
    uniform = found.uniform[detector]
    st.markdown(T("finding_strong" if best >= max(0.5, 5 * uniform) else "finding_weak", detector=name, best=best,
                  uniform=uniform))  # fmt: skip


def page() -> None:
    T = ui.page_setup("head_detectors")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(options=PRETRAINED)
    detector = ui.select("detector", T("detector"), hd.DETECTORS, "induction", format_func=lambda d: T(f"name_{d}"))
    st.info(T(f"define_{detector}", w=hd.WINDOW))
    live = ui.checkbox("live", T("live"), False, help=T("live_help"))
    if live:
        s = hd.LIVE_SETTINGS
        st.markdown(T("live_note", b=s["n_sequences"], t=s["half_length"], seed=s["seed"]))
        if models.load(key) is not None:
            with st.spinner(T("computing")):
                found = models.detector_map(key, s["n_sequences"], s["half_length"], s["seed"])
            st.caption(T("live_seconds", seconds=found.seconds))
            show_map(T, found, detector, key)
    else:
        data = hd.load_results()
        entry = None if data is None else data["models"].get(key)
        if entry is None:
            st.warning(T("missing"))
        else:
            found = hd.from_json(entry)
            st.markdown(T("committed_note", b=found.settings["n_sequences"], t=found.settings["half_length"],
                          seed=found.settings["seed"]))  # fmt: skip
            provenance(T, data, entry)
            show_map(T, found, detector, key)
    st.markdown(T("next"))
    ui.page_end()
