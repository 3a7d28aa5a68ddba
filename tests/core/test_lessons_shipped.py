"""The shipped lessons (lessons/*.toml): at least 8 following the material, at least 4 questions each and 40 in all,
every text in English, Japanese and Korean, every step on a page of the app, and every question's answer computed
by the engine from its step's state (a valid answer of its kind, whose explanation fields all get filled); every
step's state and question's params are the page's and the function's own (checked when the lessons load); and no
hint a study room shows before the reveal names the answer."""

import re
from functools import partial

import pytest

from app import catalog, i18n
from app.views.lessons.text import choice_label, filled, in_words
from core import lessons as core
from core.grammar import forms
from tests.answer_runs import shared_runs

LESSONS = core.load_lessons(pages=catalog.BY_URL)
STEPS = [(lesson.id, i) for lesson in LESSONS.values() for i in range(len(lesson.steps))]
QUESTIONS = [(lid, i) for lid, i in STEPS if LESSONS[lid].steps[i].question is not None]
FIELD = re.compile(r"\{(\w+)\}")
ANSWERS: dict[tuple[str, int], core.Answer] = {}  # the answers the test above computed, for the hints' test below
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
        every = {lang: " ".join(forms(w)) for lang, w in words.items()}  # a text, or each of its plural forms
        assert set(words) == set(core.LANGUAGES) and all(w.strip() for w in every.values()), where
        assert len({frozenset(FIELD.findall(w)) for w in every.values()}) == 1, where
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
    with shared_runs():  # a generation or lens that another question of the same state ran is not run again
        answer = ANSWERS[(lesson_id, index)] = core.answer(q, step.state)
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


# ---- hints in a study room before the reveal ---------------------------------------------------------------

# Whole values that are not the answer where they stand, though they read the same, each with the reason a learner
# does not read it as the answer: (lesson, question) -> phrases around the value. Each must still be needed.
NOT_THE_ANSWER = {
    ("flash-gqa-kv", "kv-bytes"): ("1 GiB = 2³⁰",),  # the unit's definition; the answer is a cache of 1 GiB
    # a factor, which the learner multiplies by the cache the step before asked for (1 GiB: so 16 GiB)
    ("flash-gqa-kv", "kv-predict"): ("16 times the cache", "の 16 倍", "의 16배"),
}
QUOTES = "'\"‘’“”「」『』"
# A number right after 'step' (or before Korean's 단계) is the number of a step of the lesson or the page ('Look at
# step 1 on the page'), which no answer function asks for.
STEP = re.compile(r"(?:\b[Ss]tep|ステップ|단계)\s*$")
STEP_AFTER = re.compile(r"^\s*단계")
_WORD = re.compile(r"[^\W\d_]+")  # a word of letters only: 'no', 'first', 'of', 'は'


def whole(value: str) -> re.Pattern:
    """`value` standing alone: no letter, digit or '_' of the same word beside it, nor a decimal point before it
    or after it with a digit (the 2 of 'row 2' and '2 倍' matches; that of '12', '2.5', 'k2' or 'x_2' does not)."""
    return re.compile(r"(?<![0-9A-Za-z_.])" + re.escape(value) + r"(?![0-9A-Za-z_]|[.,][0-9])")


def quoted(word: str) -> re.Pattern:
    return re.compile(f"[{QUOTES}]" + re.escape(word) + f"[{QUOTES}]")


def answer_forms(answer: core.Answer, lang: str) -> tuple[set[str], set[str]]:
    """The answer as a reader of `lang` sees it on a room's pages, as (values, words). A number: at 6 significant
    digits (the page at the reveal, format_response), at 4 (a hint's field, a histogram's bar) and at 3 and 5 (a
    near-copy), unless that rounds it to another whole number, and whole ones also with thousands separators. A
    choice: its identifier and its words in `lang`. A token: its label '3 cat' and its text 'cat'. An order: the
    order as the page writes it. Words (a form of letters only, and a token) are the hint's prose where they are
    not quoted; values are the answer wherever they stand."""
    T = partial(i18n.text, lang, "lessons")
    if answer.kind == "number":
        c = float(answer.correct)
        values = {core.format_response(answer, c)}
        for digits in (3, 4, 5):  # a field's precision and its neighbours
            shown = core._show_number(c, digits)
            if c == int(c) or float(shown) != int(float(shown)):
                values.add(shown)
        if c == int(c) and abs(c) >= 1000:
            values.add(f"{int(c):,}")
        return values, set()
    if answer.kind == "order":
        said = core.format_response(answer, answer.correct)
        return {said, in_words(T, "order", said)}, set()
    forms = {str(answer.correct).strip(), choice_label(T, answer.correct).strip()}
    if answer.kind == "token":
        return set(), forms | {str(answer.correct).split(" ", 1)[-1].strip()}
    return {f for f in forms if not _WORD.fullmatch(f)}, {f for f in forms if _WORD.fullmatch(f)}


def in_order(answer: core.Answer) -> re.Pattern:
    """An order question's items listed in the right order, each by its identifier (with '_' as a space) or its
    words in any language (a Japanese hint may name them in English), each within 20 characters of the one before
    in the same sentence ('full, sinks + window, window', 'full attention, sinks + window and the plain window')."""
    names = []
    for item in answer.correct:
        said = {choice_label(partial(i18n.text, lang, "lessons"), item) for lang in core.LANGUAGES}
        names.append("|".join(re.escape(n) for n in sorted({item, item.replace("_", " "), *said}, key=len)[::-1]))
    between = r"[^.。!?！？;；]{0,20}?"
    return re.compile(between.join(f"(?:{n})" for n in names), re.IGNORECASE)


def named(answer: core.Answer, lang: str, text: str) -> list[tuple[str, int, int]]:
    """Where `text` names the answer: (form, start, end) of each whole value and each quoted word; none where a
    pick-one question's text names every option alike (nothing singled out: 'q1 · k0, q1 · k1 and q1 · k2')."""
    text = text.replace("−", "-")
    values, words = answer_forms(answer, lang)
    found = [
        (v, m.start(), m.end())
        for v in values
        for m in whole(v).finditer(text)
        if not (STEP.search(text[: m.start()]) or STEP_AFTER.match(text[m.end() :]))
    ]
    found += [(w, m.start(), m.end()) for w in words for m in quoted(w).finditer(text)]
    if answer.kind == "order":
        found += [(m.group(0), m.start(), m.end()) for m in in_order(answer).finditer(text)]
    if found and answer.kind == "choice" and all(whole(o.strip()).search(text) for o in answer.options):
        return []
    return found


def _answer_of(lesson_id: str, index: int) -> core.Answer:
    if (lesson_id, index) not in ANSWERS:  # run alone, or the test above did not run (not slow)
        step = LESSONS[lesson_id].steps[index]
        with shared_runs():
            ANSWERS[(lesson_id, index)] = core.answer(step.question, step.state)
    return ANSWERS[(lesson_id, index)]


def _needs_model(lesson_id: str, index: int) -> bool:
    step = LESSONS[lesson_id].steps[index]
    return core.needs_model_pass(step.question, step.state)


@pytest.mark.parametrize(
    "lesson_id, index",
    [pytest.param(*q, marks=pytest.mark.slow) if _needs_model(*q) else q for q in QUESTIONS],
)
def test_no_hint_names_the_answer_in_a_room_before_the_reveal(lesson_id, index):
    """Every hint of every question, in each language the lesson has it in, filled as a room's learner reads it
    before the facilitator reveals the answer (app/views/lessons/text.filled with_correct=False, what the room's
    panel draws), against the answer the room keeps (core.answer of the step's state, as the room's open_question
    computes it). A hint names the answer when
    - a field it quotes, filled alone as the room fills it, reads as one of the answer's forms (answer_forms:
      values or words), however it is written around; or
    - its text has one of the answer's values standing alone (whole: a number, an identifier 'k2', a choice's
      words of more than one word, an order as the page writes it or its items listed in that order), or one of
      its words quoted ('the', 「は」): a word unquoted ('no', 'first', 'the') is the hint's prose.
    Not flagged: a step's number ('step 2'), a pick-one question's text naming every option alike, and
    NOT_THE_ANSWER's reviewed phrases (a value that reads the same but is something else there, e.g. '1 GiB = 2³⁰
    bytes', with the reason why). A number within the tolerance but not the answer at any of those precisions is
    not looked for."""
    q = LESSONS[lesson_id].steps[index].question
    answer = _answer_of(lesson_id, index)
    excused = NOT_THE_ANSWER.get((lesson_id, q.id), ())
    used, leaks = set(), []
    for h, hint in enumerate(q.hints):
        for lang in core.LANGUAGES:
            if not hint.get(lang):
                continue
            shown = filled(core.shown_in(hint, lang), answer, with_correct=False)
            values, words = answer_forms(answer, lang)
            for field in FIELD.findall(" ".join(forms(hint[lang]))):
                alone = filled(core.Shown(f"{{{field}}}", lang, lang), answer, with_correct=False).strip()
                if alone in values | words or alone.replace(",", "") in values:
                    leaks.append(f"hint {h} ({lang}): {{{field}}} reads {alone!r}")
            for form, start, end in named(answer, lang, shown):
                phrase = next((p for p in excused if p in shown and _covers(shown, p, start, end)), None)
                if phrase is not None:
                    used.add(phrase)
                else:
                    leaks.append(f"hint {h} ({lang}) names {form!r}: {shown}")
    assert not leaks, (
        f"{lesson_id} step {index + 1} ({q.id}), answer {core.format_response(answer, answer.correct)!r}: {leaks}"
    )
    assert used == set(excused), f"NOT_THE_ANSWER for {lesson_id}/{q.id} no longer needed: {set(excused) - used}"


ORDERS = [(lid, i) for lid, i in QUESTIONS if LESSONS[lid].steps[i].question.kind == "order"]


@pytest.mark.parametrize("lesson_id, index", ORDERS)
def test_an_order_question_lists_its_items_in_another_order_before_the_reveal(lesson_id, index):
    """What a room shows of an order question before the reveal, besides the hints (the test above): the step's
    text and the prompt, which name the items, and the picker, which lists them (answer.options, core's mixed
    order), never in the right order: a learner would take the order they are listed in ('order full attention,
    sinks + window and the plain window' when that is the answer)."""
    step = LESSONS[lesson_id].steps[index]
    answer = _answer_of(lesson_id, index)
    assert answer.options != answer.correct
    for where, words in (("step text", step.text), ("prompt", step.question.prompt)):
        for lang, text in words.items():
            found = in_order(answer).search(text)
            assert not found, f"{lesson_id} step {index + 1}, {where} ({lang}) lists the answer's order: {text}"


def _covers(text: str, phrase: str, start: int, end: int) -> bool:
    text = text.replace("−", "-")
    return any(i <= start and end <= i + len(phrase) for i in (m.start() for m in re.finditer(re.escape(phrase), text)))
