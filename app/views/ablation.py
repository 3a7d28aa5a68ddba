"""Ablation claim cards: remove the heads a claim is about (induction, previous-token, antecedent heads) inside
SmolLM2 and measure the held-out metric the claim is about, against a placebo of as many random heads from the same
layers. Part `cards`: the committed cards (scripts/ablation.py -> results/ablation.json); part `live`: any
number of heads, zero or mean ablation, seeded placebo draws, recomputed on a smaller evaluation set. Each card is
one core.ablation.CardView, verdict included."""

import streamlit as st

from app import models, ui
from core import ablation as ab
from viz import ablation as figures

F = ab.STATE  # the page's link, declared in core


def show_card(T, view: ab.CardView) -> None:
    st.header(T(f"claim_{view.claim}"))
    if view.status == "no_heads":
        st.info(T("no_heads"))
        return
    if view.status == "no_candidates":
        c = view.candidates
        st.info(T(f"no_candidates_{c['reason']}", model=view.model, n=c["n"], best=c["best"]))
        return
    st.markdown(T("heads_line", k=len(view.heads), heads=view.heads_text, mode=T(f"mode_{view.mode}"),
                  score=T(f"score_{view.claim}", s=view.score)))  # fmt: skip
    st.markdown(T(f"effect_{view.metric}", clean=view.clean, after=view.after, harm=view.harm))
    if view.intervals:
        (lo, hi), (lo2, hi2) = view.intervals
        st.caption(T("accuracy_intervals", lo=lo, hi=hi, lo2=lo2, hi2=hi2, n=view.n))
    if view.placebo_harms:
        lo, hi = view.placebo_interval
        st.markdown(T(f"placebo_line_{view.metric}", n=len(view.placebo_harms), mean=view.placebo_mean, lo=lo, hi=hi))
    (st.success if view.strong else st.info)(T(f"verdict_{view.verdict}"))
    for note in view.notes:
        st.warning(T(f"note_{note}"))
    ui.show_figure(figures.claim_figure(view, ui.texts("ablation.figure")), f"ablation-{view.key}",
                   data={"placebo_harm": list(view.placebo_harms)}, along={"placebo_harm": "x"},
                   key=f"fig-{view.claim}")  # fmt: skip


def cards_part(T) -> None:
    cards = ab.committed_cards()
    if cards is None:
        st.warning(T("missing"))
        return
    choice = ui.field(F["card"], T("card"), format_func=lambda c: T("card_name", claim=T(f"claim_{cards[c].claim}"),
                                                                  mode=T(f"mode_{cards[c].mode}")))  # fmt: skip
    view = cards[choice]
    st.caption(T("provenance", **view.provenance))
    show_card(T, view)


def live_part(T) -> None:
    c1, c2 = st.columns(2)
    with c1:
        claim = ui.field(F["claim"], T("claim"), format_func=lambda c: T(f"claim_{c}"))
        mode = ui.field(F["mode"], T("mode"), format_func=lambda m: T(f"mode_{m}"))
    key = models.pick_model(options=ab.LIVE_MODELS, needs=models.PAGE_NEEDS["ablation"], field=F["model"])
    model = models.load(key)
    if model is None:
        return
    with c2:
        k = ui.field(F["k"], T("k"), model)
        draws = ui.field(F["draws"], T("draws"))
        seed = ui.field(F["seed"], T("seed"), widget="number")
    if k == 0:
        st.info(T("no_heads"))
        return
    s = ab.LIVE_EVAL_SETTINGS
    st.caption(T("live_note", b=s["n_sequences"], t=s["half_length"], seed=s["seed"]) if claim != "antecedent"
               else T("live_note_antecedent"))  # fmt: skip
    try:
        with st.spinner(T("computing", model=models.name_in_text(key), runs=ab.forward_runs(draws))):
            card = models.computed(
                key, ab.live_card, key, claim, k, mode, draws, seed, tuple(s.values()), queue="claim_card"
            )
    except ValueError as err:
        st.warning(T("cannot", reason=str(err)))
        return
    view = ab.card_view(card, key)
    if view.status == "tested":
        st.caption(T("live_seconds", seconds=card.seconds, runs=ab.forward_runs(draws)))
    show_card(T, view)


def page() -> None:
    T = ui.page_setup("ablation")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.field(F["part"], T("part"), widget="radio", format_func=lambda p: T(f"part_{p}"), horizontal=True)
    (cards_part if part == "cards" else live_part)(T)
    st.markdown(T("method"))
    ui.page_end()
