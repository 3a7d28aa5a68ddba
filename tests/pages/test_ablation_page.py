"""/ablation headless: a committed claim card shows its numbers and the verdict computed from them; the live part
handles no head and every head with a message."""

import pytest

from app import i18n
from core import ablation as ab
from tests.apptest_helpers import assert_no_exception, open_view, run_view, shown_text
from tests.tiny_models import registered_folders


@pytest.mark.parametrize("index", [1, 3])
def test_committed_card_shows_its_verdict(index):
    data = ab.load_results()
    if data is None:
        pytest.skip("results/ablation.json not written yet")
    card = data["cards"][index]
    at = open_view("ablation", {"part": "cards", "card": f"{card['claim']}-{card['mode']}"})
    text = shown_text(at)
    assert f"{card['clean']['value']:.3f}" in text or f"{card['clean']['value']:.1%}" in text
    words = {"far_more": "far more than removing random heads", "more": "more than removing random heads",
             "no_more": "no more than removing random heads", "no_placebo": "no placebo"}  # fmt: skip
    assert words[card["verdict"]] in text and len(at.get("plotly_chart")) == 1


@pytest.mark.slow  # the page loads SmolLM2 (to name its heads' count)
def test_the_page_opens_on_a_card_that_tests_its_claim():
    """The file's first card (antecedent heads) tests nothing on SmolLM2: /ablation opened there, a learner's first
    look was one sentence saying so, no verdict and no figure."""
    if ab.load_results() is None:
        pytest.skip("results/ablation.json not written yet")
    at = open_view("ablation")
    assert ab.committed_cards()[at.query_params.get("card", ab.default_card())].status == "tested"
    assert "has no candidate antecedent heads" not in shown_text(at) and len(at.get("plotly_chart")) == 1


@pytest.mark.slow  # the page loads SmolLM2
def test_antecedent_card_says_smollm2_has_no_candidate_heads():
    """Every SmolLM2 head ties at 50% on the selection half: no claim is tested, no random-vs-random verdict."""
    at = open_view("ablation", {"part": "cards", "card": "antecedent-zero"})
    text = shown_text(at)
    assert "has no candidate antecedent heads" in text and "all 270 of its heads tie at 50%" in text
    assert "not supported" not in text and "Verdict" not in text and not at.get("plotly_chart")
    live = shown_text(open_view("ablation", {"part": "live", "claim": "antecedent", "k": "5"}))
    assert "has no candidate antecedent heads" in live and "Verdict" not in live


@pytest.mark.slow  # the page loads SmolLM2
def test_live_no_head_is_a_message():
    at = open_view("ablation", {"part": "live", "k": "0"})
    assert "No head is removed" in shown_text(at)


@pytest.mark.slow  # the page loads SmolLM2
def test_live_every_head_is_a_message():
    at = open_view("ablation", {"part": "live", "k": "270", "draws": "1"}, timeout=300)
    assert "Every head of these layers is removed" in shown_text(at)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    with registered_folders(tmp_path_factory.mktemp("own-models"), ("llama",)) as keys:
        yield keys["llama"]


@pytest.mark.parametrize("lang", ["ja", "ko"])
def test_the_antecedent_claim_on_a_learners_decoder_says_why_in_the_readers_words(llama, lang):
    """A learner's decoder has no committed antecedent accuracies (results/antecedents.json): the live card says so
    in the reader's words (core's reason "not_measured"), not in the engine's English sentence."""
    at = run_view("ablation", {"lang": lang, "part": "live", "claim": "antecedent", "model": llama, "k": "1",
                               "draws": "1"})  # fmt: skip
    assert_no_exception(at)
    assert "per-head accuracies" not in shown_text(at)
    said = i18n.text(lang, "ablation", "no_candidates_not_measured", model="tiny-llama")
    assert said in [i.value for i in at.info], [i.value for i in at.info]
