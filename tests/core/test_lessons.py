"""Lessons as data (core/lessons): the loader reports a malformed file with its file and line, responses are
validated per kind, answers compared with their tolerance, answers counted for the histogram."""

import itertools
import math
import textwrap

import pytest

from core import lessons as core

GOOD = textwrap.dedent(
    """\
    order = 3
    title = { en = "A lesson", ja = "レッスン", ko = "레슨" }

    [[steps]]
    page = "sdpa-steps"
    state = { dk = 2, dv = 3, preset = "classic", tau = 1.5 }
    text = { en = "Read." }

    [[steps]]
    page = "sdpa-steps"
    text = { en = "Predict." }

    [steps.question]
    id = "q1"
    kind = "number"
    answer = "sdpa_steps.cell"
    params = { matrix = "scores", row = 0, col = 0 }
    prompt = { en = "QKᵀ[0, 0]?" }
    hints = [{ en = "a" }, { en = "b" }, { en = "{correct}" }]
    explanation = { en = "It is {correct} (d_k = {d_k}), not {unknown}." }
    """
)


def write(tmp_path, text, name="lesson.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path, text, pages=None) -> core.LessonError:
    with pytest.raises(core.LessonError) as info:
        core.load_lesson(write(tmp_path, text), pages)
    return info.value


def test_a_good_lesson_loads_with_its_state_as_strings(tmp_path):
    lesson = core.load_lesson(write(tmp_path, GOOD), pages={"sdpa-steps"})
    assert lesson.id == "lesson" and lesson.order == 3 and len(lesson.steps) == 2
    assert lesson.steps[0].state == {"dk": "2", "dv": "3", "preset": "classic", "tau": "1.5"}
    assert lesson.steps[0].question is None and lesson.steps[1].question.kind == "number"
    assert [s.line for s in lesson.steps] == [4, 9]
    assert len(lesson.steps[1].question.hints) == 3


def test_a_toml_syntax_error_names_the_file_and_the_line(tmp_path):
    broken = GOOD.replace(
        'page = "sdpa-steps"\ntext = { en = "Predict." }', 'page = "sdpa-steps\ntext = { en = "Predict." }'
    )
    err = error_of(tmp_path, broken)
    assert err.line == 10 and str(err).startswith(f"{tmp_path / 'lesson.toml'}:10:")


@pytest.mark.parametrize(
    "old, new, line, words",
    [
        (
            'page = "sdpa-steps"\ntext = { en = "Predict." }',
            'page = "nowhere"\ntext = { en = "Predict." }',
            9,
            "not a page",
        ),
        ('answer = "sdpa_steps.cell"', 'answer = "no.such"', 13, "not a known answer function"),
        ('kind = "number"', 'kind = "choice"', 13, "gives a 'number' answer"),
        ('kind = "number"', 'kind = "essay"', 13, "kind must be one of"),
        ('text = { en = "Read." }', 'text = { ja = "読む" }', 4, "no English"),
        ('state = { dk = 2, dv = 3, preset = "classic", tau = 1.5 }', "state = [1, 2]", 4, "state must be a table"),
        # the state and the params against their declarations (core.sdpa_steps.STATE, the answer function's)
        ("dv = 3,", "dv = 65,", 4, "state.dv = '65'"),
        ("dv = 3,", "dv = 3, layer = 2,", 4, "state.layer is not a setting of this page"),
        ('preset = "classic"', 'preset = "mine"', 4, "state.preset = 'mine'"),
        ("tau = 1.5", "tau = 1.505", 4, "state.tau"),  # off the slider's grid of 0.01
        ('matrix = "scores"', 'matrix = "keys"', 13, "question.params.matrix = 'keys'"),
        ("col = 0 }", "column = 0 }", 13, "question.params.column is not a parameter of sdpa_steps.cell"),
        (
            'answer = "sdpa_steps.cell"\nparams = { matrix = "scores", row = 0, col = 0 }',
            'answer = "flash_attention.tiles"\nparams = { what = "all" }',
            13,
            "is about /flash-attention",
        ),
        ('text = { en = "Read." }', 'text = { en = "Read." }\ncolour = "red"', 4, "unknown field 'colour'"),
        ('id = "q1"', 'id = "no spaces allowed"', 13, "question.id"),
    ],
)
def test_a_schema_error_names_the_step_and_its_line(tmp_path, old, new, line, words):
    assert old in GOOD
    err = error_of(tmp_path, GOOD.replace(old, new, 1), pages={"sdpa-steps"})
    assert err.line == line, str(err)
    assert words in err.message and f":{line}:" in str(err)


def test_a_lesson_needs_steps_and_unique_question_ids(tmp_path):
    assert "at least one" in error_of(tmp_path, 'title = { en = "x" }\n').message
    twice = GOOD + GOOD[GOOD.index('[[steps]]\npage = "sdpa-steps"\ntext = { en = "Predict." }') :]
    err = error_of(tmp_path, twice)
    second = [i + 1 for i, line in enumerate(twice.splitlines()) if line == "[steps.question]"][1]
    assert "used twice" in err.message and err.line == second


def test_unreadable_and_duplicate_lessons(tmp_path):
    (tmp_path / "bad.toml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(core.LessonError, match="cannot read"):
        core.load_lessons(tmp_path)
    (tmp_path / "bad.toml").unlink()
    write(tmp_path, GOOD, "a.toml")
    write(tmp_path, 'id = "a"\n' + GOOD, "b.toml")
    with pytest.raises(core.LessonError, match="also used by"):
        core.load_lessons(tmp_path)


def test_lessons_come_in_the_material_order(tmp_path):
    write(tmp_path, GOOD.replace("order = 3", "order = 9"), "a.toml")
    write(tmp_path, GOOD.replace("order = 3", "order = 1"), "z.toml")
    assert list(core.load_lessons(tmp_path)) == ["z", "a"]


def answer(kind, correct, options=(), tolerance=None, **detail):
    return core.Answer(kind, correct, tuple(options), tolerance, detail)


def test_parse_and_check_a_number():
    a = answer("number", 14.0, tolerance=0.01)
    assert core.parse_response(a, "14") == 14.0
    assert core.parse_response(a, "１４．００") == 14.0  # full-width digits, as a Japanese keyboard types them
    assert core.parse_response(a, "1,024") == 1024.0 and core.parse_response(a, "１，０２４．５") == 1024.5
    assert core.parse_response(a, " 1_000 ") == 1000.0 and core.parse_response(a, 3) == 3.0
    for bad in ("", "1,5", "fourteen", "nan", "inf", "1e999", "x" * 3000, None, True):
        with pytest.raises(ValueError):
            core.parse_response(a, bad)
    assert core.is_correct(a, 14.009) and not core.is_correct(a, 14.02)
    assert core.format_response(a, 16777216.0) == "16777216" and core.format_response(a, 1 / 3) == "0.333333"


def test_parse_and_check_a_choice_and_a_token():
    a = answer("choice", "k2", ("k0", "k1", "k2"))
    assert core.parse_response(a, " k2 ") == "k2" and core.is_correct(a, "k2") and not core.is_correct(a, "k1")
    with pytest.raises(ValueError, match="not one of the options"):
        core.parse_response(a, "k3")
    t = answer("token", "1 cat", ("0 the", "1 cat", "2 the"))
    assert core.parse_response(t, "2 the") == "2 the" and not core.is_correct(t, "2 the")


def test_the_score_counts_the_right_responses_and_the_bar_the_steps_reached():
    number, choice = answer("number", 14.0, tolerance=0.01), answer("choice", "k2", ("k0", "k1", "k2"))
    judged = [(number, "14.005"), (number, "15"), (choice, "k2"), (choice, "k9"), (number, "fourteen")]
    assert core.count_right(judged) == 2 and core.count_right([]) == 0  # an unparsed response is not right
    assert core.share_reached(0, 4) == 0.25 and core.share_reached(3, 4) == 1.0  # step 1 of 4, the last of 4


def test_parse_and_check_an_order():
    a = answer("order", ("k2", "k1", "k0"), ("k0", "k1", "k2"))
    assert core.parse_response(a, "k2 > k1 > k0") == ("k2", "k1", "k0")
    assert core.parse_response(a, ["k2", "k0", "k1"]) == ("k2", "k0", "k1")
    assert core.is_correct(a, ("k2", "k1", "k0")) and not core.is_correct(a, ("k2", "k0", "k1"))
    for bad in ("k2 > k1", "k2 > k2 > k1", "k2 > k1 > k9", 5):
        with pytest.raises(ValueError):
            core.parse_response(a, bad)
    assert core.parse_response(a, core.format_response(a, a.correct)) == a.correct


def test_fill_quotes_the_answer_and_leaves_unknown_fields():
    a = answer("number", 14.0, tolerance=0.01, d_k=2, w=0.98563)
    assert core.fill("{correct} at d_k = {d_k}, w = {w}, {other}", a) == "14 at d_k = 2, w = 0.9856, {other}"


def test_fill_can_withhold_the_answer_and_keep_the_numbers():
    """A room's hint before the reveal: the step's numbers, never the answer."""
    a = answer("number", 14.0, tolerance=0.01, d_k=2)
    assert core.fill("{correct} at d_k = {d_k}", a, with_correct=False) == f"{core.WITHHELD} at d_k = 2"
    # a field that reads as the answer is the answer under another name: the same number as a field shows it (4
    # significant digits) or the page does (6), the option picked, a token's text; what only looks like it stays
    w = answer("number", 0.985633, tolerance=0.01, value=0.985633, rounded=0.98563, s=0.9856, row=0, near=0.9857)
    assert core.fill("{value} {rounded} {s} {row} {near}", w, with_correct=False) == "… … … 0 0.9857"
    assert core.fill("{value} {rounded}", w) == "0.9856 0.9856"  # /lessons and the reveal: as before
    assert core.fill("{n}", answer("number", 1024.0, n="1,024"), with_correct=False) == core.WITHHELD
    pick = answer("choice", " of", (" is", " of"), final=" of", word=" is")
    assert core.fill("{final}, {word}", pick, with_correct=False) == "…,  is"
    assert core.fill("{correct}", pick, said="of (en)") == "of (en)"
    token = answer("token", "3 cat", ("1 the", "3 cat"), query="1 the", word="cat")
    assert core.fill("{query} {word} {correct}", token, with_correct=False) == "1 the … …"


def test_distribution_counts_and_hides_the_right_bar_until_revealed():
    a = answer("choice", "b", ("a", "b", "c"))
    hidden = core.distribution(a, ["a", "b", "b", "not an option"], mine="a")
    assert hidden.labels == ("a", "b", "c") and hidden.counts == (1, 2, 0) and hidden.total == 3
    assert not any(hidden.right) and hidden.n_right == 0 and hidden.mine == 0
    shown = core.distribution(a, ["a", "b", "b"], reveal=True)
    assert shown.right == (False, True, False) and shown.n_right == 2


def test_bars_before_the_reveal_are_the_same_whatever_the_right_answer():
    """What the projector and the learners see before the reveal says nothing of the answer: with more options
    answered than bars, the bars kept (the first options, or the most common orders; the rest gathered in '…') make
    no room for the right one, which would stand out as the one bar out of its place. After the reveal it gets one."""
    tokens = tuple(f"{i} w{i}" for i in range(16))
    responses = [t for i, t in enumerate(tokens) for _ in range(1 + (i < 4))]  # every token answered
    seen = {core.distribution(answer("token", right, tokens), responses) for right in tokens}
    assert len(seen) == 1 and next(iter(seen)).labels == (*tokens[:11], core.OTHER)
    shown = core.distribution(answer("token", tokens[15], tokens), responses, reveal=True)
    assert tokens[15] in shown.labels and shown.right[shown.labels.index(tokens[15])]
    orders = [" > ".join(p) for p in itertools.permutations("wxyz")]
    seen = {core.distribution(answer("order", tuple(o.split(" > ")), "wxyz"), orders) for o in orders}
    assert len(seen) == 1


def test_distribution_bins_numbers_around_the_tolerance():
    a = answer("number", 3.0, tolerance=0.1)
    few = core.distribution(a, ["3", "3.05", "2"], reveal=True, mine="2")
    assert few.labels == ("2", "3", "3.05") and few.counts == (1, 1, 1) and few.right == (False, True, True)
    assert few.mine == 0 and few.n_right == 2
    many = core.distribution(a, [str(x) for x in range(40)], reveal=True, max_bars=8)
    assert len(many.labels) == 8 and sum(many.counts) == 40 and sum(many.right) == 1 and many.right[0]


def test_distribution_of_orders_keeps_the_most_common():
    a = answer("order", ("x", "y", "z"), ("z", "y", "x"))
    import itertools

    responses = [" > ".join(p) for p in itertools.permutations("xyz")] + ["x > y > z"] * 3
    d = core.distribution(a, responses, reveal=True, max_bars=3)
    assert d.labels[0] == "x > y > z" and d.counts[0] == 4 and d.right[0]
    assert d.labels[-1] == core.OTHER and sum(d.counts) == 9 and math.isclose(d.n_right, 4)


def test_the_lesson_format_guide_lists_every_answer_function():
    from core.lessons.answers import ANSWER_FUNCTIONS

    guide = (core.DEFAULT_FOLDER / "README.md").read_text(encoding="utf-8")
    assert not [name for name in ANSWER_FUNCTIONS if f"| `{name}` | {ANSWER_FUNCTIONS[name].kind} |" not in guide]


def test_the_guides_example_is_a_lesson_that_loads(tmp_path):
    from app import catalog

    guide = (core.DEFAULT_FOLDER / "README.md").read_text(encoding="utf-8")
    example = guide.split("```toml\n", 1)[1].split("```", 1)[0]
    lesson = core.load_lesson(write(tmp_path, example, "mine.toml"), pages=catalog.BY_URL)
    assert lesson.id == "mine" and lesson.steps[0].question.answer_fn == "attention.top_key"


def _imports_within(package) -> dict[str, set[str]]:
    """Each module of `package` (a folder) -> the modules of it that it imports, at its top or inside a function
    (`from a.b import c` names module a.b.c where that is a file, else a.b)."""
    import ast
    from pathlib import Path

    root = Path(package.__file__).parent
    prefix = package.__name__
    modules = {
        ".".join((prefix, *p.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in root.rglob("*.py")
    }
    found = {}
    for name, path in modules.items():
        found[name] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [f"{node.module}.{a.name}" for a in node.names]
                found[name] |= {m if m in modules else node.module for m in named} & modules.keys()
            elif isinstance(node, ast.Import):
                found[name] |= {a.name for a in node.names} & modules.keys()
        found[name].discard(name)
    return found


def test_the_lesson_modules_import_one_way_only():
    """core.lessons -> its answers -> each topic's answers -> their registry -> the answer type, never back: a
    circle in these imports (a topic importing the package that imports it) is found here, where farm-studio's
    module-level count does not see one."""
    import core.lessons

    graph = _imports_within(core.lessons)
    assert graph["core.lessons.answers"] >= {"core.lessons.answers.attention", "core.lessons.answers.base"}
    done, path = set(), []

    def visit(module):
        assert module not in path, " -> ".join([*path[path.index(module) :], module])
        if module not in done:
            path.append(module)
            for imported in sorted(graph[module]):
                visit(imported)
            path.pop()
            done.add(module)

    for module in sorted(graph):
        visit(module)


def test_words_missing_a_language_say_which_language_stands_in():
    """A reader of a language the lesson has no words in gets English, marked as English (stands_in), never as
    theirs; a screen for a mixed class shows the stand-in once and each other language only where it is written."""
    words = {"en": "The step.", "ko": "단계.", "ja": ""}  # an empty text counts as none
    assert core.shown_in(words, "ko") == core.Shown("단계.", "ko", "ko") and not core.shown_in(words, "ko").stands_in
    ja = core.shown_in(words, "ja")
    assert ja == core.Shown("The step.", "en", "ja") and ja.stands_in
    assert core.shown_in({"ko": "단계."}, "ja") == core.Shown("단계.", "ko", "ja")  # no English: any it has
    assert core.text_in(words, "ja") == "The step."
    shown = core.for_the_class(words, "ja", ["ja", "en", "ko", "ja"])
    assert shown == (core.Shown("The step.", "en", "ja"), core.Shown("단계.", "ko", "ko"))
    assert core.for_the_class(words, "en", ["ja", "en"]) == (core.Shown("The step.", "en", "en"),)
    assert core.for_the_class(words, "ko", ["ja", "en"]) == (core.Shown("단계.", "ko", "ko"),
                                                             core.Shown("The step.", "en", "en"))  # fmt: skip


def test_numbers_at_the_ends_of_the_floats_are_binned_and_written_short():
    """A learner may answer any finite number: two answers as far apart as -1e308 and 1e308 made every bin's edge
    nan (hi - lo overflowed) and the room's histogram failed for the facilitator and the projector; and a whole
    number of 309 digits was a bar's label."""
    a = answer("number", 3.0, tolerance=0.1)
    responses = ["-1.7976931348623157e308", "1.7976931348623157e308", "1e308"] + [str(x) for x in range(20)]
    d = core.distribution(a, responses, reveal=True, mine="1e308")
    assert len(d.labels) == 12 and sum(d.counts) == 23 and d.mine == 11 and sum(d.right) == 1
    assert all(len(label) < 30 for label in d.labels), d.labels
    few = core.distribution(a, ["1e308", "3"], reveal=True)
    assert few.labels == ("3", "1e+308")
    assert core.format_response(a, 1e308) == "1e+308" and core.parse_response(a, "1e+308") == 1e308


def test_answers_far_out_gather_at_the_ends_and_the_class_keeps_its_bins():
    """One learner's 1e300 (or -50 among answers of 0 to 28) made every bin as wide as a 300th power of ten, and the
    other 29 answers one bar: the class's spread, what the reveal discusses, was gone. Answers far out (beyond three
    interquartile ranges past a quartile) have a bar at each end; the bins follow the rest, the same bins whatever
    the right answer (they are shown before the reveal)."""
    class_answers = [str(x) for x in range(29)]
    d = core.distribution(answer("number", 3.0, tolerance=0.1), [*class_answers, "1e300"], reveal=True, mine="1e300")
    assert d.labels[-1] == "> 28" and d.counts[-1] == 1 and d.mine == len(d.labels) - 1 and not d.right[-1]
    assert len(d.labels) == 12 and sum(d.counts[:-1]) == 29 and max(d.counts[:-1]) <= 3
    both = core.distribution(answer("number", -1e9, tolerance=1.0), [*class_answers, "1e300", "-50"], reveal=True)
    assert both.labels[0] == "< 0" and both.labels[-1] == "> 28" and both.counts[0] == both.counts[-1] == 1
    assert both.right[0] and sum(both.right) == 1  # the right answer lies below every bin of the class
    hidden = {core.distribution(answer("number", c, tolerance=0.1), [*class_answers, "1e300"]).labels for c in (3, 1e9)}
    assert len(hidden) == 1
