"""/long-maps' answer functions against independent computations: cell sizes and bytes worked by hand, and the full
n x n causal softmax of the same random q and k in float64 (or SmolLM2's layer-12 q and k on the document, by
hand), averaged over blocks here by numpy.
Each test sets the page's state as a link would (strings)."""

import numpy as np
import pytest
import torch

from core import long_maps as lm
from core.lessons.answers import compute
from core.rope_scaling.long_context import load_long_text

RANDOM = {"src": "random", "n": 512, "side": 64, "log": 0}


def ans(name, state, **params):
    return compute(name, params, {k: str(v) for k, v in state.items()})


def full_random(n: int, seed: int = 0) -> np.ndarray:
    """(H, n, n) float64 causal softmax of the page's random q and k, every head (key/value heads repeated)."""
    q, k, scale = lm.random_qk(n, seed=seed)
    q, k = q[0].double(), k[0].double().repeat_interleave(q.shape[1] // k.shape[1], dim=0)
    scores = q @ k.transpose(-1, -2) * scale
    scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1).numpy()


def blocks(full: np.ndarray, side: int, how) -> np.ndarray:
    b = full.shape[-1] // side
    return how(full.reshape(side, b, side, b), axis=(1, 3))


@pytest.mark.parametrize("n, side, tokens", [(1024, 64, 16), (512, 256, 2), (512, 128, 4)])
def test_cell_tokens_by_hand(n, side, tokens):
    assert ans("long_maps.cell_tokens", {**RANDOM, "n": n, "side": side}).correct == tokens


def test_cells_against_the_full_matrix():
    """Top-left cell of a causal map of blocks of 8: the first 8 queries put all their weight on keys 0..7, so the
    block holds 8 of its 64 cells' worth: 1/8, whatever the head. Other cells: the full matrix's block mean or max."""
    assert ans("long_maps.cell", RANDOM, row=0, col=0).correct == pytest.approx(1 / 8, abs=1e-6)
    full = full_random(512)
    for head, stat, row, col in ((0, "mean", 5, 3), (4, "max", 40, 2), (8, "mean", 63, 63)):
        state = {**RANDOM, "head": head, "stat": stat}
        expected = blocks(full[head], 64, np.mean if stat == "mean" else np.max)[row, col]
        assert ans("long_maps.cell", state, row=row, col=col).correct == pytest.approx(expected, rel=1e-4, abs=1e-7)


def test_peak_change_against_the_full_matrix():
    full = full_random(512)[0]
    for stat, how in (("mean", np.mean), ("max", np.max)):
        before, after = blocks(full, 256, how).max(), blocks(full, 64, how).max()
        expected = "same" if abs(after - before) <= 1e-6 else "higher" if after > before else "lower"
        assert ans("long_maps.peak_change", {**RANDOM, "side": 256, "stat": stat}, to="64").correct == expected
    assert ans("long_maps.peak_change", {**RANDOM, "side": 256}, to="64").correct == "lower"  # 1/2 -> 1/8
    assert ans("long_maps.peak_change", {**RANDOM, "side": 256, "stat": "max"}, to="64").correct == "same"  # 1.0


def test_full_bytes_by_hand():
    assert ans("long_maps.full_bytes", {"src": "random", "n": 1024}).correct == 1024 * 1024 * 9 * 4 / 2**20 == 36
    assert ans("long_maps.full_bytes", {"src": "random", "n": 512}, unit="bytes").correct == 512 * 512 * 9 * 4


def shares(full: np.ndarray) -> dict[str, float]:
    """n = 512 tokens in 512 bins: the first bin is token 0, a query's own bin is itself."""
    first, own = float(full[:, 0].mean()), float(np.diagonal(full).mean())
    return {"first": first, "own": own, "elsewhere": 1 - first - own}


def test_mass_where_against_the_full_matrix():
    full = full_random(512)
    for head in (0, 5):
        expected, answer = shares(full[head]), ans("long_maps.mass_where", {**RANDOM, "head": head})
        assert answer.correct == max(expected, key=expected.get) == "elsewhere"  # no key is preferred
        assert (answer.detail["first"], answer.detail["own"]) == pytest.approx(
            (expected["first"], expected["own"]), abs=1e-3
        )


@pytest.fixture(scope="module")
def smollm2_layer12(smollm2):
    """(H, 512, 512) float64 causal softmax of SmolLM2's layer-12 q and k on the page's document (model.layer_qk,
    the page's forward; its weights equal the full Trace's, tests/core/test_long_maps.py), by hand."""
    q, k, scale = smollm2.layer_qk(lm.document_batch(smollm2, load_long_text(), 512), 12)
    q, k = q[0].double(), k[0].double().repeat_interleave(q.shape[1] // k.shape[1], dim=0)
    scores = (q @ k.transpose(-1, -2) * scale).masked_fill(torch.ones(512, 512, dtype=torch.bool).triu(1), -torch.inf)
    return torch.softmax(scores, -1).numpy()


@pytest.mark.slow
@pytest.mark.parametrize("head", [5, 8])
def test_mass_where_on_smollm2_against_its_full_matrix(smollm2_layer12, head):
    expected = shares(smollm2_layer12[head])
    assert ans("long_maps.mass_where", {"n": 512, "head": head}).correct == max(expected, key=expected.get)
