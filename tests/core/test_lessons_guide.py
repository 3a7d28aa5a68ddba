"""lessons/README.md walks an author through adding a lesson: its TOML blocks, put one after another as the guide
says, are a lesson the app's own loader accepts, and every question in it gets its answer from the engine with the
hints and the explanation filled in (no placeholder left that the answer does not give)."""

from __future__ import annotations

import re

from app import catalog
from core import lessons as core

GUIDE = core.DEFAULT_FOLDER / "README.md"
WALK = "## Adding a lesson, step by step"


def walk_blocks(guide: str) -> tuple[str, list[str]]:
    """The file name the walk builds and its TOML blocks, in order."""
    walk = guide.split(WALK, 1)[1].split("\n## ", 1)[0]
    name = re.search(r"`lessons/([\w-]+\.toml)`", walk).group(1)
    return name, re.findall(r"```toml\n(.*?)```", walk, flags=re.S)


def test_the_guides_walk_builds_a_lesson_the_loader_accepts_and_the_engine_answers(tmp_path):
    name, blocks = walk_blocks(GUIDE.read_text(encoding="utf-8"))
    assert len(blocks) >= 3, "the file, a step, a question"
    path = tmp_path / name
    path.write_text("\n".join(blocks), encoding="utf-8")
    lesson = core.load_lesson(path, pages=catalog.BY_URL)
    assert lesson.id == path.stem and lesson.steps and lesson.questions
    assert all(set(core.LANGUAGES) <= set(step.text) for step in lesson.steps)
    for step in lesson.steps:
        if step.question is None:
            continue
        q = step.question
        answer = core.answer(q, step.state)
        assert answer.kind == q.kind
        for words in (q.explanation, *q.hints):
            for language in core.LANGUAGES:
                filled = core.fill(words[language], answer)
                assert not re.search(r"\{\w+\}", filled), (q.id, language, filled)
        # what the walk's explanation claims: every query row of the padded sentence sees its real keys
        assert answer.correct == answer.detail["n"] * answer.detail["real"]
