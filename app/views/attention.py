"""Look inside a real pretrained model: every head at once, one head large, one token across heads, and
aggregates (mean over heads, rollout, entropy)."""

import numpy as np
import streamlit as st

from app import attention_figures as figs
from app import models, ui
from core import views
from core.antecedents import PRONOUNS

DEFAULT_TEXT = "The cat sat on the mat because it was tired."
VIEWS = ("grid", "head", "token", "aggregate")
AGGREGATES = ("mean", "rollout", "entropy")


def open_head_view() -> None:
    st.session_state["view"] = "head"


def fig_tr(key: str, /, **fmt) -> str:
    return ui.t("attention.figure", key, **fmt)


def window_start(trace, hide: bool) -> int | None:
    """For texts longer than the full-resolution limit: None (block means) or the window's first token."""
    m = len(figs.token_labels(trace, 0, hide)[0])
    if m <= figs.FULL_RES_MAX or not ui.checkbox("win", T("window")):
        return None
    return ui.number("from", T("window_from"), 0, m - figs.FULL_RES_MAX, 0)


def default_query(positions: list[int], tokens: list[str]) -> int:
    """The first pronoun (where attention to an antecedent is interesting), else the middle token."""
    for p in positions:
        if tokens[p].strip().lower() in PRONOUNS:
            return p
    return positions[len(positions) // 2]


def show_gqa(model, trace, head: int) -> None:
    if trace.n_kv_heads == trace.n_heads:
        return
    groups = model.kv_groups()
    k = trace.kv_head(head)
    st.info(
        T(
            "gqa",
            H=trace.n_heads,
            K=trace.n_kv_heads,
            h=head,
            k=k,
            group=", ".join(str(g) for g in groups[k] if g != head),
        )
    )
    st.caption(" · ".join(T("gqa_groups", k=i, group=", ".join(map(str, g))) for i, g in enumerate(groups)))


def page() -> None:
    global T, head, hide, key, model, p, positions, trace
    T = ui.page_setup("attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model()
    model = models.load(key)
    if model is not None:
        text = ui.text_area("text", T("text"), DEFAULT_TEXT)
        if not text.strip():
            st.info(ui.t("models", "empty"))
        else:
            trace = models.run(key, model, [text])
            view = ui.select("view", T("view"), VIEWS, "grid", format_func=T, radio=True, horizontal=True)
            hide = ui.checkbox("nospecial", T("hide_special"))
            if hide:
                st.caption(T("hidden_note") if bool(trace.batch.special[0].any()) else T("no_special"))
            c1, c2 = st.columns(2)
            with c1:
                layer = ui.number("layer", T("layer"), 0, trace.n_layers - 1, trace.n_layers - 1)
            with c2:
                head = ui.number("head", T("head_n"), 0, trace.n_heads - 1, 0)

            if view == "grid":
                st.caption(T("grid_help"))
                fig = figs.grid_figure(trace, hide_special=hide, highlight=(layer, head), tr=fig_tr)
                ui.show_figure(fig, "all-heads", key="fig-grid")
                st.button(T("open", l=layer, h=head), on_click=open_head_view)
            elif view == "head":
                show_gqa(model, trace, head)
                fig, (w, labels) = figs.head_figure(
                    trace, layer, head, hide_special=hide, window=window_start(trace, hide), tr=fig_tr
                )
                ui.show_figure(
                    fig, f"layer{layer}-head{head}", data=w, row_labels=labels, col_labels=labels, key="fig-head"
                )
            elif view == "token":
                shown, labels = figs.token_labels(trace, 0, hide)
                positions = [int(p) for p in shown]
                label_of = dict(zip(positions, labels))
                options = [str(p) for p in positions]
                q = ui.select(
                    "token",
                    T("query"),
                    options,
                    str(default_query(positions, trace.batch.tokens[0])),
                    format_func=lambda p: label_of[int(p)],
                )
                fig, (w, rows, cols) = figs.token_figure(trace, int(q), hide_special=hide, tr=fig_tr)
                ui.show_figure(fig, f"token{q}", data=w, row_labels=rows, col_labels=cols, key="fig-token")
            else:
                kind = ui.select(
                    "agg", T("aggregate_kind"), AGGREGATES, "mean", format_func=T, radio=True, horizontal=True
                )
                fig, (w, rows, cols) = figs.aggregate_figure(
                    trace,
                    kind,
                    layer,
                    hide_special=hide,
                    window=None if kind == "entropy" else window_start(trace, hide),
                    tr=fig_tr,
                )
                ui.show_figure(fig, kind, data=w, row_labels=rows, col_labels=cols, key="fig-aggregate")
                if kind == "rollout":
                    st.caption(T("rollout_note"))
                if kind == "entropy":
                    lo, hi = np.unravel_index(np.argmin(w), w.shape), np.unravel_index(np.argmax(w), w.shape)
                    st.markdown(
                        T(
                            "entropy_extremes",
                            l0=lo[0],
                            h0=lo[1],
                            e0=float(w[lo]),
                            l1=hi[0],
                            h1=hi[1],
                            e1=float(w[hi]),
                            u=views.uniform_entropy(trace, 0, hide),
                        )
                    )
    ui.page_end()
