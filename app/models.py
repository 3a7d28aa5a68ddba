"""Real pretrained models for the pages: loaded once per process (core.models.registry.shared), runs kept in a small
shared LRU, and a message in words, with the install command, when a weight package is missing, so every
other page keeps working."""

from __future__ import annotations

import dataclasses
import re
import time
from types import SimpleNamespace

import streamlit as st

from app import serving, ui
from core import attention, long_maps, padded_batch
from core.models import ModelUnavailable, registry
from core.models.capabilities import Capabilities
from core.models.needs import (  # noqa: F401  (the pages ask for a need through this module)
    ATTENTION_CONTRACT,
    BERT_LAYER,
    DECODER,
    ENCODER_DECODER,
    EXACT_SOFTMAX,
    KV_DECODER,
    LEARNED_POSITIONS,
    MASKED_DECODER,
    PAGE_NEEDS,
    ROPE,
    ROPE_DECODER,
    Need,
)

MODEL_KEYS = attention.SHIPPED_MODELS
DEFAULT_MODEL = "minilm"  # the fast one: first loads and generic page tests stay quick
MAX_PAGE_TOKENS = attention.MAX_PAGE_TOKENS  # what a page reads of a text (SmolLM2 itself reads 8,192)
RUN_CACHE_ENTRIES = 4  # traces hold q and k of every layer: keep only a few, shared by sessions


# --- learners' folders: the operator's (registered for every visitor) and this visitor's own (this session's) ------

OWN_MODELS = "_own_models"  # session state: {key: registry.ModelRecord} of the folders this visitor added


def session_models() -> dict[str, registry.ModelRecord]:
    """The folders this visitor added on /models (a laptop run): kept in this session only, never registered for
    the process, written to a file or offered to another visitor."""
    return st.session_state.setdefault(OWN_MODELS, {})


def add_own_folder(path: str) -> str:
    """Describe a visitor's folder (under the allowed roots: core/models/local.py visitor_allowed) and keep it in
    this session; returns its key (the operator's key when the operator lists the same folder). Raises
    local.ModelFolderError (a ValueError) with one sentence."""
    from core.models import local

    own = registry.describe(path, allowed=local.visitor_allowed(), taken=registry.RECORDS, hashed=True)
    for key, record in registry.folders().items():
        if record.source == own.source:
            return key
    session_models()[own.key] = own
    return own.key


def _own(key: str) -> registry.ModelRecord | None:
    return session_models().get(key.removesuffix(registry.SEQ2SEQ_SUFFIX))


def capabilities(key: str) -> Capabilities | None:
    """What model `key` offers, known without loading it: this visitor's folder's, or the registry's."""
    own = _own(key)
    return own.capabilities if own is not None else registry.capabilities(key)


def is_own(key: str) -> bool:
    """A learner's folder (the operator's or this visitor's), not a shipped model."""
    return key in registry.folders() or _own(key) is not None


def _shared(key: str):
    """registry.shared for a registry key or this visitor's folder (its key or seq2seq key)."""
    return registry.shared(key, _own(key))


def model_name(key: str) -> str:
    """The picker's description of a model, in the reader's language (a learner's folder: from its
    capabilities)."""
    caps = capabilities(key) if is_own(key) else None
    if caps is None:
        return ui.t("models", key)
    return ui.t(
        "models",
        "own_model",
        name=short_name(key),
        kind=ui.t("models", f"kind_{caps.kind}" if caps.through_attention_interface else "kind_seq2seq_only"),
        layers=caps.n_layers,
        heads=caps.n_heads,
        kv=caps.n_kv_heads,
        positions=caps.positions.kind,
    )


def short_name(key: str) -> str:
    """The model's own name (the registry's title, or this visitor's folder's), the same in every language."""
    own = _own(key)
    return own.title if own is not None else registry.title(key)


_MARKDOWN_CHARACTERS = re.compile(r"([\\`*_\[\]<>$~|!#])")


def name_in_text(key: str) -> str:
    """short_name for a sentence drawn as markdown: its markdown characters escaped, so a learner's folder name is
    shown as typed (never as emphasis, a link or a formula)."""
    return _MARKDOWN_CHARACTERS.sub(r"\\\1", short_name(key))


def words_about(key: str, text: str) -> str:
    """A sentence from core about model `key` (why it cannot load, where its weights are from), for markdown: a
    learner's folder's (its path inside) escaped; a shipped model's kept as written (its install command in `code`)."""
    return _MARKDOWN_CHARACTERS.sub(r"\\\1", text) if is_own(key) else text


def pick_model(key: str = "model", options: tuple[str, ...] = MODEL_KEYS, needs=None, field=None, **known) -> str:
    """The model picker (bound to the URL): the page's shipped models first (the first is the default, so links and
    committed figures stay as they were), then the learner's own folders that the page can use: needs(capabilities)
    -> bool says which (None: any model the attention contract reads, ATTENTION_CONTRACT). A link naming a model
    the page cannot use gets a sentence saying what the page needs, and the default. `field`: the page's declared
    picker (core.state.model_choice), whose options are `offered` (`known`: other values its declaration reads)."""
    needs = ATTENTION_CONTRACT if needs is None else needs
    key = key if field is None else field.key
    offered = options + own_keys(needs)
    say_why_not_offered(key, offered, needs, options[0])
    if field is not None:
        c = SimpleNamespace(models=offered, **known)
        return ui.field(field, ui.t("models", "model"), c, format_func=model_name)
    return ui.select(key, ui.t("models", "model"), offered, options[0], format_func=model_name)


def say_why_not_offered(key: str, offered: tuple[str, ...], needs, default: str) -> None:
    """When the link's `key` parameter names a registered model outside `offered` (and the widget is not set yet):
    a warning that it is a shipped model this widget does not offer, or what it lacks (needs: a Need, or any test
    on its capabilities), and that `default` is shown instead. Names go in markdown-escaped."""
    asked = st.query_params.get(key)
    known = asked in registry.offered() or (asked is not None and _own(asked) is not None)
    if key in st.session_state or not known or asked in offered:
        return
    caps, name, shown = capabilities(asked), name_in_text(asked), name_in_text(default)
    if needs is not None and caps is not None and needs(caps):  # a shipped model this page does not offer
        st.warning(ui.t("models", "not_offered", name=name, default=shown))
    else:
        need = ui.t("models", f"need_{needs.word}") if isinstance(needs, Need) else ui.t("models", "need_other")
        st.warning(ui.t("models", "lacks", name=name, need=need, default=shown))


def own_keys(needs=None) -> tuple[str, ...]:
    """The learners' folders this visitor may pick (the operator's, then this visitor's own) that fit
    needs(capabilities) -> bool (None: all), in the order they were added."""
    folders = [*registry.folders().items(), *session_models().items()]
    return tuple(k for k, record in folders if needs is None or needs(record.capabilities))


def _load(key: str):
    """The process's one copy (core.models.registry.shared: the lessons' answers get the same object; shipped models
    kept, own folders bounded, a failed load tried again next time)."""
    return _shared(key)


def load(key: str):
    """The model, or None after telling the reader (in words, with the install command) why not."""
    message = registry.model_status().get(key)
    if message is None:
        try:
            with st.spinner(ui.t("models", "loading", name=name_in_text(key))):
                model = _load(key)
        except (ModelUnavailable, ValueError) as err:  # ValueError: a folder that turned out not to load
            message = str(err)
        else:
            if model.random_init:
                st.warning(ui.t("models", "random"))
            if model.weights_note:
                st.caption(ui.t("models", "weights", note=words_about(key, model.weights_note)))
            parity = getattr(model, "parity", None)
            if parity is not None:
                word = "parity_exact" if parity.exact else "parity_approximate"
                st.caption(ui.t("models", word, difference=parity.max_difference, layers=parity.layers))
            return model
    st.error(ui.t("models", "missing", name=name_in_text(key), message=words_about(key, message)))
    return None


def load_moe_checkpoints() -> dict:
    """{variant: MoEModel} of every shipped MoE checkpoint (balanced is the registry's "moe"; each one copy per
    process, shared with the lessons); raises ModelUnavailable when one is missing."""
    from core.models import moe_model

    return {v: registry.shared(registry.moe_key(v)) for v in moe_model.VARIANTS}


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def _run(key: str, serial: int, texts: tuple[str, ...], max_tokens: int):
    """serial: which load of the model (registry.serial): a model loaded anew never gets the old one's traces."""
    model = _load(key)
    trace = model.run(model.tokenize(list(texts), max_tokens))
    # The views need q and k only; hidden states and the vocabulary-sized logits would dominate memory.
    return dataclasses.replace(trace, hidden_states=[], logits=None)


def run(key: str, model, texts: list[str], max_tokens: int = MAX_PAGE_TOKENS):
    """A cached Trace of `texts` (shared by sessions, a few entries), with a notice for each text that was cut."""
    limit = min(max_tokens, model.max_positions)
    trace = _run(key, registry.serial(key), tuple(texts), limit)
    _say_cut(key, model, texts, trace.batch.truncated, limit)
    return trace


def _say_cut(key: str, model, texts, truncated: list[bool], limit: int) -> None:
    for text, cut in zip(texts, truncated):
        if cut:
            st.info(ui.t("models", "truncated", n=model.token_count(text), limit=limit, name=name_in_text(key)))


def run_batch(key: str, model, texts: list[str], max_tokens: int, side: str, masked: bool) -> padded_batch.BatchRun:
    """core.padded_batch.run_batch, cached like run (shared by sessions, a few entries), with the cut notices."""
    limit = min(max_tokens, model.max_positions)
    batch_run = _run_batch(key, registry.serial(key), tuple(texts), limit, side, masked)
    _say_cut(key, model, texts, batch_run.trace.batch.truncated, limit)
    return batch_run


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def _run_batch(key: str, serial: int, texts: tuple[str, ...], max_tokens: int, side: str, masked: bool):
    return padded_batch.run_batch(_load(key), list(texts), max_tokens, side, masked)


def padding_report(key: str, texts: tuple[str, ...], max_tokens: int, side: str, masked: bool) -> list[dict]:
    """core.padded_batch.padding_report for a batch the page already ran (cached: it runs every text alone once)."""
    return _padding_report_of(key, registry.serial(key), texts, max_tokens, side, masked)


@st.cache_data(show_spinner=False, max_entries=16)
def _padding_report_of(
    key: str, serial: int, texts: tuple[str, ...], max_tokens: int, side: str, masked: bool
) -> list[dict]:
    batch_run = _run_batch(key, serial, texts, max_tokens, side, masked)
    return padded_batch.padding_report(_load(key), batch_run.trace, max_tokens, batch_run.real)


def generate(key: str, ids: list[int], **options):
    """core.kv_cache.generate (token by token with the KV cache) on a loaded model, through the heavy-work queue
    (app/serving.py: computed once for every session asking the same, a few kept, read-only): the /kv-cache page's
    continuation for these prompt ids and settings."""
    from core import kv_cache

    model, ids = _load(key), list(ids)
    job = ("generate", key, registry.serial(key), tuple(ids), tuple(sorted(options.items())))
    return serving.heavy(job, lambda: kv_cache.generate(model, ids, **options), "generate")


# --- the encoder-decoder this repo trains (/encoder-decoder) ---------------------------------------------------


def _load_encoder_decoder():
    return registry.shared(registry.ENCODER_DECODER)  # one copy per process, shared with the lessons


def load_encoder_decoder():
    """(model, tokenizer) of the shipped encoder-decoder, or None after saying (with the training command) why
    not: the page degrades, the app does not."""
    from core.encoder_decoder import model as ed

    message = ed.status()
    if message is None:
        try:
            with st.spinner(ui.t("models", "loading", name="encoder-decoder")):
                return _load_encoder_decoder()
        except (OSError, ValueError) as err:  # a broken or partial folder
            message = str(err)
    st.error(ui.t("models", "missing", name="encoder-decoder", message=message))
    return None


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def encoder_decoder_run(sentence: str, language: str):
    """core.encoder_decoder.view.run_sentence on the shipped model: both translations of one sentence, shared by
    sessions (a few entries, read-only)."""
    from core.encoder_decoder.view import run_sentence

    model, tokenizer = _load_encoder_decoder()
    return run_sentence(model, tokenizer, sentence, language)


def load_seq2seq(key: str):
    """(Seq2Seq, TextTokenizer) of a learner's encoder-decoder folder, whole (registry.seq2seq_key: one copy per
    process), or None after saying why not."""
    try:
        with st.spinner(ui.t("models", "loading", name=name_in_text(key))):
            return _shared(registry.seq2seq_key(key))
    except (ModelUnavailable, ValueError, KeyError, OSError) as err:  # ValueError: local.ModelFolderError
        st.error(ui.t("models", "missing", name=name_in_text(key), message=words_about(key, str(err))))
        return None


def seq2seq_run(key: str, text: str):
    """core.encoder_decoder.own.run_text (greedy, every attention kept) on a learner's encoder-decoder, through the
    heavy-work queue (computed once for every session asking the same, a few kept, read-only)."""
    from core.encoder_decoder import own

    model, tokenizer = _shared(registry.seq2seq_key(key))
    job = ("seq2seq", key, registry.serial(registry.seq2seq_key(key)), text)
    return serving.heavy(job, lambda: own.run_text(model, tokenizer, text), "seq2seq")


# --- the GRU encoder-decoder with additive attention (/rnn-attention) ----------------------------------------


@st.cache_resource(show_spinner=False, max_entries=1)
def _load_rnn_attention():
    from core.rnn_attention import model as rm

    return rm.load()


def load_rnn_attention():
    """(model, tokenizer) of the shipped GRU encoder-decoder, or None after saying (with the training command) why
    not."""
    from core.rnn_attention import model as rm

    message = rm.status()
    if message is None:
        try:
            with st.spinner(ui.t("models", "loading", name="GRU encoder-decoder")):
                return _load_rnn_attention()
        except (OSError, ValueError, KeyError, RuntimeError) as err:  # a broken or partial folder
            message = str(err)
    st.error(ui.t("models", "missing", name="GRU encoder-decoder", message=message))
    return None


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def rnn_attention_run(sentence: str, language: str):
    """core.rnn_attention.view.sentence_view of one sentence beside the shipped Transformer's run (shared by
    sessions, a few entries, read-only)."""
    from core.rnn_attention.view import sentence_view

    model, tokenizer = _load_rnn_attention()
    return sentence_view(model, tokenizer, encoder_decoder_run(sentence, language))


# --- live analyses of /head-detectors, /ablation, /logit-lens (small, seeded: shared across sessions) ----------


def detector_map(key: str, n_sequences: int, half_length: int, seed: int):
    """core.head_detectors.detector_map on a loaded model, through the heavy-work queue (read-only, computed once
    for every session asking the same, a few kept)."""
    from core import head_detectors

    model = _load(key)
    job = ("detector_map", key, registry.serial(key), n_sequences, half_length, seed)
    return serving.heavy(
        job, lambda: head_detectors.detector_map(model, n_sequences, half_length, seed), "detector_map"
    )


def claim_card(key: str, claim: str, k: int, mode: str, draws: int, seed: int, eval_settings: tuple):
    """core.ablation.claim_card on a loaded model, on the repeated-token evaluation set of `eval_settings`
    ((n_sequences, half_length, seed); the antecedent claim ignores it); through the heavy-work queue."""
    from core import ablation

    model = _load(key)

    def card():
        evalset = None
        if ablation.CLAIM_METRIC[claim] == "repeated_loss":
            evalset = ablation.repeated_eval_set(model, *eval_settings)
        return ablation.claim_card(key, model, claim, k, mode, draws, seed, evalset=evalset)

    job = ("claim_card", key, registry.serial(key), claim, k, mode, draws, seed, tuple(eval_settings))
    return serving.heavy(job, card, "claim_card")


def logit_lens(key: str, text: str):
    """core.logit_lens.logit_lens on a loaded model, through the heavy-work queue."""
    from core import logit_lens as lens

    model = _load(key)
    job = ("logit_lens", key, registry.serial(key), text)
    return serving.heavy(job, lambda: lens.logit_lens(model, text), "logit_lens")


def transformer_xl_live(key: str, text: str, segment: int, window: int, sinks: int, max_tokens: int):
    """core.transformer_xl.live_view (the five methods on the model's own weights, on the reader's text), through
    the heavy-work queue."""
    from core import transformer_xl as tx

    model = _load(key)
    job = ("transformer_xl", key, registry.serial(key), text, segment, window, sinks, max_tokens)
    return serving.heavy(job, lambda: tx.live_view(model, text, segment, window, sinks, max_tokens), "transformer_xl")


def why_head_rope(key: str, model, text: str, layer: int, split: str, n_bands: int | None):
    """core.why_head.rope_parts_of (one layer taken apart on the reader's text), through the heavy-work queue:
    computed once per model, text, layer and split for every session, a few kept."""
    from core import why_head

    job = ("why_head_rope", key, registry.serial(key), text, layer, split, n_bands)
    compute = lambda: why_head.rope_parts_of(model, text, layer, split, n_bands, why_head.MAX_TOKENS)  # noqa: E731
    return serving.heavy(job, compute, "why_head")


def why_head_absolute(key: str, model, text: str, where: str):
    """core.why_head.absolute_parts_of (the first layer's four terms on the reader's text), through the queue."""
    from core import why_head

    job = ("why_head_absolute", key, registry.serial(key), text, where)
    return serving.heavy(job, lambda: why_head.absolute_parts_of(model, text, where, why_head.MAX_TOKENS), "why_head")


# --- /long-maps: one layer's q and k of a long document, and a GPU copy of SmolLM2 when there is a GPU ---


def layer_qk(key: str, _model, text_id: str, n: int, layer: int, _text: str):
    """One layer's q and k of the first n tokens of _text by the model of `key` (the model forward, through the
    heavy-work queue: once per model, text id, n, layer and device; two kept)."""

    def forward():
        batch = long_maps.document_batch(_model, _text, n)
        t0 = time.perf_counter()
        q, k, scale = _model.layer_qk(batch, layer)
        return long_maps.LayerQK(q, k, scale, batch.tokens[0], time.perf_counter() - t0)

    device = str(_model.device)
    return serving.heavy(("layer_qk", key, registry.serial(key), device, text_id, n, layer), forward, "layer_qk")


@st.cache_resource(show_spinner=False)
def load_gpu_smollm2():
    """A separate SmolLM2 on the GPU for long documents (the shared one stays on the CPU for the other pages)."""
    model = registry.RECORDS["smollm2"].load()
    model.to_device("cuda")
    return model


def show_examples(T, rows, columns: tuple[str, str, str, str], kind: str, detail: str) -> None:
    """A table of example models (core.models.examples rows) beside this app's own: `columns` are the catalog keys
    of its four headers, `kind` and `detail` the key prefixes of each row's two labels (prefix + the row's kind)."""
    st.dataframe(
        {
            T(columns[0]): [T(kind + r.kind) for r in rows],
            T(columns[1]): [T(detail + r.kind) for r in rows],
            T(columns[2]): [", ".join(t for t, _ in r.examples) for r in rows],
            T(columns[3]): [", ".join(r.app_models) or "–" for r in rows],
        },
        hide_index=True,
    )
