"""Study paths headless: the landing page opens with the paths (lessons/paths.toml), each a link to /lessons at the
path's first lesson with the path in the link; /lessons opened from such a link says where on the path the learner
is and, at the end of a lesson, offers the path's next lesson."""

from urllib.parse import parse_qs

import pytest

from app import i18n
from app.views.lessons.text import plain
from core import lessons as core
from core.lessons import paths as study
from tests.apptest_helpers import assert_no_exception, open_view, shown_text

LESSONS = core.load_lessons()
PATHS = study.load_paths(LESSONS)


def _links(at) -> dict[str, dict[str, str]]:
    """The landing page's links to /lessons that carry a path: label -> the link's query parameters."""
    out = {}
    for link in at.get("page_link"):
        params = {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}
        if link.proto.page == "lessons" and "path" in params:
            out[link.proto.label] = params
    return out


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_landing_page_opens_with_every_path_linked_to_its_first_lesson(lang):
    at = open_view("home", {"lang": lang})
    links = _links(at)
    assert links == {plain(p.title[lang]): {"lesson": p.lessons[0], "path": p.id} for p in PATHS.values()}
    headers = [h.value for h in at.header]
    assert headers.index(i18n.text(lang, "home", "paths")) < headers.index(i18n.text(lang, "home", "pages"))
    shown = shown_text(at).replace("\\", "")
    for p in PATHS.values():  # what each path covers and its lessons, in the reader's language
        assert p.about[lang] in shown
        assert all(LESSONS[x].title[lang] in shown for x in p.lessons)


def _last_step(path: study.StudyPath, lesson_id: str):
    n = len(LESSONS[lesson_id].steps)
    return open_view("lessons", {"lesson": lesson_id, "path": path.id, "lstep": str(n)})


def test_a_path_link_offers_the_next_lesson_of_the_path_at_the_end_of_a_lesson():
    path = PATHS["attention-in-30-minutes"]
    first, second = path.lessons[:2]
    at = open_view("lessons", {"lesson": first, "path": path.id})
    assert f"lesson 1 of {len(path.lessons)}" in shown_text(at)
    assert not [b for b in at.button if b.key == "path-next"], "offered before the lesson's last step"
    at = _last_step(path, first)
    button = at.button(key="path-next")
    assert button.label == f"Next lesson in this path: {plain(LESSONS[second].title['en'])}"  # a label is markdown
    button.click().run()
    assert_no_exception(at)
    assert at.query_params["lesson"] == second and at.query_params["path"] == path.id
    assert at.query_params["lstep"] == "1"
    assert f"lesson 2 of {len(path.lessons)}" in shown_text(at)


def test_the_last_lesson_of_a_path_says_the_path_is_done():
    path = PATHS["efficient-attention"]
    at = _last_step(path, path.lessons[-1])
    assert not [b for b in at.button if b.key == "path-next"]
    assert any(path.title["en"] in s.value for s in at.success)


def test_an_unknown_path_is_ignored_with_a_notice_and_a_lesson_off_the_path_leaves_it():
    at = open_view("lessons", {"lesson": "scaling", "path": "<b>nope</b>"})
    assert "path" in " ".join(w.value for w in at.warning) and "path" not in at.query_params
    at = open_view("lessons", {"lesson": "moe", "path": "attention-in-30-minutes"})
    assert "path" not in at.query_params and not at.warning


def test_the_landing_page_draws_the_sdpa_steps_weights_live_above_the_paths():
    """No model to load: /sdpa-steps' example as that page starts, the same traces and title as its weights figure,
    with a link to the page."""
    from tests.apptest_helpers import figure_by_key, figure_title_by_key

    home, page = open_view("home"), open_view("sdpa-steps")
    drawn = figure_by_key(home, "home-figure-0")
    mine = figure_by_key(page, "fig-weights")
    assert drawn["data"] == mine["data"] and figure_title_by_key(home, "home-figure-0") == figure_title_by_key(
        page, "fig-weights"
    )
    links = [link.proto.page for link in home.get("page_link")]
    assert links.index("sdpa-steps") < links.index("lessons"), "the figure's link comes before the paths"
