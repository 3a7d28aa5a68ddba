"""/antecedents, part one: the reader's sentence, its pronoun and candidates, the heads ranked live."""

from types import SimpleNamespace

import streamlit as st

from app import models, ui
from core import antecedents as ante
from core.antecedents import view as data
from core.antecedents.state import STATE as F
from core.antecedents.state import Sentence
from viz import antecedents as figures


def use_example() -> None:
    choice = st.session_state.get("ante_example")
    if choice and choice != "own":
        st.session_state["text"] = choice


def md(word: str) -> str:
    """A word of the reader's text inside markdown: '_' and '*' would start emphasis."""
    return word.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def weights_phrase(T, weights, names) -> str:
    return ", ".join(T("on", w=float(w), c=md(c)) for w, c in zip(weights, names))


def pick_words(T, sentence: Sentence) -> tuple[int, list[int], bool]:
    """The pronoun and candidates (widgets); and whether they are the stored sentence's own."""
    words, info = sentence.words, sentence.stored
    if info:
        st.caption(T("stored", answer=info["answer"]))

    def word(i) -> str:
        return f"{words[int(i)].text} ({T('word_n', i=int(i))})"

    p = int(ui.field(F["pron"], T("pronoun"), sentence, format_func=word))
    offered = sentence.candidates(p)
    if not info or str(p) != sentence.default_pronoun:
        st.caption(T("heuristic"))
    chosen = ui.pick_many(
        T("candidates"),
        [str(i) for i in range(p)],
        default=[str(c) for c in offered],
        format_func=word,
        key=f"cands-{hash(sentence.text)}-{p}",
        slot="cands",
    )
    cands = sorted(int(c) for c in chosen)
    return p, cands, sentence.is_stored_choice(p, cands)


def ranking_figure(analysis, sentence: Sentence, p: int, cands: list[int], by: int, top: int):
    """(ranked heads, their figure, its table) of the heads ranked by their weight from pronoun `p` on candidate
    `by` (a lesson step draws the same)."""
    names = [sentence.words[c].text for c in cands]
    ranked = data.ranking(analysis, by, top)
    fig = figures.ranking_figure(ranked, ui.texts("antecedents.figure"), pronoun=sentence.words[p].text, by=by)
    table = {"layer": [r[0] for r in ranked.heads[:top]], "head": [r[1] for r in ranked.heads[:top]]}
    table |= {n: ranked.shown[:, i] for i, n in enumerate(names)}
    return ranked, fig, table


def try_sentence(T, key: str, model) -> None:
    st.header(T("try"))
    stored = data.builtin_sentences()
    ui.pick(
        T("example"),
        ["own", *stored],
        key="ante_example",
        on_change=use_example,
        format_func=lambda s: T("own") if s == "own" else f"{stored[s]['pair']}: {s}",
    )
    text = ui.field(F["text"], T("text"))
    sentence = Sentence(text)
    if not text.strip() or not sentence.pronouns:
        st.info(T("no_pronoun", words=", ".join(ante.PRONOUNS)))
        return
    p, cands, as_stored = pick_words(T, sentence)
    if not cands:
        st.info(T("no_candidates"))
        return
    words, info = sentence.words, sentence.stored
    analysis = ante.measure(model, models.run(key, model, [text]), p, cands)
    if analysis is None:
        st.info(T("cut"))
        return
    names = [words[c].text for c in cands]
    c1, c2 = st.columns([3, 1])
    with c1:
        by = int(ui.field(F["rank"], T("rank_by"), SimpleNamespace(rank_options=tuple(map(str, range(len(cands))))),
                          format_func=lambda i: names[int(i)]))  # fmt: skip
    with c2:
        top = ui.field(F["top"], T("top"), widget="number")
    ranked, fig, table = ranking_figure(analysis, sentence, p, cands, by, top)
    ui.show_figure(fig, "antecedent-heads", data=table, key="fig-ranking")
    l, h = ranked.best
    st.markdown(T("top_head", c=md(names[by]), l=l, h=h, weights=weights_phrase(T, ranked.shown[0], names)))
    if as_stored and info["other"]:
        other = data.partner(model, info, ranked.best, ranked.shown[0], names)
        weights = weights_phrase(T, other.weights, names)
        st.markdown(T("partner", sentence=other.sentence, answer=other.answer, weights=weights))
        st.markdown(T("stays", c=md(other.picked)) if other.outcome == "stays" else T(other.outcome))
    stored_result = (data.load_results() or {"models": {}})["models"].get(key)
    if stored_result is not None:  # the same head on the held-out pairs, against the first-noun baseline
        held = data.head_on_held_out(stored_result, l, h)
        lo, hi = held.interval
        said = T("top_head_held_out", l=l, h=h, right=held.right, n=held.n, acc=held.accuracy, lo=lo, hi=hi)
        st.markdown(f"{said} {T('verdict_' + held.verdict)}")
