"""Real pretrained models for the pages: loaded once per process (st.cache_resource), runs kept in a small
shared LRU, and a message in words, with the install command, when a weight package is missing, so every
other page keeps working."""
from __future__ import annotations

import dataclasses

import streamlit as st

from app import ui
from core.models import ModelUnavailable, registry
from core.views import padding_report as _padding_report
from core.views import token_count

MODEL_KEYS = ("minilm", "smollm2", "moe")
DEFAULT_MODEL = "minilm"          # the fast one: first loads and generic page tests stay quick
MAX_PAGE_TOKENS = 512             # what a page reads of a text (SmolLM2 itself reads 8,192)
RUN_CACHE_ENTRIES = 4             # traces hold q and k of every layer: keep only a few, shared by sessions

MODEL_TEXT = {
    "model": {"en": "Model", "ja": "モデル", "ko": "모델"},
    "minilm": {
        "en": "MiniLM-L6 (all-MiniLM-L6-v2): 6-layer encoder, 12 heads, sees the whole sentence",
        "ja": "MiniLM-L6 (all-MiniLM-L6-v2): 6 層のエンコーダ、12 ヘッド、文全体を見る",
        "ko": "MiniLM-L6 (all-MiniLM-L6-v2): 6층 인코더, 헤드 12개, 문장 전체를 봄",
    },
    "smollm2": {
        "en": "SmolLM2-135M-Instruct: 30-layer decoder, 9 query heads sharing 3 key/value heads (GQA), sees only "
              "earlier tokens",
        "ja": "SmolLM2-135M-Instruct: 30 層のデコーダ、9 個のクエリヘッドが 3 個のキー/バリューヘッドを共有 (GQA)、"
              "前のトークンだけを見る",
        "ko": "SmolLM2-135M-Instruct: 30층 디코더, 쿼리 헤드 9개가 키/값 헤드 3개를 공유(GQA), 앞쪽 토큰만 봄",
    },
    "moe": {
        "en": "tiny MoE (trained by this repo): 4-layer decoder, 4 query heads sharing 2 key/value heads, 8 experts; "
              "knows only ~270 words of simple English",
        "ja": "小さな MoE（このリポジトリで学習）: 4 層のデコーダ、4 個のクエリヘッドが 2 個のキー/バリューヘッドを共有、"
              "エキスパート 8 個。簡単な英語の約 270 語しか知らない",
        "ko": "작은 MoE(이 저장소에서 학습): 4층 디코더, 쿼리 헤드 4개가 키/값 헤드 2개를 공유, 전문가 8개. 쉬운 영어 "
              "약 270개 단어만 앎",
    },
    "missing": {
        "en": "{name} is not available here: {message}. The other models and pages keep working.",
        "ja": "{name} はここでは使えません: {message}。ほかのモデルとページはそのまま使えます。",
        "ko": "{name}을(를) 여기서 사용할 수 없습니다: {message}. 다른 모델과 페이지는 그대로 작동합니다.",
    },
    "loading": {"en": "Loading {name} (once per server)…", "ja": "{name} を読み込み中（サーバーごとに 1 回）…",
                "ko": "{name} 불러오는 중(서버당 한 번)…"},
    "weights": {"en": "Weights: {note}", "ja": "重み: {note}", "ko": "가중치: {note}"},
    "random": {
        "en": "This model has RANDOM weights (not trained): its patterns mean nothing about language.",
        "ja": "このモデルの重みはランダム（未学習）です。パターンは言語について何も意味しません。",
        "ko": "이 모델의 가중치는 무작위(학습되지 않음)입니다. 패턴은 언어에 대해 아무 의미가 없습니다.",
    },
    "truncated": {
        "en": "Your text has {n:,} tokens; {name} reads at most {limit:,} on this page; showing the first {limit:,}.",
        "ja": "入力は {n:,} トークンです。このページで {name} が読むのは最大 {limit:,} トークンなので、先頭の "
              "{limit:,} トークンを表示します。",
        "ko": "입력은 {n:,}개 토큰입니다. 이 페이지에서 {name}은(는) 최대 {limit:,}개 토큰만 읽으므로 앞의 "
              "{limit:,}개를 보여 줍니다.",
    },
    "empty": {"en": "Type a sentence to look inside the model.", "ja": "モデルの中を見るには文を入力してください。",
              "ko": "모델 내부를 보려면 문장을 입력하세요."},
}


def model_name(key: str) -> str:
    return ui.tr(MODEL_TEXT, key)


def pick_model(key: str = "model", options: tuple[str, ...] = MODEL_KEYS) -> str:
    """The model picker (bound to the URL), MiniLM first."""
    return ui.select(key, ui.tr(MODEL_TEXT, "model"), options, DEFAULT_MODEL, format_func=model_name)


@st.cache_resource(show_spinner=False, max_entries=len(MODEL_KEYS))   # one per model: bounded by design
def _load(key: str):
    return registry.LOADERS[key]()


def load(key: str):
    """The model, or None after telling the reader (in words, with the install command) why not."""
    message = registry.model_status().get(key)
    if message is None:
        try:
            with st.spinner(ui.tr(MODEL_TEXT, "loading", name=model_name(key).split(":")[0])):
                model = _load(key)
        except ModelUnavailable as err:
            message = str(err)
        else:
            if model.random_init:
                st.warning(ui.tr(MODEL_TEXT, "random"))
            if model.weights_note:
                st.caption(ui.tr(MODEL_TEXT, "weights", note=model.weights_note))
            return model
    st.error(ui.tr(MODEL_TEXT, "missing", name=model_name(key).split(":")[0], message=message))
    return None


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def _run(key: str, texts: tuple[str, ...], max_tokens: int):
    model = _load(key)
    trace = model.run(model.tokenize(list(texts), max_tokens))
    # The views need q and k only; hidden states and the vocabulary-sized logits would dominate memory.
    return dataclasses.replace(trace, hidden_states=[], logits=None)


def run(key: str, model, texts: list[str], max_tokens: int = MAX_PAGE_TOKENS):
    """A cached Trace of `texts` (shared by sessions, a few entries), with a notice for each text that was cut."""
    limit = min(max_tokens, model.max_positions)
    trace = _run(key, tuple(texts), limit)
    for text, cut in zip(texts, trace.batch.truncated):
        if cut:
            st.info(ui.tr(MODEL_TEXT, "truncated", n=token_count(model, text), limit=limit,
                          name=model_name(key).split(":")[0]))
    return trace


@st.cache_data(show_spinner=False, max_entries=16)
def padding_report(key: str, texts: tuple[str, ...], max_tokens: int) -> list[dict]:
    """core.views.padding_report for a batch the page already ran (cached: it runs every text alone once)."""
    return _padding_report(_load(key), _run(key, texts, max_tokens), max_tokens)
