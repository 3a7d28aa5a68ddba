"""Answer functions: (params, state) -> Answer, one registry of same-signature functions (like transformers'
ROPE_INIT_FUNCTIONS). `params` are the question's fixed parameters from the lesson file; `state` is the step's live
state (the page's query parameters as strings, as a shared link carries them). Each function reads the state the
way its page does (same keys, same defaults, a bad value falls back to the default) and calls the core engine, so
the answer follows the sentence, the model, the layer and the sliders the room is looking at.

Kinds: "token" (pick a token: options are the page's indexed labels '3 cat'), "choice" (pick among options),
"number" (within a tolerance), "order" (put items in order).

Number questions take an optional `tolerance` (absolute) or `rel_tolerance` (share of the answer) in params.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable

import numpy as np
import torch

from core.lessons import Answer

AnswerFunction = Callable[[dict, dict[str, str]], Answer]
ANSWER_FUNCTIONS: dict[str, AnswerFunction] = {}


def register(name: str, kind: str):
    """Add an answer function to ANSWER_FUNCTIONS under `name`; `kind` is the kind of Answer it returns."""

    def add(fn):
        fn.kind = kind
        ANSWER_FUNCTIONS[name] = fn
        return fn

    return add


# ---- reading the state as the pages do ---------------------------------------------------------------------


def _int(state: dict, key: str, default: int, lo: int | None = None, hi: int | None = None) -> int:
    try:
        value = int(state[key])
    except (KeyError, ValueError, TypeError):
        return default
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        return default
    return value


def _float(state: dict, key: str, default: float, lo: float | None = None, hi: float | None = None) -> float:
    try:
        value = float(state[key])
    except (KeyError, ValueError, TypeError):
        return default
    if not math.isfinite(value) or (lo is not None and value < lo) or (hi is not None and value > hi):
        return default
    return value


def _str(state: dict, key: str, default: str, options=None) -> str:
    value = state.get(key, default)
    return value if options is None or value in options else default


def _text(state: dict, key: str, default: str) -> str:
    value = state.get(key)
    return value if isinstance(value, str) and value.strip() else default


def _bool(state: dict, key: str, default: bool = False) -> bool:
    return {"1": True, "0": False}.get(state.get(key, ""), default)


def _number(value: float, params: dict, tolerance: float, **detail) -> Answer:
    tol = params.get("tolerance")
    if tol is None and "rel_tolerance" in params:
        tol = abs(value) * float(params["rel_tolerance"])
    return Answer("number", float(value), (), float(tolerance if tol is None else tol), {"value": value, **detail})


def _mixed(items) -> tuple[str, ...]:
    """Items in a fixed order that does not give an order question away (sorted by a hash of the text)."""
    return tuple(sorted(items, key=lambda s: hashlib.md5(str(s).encode()).hexdigest()))


def _argmax_label(weights, labels: list[str]) -> str:
    return labels[int(np.argmax(np.asarray(weights)))]


def _model(key: str):
    """The process's one copy of the model, the same object the pages use (core.models.registry.shared)."""
    from core.models import registry

    return registry.shared(key)


def _word_position(tokens: list[str], word, default: int) -> int:
    """Position of the first token that reads `word` (wordpiece marks ignored), else `default`."""
    if isinstance(word, int) and not isinstance(word, bool):
        return word if 0 <= word < len(tokens) else default
    if isinstance(word, str) and word:
        want = word.lower().strip()
        for i, t in enumerate(tokens):
            if str(t).lower().replace("##", "").replace("Ġ", "").replace("▁", "").strip() == want:
                return i
    return default


# ---- /attention: a pretrained model's head ----------------------------------------------------------------------


@register("attention.top_key", "token")
def attention_top_key(params, state):
    """The key this head gives most weight from the query word `query` (params), on the page's text, model,
    layer and head (defaults: the last layer, head 0, the page's sentence)."""
    from core import attention

    key = _str(state, "model", "minilm", ("minilm", "smollm2", "moe"))
    model = _model(key)
    text = _text(state, "text", params.get("default_text", "The cat sat on the mat because it was tired."))
    trace = model.run(model.tokenize([text], min(512, model.max_positions)))
    tokens = attention.select_tokens(trace, 0, _bool(state, "nospecial"))
    layer = _int(state, "layer", trace.n_layers - 1, 0, trace.n_layers - 1)
    head = _int(state, "head", 0, 0, trace.n_heads - 1)
    shown_tokens = [trace.batch.tokens[0][int(p)] for p in tokens.positions]
    q = _word_position(shown_tokens, params.get("query"), len(shown_tokens) - 1)
    w = attention.head_weights(trace, tokens, layer, head)[q]
    return Answer("token", _argmax_label(w.numpy(), tokens.labels), tuple(tokens.labels), None,
                  {"query": tokens.labels[q], "weight": float(w.max()), "layer": layer, "head": head})  # fmt: skip


# ---- /masks ------------------------------------------------------------------------------------------------------


def _sentences(state):
    from core.masks import batch as core

    return core.read_sentences(_text(state, "text", "\n".join(core.EXAMPLES)), 4, 12).token_lists


@register("masks.allowed_count", "number")
def masks_allowed_count(params, state):
    """Cells (query, key) the page's mask kind lets through for the picked sentence of the padded batch."""
    from core.masks import batch as core

    lists = _sentences(state)
    row = _int(state, "row", 0, 0, len(lists) - 1)
    kind = params.get("mask") or _str(state, "mask", "both", core.MASK_KINDS)
    allowed = core.mask_of_kind(kind, core.pad_batch(lists).attention_mask)[row, 0]
    return _number(int(allowed.sum()), params, 0, kind=kind, n=int(allowed.shape[0]), real=len(lists[row]))


@register("masks.top_key", "token")
def masks_top_key(params, state):
    """The key the picked head gives most weight from a query of the picked sentence under the page's mask
    (params query: a position or a word; default the sentence's last real token)."""
    from core.masks import batch as core
    from core.pooling import indexed_labels

    lists = _sentences(state)
    row = _int(state, "row", 0, 0, len(lists) - 1)
    head = _int(state, "head", 0, 0, 3)
    kind = _str(state, "mask", "both", core.MASK_KINDS)
    view = core.mask_steps_view(lists, row, head, kind, seed=0)
    labels = indexed_labels(view.tokens)
    q = _word_position(view.tokens[: view.n_real], params.get("query"), view.n_real - 1)
    return Answer("token", _argmax_label(view.weights[q], labels), tuple(labels), None,
                  {"query": labels[q], "weight": float(view.weights[q].max())})  # fmt: skip


@functools.lru_cache(maxsize=8)
def _three_kinds(src: tuple, tgt: tuple):
    from core.masks import encoder_decoder as core

    return core.encoder_decoder(list(src), list(tgt), seed=0)


def _kinds(state):
    lists = _sentences(state)
    src = _int(state, "src", 0, 0, len(lists) - 1)
    tgt = _int(state, "tgt", 1 if len(lists) > 1 else 0, 0, len(lists) - 1)
    return _three_kinds(tuple(lists[src]), tuple(lists[tgt]))


@register("masks.kind_order", "order")
def masks_kind_order(params, state):
    """The three kinds of attention (encoder_self, decoder_self, cross) from most to fewest allowed cells, for the
    page's source and target sentences."""
    view = _kinds(state)
    counts = {k.kind: int(k.allowed.sum()) for k in view.kinds}
    order = tuple(sorted(counts, key=lambda k: -counts[k]))
    return Answer("order", order, _mixed(counts), None, counts)


@register("masks.cross_shape", "number")
def masks_cross_shape(params, state):
    """Rows ("queries") or columns ("keys") of one head's cross-attention weights for the page's sentences."""
    view = _kinds(state)
    cross = next(k for k in view.kinds if k.kind == "cross")
    n_q, n_k = cross.weights.shape[-2:]
    return _number(n_k if params.get("what", "keys") == "keys" else n_q, params, 0, queries=n_q, keys=n_k)


# ---- /multi-head ---------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _walk(text: str, layer: int):
    from core import multi_head as mh

    return mh.layer_walk(_model("minilm"), text, layer)


def _walk_state(state, params):
    model = _model("minilm")
    text = _text(state, "text", "The cat sat on the mat because it was tired.")
    layer = _int(state, "layer", 0, 0, model.n_layers - 1)
    head = _int(state, "head", 0, 0, model.n_heads - 1)
    return _walk(text, layer), head


@register("multi_head.top_key", "token")
def multi_head_top_key(params, state):
    """The key head `head` of MiniLM layer `layer` gives most weight from the query word (the page's layer part)."""
    from core.pooling import indexed_labels

    walk, head = _walk_state(state, params)
    labels = indexed_labels(walk.tokens)
    q = _word_position(walk.tokens, params.get("query"), len(walk.tokens) - 1)
    w = walk.weights[head, q].numpy()
    return Answer("token", _argmax_label(w, labels), tuple(labels), None,
                  {"query": labels[q], "weight": float(w.max()), "head": head})  # fmt: skip


@register("multi_head.shape", "number")
def multi_head_shape(params, state):
    """A width in the layer walk: "d_k" (one head's Z_i), "concat" (the concatenation), "heads" (H), "tokens" (n)."""
    walk, _ = _walk_state(state, params)
    values = {"d_k": walk.head_dim, "concat": walk.concat.shape[-1], "heads": walk.n_heads,
              "tokens": walk.x.shape[0]}  # fmt: skip
    return _number(values[params.get("what", "d_k")], params, 0, **values)


@register("multi_head.head_count", "number")
def multi_head_head_count(params, state):
    """For d_model = 512 (the paper's) and h = params heads on n tokens (the heads part's slider): "head_dim",
    "parameters", "flops" or "score_rank" (largest rank of one head's n x n score matrix)."""
    from core import multi_head as mh

    n = _int(state, "n", 64, 2, 512)
    heads = int(params.get("heads", 8))
    row = next(r for r in mh.head_count_rows(mh.PAPER_D_MODEL, n, (heads,)))
    value = getattr(row, params.get("what", "score_rank"))
    return _number(value, params, 0, n=n, heads=heads, d_k=row.head_dim)


@register("multi_head.params_change", "choice")
def multi_head_params_change(params, state):
    """Does the number of attention parameters change with h at a fixed d_model? 'yes' or 'no' (details: the
    matrix-product FLOPs, and the h n^2 score entries at the fewest and the most heads, which do grow)."""
    from core import multi_head as mh

    n = _int(state, "n", 64, 2, 512)
    rows = mh.head_count_rows(mh.PAPER_D_MODEL, n)
    counts = {r.parameters for r in rows}
    few, many = rows[0], rows[-1]
    return Answer("choice", "yes" if len(counts) > 1 else "no", ("yes", "no"), None,
                  {"parameters": min(counts), "flops": few.flops, "n": n, "h_few": few.heads, "h_many": many.heads,
                   "entries_few": few.score_entries, "entries_many": many.score_entries})  # fmt: skip


@register("head_detectors.best_head", "choice")
def head_detectors_best_head(params, state):
    """Among four heads 'layer.head', the one the committed detector map scores highest for the page's detector
    (default induction) and model: the best head, and heads ranked at the middle, three quarters and last."""
    from core import head_detectors as hd

    key = _str(state, "model", "minilm", ("minilm", "smollm2"))
    detector = _str(state, "detector", "induction", hd.DETECTORS)
    found = hd.committed_map(key)
    if found is None:
        raise ValueError(f"no committed head-detector map for {key}")
    grid = torch.as_tensor(found.scores[detector]).float()
    n_heads = grid.shape[1]
    ranked = torch.argsort(grid.flatten(), descending=True, stable=True).tolist()
    picks = [ranked[0], ranked[len(ranked) // 2], ranked[(3 * len(ranked)) // 4], ranked[-1]]
    label = [f"{i // n_heads}.{i % n_heads}" for i in picks]
    return Answer("choice", label[0], tuple(sorted(set(label))), None,
                  {"score": float(grid.flatten()[picks[0]]), "detector": detector})  # fmt: skip


# ---- /encoder-decoder ------------------------------------------------------------------------------------------


def _ed_model():
    from core.models import registry

    return registry.shared(registry.ENCODER_DECODER)  # the same copy the /encoder-decoder page uses


@functools.lru_cache(maxsize=8)
def _ed_run(text: str, language: str):
    from core.encoder_decoder.view import run_sentence

    model, tokenizer = _ed_model()
    return run_sentence(model, tokenizer, text, language)


def _ed_step(state):
    from core.encoder_decoder import grammar
    from core.encoder_decoder import view as edv

    run = _ed_run(_text(state, "text", edv.example_sentences()[0]), _str(state, "target", "ja", grammar.LANGUAGES))
    v = edv.step_view(run, _str(state, "mode", "free", edv.MODES), _int(state, "step", edv.MAX_STEPS, 0, edv.MAX_STEPS),
                      _int(state, "layer", 0, 0, 63), _int(state, "head", 0, 0, 63))  # fmt: skip
    return run, v


@register("encoder_decoder.cross_top", "token")
def encoder_decoder_cross_top(params, state):
    """The source token the picked cross-attention head weighs most at the picked decoder step."""
    from core.pooling import indexed_labels

    _, v = _ed_step(state)
    labels = indexed_labels(v.source_tokens)
    w = v.cross[v.step]
    return Answer("token", _argmax_label(w, labels), tuple(labels), None,
                  {"step": v.step, "weight": float(w.max()), "input": v.input_tokens[v.step]})  # fmt: skip


@register("encoder_decoder.next_token", "choice")
def encoder_decoder_next_token(params, state):
    """The token the decoder rates most likely at the picked step, among its five most likely (sorted A-Z)."""
    _, v = _ed_step(state)
    options = tuple(sorted({t for t, _ in v.top}))
    return Answer("choice", v.top[0][0], options, None, {"p": float(v.top[0][1]), "step": v.step})


@register("encoder_decoder.probability", "number")
def encoder_decoder_probability(params, state):
    """The probability of the most likely next token at the picked step."""
    _, v = _ed_step(state)
    return _number(float(v.top[0][1]), params, 0.05, token=v.top[0][0], step=v.step)


@register("encoder_decoder.source_length", "number")
def encoder_decoder_source_length(params, state):
    """S: the tokens the encoder reads (language tag first, </s> last): each cross-attention row has S weights."""
    _, v = _ed_step(state)
    return _number(len(v.source_tokens), params, 0, steps=v.steps)


@register("encoder_decoder.agrees", "choice")
def encoder_decoder_agrees(params, state):
    """Does free generation write the grammar's reference exactly? 'yes', 'no', or 'no_reference'."""
    run, _ = _ed_step(state)
    correct = "no_reference" if run.agrees is None else ("yes" if run.agrees else "no")
    return Answer("choice", correct, ("yes", "no", "no_reference"), None, {"output": " ".join(run.free.output)})


# ---- /positions (RoPE part) -------------------------------------------------------------------------------------


def _rope(state):
    from core.positions import rope

    d = _int(state, "rope_d", 16, 4, 64)
    base = 10 ** _float(state, "rope_base", 4.0, 1.0, 6.0)
    m = _int(state, "m", 3, 0, 500)
    return rope.rotation_view(d, base, m), base


def _pair(params, n_pairs: int) -> int:
    pair = params.get("pair", 0)
    if pair == "last":
        return n_pairs - 1
    if pair == "middle":
        return n_pairs // 2
    return min(max(int(pair), 0), n_pairs - 1)


@register("positions.rope_angle", "number")
def positions_rope_angle(params, state):
    """The angle m·θ_i (radians, not reduced mod 2π) by which RoPE turns pair `pair` at the page's position m."""
    rot, base = _rope(state)
    i = _pair(params, rot.d // 2)
    value = rot.m * float(rot.inv_freq[i])
    return _number(value, params, max(0.01, abs(value) * 0.005), pair=i, theta=float(rot.inv_freq[i]), m=rot.m)


@register("positions.rope_wavelength", "number")
def positions_rope_wavelength(params, state):
    """Positions pair `pair` takes to turn a full circle: 2π/θ_i."""
    rot, _ = _rope(state)
    i = _pair(params, rot.d // 2)
    value = 2 * math.pi / float(rot.inv_freq[i])
    return _number(value, params, abs(value) * 0.01, pair=i)


@register("positions.relative_only", "choice")
def positions_relative_only(params, state):
    """Does the score q_m·k_n of RoPE-rotated vectors depend on 'offset' (m - n) only, or on 'both' positions?"""
    from core.positions import rope

    rot, _ = _rope(state)
    check = rope.check_view(rot.inv_freq, _int(state, "rope_n", 64, 8, 512), rot.m)
    correct = "offset" if check.max_spread <= 1e-9 * max(1.0, check.score_range) else "both"
    return Answer("choice", correct, ("offset", "both"), None, {"spread": check.max_spread})


@register("positions.pair_order", "order")
def positions_pair_order(params, state):
    """Pairs 0, the middle one and the last from fastest to slowest turning."""
    rot, _ = _rope(state)
    n = rot.d // 2
    pairs = sorted({0, n // 2, n - 1})
    labels = {p: f"pair {p}" for p in pairs}
    order = tuple(labels[p] for p in sorted(pairs, key=lambda p: -float(rot.inv_freq[p])))
    return Answer("order", order, _mixed(labels.values()), None, {"d": rot.d})


# ---- /rope-scaling ------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _frequencies(factor: float, seq_len: int):
    from core.rope_scaling import formulas

    return formulas.frequency_view(factor, seq_len)


def _scaling(state) -> tuple[float, dict]:
    factor = _float(state, "factor", 4.0)
    factor = factor if factor in (2.0, 4.0, 8.0, 16.0, 32.0) else 4.0
    maxd = _int(state, "maxd", 131072)
    maxd = maxd if maxd in (16384, 32768, 65536, 131072) else 131072
    view = _frequencies(factor, maxd)
    return factor, {r["method"]: r for r in view.rows}


@register("rope_scaling.ratio", "number")
def rope_scaling_ratio(params, state):
    """How many times longer pair `pair`'s wavelength is under `method` than under plain RoPE (the ratio curve)."""
    factor, rows = _scaling(state)
    ratio = np.asarray(rows[params.get("method", "linear")]["ratio"])
    i = _pair(params, len(ratio))
    return _number(float(ratio[i]), params, max(0.01, abs(float(ratio[i])) * 0.01), pair=i, factor=factor)


@register("rope_scaling.attention_factor", "number")
def rope_scaling_attention_factor(params, state):
    """The factor `method` multiplies cos and sin by (YaRN: 0.1 ln s + 1)."""
    factor, rows = _scaling(state)
    return _number(float(rows[params.get("method", "yarn")]["attention_factor"]), params, 0.005, factor=factor)


@register("rope_scaling.kept_pairs", "number")
def rope_scaling_kept_pairs(params, state):
    """How many of the 32 pairs `method` leaves unchanged (ratio 1) at the page's factor."""
    factor, rows = _scaling(state)
    row = rows[params.get("method", "yarn")]
    return _number(int(row["kept"]), params, 0, factor=factor, interpolated=int(row["interpolated"]))


@register("rope_scaling.uniform_method", "choice")
def rope_scaling_uniform_method(params, state):
    """Which method stretches every wavelength by the same factor (> 1)."""
    _, rows = _scaling(state)
    options = tuple(m for m in params.get("methods", ("linear", "dynamic", "yarn", "llama3")) if m in rows)
    uniform = [m for m in options if np.ptp(np.asarray(rows[m]["ratio"])) < 1e-6 and rows[m]["ratio"][0] > 1 + 1e-6]
    if len(uniform) != 1:
        raise ValueError(f"expected one uniform method among {options}, found {uniform}")
    return Answer("choice", uniform[0], options, None, {})


@register("rope_scaling.slowest_order", "order")
def rope_scaling_slowest_order(params, state):
    """Methods from the longest to the shortest wavelength of their slowest pair."""
    _, rows = _scaling(state)
    methods = tuple(m for m in params.get("methods", ("default", "linear", "dynamic")) if m in rows)
    slowest = {m: float(np.asarray(rows[m]["wavelength"])[-1]) for m in methods}
    return Answer("order", tuple(sorted(methods, key=lambda m: -slowest[m])), _mixed(methods), None, slowest)


# ---- /moe ------------------------------------------------------------------------------------------------------------

MOE_TEXT = "The little cat sees a big dog. She runs to the park quickly, and they play together!"


def _moe_model(variant: str):
    from core.models import registry

    return _model(registry.moe_key(variant))


@functools.lru_cache(maxsize=8)
def _moe_run(variant: str, text: str):
    from core.moe import views

    return views.run_text(_moe_model(variant), text)


def _moe(state, variant: str | None = None):
    from core.models import moe_model
    from core.moe import views

    text = _text(state, "text", MOE_TEXT)
    variant = variant or _str(state, "ckpt", "balanced", moe_model.VARIANTS)
    run = _moe_run(variant, text)
    layer = _int(state, "layer", 1, 0, len(run.router_logits) - 1)
    cf = _float(state, "cf", 1.25, 0.25, 4.0)
    return views.text_routing({variant: run}, variant, layer, cf)


@register("moe.expert", "number")
def moe_expert(params, state):
    """The expert (0-based) the router sends word `word` to first, at the page's checkpoint and layer."""
    view = _moe(state)
    t = _word_position(view.tokens, params.get("word"), len(view.tokens) - 1)
    first = int(np.argmax(view.probs[t]))
    return _number(first, params, 0, token=view.tokens[t], p=float(view.probs[t, first]), layer=view.layer)


@register("moe.capacity", "number")
def moe_capacity(params, state):
    """Assignments one expert may take at the page's capacity factor: ceil(cf · T · k / E)."""
    view = _moe(state)
    return _number(view.capacity, params, 0, tokens=len(view.tokens), k=view.top_k, experts=view.n_experts)


@register("moe.dropped", "number")
def moe_dropped(params, state):
    """Assignments dropped because their expert was full, at the page's capacity factor."""
    view = _moe(state)
    return _number(view.n_dropped, params, 0, capacity=view.capacity, assignments=view.n_assignments)


@register("moe.more_even", "choice")
def moe_more_even(params, state):
    """Which checkpoint spreads this text's assignments more evenly over the experts (lower deviation)."""
    from core.models import moe_model

    dev = {v: _moe(state, v).deviation for v in moe_model.VARIANTS}
    return Answer("choice", min(dev, key=dev.get), tuple(moe_model.VARIANTS), None, dev)


# ---- /flash-attention and /sdpa-gqa ----------------------------------------------------------------------------------


def _kv_view(state):
    from core.kv_cache.memory import DTYPE_BYTES
    from core.sdpa_gqa import configs as kvc
    from core.sdpa_gqa.views import kv_cache_view

    key = _str(state, "cfg", "llama-3-8b", [*kvc.PRESETS, "custom"])
    if key == "custom":
        heads, kv = _int(state, "heads", 32, 1, 256), _int(state, "kv", 8, 1, 256)
        if kv > heads or heads % kv:
            raise ValueError("the query heads must divide by the key/value heads")
        cfg = kvc.ModelConfig("custom", _int(state, "layers", 32, 1, 512), heads, kv, _int(state, "hd", 128, 1, 1024),
                              max_context=0, dtype="bfloat16", source="")  # fmt: skip
    else:
        cfg = kvc.PRESETS[key]
    dtype = _str(state, "dtype", "bfloat16", list(DTYPE_BYTES))
    return kv_cache_view(cfg, _int(state, "ctx", 8192, 1, 10_000_000), _int(state, "batch", 1, 1, 4096), dtype)


@register("sdpa_gqa.kv_bytes", "number")
def sdpa_gqa_kv_bytes(params, state):
    """The KV cache of the page's model at its context, batch and number format, in `unit` (GiB, MiB or bytes)."""
    view = _kv_view(state)
    unit = params.get("unit", "GiB")
    value = view.total / {"GiB": 1024**3, "MiB": 1024**2, "bytes": 1}[unit]
    return _number(value, params, abs(value) * 0.01, unit=unit, model=view.cfg.name)


@register("sdpa_gqa.group_size", "number")
def sdpa_gqa_group_size(params, state):
    """Query heads sharing one key/value head in the page's model (= how many times smaller than MHA its cache is)."""
    view = _kv_view(state)
    return _number(view.cfg.group_size, params, 0, heads=view.cfg.heads, kv=view.cfg.kv_heads)


@register("sdpa_gqa.variant_order", "order")
def sdpa_gqa_variant_order(params, state):
    """MHA, GQA and MQA of the page's model from the largest to the smallest KV cache."""
    view = _kv_view(state)
    size = {r["variant"]: r["bytes"] for r in view.variants}
    return Answer("order", tuple(sorted(size, key=lambda v: -size[v])), _mixed(size), None, size)


# ---- /transformer-xl: evicting from the KV cache ---------------------------------------------------------------


@register("transformer_xl.visible_keys", "number")
def transformer_xl_visible_keys(params, state):
    """Keys the token at position `query` still sees when the cache keeps the last W (the page's window, its own
    key included) and, with policy sinks_window, the first S (the page's sinks)."""
    from core.kv_cache.eviction import visible_positions

    window, sinks = _int(state, "win", 16, 1, 1024), _int(state, "sinks", 4, 0, 64)
    policy = params.get("policy", "sinks_window")
    query = int(params.get("query", 100))
    return _number(len(visible_positions(policy, query, window, sinks)), params, 0, window=window, sinks=sinks,
                   query=query)  # fmt: skip


def _measured():
    from core import transformer_xl as tx

    view = tx.measured_view()
    if view is None:
        raise ValueError("no committed results/transformer_xl.json")
    return view


@register("transformer_xl.window_loss_rises", "choice")
def transformer_xl_window_loss_rises(params, state):
    """In the committed SmolLM2 run: once the first tokens have left a plain window, is its mean loss above full
    attention's? 'yes' or 'no'."""
    view = _measured()
    window, full = view.mean_past["window"], view.mean_past["full"]
    return Answer("choice", "yes" if window > full else "no", ("yes", "no"), None,
                  {"window": window, "full": full, "past_from": view.past_from})  # fmt: skip


@register("transformer_xl.best_after_eviction", "choice")
def transformer_xl_best_after_eviction(params, state):
    """In the committed run: of the methods that evict or cut (not full attention), the lowest mean loss once the
    first tokens have left the window."""
    view = _measured()
    options = tuple(m for m in view.mean_past if m != "full")
    best = min(options, key=view.mean_past.get)
    return Answer("choice", best, options, None, {"loss": view.mean_past[best], "full": view.mean_past["full"]})
