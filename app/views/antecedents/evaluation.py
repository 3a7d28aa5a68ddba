"""/antecedents, part two: the stored held-out evaluation (results/antecedents.json) and its live recompute."""

import streamlit as st

from app import measured, models, ui
from core import antecedents as ante
from core.antecedents import view as data
from viz import antecedents as figures


def name_of(key: str, res: dict) -> str:
    return models.short_name(key) if key in models.MODEL_KEYS else res["model"]


def show_results(T, res: dict, name: str) -> None:
    held, sel = res["halves"]["held_out"], res["halves"]["selection"]
    l, h = res["best_head"]
    lo, hi = held["head_interval"]
    switch = held.get("best_head_switch_share", float("nan"))
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
            switch=switch,
        )
    )
    st.markdown(T("verdict_" + data.verdict(res)))
    total = data.head_count(res)
    if data.never_switches(res):
        st.markdown(T("never_switch", name=name, k=total))
    elif "heads_that_ever_switch" in held:
        st.markdown(T("some_switch", name=name, k=held["heads_that_ever_switch"], total=total))
    if "choice_accuracy" in held:
        clo, chi = held["choice_interval"]
        first = held["choice_first_mentioned_share"]
        st.markdown(T("choice_finding", name=name, acc=held["choice_accuracy"], lo=clo, hi=chi, first=first))


def accuracy_figure(results: dict):
    """(figure, table) of the stored held-out accuracies with their intervals against the baseline, or None when
    the file has none (a lesson step draws the same)."""
    bars, n_held = data.accuracy_bars(results)
    if not bars:
        return None
    names = {b.model: name_of(b.model, results["models"][b.model]) for b in bars}
    words = ui.texts("antecedents.figure")
    labels = figures.bar_labels(bars, names, words)
    table = {"": labels, "accuracy": [b.accuracy for b in bars], "low": [b.low for b in bars]}
    table["high"] = [b.high for b in bars]
    return figures.accuracy_figure(bars, words, labels, n_held), table


def per_head_figure(key: str, res: dict):
    """(figure, per-head accuracies) of model `key`'s stored result `res` (a lesson step draws the same)."""
    acc_map = data.per_head_accuracy(res)
    return figures.per_head_figure(acc_map, ui.texts("antecedents.figure"), models.short_name(key)), acc_map


def stored(T, key: str, results: dict) -> None:
    st.caption(T("provenance", command=results["command"], date=results["date"], device=measured.device_line(results)))
    if not data.results_are_fresh(results):
        st.warning(T("stale"))
    accuracy = accuracy_figure(results)
    if accuracy is not None:
        ui.show_figure(accuracy[0], "antecedent-accuracy", data=accuracy[1], key="fig-accuracy",
                       along={"accuracy": "x", "low": "x", "high": "x"})  # fmt: skip
    for k, res in results["models"].items():
        show_results(T, res, name_of(k, res))
    res = results["models"].get(key)
    if res is None:
        st.info(T("not_in_file"))
        return
    name = models.short_name(key)
    fig, acc_map = per_head_figure(key, res)
    layers, heads = data.grid_labels(acc_map)
    ui.show_figure(fig, f"antecedent-per-head-{key}", data=acc_map, row_labels=layers, col_labels=heads,
                   key="fig-per-head")  # fmt: skip
    with st.expander(T("sentences", name=name)):
        table = data.sentences_table(res)
        table["half"] = [T(f"half_{h}") for h in table["half"]]
        ui.table({T(f"col_{k}"): column for k, column in table.items()}, hide_index=True)


def evaluation(T, key: str, model) -> None:
    pairs = ante.load_pairs()["pairs"]
    st.header(T("eval", n=len(pairs)))
    st.markdown(T("eval_how"))
    results = data.load_results()
    if results is None:
        st.info(T("no_results"))
    else:
        stored(T, key, results)
    name = models.name_in_text(key)  # the button and the findings are markdown: a folder's name escaped
    if model is not None and st.button(T("recompute", name=name)):
        words = lambda label: T("running", label=label)  # noqa: E731
        live = models.computed(key, ante.evaluate_shipped_pairs, queue="antecedent_eval", progress=words)
        st.header(T("recomputed"))
        show_results(T, live, name)
        d = data.largest_difference((results or {}).get("models", {}).get(key), live)
        if d is not None:
            same = T("same") if data.same_best_head(results["models"][key], live) else T("different")
            st.caption(T("matches", d=d, same=same))
