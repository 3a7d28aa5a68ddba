"""The experiment part of /rope-scaling: SmolLM2's loss per position from the committed results files, and a
short live rerun."""

from types import SimpleNamespace

import streamlit as st

from app import measured, models, ui
from core import slips
from core.rope_scaling import experiment
from core.rope_scaling.state import STATE
from viz import rope_scaling as figures

LIVE_BUCKET = 128
LIVE_RUNS = "_rope_live_runs"  # session: {_kept_key(...): the live runs}


def _loss_data(runs: list[dict], words) -> dict:
    return {
        "bucket_start": runs[0]["start"],
        "bucket_end": runs[0]["end"],
        **{figures.run_name(r["label"], words): r["mean_loss"] for r in runs},
    }


def committed(T) -> None:
    choices = experiment.choices()
    if not choices:
        st.info(T("no_results"))
        return
    chosen = str(next(iter(choices)))
    if len(choices) > 1:
        chosen = ui.field(STATE["exp_n"], T("exp_n"), widget="radio", format_func=lambda v: T("n_tokens", n=int(v)),
                          horizontal=True)  # fmt: skip
    pick = ui.field(STATE["exp_factor"], T("exp_factor"), SimpleNamespace(exp_n=chosen), widget="radio",
                    format_func=lambda v: T("all") if v == "all" else f"s = {v}", horizontal=True)  # fmt: skip
    view = experiment.experiment_view(int(chosen), pick)
    res, runs = view.results, view.loss.runs
    words = ui.texts("rope_scaling.figure")
    if view.missing:
        total = len(experiment.STANDARD_RUNS)
        missing = ", ".join(figures.run_name(label, words) for label in view.missing)
        st.warning(T("partial", k=len(res["runs"]), total=total, missing=missing))
    fig = figures.loss_figure(view.loss, words, res["bucket"])
    ui.show_figure(fig, "long-context-loss", data=_loss_data(runs, words), key="fig-loss")
    st.dataframe(
        {
            T("col_run"): [figures.run_name(r["label"], words) for r in runs],
            T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
            T("col_beyond"): [
                None if r["mean_loss_beyond_context"] is None else round(r["mean_loss_beyond_context"], 3) for r in runs
            ],
            T("col_seconds"): [r["seconds"] for r in runs],
        },
        hide_index=True,
    )
    if view.best is not None:
        best = view.best | {
            k: figures.run_name(view.best[k], words) for k in ("best", "in_best", "linear") if k in view.best
        }
        st.info(T("exp_best", **best))
        if best.get("linear_hurts_within"):
            st.markdown(T("finetune_note", **best))
    unscaled = slips.rope_unscaled(runs, res.get("original_context", experiment.ORIGINAL_CONTEXT))
    if unscaled is not None:
        st.caption(T("slip_rope", **unscaled))
    with st.expander(T("exp_meta")):
        st.markdown(
            T(
                "meta_text",
                command=res.get("command", "?"),
                date=res.get("date", "?"),
                device=measured.device_line(res),
                tf=res.get("transformers", "?"),
                model=res.get("model", "?"),
                weights=models.weights_aside(view.weights),
                path=res["text"]["path"],
                n=res["n_tokens"],
                avail=res["text"]["tokens_available"],
            )
        )


def _kept_key(model_key: str, n: int, method: str, factor: float) -> tuple:
    """Where the session keeps a live run: the model's key and which load of it (models.kept_serial: 0 until loaded,
    another number once its folder is retrained or another model takes its key) and the run's settings."""
    return model_key, models.kept_serial(model_key), n, method, factor


def _live(model_key: str, n: int, method: str, factor: float, T) -> list[dict]:
    """Plain RoPE and one scaled run through the heavy-work queue, with a progress bar; kept in the session so a
    rerun shows them again (call models.load first: the runs are kept under the load that computed them)."""
    store = st.session_state.setdefault(LIVE_RUNS, {})
    key = _kept_key(model_key, n, method, factor)
    if key not in store:
        words = lambda label: T("running", label=label)  # noqa: E731
        asked = n, method, factor, LIVE_BUCKET
        store[key] = models.computed(model_key, experiment.live_runs, *asked, queue="rope_live", progress=words)
    return store[key]


def live(T) -> None:
    st.header(T("live"))
    st.caption(T("live_intro"))
    c1, c2, c3 = st.columns(3)
    with c1:
        n = ui.field(STATE["live_n"], T("live_n"))
    with c2:
        method = ui.field(STATE["live_method"], T("live_method"))
    with c3:
        factor = float(ui.field(STATE["live_factor"], T("live_factor")))
    # SmolLM2 first: the committed scaling experiment (results/) is about its RoPE (theta 100,000)
    key = models.pick_model(options=("smollm2",), needs=models.PAGE_NEEDS["rope-scaling"], field=STATE["model"])
    runs = st.session_state.get(LIVE_RUNS, {}).get(_kept_key(key, n, method, factor))
    if st.button(T("run"), key="live-run") and models.load(key) is not None:
        runs = _live(key, n, method, factor, T)
    if runs:
        words = ui.texts("rope_scaling.figure")
        fig = figures.loss_figure(experiment.loss_view(runs), words, LIVE_BUCKET, live=True)
        ui.show_figure(fig, f"live-loss-{method}-{factor:g}", data=_loss_data(runs, words), key="fig-live")
        st.dataframe(
            {
                T("col_run"): [figures.run_name(r["label"], words) for r in runs],
                T("col_within"): [round(r["mean_loss_within_context"], 3) for r in runs],
                T("col_seconds"): [r["seconds"] for r in runs],
            },
            hide_index=True,
        )


def part(T) -> None:
    st.header(T("experiment"))
    st.markdown(T("exp_intro"))
    committed(T)
    live(T)
