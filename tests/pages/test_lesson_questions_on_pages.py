"""Every shipped question against its page: the step's page is opened headless at the step's state (as the lesson's
link opens it), the number, token or option the page shows for what the question asks is read off the page, and it
must be the answer the lesson expects. A lesson and its page cannot drift apart: change what a page computes, or an
answer function, and the question fails here.

READERS maps an answer function to how a learner would read its answer on the page; a question whose function has
no reader fails test_every_shipped_question_is_read_on_its_page.

Every step's state, asked about or not, opens its page as a link does, with none of its parameters ignored
(test_every_step_opens_its_page_with_its_state): the same states, each opened once for both."""

from __future__ import annotations

import html
import math
import re

import numpy as np
import pytest

from app import catalog, i18n
from core import lessons as core
from core import why_head
from tests.answer_runs import shared_runs
from tests.apptest_helpers import (
    figure_by_key,
    figure_title_by_key,
    heatmap_by_key,
    number_after,
    open_view,
    plotted_values,
    shown_text,
)

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it

LESSONS = core.load_lessons(pages=catalog.BY_URL)
QUESTIONS = [(lesson.id, step) for lesson in LESSONS.values() for step in lesson.steps if step.question is not None]


_PAGES: dict[tuple, object] = {}


def opened(url: str, params: dict):
    """The page at `url` opened by a link with `params`, once per link in this file: 116 questions ask about 69
    states, the same 69 every step of a lesson opens (test_every_step_opens_its_page_with_its_state), and a test
    here only reads the page (one that acts on it opens its own: fresh_page)."""
    key = (url, tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in params.items())))
    if key not in _PAGES:
        _PAGES[key] = open_view(catalog.BY_URL[url].topic, params)
    return _PAGES[key]


def page(step, **changes):
    """The step's page at its state (with `changes`, as a learner moving a widget would)."""
    return opened(step.page, {**step.state, **{k: str(v) for k, v in changes.items()}})


def fresh_page(step, **changes):
    """The step's page at its state, opened for this reader alone (it clicks or types on it)."""
    return open_view(catalog.BY_URL[step.page].topic, {**step.state, **{k: str(v) for k, v in changes.items()}})


def close(shown: float, answer: core.Answer, shown_digits: int | None = None):
    """The page's number is the answer: the same up to what the page prints (shown_digits decimals)."""
    slack = 0.5001 * 10**-shown_digits if shown_digits is not None else 1e-9 * max(1.0, abs(float(answer.correct)))
    assert abs(shown - float(answer.correct)) <= slack, (shown, answer.correct)
    assert core.is_correct(answer, shown)


# ---- /sdpa-steps -------------------------------------------------------------------------------------------------


def sdpa_cell(step, q, a):
    z, _, _ = heatmap_by_key(page(step), f"fig-{q.params['matrix']}")
    close(float(z[q.params["row"]][q.params["col"]]), a, shown_digits=4)  # the heatmap carries 4 decimals


def sdpa_top_key(step, q, a):
    z, x, _ = heatmap_by_key(page(step), "fig-weights")
    assert x[int(np.argmax(z[q.params["query"]]))].strip() == a.correct


def sdpa_key_order(step, q, a):
    z, x, _ = heatmap_by_key(page(step), "fig-weights")
    row = z[q.params["query"]]
    assert tuple(x[j].strip() for j in np.argsort(-row, kind="stable")) == a.correct


def measured_variance(at, scaled: bool) -> float:
    return number_after(shown_text(at), "var(q·k / √d_k) =" if scaled else "var(q·k) =")


def sdpa_variance(step, q, a):
    close(
        measured_variance(page(step), q.params.get("scaled", False)), a, shown_digits=3 if q.params.get("scaled") else 2
    )


def sdpa_variance_growth(step, q, a):
    before, after = measured_variance(page(step), False), measured_variance(page(step, sdk=q.params["to"]), False)
    assert abs(after / before - a.correct) <= 0.01 * a.correct and core.is_correct(a, after / before)


def largest_weights(at) -> tuple[float, float]:
    """(scaled, unscaled) mean largest weight of a row, as the sentence under the saturation sliders says them."""
    found = re.search(r"its largest weight (\d+\.\d+); without it, \d+\.\d+ nats and (\d+\.\d+)", shown_text(at))
    return float(found.group(1)), float(found.group(2))


def sdpa_max_weight(step, q, a):
    scaled, unscaled = largest_weights(page(step))
    close(scaled if q.params.get("scaled", True) else unscaled, a, shown_digits=2)


def sdpa_more_peaked(step, q, a):
    scaled, unscaled = largest_weights(page(step))
    assert a.correct == ("scaled" if scaled > unscaled + 0.01 else "unscaled" if unscaled > scaled + 0.01 else "same")


def sdpa_max_weight_change(step, q, a):
    which = 0 if q.params.get("scaled", True) else 1
    before = largest_weights(page(step))[which]
    after = largest_weights(page(step, sdk=q.params["to"]))[which]
    assert a.correct == ("same" if abs(after - before) < 0.02 else "higher" if after > before else "lower")


# ---- /linear-attention and /flash-attention ----------------------------------------------------------------------


def linear_cost(step, q, a):
    at = page(step)
    table = at.dataframe[0].value
    row = ["quadratic", "linear"].index(q.params["order"])
    column = {"intermediate_numbers": "numbers held", "multiply_adds": "multiply-adds"}[q.params["what"]]
    close(float(str(table[column].iloc[row]).replace(",", "")), a)


def trick_numbers(at) -> dict:
    text = shown_text(at)
    # where the n x n order is the cheaper one, the page says the d x d order is cheaper *only* from the crossover on
    crossover = "cheaper only from n =" if "cheaper only from n =" in text else "cheaper from n ="
    return {"quadratic": number_after(text, "order takes"), "linear": number_after(text, "the d × d order takes"),
            "crossover": number_after(text, crossover)}  # fmt: skip


def linear_cheaper(step, q, a):
    n = trick_numbers(page(step))
    assert a.correct == ("linear" if n["linear"] < n["quadratic"] else "quadratic")


def linear_crossover(step, q, a):
    close(trick_numbers(page(step))["crossover"], a)


def linear_more_spread(step, q, a):
    text = shown_text(page(step))
    softmax, linear = number_after(text, "Mean row entropy: softmax"), number_after(text, "nats, linear")
    assert a.correct == ("linear" if linear > softmax else "softmax")


def flash_tiles(step, q, a):
    found = re.search(r"Query tiles × key tiles: \*\*(\d+)\*\* × \*\*(\d+)\*\*", shown_text(page(step)))
    tr, tc = int(found.group(1)), int(found.group(2))
    close({"query": tr, "key": tc, "all": tr * tc}[q.params["what"]], a)


def flash_running_max(step, q, a):
    table = next(d.value for d in page(step).dataframe if "m after" in d.value.columns)
    close(float(table["m after"].iloc[q.params["row"]]), a, shown_digits=4)


def flash_running_sum(step, q, a):
    table = next(d.value for d in page(step).dataframe if "l after" in d.value.columns)
    close(float(table["l after"].iloc[q.params["row"]]), a, shown_digits=4)


def flash_exact(step, q, a):
    diff = number_after(shown_text(page(step)), "max |difference| =")
    assert a.correct == ("rounding" if diff < 1e-9 else "approximate" if diff < 1e-3 else "different"), diff


def flash_hbm_traffic(step, q, a):
    table = next(d.value for d in page(step).dataframe if "total" in d.value.columns)
    row = ["naive", "flash1", "flash2"].index(q.params.get("algorithm", "naive"))
    elements = float(str(table["total"].iloc[row]).replace(",", ""))
    unit = q.params.get("unit", "MiB")
    close(
        elements * (1 if unit == "elements" else int(step.state.get("bytes", 2))) / (2**20 if unit == "MiB" else 1), a
    )


# ---- /sdpa-gqa and /transformer-xl -------------------------------------------------------------------------------


def gqa_kv_bytes(step, q, a):
    changes = {k: q.params[k] for k in ("ctx", "batch") if k in q.params}  # a prediction: the learner sets them
    total = number_after(shown_text(page(step, **changes)), "= **")  # the formula line: "= **17,179,869,184 bytes"
    close(total / {"GiB": 2**30, "MiB": 2**20, "bytes": 1}[q.params.get("unit", "GiB")], a, shown_digits=6)


def gqa_group_size(step, q, a):
    close(number_after(shown_text(page(step)), "groups of"), a)


def xl_visible_keys(step, q, a):
    """The page does not count one query's keys at the step's window; its masks figure draws the same rule at
    W = 4, S = 1 on 12 tokens: the last row of the policy's panel, counted, is the answer function at those."""
    from core.lessons.answers import compute  # the function under test, at the figure's own settings

    at = page(step)
    (trace,) = figure_by_key(at, f"fig-mask-{q.params.get('policy', 'sinks_window')}")["data"]
    z = np.asarray(plotted_values(trace["z"]))
    drawn = int((z[-1] > 0).sum())
    at_figure = compute(q.answer_fn, {**q.params, "query": len(z) - 1}, {"win": "4", "sinks": "1"})
    assert drawn == at_figure.correct == 5
    assert a.correct == min(q.params["query"] + 1, a.detail["window"] + a.detail["sinks"])  # the rule, at the step's


def committed_losses(at) -> dict[str, float]:
    table = next(d.value for d in at.dataframe if "method" in d.value.columns)
    past = next(c for c in table.columns if c.startswith("mean loss from"))
    names = {"independent segments": "independent", "XL memory": "xl", "window": "window",
             "sinks + window": "sinks_window", "full attention": "full"}  # fmt: skip
    return {names[m]: float(v) for m, v in zip(table["method"], table[past])}


def xl_loss_order(step, q, a):
    loss = committed_losses(page(step))
    assert tuple(sorted(q.params["methods"], key=loss.get)) == a.correct


def xl_best_after_eviction(step, q, a):
    loss = committed_losses(page(step))
    assert min((m for m in loss if m != "full"), key=loss.get) == a.correct


# ---- /masks --------------------------------------------------------------------------------------------------


def masks_allowed_count(step, q, a):
    kind = q.params.get("mask") or step.state.get("mask", "both")
    trace = next(t for t in figure_by_key(page(step), f"fig-mask-{kind}")["data"] if t.get("name") == "may attend")
    z = plotted_values(trace["z"]).astype(float)
    close(float(np.sum(np.isfinite(z) & (z != 0))), a)


def masks_top_key(step, q, a):
    z, x, y = heatmap_by_key(page(step), "fig-weights")
    row = next(i for i, label in enumerate(y) if label.split(" ", 1)[1] == q.params["query"])
    assert x[int(np.nanargmax(z[row]))] == a.correct


def kind_cells(at) -> dict[str, int]:
    """Cells each kind lets through: its weights, positive where allowed (a masked weight is exactly 0)."""
    return {k: int(np.sum(np.nan_to_num(heatmap_by_key(at, f"fig-{k}")[0].astype(float)) > 0))
            for k in ("encoder_self", "decoder_self", "cross")}  # fmt: skip


def masks_kind_order(step, q, a):
    cells = kind_cells(page(step))
    assert tuple(sorted(cells, key=lambda k: -cells[k])) == a.correct


def masks_cross_shape(step, q, a):
    z, _, _ = heatmap_by_key(page(step), "fig-cross")
    close(float(z.shape[1] if q.params.get("what", "keys") == "keys" else z.shape[0]), a)


# ---- /positions (RoPE) and /rope-scaling -----------------------------------------------------------------------


def rope_theta(step, pair, **changes) -> tuple[float, int]:
    """θ of a pair, as the title of its circle's figure writes it (4 significant digits), and d."""
    d = int(step.state.get("rope_d", 16))
    i = {"last": d // 2 - 1, "middle": d // 4}.get(pair, pair)
    title = figure_title_by_key(page(step, rope_pair=i, **changes), "fig-traj")
    return number_after(title, "θ ="), i


def near(shown: float, answer: core.Answer, rel: float):
    assert abs(shown - float(answer.correct)) <= rel * abs(float(answer.correct)), (shown, answer.correct)
    assert core.is_correct(answer, shown)


def positions_rope_angle(step, q, a):
    theta, _ = rope_theta(step, q.params.get("pair", 0))
    near(int(step.state.get("m", 3)) * theta, a, 1e-3)


def positions_rope_wavelength(step, q, a):
    theta, _ = rope_theta(step, q.params.get("pair", 0))
    near(2 * math.pi / theta, a, 1e-3)


def positions_wavelength_growth(step, q, a):
    before, _ = rope_theta(step, q.params.get("pair", "last"))
    after, _ = rope_theta(step, q.params.get("pair", "last"), rope_base=q.params["to_base"])
    near(before / after, a, 2e-3)


def positions_relative_only(step, q, a):
    text = shown_text(page(step))
    spread, spread_range = number_after(text, "agree to within"), number_after(text, "scores range over")
    assert a.correct == ("offset" if spread <= 1e-9 * max(1.0, spread_range) else "both")


def positions_sinusoidal_dot(step, q, a):
    trace = figure_by_key(page(step), "fig-dot-line")["data"][0]
    x, y = plotted_values(trace["x"]), plotted_values(trace["y"])
    close(float(y[list(x).index(q.params.get("distance", 0))]), a)


def positions_learned_has_vector(step, q, a):
    at = page(step)
    said = [s.value for s in at.success if "has a trained vector" in s.value]
    said += [e.value for e in at.error if "has no vector" in e.value]
    assert len(said) == 1 and said[0].startswith(f"Position {step.state['pastpos']} ")
    assert a.correct == ("yes" if "has a trained vector" in said[0] else "no"), said


def positions_relative_vectors(step, q, a):
    z, _, _ = heatmap_by_key(page(step), "fig-offsets")
    close(float(len(np.unique(z))), a)


def positions_alibi_bias(step, q, a):
    z, _, _ = heatmap_by_key(page(step), "fig-bias")
    close(float(z[q.params.get("distance", 4)][0]), a)  # query `distance`, key 0


def extrapolation_past(at) -> dict[str, float | None]:
    """Each kind's accuracy past the training length (percent) as the extrapolation table says it."""
    table = next(d.value for d in at.dataframe if any(str(c).endswith("and after") for c in d.value.columns))
    past = next(c for c in table.columns if c.endswith("and after"))
    kind = {i18n.text("en", "positions", f"ex_{k}"): k for k in ("sinusoidal", "learned", "alibi", "rope")}
    shown = {kind[k]: str(v) for k, v in zip(table["positions"], table[past])}
    return {k: float(v.rstrip(" %")) if v.endswith("%") else None for k, v in shown.items()}


def positions_extrapolation_order(step, q, a):
    past = extrapolation_past(page(step))
    assert tuple(sorted(a.options, key=lambda k: -past[k])) == a.correct, past


def positions_extrapolation_accuracy(step, q, a):
    assert q.params.get("where", "past") == "past"  # the reader reads the past column
    close(extrapolation_past(page(step))[q.params.get("kind", "rope")], a, shown_digits=1)


def curve(at, key: str, method: str) -> np.ndarray:
    trace = next(t for t in figure_by_key(at, key)["data"] if t.get("name") == method)
    return plotted_values(trace["y"])


def rope_scaling_ratio(step, q, a):
    ratio = curve(page(step), "fig-ratio", q.params["method"])
    pair = {"last": len(ratio) - 1, "middle": len(ratio) // 2}.get(q.params["pair"], q.params["pair"])
    near(float(ratio[pair]), a, 1e-6)


def method_table(at, column: str, method: str) -> float:
    table = next(d.value for d in at.dataframe if "method" in d.value.columns and column in d.value.columns)
    return float(table[column][list(table["method"]).index(method)])


def rope_scaling_attention_factor(step, q, a):
    near(method_table(page(step), "attention factor (q·k ×factor²)", q.params.get("method", "yarn")), a, 1e-3)


def rope_scaling_kept_pairs(step, q, a):
    close(method_table(page(step), "pairs kept (extrapolated)", q.params.get("method", "yarn")), a)


def rope_scaling_slowest_order(step, q, a):
    at = page(step)
    slowest = {m: float(curve(at, "fig-wl", m)[-1]) for m in q.params.get("methods", ("default", "linear", "dynamic"))}
    assert tuple(sorted(slowest, key=lambda m: -slowest[m])) == a.correct


# ---- the pages of real models: /attention, /multi-head, /head-detectors, /encoder-decoder, /moe -------------------


def word_of(label: str) -> str:
    """'3 mat' -> 'mat' (an indexed label, as the figures write it; wordpiece marks dropped)."""
    return html.unescape(label).split(" ", 1)[1].replace("##", "").replace("Ġ", "").replace("▁", "").strip().lower()


def attention_top_key(step, q, a):
    z, x, y = heatmap_by_key(page(step), "fig-head")
    row = next(i for i, label in enumerate(y) if word_of(label) == q.params["query"])
    assert html.unescape(x[int(np.argmax(z[row]))]) == a.correct


def chain_trace(at, axis: str = "", starts: str = "") -> dict:
    traces = figure_by_key(at, "fig-chain")["data"]
    return next(
        t for t in traces if (axis and t.get("xaxis") == axis) or (starts and (t.get("name") or "").startswith(starts))
    )


def multi_head_shape(step, q, a):
    at, head = page(step), int(step.state.get("head", 0))
    if q.params["what"] == "d_k":  # "Q_0 (13 × 32)": one head's queries, d_k columns
        shown = number_after(chain_trace(at, starts=f"Q_{head} (")["name"], "× ")
    elif q.params["what"] == "concat":  # "Concat of the 12 heads' Z (384 columns; ...)"
        shown = number_after(chain_trace(at, starts="Concat of the")["name"], "Z (")
    else:  # "X: layer input (13 × 384)": one row per token
        shown = number_after(chain_trace(at, starts="X: layer input")["name"], "(")
    close(shown, a)


def multi_head_top_key(step, q, a):
    weights = chain_trace(page(step), axis="x5")  # A_i: rows are queries, columns keys
    z, x, y = plotted_values(weights["z"]), weights["x"], weights["y"]
    row = next(i for i, label in enumerate(y) if word_of(label) == q.params["query"])
    assert html.unescape(x[int(np.argmax(z[row]))]) == a.correct


def multi_head_shuffled_output(step, q, a):
    text = shown_text(page(step))
    error = number_after(text, "differ by up to" if q.params.get("positions") else "to within")
    assert a.correct == ("moves" if error <= 1e-4 else "changes"), error


def multi_head_head_count(step, q, a):
    table = page(step).dataframe[0].value
    column = {"parameters": "parameters", "score_rank": "max rank of one head's scores", "head_dim": "d_k"}
    row = list(table["heads h"]).index(q.params["heads"])
    close(float(str(table[column[q.params["what"]]].iloc[row]).replace(",", "")), a)


def head_detectors_best_head(step, q, a):
    table = next(d.value for d in page(step).dataframe if list(d.value.columns) == ["layer", "head", "score"])
    assert f"{table['layer'].iloc[0]}.{table['head'].iloc[0]}" == a.correct


def encoder_decoder_source_length(step, q, a):
    _, x, _ = heatmap_by_key(page(step), "fig-cross")
    close(float(len(x)), a)


def encoder_decoder_cross_top(step, q, a):
    z, x, _ = heatmap_by_key(page(step), "fig-cross")
    assert html.unescape(x[int(np.argmax(z[int(step.state["step"])]))]) == a.correct


def next_tokens(at) -> tuple[list[str], np.ndarray]:
    bar = figure_by_key(at, "fig-top")["data"][0]
    return [html.unescape(t) for t in bar["y"]], plotted_values(bar["x"])


def encoder_decoder_next_token(step, q, a):
    tokens, p = next_tokens(page(step))
    assert tokens[int(np.argmax(p))] == a.correct and sorted(tokens) == sorted(a.options)


def encoder_decoder_probability(step, q, a):
    _, p = next_tokens(page(step))
    close(float(p.max()), a, shown_digits=4)


def encoder_decoder_agrees(step, q, a):
    said = shown_text(page(step))
    words = {k: i18n.text("en", "encoder_decoder", k) for k in ("agrees", "disagrees", "no_reference")}
    shown = [verdict for verdict, k in (("yes", "agrees"), ("no", "disagrees"), ("no_reference", "no_reference"))
             if words[k] in said]  # fmt: skip
    assert shown == [a.correct], (shown, a.correct)


def moe_dropped_metric(at) -> tuple[int, int, int]:
    """(dropped, assignments, capacity) as the 'Dropped assignments' metric and its help say them."""
    m = next(m for m in at.metric if m.label == "Dropped assignments")
    dropped, total = (int(x) for x in m.value.split(" / "))
    return dropped, total, int(number_after(m.proto.help, "Capacity:"))


def moe_expert(step, q, a):
    z, x, y = heatmap_by_key(page(step), "router")
    row = next(i for i, label in enumerate(y) if word_of(label) == q.params["word"])
    close(float(int(np.argmax(z[row]))), a)
    assert str(x[int(np.argmax(z[row]))]).endswith(str(int(a.correct)))


def moe_capacity(step, q, a):
    close(float(moe_dropped_metric(page(step))[2]), a)


def moe_dropped(step, q, a):
    close(float(moe_dropped_metric(page(step))[0]), a)


def moe_dropped_change(step, q, a):
    before = moe_dropped_metric(page(step))[0]
    after = moe_dropped_metric(page(step, ckpt=q.params["ckpt"]))[0]
    assert a.correct == ("same" if after == before else "more" if after > before else "fewer")


# ---- /ablation (the committed cards) and /antecedents (MiniLM, and the stored held-out evaluation) --------------


def card_numbers(at) -> tuple[float, float]:
    """(harm, mean placebo harm) as the card's effect and placebo lines say them (3 decimals)."""
    text = shown_text(at)
    return number_after(text, "(harm"), number_after(text, "mean harm")


def claim_of(card: str) -> str:
    return card.rsplit("-", 1)[0]


def ablation_verdict(step, q, a):
    text = shown_text(page(step))
    said = [choice for choice, verdict in (("far_more", "far_more"), ("somewhat_more", "more"), ("no_more", "no_more"))
            if i18n.text("en", "ablation", f"verdict_{verdict}") in text]  # fmt: skip
    said += ["no_candidates"] * ("has no candidate antecedent heads" in text)
    assert said == [a.correct], (said, a.correct)


def ablation_harm_ratio(step, q, a):
    harm, placebo = card_numbers(page(step))
    ratio = harm / placebo
    assert a.correct == ("under_2x" if ratio < 2 else "2x_to_10x" if ratio < 10 else "over_10x"), (ratio, a.correct)


def ablation_larger_placebo(step, q, a):
    here, there = card_numbers(page(step))[1], card_numbers(page(step, card=q.params["other"]))[1]
    larger = step.state["card"] if here > there else q.params["other"]
    assert a.correct == f"{claim_of(larger)}_layers"


def ablation_mode_change(step, q, a):
    before = card_numbers(page(step))[0]
    after = card_numbers(page(step, card=f"{claim_of(step.state['card'])}-{q.params['mode']}"))[0]
    assert a.correct == ("same" if abs(after - before) < 0.05 else "higher" if after > before else "lower")


def model_title(key: str) -> str:
    """A shipped model's name as the English page says it (the catalog's [model_titles])."""
    return i18n.text("en", "model_titles", key)


def finding_of(at, key: str) -> tuple[str, str]:
    """The held-out finding of model `key` on /antecedents and the verdict line under it."""
    said = [m.value for m in at.markdown]
    i = next(i for i, m in enumerate(said) if m.startswith(f"**{model_title(key)}**: the head chosen"))
    return said[i], said[i + 1]


def verdict_in(text: str) -> list[str]:
    return [v for v in ("above", "chance", "below") if i18n.text("en", "antecedents", f"verdict_{v}") in text]


def antecedents_held_out_verdict(step, q, a):
    _, verdict = finding_of(page(step), step.state.get("model", "minilm"))
    assert verdict_in(verdict) == [a.correct]


def antecedents_held_out_change(step, q, a):
    finding, _ = finding_of(page(step), step.state.get("model", "minilm"))
    before, after = number_after(finding, "; right on"), number_after(finding, ") is right on")  # whole per cents
    assert a.correct == ("same" if after == before else "higher" if after > before else "lower")


def antecedents_switching_heads(step, q, a):
    text, name = shown_text(page(step)), model_title(q.params["model"])
    found = re.search(rf"(\d+) of the \d+ heads of {re.escape(name)} change", text)
    close(0.0 if f"No head of {name} changes" in text else float(found.group(1)), a)


def antecedents_head_beats_baseline(step, q, a):
    at = page(step)
    top = re.search(r"the top head for '[^']+' is layer (\d+), head (\d+)", shown_text(at))
    line = next(m.value for m in at.markdown if "held-out pairs' sentences" in m.value)
    assert f"layer {top.group(1)}, head {top.group(2)} gives the right noun" in line
    assert verdict_in(line) == [a.correct]


def antecedents_partner_outcome(step, q, a):
    text = shown_text(page(step))
    said = [o for o in ("switches", "wrong_way") if i18n.text("en", "antecedents", o) in text]
    said += ["stays"] * bool(re.search(r"It prefers '[^']+' in both sentences, although", text))
    assert said == [a.correct], (said, a.correct)


# ---- /kv-cache and /logit-lens (SmolLM2) --------------------------------------------------------------------------


def kv_bytes_at(step, q, a):
    """The sentence under the memory figure: 'At **8,192** tokens the cache of … holds **377,487,360 bytes** (…);
    with one key/value head per query head … it would hold 1,132,462,080 bytes'."""
    text = shown_text(page(step))
    found = re.search(r"At \*\*([\d,]+)\*\* tokens .*? holds \*\*([\d,]+) bytes\*\*.*? would hold ([\d,]+) bytes", text)
    context, own, mha = (int(g.replace(",", "")) for g in found.groups())
    assert context == int(step.state["ctx"])
    unit = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "bytes": 1}[q.params.get("unit", "MiB")]
    close((own if q.params.get("heads", "kv") == "kv" else mha) / unit, a)


def kv_work_ratio(step, q, a):
    text = shown_text(page(step))
    with_cache, without = number_after(text, "stored keys: **"), number_after(text, "scores: **")
    assert number_after(text, "multiply-adds, **") == round(without / with_cache, 1)  # the factor the page prints
    close(without / with_cache, a)


def kv_next_token(step, q, a):
    bar = figure_by_key(page(step), "fig-top")["data"][0]  # the full cache's panel
    tokens = [html.unescape(label.split(". ", 1)[1]) for label in bar["y"]]
    p = plotted_values(bar["x"])
    assert tokens[int(np.argmax(p))] == a.correct and sorted(tokens) == sorted(a.options)


def kv_top_key(step, q, a):
    z, x, y = heatmap_by_key(page(step), "fig-step")
    assert y[-1] == "mean of heads"  # the bottom row of weights: their mean
    assert html.unescape(x[int(np.nanargmax(z[-1]))]) == a.correct


def lens_position(at, word) -> int:
    tokens = list(at.dataframe[0].value["token"])
    return word if isinstance(word, int) else len(tokens) - 1


def lens_final(step, q, a):
    at = page(step)
    table = at.dataframe[0].value
    assert table["final prediction"].iloc[lens_position(at, q.params.get("word"))] == a.correct


def lens_top_at(step, q, a):
    """The figure's row 'after layer l' (or 'embeddings'), the position's column: its hover lists the top tokens."""
    at = page(step)
    trace = figure_by_key(at, "fig-lens")["data"][0]
    row = trace["y"].index("embeddings" if q.params["layer"] == -1 else f"after layer {q.params['layer']}")
    top = trace["customdata"][row][lens_position(at, q.params.get("word"))].split("<br>")[0]
    assert html.unescape(top.rsplit(": ", 1)[0]) == a.correct


def lens_first_layer(step, q, a):
    at = page(step)
    stage = at.dataframe[0].value["top token from"].iloc[lens_position(at, q.params.get("word"))]
    close(-1.0 if stage == "embeddings" else number_after(stage, "after layer"), a)


def lens_finding(step, q, a):
    text = shown_text(page(step))
    shown = [verdict for verdict, words in (("late", "in this text, most predictions form in the last few layers"),
                                            ("early", "the others have it earlier")) if words in text]  # fmt: skip
    assert shown == [a.correct], shown


# ---- /rnn-attention and /models ----------------------------------------------------------------------------------


def rnn_aligned_source(step, q, a):
    z, x, y = heatmap_by_key(page(step), "fig-rnn-align")  # rows: the written words, columns: the source tokens
    row = next(i for i, label in enumerate(y) if html.unescape(label).split(" ", 1)[1] == q.params["word"])
    assert html.unescape(x[int(np.argmax(z[row]))]) == a.correct


def rnn_encoder_numbers(step, q, a):
    at = page(step)
    text = shown_text(at)
    if q.params.get("what", "attended") == "attended":  # "... all **12** encoder states ...: **1,536** numbers"
        _, x, _ = heatmap_by_key(at, "fig-rnn-align")
        assert number_after(text, "it may read all **") == len(x)  # one state per column of the alignment
        close(number_after(text, "(forward and backward): **"), a)
    else:
        close(number_after(text, "last state, **"), a)


def rnn_path_length(step, q, a):
    text = shown_text(page(step))
    found = re.search(r"\*\*(\d+)\*\* recurrent steps.*\*\*(\d+)\*\* in a self-attention layer", text)
    close(float(found.group(1 if q.params.get("kind", "recurrent") == "recurrent" else 2)), a)


def rnn_cheaper(step, q, a):
    text = shown_text(page(step, **({"n": q.params["to_n"]} if "to_n" in q.params else {})))
    said = {"recurrent": "the recurrent layer needs fewer operations", "attention": "self-attention needs fewer",
            "equal": "the two layers need the same operations"}  # fmt: skip
    assert [k for k, words in said.items() if words in text] == [a.correct]


def capability_table(at) -> dict[str, str]:
    table = at.dataframe[0].value
    return dict(zip(table["capability"], table["value"]))


def models_count(step, q, a):
    table = capability_table(page(step))
    query, kv = re.fullmatch(r"(\d+) query / (\d+) key-value", table["heads"]).groups()
    shown = {"layers": table["layers"], "query_heads": query, "kv_heads": kv, "head_dim": table["head size d"]}
    close(float(shown[q.params.get("what", "head_dim")]), a)


def models_positions(step, q, a):
    assert capability_table(page(step))["positions"].split(" ")[0] == a.correct


def models_cache_bytes(step, q, a):
    changes = {"tokens": q.params["to_tokens"]} if "to_tokens" in q.params else {}  # a prediction: the learner sets it
    shown = number_after(shown_text(page(step, **changes)), "key/value cache holds **")
    close(shown / {"bytes": 1, "MiB": 2**20}[q.params.get("unit", "MiB")], a)


def models_has_cache(step, q, a):
    text = shown_text(page(step))
    shown = [v for v, words in (("yes", "key/value cache holds"), ("no", "No key/value cache")) if words in text]
    assert shown == [a.correct]


def models_supports(step, q, a):
    listed = shown_text(page(step)).split("with these capabilities:** ", 1)[1].split("\n", 1)[0]
    pages = [p.strip().lstrip("/") for p in listed.split("·")]
    assert ("yes" if q.params["page"] in pages else "no") == a.correct


# ---- /padded-batch and /long-maps --------------------------------------------------------------------------------


def check_table(at):
    return next(d.value for d in at.dataframe if "padding tokens" in d.value.columns)


def padded_batch_pad_tokens(step, q, a):
    close(float(check_table(page(step))["padding tokens"].sum()), a)


def padded_batch_pad_weight(step, q, a):
    close(float(check_table(page(step))["largest weight on a padded key"].max()), a)


def padded_batch_matches_alone(step, q, a):
    at = page(step)
    said = [s.value for s in at.success if s.value.startswith("Measured now")]
    warned = [w.value for w in at.warning if w.value.startswith("Measured now")]
    assert len(said) + len(warned) == 1 and a.correct == ("yes" if said else "no"), (said, warned)


def computed(step, **changes):
    """The step's /long-maps page with its maps computed (the learner presses the button)."""
    at = fresh_page(step, **changes)
    next(b for b in at.button if b.label == "Compute the maps").click().run()
    assert not at.exception and len(at.get("plotly_chart")) == 3, [e.value for e in at.exception]
    return at


def shown_map(at, step) -> np.ndarray:
    """The head's pooled map as plotted (a log scale plots log10 of each cell; masked cells NaN)."""
    z = plotted_values(figure_by_key(at, "fig-map")["data"][0]["z"]).astype(float)
    return z if step.state.get("log", "1") == "0" else 10**z


def long_maps_cell_tokens(step, q, a):
    close(number_after(shown_text(computed(step)), "a cell covers about"), a)


def long_maps_cell(step, q, a):
    close(float(shown_map(computed(step), step)[q.params["row"]][q.params["col"]]), a, shown_digits=6)


def long_maps_peak_change(step, q, a):
    before = float(np.nanmax(shown_map(computed(step), step)))
    after = float(np.nanmax(shown_map(computed(step, side=q.params["to"]), step)))
    assert a.correct == ("same" if abs(after - before) <= 1e-6 else "higher" if after > before else "lower")


def long_maps_full_bytes(step, q, a):
    found = re.search(r"would be ([\d.]+) (B|KiB|MiB|GiB)", shown_text(computed(step)))
    shown = float(found.group(1)) * 1024 ** ["B", "KiB", "MiB", "GiB"].index(found.group(2))  # bytes, 2 decimals
    unit = {"MiB": 2**20, "GiB": 2**30, "bytes": 1}[q.params.get("unit", "MiB")]
    close(shown / unit, a, shown_digits=2 if unit > 1 else 0)


def long_maps_mass_where(step, q, a):
    first, own = (plotted_values(t["y"]) for t in figure_by_key(computed(step), "fig-shares")["data"][:2])
    head = int(step.state.get("head", 0))
    parts = {"first": first[head], "own": own[head], "elsewhere": 1 - first[head] - own[head]}
    assert max(parts, key=parts.get) == a.correct, parts


# ---- /why-head (SmolLM2's RoPE part, MiniLM's absolute part) -----------------------------------------------------


def stacked_shares(at, key: str) -> tuple[np.ndarray, list[str]]:
    """(H, parts) of the stacked bars drawn under `key`, and each part's legend name."""
    bars = figure_by_key(at, key)["data"]
    return np.stack([plotted_values(b["y"]) for b in bars], 1), [b["name"] for b in bars]


def why_head_carrier_band(step, q, a):
    shares, names = stacked_shares(page(step), "fig-shares")
    carrier = int(np.argmax(shares[int(step.state["head"])]))
    assert names[carrier].startswith(f"band {carrier}:") and str(carrier) == a.correct, (names[carrier], a.correct)


def why_head_position_or_content(step, q, a):
    """The sentence under the counterfactuals says which keeps clearly more; the bars it speaks of must agree."""
    at = page(step)
    said = {"position": "mostly from **position**", "content": "mostly from **content**",
            "mixed": "Neither alone keeps clearly more"}  # fmt: skip
    assert [v for v, words in said.items() if words in shown_text(at)] == [a.correct]
    kept = {b["name"]: plotted_values(b["y"])[int(step.state["head"])] for b in figure_by_key(at, "fig-kept")["data"]}
    position, content = (
        kept[i18n.text("en", "why_head.figure", f"kept_{k}")] for k in ("position_only", "content_only")
    )
    margin = why_head.MARGIN  # "clearly more"
    assert a.correct == ("position" if position - content > margin else "content" if content - position > margin
                         else "mixed"), (position, content)  # fmt: skip


def why_head_largest_term(step, q, a):
    shares, names = stacked_shares(page(step), "fig-terms")
    term = {i18n.text("en", "why_head.figure", f"term_{k}"): k for k in a.options}
    assert term[names[int(np.argmax(shares[int(step.state["head"])]))]] == a.correct


READERS = {
    "sdpa_steps.cell": sdpa_cell,
    "sdpa_steps.top_key": sdpa_top_key,
    "sdpa_steps.key_order": sdpa_key_order,
    "sdpa_steps.variance": sdpa_variance,
    "sdpa_steps.variance_growth": sdpa_variance_growth,
    "sdpa_steps.max_weight": sdpa_max_weight,
    "sdpa_steps.more_peaked": sdpa_more_peaked,
    "sdpa_steps.max_weight_change": sdpa_max_weight_change,
    "linear_attention.cost": linear_cost,
    "linear_attention.cheaper": linear_cheaper,
    "linear_attention.crossover": linear_crossover,
    "linear_attention.more_spread": linear_more_spread,
    "flash_attention.tiles": flash_tiles,
    "flash_attention.running_max": flash_running_max,
    "flash_attention.running_sum": flash_running_sum,
    "flash_attention.exact": flash_exact,
    "flash_attention.hbm_traffic": flash_hbm_traffic,
    "sdpa_gqa.kv_bytes": gqa_kv_bytes,
    "sdpa_gqa.group_size": gqa_group_size,
    "transformer_xl.visible_keys": xl_visible_keys,
    "transformer_xl.loss_order": xl_loss_order,
    "transformer_xl.best_after_eviction": xl_best_after_eviction,
    "masks.allowed_count": masks_allowed_count,
    "masks.top_key": masks_top_key,
    "masks.kind_order": masks_kind_order,
    "masks.cross_shape": masks_cross_shape,
    "positions.rope_angle": positions_rope_angle,
    "positions.rope_wavelength": positions_rope_wavelength,
    "positions.wavelength_growth": positions_wavelength_growth,
    "positions.relative_only": positions_relative_only,
    "positions.sinusoidal_dot": positions_sinusoidal_dot,
    "positions.learned_has_vector": positions_learned_has_vector,
    "positions.relative_vectors": positions_relative_vectors,
    "positions.alibi_bias": positions_alibi_bias,
    "positions.extrapolation_order": positions_extrapolation_order,
    "positions.extrapolation_accuracy": positions_extrapolation_accuracy,
    "rope_scaling.ratio": rope_scaling_ratio,
    "rope_scaling.attention_factor": rope_scaling_attention_factor,
    "rope_scaling.kept_pairs": rope_scaling_kept_pairs,
    "rope_scaling.slowest_order": rope_scaling_slowest_order,
    "attention.top_key": attention_top_key,
    "multi_head.shape": multi_head_shape,
    "multi_head.top_key": multi_head_top_key,
    "multi_head.head_count": multi_head_head_count,
    "multi_head.shuffled_output": multi_head_shuffled_output,
    "head_detectors.best_head": head_detectors_best_head,
    "encoder_decoder.source_length": encoder_decoder_source_length,
    "encoder_decoder.cross_top": encoder_decoder_cross_top,
    "encoder_decoder.next_token": encoder_decoder_next_token,
    "encoder_decoder.probability": encoder_decoder_probability,
    "encoder_decoder.agrees": encoder_decoder_agrees,
    "moe.expert": moe_expert,
    "moe.capacity": moe_capacity,
    "moe.dropped": moe_dropped,
    "moe.dropped_change": moe_dropped_change,
    "ablation.verdict": ablation_verdict,
    "ablation.harm_ratio": ablation_harm_ratio,
    "ablation.larger_placebo": ablation_larger_placebo,
    "ablation.mode_change": ablation_mode_change,
    "antecedents.held_out_verdict": antecedents_held_out_verdict,
    "antecedents.held_out_change": antecedents_held_out_change,
    "antecedents.switching_heads": antecedents_switching_heads,
    "antecedents.head_beats_baseline": antecedents_head_beats_baseline,
    "antecedents.partner_outcome": antecedents_partner_outcome,
    "kv_cache.bytes_at": kv_bytes_at,
    "kv_cache.work_ratio": kv_work_ratio,
    "kv_cache.next_token": kv_next_token,
    "kv_cache.top_key": kv_top_key,
    "logit_lens.final": lens_final,
    "logit_lens.top_at": lens_top_at,
    "logit_lens.first_layer": lens_first_layer,
    "logit_lens.finding": lens_finding,
    "rnn_attention.aligned_source": rnn_aligned_source,
    "rnn_attention.encoder_numbers": rnn_encoder_numbers,
    "rnn_attention.path_length": rnn_path_length,
    "rnn_attention.cheaper": rnn_cheaper,
    "models.count": models_count,
    "models.positions": models_positions,
    "models.cache_bytes": models_cache_bytes,
    "models.has_cache": models_has_cache,
    "models.supports": models_supports,
    "padded_batch.pad_tokens": padded_batch_pad_tokens,
    "padded_batch.pad_weight": padded_batch_pad_weight,
    "padded_batch.matches_alone": padded_batch_matches_alone,
    "long_maps.cell_tokens": long_maps_cell_tokens,
    "long_maps.cell": long_maps_cell,
    "long_maps.peak_change": long_maps_peak_change,
    "long_maps.full_bytes": long_maps_full_bytes,
    "long_maps.mass_where": long_maps_mass_where,
    "why_head.carrier_band": why_head_carrier_band,
    "why_head.position_or_content": why_head_position_or_content,
    "why_head.largest_term": why_head_largest_term,
}


def test_every_shipped_question_is_read_on_its_page():
    from core.lessons.answers import ANSWER_FUNCTIONS

    declared = {name for name, fn in ANSWER_FUNCTIONS.items() if fn.state is not None}
    asked = {step.question.answer_fn for _, step in QUESTIONS}
    assert not sorted((asked & declared) - set(READERS))


MODEL_PAGES = {
    "attention",
    "multi-head",
    "encoder-decoder",
    "moe",
    "antecedents",
    "kv-cache",
    "logit-lens",
    "padded-batch",
    "why-head",
}  # they load a real model: marked slow


def loads_a_model(step) -> bool:
    """/rnn-attention's translate part loads the GRU and the Transformer; its other parts read numbers only. /long-maps
    loads one for a model's source, not for random q and k; /positions for its learned table."""
    return (
        step.page in MODEL_PAGES
        or (step.page == "positions" and step.state.get("part") == "learned")
        or (step.page == "rnn-attention" and step.state.get("part") == "translate")
        or (step.page == "long-maps" and step.state.get("src", "smollm2") != "random")
    )


CASES = [pytest.param(lid, step, id=f"{lid}-{step.question.id}", marks=[pytest.mark.slow] * loads_a_model(step))
         for lid, step in QUESTIONS]  # fmt: skip


@pytest.mark.parametrize("lesson_id, step", CASES)
def test_the_page_shows_the_lessons_answer(lesson_id, step):
    q = step.question
    reader = READERS.get(q.answer_fn)
    if reader is None:
        pytest.skip(f"{q.answer_fn}: its page state is not declared yet")
    with shared_runs():  # the questions of one state share the answer's run; the page makes its own
        answer = core.answer(q, step.state)
    reader(step, q, answer)


# Every step of every shipped lesson (questions or not) opens its page with its state, as a link would, without an
# exception, and with no parameter of the state ignored by the page (a lesson whose state names a setting the page
# does not read would show a 'parameters ignored' notice instead of the view the lesson means). Here, after the
# questions, so each state is opened once for both (its model-free questions first, where conftest checks that no
# model loads).
VIEWS = sorted({(s.page, tuple(sorted(s.state.items()))) for lesson in LESSONS.values() for s in lesson.steps})


@pytest.mark.slow
@pytest.mark.parametrize("url, state", VIEWS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(VIEWS)])
def test_every_step_opens_its_page_with_its_state(url, state):
    at = opened(url, dict(state))
    ignored = [w.value for w in at.warning if "ignored" in str(w.value).lower()]
    assert not ignored, ignored
    for key, value in state:
        assert at.query_params.get(key) == value, (key, at.query_params.get(key), value)
