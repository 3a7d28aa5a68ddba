"""The shipped lessons (lessons/*.toml): at least 8 following the material, at least 4 questions each and 40 in all,
every text in English, Japanese and Korean, every step on a page of the app, and every question's answer computed
by the engine from its step's state (a valid answer of its kind, whose explanation fields all get filled); every
step's state and question's params are the page's and the function's own (checked when the lessons load)."""

import re

import pytest

from app import catalog
from core import lessons as core

LESSONS = core.load_lessons(pages=catalog.BY_URL)
STEPS = [(lesson.id, i) for lesson in LESSONS.values() for i in range(len(lesson.steps))]
QUESTIONS = [(lid, i) for lid, i in STEPS if LESSONS[lid].steps[i].question is not None]
FIELD = re.compile(r"\{(\w+)\}")
# The material in order (the pages each lesson teaches from).
MATERIAL = ["sdpa-steps", "sdpa-steps", "masks", "multi-head", "encoder-decoder", "multi-head", "positions",
            "rope-scaling", "moe", "linear-attention", "flash-attention", "flash-attention", "padded-batch", "long-maps", "antecedents", "ablation", "why-head",
            "kv-cache", "logit-lens", "rnn-attention", "models"]  # fmt: skip


def test_enough_lessons_and_questions_in_the_material_order():
    assert len(LESSONS) >= 8
    assert all(len(lesson.questions) >= 4 for lesson in LESSONS.values())
    assert len(QUESTIONS) >= 40
    assert [lesson.steps[0].page for lesson in LESSONS.values()] == MATERIAL
    kinds = {LESSONS[lid].steps[i].question.kind for lid, i in QUESTIONS}
    assert kinds == set(core.KINDS)


def _words(lesson):
    yield "title", lesson.title
    for i, step in enumerate(lesson.steps):
        yield f"step {i + 1} text", step.text
        q = step.question
        if q is not None:
            yield f"{q.id} prompt", q.prompt
            yield f"{q.id} explanation", q.explanation
            for j, hint in enumerate(q.hints):
                yield f"{q.id} hint {j}", hint


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_every_text_in_three_languages_with_the_same_fields(lesson_id):
    lesson = LESSONS[lesson_id]
    for where, words in _words(lesson):
        assert set(words) == set(core.LANGUAGES) and all(w.strip() for w in words.values()), where
        assert len({frozenset(FIELD.findall(w)) for w in words.values()}) == 1, where
    assert all(len(q.hints) == 3 for q in lesson.questions)  # nudge, pointer, show me


@pytest.mark.slow  # loads MiniLM, the MoE and the encoder-decoder
@pytest.mark.parametrize("lesson_id, index", QUESTIONS)
def test_every_answer_is_well_formed_and_fills_its_words(lesson_id, index, monkeypatch):
    """The shape of each answer (its kind, options, tolerance) and every field its words quote. Whether the answer
    is right is tests/pages/test_lesson_questions_on_pages.py's question: it reads the answer off the page. An
    answer declared without a model pass (computed in the learner's script, not queued) is computed with loading a
    model refused."""
    step = LESSONS[lesson_id].steps[index]
    q = step.question
    if not core.needs_model_pass(q, step.state):
        from core.models import registry

        monkeypatch.setattr(registry, "shared", lambda key, *args, **kwargs: pytest.fail(f"{q.answer_fn} loads {key}"))
    answer = core.answer(q, step.state)
    assert answer.kind == q.kind
    if q.kind in ("token", "choice"):
        assert answer.correct in answer.options and len(set(answer.options)) == len(answer.options) >= 2
    elif q.kind == "order":
        assert sorted(answer.correct) == sorted(answer.options) and len(answer.options) >= 3
    else:
        assert answer.tolerance is not None and answer.tolerance >= 0
    again = core.parse_response(answer, core.format_response(answer, answer.correct))
    assert core.is_correct(answer, again)
    for text in [q.explanation["en"], *(h["en"] for h in q.hints)]:
        assert not FIELD.findall(core.fill(text, answer)), (q.id, core.fill(text, answer))
