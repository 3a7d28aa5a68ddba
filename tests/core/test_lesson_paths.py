"""The study paths (lessons/paths.toml): they load, name only lessons that exist, cover every shipped lesson, speak
every language, and a misspelt lesson id is reported with the file and the line."""

import pytest

from core import lessons as core
from core.lessons import paths as study

LESSONS = core.load_lessons()


def test_the_shipped_paths_name_existing_lessons_and_cover_every_lesson():
    paths = study.load_paths(LESSONS)
    assert 3 <= len(paths) <= 4
    on_a_path = {lesson for p in paths.values() for lesson in p.lessons}
    assert on_a_path <= set(LESSONS)
    assert set(LESSONS) - on_a_path == set(), "every lesson belongs to a path"
    for p in paths.values():
        assert len(p.lessons) >= 2
        for words in (p.title, p.about):
            assert set(words) == set(core.LANGUAGES) and all(words.values())


def test_the_paths_file_is_not_read_as_a_lesson():
    assert core.PATHS_FILE not in {lesson.path.rsplit("/", 1)[-1] for lesson in LESSONS.values()}


def test_next_lesson_follows_the_path_and_stops_at_its_end():
    p = study.StudyPath("p", {"en": "P"}, {"en": "about"}, ("qkv-softmax", "scaling", "masks"))
    assert p.after("qkv-softmax") == "scaling" and p.after("scaling") == "masks"
    assert p.after("masks") is None and p.after("moe") is None
    assert p.position("masks") == 2 and p.position("moe") is None


def _write(tmp_path, body: str):
    (tmp_path / core.PATHS_FILE).write_text(body, encoding="utf-8")
    return tmp_path


def test_a_misspelt_lesson_id_is_reported_with_file_and_line(tmp_path):
    folder = _write(tmp_path, '# a path\n\n[[paths]]\nid = "a"\ntitle = "A"\nabout = "x"\nlessons = ["scaling"]\n\n'
                              '[[paths]]\nid = "b"\ntitle = "B"\nabout = "y"\nlessons = ["qkv-softmax", "scalling"]\n')  # fmt: skip
    with pytest.raises(core.LessonError) as err:
        study.load_paths(LESSONS, folder)
    assert err.value.line == 9 and "'scalling'" in str(err.value) and core.PATHS_FILE in str(err.value)


@pytest.mark.parametrize(
    "body, says",
    [
        ('[[paths]]\nid = "a"\ntitle = "A"\nabout = "x"\nlessons = []\n', "lessons must be a list"),
        ('[[paths]]\nid = "a b"\ntitle = "A"\nabout = "x"\nlessons = ["moe"]\n', "id must be"),
        ('[[paths]]\nid = "a"\nabout = "x"\nlessons = ["moe"]\n', "title"),
        ('[[paths]]\nid = "a"\ntitle = "A"\nabout = "x"\nlessons = ["moe", "moe"]\n', "named twice"),
        ('[[paths]]\nid = "a"\ntitle = "A"\nabout = "x"\nlessons = ["moe"]\ncolour = 1\n', "unknown field"),
        ("[[paths]\n", "not valid TOML"),
    ],
)
def test_a_malformed_paths_file_says_what_is_wrong(tmp_path, body, says):
    with pytest.raises(core.LessonError, match=says):
        study.load_paths(LESSONS, _write(tmp_path, body))


def test_no_paths_file_means_no_paths(tmp_path):
    assert study.load_paths(LESSONS, tmp_path) == {}
