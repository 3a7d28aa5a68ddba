"""Ablation claim cards: remove the heads a claim is about (induction, previous-token, antecedent heads) inside
SmolLM2 and measure the held-out metric the claim is about, against a placebo of as many random heads from the same
layers. Part `cards`: the committed cards (scripts/ablation.py -> results/ablation.json); part `live`: any
number of heads, zero or mean ablation, seeded placebo draws, recomputed on a smaller evaluation set."""

import streamlit as st

from app import models, ui
from core import ablation as ab
from viz import ablation as figures

MODEL = "smollm2"
PARTS = ("cards", "live")
MAX_LIVE_DRAWS = 10


def heads_text(heads) -> str:
    return ", ".join(f"L{a}H{b}" for a, b in heads)


def show_card(T, card: dict) -> None:
    metric, claim = card["metric"], card["claim"]
    st.subheader(T(f"claim_{claim}"))
    if "no_heads" in card["notes"]:
        st.info(T("no_heads"))
        return
    st.markdown(T("heads_line", k=len(card["heads"]), heads=heads_text(card["heads"]), mode=T(f"mode_{card['mode']}"),
                  score=T(f"score_{claim}", s=card["detector_score"])))  # fmt: skip
    st.markdown(T(f"effect_{metric}", clean=card["clean"]["value"], after=card["ablated"]["value"],
                  harm=card["harm"]))  # fmt: skip
    if card.get("clean_interval"):
        (lo, hi), (lo2, hi2) = card["clean_interval"], card["ablated_interval"]
        st.caption(T("accuracy_intervals", lo=lo, hi=hi, lo2=lo2, hi2=hi2, n=card["clean"]["n"]))
    if card["placebo_harms"]:
        lo, hi = card["placebo_interval"]
        st.markdown(T(f"placebo_line_{metric}", n=len(card["placebo_harms"]), mean=card["placebo_mean"], lo=lo, hi=hi))
    verdict = T(f"verdict_{card['verdict']}")
    (st.success if card["verdict"] == "far_more" else st.info)(verdict)
    for note in card["notes"]:
        st.warning(T(f"note_{note}"))
    ui.show_figure(figures.claim_figure(card, ui.texts("ablation.figure")), f"ablation-{claim}-{card['mode']}",
                   data={"placebo_harm": card["placebo_harms"]}, key=f"fig-{claim}")  # fmt: skip


def cards_part(T) -> None:
    data = ab.load_results()
    if data is None:
        st.warning(T("missing"))
        return
    cards = {f"{c['claim']}-{c['mode']}": c for c in data["cards"]}
    choice = ui.select("card", T("card"), list(cards), next(iter(cards)),
                       format_func=lambda c: T("card_name", claim=T(f"claim_{cards[c]['claim']}"),
                                               mode=T(f"mode_{cards[c]['mode']}")))  # fmt: skip
    card = cards[choice]
    device = data["device"]
    st.caption(T("provenance", command=card.get("command", data["command"]), date=device.get("date", data["date"]),
                 device=device.get("device_name", "?"), seconds=card["seconds"], draws=card["draws"],
                 load=card.get("load_average", "?")))  # fmt: skip
    show_card(T, card)


def live_part(T) -> None:
    c1, c2 = st.columns(2)
    with c1:
        claim = ui.select("claim", T("claim"), ab.CLAIMS, "induction", format_func=lambda c: T(f"claim_{c}"))
        mode = ui.select("mode", T("mode"), ab.MODES, "zero", format_func=lambda m: T(f"mode_{m}"))
    model = models.load(MODEL)
    if model is None:
        return
    total = model.n_layers * model.n_heads
    with c2:
        k = ui.slider("k", T("k"), 0, total, ab.DEFAULT_HEADS)
        draws = ui.slider("draws", T("draws"), 1, MAX_LIVE_DRAWS, 5)
        seed = ui.number("seed", T("seed"), 0, 9999, ab.DEFAULT_SEED)
    if k == 0:
        st.info(T("no_heads"))
        return
    s = ab.LIVE_EVAL_SETTINGS
    st.caption(T("live_note", b=s["n_sequences"], t=s["half_length"], seed=s["seed"]) if claim != "antecedent"
               else T("live_note_antecedent"))  # fmt: skip
    try:
        with st.spinner(T("computing", runs=draws + 2)):
            card = models.claim_card(MODEL, claim, k, mode, draws, seed, tuple(s.values()))
    except ValueError as err:
        st.warning(T("cannot", reason=str(err)))
        return
    st.caption(T("live_seconds", seconds=card.seconds, runs=draws + 2))
    show_card(T, card.to_json())


def page() -> None:
    T = ui.page_setup("ablation")
    st.title(T("title"))
    st.markdown(T("intro"))
    part = ui.select("part", T("part"), PARTS, "cards", format_func=lambda p: T(f"part_{p}"), radio=True,
                     horizontal=True)  # fmt: skip
    (cards_part if part == "cards" else live_part)(T)
    st.markdown(T("method"))
    ui.page_end()
