"""Antecedent heads (core/antecedents/): word and candidate detection, the ranking against a hand loop over
Trace.attention, the deterministic split, the statistics, the pairs file, the committed results file
recomputed from the real models and the page's view data (core/antecedents/view.py); the page headless is
tests/pages/test_antecedents_page.py."""

import copy
import json
import random
from pathlib import Path

import pytest
import torch

from core import antecedents as ante
from core.antecedents import view
from core.attention import query_weights
from tests.references import FLOAT32_RELATIVE

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "antecedents.json"
CAT = "The cat sat on the mat because it was tired."


# --- words, pronouns, candidates ------------------------------------------------------------------------------------


def test_pronoun_and_candidates_in_the_cat_sentence():
    words = ante.split_words(CAT)
    assert [w.text for w in words][:3] == ["The", "cat", "sat"]
    assert ante.find_pronouns(words) == [7]
    assert [words[i].text for i in ante.find_candidates(CAT, words, 7)] == ["cat", "mat"]
    assert CAT[words[1].start : words[1].end] == "cat"


def test_candidates_include_names_and_skip_sentence_starts():
    text = "I love the music of the Cranberries, who sings with mysterious voices."
    words = ante.split_words(text)
    p = ante.find_pronouns(words)[0]
    assert words[p].text == "who"
    assert [words[i].text for i in ante.find_candidates(text, words, p)] == ["music", "Cranberries"]
    text = "Yesterday Anna met the doctor. Then she left."
    words = ante.split_words(text)
    p = ante.find_pronouns(words)[0]
    assert [words[i].text for i in ante.find_candidates(text, words, p)] == ["Anna", "doctor"]


def test_the_heuristic_is_only_a_heuristic():
    """Documented on the page: an adjective after 'the' is taken for the noun."""
    text = "The trophy would not fit in the brown suitcase because it was too big."
    words = ante.split_words(text)
    assert [words[i].text for i in ante.find_candidates(text, words, ante.find_pronouns(words)[0])] == [
        "trophy",
        "brown",
    ]


def test_no_pronoun_and_odd_text():
    for text in ["", "🐱🐱", "猫はマットの上に座った。", "<script>alert(1)</script>"]:
        assert ante.find_pronouns(ante.split_words(text)) == []


def test_locate_finds_stored_pronoun_and_last_mentions():
    words, p, cands = ante.locate("The cat saw the cat because it was bored.", "it", ["cat"])
    assert words[p].text == "it" and cands == [4]


# --- ranking --------------------------------------------------------------------------------------------------------


def test_candidate_weights_sum_pieces_and_ranking_sorts_heads():
    rows = torch.tensor([[[0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]]])  # (L=1, H=2, n=4)
    w = ante.candidate_weights(rows, [[0], [1, 2], []])
    torch.testing.assert_close(w, torch.tensor([[[0.1, 0.5, 0.0], [0.4, 0.5, 0.0]]]))
    assert ante.rank_heads(w, 0) == [(0, 1, pytest.approx(0.4)), (0, 0, pytest.approx(0.1))]
    assert [r[:2] for r in ante.rank_heads(w, 1)] == [(0, 0), (0, 1)]  # tie: lower head first


# --- evaluation pieces ----------------------------------------------------------------------------------------------


def test_split_is_deterministic_and_independent_of_file_order():
    pairs = ante.load_pairs()["pairs"]
    sel, held = ante.split_pairs(pairs)
    shuffled = pairs[:]
    random.Random(1).shuffle(shuffled)
    sel2, held2 = ante.split_pairs(shuffled)
    assert [p["id"] for p in sel] == [p["id"] for p in sel2] and [p["id"] for p in held] == [p["id"] for p in held2]
    assert len(sel) == len(pairs) // 2 and {p["id"] for p in sel}.isdisjoint(p["id"] for p in held)
    assert len(sel) + len(held) == len(pairs)


def test_wilson_interval_textbook_values():
    # Newcombe (1998), Table I: 0/10 -> 0 to 0.2775; 81/263 -> 0.2553 to 0.3662
    assert ante.wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert ante.wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=1e-4)
    lo, hi = ante.wilson_interval(27, 54)
    assert lo < 0.5 < hi and 0.5 - lo == pytest.approx(hi - 0.5)


def test_best_head_breaks_ties_by_margin_then_position():
    acc = torch.tensor([[0.5, 0.75], [0.75, 0.75]])
    margin = torch.tensor([[0.0, 0.1], [0.3, 0.3]])
    assert ante.best_head(acc, margin) == (1, 0)


def test_summary_counts_first_mentioned_picks():
    rows = [
        {"pair": "a", "first_mentioned": True},
        {"pair": "a", "first_mentioned": False},
        {"pair": "b", "first_mentioned": True},
        {"pair": "b", "first_mentioned": False},
    ]
    s = ante.summarise(rows, [0, 1, 2, 3], [True, False, True, True])
    assert s["head_accuracy"] == 0.75
    assert s["head_first_mentioned_share"] == 0.75  # right on a first-mentioned one, or wrong on the other
    assert s["first_mentioned_baseline"] == 0.5


# --- the pairs file -------------------------------------------------------------------------------------------------


def test_pairs_file_holds_at_least_40_true_minimal_pairs():
    data = ante.load_pairs()
    pairs = data["pairs"]
    assert len(pairs) >= 40 and len({p["id"] for p in pairs}) == len(pairs)
    for pair in pairs:
        a, b = pair["sentences"]
        wa, wb = [w.text for w in ante.split_words(a["text"])], [w.text for w in ante.split_words(b["text"])]
        assert len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb)) == 1, pair["id"]
        assert {a["answer"], b["answer"]} == set(pair["candidates"]) and len(pair["candidates"]) == 2
        for s in (a, b):
            words, p, cands = ante.locate(s["text"], pair["pronoun"], pair["candidates"])
            assert cands[0] < cands[1] < p  # candidates in order of mention, both before the pronoun
            changed = next(i for i, (x, y) in enumerate(zip(wa, wb)) if x != y)
            assert changed > p, pair["id"]  # the deciding word comes after the pronoun
    assert any(p["pronoun"] != "it" for p in pairs)


# --- real models ----------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_ranking_matches_a_hand_loop_over_trace_attention(minilm):
    a = ante.analyse(minilm, CAT)
    assert [a.words[i].text for i in a.candidates] == ["cat", "mat"]
    trace = a.trace
    tokens = trace.batch.tokens[0]
    p, cat, mat = tokens.index("it"), tokens.index("cat"), tokens.index("mat")
    for layer in range(trace.n_layers):
        for h in range(trace.n_heads):
            w = trace.attention(layer, h, 0)
            assert float(a.weights[layer, h, 0]) == pytest.approx(float(w[p, cat]), abs=1e-6)
            assert float(a.weights[layer, h, 1]) == pytest.approx(float(w[p, mat]), abs=1e-6)
    best = ante.rank_heads(a.weights, 0)[0]
    # The measurement: layer 5, head 11 puts 0.71 on "cat" and 0.10 on "mat".
    assert best[:2] == (5, 11)
    assert float(a.weights[5, 11, 0]) == pytest.approx(0.71, abs=0.01)
    assert float(a.weights[5, 11, 1]) == pytest.approx(0.10, abs=0.01)


@pytest.mark.slow
def test_sub_word_pieces_are_summed(minilm):
    text = "The xylophonist met the drummer because he was late."
    a = ante.analyse(minilm, text)
    assert len(a.candidate_tokens[0]) > 1  # 'xylophonist' is several WordPiece tokens
    rows = query_weights(a.trace, a.pronoun_token)  # (L, H, n)
    ref = sum(rows[..., t] for t in a.candidate_tokens[0])
    torch.testing.assert_close(a.weights[..., 0], ref)


@pytest.mark.slow
def test_committed_minilm_results_are_recomputed_exactly(minilm):
    """results/antecedents.json is made by scripts/antecedent_eval.py: recompute MiniLM's whole evaluation
    (about 100 short sentences) and compare every number."""
    stored = json.loads(RESULTS.read_text())["models"]["minilm"]
    live = ante.evaluate(minilm, ante.load_pairs()["pairs"])
    assert live["best_head"] == stored["best_head"]
    for half in ("selection", "held_out"):
        for k, v in live["halves"][half].items():
            assert v == pytest.approx(stored["halves"][half][k], abs=1e-9), (half, k)
    assert len(live["sentences"]) == len(stored["sentences"])
    for a, b in zip(live["sentences"], stored["sentences"]):
        assert a["text"] == b["text"] and a["heads_right"] == b["heads_right"]
        assert a["best_head_weights"] == pytest.approx(b["best_head_weights"], abs=2e-4)


@pytest.mark.slow
def test_committed_smollm2_choices_are_recomputed_on_a_subset(smollm2):
    """SmolLM2's own answers (next-token log-probabilities) for a few stored sentences, recomputed, and checked
    against an independent plain forward pass of the underlying transformers model."""
    model = smollm2
    stored = json.loads(RESULTS.read_text())["models"]["smollm2"]["sentences"]
    pairs = {p["id"]: p for p in ante.load_pairs()["pairs"]}
    for row in stored[:4]:
        pair = pairs[row["pair"]]
        lp = ante.next_token_choice(model, row["text"], pair["pronoun"], pair["candidates"])
        correct = pair["candidates"].index(row["answer"])
        assert [lp[correct], lp[1 - correct]] == pytest.approx(row["choice_logprob"], abs=2e-3)
        prompt = ante.CHOICE_PROMPT.format(sentence=row["text"], pronoun=pair["pronoun"])
        ids = model.tokenizer(prompt, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            logits = model.model(input_ids=ids).logits[0, -1].double()
        ref = torch.log_softmax(logits, -1)
        first = model.tokenizer.encode(" " + pair["candidates"][0], add_special_tokens=False)[0]
        # a log-probability carries the rounding of its float32 logits (~30 here): the tolerance follows their scale
        assert abs(lp[0] - float(ref[first])) <= FLOAT32_RELATIVE * max(1.0, float(logits.abs().max()))
    # every pair's two candidates start with different tokens, so the comparison is defined
    for pair in pairs.values():
        firsts = {model.tokenizer.encode(" " + c, add_special_tokens=False)[0] for c in pair["candidates"]}
        assert len(firsts) == 2, pair["id"]


# --- the page's view data ----------------------------------------------------------------------------------------


def stored_result(lo, hi, causal=False, switches=1) -> dict:
    half = {"head_interval": [lo, hi], "heads_that_ever_switch": switches}
    return {"is_causal": causal, "halves": {"selection": dict(half), "held_out": dict(half)}}


def test_verdict_places_the_interval_against_chance():
    assert view.verdict(stored_result(0.4, 0.6)) == "chance"
    assert view.verdict(stored_result(0.55, 0.8)) == "above"
    assert view.verdict(stored_result(0.1, 0.45)) == "below"
    assert view.never_switches(stored_result(0.4, 0.6, causal=True, switches=0))
    assert not view.never_switches(stored_result(0.4, 0.6, causal=False, switches=0))
    assert not view.never_switches(stored_result(0.4, 0.6, causal=True, switches=2))


def test_builtin_sentences_know_their_partner():
    stored = view.builtin_sentences()
    pair = ante.load_pairs()["pairs"][0]
    a, b = pair["sentences"]
    assert stored[a["text"]]["other"] == b and stored[b["text"]]["other"] == a
    assert stored[a["text"]]["answer"] == a["answer"]


def test_accuracy_bars_and_the_largest_difference_from_the_file():
    results = view.load_results()
    assert results is not None and view.results_are_fresh(results)
    bars, n_held = view.accuracy_bars(results)
    assert [b.model for b in bars if b.kind == "head"] == list(results["models"])
    for b in bars:
        assert b.low <= b.accuracy <= b.high
    assert n_held == results["models"]["minilm"]["halves"]["held_out"]["n_sentences"]
    stored = results["models"]["minilm"]
    assert view.largest_difference(stored, stored) == 0.0
    # a recomputation that moved one sentence's best-head weight by 0.25 (and another by 0.125) differs by 0.25
    live = copy.deepcopy(stored)
    live["sentences"][1]["best_head_weights"][0] += 0.25
    live["sentences"][-1]["best_head_weights"][-1] -= 0.125
    assert view.largest_difference(stored, live) == pytest.approx(0.25)
    assert view.largest_difference(live, stored) == pytest.approx(0.25)
    assert view.same_best_head(stored, json.loads(json.dumps(stored)))  # a list as the file holds it
    layer, head = stored["best_head"]
    assert not view.same_best_head(stored, {**stored, "best_head": [layer, head + 1]})
    assert view.largest_difference(None, stored) is None


def test_the_sentences_table_names_its_columns_and_splits_the_best_heads_weights():
    """/antecedents' table of every stored sentence showed the results file's rows as they are: its headers were
    identifiers ('best_head_weights', 'first_mentioned', 'heads_right') in every language. The table's columns are
    declared (SENTENCE_COLUMNS, each with words in the locales) and the pair of weights is two columns."""
    from app import i18n

    rows = [
        {"pair": "p1", "half": "held_out", "text": "A.", "answer": "cat", "first_mentioned": True,
         "best_head_weights": [0.5, 0.25], "heads_right": 7, "choice_logprob": [-1.0, -2.0]},
        {"pair": "p1", "half": "held_out", "text": "B.", "answer": "mat", "first_mentioned": False,
         "best_head_weights": [0.125, 0.375], "heads_right": 3, "choice_logprob": None},
    ]  # fmt: skip
    table = view.sentences_table({"sentences": rows})
    assert list(table) == list(view.SENTENCE_COLUMNS)
    assert table["weight_right"] == [0.5, 0.125] and table["weight_other"] == [0.25, 0.375]
    assert table["choice_right"] == [-1.0, None] and table["heads_right"] == [7, 3]
    no_choice = view.sentences_table({"sentences": [dict(r, choice_logprob=None) for r in rows]})
    assert "choice_right" not in no_choice
    for lang in ("en", "ja", "ko"):
        assert all(i18n.text(lang, "antecedents", f"col_{k}") for k in view.SENTENCE_COLUMNS)
        assert all(i18n.text(lang, "antecedents", f"half_{h}") for h in ("selection", "held_out"))
