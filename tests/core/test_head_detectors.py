"""Head detectors: each scores 1 on a hand-built pattern that is exactly its pattern and about 0 on one that is not;
the random inputs are seeded; the committed map is read back per head for /attention."""

import pytest
import torch

from core import head_detectors as hd

LAYOUT = hd.Layout(prefix=1, half=16)  # [CLS] r_1..r_16 r_1..r_16 [SEP]
N = LAYOUT.end + 1


def pattern(target) -> torch.Tensor:
    """(N, N) one-hot rows: query i puts all its weight on key target(i) (clipped into 0..i for early rows)."""
    w = torch.zeros(N, N)
    for i in range(N):
        w[i, max(0, min(target(i), N - 1))] = 1.0
    return w


P, T = LAYOUT.prefix, LAYOUT.half
PATTERNS = {
    "previous_token": pattern(lambda i: i - 1),
    # second copy -> the same token earlier; elsewhere the diagonal (never counted)
    "duplicate_token": pattern(lambda i: i - T if i >= P + T else i),
    # second copy -> the token after the earlier occurrence
    "induction": pattern(lambda i: i - T + 1 if i >= P + T else i),
    "first_token": pattern(lambda i: 0),
    "local_window": pattern(lambda i: i),  # attends to itself: distance 0, inside the window
}


@pytest.mark.parametrize("name", hd.DETECTORS)
def test_each_detector_scores_one_on_its_own_pattern(name):
    scores = hd.score_all(PATTERNS[name], LAYOUT)
    assert float(scores[name]) == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", hd.DETECTORS)
def test_each_detector_scores_near_zero_on_a_far_pattern(name):
    # A head that looks 8 positions back (never the previous token, the same token, the next one of the earlier
    # copy, the first token, nor within 3 positions); queries < 8 look 8 ahead instead.
    far = pattern(lambda i: i - 8 if i >= 8 else i + 8)
    score = float(hd.score_all(far, LAYOUT)[name])
    assert score <= 0.1, (name, score)


def test_induction_and_duplicate_are_told_apart():
    dup = hd.score_all(PATTERNS["duplicate_token"], LAYOUT)
    ind = hd.score_all(PATTERNS["induction"], LAYOUT)
    assert float(dup["induction"]) < 0.05 and float(ind["duplicate_token"]) < 0.05


def test_scores_are_shares_of_mass_on_a_mixture():
    # Half the mass on the previous token, half on the first token: 0.5 each (queries 2..; query 1's previous
    # token IS the first token, so it counts fully for both).
    w = 0.5 * PATTERNS["previous_token"] + 0.5 * PATTERNS["first_token"]
    scores = hd.score_all(w, LAYOUT)
    n_q = LAYOUT.end - 1
    assert float(scores["previous_token"]) == pytest.approx((0.5 * (n_q - 1) + 1) / n_q)
    assert float(scores["first_token"]) == pytest.approx((0.5 * (n_q - 1) + 1) / n_q)


def test_uniform_baseline_by_hand():
    # Bidirectional uniform over N keys: every single-key detector is 1/N; local window 7/N for rows away from
    # the ends (rows near the end have fewer keys within 3).
    u = hd.uniform_scores(LAYOUT, N, causal=False)
    for name in ("previous_token", "duplicate_token", "induction", "first_token"):
        assert u[name] == pytest.approx(1 / N)
    # Causal uniform: query i spreads over i + 1 keys, so previous_token = mean of 1/(i+1) over i = 1..end-1.
    c = hd.uniform_scores(LAYOUT, N, causal=True)
    assert c["previous_token"] == pytest.approx(sum(1 / (i + 1) for i in range(1, LAYOUT.end)) / (LAYOUT.end - 1))


def test_batched_scores_match_one_by_one():
    w = torch.softmax(torch.randn(3, 4, N, N, generator=torch.Generator().manual_seed(0)), -1)
    batched = hd.score_all(w, LAYOUT)
    for name in hd.DETECTORS:
        for b in range(3):
            for h in range(4):
                assert float(batched[name][b, h]) == pytest.approx(float(hd.score_all(w[b, h], LAYOUT)[name]))


def test_random_batch_is_seeded_and_repeated(minilm):
    a, layout = hd.repeated_random_batch(minilm, 3, 10, seed=5)
    b, _ = hd.repeated_random_batch(minilm, 3, 10, seed=5)
    c, _ = hd.repeated_random_batch(minilm, 3, 10, seed=6)
    assert torch.equal(a.input_ids, b.input_ids) and not torch.equal(a.input_ids, c.input_ids)
    ids = a.input_ids
    first = ids[:, layout.prefix : layout.prefix + layout.half]
    assert torch.equal(first, ids[:, layout.prefix + layout.half : layout.end])
    assert ids[0, 0] == minilm.tokenizer.cls_token_id and ids[0, -1] == minilm.tokenizer.sep_token_id
    assert not a.special[:, layout.prefix : layout.end].any()


def test_map_is_deterministic_and_in_range(minilm):
    a = hd.detector_map(minilm, 2, 8, seed=3)
    b = hd.detector_map(minilm, 2, 8, seed=3)
    for name in hd.DETECTORS:
        assert a.scores[name].shape == (minilm.n_layers, minilm.n_heads)
        assert torch.equal(a.scores[name], b.scores[name])
        assert float(a.scores[name].min()) >= 0 and float(a.scores[name].max()) <= 1 + 1e-6


def test_map_equals_scores_of_the_trace_weights(minilm):
    found = hd.detector_map(minilm, 2, 8, seed=3)
    batch, layout = hd.repeated_random_batch(minilm, 2, 8, seed=3)
    trace = minilm.run(batch, logits=False, hidden_states=False)
    layer, head = 2, 9
    w = torch.stack([trace.attention(layer, head, b) for b in range(2)])  # (2, n, n)
    assert float(found.scores["induction"][layer, head]) == pytest.approx(
        float(hd.induction(w, layout).mean()), abs=1e-6
    )


def test_committed_results_are_read_per_head():
    data = hd.load_results()
    if data is None:
        pytest.skip("results/head_detectors.json not written yet")
    key = next(iter(data["models"]))
    entry = data["models"][key]
    got = hd.detector_scores_for(key, 0, 0)
    assert set(got) == set(hd.DETECTORS)
    assert got["induction"]["score"] == pytest.approx(entry["scores"]["induction"][0][0])
    best_layer, best_head, best = entry["top"]["induction"][0]
    assert hd.detector_scores_for(key, best_layer, best_head)["induction"]["rank"] == 1
    assert hd.detector_scores_for(key, entry["n_layers"], 0) is None
    assert hd.detector_scores_for("no-such-model", 0, 0) is None


def _map(best: float, uniform: float) -> "hd.DetectorMap":
    scores = torch.full((2, 3), 0.01)
    scores[1, 2] = best
    return hd.DetectorMap("m", {"induction": scores}, {"induction": uniform}, {"n_sequences": 1, "half_length": 2,
                          "seed": 0}, 1.5)  # fmt: skip


def test_detector_view_finds_a_clear_head_only_above_both_levels():
    """Clear: the best head scores at least 0.5 and at least 5 x what an evenly spreading head scores."""
    view = hd.detector_view(_map(0.6, 0.1), "induction", "m", top=2)
    assert (view.top_layers, view.top_heads, view.top_scores) == ([1, 0], [2, 0], [0.6, 0.01])
    assert view.finding == "finding_strong" and view.best == pytest.approx(0.6)
    assert hd.detector_view(_map(0.45, 0.01), "induction", "m").finding == "finding_weak"  # below 0.5
    assert hd.detector_view(_map(0.6, 0.13), "induction", "m").finding == "finding_weak"  # below 5 x 0.13


def test_committed_view_is_the_committed_map():
    data = hd.load_results()
    if data is None:
        pytest.skip("results/head_detectors.json not written yet")
    view = hd.committed_view("smollm2", "induction")
    entry = data["models"]["smollm2"]
    assert view.scores.tolist() == torch.tensor(entry["scores"]["induction"]).tolist()
    assert [view.top_layers[0], view.top_heads[0]] == entry["top"]["induction"][0][:2]
    assert view.provenance["seconds"] == entry["seconds"] and view.uniform == entry["uniform"]["induction"]
