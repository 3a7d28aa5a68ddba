"""The /transformer-xl page headless: the committed run's numbers as the page states them, and the effective
context sentence."""

import pytest

from core import transformer_xl as tx
from core.results import load_result
from tests.apptest_helpers import count_builds, figure_by_key, open_view, shown_text

MODEL_FREE = True  # its tests (those not marked slow) load no model: tests/conftest.py checks it


def test_verdict_numbers_are_the_committed_results():
    data = load_result("transformer_xl")
    assert data is not None and data["tokens"] >= 1024 and "command" in data and "date" in data
    past = data["mean_loss_past_window"]
    at = open_view("transformer_xl")
    text = shown_text(at)
    assert f"window **{past['window'] - past['full']:+.3f}** nats" in text
    assert f"sinks + window **{past['sinks_window'] - past['full']:+.3f}**" in text
    assert ("The finding holds here" in text) == tx.sinks_finding_holds(past)
    assert ("XL's memory does worse" in text) == (not tx.xl_beats_independent(past))


def test_effective_context_sentence_follows_the_settings():
    at = open_view("transformer_xl", {"seg": "8", "win": "8", "sinks": "0"})
    reach = tx.effective_context(1024, 8, 8, 0, 30)
    text = shown_text(at)
    assert f"**{reach['xl'][-1]:,}** positions" in text and reach["xl"][-1] == 8 * 31
    assert "at most 2L keys" in text and "2L − 1" not in text  # the last token of a segment: L + L keys
    assert "StreamingLLM renumbers positions inside its cache" in text and "hidden states" in text


def test_visitors_at_the_same_settings_share_the_masks_and_the_reach(monkeypatch):
    """Parts 1 and 2 do not depend on the text of part 4, whose box starts a run at every edit: their views and
    figures are made once per process for every visitor at the same settings (about 95 ms of a 144 ms rerun), and
    part 3's two curves of the committed run once per process (20 ms of a 42 ms rerun)."""
    from app.views.transformer_xl import ideas

    masks = count_builds(monkeypatch, ideas.vx, "masks_figures")
    reach = count_builds(monkeypatch, ideas.tx, "reach_view")
    lines = count_builds(monkeypatch, ideas.vx, "lines_figure")  # part 2's reach, part 3's two curves
    first = open_view("transformer_xl", {"seg": "8"})
    second = open_view("transformer_xl", {"seg": "8", "text": "Rain fell all night. She smiled."})
    assert len(masks) == 1 and len(reach) == 1 and len(lines) == 3
    specs = [[c.proto.spec for c in at.get("plotly_chart")] for at in (first, second)]
    assert specs[0] == specs[1] and len(specs[0]) == 8  # five masks, the reach, part 3's two curves
    third = open_view("transformer_xl", {"seg": "16"})
    assert len(reach) == 2 and "**496** positions" in shown_text(third)  # 16 x 31: the new setting's own reach
    assert len(lines) == 4  # its reach only: part 3's curves were kept


def test_a_lesson_step_shares_the_pages_reach_and_figure(monkeypatch):
    """A lesson's step at the page's settings draws the reach the page made (and its figure), not one of its own:
    one reach for the page, /lessons and every language's step view at those settings."""
    from app.views.transformer_xl import ideas

    reach = count_builds(monkeypatch, ideas.tx, "reach_view")
    lines = count_builds(monkeypatch, ideas.vx, "lines_figure")
    page = open_view("transformer_xl", {"win": "16", "sinks": "4"})
    assert len(reach) == 1 and len(lines) == 3  # the reach, then part 3's two curves
    walk = open_view("lessons", {"lesson": "flash-gqa-kv", "lstep": "6"})  # the visible-keys step: win 16, sinks 4
    assert len(reach) == 1 and len(lines) == 3
    assert figure_by_key(walk, "step-fig-5-0") == figure_by_key(page, "fig-reach")
    open_view("lessons", {"lesson": "flash-gqa-kv", "lstep": "7", "lang": "ja"})  # the committed run's curve
    assert len(reach) == 1 and len(lines) == 4  # its own language's figure; the reach is not made again


@pytest.mark.slow  # the page loads SmolLM2
def test_live_part_runs_on_a_short_text_and_refuses_one_token():
    at = open_view("transformer_xl", {"live": "1", "text": "The cat sat on the mat. The cat sat.", "lseg": "4"})
    assert len(at.get("plotly_chart")) == 9  # five masks, reach, the two committed curves, the live curve
    at = open_view("transformer_xl", {"live": "1", "text": "Hi"})
    assert "at least two tokens" in shown_text(at)
