"""The models the pages can pick, by key: one record per model (RECORDS), the one place its loader, status, folder,
source and capabilities are declared; a shipped model's name for humans is words, in the app's catalogs under its
key ([model_titles] in app/locales), and a learner's folder's is its record's title (data).

    RECORDS[key]         -> its ModelRecord: title (a folder's name), load() (a fresh copy; raises
                            ModelUnavailable in one sentence when it cannot be loaded here), status() (cheap: None if
                            it can be loaded, else why not, with the install command), folder and source (a
                            learner's folder), capabilities (what it offers, known without loading it)
    offered()            -> the keys the pickers offer, in registration order
    shared(key)          -> the process's one copy (pages and lessons alike): loaded once, a lock per key, own
                            folders bounded (see the section above _register_builtin)
    model_status()       -> {key: record.status()} of the offered models

status() only looks for packages and files, it never reads weights, so a page can call model_status() on every
run. A new model is one `register(ModelRecord(...))` call in `_register_builtin` below, with a loader and a cheap
status check in its own module, and its title ([model_titles]) and description ([models]) under its key in each of
app/locales.

A model folder (or hub id) is described by `describe` (config only: its capabilities) into a ModelRecord that says
how to load it; loading runs the parity check against transformers' eager attention (core/models/local.py). The
operator's folders, listed in the TOML file that $ATTENTION_LAB_MODELS names, are registered here at start
(`register_folder`, key "folder:<name>") and offered to every visitor. A visitor's own folder (the /models page on a
laptop run) is never registered here: its record lives in that visitor's session (app/models.py), its key carries a
hash of its path, and nothing about it is written to a file.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
import tomllib
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from .base import ModelUnavailable, Reason
from .capabilities import Capabilities

FOLDER_PREFIX = "folder:"
MODELS_LIST = "ATTENTION_LAB_MODELS"  # the operator's TOML file: [[model]] path = "...", title = "..."
_lock = threading.Lock()


def _loadable() -> str | None:
    return None


@dataclass(frozen=True, eq=False)
class ModelRecord:
    """One model: a folder's name, how it loads, whether it can load here, where it is from and what it
    offers. A learner's folder's record comes from `describe` (config only); a shipped model's from
    `_register_builtin`."""

    key: str
    title: str | None  # a learner's folder's name (data); None for a shipped model, named in the catalogs by its key
    load: Callable[[], object]  # a fresh copy (an AttentionModel; (Seq2Seq, tokenizer) for an encoder-decoder whole)
    status: Callable[[], str | None] = _loadable  # cheap (no weights read): None = loadable, else why not in words
    folder: Path | None = None  # a learner's local folder (a hub id's: the hub cache's); None for a shipped model
    source: str | None = None  # what the operator or visitor gave: the folder resolved, or the pinned hub id
    capabilities: Capabilities | None = None  # a folder's, read when it was described (shipped: from `config`)
    config: Callable[[], object] | None = (
        None  # a shipped model's config (transformers' or its config.json), no weights read
    )
    load_seq2seq: Callable[[], object] | None = None  # a learner's encoder-decoder whole (seq2seq_key), else None
    offered: bool = True  # in the pickers (False: a checkpoint the pages load by name, as the MoE variants)


RECORDS: dict[str, ModelRecord] = {}
_BUILTIN_CAPABILITIES: dict[str, Capabilities] = {}


def register(record: ModelRecord) -> None:
    """Add a model (or replace the record of its key: a folder added again)."""
    RECORDS[record.key] = record


def offered() -> tuple[str, ...]:
    """The keys of the models the pickers offer, in registration order (shipped first, then the operator's)."""
    return tuple(key for key, record in RECORDS.items() if record.offered)


def folders() -> dict[str, ModelRecord]:
    """{key: record} of the operator's registered folders, in the order they were added."""
    return {key: record for key, record in RECORDS.items() if record.folder is not None}


def title(key: str) -> str:
    """A learner's folder's name; the key itself for a shipped model (the pages name it in the reader's words by its
    key) or a key nothing registered."""
    record = RECORDS.get(key.removesuffix(SEQ2SEQ_SUFFIX))
    return key if record is None or not record.title else record.title


def capabilities(key: str) -> Capabilities | None:
    """What the model offers the pages, known without loading its weights: a folder's (read at registration) or a
    built-in's (its config, read once); None when it cannot be read here (a missing package)."""
    from .capabilities import capabilities_of

    record = RECORDS.get(key)
    if record is None:
        return None
    if record.capabilities is not None:
        return record.capabilities
    if key not in _BUILTIN_CAPABILITIES and record.config is not None:
        try:
            _BUILTIN_CAPABILITIES[key] = capabilities_of(record.config())
        except (ModelUnavailable, OSError, ValueError):
            return None
    return _BUILTIN_CAPABILITIES.get(key)


def model_status() -> dict[str, str | None]:
    """{key: None if the model can be loaded here, else the reason, with the install command} of offered()."""
    return {key: RECORDS[key].status() for key in offered()}


def available() -> list[str]:
    """Keys of the models that can be loaded here, in registration order."""
    return [key for key, reason in model_status().items() if reason is None]


def _user_list() -> Path | None:
    return Path(os.environ[MODELS_LIST]) if os.environ.get(MODELS_LIST) else None


def describe(path, title: str | None = None, allowed=None, taken: Collection[str] = (), hashed: bool = False):
    """The ModelRecord of a folder or hub id (config only; nothing registered). `allowed`: core/models/local.py's
    check of a visitor's path (None: the operator's, trusted). `taken`: keys in use, whose sources are in RECORDS
    or not (then always hashed); `hashed`: the key always carries a hash of the source (a visitor's folder: two
    visitors' checkpoint-500 folders never share a key, a cache or a link). Raises local.ModelFolderError."""
    from . import local

    caps = local.describe_folder(path, allowed)
    source = str(path).strip()
    hub = local.is_hub_id(source)
    # a hub id's config is in the hub cache by now; its weights come when the model is first loaded
    folder = local.resolve_folder(source, allowed)
    # a hub id is pinned to the commit whose config was read: its weights come from that revision, now and after
    # a restart
    target = local.pinned_hub_id(source, folder) if hub else folder
    origin = target if hub else str(folder)
    key, name = _key_for(local.display_name(source), origin, taken, hashed)
    title = title or name

    def load():
        model = local.load_folder(target, allowed, name=title)
        model.parity = local.parity(model)
        return model

    def status() -> str | None:
        # said to every visitor of a hosted server (the operator's list): the folder's name, never where it lies
        gone = Reason(f"the folder {folder.name} is gone", "unavailable_folder_gone", folder=folder.name)
        return None if (folder / "config.json").is_file() else gone

    whole = (lambda: local.load_seq2seq(target, allowed)) if caps.kind == "encoder-decoder" else None
    return ModelRecord(key, title, load, status, folder, origin, caps, load_seq2seq=whole)


def register_folder(path, title: str | None = None, allowed=None) -> str:
    """Describe an operator's folder (config only) and offer it to every visitor; returns its key. Raises
    local.ModelFolderError."""
    with _lock:
        record = describe(path, title, allowed, taken=RECORDS)
        register(record)
    return record.key


def _key_for(name: str, origin: str, taken: Collection[str] = (), hashed: bool = False) -> tuple[str, str]:
    """(key, title) of a folder or hub id: "folder:<name>" and its name, unless another origin of the same name
    holds that key in `taken` (two checkpoint-500 folders, org-a/model and org-b/model) or `hashed`: then the key
    adds a short hash of the origin (the same at every start) and, when the name was taken, the title its last two
    parts, so neither replaces the other's registration, nor is shown the other's cached runs."""
    key = FOLDER_PREFIX + name[:60]
    held = RECORDS[key].source if key in RECORDS else None
    if not hashed and (key not in taken or (held or origin) == origin):
        return key, name
    digest = hashlib.sha1(origin.encode("utf-8")).hexdigest()[:8]
    title = "/".join(Path(origin).parts[-2:]) if key in taken and held != origin else name
    return f"{key}-{digest}", title


def load_user_list() -> list[str]:
    """Register every folder of the operator's models file ($ATTENTION_LAB_MODELS); a broken entry is reported in
    the returned messages (for the server's log), never raised: one bad folder must not stop the app."""
    path = _user_list()
    if path is None:
        return []
    if not path.is_file():
        return [f"{path}: no such file ({MODELS_LIST})"]
    problems = []
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8")).get("model", [])
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        return [f"{path}: {err}"]
    for entry in entries:
        try:
            register_folder(entry["path"], entry.get("title"))
        except (KeyError, TypeError, ValueError) as err:
            problems.append(f"{path}: {err}")
    return problems


# --- one copy of each model per process ----------------------------------------------------------------------------
# shared(key) is the one place a server process keeps loaded models: the pages (app/models.py) and the lessons'
# answer functions (core/lessons/answers/) get the same object. One load per key at a time (a lock per key:
# concurrent callers wait for it), a failed load is not kept (the next call tries again), a key whose record was
# registered anew (a folder added again, a test's stand-in) or whose folder changed on disk (a checkpoint retrained
# in place: folder_stamp) loads again, and at most OWN_MODELS_KEPT learner folders
# stay loaded (the least recently used goes first; shipped models are never evicted).

OWN_MODELS_KEPT_ENV = "ATTENTION_LAB_OWN_MODELS_KEPT"
ENCODER_DECODER = "encoder-decoder"  # (Seq2Seq, WordTokenizer) of the shipped translation model
SEQ2SEQ_SUFFIX = "#seq2seq"  # a learner's encoder-decoder folder, whole (see seq2seq_key)
# key -> (its loader, the folder's stamp when loaded, the model, the load's serial)
_shared: OrderedDict[str, tuple[Callable[[], object], tuple, object, int]] = OrderedDict()
_key_locks: dict[str, threading.Lock] = {}
_serials = itertools.count(1)
_shared_lock = threading.Lock()  # guards _shared and _key_locks, never held during a load


def own_models_kept() -> int:
    """How many learner folders stay loaded at once ($ATTENTION_LAB_OWN_MODELS_KEPT, default 2, at least 1)."""
    try:
        return max(1, int(os.environ.get(OWN_MODELS_KEPT_ENV, "2")))
    except ValueError:
        return 2


def moe_key(variant: str) -> str:
    """The shared() key of a shipped MoE checkpoint: "moe" for the registry's own (balanced), "moe:<variant>" else."""
    return "moe" if variant == "balanced" else f"moe:{variant}"


def record_of(key: str, record: ModelRecord | None = None) -> ModelRecord:
    """The record behind a shared() key: RECORDS' (a seq2seq_key: its folder's), or `record` (a visitor's own)."""
    found = record if record is not None else RECORDS.get(key.removesuffix(SEQ2SEQ_SUFFIX))
    if found is None:
        raise KeyError(f"no model registered as {key!r}")
    return found


def _loader_of(key: str, record: ModelRecord) -> Callable[[], object]:
    if key != ENCODER_DECODER and key == seq2seq_key(record.key):
        if record.load_seq2seq is None:
            from . import local

            raise ModelUnavailable(local.not_encoder_decoder(record.title or record.key))
        return record.load_seq2seq
    return record.load


WEIGHT_FILES = ("config.json", "*.safetensors", "*.bin", "tokenizer.json")


def folder_stamp(folder: Path | None) -> tuple:
    """What a learner's folder holds now (name, size, modification time of its config, weights and tokenizer), so
    that a checkpoint retrained in place loads again; () for a shipped model (None; cheap: a few stat calls)."""
    if folder is None:
        return ()
    stamp = []
    for pattern in WEIGHT_FILES:
        for path in sorted(folder.glob(pattern)):
            try:
                info = path.stat()
            except OSError:  # a file replaced while we looked: the next call sees the new one
                continue
            stamp.append((path.name, info.st_size, info.st_mtime_ns))
    return tuple(stamp)


def _cached(key: str, loader, stamp: tuple) -> tuple[bool, object]:
    """(found, model) under _shared_lock; a hit becomes the most recently used."""
    entry = _shared.get(key)
    if entry is None or entry[0] is not loader or entry[1] != stamp:
        return False, None
    _shared.move_to_end(key)
    return True, entry[2]


def serial(key: str) -> int:
    """Which load of `key` is in use (0: not loaded): caches of results computed with a model (app/models.py) key on
    it, so a model loaded anew (a folder retrained in place or added again) never gets the old model's results."""
    with _shared_lock:
        entry = _shared.get(key)
        return 0 if entry is None else entry[3]


def current_serial(key: str, record: ModelRecord | None = None) -> int:
    """The serial of the copy shared(key, record) would hand back now, without loading one: 0 when it would load
    anew (not loaded, its folder changed since, or another record under the key). A result a page keeps past one
    run (in the session) keys on it, so another model of the same key or folder never shows it."""
    record = record_of(key, record)
    loader, stamp = _loader_of(key, record), folder_stamp(record.folder)
    with _shared_lock:
        entry = _shared.get(key)
        return entry[3] if entry is not None and entry[0] is loader and entry[1] == stamp else 0


def shared(key: str, record: ModelRecord | None = None):
    """The process's one copy of model `key` (a RECORDS key or the seq2seq_key of one; or a visitor's own
    `record`, its key or its seq2seq_key), loaded on first use. Raises ModelUnavailable, its message one sentence
    for the visitor, whatever made the load fail (a missing package, a broken or partial folder: the loader's
    OSError, ValueError, KeyError or RuntimeError), and keeps nothing then; KeyError for a key nothing
    registered."""
    record = record_of(key, record)
    loader, stamp = _loader_of(key, record), folder_stamp(record.folder)
    with _shared_lock:
        found, model = _cached(key, loader, stamp)
        if found:
            return model
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # callers of the same key wait here for the one load
        with _shared_lock:
            found, model = _cached(key, loader, stamp)
            if not found:
                _shared.pop(key, None)  # a copy from an earlier loader or folder content: stale
        if found:
            return model
        try:
            model = loader()
        except ModelUnavailable:
            raise
        except (OSError, ValueError, KeyError, RuntimeError) as err:  # a broken or partial folder, in words
            raise ModelUnavailable((str(err).strip() or type(err).__name__).splitlines()[0]) from err
        with _shared_lock:
            _shared[key] = (loader, stamp, model, next(_serials))
            _shared.move_to_end(key)
            own = [k for k in _shared if k.startswith(FOLDER_PREFIX)]  # least recently used first
            for old in own[: max(0, len(own) - own_models_kept())]:
                del _shared[old]
        return model


def loaded(key: str, record: ModelRecord | None = None):
    """shared(key, record) once the record's status says it can load here; raises ModelUnavailable with the
    status's reason (the install or training command) otherwise."""
    record = record_of(key, record)
    reason = record.status()
    if reason is not None:
        raise ModelUnavailable(reason)
    return shared(key, record)


def shared_keys() -> tuple[str, ...]:
    """Keys of the models loaded now, least recently used first."""
    with _shared_lock:
        return tuple(_shared)


def forget(key: str | None = None) -> None:
    """Drop one loaded model (None: all of them); the next shared() call loads it again."""
    with _shared_lock:
        if key is None:
            _shared.clear()
        else:
            _shared.pop(key, None)


def unregister(key: str) -> None:
    """Take a registered model out of RECORDS and drop its loaded copies (its seq2seq one included)."""
    RECORDS.pop(key, None)
    forget(key)
    forget(seq2seq_key(key))


def seq2seq_key(key: str) -> str:
    """The shared() key of an encoder-decoder, whole: (Seq2Seq, tokenizer) of core/models/seq2seq.py. The shipped
    one is ENCODER_DECODER; a learner's folder "folder:<name>" is "folder:<name>#seq2seq" (kept and evicted like
    the folder's other copies)."""
    return key if key == ENCODER_DECODER else key + SEQ2SEQ_SUFFIX


def _register_builtin() -> None:
    from functools import partial

    from . import minilm, moe_model, seq2seq, smollm2

    # titles None: a shipped model's name is words, in the catalogs under its key ([model_titles])
    register(ModelRecord("minilm", None, minilm.load_minilm, minilm.status, config=minilm.config))
    served = smollm2.load_smollm2_served  # on the GPU where there is one: every page's SmolLM2 runs there
    register(ModelRecord("smollm2", None, served, smollm2.status, config=smollm2.config))
    register(ModelRecord("moe", None, moe_model.load_moe, moe_model.status, config=moe_model.config))
    for variant in moe_model.VARIANTS:
        if moe_key(variant) not in RECORDS:
            load, status = partial(moe_model.load_moe, variant), partial(moe_model.status, variant)
            register(ModelRecord(moe_key(variant), None, load, status, offered=False))
    # not offered by the pickers: it is no AttentionModel (its page loads it by name)
    shipped = seq2seq.SHIPPED_FOLDER
    register(
        ModelRecord(
            ENCODER_DECODER,
            None,
            partial(seq2seq.load, shipped),
            seq2seq.shipped_status,
            config=partial(seq2seq.config, shipped),
            offered=False,
        )
    )


_register_builtin()
USER_LIST_PROBLEMS = load_user_list()
