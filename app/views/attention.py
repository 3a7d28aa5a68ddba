"""Look inside a real pretrained model: every head at once, one head large, one token across heads, and
aggregates (mean over heads, rollout, entropy). Data from core/attention.py, figures from viz/attention.py."""

import functools
from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core import attention
from core.head_detectors import detector_scores_for
from viz import attention as figures
from viz.grid import tile_of_point

F = attention.STATE  # the page's link, declared in core


def open_head_view() -> None:
    st.session_state["view"] = "head"


def open_clicked_tile(n_layers: int, n_heads: int) -> None:
    """A click on a tile of the model view: open that head in the head view (runs before the rerun, so it may
    still set the layer and head widgets)."""
    points = st.session_state["fig-grid"].selection.points
    # a browser sends a list of points; a crafted click anything
    tile = tile_of_point(points[0], n_layers, n_heads) if isinstance(points, list) and points else None
    if tile is not None:
        st.session_state["layer"], st.session_state["head"] = tile
        st.session_state["view"] = "head"


def window_start(T, tokens: attention.Tokens) -> int | None:
    """For texts longer than the full-resolution limit: None (block means) or the window's first token."""
    last = attention.last_window_start(tokens)
    if last is None or not ui.field(F["win"], T("window")):
        return None
    return ui.field(F["from"], T("window_from"), SimpleNamespace(last_window_start=last), widget="number")


def show_gqa(T, model, trace, head: int) -> None:
    if not trace.grouped:
        return
    groups, k = model.kv_groups(), trace.kv_head(head)
    others = ", ".join(str(g) for g in groups[k] if g != head)
    st.info(T("gqa", H=trace.n_heads, K=trace.n_kv_heads, h=head, k=k, group=others))
    st.caption(" · ".join(T("gqa_groups", k=i, group=", ".join(map(str, g))) for i, g in enumerate(groups)))


def grid(T, trace, tokens, layer: int, head: int) -> None:
    st.caption(T("grid_help"))
    view = attention.grid_view(trace, tokens, highlight=(layer, head))
    fig = figures.figure(view, ui.texts("attention.figure"))
    # The callback keeps two ints, not the trace: Streamlit keeps a chart's callback for the session (app/serving.py).
    select = functools.partial(open_clicked_tile, trace.n_layers, trace.n_heads)
    labels = {"row_labels": view.labels, "col_labels": view.labels}  # the text alternative names a tile's cells
    ui.show_figure(fig, "all-heads", key="fig-grid", on_select=select, **labels)
    st.button(T("open", l=layer, h=head), on_click=open_head_view)


def detector_caption(T, key: str, layer: int, head: int) -> None:
    """What the committed head detectors (/head-detectors) measured for this head, when the model has a map."""
    scores = detector_scores_for(key, layer, head)
    if scores:
        parts = [T("detector", name=ui.t("head_detectors", f"name_{d}"), score=v["score"], rank=v["rank"],
                   even=v["uniform"]) for d, v in scores.items()]  # fmt: skip
        st.caption(T("detectors", scores=" · ".join(parts)))


def head_view(T, key, model, trace, tokens, layer: int, head: int) -> None:
    show_gqa(T, model, trace, head)
    detector_caption(T, key, layer, head)
    view = attention.head_view(trace, tokens, layer, head, window=window_start(T, tokens))
    fig = figures.figure(view, ui.texts("attention.figure"))
    labels = view.labels
    ui.show_figure(
        fig, f"layer{layer}-head{head}", data=view.weights, row_labels=labels, col_labels=labels, key="fig-head"
    )
    if view.pooled is not None:
        st.caption(T("pooled_note", n=attention.FULL_RES_MAX))


def token_view(T, trace, tokens) -> None:
    label_of = dict(zip((str(p) for p in tokens.positions.tolist()), tokens.labels))
    shown = SimpleNamespace(token_options=tuple(label_of), default_token=str(attention.default_query(trace, tokens)))
    q = ui.field(F["token"], T("query"), shown, format_func=label_of.get)
    view = attention.token_view(trace, tokens, int(q))
    fig = figures.figure(view, ui.texts("attention.figure"))
    data, rows, cols = view.weights, view.head_labels, view.labels
    ui.show_figure(fig, f"token{q}", data=data, row_labels=rows, col_labels=cols, key="fig-token")


def aggregate_view(T, trace, tokens, layer: int) -> None:
    kind = ui.field(F["agg"], T("aggregate_kind"), widget="radio", format_func=T, horizontal=True)
    if kind == "entropy":
        view = attention.entropy_view(trace, tokens)
        data, rows, cols = view.entropy, view.row_labels, view.col_labels
    else:
        view = attention.AGGREGATES[kind](trace, tokens, layer, window=window_start(T, tokens))
        data, rows, cols = view.weights, view.labels, view.labels
    fig = figures.figure(view, ui.texts("attention.figure"))
    ui.show_figure(fig, kind, data=data, row_labels=rows, col_labels=cols, key="fig-aggregate")
    if getattr(view, "pooled", None) is not None:
        st.caption(T("pooled_note", n=attention.FULL_RES_MAX))
    if kind == "rollout":
        st.caption(T("rollout_note"))
    if kind == "entropy":
        (l0, h0, e0), (l1, h1, e1) = view.focused, view.spread
        st.markdown(T("entropy_extremes", l0=l0, h0=h0, e0=e0, l1=l1, h1=h1, e1=e1, u=view.uniform))


def page() -> None:
    T = ui.page_setup("attention")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(options=attention.SHIPPED_MODELS, field=F["model"], needs=models.PAGE_NEEDS["attention"])
    model = models.load(key)
    if model is not None:
        text = ui.field(F["text"], T("text"))
        if not text.strip():
            st.info(ui.t("models", "empty"))
        else:
            trace = models.run(key, model, [text])
            view = ui.field(F["view"], T("view"), widget="radio", format_func=T, horizontal=True)
            hide = ui.field(F["nospecial"], T("hide_special"))
            tokens = attention.select_tokens(trace, 0, hide)  # once per run: every view below uses it
            if hide:
                st.caption(T("hidden_note") if tokens.has_special else T("no_special"))
            c1, c2 = st.columns(2)
            with c1:
                layer = ui.field(F["layer"], T("layer"), trace, widget="number")
            with c2:
                head = ui.field(F["head"], T("head_n"), trace, widget="number")
            if view == "grid":
                grid(T, trace, tokens, layer, head)
            elif view == "head":
                head_view(T, key, model, trace, tokens, layer, head)
            elif view == "token":
                token_view(T, trace, tokens)
            else:
                aggregate_view(T, trace, tokens, layer)
    ui.page_end()
