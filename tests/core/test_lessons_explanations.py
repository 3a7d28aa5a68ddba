"""Shipped explanations say what their answer's numbers say: each one filled with the answer function's details is
checked against an independent computation, so a sentence cannot claim what the numbers do not show."""

import math

import pytest

from core import lessons as core
from core.lessons.answers import compute


def step_of(lesson_id: str, question_id: str):
    lesson = core.load_lessons()[lesson_id]
    return next(s for s in lesson.steps if s.question is not None and s.question.id == question_id)


def explained(lesson_id: str, question_id: str, lang: str = "en") -> tuple[str, core.Answer]:
    step = step_of(lesson_id, question_id)
    q = step.question
    answer = compute(q.answer_fn, dict(q.params), {k: str(v) for k, v in step.state.items()})
    return core.fill(core.text_in(q.explanation, lang), answer), answer


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_top_key_explanation_gives_the_dot_products_and_the_cosines(lang):
    text, answer = explained("qkv-softmax", "top-key-q1", lang)
    q, keys = (3, 4), [(4, 5), (6, 7), (8, 9)]
    dots = [q[0] * a + q[1] * b for a, b in keys]
    cosines = [d / (math.hypot(*q) * math.hypot(a, b)) for d, (a, b) in zip(dots, keys)]
    assert answer.correct == "k2" and max(dots) == dots[2]
    assert "32, 46, 60" in text
    assert ", ".join(f"{c:.5f}" for c in cosines) in text  # 0.99951, 0.99788, 0.99655: k0 is closest in direction
    assert "k0" in text and "{" not in text


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_params_explanation_says_the_score_entries_grow(lang):
    text, answer = explained("multi-head", "params-at-32", lang)
    d, n = 512, 64  # the paper's d_model; the step's n
    assert answer.correct == 4 * d * d + 4 * d and f"{4 * d * d + 4 * d}" in text
    assert f"{8 * n * d * d + 4 * n * n * d}" in text  # the same matrix-product FLOPs at every h
    assert f"{1 * n * n}" in text and f"{32 * n * n}" in text and "4096" in text and "131072" in text
    assert "{" not in text


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_linear_attention_lesson_gives_softmax_its_own_matrix(lang):
    """Softmax attention builds exp(QKᵀ/√d); φ(Q)φ(K)ᵀ is linear attention's matrix in the n × n order."""
    first = core.text_in(core.load_lessons()["linear-attention"].steps[0].text, lang)
    assert "exp(QKᵀ/√d)" in first and first.index("exp(QKᵀ/√d)") < first.index("φ(Q)φ(K)ᵀ")
