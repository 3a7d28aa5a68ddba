"""The step views of the topics that run a model (or read one's committed results): the page's main figure for the
part and the question of the step, from the page's own helpers (app/models.py and the page's modules: the process's
one copy of each model, the page's caches, the heavy-work queue with its place and wait where the page queues). A
model not installed here, or a learner's folder, leaves the step with its buttons."""

from __future__ import annotations

from collections.abc import Mapping

from app import models, shared, ui
from app.views import padded_batch as padded_page
from app.views.antecedents.evaluation import accuracy_figure, per_head_figure
from app.views.antecedents.sentence import ranking_figure
from app.views.long_maps import pooled_map
from app.views.long_maps.compute import compute as long_maps_compute
from app.views.long_maps.settings import Display, Request
from app.views.moe.routing import text_view as moe_text_view
from core import antecedents as ante
from core import kv_cache as kc
from core import lessons as core_lessons
from core import logit_lens as lens
from core import padded_batch
from core import why_head as wh
from core.antecedents import view as antecedent_data
from core.encoder_decoder import model as ed_model
from core.encoder_decoder import view as edv
from core.kv_cache import views as kv_views
from core.kv_cache.state import MAX_PROMPT_TOKENS, generation_options
from core.kv_cache.state import STATE as KV_CACHE
from core.long_maps.state import RANDOM
from core.models import moe_model, registry
from core.rnn_attention import compare as rnn_compare
from core.rnn_attention import model as rnn_model
from core.rnn_attention import view as rnn_view
from core.rope_scaling import long_context
from core.state import Values
from viz import encoder_decoder as ed_figures
from viz import kv_cache as kv_figures
from viz import logit_lens as lens_figures
from viz import moe as moe_figures
from viz import padded_batch as padded_figures
from viz import rnn_attention as rnn_figures
from viz import why_head as why_figures

from .registry import Drawn, asks, step_view

KV_STEP_COLS = 96  # the page's columns of a pooled attention row (app/views/kv_cache/show.py MAX_COLS)


def _installed(key: str) -> bool:
    """A shipped model this server can load (a learner's folder, or a model whose package is missing: the buttons)."""
    return key in registry.offered() and registry.model_status().get(key) is None


# ---- the shipped encoder-decoder and the GRU beside it --------------------------------------------------------


@step_view("rnn-attention")
def _rnn_attention(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The translate part: the GRU's alignment of the step's sentence (both shipped translators); the cost part:
    the work and path length of a recurrent and a self-attention layer against n at the step's d."""
    words = ui.texts("rnn_attention.figure")
    if s.part == "cost":
        view = rnn_compare.cost_view(s.n, s.d)
        data = {"n": view.lengths, "recurrent": view.recurrent, "attention": view.attention}
        return [Drawn(rnn_figures.cost_figure(view, words), "rnn-cost", data)]
    if s.part != "translate" or not s.text.strip() or rnn_model.status() or ed_model.status():
        return []
    view = models.computed(rnn_model.RECORD, rnn_view.sentence_view_of, s.text, s.target)
    return [Drawn(rnn_figures.alignment_figure(view, words), "rnn-alignment", {"weights": view.attention})]


@step_view("encoder-decoder")
def _encoder_decoder(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The steps part on the shipped model: the encoder's self-attention for a question about the source, the
    cross-attention at the step for one about where the decoder looks, else the next-token candidates."""
    if s.part != "steps" or s.model != registry.ENCODER_DECODER or not s.text.strip() or ed_model.status():
        return []
    run = models.computed(registry.ENCODER_DECODER, edv.run_sentence, s.text, s.target)
    v = edv.step_view(run, s.mode, s.step, s.layer, s.head)
    words, fn = ui.texts("encoder_decoder.figure"), asks(step)[0]
    if fn == "encoder_decoder.source_length":
        fig = ed_figures.encoder_figure(v, words)
        return [Drawn(fig, f"encoder-L{v.layer}-H{v.head}", v.encoder, v.source_labels, v.source_labels)]
    if fn == "encoder_decoder.cross_top":
        fig = ed_figures.cross_figure(v, words)
        return [Drawn(fig, f"cross-L{v.layer}-H{v.head}-t{v.step}", v.cross, v.query_labels, v.source_labels)]
    return [Drawn(ed_figures.top_figure(v, words), f"next-token-t{v.step}")]


# ---- pretrained models through the attention contract -------------------------------------------------------


@step_view("antecedents")
def _antecedents(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """A step about the step's sentence: the heads ranked by their weight from the pronoun on the chosen candidate
    (the page's default pronoun and candidates); a step about the stored held-out test: its accuracies against the
    first-noun baseline, or the model's per-head accuracies for the question about heads that switch."""
    fn = asks(step)[0]
    if fn in ("antecedents.partner_outcome", "antecedents.head_beats_baseline"):
        if not _installed(s.model) or not s.text.strip():
            return []
        sentence = s.sentence
        p = int(s.pron)
        cands = sentence.candidates(p)
        analysis = ante.measure(s.model_object, models.run(s.model, s.model_object, [s.text]), p, cands)
        if analysis is None:
            return []
        _, fig, table = ranking_figure(analysis, sentence, p, cands, int(s.rank), s.top)
        return [Drawn(fig, "antecedent-heads", table)]
    results = antecedent_data.load_results()
    if results is None:
        return []
    if fn == "antecedents.switching_heads":
        res = results["models"].get(s.model)
        if res is None:
            return []
        fig, acc_map = per_head_figure(s.model, res)
        return [Drawn(fig, f"antecedent-per-head-{s.model}", acc_map, *antecedent_data.grid_labels(acc_map))]
    accuracy = accuracy_figure(results)
    return [] if accuracy is None else [Drawn(accuracy[0], "antecedent-accuracy", accuracy[1])]


@step_view("padded-batch")
def _padded_batch(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The batch's attention mask for the question about padding tokens; else the step's sentence's head inside
    the batch (its padded rows and columns), as the page draws them."""
    if not _installed(s.model):
        return []
    lines, _ = padded_batch.split_lines(s.text, padded_batch.MAX_SENTENCES)
    if len(lines) < 2:
        return []
    model = s.model_object
    limit = padded_batch.page_tokens(model)
    batch_run = models.computed(s.model, padded_batch.run_batch, tuple(lines), limit, s.pad, not s.nomask)
    words = ui.texts("padded_batch.figure")
    if asks(step)[0] == "padded_batch.pad_tokens":
        mask = padded_page.mask_of(s.model, batch_run, lines, limit)  # the page's, and its figure
        fig = shared.figures(padded_figures.mask_figure, mask, "padded_batch.figure")
        return [Drawn(fig, "attention-mask", mask.mask, padded_figures.mask_rows(mask, words), mask.positions)]
    i = int(s.row)
    view = padded_batch.sentence_view(batch_run, i, s.layer, s.head)
    fig = padded_figures.sentence_figure(view, words, i)
    # the caption's numbers (a step draws no table): padding queries' rows are no finding, as on the page
    name = f"padded-sentence{i}-layer{s.layer}-head{s.head}"
    return [Drawn(fig, name, view.real_query_weights, view.labels, view.labels)]


# ---- decoders: the page's runs go through the heavy-work queue ----------------------------------------------


@step_view("logit-lens", model_pass=True)
def _logit_lens(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The lens: each position's top token after every layer, the model's final answer's probability in colour."""
    if not _installed(s.model) or not s.text.strip():
        return []
    view = models.computed(s.model, lens.logit_lens, s.text, queue="logit_lens")
    words = ui.texts("logit_lens.figure")
    fig = lens_figures.lens_figure(view, words)
    return [
        Drawn(fig, "logit-lens", view.final_prob.numpy(), lens_figures.stage_labels(view, words), view.position_labels)
    ]


@step_view("why-head", model_pass=True)
def _why_head(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """RoPE part: the band shares of every head for the question about the carrier band, else how much of each
    head's pattern position alone and content alone keep; absolute part: each head's four terms' shares."""
    if not _installed(s.model) or not s.text.strip():
        return []
    words = ui.texts("why_head.figure")
    if s.part == "absolute":
        parts = models.computed(s.model, wh.absolute_parts_of, s.text, s.where, wh.MAX_TOKENS, queue="why_head")
        view = wh.absolute_view(parts, s.head, s.term)
        labels = [f"H{h}" for h in range(len(view.shares))]
        terms = [words(f"term_{k}") for k in wh.TERMS]
        return [Drawn(why_figures.term_shares_figure(view, words), f"term-shares-{s.where}", view.shares, labels,
                      terms)]  # fmt: skip
    n_bands = s.bands if s.split == "equal" else None
    asked = s.text, s.layer, s.split, n_bands, wh.MAX_TOKENS
    parts = models.computed(s.model, wh.rope_parts_of, *asked, queue="why_head")
    view = wh.rope_view(parts, s.head, s.band, s.pattern)
    if asks(step)[0] == "why_head.carrier_band":
        labels = [f"H{h}" for h in range(len(view.shares))]
        bands = [why_figures.band_name(view, b, words) for b in range(len(view.band_pairs))]
        return [Drawn(why_figures.band_shares_figure(view, words), f"band-shares-l{s.layer}", view.shares, labels,
                      bands)]  # fmt: skip
    return [Drawn(why_figures.kept_figure(view, words), f"kept-l{s.layer}", view.kept)]


def _kv_cache_read(raw: Mapping[str, str]) -> Values:
    """/kv-cache's state with its generation run first through the page's queue (models.computed): the step
    picker's bounds need the generation, which the state's own context would otherwise run outside it."""
    first = KV_CACHE.read(raw, last_step=0)
    if not _installed(first.model):
        return first
    ids = kc.prompt_ids(first.model_object, first.prompt, MAX_PROMPT_TOKENS, first.new)[0]
    gen = models.computed(first.model, kc.generate, tuple(ids), **generation_options(first), queue="generate")
    return KV_CACHE.read(raw, generation=gen, last_step=gen.last_step)


@step_view("kv-cache", model_pass=True, read=_kv_cache_read)
def _kv_cache(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The cache's bytes against the context for a question about its size; the next-token candidates for one
    about the next token; else one step's attention over the cached keys at the step's layer."""
    if not _installed(s.model) or not s.prompt.strip():
        return []
    gen, words, fn = s.generation, ui.texts("kv_cache.figure"), asks(step)[0]
    if fn == "kv_cache.bytes_at":
        view = kv_views.memory(gen)
        return [Drawn(kv_figures.memory_figure(view, words), "kv-cache-bytes", view.curves)]
    if fn == "kv_cache.next_token":
        top = kv_views.next_tokens(gen, s.step)
        return [Drawn(kv_figures.top_figure(top, words), f"kv-top5-step{top.step}")]
    view = kv_views.step_attention(gen, s.step, s.layer, KV_STEP_COLS)
    return [
        Drawn(
            kv_figures.step_figure(view, words),
            f"kv-step{view.step}-layer{view.layer}",
            view.rows,
            kv_figures.step_rows(view, words),
            view.labels,
        )
    ]


@step_view("long-maps", model_pass=True)
def _long_maps(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """One head's pooled map of the step's source (random q and k, or a model's layer on the shipped document) at
    its length, statistic and resolution: the page's computation, as if its button had been pressed."""
    if s.src != RANDOM and (not _installed(s.src) or s.doc != "licences"):
        return []
    text = "" if s.src == RANDOM else long_context.load_long_text()
    req = Request(s.src, int(s.n), s.layer if s.src != RANDOM else 0, s.seed if s.src == RANDOM else 0, None, s.shape)
    result = long_maps_compute(ui.texts("long_maps"), req, long_context.text_fingerprint(text), text)
    if result is None:
        return []
    display = Display(s.head, s.stat, int(s.side), s.log, int(s.zsize), s.zq, s.zk)
    view, fig, name = pooled_map.figure(result.maps, s.src, req.layer, display, result.qk.k.shape[1])
    return [Drawn(fig, name, view.values)]


# ---- the repo's Mixture-of-Experts checkpoints ----------------------------------------------------------------


@step_view("moe")
def _moe(s: Values, step: core_lessons.Step) -> list[Drawn]:
    """The step's text routed at its layer and capacity factor: the router's probabilities for the question about
    a word's expert, each expert's load against its capacity for the one about capacity, else what is dropped as
    the capacity factor changes."""
    if not s.text.strip() or not _installed("moe"):  # the registry's MoE: every shipped checkpoint
        return []
    view = moe_text_view(tuple(moe_model.VARIANTS), s.ckpt, s.text, s.layer, s.cf)
    if view is None:
        return []
    words, fn, tag = ui.texts("moe.figure"), asks(step)[0], f"{s.ckpt}-layer{s.layer}"
    experts = moe_figures.expert_labels(view.n_experts, words)
    if fn == "moe.expert":
        labels = moe_figures.token_labels(view)
        return [Drawn(moe_figures.router_heatmap(view, words), f"moe-router-{tag}", view.probs, labels, experts)]
    if fn == "moe.capacity":
        data = {"expert": experts, "share": view.load.tolist(), "count": view.counts.tolist()}
        return [Drawn(moe_figures.load_figure(view, words), f"moe-load-{tag}", data)]
    data = {"capacity_factor": view.factors, "dropped_share": view.dropped_by_factor}
    return [Drawn(moe_figures.dropped_curve(view, words), f"moe-dropped-{tag}", data)]
