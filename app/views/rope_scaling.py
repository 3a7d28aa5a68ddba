"""Scaled RoPE: what linear, dynamic NTK, YaRN, LongRoPE and llama3 scaling do to each frequency (computed by
transformers' own RoPE code), and what they do to SmolLM2's loss past its 8,192-token training context."""

import numpy as np
import streamlit as st
import torch

from app import models, ui
from app import rope_figures as figs
from core import long_context
from core import rope_scaling as rs
from viz.positions import curves

FACTORS = ["2", "4", "8", "16", "32"]
DISTANCES = ["16384", "32768", "65536", "131072"]
LIVE_SIZES = ["256", "512", "1024", "2048"]
LIVE_METHODS = ["linear", "dynamic", "yarn"]
LIVE_BUCKET = 128
ORIGINAL = rs.SMOLLM2_ROPE["original_context"]


@st.cache_data(show_spinner=False, max_entries=16)
def _methods(factor: float, seq_len: int):
    return figs.method_rows(factor, seq_len)


@st.cache_data(show_spinner=False, max_entries=16)
def _decay(factor: float, max_distance: int):
    return figs.decay_envelopes(factor, max_distance)


@st.cache_data(show_spinner=False)
def _resolution():
    return figs.resolution()


def _live(model, n: int, method: str, factor: float) -> list[dict]:
    """Plain RoPE and one scaled run on the first n tokens of the long text, with a progress bar. Results are kept
    in the session (a rerun of the page shows them again without recomputing)."""
    store = st.session_state.setdefault("_rope_live_runs", {})
    key = (n, method, factor)
    if key not in store:
        ids = torch.tensor(model.tokenizer(long_context.load_long_text())["input_ids"][:n])
        bar = st.progress(0.0)

        def progress(frac, label):
            bar.progress(min(1.0, max(0.0, frac)), text=T("running", label=label))

        store[key] = long_context.evaluate_scaling(
            model.model,
            ids,
            [("default", 1.0), (method, factor)],
            bucket=LIVE_BUCKET,
            original_context=ORIGINAL,
            progress=progress,
        )
        bar.empty()
    return store[key]


def formulas(T) -> None:
    st.markdown(T("methods"))
    c1, c2 = st.columns(2)
    with c1:
        factor = float(ui.select("factor", T("factor"), FACTORS, "4"))
    with c2:
        maxd = int(ui.select("maxd", T("maxd"), DISTANCES, "131072", format_func=lambda v: f"{int(v):,}"))
    rows = _methods(factor, maxd)
    pairs = np.arange(len(rows[0]["ratio"]))
    c1, c2 = st.columns(2)
    with c1:
        ui.show_figure(
            figs.wavelength_figure(rows, T),
            f"rope-wavelengths-s{factor:g}",
            data={"pair": pairs, **{r["method"]: r["wavelength"] for r in rows}},
            key="fig-wl",
        )
    with c2:
        ui.show_figure(
            figs.ratio_figure(rows, factor, T),
            f"rope-interpolation-s{factor:g}",
            data={"pair": pairs, **{r["method"]: r["ratio"] for r in rows}},
            key="fig-ratio",
        )
    st.dataframe(
        {
            T("col_method"): [r["method"] for r in rows],
            T("col_kept"): [r["kept"] for r in rows],
            T("col_interp"): [r["interpolated"] for r in rows],
            T("col_between"): [r["between"] for r in rows],
            T("col_att"): [round(r["attention_factor"], 4) for r in rows],
        },
        hide_index=True,
    )
    st.caption(T("wl_note"))

    decay = _decay(factor, maxd)
    ui.show_figure(
        figs.decay_figure(decay, T),
        f"rope-qk-decay-s{factor:g}",
        data={
            "distance_from": decay["default"]["start"],
            "distance_to": decay["default"]["end"],
            **{f"{m}_mean": e["mean"] for m, e in decay.items()},
        },
        key="fig-decay",
    )
    st.caption(T("decay_note", maxd=maxd, bins=len(decay["default"]["mean"])))

    st.subheader(T("res_title"))
    measure = ui.select(
        "measure",
        T("measure"),
        ["fastest_pair", "slowest_pair", "vector"],
        "fastest_pair",
        format_func=lambda v: T(f"measure_{v}"),
        radio=True,
        horizontal=True,
    )
    res = _resolution()
    ui.show_figure(
        figs.resolution_figure(res, measure, T),
        f"rope-resolution-{measure}",
        data={"factor": figs.RES_FACTORS, **{m: v[measure] for m, v in res.items()}},
        key="fig-res",
    )
    k = int(np.argmin(np.abs(figs.RES_FACTORS - factor)))
    st.info(
        T(
            "res_result",
            s=figs.RES_FACTORS[k],
            lin=res["linear"]["fastest_pair"][k],
            base=res["default"]["fastest_pair"][k],
            yarn=res["yarn"]["fastest_pair"][k],
        )
    )


def loss_figure(T, runs: list[dict], bucket: int, title: str, name: str, key: str) -> None:
    x = {r["label"]: long_context.bucket_midpoints(r) for r in runs}
    fig = curves(
        None,
        {r["label"]: np.asarray(r["mean_loss"]) for r in runs},
        x_per_series=x,
        title=title,
        x_title=T("position"),
        y_title=T("loss"),
        markers=True,
        vlines=[(ORIGINAL, "L₀")] if max(max(r["end"]) for r in runs) >= ORIGINAL else None,
        height=460,
    )
    data = {
        "bucket_start": runs[0]["start"],
        "bucket_end": runs[0]["end"],
        **{r["label"]: r["mean_loss"] for r in runs},
    }
    ui.show_figure(fig, name, data=data, key=key)


def experiment(T) -> None:
    st.subheader(T("experiment"))
    st.markdown(T("exp_intro"))
    by_length = {n: r for n, r in long_context.results_by_length().items() if r["runs"]}
    if not by_length:
        st.info(T("no_results"))
    else:
        lengths = [str(n) for n in by_length]
        chosen = (
            ui.select(
                "exp_n",
                T("exp_n"),
                lengths,
                lengths[-1],
                format_func=lambda v: T("n_tokens", n=int(v)),
                radio=True,
                horizontal=True,
            )
            if len(lengths) > 1
            else lengths[0]
        )
        res = by_length[int(chosen)]
        missing = long_context.missing_runs(res)
        if missing:
            st.warning(
                T("partial", k=len(res["runs"]), total=len(long_context.STANDARD_RUNS), missing=", ".join(missing))
            )
        factors = sorted({f"{r['factor']:g}" for r in res["runs"] if r["method"] != "default"}, key=float)
        pick = ui.select(
            "exp_factor",
            T("exp_factor"),
            ["all"] + factors,
            "all",
            format_func=lambda v: T("all") if v == "all" else f"s = {v}",
            radio=True,
            horizontal=True,
        )
        runs = [r for r in res["runs"] if pick == "all" or r["method"] == "default" or f"{r['factor']:g}" == pick]
        loss_figure(T, runs, res["bucket"], T("loss_title", b=res["bucket"]), "long-context-loss", "fig-loss")
        st.dataframe(
            {
                T("col_run"): [r["label"] for r in runs],
                T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
                T("col_beyond"): [
                    None if r["mean_loss_beyond_context"] is None else round(r["mean_loss_beyond_context"], 3)
                    for r in runs
                ],
                T("col_seconds"): [r["seconds"] for r in runs],
            },
            hide_index=True,
        )
        beyond = [r for r in res["runs"] if r["mean_loss_beyond_context"] is not None]
        none = next((r for r in beyond if r["method"] == "default"), None)
        if beyond and none is not None:
            best = min(beyond, key=lambda r: r["mean_loss_beyond_context"])
            in_best = min(res["runs"], key=lambda r: r["mean_loss_within_context"])
            st.info(
                T(
                    "exp_best",
                    best=best["label"],
                    best_loss=best["mean_loss_beyond_context"],
                    none_loss=none["mean_loss_beyond_context"],
                    in_best=in_best["label"],
                    in_loss=in_best["mean_loss_within_context"],
                )
            )
        with st.expander(T("exp_meta")):
            st.markdown(
                T(
                    "meta_text",
                    command=res.get("command", "?"),
                    date=res.get("date", "?"),
                    device=res.get("device", "?"),
                    torch=res.get("torch", "?"),
                    tf=res.get("transformers", "?"),
                    model=res.get("model", "?"),
                    weights=res.get("weights_note", ""),
                    path=res["text"]["path"],
                    n=res["n_tokens"],
                    avail=res["text"]["tokens_available"],
                )
            )

    st.subheader(T("live"))
    st.caption(T("live_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = int(ui.select("live_n", T("live_n"), LIVE_SIZES, "512"))
    with c2:
        method = ui.select("live_method", T("live_method"), LIVE_METHODS, "linear")
    with c3:
        factor = float(ui.select("live_factor", T("live_factor"), ["2", "4", "8"], "4"))
    runs = st.session_state.get("_rope_live_runs", {}).get((n, method, factor))
    if st.button(T("run"), key="live-run"):
        model = models.load("smollm2")
        if model is not None:
            runs = _live(model, n, method, factor)
    if runs:
        loss_figure(T, runs, LIVE_BUCKET, T("live_title", b=LIVE_BUCKET), f"live-loss-{method}-{factor:g}", "fig-live")
        st.dataframe(
            {
                T("col_run"): [r["label"] for r in runs],
                T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
                T("col_seconds"): [r["seconds"] for r in runs],
            },
            hide_index=True,
        )


def page() -> None:
    global T
    T = ui.page_setup("rope_scaling")
    st.title(T("title"))
    st.markdown(T("intro"))
    formulas(T)
    experiment(T)
    ui.page_end()
