"""Why a head attends: one head's scores before the softmax taken apart, exactly. RoPE decoders: by frequency band,
and with position or content removed; absolute positions (MiniLM's first layer): token and position terms.
Data from core/why_head.py, figures from viz/why_head.py."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core import why_head as wh
from viz import why_head as figures

F = wh.STATE  # the page's link, declared in core


def rope_part(T) -> None:
    key = models.pick_model(
        options=wh.SHIPPED["rope"], needs=models.PAGE_NEEDS["why-head/rope"], field=F["model"], part="rope"
    )
    model = models.load(key)
    if model is None:
        return
    text = ui.field(F["text"], T("text"), height=80)
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        layer = ui.field(F["layer"], T("layer"), model)
    with c2:
        head = ui.field(F["head"], T("head"), model)
    with c3:
        split = ui.field(F["split"], T("split"), format_func=lambda v: T(f"split_{v}"))
    with c4:
        n_bands = ui.field(F["bands"], T("bands")) if split == "equal" else None
    if not text.strip():
        st.info(T("empty"))
        return
    st.caption(T("reads", n=wh.MAX_TOKENS))
    parts = models.computed(key, wh.rope_parts_of, text, layer, split, n_bands, wh.MAX_TOKENS, queue="why_head")
    c1, c2 = st.columns(2)
    with c1:
        band = ui.field(F["band"], T("band"), SimpleNamespace(n_bands=len(parts.edges)))
    with c2:
        pattern = ui.field(F["pattern"], T("pattern"), format_func=lambda v: T(f"pattern_{v}"))
    view = wh.rope_view(parts, head, band, pattern)
    t = ui.texts("why_head.figure")

    st.header(T("bands_title"))
    st.markdown(T("bands_intro", fast=view.band_wavelengths[0][0], slow=view.band_wavelengths[-1][1]))
    ui.show_figure(figures.band_shares_figure(view, t), f"band-shares-l{layer}", data=view.shares,
                   row_labels=view.head_labels, col_labels=figures.band_names(view, t), key="fig-shares")  # fmt: skip
    st.markdown(T("carrier", h=head, band=figures.band_name(view, view.carrier, t), share=view.carrier_share))
    st.success(T("exact_bands", diff=view.max_diff))
    ui.show_figure(figures.band_figure(view, t), f"band{view.band}-l{layer}-h{head}", data=view.band_scores,
                   row_labels=view.labels, col_labels=view.labels, key="fig-band")  # fmt: skip

    st.header(T("counter_title"))
    st.markdown(T("counter_intro"))
    ui.show_figure(figures.pattern_figure(view, t), f"{pattern}-l{layer}-h{head}", data=view.weights,
                   row_labels=view.labels, col_labels=view.labels, key="fig-pattern")  # fmt: skip
    ui.show_figure(figures.kept_figure(view, t), f"kept-l{layer}", data=view.kept_table, key="fig-kept")
    st.markdown(T(f"verdict_{view.verdict}", h=head, **view.kept_here))
    st.caption(T("paper"))
    found = wh.committed_detector_heads(key)
    if found is not None:
        detector_heads(T, found)


def detector_heads(T, found: wh.DetectorHeadsView) -> None:
    """The committed measurement over held-out texts (scripts/why_head_bands.py) of the heads the detectors found."""
    st.header(T("detectors_title"))
    texts = T("detectors_texts", n=found.provenance["n_texts"], tokens=found.provenance["text_tokens"])
    st.markdown(T("detectors_intro", texts=texts))
    for g in found.groups:
        name = ui.t("head_detectors", f"name_{g.detector}")
        st.markdown(T(f"group_{g.verdict}", detector=name, heads=", ".join(g.heads), fastest=g.fastest_share,
                      all_fastest=found.all_fastest_share, wavelength=found.fastest_wavelength, slowest=g.slowest_share,
                      all_slowest=found.all_slowest_share, **g.kept))  # fmt: skip
    rows = dict(found.rows, detector=[ui.t("head_detectors", f"name_{d}") for d in found.rows["detector"]])
    st.dataframe({T(f"col_{k}"): v for k, v in rows.items()}, hide_index=True)
    st.markdown(T(f"paper_{found.paper}", all_fastest=found.all_fastest_share, all_slowest=found.all_slowest_share))
    st.caption(T("detectors_provenance", texts=texts, **found.provenance))


def absolute_part(T) -> None:
    key = models.pick_model(options=wh.SHIPPED["absolute"], needs=models.PAGE_NEEDS["why-head/absolute"], field=F["model"],
                            part="absolute")  # fmt: skip
    model = models.load(key)
    if model is None:
        return
    text = ui.field(F["text"], T("text"), height=80)
    c1, c2, c3 = st.columns(3)
    with c1:
        head = ui.field(F["head"], T("head"), model)
    with c2:
        where = ui.field(F["where"], T("where"), format_func=lambda v: T(f"where_{v}"))
    with c3:
        term = ui.field(F["term"], T("term"), format_func=lambda v: ui.t("why_head.figure", f"term_{v}"))
    if not text.strip():
        st.info(T("empty"))
        return
    st.info(T(f"norm_{where}"))
    st.caption(T("reads", n=wh.MAX_TOKENS))
    parts = models.computed(key, wh.absolute_parts_of, text, where, wh.MAX_TOKENS, queue="why_head")
    view = wh.absolute_view(parts, head, term)
    t = ui.texts("why_head.figure")
    ui.show_figure(figures.term_shares_figure(view, t), f"term-shares-{where}", data=view.shares,
                   row_labels=view.head_labels, col_labels=figures.term_names(t), key="fig-terms")  # fmt: skip
    st.markdown(T("largest", h=head, term=t(f"term_{view.largest}"), share=view.largest_share))
    st.success(T(f"exact_{where}", diff=view.max_diff, kept=view.kept))
    ui.show_figure(figures.term_figure(view, t), f"{term}-h{head}", data=view.term_scores,
                   row_labels=view.labels, col_labels=view.labels, key="fig-term")  # fmt: skip


def page() -> None:
    T = ui.page_setup("why_head")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.field(F["part"], T("part"), widget="radio", format_func=lambda v: T(f"part_{v}"), horizontal=True)
    if part == "rope":
        rope_part(T)
    else:
        absolute_part(T)
    st.markdown(T("next"))
    ui.page_end()
