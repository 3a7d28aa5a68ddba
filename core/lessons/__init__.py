"""Lessons as data: an ordered list of steps, each naming a page and its state (the query parameters a shared link
carries), a short text and optionally a question whose right answer the engine computes from the live state.

A lesson is a TOML file lessons/<id>.toml that a facilitator edits without Python (words per language inline, like
the page catalogs). A malformed file raises LessonError naming the file and the line, never a crash; so does a step whose state the
page would ignore (a key it does not have, a value outside its bounds) or a question whose params its answer
function does not take: both are checked against the declarations (core/state.py) when the lesson loads.

    id = "qkv"
    title = { en = "...", ja = "...", ko = "..." }

    [[steps]]
    page = "sdpa-steps"                        # a catalog URL (app/catalog.py BY_URL)
    state = { sentence = "the cat sat" }       # the page's query parameters
    text = { en = "...", ja = "...", ko = "..." }

    [steps.question]
    id = "top-key"
    kind = "token"                             # token | choice | number | order
    answer = "sdpa_steps.top_key"              # a key of core.lessons.answers.ANSWER_FUNCTIONS
    params = { query = 2 }
    prompt = { en = "...", ja = "...", ko = "..." }
    hints = [{ en = "nudge" }, { en = "pointer" }, { en = "show me" }]
    explanation = { en = "...", ja = "...", ko = "..." }
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.grammar import forms, is_plural, plural_form, with_particles
from core.lessons.kinds import KINDS, Answer

LANGUAGES = ("en", "ja", "ko")
DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "lessons"
ORDER_SEPARATOR = " > "  # an "order" response as one string: items in the learner's order
MAX_RESPONSE_CHARS = 2000
PATHS_FILE = "paths.toml"  # the study paths (core/lessons/paths.py), beside the lessons: not a lesson
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Question:
    id: str  # unique within the lesson
    kind: str  # "token" | "choice" | "number" | "order"
    answer_fn: str  # key in core.lessons.answers.ANSWER_FUNCTIONS
    params: dict  # fixed params for the answer function
    prompt: dict[str, str]  # language -> text
    hints: tuple[dict[str, str | dict], ...]  # the ladder: nudge, pointer, "show me" (a text or plural forms: fill)
    explanation: dict[str, str | dict]


@dataclass(frozen=True)
class Step:
    page: str  # URL path of a catalog page, e.g. "attention" (app/catalog.py BY_URL key)
    state: dict[str, str]  # the query parameters a shared link carries
    text: dict[str, str]
    question: Question | None
    line: int = 0  # line of the step's [[steps]] header in its file (0: unknown)


@dataclass(frozen=True)
class Lesson:
    id: str
    title: dict[str, str]
    steps: tuple[Step, ...]
    path: str = ""
    order: int = 0  # place in the material (lessons sort by it, then id)

    @property
    def questions(self) -> tuple[Question, ...]:
        return tuple(s.question for s in self.steps if s.question is not None)


class LessonError(ValueError):
    """A lesson file that cannot be used: str() names the file by its path and the line (for the operator's
    scripts); `shown` by its name only (for a page, which any visitor of a hosted server reads)."""

    def __init__(self, path: str | Path, line: int | None, message: str):
        self.path, self.line, self.message = str(path), line, message
        super().__init__(self._at(self.path))

    def _at(self, file: str) -> str:
        return f"{file}:{self.line}: {self.message}" if self.line else f"{file}: {self.message}"

    @property
    def shown(self) -> str:
        """The file's name, the line and what is wrong: never the folders the server keeps the lessons in."""
        return self._at(Path(self.path).name)


@dataclass(frozen=True)
class Shown:
    """A lesson's words as a reader of `wanted` gets them: `text`, written in `lang`. A lesson that has no text in
    the reader's language stands in another (English, which every lesson has): `stands_in`, and every page that
    shows such words says so in the reader's language (app/views/lessons/text.prose), never under the wanted
    language's name."""

    text: str | dict  # a hint's or an explanation's may be plural forms, which `fill` chooses from
    lang: str  # the language `text` is written in
    wanted: str  # the reader's language

    @property
    def stands_in(self) -> bool:
        return self.lang != self.wanted


def shown_in(words: dict[str, str], language: str) -> Shown:
    """A lesson's words for a reader of `language`: its text in `language`, else English, else any language it has
    (an empty text counts as none)."""
    for lang in (language, "en", *words):
        if words.get(lang):
            return Shown(words[lang], lang, language)
    return Shown("", language, language)


def text_in(words: dict[str, str], language: str) -> str:
    """A lesson's text in `language`, else English, else any language it has (shown_in, which says which)."""
    return shown_in(words, language).text


def for_the_class(words: dict[str, str], language: str, readers: Iterable[str]) -> tuple[Shown, ...]:
    """What one screen for a mixed class (the projector) shows of a lesson's words: the words for `language`, the
    screen's (another language's when the lesson has none in it: shown_in), then the words in each other language
    of `readers` that the lesson is written in. A language the lesson has no words in adds nothing: the stand-in
    is shown once, as the stand-in it is, never again under that language's name."""
    first = shown_in(words, language)
    others = (
        Shown(words[lang], lang, lang)
        for lang in dict.fromkeys(readers)
        if lang != language and words.get(lang) and words[lang] != first.text
    )
    return (first, *others)


# ---- loading -----------------------------------------------------------------------------------------------


def _step_lines(source: str) -> list[int]:
    return [i + 1 for i, line in enumerate(source.splitlines()) if re.match(r"^\s*\[\[\s*steps\s*\]\]", line)]


def _question_lines(source: str) -> list[int]:
    return [i + 1 for i, line in enumerate(source.splitlines()) if re.match(r"^\s*\[\s*steps\.question\s*\]", line)]


def _words(value, where: str, fail, filled: bool = False) -> dict:
    """A words table, each language's text a string; where the text is `filled` with an answer's fields (hints,
    explanations), a language may give plural forms instead: { count = "heads", one = "...", other = "..." }."""
    if isinstance(value, str):
        value = {"en": value}
    if not isinstance(value, dict) or not value:
        fail(f'{where} must be a table of words per language, e.g. {{ en = "...", ja = "..." }}')
    for lang, text in value.items():
        if isinstance(text, str):
            continue
        if not (filled and isinstance(text, dict)):
            fail(f"{where}.{lang} must be text")
        if not is_plural(text):
            fail(
                f"{where}.{lang} must be text or plural forms, e.g. "
                '{ count = "heads", one = "{heads} head", other = "{heads} heads" }'
            )
        fields = re.compile(r"\{" + re.escape(text["count"]) + r"\}")
        if not all(fields.search(form) for form in forms(text)):
            fail(f"{where}.{lang}: count = {text['count']!r} must name a field {{{text['count']}}} every form shows")
    if "en" not in value:
        fail(f"{where} has no English (en) text")
    return dict(value)


def _state(value, fail) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail("state must be a table of query parameters, e.g. { layer = 3, head = 2 }")
    out = {}
    for k, v in value.items():
        if isinstance(v, bool):
            v = "1" if v else "0"  # as a link writes a checkbox
        if not isinstance(v, str | int | float) or isinstance(v, float) and not math.isfinite(v):
            fail(f"state.{k} must be text or a number")
        out[str(k)] = str(v)
    return out


def _question(raw, fail, registry) -> Question:
    if not isinstance(raw, dict):
        fail("question must be a table")
    unknown = set(raw) - {"id", "kind", "answer", "params", "prompt", "hints", "explanation"}
    if unknown:
        fail(f"question has unknown field {sorted(unknown)[0]!r}")
    qid = raw.get("id")
    if not isinstance(qid, str) or not _ID.match(qid):
        fail("question.id must be a short name of letters, digits, '-' or '_'")
    kind = raw.get("kind")
    if kind not in KINDS:
        fail(f"question.kind must be one of {', '.join(KINDS)}, not {kind!r}")
    fn = raw.get("answer")
    if not isinstance(fn, str) or fn not in registry:
        fail(f"question.answer {fn!r} is not a known answer function (core/lessons/answers/)")
    if getattr(registry[fn], "kind", kind) != kind:
        fail(f"question.answer {fn!r} gives a {registry[fn].kind!r} answer, not {kind!r}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        fail("question.params must be a table")
    declared = getattr(registry[fn], "params", None)
    if declared is not None:
        problems = declared.problems(params, "question.params", f"a parameter of {fn}")
        if problems:
            fail(problems[0])
    hints = raw.get("hints", [])
    if not isinstance(hints, list):
        fail("question.hints must be a list of words tables (nudge, pointer, show me)")
    return Question(
        id=qid,
        kind=kind,
        answer_fn=fn,
        params=dict(params),
        prompt=_words(raw.get("prompt"), "question.prompt", fail),
        hints=tuple(_words(h, f"question.hints[{i}]", fail, filled=True) for i, h in enumerate(hints)),
        explanation=_words(raw.get("explanation"), "question.explanation", fail, filled=True),
    )


def read_toml(path: Path) -> tuple[str, dict]:
    """A file of the lessons folder: its text and its TOML. Raises LessonError naming the file (and the line)."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        # an OSError's own words name the whole path: its reason alone
        raise LessonError(path, None, f"cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        return source, tomllib.loads(source)
    except tomllib.TOMLDecodeError as e:
        line = getattr(e, "lineno", None) or _line_of(str(e))
        raise LessonError(path, line, f"not valid TOML: {getattr(e, 'msg', e)}") from None


def load_lesson(path: str | Path, pages: Iterable[str] | None = None) -> Lesson:
    """One lesson file. `pages`: the catalog URLs a step may name (None: not checked here). Raises LessonError."""
    from core.lessons.answers import ANSWER_FUNCTIONS, PAGE_STATES

    path = Path(path)
    source, data = read_toml(path)

    def fail_at(line):
        def fail(message):
            raise LessonError(path, line, message)

        return fail

    fail = fail_at(1)
    unknown = set(data) - {"id", "title", "order", "steps"}
    if unknown:
        fail(f"unknown field {sorted(unknown)[0]!r}")
    lesson_id = data.get("id", path.stem)
    if not isinstance(lesson_id, str) or not _ID.match(lesson_id):
        fail("id must be a short name of letters, digits, '-' or '_'")
    order = data.get("order", 0)
    if not isinstance(order, int) or isinstance(order, bool):
        fail("order must be a whole number")
    title = _words(data.get("title"), "title", fail)
    raw_steps = data.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        fail("a lesson needs at least one [[steps]]")
    step_lines, question_lines = _step_lines(source), _question_lines(source)
    known = set(pages) if pages is not None else None
    steps, ids = [], set()
    for index, raw in enumerate(raw_steps):
        line = step_lines[index] if index < len(step_lines) else None
        fail = fail_at(line)
        where = f"step {index + 1}: "

        def fail_step(message, fail=fail, where=where):
            fail(where + message)

        if not isinstance(raw, dict):
            fail_step("must be a table")
        unknown = set(raw) - {"page", "state", "text", "question"}
        if unknown:
            fail_step(f"unknown field {sorted(unknown)[0]!r}")
        page = raw.get("page")
        if not isinstance(page, str) or not page:
            fail_step('page must name a page, e.g. page = "attention"')
        page = page.strip("/")
        if known is not None and page not in known:
            fail_step(f"page {page!r} is not a page of the app")
        state = _state(raw.get("state"), fail_step)
        if page in PAGE_STATES:
            problems = PAGE_STATES[page].problems(state)
            if problems:
                fail_step(f"/{page}: {problems[0]}")
        question = None
        if "question" in raw:
            q_line = next((q for q in question_lines if line is None or q > line), line)
            question = _question(raw["question"], lambda m, q_line=q_line: fail_at(q_line)(where + m), ANSWER_FUNCTIONS)
            asks = getattr(ANSWER_FUNCTIONS[question.answer_fn], "page", page) or page
            if asks != page:
                fail_at(q_line)(where + f"question.answer {question.answer_fn!r} is about /{asks}, not /{page}")
            if question.id in ids:
                fail_at(q_line)(where + f"question id {question.id!r} is used twice in this lesson")
            ids.add(question.id)
        steps.append(
            Step(
                page,
                state,
                _words(raw.get("text"), "text", fail_step),
                question,
                line or 0,
            )
        )
    return Lesson(lesson_id, title, tuple(steps), str(path), order)


def _line_of(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None


def load_lessons(folder: str | Path | None = None, pages: Iterable[str] | None = None) -> dict[str, Lesson]:
    """Every lessons/*.toml, in the material's order (`order`, then id). Raises LessonError on the first bad file."""
    folder = Path(folder) if folder is not None else DEFAULT_FOLDER
    lessons = [load_lesson(p, pages) for p in sorted(folder.glob("*.toml")) if p.name != PATHS_FILE]
    seen: dict[str, str] = {}
    for lesson in lessons:
        if lesson.id in seen:
            raise LessonError(lesson.path, 1, f"lesson id {lesson.id!r} is also used by {Path(seen[lesson.id]).name}")
        seen[lesson.id] = lesson.path
    return {x.id: x for x in sorted(lessons, key=lambda x: (x.order, x.id))}


# ---- answers -----------------------------------------------------------------------------------------------


def answer(question: Question, state: dict[str, str]) -> Answer:
    """The right answer, computed by the engine from the live state (the step's query parameters as they are now)."""
    from core.lessons.answers import compute

    result = compute(question.answer_fn, question.params, dict(state))
    if result.kind != question.kind:
        raise ValueError(
            f"answer function {question.answer_fn} gave a {result.kind} answer to a {question.kind} question"
        )
    return result


def needs_model_pass(question: Question, state: dict[str, str]) -> bool:
    """Whether computing the question's answer at `state` runs a model (its answer function's declaration): the app
    queues those with the pages' other model passes and computes the rest where they are asked."""
    from core.lessons.answers import needs_model_pass as declared

    return declared(question.answer_fn, dict(state))


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip()


def parse_response(answer: Answer, raw) -> str | float | tuple[str, ...]:
    """A learner's response checked against the question's kind; raises ValueError with a clear message.
    token/choice: one of the options; number: a finite number (full-width digits and thousands separators accepted);
    order: every item once, as a sequence or one string joined by ORDER_SEPARATOR."""
    if isinstance(raw, str) and len(raw) > MAX_RESPONSE_CHARS:
        raise ValueError(f"the answer is longer than {MAX_RESPONSE_CHARS} characters")
    if answer.kind in ("token", "choice"):
        if not isinstance(raw, str):
            raise ValueError("the answer must be one of the options")
        options = {_normal(o): o for o in answer.options}
        if _normal(raw) not in options:
            raise ValueError("the answer is not one of the options")
        return options[_normal(raw)]
    if answer.kind == "number":
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            value = float(raw)
        elif isinstance(raw, str):
            text = _normal(raw).replace(" ", "").replace("_", "")
            if "," in text:  # a thousands separator (1,024), as English, Japanese and Korean write it
                if not re.fullmatch(r"[+-]?\d{1,3}(,\d{3})+(\.\d*)?", text):
                    raise ValueError("write the number without commas, e.g. 1024 or 0.5")
                text = text.replace(",", "")
            try:
                value = float(text)
            except ValueError:
                raise ValueError("the answer must be a number, e.g. 0.42") from None
        else:
            raise ValueError("the answer must be a number, e.g. 0.42")
        if not math.isfinite(value):
            raise ValueError("the answer must be a finite number")
        return value
    if answer.kind == "order":
        if isinstance(raw, str):
            items = [x for x in raw.split(ORDER_SEPARATOR.strip())] if raw.strip() else []
        elif isinstance(raw, Sequence):
            items = list(raw)
        else:
            raise ValueError("the answer must list the items in order")
        options = {_normal(o): o for o in answer.options}
        try:
            chosen = tuple(options[_normal(str(x))] for x in items)
        except KeyError:
            raise ValueError("the answer names an item that is not in the list") from None
        if sorted(chosen) != sorted(answer.options):
            raise ValueError(f"put all {len(answer.options)} items in order, each once")
        return chosen
    raise ValueError(f"unknown question kind {answer.kind!r}")


def format_response(answer: Answer, response) -> str:
    """A parsed response as one string (what a store keeps; parse_response reads it back)."""
    if answer.kind == "order":
        return ORDER_SEPARATOR.join(response)
    if answer.kind == "number":
        return _show_number(float(response), 6)
    return str(response)


def is_correct(answer: Answer, response) -> bool:
    if answer.kind == "number":
        tolerance = answer.tolerance or 0.0
        return abs(float(response) - float(answer.correct)) <= tolerance + 1e-12 * max(1.0, abs(float(answer.correct)))
    if answer.kind == "order":
        return tuple(response) == tuple(answer.correct)
    return response == answer.correct


def count_right(judged: Iterable[tuple[Answer, str]]) -> int:
    """/lessons' score: how many of the (right answer, learner's response) pairs are right. A response that does not
    parse (ValueError) is not."""
    right = 0
    for answer, raw in judged:
        try:
            right += is_correct(answer, parse_response(answer, raw))
        except ValueError:
            continue
    return right


def share_reached(index: int, n_steps: int) -> float:
    """How far along a lesson of n_steps a learner at step `index` (0-based) is, this step counted: the progress bar."""
    return (index + 1) / n_steps


# What stands for the right answer in a hint a study room shows before its facilitator reveals it: the room's
# answer is the facilitator's to give, so a 'show me' hint there points at where to look, not at the answer.
WITHHELD = "…"


def fill(text, answer: Answer | None, *, with_correct: bool = True, said: str | None = None,
         plural_rule: str = "other") -> str:  # fmt: skip
    """An explanation or a hint with {correct} and the answer's detail fields filled in; other braces left as
    written. `said`: how {correct} reads (a choice's words in the text's language; default the answer as
    format_response writes it). Without `with_correct` (a room before the reveal), {correct} reads WITHHELD, and so
    does every detail field that shows the answer itself (shows_answer: a number's `value`, a field equal to the
    answer, e.g. the factor s when the ratio asked is s); the step's other numbers stay. The words read as the
    app's catalogs do (core.grammar): plural forms ({ count = "heads", one = ..., other = ... }) by the count as
    shown and `plural_rule` (the rule family of the text's language), a Korean particle pair after a field
    ({heads}을(를)) by the value's final sound. Without an answer: the text unfilled (plural forms: other)."""
    values = {}
    if answer is not None:
        correct = (format_response(answer, answer.correct) if said is None else said) if with_correct else WITHHELD
        values = {
            k: WITHHELD if not with_correct and shows_answer(answer, v) else _show(v) for k, v in answer.detail.items()
        }
        values["correct"] = correct
    if is_plural(text):
        text = plural_form(plural_rule, text, values.get(text["count"]))
    # only a bare {field} is filled (below), so only a bare one chooses its particle
    text = with_particles(text, lambda field, placeholder: values.get(field) if placeholder == f"{{{field}}}" else None)
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def shows_answer(answer: Answer, value) -> bool:
    """Whether a detail field's value reads as the answer itself, which a room withholds until the reveal: a number
    the same as the answer at the precision a field shows (4 significant digits) or the page shows the answer (6),
    thousands separators aside; the answer's option (a choice's identifier, a token's label '3 cat' or its text
    'cat'); the order itself."""
    shown = _show(value).strip()
    if answer.kind == "number":
        c = float(answer.correct)
        return shown.replace(",", "") in {_show_number(c, 4), _show_number(c, 6)}
    if answer.kind == "order":
        return shown in {format_response(answer, answer.correct), _show(answer.correct)}
    correct = str(answer.correct).strip()
    texts = {correct, correct.split(" ", 1)[-1].strip()} if answer.kind == "token" else {correct}
    return shown in texts


def _show_number(value: float, digits: int) -> str:
    """Whole numbers in full (16777216, not 1.68e+07); others to `digits` significant digits, and from 10^15 on
    in exponent form (a learner's 1e308 is '1e+308', not 309 digits on the room's histogram)."""
    if abs(value) >= 1e15:
        return f"{value:.{digits}g}"
    if value == int(value):
        return str(int(value))
    if abs(value) >= 10**digits:
        return str(round(value))
    return f"{value:.{digits}g}"


def _show(value) -> str:
    if isinstance(value, float):
        return _show_number(value, 4)
    if isinstance(value, tuple | list):
        return ", ".join(_show(v) for v in value)
    return str(value)


# ---- a room's (or one learner's) answers, counted ----------------------------------------------------------


@dataclass(frozen=True)
class Distribution:
    """Responses to one question counted per bar, ready to draw (viz.lessons.histogram). Number answers are
    binned; order answers are counted per distinct order (the most common first, the rest as 'other')."""

    kind: str
    labels: tuple[str, ...]  # one per bar
    counts: tuple[int, ...]
    right: tuple[bool, ...]  # bars that count as right; all False until revealed
    total: int  # responses counted
    n_right: int  # of them right (0 until revealed)
    revealed: bool
    mine: int | None = None  # the bar of the viewer's own response, when given


OTHER = "…"  # label of the bar that gathers the least common order responses


def distribution(answer: Answer, responses: Iterable, reveal: bool = False, mine=None,
                 max_bars: int = 12) -> Distribution:  # fmt: skip
    """Count parsed responses (parse_response values; anything invalid is skipped). reveal=False hides which bars
    are right (what learners see before the facilitator reveals). `mine`: the viewer's own response."""
    parsed = []
    for r in responses:
        try:
            parsed.append(parse_response(answer, r))
        except (ValueError, TypeError):
            continue
    own = None
    if mine is not None:
        try:
            own = parse_response(answer, mine)
        except (ValueError, TypeError):
            own = None
    if answer.kind == "number":
        labels, counts, right, own_bar = _number_bars(answer, parsed, own, max_bars)
    else:
        keys = [format_response(answer, p) for p in parsed]
        tally: dict[str, int] = {}
        for k in keys:
            tally[k] = tally.get(k, 0) + 1
        correct = format_response(answer, answer.correct)
        if answer.kind in ("token", "choice"):
            shown = [
                o for o in answer.options if o in tally or (reveal and o == correct) or len(answer.options) <= max_bars
            ]
        else:
            shown = sorted(tally, key=lambda k: (-tally[k], k))
        if len(shown) > max_bars:
            keep = shown[: max_bars - 1]
            if reveal and correct in shown and correct not in keep:  # before the reveal a bar kept for it would say it
                keep[-1] = correct
            rest = sum(tally.get(k, 0) for k in shown if k not in keep)
            labels = [*keep, OTHER]
            counts = [tally.get(k, 0) for k in keep] + [rest]
        else:
            labels, counts = list(shown), [tally.get(k, 0) for k in shown]
        right = [lab == correct for lab in labels]
        own_key = None if own is None else format_response(answer, own)
        own_bar = (
            labels.index(own_key)
            if own_key in labels
            else (labels.index(OTHER) if own_key and OTHER in labels else None)
        )
    n_right = sum(is_correct(answer, p) for p in parsed) if reveal else 0
    return Distribution(answer.kind, tuple(labels), tuple(counts), tuple(bool(r) and reveal for r in right),
                        len(parsed), n_right, reveal, own_bar)  # fmt: skip


FAR_OUT = 3.0  # an answer beyond this many interquartile ranges past a quartile (Tukey's far out) has a bar of its own


def _number_bars(answer: Answer, values: list, own, max_bars: int):
    """Equal-width bins over the responses; a bin is right when it overlaps the tolerance. Answers far out (FAR_OUT)
    gather in a bar at each end ('< 0', '> 28'), so that one learner's 1e300 does not put the whole class in one
    bin. The bins never depend on the right answer (before the reveal they would say it)."""
    c, tol = float(answer.correct), float(answer.tolerance or 0.0)
    points = [float(v) for v in values]
    if not points:
        return [], [], [], None
    distinct = sorted(set(points))
    if len(distinct) <= max_bars:
        labels = [_show_number(v, 4) for v in distinct]
        counts = [points.count(v) for v in distinct]
        right = [abs(v - c) <= tol + 1e-12 * max(1.0, abs(c)) for v in distinct]
        own_bar = distinct.index(float(own)) if own is not None and float(own) in distinct else None
        return labels, counts, right, own_bar
    q1, q3 = float(np.percentile(points, 25, method="lower")), float(np.percentile(points, 75, method="higher"))
    spread = q3 - q1  # answers themselves (no interpolation, which overflows at 1e308); Python's floats go to inf
    low, high = (q1 - FAR_OUT * spread, q3 + FAR_OUT * spread) if spread > 0 else (-math.inf, math.inf)
    inside = [p for p in points if low <= p <= high]
    below, above = any(p < low for p in points), any(p > high for p in points)
    lo, hi = min(inside), max(inside)
    bins = max_bars - below - above if hi > lo else 1
    # lo and hi weighed, not lo plus a width: hi - lo of two answers such as -1e308 and 1e308 is inf, and every edge
    # then nan (the room's histogram, drawn for the facilitator, the projector and after the reveal, failed)
    share = np.linspace(0.0, 1.0, bins + 1)
    edges = lo * (1.0 - share) + hi * share

    def bar(value: float) -> int:
        if value < low:
            return 0
        if value > high:
            return below + bins
        return below + int(np.clip(np.searchsorted(edges, [value], side="right")[0] - 1, 0, bins - 1))

    counts = np.bincount([bar(p) for p in points], minlength=below + bins + above).tolist()
    labels = [f"{_show_number(float(a), 3)}–{_show_number(float(b), 3)}" for a, b in zip(edges[:-1], edges[1:])]
    right = [bool(a <= c + tol and b >= c - tol) for a, b in zip(edges[:-1], edges[1:])]
    if below:
        labels, right = [f"< {_show_number(lo, 3)}", *labels], [c - tol < lo, *right]
    if above:
        labels, right = [*labels, f"> {_show_number(hi, 3)}"], [*right, c + tol > hi]
    return labels, counts, right, None if own is None else bar(float(own))
