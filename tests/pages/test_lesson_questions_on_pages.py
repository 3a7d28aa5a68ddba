"""Every shipped question against its page: the step's page is opened headless at the step's state (as the lesson's
link opens it), the number, token or option the page shows for what the question asks is read off the page, and it
must be the answer the lesson expects. A lesson and its page cannot drift apart: change what a page computes, or an
answer function, and the question fails here.

READERS maps an answer function to how a learner would read its answer on the page; a question whose function has
no reader fails test_every_shipped_question_is_read_on_its_page."""

from __future__ import annotations

import re

import numpy as np
import pytest

from app import catalog
from core import lessons as core
from tests.apptest_helpers import heatmap_by_key, number_after, open_view, shown_text

LESSONS = core.load_lessons(pages=catalog.BY_URL)
QUESTIONS = [(lesson.id, step) for lesson in LESSONS.values() for step in lesson.steps if step.question is not None]


def page(step, **changes):
    """The step's page at its state (with `changes`, as a learner moving a widget would)."""
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
    return {"quadratic": number_after(text, "order takes"), "linear": number_after(text, "the d × d order takes"),
            "crossover": number_after(text, "cheaper from n =")}  # fmt: skip


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
    found = re.search(r"\*\*(\d+)\*\* query tile\(s\) × \*\*(\d+)\*\* key tile", shown_text(page(step)))
    tr, tc = int(found.group(1)), int(found.group(2))
    close({"query": tr, "key": tc, "all": tr * tc}[q.params["what"]], a)


def flash_running_max(step, q, a):
    table = next(d.value for d in page(step).dataframe if "m after" in d.value.columns)
    close(float(table["m after"].iloc[q.params["row"]]), a, shown_digits=4)


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
}


def _ids():
    return [f"{lid}-{step.question.id}" for lid, step in QUESTIONS]


def test_every_shipped_question_is_read_on_its_page():
    from core.lessons.answers import ANSWER_FUNCTIONS

    declared = {name for name, fn in ANSWER_FUNCTIONS.items() if fn.state is not None}
    asked = {step.question.answer_fn for _, step in QUESTIONS}
    assert not sorted((asked & declared) - set(READERS))


@pytest.mark.parametrize("lesson_id, step", QUESTIONS, ids=_ids())
def test_the_page_shows_the_lessons_answer(lesson_id, step):
    q = step.question
    reader = READERS.get(q.answer_fn)
    if reader is None:
        pytest.skip(f"{q.answer_fn}: its page state is not declared yet")
    reader(step, q, core.answer(q, step.state))
