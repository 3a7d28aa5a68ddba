"""A small encoder-decoder trained in this repo (English -> Japanese / Korean) translating the user's sentence step
by step: the encoder's self-attention, the decoder's masked self-attention and cross-attention at every step, the
next-token probabilities, teacher forcing beside free generation (steps.py); the stack with its shapes
(stack.py); and whether cross-attention heads align words, measured on held-out pairs (alignment.py). The steps
part's model picker also offers a learner's own encoder-decoder folder (own.py)."""

import streamlit as st

from app import models, ui
from core.encoder_decoder import grammar
from core.encoder_decoder import state as ed_state
from core.encoder_decoder import view as edv
from core.models import registry

from .alignment import alignment_part
from .own import own_part
from .stack import stack_part
from .steps import steps_part

F = ed_state.STATE  # the page's link, declared in core


def use_example() -> None:
    """The example picker fills the text box (before the widget is drawn, so its value can still change)."""
    choice = st.session_state.get("ed_example")
    if choice and choice != "own":
        st.session_state["text"] = choice


def vocabulary(T) -> None:
    with st.expander(T("vocabulary")):
        for group, words in edv.vocabulary_groups().items():
            st.markdown(f"**{T('group_' + group)}**: " + ", ".join(f"`{w}`" for w in words))
        st.caption(T("vocab_note"))


def sentence_inputs(T) -> tuple[str, str]:
    examples = edv.example_sentences()
    ui.pick(T("example"), ["own", *examples], key="ed_example", on_change=use_example,
            format_func=lambda s: T("own") if s == "own" else s)  # fmt: skip
    text = ui.field(F["text"], T("text"), height=70)
    language = ui.field(F["target"], T("target"), widget="radio", format_func=lambda c: T("lang_" + c), horizontal=True)
    vocabulary(T)
    return text, language


def say_unknown(T, run: edv.SentenceRun) -> None:
    """Unknown words named as code (never rendered as markup), at most edv.MAX_NAMED_UNKNOWN of them."""
    if run.truncated:
        st.info(T("cut", n=edv.MAX_SOURCE_WORDS))
    if run.unknown_words:
        words, more = run.named_unknown
        named = ", ".join("`" + w.replace("`", "'")[:40] + "`" for w in words)
        st.warning(T("unknown", words=named + (T("unknown_more", n=more) if more else "")))


def page() -> None:
    T = ui.page_setup("encoder_decoder")
    st.title(T("title"))
    words, forms = grammar.english_word_counts()
    st.markdown(T("intro", words=words, forms=forms))
    part = ui.field(F["part"], T("part"), widget="radio", format_func=lambda p: T(f"part_{p}"), horizontal=True)
    shipped = registry.ENCODER_DECODER  # the steps part also takes a learner's encoder-decoder folder (own.py)
    steps = part == "steps"
    key = (
        models.pick_model(options=(shipped,), needs=models.PAGE_NEEDS["encoder-decoder"], field=F["model"])
        if steps
        else shipped
    )
    if part == "alignment":
        alignment_part(T)
    elif key != shipped:
        own_part(T, key)
    else:
        text, language = sentence_inputs(T)
        loaded = models.load(shipped)
        if loaded is None:
            pass
        elif not text.strip():
            st.info(T("empty"))
        else:
            run = models.computed(shipped, edv.run_sentence, text, language)
            say_unknown(T, run)
            (steps_part if part == "steps" else stack_part)(T, run, loaded[0].config)
    ui.page_end()
