"""A lesson's words read as the app's catalogs do (core.grammar, one set of rules for both): an explanation or a hint
gives English plural forms, chosen by the count filled in, and a Korean particle pair after a field ({heads}을(를))
takes the form the value's final sound asks for, so a learner reads '1 head', '3 heads', '3을', '2를'."""

import re
import textwrap

import pytest

from core import grammar
from core import lessons as core

LESSON = textwrap.dedent(
    """\
    title = { en = "Heads", ja = "ヘッド", ko = "헤드" }

    [[steps]]
    page = "sdpa-steps"
    text = { en = "Predict.", ja = "予想。", ko = "예측." }

    [steps.question]
    id = "q1"
    kind = "number"
    answer = "sdpa_steps.cell"
    params = { matrix = "scores", row = 0, col = 0 }
    prompt = { en = "QKᵀ[0, 0]?" }
    hints = [{ en = { count = "heads", one = "Remove {heads} head.", other = "Remove {heads} heads." } }]
    explanation = { en = { count = "heads", one = "Removing {heads} head costs {correct}.", other = "Removing {heads} heads costs {correct}." }, ja = "{heads} 個のヘッドで {correct}。", ko = "헤드 {heads}개를 빼면 {correct}. {heads}을(를) 빼면 {correct}이(가) 오릅니다." }
    """
)


def loaded(tmp_path, text=LESSON) -> core.Question:
    path = tmp_path / "heads.toml"
    path.write_text(text, encoding="utf-8")
    return core.load_lesson(path, pages={"sdpa-steps"}).steps[0].question


def answer(correct, **detail) -> core.Answer:
    return core.Answer("number", correct, (), 0.0, detail)


@pytest.mark.parametrize(
    ("heads", "english", "korean"),
    [
        (1, "Removing 1 head costs 2.", "1을 빼면 2가 오릅니다."),  # 일, 이
        (3, "Removing 3 heads costs 2.", "3을 빼면 2가 오릅니다."),  # 삼
        (2, "Removing 2 heads costs 3.", "2를 빼면 3이 오릅니다."),  # 이, 삼
    ],
)
def test_a_lessons_number_chooses_the_english_form_and_the_korean_particle(tmp_path, heads, english, korean):
    q = loaded(tmp_path)
    a = answer(2.0 if heads != 2 else 3.0, heads=heads)
    assert core.fill(q.explanation["en"], a, plural_rule="one_other") == english
    assert core.fill(q.explanation["ko"], a).endswith(korean)
    assert core.fill(q.hints[0]["en"], a, plural_rule="one_other") == f"Remove {heads} head{'s' * (heads != 1)}."
    assert core.fill(q.explanation["ja"], a) == f"{heads} 個のヘッドで {a.correct:g}。"


def test_a_withheld_count_or_none_at_all_reads_as_other_and_keeps_the_pair(tmp_path):
    """A room before the reveal withholds a field that shows the answer: its form cannot be judged."""
    q = loaded(tmp_path)
    a = answer(1.0, heads=1)
    assert core.fill(q.explanation["en"], a, with_correct=False, plural_rule="one_other").startswith("Removing … heads")
    assert "…을(를) 빼면" in core.fill(q.explanation["ko"], a, with_correct=False)
    assert core.fill(q.explanation["en"], None, plural_rule="one_other") == "Removing {heads} heads costs {correct}."


@pytest.mark.parametrize(
    ("old", "new", "words"),
    [
        (
            'text = { en = "Predict.",',
            'text = { en = { count = "n", one = "{n}", other = "{n}" },',
            "text.en must be text",
        ),
        (
            'prompt = { en = "QKᵀ[0, 0]?" }',
            'prompt = { en = { count = "n", other = "{n}" } }',
            "prompt.en must be text",
        ),
        ('count = "heads", one = "Remove', 'count = "head", one = "Remove', "count = 'head' must name a field"),
        ('{ count = "heads", one = "Removing', '{ count = "heads", single = "Removing', "must be text or plural forms"),
    ],
)
def test_plural_forms_only_where_the_answer_fills_the_words_and_counting_a_field_they_show(tmp_path, old, new, words):
    assert old in LESSON
    path = tmp_path / "heads.toml"
    path.write_text(LESSON.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(core.LessonError) as info:
        core.load_lesson(path, pages={"sdpa-steps"})
    assert words in info.value.message and info.value.line in (3, 7), str(info.value)


# A particle that alternates with the sound before it (을/를, 이/가, 은/는, 와/과, 으로/로), written bare right after a
# field: right for some values only. Not after a bracket: '가중치({weight})는' follows the word before the bracket.
_BARE = re.compile(r"\{\w+\}['’\"”」』]*(?:으로|를|을|가|이|는|은|로|와|과)(?![가-힣(])")
SHIPPED = core.load_lessons()


def _korean(lesson):
    for step in lesson.steps:
        q = step.question
        words = [step.text] + ([q.prompt, q.explanation, *q.hints] if q else [])
        yield from (f for w in words for f in grammar.forms(w.get("ko", "")))


def test_no_shipped_korean_lesson_text_fixes_a_particle_after_a_value():
    bare = [
        f"{lesson.id}: {m.group(0)}" for lesson in SHIPPED.values() for t in _korean(lesson) for m in _BARE.finditer(t)
    ]
    assert not bare, bare


def test_every_shipped_korean_pair_after_a_number_is_chosen():
    """Each field filled with 3 (삼, a final consonant) and then 2 (이, none): 3을, 3이, 3은, 3으로, 2를, 2가, ..."""
    texts = [t for lesson in SHIPPED.values() for t in _korean(lesson) if grammar.PARTICLE_AFTER_FIELD.search(t)]
    assert len(texts) >= 20
    for t in texts:
        fields = set(re.findall(r"\{(\w+)\}", t)) - {"correct"}
        for n, forms in (("3", ("을", "이", "은", "으로", "과")), ("2", ("를", "가", "는", "로", "와"))):
            filled = core.fill(t, answer(float(n), **dict.fromkeys(fields, n)))
            assert not any(p in filled for p in grammar.PARTICLES), filled
            chosen = re.findall(n + r"['’\"”」』]*(으로|을|를|이|가|은|는|로|과|와)(?![가-힣])", filled)
            assert chosen and set(chosen) <= set(forms), (n, filled)
