"""Antecedent heads: which heads point a pronoun at which noun, and a held-out test of whether any head
(or SmolLM2's own answer) resolves the pronoun or just follows the first-mentioned noun."""

import hashlib
import json
from pathlib import Path

import numpy as np
import streamlit as st

from app import models, ui
from core import antecedents as ante
from viz.bars import accuracy_bars, head_ranking_bars
from viz.heatmap import matrix_heatmap

PRETRAINED = ("minilm", "smollm2")

RESULTS = Path(__file__).resolve().parents[2] / "results" / "antecedents.json"
DEFAULT_TEXT = "The cat sat on the mat because it was tired."
PAGE_TOKENS = 512


@st.cache_data(show_spinner=False)
def builtin_sentences() -> dict[str, dict]:
    """Every stored sentence by its text: pair id, pronoun, candidates, answer, and the pair's other sentence."""
    data = ante.load_pairs()
    out = {}
    for group in (data["examples"], data["pairs"]):
        for pair in group:
            for k, s in enumerate(pair["sentences"]):
                other = pair["sentences"][1 - k] if len(pair["sentences"]) == 2 else None
                out[s["text"]] = {
                    "pair": pair["id"],
                    "pronoun": pair["pronoun"],
                    "candidates": pair["candidates"],
                    "answer": s["answer"],
                    "other": other,
                }
    return out


def load_results() -> dict | None:
    try:
        return json.loads(RESULTS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def use_example() -> None:
    choice = st.session_state.get("ante_example")
    if choice and choice != "own":
        st.session_state["text"] = choice


def md(word: str) -> str:
    """A word of the reader's text inside markdown: '_' and '*' would start emphasis."""
    return word.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def weights_phrase(weights, names) -> str:
    return ", ".join(T("on", w=float(w), c=md(c)) for w, c in zip(weights, names))


def try_sentence(key: str, model) -> None:
    st.subheader(T("try"))
    stored = builtin_sentences()
    st.selectbox(
        T("example"),
        ["own", *stored],
        key="ante_example",
        on_change=use_example,
        format_func=lambda s: T("own") if s == "own" else f"{stored[s]['pair']}: {s}",
    )
    text = ui.text_area("text", T("text"), DEFAULT_TEXT)
    words = ante.split_words(text)
    pronouns = ante.find_pronouns(words)
    if not text.strip() or not pronouns:
        st.info(T("no_pronoun", words=", ".join(ante.PRONOUNS)))
        return
    info = stored.get(text)
    default_p = None
    if info:
        _, default_p, default_c = ante.locate(text, info["pronoun"], info["candidates"])
        st.caption(T("stored", answer=info["answer"]))
    else:
        default_p = next((p for p in pronouns if ante.find_candidates(text, words, p)), pronouns[0])
    options = [str(p) for p in pronouns]
    p = int(
        ui.select(
            "pron",
            T("pronoun"),
            options,
            str(default_p),
            format_func=lambda i: f"{words[int(i)].text} ({T('word_n', i=int(i))})",
        )
    )
    if not info or p != default_p:
        default_c = ante.find_candidates(text, words, p)
        st.caption(T("heuristic"))
    before = [str(i) for i in range(p)]
    chosen = st.multiselect(
        T("candidates"),
        before,
        default=[str(c) for c in default_c],
        format_func=lambda i: f"{words[int(i)].text} ({T('word_n', i=int(i))})",
        key=f"cands-{hash(text)}-{p}",
    )
    cands = sorted(int(c) for c in chosen)
    if not cands:
        st.info(T("no_candidates"))
        return
    trace = models.run(key, model, [text], PAGE_TOKENS)
    analysis = ante.measure(model, trace, p, cands)
    if analysis is None:
        st.info(T("cut"))
        return
    names = [words[c].text for c in cands]
    c1, c2 = st.columns([3, 1])
    with c1:
        by = int(
            ui.select(
                "rank", T("rank_by"), [str(i) for i in range(len(cands))], "0", format_func=lambda i: names[int(i)]
            )
        )
    with c2:
        top = ui.number("top", T("top"), 1, 30, 10)
    ranking = ante.rank_heads(analysis.weights, by)
    shown = ranking[:top]
    w = np.array([[float(analysis.weights[l, h, c]) for c in range(len(cands))] for l, h, _ in shown])
    fig = head_ranking_bars(
        [f"L{l} H{h}" for l, h, _ in shown],
        w,
        names,
        title=T("ranking_title", p=words[p].text, c=names[by], n=len(ranking)),
        x_title=T("weight_axis"),
    )
    ui.show_figure(
        fig,
        "antecedent-heads",
        data={
            "layer": [r[0] for r in shown],
            "head": [r[1] for r in shown],
            **{n: w[:, i] for i, n in enumerate(names)},
        },
        key="fig-ranking",
    )
    l, h, _ = ranking[0]
    st.markdown(T("top_head", c=md(names[by]), l=l, h=h, weights=weights_phrase(w[0], names)))
    if info and info["other"] and p == default_p and cands == default_c:
        other = info["other"]
        other_w = ante.measure_sentence(model, other["text"], info["pronoun"], info["candidates"])[l, h]
        st.markdown(
            T(
                "partner",
                sentence=other["text"],
                answer=other["answer"],
                weights=weights_phrase(other_w.tolist(), names),
            )
        )
        pick_here, pick_there = int(np.argmax(w[0])), int(other_w.argmax())
        if pick_here == pick_there:
            st.markdown(T("stays", c=md(names[pick_here])))
        elif names[pick_here] == info["answer"]:
            st.markdown(T("switches"))
        else:
            st.markdown(T("wrong_way"))


def show_results(res: dict, name: str) -> None:
    held, sel = res["halves"]["held_out"], res["halves"]["selection"]
    l, h = res["best_head"]
    lo, hi = held["head_interval"]
    st.markdown(
        T(
            "head_finding",
            name=name,
            l=l,
            h=h,
            sel=sel["head_accuracy"],
            acc=held["head_accuracy"],
            n=held["n_sentences"],
            lo=lo,
            hi=hi,
            first=held["head_first_mentioned_share"],
            switch=held.get("best_head_switch_share", float("nan")),
        )
    )
    st.markdown(T("verdict_chance") if lo <= 0.5 <= hi else T("verdict_above") if lo > 0.5 else T("verdict_below"))
    total = res["n_layers"] * res["n_heads"]
    if res.get("is_causal") and held.get("heads_that_ever_switch") == 0 and sel.get("heads_that_ever_switch") == 0:
        st.markdown(T("never_switch", name=name, k=total))
    elif "heads_that_ever_switch" in held:
        st.markdown(T("some_switch", name=name, k=held["heads_that_ever_switch"], total=total))
    if "choice_accuracy" in held:
        clo, chi = held["choice_interval"]
        st.markdown(
            T(
                "choice_finding",
                name=name,
                acc=held["choice_accuracy"],
                lo=clo,
                hi=chi,
                first=held["choice_first_mentioned_share"],
            )
        )


def evaluation(key: str, model) -> None:
    data = ante.load_pairs()
    st.subheader(T("eval", n=len(data["pairs"])))
    st.markdown(T("eval_how"))
    results = load_results()
    if results is None:
        st.info(T("no_results"))
    else:
        st.caption(T("provenance", command=results["command"], date=results["date"], device=results["device"]))
        if results.get("pairs_sha256") != hashlib.sha256(ante.PAIRS_PATH.read_bytes()).hexdigest():
            st.warning(T("stale"))
        labels, acc, low, high = [], [], [], []
        n_held = 0
        for k, res in results["models"].items():
            name = models.model_name(k).split(":")[0] if k in models.MODEL_KEYS else res["model"]
            held = res["halves"]["held_out"]
            n_held = held["n_sentences"]
            labels.append(T("bar_head", name=name, l=res["best_head"][0], h=res["best_head"][1]))
            acc.append(held["head_accuracy"])
            low.append(held["head_interval"][0])
            high.append(held["head_interval"][1])
            if "choice_accuracy" in held:
                labels.append(T("bar_choice", name=name))
                acc.append(held["choice_accuracy"])
                low.append(held["choice_interval"][0])
                high.append(held["choice_interval"][1])
        if labels:
            fig = accuracy_bars(
                labels, acc, low, high, title=T("bars_title", n=n_held), x_title=T("acc_axis"), chance_label=T("chance")
            )
            ui.show_figure(
                fig,
                "antecedent-accuracy",
                data={"": labels, "accuracy": acc, "low": low, "high": high},
                key="fig-accuracy",
            )
        for k, res in results["models"].items():
            show_results(res, models.model_name(k).split(":")[0] if k in models.MODEL_KEYS else res["model"])
        res = results["models"].get(key)
        name = models.model_name(key).split(":")[0]
        if res is None:
            st.info(T("not_in_file"))
        else:
            acc_map = np.array(res["per_head"]["held_out"]["accuracy"])
            fig = matrix_heatmap(
                acc_map,
                [str(i) for i in range(acc_map.shape[0])],
                [str(j) for j in range(acc_map.shape[1])],
                title=T("per_head_title", name=name),
                x_title=T("head"),
                y_title=T("layer"),
                colorscale="RdBu",
                zmid=0.5,
                value_name=T("accuracy"),
            )
            ui.show_figure(fig, f"antecedent-per-head-{key}", data=acc_map, key="fig-per-head")
            with st.expander(T("sentences", name=name)):
                st.dataframe(res["sentences"])
    name = models.model_name(key).split(":")[0]
    if model is not None and st.button(T("recompute", name=name)):
        bar = st.progress(0.0)
        live = ante.evaluate(model, data["pairs"], progress=bar.progress)
        st.subheader(T("recomputed"))
        show_results(live, name)
        res = (results or {}).get("models", {}).get(key)
        if res is not None and len(res["sentences"]) == len(live["sentences"]):
            d = max(
                abs(a - b)
                for r0, r1 in zip(res["sentences"], live["sentences"])
                for a, b in zip(r0["best_head_weights"], r1["best_head_weights"])
            )
            st.caption(T("matches", d=d, same=T("same") if res["best_head"] == live["best_head"] else T("different")))


def page() -> None:
    global T, key, model
    T = ui.page_setup("antecedents")
    st.title(T("title"))
    st.markdown(T("intro"))
    key = models.pick_model(options=PRETRAINED)  # the tiny MoE knows ~270 words: no pronoun test for it
    model = models.load(key)
    if model is not None:
        try_sentence(key, model)
    evaluation(key, model)  # the stored results need no model; only the live recompute does
    ui.page_end()
