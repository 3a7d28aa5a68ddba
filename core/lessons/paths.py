"""Study paths: named sequences of lessons the landing page opens with ("attention in 30 minutes", ...), declared
once in lessons/paths.toml beside the lessons they name. A path's place in a link is the lesson on screen, so a
link to /lessons?lesson=<id>&path=<path> says how far along the path a learner is.

    [[paths]]
    id = "basics"
    title = { en = "...", ja = "...", ko = "..." }
    about = { en = "...", ja = "...", ko = "..." }
    lessons = ["qkv-softmax", "scaling"]       # lesson ids (file names without .toml), in study order
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from core.lessons import _ID, DEFAULT_FOLDER, PATHS_FILE, LessonError, _words, read_toml


@dataclass(frozen=True)
class StudyPath:
    id: str
    title: dict[str, str]
    about: dict[str, str]
    lessons: tuple[str, ...]  # lesson ids in study order

    def position(self, lesson_id: str) -> int | None:
        """0-based place of `lesson_id` on this path (its first), None when the path does not take it."""
        return self.lessons.index(lesson_id) if lesson_id in self.lessons else None

    def after(self, lesson_id: str) -> str | None:
        """The lesson that follows `lesson_id` on this path, None at its end or off it."""
        i = self.position(lesson_id)
        return None if i is None or i + 1 >= len(self.lessons) else self.lessons[i + 1]


def load_paths(lessons: Mapping[str, object], folder: str | Path | None = None) -> dict[str, StudyPath]:
    """The study paths of `folder`/paths.toml in file order ({} without the file), every lesson they name checked
    against `lessons` (load_lessons' result). Raises LessonError naming the file and line of a bad entry."""
    path = (Path(folder) if folder is not None else DEFAULT_FOLDER) / PATHS_FILE
    if not path.exists():
        return {}
    source, data = read_toml(path)
    if set(data) - {"paths"} or not isinstance(data.get("paths"), list):
        raise LessonError(path, 1, "the file holds [[paths]] tables only")
    lines = [i + 1 for i, line in enumerate(source.splitlines()) if re.match(r"^\s*\[\[\s*paths\s*\]\]", line)]
    out: dict[str, StudyPath] = {}
    for index, raw in enumerate(data["paths"]):
        line = lines[index] if index < len(lines) else None

        def fail(message, line=line, index=index):
            raise LessonError(path, line, f"path {index + 1}: {message}")

        if not isinstance(raw, dict):
            fail("must be a table")
        unknown = set(raw) - {"id", "title", "about", "lessons"}
        if unknown:
            fail(f"unknown field {sorted(unknown)[0]!r}")
        path_id = raw.get("id")
        if not isinstance(path_id, str) or not _ID.match(path_id):
            fail("id must be a short name of letters, digits, '-' or '_'")
        if path_id in out:
            fail(f"id {path_id!r} is used twice")
        ids = raw.get("lessons")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            fail('lessons must be a list of lesson ids, e.g. lessons = ["qkv-softmax", "scaling"]')
        missing = [i for i in ids if i not in lessons]
        if missing:
            fail(f"lesson {missing[0]!r} is not a lesson (lessons/{missing[0]}.toml does not exist)")
        if len(set(ids)) != len(ids):
            fail("a lesson is named twice")
        title = _words(raw.get("title"), "title", fail)
        out[path_id] = StudyPath(path_id, title, _words(raw.get("about"), "about", fail), tuple(ids))
    return out
