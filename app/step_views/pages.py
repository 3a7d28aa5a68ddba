"""The step views of the topics whose figures need no model, or MiniLM only (loaded in seconds and kept)."""

from __future__ import annotations

from app import shared, ui
from app.views.head_detectors import TOP as DETECTOR_TOP
from app.views.rope_scaling import formulas as rope_scaling_page
from app.views.transformer_xl.ideas import CONTEXT_N as XL_CONTEXT
from app.views.transformer_xl.ideas import LAYERS as XL_LAYERS
from core import ablation, attention, head_detectors, multi_head, sdpa_steps
from core import flash_attention as flash
from core import lessons as core_lessons
from core import transformer_xl as xl
from core.linear_attention.state import COST_SIZES
from core.linear_attention.views import associativity_view, implied_view
from core.masks import batch as masks_batch
from core.masks import encoder_decoder as masks_kinds
from core.models import registry
from core.positions import alibi, extrapolation, learned, relative, rope, sinusoidal
from core.positions.state import base_from_log10
from core.sdpa_gqa.state import model_config as gqa_config
from core.sdpa_gqa.views import kv_cache_view
from core.state import Values
from viz import ablation as ablation_figures
from viz import attention as attention_figures
from viz import flash_attention as flash_figures
from viz import head_detectors as detector_figures
from viz import multi_head as multi_head_figures
from viz import rope_scaling as rope_scaling_figures
from viz import sdpa_steps as sdpa_figures
from viz import transformer_xl as xl_figures
from viz.labels import indexed_labels
from viz.linear_attention import cost_figure, implied_figures
from viz.masks import attention_kind_figure, mask_steps_figures
from viz.positions import alibi as alibi_figures
from viz.positions import learned as learned_figures
from viz.positions import relative as relative_figures
from viz.positions import rope as rope_figures
from viz.positions import sinusoidal as sinusoidal_figures
from viz.positions.extrapolation import accuracy_figure as extrapolation_figure
from viz.sdpa_gqa import kv_cache_figure

from .registry import CHEAP_MODELS, Drawn, asks, step_view

# ---- one entry per topic -----------------------------------------------------------------------------------


@step_view("sdpa-steps")
def _sdpa_steps(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The part the step's state sets: the lookup's weights (lq, tau), the saturation curves (sdk, keys), else one
    of the four steps on the preset's matrices as the page starts them: the matrix the question asks about (the
    weights otherwise)."""
    words = ui.texts("sdpa_steps.figure")
    if {"lq", "tau"} & set(step.state):
        names = [n.strip() for n in ui.t("sdpa_steps", "lookup_names").split(",")]
        lookup = sdpa_steps.lookup_view(None if s.lq == sdpa_steps.LOOKUP_OTHER_KEY else int(s.lq), s.tau, names)
        data = {
            "key": lookup.names,
            "score": lookup.scores,
            "soft_weight": lookup.weights,
            "dict_weight": lookup.hard_weights,
        }
        return [Drawn(sdpa_figures.lookup_figures(lookup, words)["weights"], "lookup-weights", data)]
    if {"sdk", "keys"} & set(step.state):
        sat = sdpa_steps.saturation_view(s.sdk, s.keys, seed=0)  # the page's seed (sdpa_steps/saturation.py)
        return [Drawn(sdpa_figures.saturation_figures(sat, words)["entropy"], f"softmax-saturation-n{s.keys}")]
    view = sdpa_steps.preset_view(s.preset, s.dk, s.dv)
    if view.steps is None:
        return []
    fn, params = asks(step)
    matrix = params.get("matrix", "weights") if fn == "sdpa_steps.cell" else "weights"
    cols = view.v_labels if matrix == "output" else view.k_labels
    fig = sdpa_figures.step_figures(view, words)[matrix]
    return [Drawn(fig, f"sdpa-{matrix}", getattr(view.steps, matrix), view.q_labels, cols)]


@step_view("masks")
def _masks(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The three kinds of attention when the step picks source and target sentences (src, tgt); else the picked
    head's weights on the picked sentence after its mask."""
    words = ui.texts("masks.figure")
    lists = s.token_lists
    if {"src", "tgt"} & set(step.state):
        head = s.head
        kinds = masks_kinds.encoder_decoder(lists[int(s.src)], lists[int(s.tgt)], seed=0)
        drawn = []
        for k in kinds.kinds:
            rows, cols = indexed_labels(k.query_tokens), indexed_labels(k.key_tokens)
            fig = attention_kind_figure(k, words, head, rows, cols)
            drawn.append(Drawn(fig, f"{k.kind}-head{head}", k.weights[head], rows, cols))
        return drawn
    i = int(s.row)
    view = masks_batch.mask_steps_view(lists, i, s.head, s.mask, seed=0)  # the page's seed (masks/mask_steps.py)
    labels = indexed_labels(view.tokens)
    fig = mask_steps_figures(view, words, labels)["weights"]  # the masked cells are crossed out in it
    return [Drawn(fig, f"weights-{s.mask}-sentence{i}-head{s.head}", view.weights, labels, labels)]


@step_view("positions")
def _positions(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The step's part: RoPE's check that scores depend on m - n only for that question, else every pair's angle
    by position; sinusoidal positions' dot products between positions; Shaw's clipped offsets; ALiBi's bias of the
    step's head; the committed extrapolation accuracies; MiniLM's learned vectors' cosine similarities."""
    words = ui.texts("positions.figure")
    if s.part == "sinusoidal":
        enc = sinusoidal.encoding_view(s.n, s.d, base_from_log10(s.base))
        return [
            Drawn(sinusoidal_figures.dot_figure(enc, words), "sinusoidal-dot", enc.dots, enc.positions, enc.positions)
        ]
    if s.part == "learned":
        if s.model not in CHEAP_MODELS:
            return []
        view = learned.similarity_view(registry.shared(s.model), s.npos)
        return [
            Drawn(
                learned_figures.similarity_figure(view, words),
                "minilm-position-similarity",
                view.shown,
                view.axis,
                view.axis,
            )
        ]
    if s.part == "relative":
        view = relative.shaw_view(s.rel_n, s.rel_d, s.clip, s.seed)
        return [
            Drawn(relative_figures.offsets_figure(view, words), "shaw-offsets", view.offsets, view.labels, view.labels)
        ]
    if s.part == "alibi":
        view = alibi.alibi_view(s.heads, s.al_n, s.al_head if s.heads > 1 else 0)
        return [
            Drawn(
                alibi_figures.bias_figure(view, words),
                f"alibi-bias-head{view.head}",
                view.bias,
                view.labels,
                view.labels,
            )
        ]
    if s.part == "extrapolation":
        data = extrapolation.load_extrapolation()
        if data is None:
            return []
        view = extrapolation.extrapolation_view(data)
        table = {"position": view.positions, **{k: view.accuracy[k] for k in view.accuracy}}
        return [Drawn(extrapolation_figure(view, words), "position-extrapolation", table)]
    if s.part != "rope":
        return []
    rot = rope.rotation_view(s.rope_d, base_from_log10(s.rope_base), s.m, s.layout)
    if asks(step)[0] == "positions.relative_only":
        check = rope.check_view(rot.inv_freq, s.rope_n, s.m)
        return [
            Drawn(
                rope_figures.check_scores_figure(check, words),
                "rope-score-check",
                check.scores,
                check.labels,
                check.labels,
            )
        ]
    angles = rope.angles_view(rot.inv_freq, s.rope_n, s.rope_pair)
    return [
        Drawn(
            rope_figures.angles_figure(angles, words),
            "rope-angles",
            angles.angles,
            angles.row_labels,
            angles.col_labels,
        )
    ]


@step_view("multi-head")
def _multi_head(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The heads part: the table as a figure (d_model 512, the step's n); the layer part: the walk through the
    step's MiniLM layer at its head. The order part has no figure."""
    words = ui.texts("multi_head.figure")
    if s.part == "heads":
        rows = multi_head.head_count_rows(multi_head.PAPER_D_MODEL, s.n)
        return [Drawn(multi_head_figures.head_count_figure(rows, words), "heads")]
    if s.part != "layer" or s.model not in CHEAP_MODELS or not s.text.strip():
        return []
    walk = multi_head.layer_walk(registry.shared(s.model), s.text, s.layer)
    return [Drawn(multi_head_figures.chain_figure(walk, s.head, words), f"layer{s.layer}-head{s.head}")]


@step_view("attention")
def _attention(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The head view (one head over the shown tokens) on MiniLM; the page's other views keep the buttons."""
    if s.view != "head" or s.model not in CHEAP_MODELS or not s.text.strip() or s.win:
        return []
    trace = attention.page_trace(registry.shared(s.model), s.text)
    tokens = attention.select_tokens(trace, 0, s.nospecial)
    view = attention.head_view(trace, tokens, s.layer, s.head)
    fig = attention_figures.figure(view, ui.texts("attention.figure"))
    return [Drawn(fig, f"layer{s.layer}-head{s.head}", view.weights, view.labels, view.labels)]


@step_view("rope-scaling")
def _rope_scaling(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The formula part: each method's wavelength per pair for an order of the slowest pairs, else the ratio to
    plain RoPE per pair (the kept pairs, the stretched ones). The experiment part keeps the buttons."""
    freq = rope_scaling_page.frequencies(float(s.factor), s.maxd)  # the page's call: collection paused
    words, factor = ui.texts("rope_scaling.figure"), float(s.factor)
    if asks(step)[0] == "rope_scaling.slowest_order":
        data = {"pair": freq.pairs, **{r["method"]: r["wavelength"] for r in freq.rows}}
        return [Drawn(rope_scaling_figures.wavelength_figure(freq, words), f"rope-wavelengths-s{factor:g}", data)]
    data = {"pair": freq.pairs, **{r["method"]: r["ratio"] for r in freq.rows}}
    return [Drawn(rope_scaling_figures.ratio_figure(freq, words), f"rope-interpolation-s{factor:g}", data)]


@step_view("linear-attention")
def _linear_attention(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The implied matrices (softmax's beside linear attention's) when the step sets that part (im_n, im_d,
    spread); else the two orders' cost against n at the step's d."""
    words = ui.texts("linear_attention.figure")
    if {"im_n", "im_d", "spread"} & set(step.state):
        view = implied_view(s.im_n, s.im_d, s.spread, s.causal, s.seed)
        return [Drawn(fig, f"{kind}-weights-n{s.im_n}-s{s.spread:g}", getattr(view, kind), view.queries, view.keys)
                for kind, fig in zip(("softmax", "linear"), implied_figures(view, words))]  # fmt: skip
    view = associativity_view(s.n, s.d, list(COST_SIZES))
    return [Drawn(cost_figure(view, words), f"associativity-d{s.d}", {"n": view.sizes, **view.curves})]


FLASH_TRAFFIC_KEYS = {"tn", "td", "sram", "bytes"}  # the page's traffic part (app/views/flash_attention/traffic.py)
FLASH_STATISTICS_ANSWERS = {"flash_attention.running_max", "flash_attention.running_sum"}  # questions on m and l


@step_view("flash-attention")
def _flash_attention(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The HBM traffic at the step's n, d, on-chip memory and format when it sets them (the traffic part's keys),
    else the tiled walk of the step's query tile at its key-tile step (the page's default: the last): the running
    maximum and sum for a question about them, else the score tiles."""
    words = ui.texts("flash_attention.figure")
    if FLASH_TRAFFIC_KEYS & set(step.state):
        view = flash.traffic_view(s.tn, s.td, flash.sram_elements(s.sram, s.bytes), s.bytes)
        return [Drawn(flash_figures.traffic_figure(view, words), "flash-hbm-traffic", {"n": view.sizes, **view.curves})]
    view = flash.walk(q_tile=int(s.qtile), n=s.n, d=s.d, br=s.br, bc=s.bc, causal=s.causal, padded_keys=s.pad,
                      seed=s.seed)  # fmt: skip
    at = s.step if len(view.steps) > 1 else 0  # the state's default: the last step, as the page starts
    if asks(step)[0] in FLASH_STATISTICS_ANSWERS:
        return [Drawn(flash_figures.statistics_figure(view, words, at), "flash-m-l")]
    return [Drawn(flash_figures.tiles_figure(view, words, at), "flash-tiles", view.weights, view.labels, view.labels)]


@step_view("sdpa-gqa")
def _sdpa_gqa(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The KV cache of the step's model as MHA, GQA and MQA at its context, batch and number format."""
    cfg = gqa_config(s, ui.t("sdpa_gqa", "custom"))
    if cfg is None:
        return []
    view = kv_cache_view(cfg, s.ctx, s.batch, s.dtype)
    data = {k: [r[k] for r in view.variants] for k in ("variant", "kv_heads", "bytes")}
    return [Drawn(kv_cache_figure(view, ui.texts("sdpa_gqa.figure")), f"kv-cache-{cfg.name}-{s.ctx}", data)]


@step_view("transformer-xl")
def _transformer_xl(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The committed SmolLM2 run's loss by position for a question about it, else how far back each method reaches
    at the step's segment, window and sinks. The live part keeps the buttons."""
    if asks(step)[0] in ("transformer_xl.loss_order", "transformer_xl.best_after_eviction"):
        measured = xl.measured_view()
        if measured is None:
            return []
        fig = shared.figures(xl_figures.lines_figure, measured.by_block, "transformer_xl.figure")
        return [Drawn(fig, "xl-loss-by-position", measured.by_block.table())]
    # the page's own reach and figure at these settings (app/shared.py): made once for the page and every step
    view = shared.view(xl.reach_view, XL_CONTEXT, s.seg, s.win, s.sinks, XL_LAYERS)
    fig = shared.figures(xl_figures.lines_figure, view.lines, "transformer_xl.figure")
    return [Drawn(fig, "xl-effective-context", view.lines.table())]


@step_view("head-detectors")
def _head_detectors(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The committed map of the step's detector on the step's model (no model is loaded); a live map keeps the
    buttons."""
    if s.live:
        return []
    view = head_detectors.committed_view(s.model, s.detector, DETECTOR_TOP)
    if view is None:
        return []
    fig = detector_figures.detector_grid(view, ui.texts("head_detectors.figure"))
    return [Drawn(fig, f"{view.model_key}-{view.detector}", view.scores, view.layer_labels, view.head_labels)]


@step_view("ablation")
def _ablation(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """A committed card: the harm of removing its heads against the placebo draws (a card without heads to test
    has no figure). The live part keeps the buttons."""
    cards = ablation.committed_cards() if s.part == "cards" else None
    view = cards.get(s.card) if cards else None
    if view is None or view.status in ("no_heads", "no_candidates"):
        return []
    fig = ablation_figures.claim_figure(view, ui.texts("ablation.figure"))
    return [Drawn(fig, f"ablation-{view.key}", {"placebo_harm": list(view.placebo_harms)})]
