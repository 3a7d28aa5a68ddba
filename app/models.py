"""The models on the pages: the picker (shipped models, then the learner's folders a page can use), one load for
every kind of model (core.models.registry.loaded: once per process; a model that cannot load here is one sentence,
with the install command, and every other page keeps working) and one cache of what is computed with a model
(computed: keyed on the load itself). What a page computes is core's; a page names the core function."""

from __future__ import annotations

import re
from types import SimpleNamespace

import streamlit as st

from app import collector, i18n, serving, ui
from core import attention
from core.models import ModelUnavailable, Reason, registry
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
RUN_CACHE_ENTRIES = 4  # light results (a trace holds q and k of every layer): keep only a few, shared by sessions


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
    """This visitor's record of `key` (a folder key or its seq2seq_key), else None."""
    return session_models().get(key.removesuffix(registry.SEQ2SEQ_SUFFIX))


def capabilities(key: str) -> Capabilities | None:
    """What model `key` offers, known without loading it: this visitor's folder's, or the registry's."""
    own = _own(key)
    return own.capabilities if own is not None else registry.capabilities(key)


def is_own(key: str) -> bool:
    """A learner's folder (the operator's or this visitor's; its key or its seq2seq_key), not a shipped model."""
    return key.removesuffix(registry.SEQ2SEQ_SUFFIX) in registry.folders() or _own(key) is not None


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


def short_name(key: str, record: registry.ModelRecord | None = None) -> str:
    """The model's name: a shipped model's (the registry's, or a topic's own `record`) in the reader's words, by its
    key ([model_titles]); a learner's folder's (the operator's or this visitor's) as its record has it, the same in
    every language (data)."""
    base = key.removesuffix(registry.SEQ2SEQ_SUFFIX)
    if i18n.has("model_titles", base):
        return ui.t("model_titles", base)
    record = record or _own(key)
    return record.title if record is not None and record.title else registry.title(key)


_MARKDOWN_CHARACTERS = re.compile(r"([\\`*_\[\]<>$~|!#])")


def name_in_text(key: str) -> str:
    """short_name for a sentence drawn as markdown: its markdown characters escaped, so a learner's folder name is
    shown as typed (never as emphasis, a link or a formula)."""
    return _MARKDOWN_CHARACTERS.sub(r"\\\1", short_name(key))


def words_about(key: str, text: str) -> str:
    """A sentence about model `key` (why it cannot load: reason_words), for markdown: a learner's folder's (its path
    inside) escaped; a shipped model's kept as written (its install command in `code`)."""
    return _MARKDOWN_CHARACTERS.sub(r"\\\1", text) if is_own(key) else text


def reason_words(why: str | BaseException) -> str:
    """Why a model cannot load or a folder is refused (a status's reason, or the ModelUnavailable that carries it), in
    the reader's words where core gave the reason a key (core.models.Reason: [models] <key> with its fields); else
    core's words as they are (a library's)."""
    if isinstance(why, BaseException):
        why = why.args[0] if len(why.args) == 1 and isinstance(why.args[0], Reason) else str(why)
    return ui.t("models", why.key, **why.fields) if isinstance(why, Reason) and why.key else str(why)


def weights_words(weights: tuple[str, dict]) -> str:
    """Where a model's weights come from (core's one record: a loaded model's `weights`, or a results file's
    recorded_weights), in the reader's words, a path in its fields escaped for markdown; "" where it does not say."""
    source, fields = weights
    if not source:
        return ""
    fields = {k: _MARKDOWN_CHARACTERS.sub(r"\\\1", v) if isinstance(v, str) else v for k, v in fields.items()}
    return ui.t("models", f"weights_{source}", **fields)


def weights_aside(weights: tuple[str, dict]) -> str:
    """weights_words in the reader's brackets after a model's name (' (…)', '（…）'); "" where the record says
    nothing (a results file written before it was kept), not an empty '()'."""
    said = weights_words(weights)
    return ui.t("models", "weights_aside", note=said) if said else ""


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


def _record_and_key(model: str | registry.ModelRecord) -> tuple[registry.ModelRecord | None, str]:
    """(this visitor's or the given record, else None: the registry's; the key) of a load() or computed() model."""
    if isinstance(model, registry.ModelRecord):
        return model, model.key
    return _own(model), model


def load(model: str | registry.ModelRecord):
    """The process's one copy of a model of any kind (core.models.registry.loaded: the lessons' answers get the same
    object), or None after telling the reader in one sentence why not. `model`: a key (a shipped model, a
    learner's folder, registry.moe_key(variant), registry.ENCODER_DECODER or registry.seq2seq_key(key): an
    encoder-decoder whole, (model, tokenizer)) or a topic's own record (the GRU encoder-decoder's). Every reason a
    model cannot load here reaches this as core's one exception, ModelUnavailable."""
    record, key = _record_and_key(model)
    name = _MARKDOWN_CHARACTERS.sub(r"\\\1", short_name(key, record))
    try:
        with st.spinner(ui.t("models", "loading", name=name)), collector.paused():  # a first load imports transformers
            loaded = registry.loaded(key, record)
    except ModelUnavailable as err:
        st.error(ui.t("models", "missing", name=name, message=words_about(key, reason_words(err))))
        return None
    if getattr(loaded, "random_init", False):
        st.warning(ui.t("models", "random"))
    note = weights_words(getattr(loaded, "weights", ("", {})))
    if note:
        st.caption(ui.t("models", "weights", note=note))
    parity = getattr(loaded, "parity", None)
    if parity is not None:
        word = "parity_exact" if parity.exact else "parity_approximate"
        st.caption(ui.t("models", word, difference=parity.max_difference, layers=parity.layers))
    return loaded


def computed(model: str | registry.ModelRecord, function, *args, queue: str | None = None, progress=None, **options):
    """function(the loaded model, *args, **options) (an encoder-decoder whole: function(model, tokenizer, ...)),
    computed once for every session asking the same and kept (a few, read-only): the one cache of results computed
    with a model. It keys on the load itself (the model's key and registry.serial: a model loaded anew, as a folder
    retrained in place, never gets the old one's results), the function and its arguments, so no caller can leave
    a part of the key out. `queue`: the kind of heavy work (app/serving.py's queue: the visitor sees their place
    while it waits); None: a light call. `progress` (a queued live run that reports): label -> the words of its
    progress bar; the function is then also given progress=report, report(fraction, label=None). Call load()
    first: this raises ModelUnavailable when the model cannot load."""
    record, key = _record_and_key(model)
    loaded = registry.loaded(key, record)
    job = (key, registry.serial(key), f"{function.__module__}.{function.__qualname__}", args, tuple(options.items()))
    if progress is not None:
        work = lambda report: _call(function, loaded, args, {**options, "progress": report})  # noqa: E731
        return serving.heavy(job, work, queue, progress=progress)
    if queue is not None:
        return serving.heavy(job, lambda: _call(function, loaded, args, options), queue)
    return _light(job, function, loaded)


def kept_serial(model: str | registry.ModelRecord) -> int:
    """Which load of a model a result a page keeps in the session belongs to (core.models.registry.current_serial,
    this visitor's record included): key kept results on it beside the model's key, as computed() keys its cache
    on the serial, so a folder retrained in place or another model under the same key never shows an old result."""
    record, key = _record_and_key(model)
    return registry.current_serial(key, record)


def _call(function, loaded, args: tuple, options: dict):
    head = loaded if isinstance(loaded, tuple) else (loaded,)  # (model, tokenizer) of an encoder-decoder whole
    return function(*head, *args, **options)


@st.cache_resource(show_spinner=False, max_entries=RUN_CACHE_ENTRIES)
def _light(job: tuple, _function, _loaded):
    """computed()'s light calls, keyed on `job` alone: (key, serial, function name, arguments, options)."""
    return _call(_function, _loaded, job[3], dict(job[4]))


def run(key: str, model, texts: list[str], max_tokens: int = MAX_PAGE_TOKENS):
    """The attention contract's pass over `texts` as pages draw it (core.attention.kept_trace, through computed),
    with a notice for each text that was cut."""
    limit = min(max_tokens, model.max_positions)
    trace = computed(key, attention.kept_trace, tuple(texts), limit)
    say_cut(key, model, texts, trace.batch.truncated, limit)
    return trace


def say_cut(key: str, model, texts, truncated: list[bool], limit: int) -> None:
    """A notice for each text the model read only the first `limit` tokens of."""
    for text, cut in zip(texts, truncated):
        if cut:
            st.info(ui.t("models", "truncated", n=model.token_count(text), limit=limit, name=name_in_text(key)))


def show_examples(T, table, columns: tuple[str, str, str, str], kind: str, detail: str) -> None:
    """A table of example models (the rows core.models.examples' `table`() returns) beside this app's own: `columns`
    are the catalog keys of its four headers, `kind` and `detail` the key prefixes of each row's two labels (prefix +
    the row's kind)."""
    with collector.paused():  # its first call imports transformers (each family's default config), as a load does
        rows = table()
    st.dataframe(
        {
            T(columns[0]): [T(kind + r.kind) for r in rows],
            T(columns[1]): [T(detail + r.kind) for r in rows],
            T(columns[2]): [", ".join(t for t, _ in r.examples) for r in rows],
            T(columns[3]): [", ".join(short_name(key) for key in r.app_models) or "–" for r in rows],
        },
        hide_index=True,
    )
