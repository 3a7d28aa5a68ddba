"""/lessons headless: walk a lesson, answer each kind of question, the hint ladder, answers kept in the URL, and a
broken lesson file reported with its file and line instead of a crash."""

import pytest

from app import i18n
from core import lessons as core
from tests.apptest_helpers import assert_no_exception, open_view, shown_text

LESSON = "qkv-softmax"


def _submit(at):
    next(b for b in at.button if b.label == "Check my answer").click().run()


def open_step(step: int, **params):
    return open_view("lessons", {"lesson": LESSON, "lstep": str(step), **params})


def test_the_page_opens_on_the_first_lesson():
    at = open_view("lessons")
    assert at.title[0].value
    assert at.query_params["lesson"] == next(iter(core.load_lessons()))


def test_the_step_buttons_stand_in_a_row_that_wraps():
    """Never cut to their column ('前のステッ…' on a tablet in st.columns): ui.buttons' row, each as wide as its label."""
    at = open_view("lessons", {"lang": "ja"})
    rows = [b for b in at.container if b.proto.flex_container.direction == b.proto.flex_container.HORIZONTAL]
    labels = [[c.label for c in r.children.values() if type(c).__name__ == "Button"] for r in rows]
    assert [i18n.text("ja", "lessons", "prev"), i18n.text("ja", "lessons", "next")] in labels


def test_a_right_number_answer_is_confirmed_and_kept_in_the_url():
    at = open_step(1)
    at.text_input[0].input("14")  # q0 · k0 = 1·4 + 2·5 of the classic example
    _submit(at)
    assert_no_exception(at)
    assert at.success, shown_text(at)
    assert at.query_params["a.score-q0-k0"] == "14"
    assert "14" in [c.value for c in at.code]


def test_a_wrong_answer_says_so_and_shows_the_right_one():
    at = open_step(1)
    at.text_input[0].input("13")
    _submit(at)
    assert_no_exception(at)
    assert at.error and not at.success
    assert "14" in [c.value for c in at.code]


def test_an_answer_in_the_link_comes_back():
    at = open_step(1, **{"a.score-q0-k0": "14"})
    assert at.success and not at.text_input


def test_a_malformed_number_is_refused_with_a_message():
    at = open_step(1)
    at.text_input[0].input("fourteen")
    _submit(at)
    assert_no_exception(at)
    assert at.warning and not at.success and not at.error
    assert "a.score-q0-k0" not in at.query_params


def test_the_hint_ladder_gives_three_hints_then_stops():
    at = open_step(1)
    for n in range(1, 4):
        at.button(key=f"hint-{LESSON}-score-q0-k0").click().run()
        assert len([c for c in at.caption if c.value in ("Nudge", "Pointer", "Show me")]) == n
    assert not [b for b in at.button if b.key == f"hint-{LESSON}-score-q0-k0"]


def test_a_choice_and_an_order_question():
    at = open_step(3)
    at.radio[0].set_value("k2")
    _submit(at)
    assert at.success, shown_text(at)
    at = open_step(4)
    at.multiselect[0].set_value(["k0", "k1", "k2"])  # the wrong order: k2 has the largest weight
    _submit(at)
    assert at.error
    assert "k2 > k1 > k0" in [c.value for c in at.code]


def test_next_and_previous_move_through_the_steps():
    at = open_step(1)
    at.button[[b.label for b in at.button].index("Next step")].click().run()
    assert at.query_params["lstep"] == "2"
    assert at.number_input(key="lstep").value == 2


def test_a_broken_lesson_file_is_reported_with_file_and_line(tmp_path, monkeypatch):
    good = (core.DEFAULT_FOLDER / f"{LESSON}.toml").read_text(encoding="utf-8")
    (tmp_path / "broken.toml").write_text(good.replace('page = "attention"', 'page = "attention'), encoding="utf-8")
    monkeypatch.setattr(core, "DEFAULT_FOLDER", tmp_path)
    at = open_view("lessons")
    assert at.error
    assert any("broken.toml:" in c.value for c in at.code), [c.value for c in at.code]


@pytest.mark.parametrize("broken", ["toml", "duplicate", "unreadable"])
def test_a_broken_lesson_file_is_named_without_the_servers_folders(tmp_path, monkeypatch, broken):
    """Every visitor of a hosted server reads what /lessons and /room say of a broken lesson file: the file's name and
    line, never the folder the server keeps it in (the operator's paths stay in the server's log, as the models
    list's do). A file that cannot be read, or a lesson id used twice, named both files by their absolute paths."""
    import app.room.store as room_store

    folder = tmp_path / "srv-private-lessons"
    folder.mkdir()
    good = (core.DEFAULT_FOLDER / f"{LESSON}.toml").read_text(encoding="utf-8")
    if broken == "toml":
        (folder / "broken.toml").write_text(good.replace('page = "attention"', 'page = "attention'), encoding="utf-8")
    elif broken == "duplicate":
        (folder / "a-first.toml").write_text(f'id = "{LESSON}"\n' + good, encoding="utf-8")
        (folder / "broken.toml").write_text(f'id = "{LESSON}"\n' + good, encoding="utf-8")
    else:
        (folder / "broken.toml").mkdir()  # a name the folder's glob finds that cannot be read as a file
    monkeypatch.setattr(core, "DEFAULT_FOLDER", folder)
    room_store.lessons.clear()  # the rooms' lessons, read once per process
    try:
        for page in ("lessons", "room"):
            at = open_view(page)
            shown = shown_text(at) + " ".join(c.value for c in at.code)
            assert at.error and "broken.toml" in shown, (page, shown)
            assert "srv-private-lessons" not in shown and str(tmp_path) not in shown, (page, shown)
    finally:
        room_store.lessons.clear()


@pytest.mark.parametrize("lang, title", [("ja", "レッスン"), ("ko", "레슨")])
def test_the_walk_in_japanese_and_korean(lang, title):
    at = open_view("lessons", {"lesson": LESSON, "lstep": "2"}, state={"lang": lang})
    assert at.title[0].value == title
    step = core.load_lessons()[LESSON].steps[1]
    shown = [m.value.replace("\\", "") for m in at.markdown]
    assert step.text[lang] in shown and step.question.prompt[lang] in shown


def test_open_here_takes_the_step_state_over_earlier_settings():
    at = open_view("lessons", {"lesson": "scaling", "lstep": "4"}, state={"sdk": 16})  # a d_k set earlier
    at.button(key="here-step-3").click().run()
    assert_no_exception(at)
    assert at.query_params["sdk"] == "256" and at.slider(key="sdk").value == 256


def test_learner_text_is_escaped():
    from app.views.lessons.text import plain

    assert plain("[x](javascript:alert(1)) <b>*hi*</b> $x$") == (
        r"\[x\]\(javascript:alert\(1\)\) \<b\>\*hi\*\</b\> \$x\$"
    )


@pytest.mark.parametrize(
    "params",
    [
        {"a.score-q0-k0": "<script>alert(1)</script>"},
        {"lstep": "99"},
        {"lesson": "no-such-lesson"},
        {"a.unknown": "1", "lstep": "-3"},
    ],
)
def test_a_bad_link_never_breaks_the_walk(params):
    at = open_view("lessons", {"lesson": LESSON, "lstep": "1", **params})
    assert_no_exception(at)
    assert not at.success  # nothing counts as answered
    assert "<script>" not in "".join(m.value for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_a_choice_is_shown_in_the_readers_words(lang):
    """The engine's choice identifiers ('offset', 'both') are labels in the reader's language, in the options, the
    answer boxes and the explanation; the link still keeps the identifier."""
    steps = core.load_lessons()["rope"].steps
    step = 1 + next(i for i, s in enumerate(steps) if s.question is not None and s.question.id == "relative")
    at = open_view("lessons", {"lesson": "rope", "lstep": str(step)}, state={"lang": lang})
    word = {k: i18n.text(lang, "lessons", f"choice_{k}") for k in ("offset", "both")}
    radio = at.radio[0]
    assert radio.options == [word["offset"], word["both"]]
    radio.set_value("offset")
    next(b for b in at.button if (b.key or "").startswith("FormSubmitter")).click().run()  # the form's check button
    assert_no_exception(at)
    assert at.success and at.query_params["a.relative"] == "offset"
    assert [c.value for c in at.code] == [word["offset"], word["offset"]]  # the learner's answer and the right one
    assert any(word["offset"] in m.value for m in at.markdown)  # the explanation says it in words too


@pytest.mark.parametrize("lang", ["en", "ja", "ko"])
def test_the_items_of_an_order_are_shown_in_the_readers_words(lang):
    """An order question's items ('encoder_self', 'cross') are labels in the reader's language in the box and in
    both answer boxes; the link keeps the identifiers."""
    steps = core.load_lessons()["masks"].steps
    step = 1 + next(i for i, s in enumerate(steps) if s.question is not None and s.question.id == "kind-order")
    at = open_view("lessons", {"lesson": "masks", "lstep": str(step)}, state={"lang": lang})
    kinds = ("encoder_self", "decoder_self", "cross")
    word = {k: i18n.text(lang, "lessons", f"choice_{k}") for k in kinds}
    box = at.multiselect[0]
    assert sorted(box.options) == sorted(word.values())
    box.set_value(list(kinds))
    next(b for b in at.button if (b.key or "").startswith("FormSubmitter")).click().run()
    assert_no_exception(at)
    assert at.query_params["a.kind-order"] in (" > ".join(kinds), [" > ".join(kinds)])
    mine = at.code[0].value
    assert mine == " > ".join(word[k] for k in kinds)
    assert sorted(at.code[1].value.split(" > ")) == sorted(word.values())


@pytest.mark.parametrize("hosted", [True, False])
def test_an_answer_the_engine_cannot_compute_names_no_server_file_to_a_hosted_visitor(monkeypatch, hosted):
    """An answer the engine cannot compute here (a model's file unreadable, not installed): a laptop user is told
    the engine's reason (which file, what to install); a hosted server's visitor one sentence, the reason going to
    the server's log, since an OSError's words name the server's files."""
    from app.views.lessons import progress

    def unreadable(question, state):
        raise OSError(2, "No such file or directory", "/srv/private-models/smollm2/model.safetensors")

    monkeypatch.setattr(progress, "right_answer", unreadable)
    monkeypatch.setenv("ATTENTION_LAB_HOSTED" if hosted else "ATTENTION_LAB_LOCAL", "1")
    at = open_step(1)
    shown = shown_text(at) + " ".join(c.value for c in at.code)
    assert at.warning and not at.text_input  # no answer box for an answer that cannot be checked
    if hosted:
        assert "/srv/private-models" not in shown, shown
        assert i18n.text("en", "lessons", "no_answer_hosted") in shown
    else:
        assert "/srv/private-models/smollm2/model.safetensors" in shown


@pytest.mark.parametrize(
    "answers", [{}, {"a.score-q0-k0": "14"}, {"a.score-q0-k0": "1"}], ids=["open", "right", "wrong"]
)
def test_the_steps_view_is_offered_once(answers):
    """One caption naming the step's view and one pair of buttons to open it, before and after an answer: an
    answer judged offers the view under "the view that shows why", and the page drew the same pair again under it."""
    at = open_step(1, lang="ja", **answers)
    caption = i18n.text("ja", "lessons", "view_caption").split("{")[0]
    assert [c.value for c in at.caption].count(next(c.value for c in at.caption if c.value.startswith(caption))) == 1
    assert [b.label for b in at.button].count(i18n.text("ja", "lessons", "open_here")) == 1
