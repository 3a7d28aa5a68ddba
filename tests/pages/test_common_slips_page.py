"""The "common slip" notes on their pages, with the numbers core/slips.py computes (tests/core/test_slips.py checks
those against independent references)."""

import pytest

from core import slips
from core.moe import balance
from tests.apptest_helpers import open_view, shown_text


def test_sdpa_steps_names_the_qkt_row_and_v():
    text = shown_text(open_view("sdpa_steps"))
    assert "second row of QKᵀ" in text and "as [38, 56, 74]. It is [32, 46, 60]" in text
    assert 'V is not "the similarity score"' in text
    # the way to see the classic example names the walkthrough that holds it (Reset reloads the chosen one)
    assert "choose the walkthrough “Classic small example (d_k = 2)” above, and “Reload the chosen walkthrough”" in text


def test_sdpa_steps_says_the_longest_key_wins_not_the_closest():
    text = shown_text(open_view("sdpa_steps", {"preset": "nine"}))  # the note is about the classic example
    assert "scores k0, k1, k2 at 32, 46, 60, so k2 gets the most weight" in text
    assert "(cosine q·k/(‖q‖‖k‖): 0.99951, 0.99788, 0.99655) k0 is the closest" in text


def test_positions_explains_the_exponent_and_the_typo():
    text = shown_text(open_view("positions", {"part": "sinusoidal", "d": "64"}))
    ex = slips.sinusoidal_exponent(64)
    assert "i counts sin/cos PAIRS" in text and f"{ex['right_longest']:,.0f} positions" in text
    assert f"the longest wavelength becomes {ex['typo_longest']:,.0f} positions" in text


def test_sdpa_gqa_gives_the_ratio_per_model():
    text = shown_text(open_view("sdpa_gqa", timeout=120))
    assert "Llama-3-8B 32:8 = 4:1" in text and "SmolLM2-135M 9:3 = 3:1" in text


def test_rope_scaling_quotes_the_measured_unscaled_loss():
    text = shown_text(open_view("rope_scaling"))
    assert '"RoPE extrapolates well."' in text and "within its 8,192 training positions" in text


def test_moe_counts_mixtral_and_the_active_shares():
    text = shown_text(open_view("moe"))
    assert "Mixtral 8x22B as 176B" in text and "140.6B parameters, 39.2B active" in text
    assert "the share is 5.5% to 27.7%" in text


@pytest.mark.slow  # loads MiniLM
def test_multi_head_shows_q_k_v_differ_on_the_text():
    text = shown_text(open_view("multi_head", {"layer": "0", "head": "1"}))
    assert (
        '"Q, K and V start equal."' in text and "as BERT initialises them (N(0, 0.02²), seed 0), ‖Q − K‖/‖Q‖ = " in text
    )
    assert "In the trained model, for head 1 on your text: " in text


def test_moe_shows_the_probability_loss_beside_switch():
    text = shown_text(open_view("moe"))
    b = balance.dispatch_blind_example(8, 2)
    assert "Load-balancing loss on the mean probabilities" in text and "beside the Switch loss" in text
    assert f"Σ_e (mean P_e − 1/E)² = {b.probability_loss:.5f}" in text and "N·f_i = 4 pushes" in text
    assert b.deviation == 3.0


@pytest.mark.slow  # loads MiniLM
def test_multi_head_shows_attention_dropout_in_training_and_evaluation():
    import json

    from core.models import minilm

    at = open_view("multi_head", {"layer": "0", "head": "1"})
    p = json.loads((minilm.weights_dir() / "config.json").read_text())["attention_probs_dropout_prob"]
    assert (
        f"Attention dropout: during training, after the softmax, each weight of A_i is set to 0 with probability p = {p:g} (this model's attention_probs_dropout_prob)"
        in shown_text(at)
    )
    table = at.dataframe[-1].value
    evaluation = table.iloc[:, 1].astype(float)
    assert abs(evaluation.sum() - 1) < 0.01 and len(table) == len(evaluation)


def test_linear_attention_checks_which_similarities_have_a_feature_map():
    at = open_view("linear_attention")
    text = shown_text(at)
    assert (
        "Linear attention runs the trick backwards" in text and "computes K(q, k) directly instead of φ(q)·φ(k)" in text
    )
    table = next(df.value for df in at.dataframe if "similarity s(q, k)" in df.value.columns)
    verdicts = dict(zip(table["similarity s(q, k)"], table["a feature map φ can exist"]))
    assert verdicts["tanh(q·k)"].startswith("no") and verdicts["exp(q·k/√d): softmax's"].startswith("yes")


def test_errata_words_on_masks_positions_and_rope_scaling():
    assert "is on the /encoder-decoder page" in shown_text(open_view("masks"))
    relative = shown_text(open_view("positions", {"part": "relative"}))
    assert "Left out here: Shaw et al. also add a second learned vector per offset to the values" in relative
    rope = shown_text(open_view("rope_scaling"))
    assert "**dynamic** (dynamic NTK)" in rope and "Not the same as static NTK-aware scaling" in rope
