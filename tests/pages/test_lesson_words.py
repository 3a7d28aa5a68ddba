"""Lesson words on every page that shows them (/lessons, a room's facilitator, learner and projector): drawn as
text by one function (app/views/lessons/text.prose), whatever a lesson file holds, and where the lesson has no text
in the reader's language, the English shown instead is said to be English, in the reader's language."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

import app.room.store as store_module
from app import i18n
from app.views.lessons.text import JOINER, plain
from core import lessons as core
from tests.apptest_helpers import assert_no_exception, open_view, run_view
from tests.room_stores import as_process_store

# A lesson file from anywhere: English and Korean, no Japanese; markup a visitor could try in a file they hand a
# facilitator (HTML, a script, a remote image, a javascript: link), CJK and emoji.
TEXT = "EN step <script>alert(1)</script> ![pic](https://example.com/x.png) [go](javascript:alert(1)) 注意 🙂 **b**"
PROMPT = "EN prompt <img src=x onerror=alert(1)> q0 · k0?"
LESSON = f"""
id = "no-ja"
title = {{ en = "No Japanese <b>here</b>", ko = "일본어 없음" }}

[[steps]]
page = "sdpa-steps"
state = {{ dk = 2, dv = 3 }}
text = {{ en = {TEXT!r}, ko = "KO 단계 🙂" }}

[steps.question]
id = "score"
kind = "number"
answer = "sdpa_steps.cell"
params = {{ matrix = "scores", row = 0, col = 0 }}
prompt = {{ en = {PROMPT!r}, ko = "KO 질문?" }}
hints = [{{ en = "EN hint: it is {{correct}} ({{value}}) at d_k = {{d_k}}", ko = "KO 힌트 {{correct}}" }}]
explanation = {{ en = "EN explanation: {{correct}} [x](javascript:alert(1))", ko = "KO 설명 {{correct}}" }}
"""
RIGHT = "14"  # q0 · k0 of the classic example at d_k = 2: 1·4 + 2·5


@pytest.fixture
def no_ja(tmp_path, monkeypatch):
    """The lessons folder holds the lesson above only; the room store is a temporary SQLite file."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "no-ja.toml").write_text(LESSON, encoding="utf-8")
    monkeypatch.setattr(core, "DEFAULT_FOLDER", folder)
    store_module.lessons.clear()
    try:
        yield from as_process_store(tmp_path, monkeypatch)
    finally:
        store_module.lessons.clear()


def parse(markdown: str):
    """A markdown parser at its most permissive: raw HTML on, GFM's tables and strikethrough, and every link
    target taken (its own check would drop a javascript: link and hide what the text asked for)."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.validateLink = lambda url: True
    return md.parse(markdown)


def as_read(markdown: str) -> str:
    """The text a reader sees of `markdown`, which must be text only: no HTML, link, image, code or emphasis."""
    read = []
    for token in parse(markdown):
        assert token.type in ("paragraph_open", "paragraph_close", "inline"), token.type
        for child in token.children or ():
            assert child.type in ("text", "softbreak", "hardbreak"), (child.type, markdown)
            read.append(child.content if child.type == "text" else "\n")
    return "".join(read)


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script> and <b onclick=x>bold</b>",
        "![pic](https://example.com/x.png) ![a][r]\n[r]: https://example.com/y.png",
        "[go](javascript:alert(1)) <javascript:alert(1)> [a](<javascript:x>)",
        "*a* **b** _c_ `d` ~~e~~ $x^2$ \\* &amp; &lt;i&gt;",
        "# head\n> quote\n- item\n1. item\n| a | b |\n|---|---|",
        "注意して読む：QKᵀ[q0, k0]、√d_k 🙂👍🏽 한국어 문장 </s>",
        "https://example.com/x.png, WWW.example.com, ftp://x.y and a.b@example.com",
    ],
)
def test_lesson_words_are_shown_as_written_and_never_as_markup(text):
    read = as_read(plain(text))
    assert read.replace(JOINER, "") == text
    # GFM's links of addresses written out (which this parser leaves out) take nothing that has a joiner inside:
    # checked in chromium with Streamlit's own markdown
    assert not re.search(r"(?i)://|\bwww\.|\w@", read)


def notices(at, lang: str) -> int:
    """How many stand-in notices the page shows in `lang`'s words: English shown for a language the lesson lacks."""
    said = i18n.text(lang, "lessons", "stand_in", language=i18n.text(lang, "common", "lang_en"))
    return [c.value for c in at.caption].count(said)


def read(at) -> list[str]:
    """The lesson's words on the page as a reader sees them (every markdown element with them checked inert)."""
    return [as_read(m.value).replace(JOINER, "") for m in at.markdown if re.search(r"\b(EN|KO) ", str(m.value))]


TITLE = "No Japanese <b>here</b>"
TITLE_JA = f"{TITLE}（英語）"  # a picker's or a title's stand-in: English, named after it in Japanese


def test_lessons_page_says_when_english_stands_in_for_japanese(no_ja):
    at = open_view("lessons", {"lesson": "no-ja", "lang": "ja", "a.score": "0"})
    assert notices(at, "ja") == 3  # the step's text, the question, the explanation
    assert {TEXT, PROMPT, f"EN explanation: {RIGHT} [x](javascript:alert(1))"} <= set(read(at))
    assert at.selectbox(key="lesson").options == [TITLE_JA]
    at = open_view("lessons", {"lesson": "no-ja", "lang": "ko", "a.score": "0"})
    assert notices(at, "ko") == 0 and "KO 설명 14" in read(at)
    assert at.selectbox(key="lesson").options == ["일본어 없음"]  # written in Korean: nothing added


def test_room_pages_say_when_english_stands_in_and_never_call_it_japanese(no_ja):
    store = no_ja
    code, control = store.create("no-ja")
    ana = store.join(code, "Ana", "ja")
    store.join(code, "Dae", "ko")
    store.open_question(code, control, "no-ja", 0)
    facilitator = open_view("room", {"room": code, "key": control, "lang": "ja"})
    assert notices(facilitator, "ja") == 2 and {TEXT, PROMPT} <= set(read(facilitator))
    assert facilitator.header[0].value.endswith(plain(TITLE_JA))  # a title is text too
    assert facilitator.selectbox(key="room-go").options == [f"1. {TEXT[:60]}（英語）"]  # the step menu
    assert open_view("room", {"lang": "ja"}).selectbox(key="room-lesson").options == [TITLE_JA]
    learner = run_view("room", {"room": code, "me": ana, "lang": "ja"})
    learner.run()  # the panel's first poll opens the room's step
    assert_no_exception(learner)
    assert notices(learner, "ja") == 3  # the step's text, the question, its hint
    # the hint is filled as /lessons fills it, but the answer is the facilitator's to reveal: {correct} and a field
    # that reads the same ({value}); the step's other numbers stay
    assert {TEXT, PROMPT, f"EN hint: it is {core.WITHHELD} ({core.WITHHELD}) at d_k = 2"} <= set(read(learner))
    assert not any(RIGHT in words for words in read(learner))
    projector = open_view("room", {"room": code, "mode": "projector", "lang": "ja"})
    assert {TEXT, PROMPT} <= set(read(projector)) and not any(RIGHT in words for words in read(projector))
    store.reveal(code, control)
    for lang, stand_ins in (("ja", 3), ("en", 0)):
        projector = open_view("room", {"room": code, "mode": "projector", "lang": lang})
        assert notices(projector, "ja") == stand_ins
        assert projector.header[0].value.endswith(plain(TITLE_JA if lang == "ja" else TITLE))
        shown = read(projector)
        assert shown.count(TEXT) == 1 and shown.count(f"EN explanation: {RIGHT} [x](javascript:alert(1))") == 1
        assert {"KO 단계 🙂", "KO 질문?", f"KO 설명 {RIGHT}"} <= set(shown)
        drawn = in_order(projector.main)
        under = [drawn[i + 1] for i, e in enumerate(drawn[:-1]) if e.type == "caption" and e.value in LANGUAGES]
        # under a language's name: only words in it (Korean's text, question, answer and explanation; the answer
        # in Japanese words on the English projector), never the English that stood in
        said = [i18n.text(c, "room", "right_answer", answer=RIGHT) for c in ("ko", "ja")]
        assert sorted(e.value for e in under if e.type == "success") == sorted(said[: 2 if lang == "en" else 1])
        assert all(e.type == "success" or as_read(e.value).startswith("KO ") for e in under)


LANGUAGES = ("English", "日本語", "한국어")


def in_order(block) -> list:
    """The elements of a page's block in the order they are drawn."""
    out = []
    for _, node in sorted(block.children.items()):
        out += in_order(node) if hasattr(node, "children") and node.type not in ("caption", "markdown") else [node]
    return out
