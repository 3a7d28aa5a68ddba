"""The answer functions of the lessons on why attention needs positions, the kinds of position and how they
extrapolate, and FlashAttention's running sums, exactness and memory traffic, each against an independent
computation: sin/cos written out, transformers' own ALiBi slopes (BLOOM) and BERT layer, the committed JSON read
directly, the online softmax's sum recomputed from all the scores seen, numpy attention, and the paper's
Algorithm 0 and Algorithm 1 counted loop by loop."""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from core import flash_attention as fa
from core.lessons.answers import compute

RESULTS = Path(__file__).resolve().parents[2] / "results"


def ans(name, state=None, **params):
    """The answer as a lesson gets it: the state as a link's strings, parsed by the page's declaration."""
    return compute(name, params, {k: str(v) for k, v in (state or {}).items()})


# ---- /positions: sinusoidal, relative, ALiBi -------------------------------------------------------------------


@pytest.mark.parametrize("d, log_base, distance", [(64, 4.0, 0), (16, 3.0, 5), (8, 4.0, 31)])
def test_sinusoidal_dot_by_the_written_out_encoding(d, log_base, distance):
    """PE(p, 2i) = sin(p / base^(2i/d)), PE(p, 2i+1) = cos(same): the dot product of two rows `distance` apart,
    the same for every p."""
    base = 10.0**log_base

    def pe(p):
        row = []
        for i in range(d // 2):
            angle = p / base ** (2 * i / d)
            row += [math.sin(angle), math.cos(angle)]
        return np.array(row)

    dots = {float(pe(p) @ pe(p + distance)) for p in (0, 7, 90)}
    assert max(dots) - min(dots) < 1e-9
    got = ans("positions.sinusoidal_dot", {"part": "sinusoidal", "d": d, "base": log_base}, distance=distance)
    assert math.isclose(got.correct, dots.pop(), abs_tol=1e-9)
    assert ans("positions.sinusoidal_dot", {"part": "sinusoidal", "d": d}, distance=0).correct == d / 2


def test_learned_vector_against_transformers_own_embedding_lookup(minilm):
    """MiniLM's own embeddings module, asked for position p: a vector up to its table's last row, an error after."""
    embeddings = minilm.model.base_model.embeddings
    rows = embeddings.position_embeddings.weight.shape[0]
    for position in (0, rows - 1, rows, 4 * rows):
        try:
            embeddings.position_embeddings(torch.tensor([position]))
            exists = True
        except IndexError:
            exists = False
        got = ans("positions.learned_has_vector", {"part": "learned", "model": "minilm", "pastpos": position})
        assert got.correct == ("yes" if exists else "no") and exists == (position < rows == 512)


@pytest.mark.parametrize("n, clip", [(10, 2), (3, 5), (12, 0), (24, 12)])
def test_relative_vectors_by_a_loop_over_every_pair(n, clip):
    used = {max(-clip, min(clip, i - j)) for i in range(n) for j in range(n)}
    got = ans("positions.relative_vectors", {"part": "relative", "rel_n": n, "clip": clip})
    assert got.correct == len(used)


@pytest.mark.parametrize("heads, head, distance", [(8, 0, 4), (8, 2, 3), (6, 4, 2), (12, 11, 15), (1, 0, 3)])
def test_alibi_bias_from_transformers_bloom_slopes(heads, head, distance):
    """BLOOM's build_alibi_tensor holds slope_h × key position; its slope for head h is the ALiBi slope."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    alibi = build_alibi_tensor(torch.ones(1, 2), heads, torch.float64)  # (heads, 1, 2): slope × (0, 1)
    slope = float(alibi[head, 0, 1])
    got = ans("positions.alibi_bias", {"part": "alibi", "heads": heads, "al_n": 16, "al_head": head},
              distance=distance)  # fmt: skip
    assert math.isclose(got.correct, -slope * distance, rel_tol=1e-6)  # BLOOM builds its slopes in float32
    assert (heads, head, distance) != (8, 0, 4) or got.correct == -2.0  # m = 2^(-8/8) = 1/2, by hand


def committed_past() -> dict:
    """Each kind's accuracy past the training length, mean over the seeds, from the JSON itself (None: no vector)."""
    data = json.loads((RESULTS / "position_extrapolation.json").read_text())
    runs = list(data["runs"].values())
    out = {}
    for kind in data["kinds"]:
        seeds = [r[kind]["accuracy_past"] for r in runs]
        out[kind] = None if None in seeds else sum(seeds) / len(seeds)
    return out


def test_extrapolation_order_and_accuracy_from_the_committed_json():
    past = committed_past()
    runnable = [k for k, v in past.items() if v is not None]
    assert past["learned"] is None and sorted(runnable) == ["alibi", "rope", "sinusoidal"]
    got = ans("positions.extrapolation_order", {"part": "extrapolation"})
    assert got.correct == tuple(sorted(runnable, key=lambda k: -past[k]))
    two = ans("positions.extrapolation_order", {"part": "extrapolation"}, kinds=["rope", "sinusoidal"])
    assert two.correct == tuple(sorted(("rope", "sinusoidal"), key=lambda k: -past[k]))
    for kind in runnable:
        acc = ans("positions.extrapolation_accuracy", {"part": "extrapolation"}, kind=kind)
        assert math.isclose(acc.correct, 100 * past[kind], rel_tol=1e-12) and acc.tolerance == 5.0
    with pytest.raises(ValueError, match="cannot run past"):
        ans("positions.extrapolation_accuracy", {"part": "extrapolation"}, kind="learned")


# ---- /multi-head: a shuffle without and with positions ------------------------------------------------------


@pytest.mark.parametrize(
    "text, seed", [("The cat sat on the mat because it was tired.", 0), ("Dogs bark at night.", 3)]
)
def test_shuffled_output_against_transformers_own_bert_layer(minilm, text, seed):
    """Layer 0 run by transformers itself on the shuffled word embeddings (and with the position table added by
    position): the answer is 'moves' exactly when the shuffled outputs are the original ones shuffled."""
    layer = minilm.model.base_model.encoder.layer[0]
    ids = minilm.tokenize([text], 64).input_ids[0]
    n = len(ids)
    words = minilm.token_embeddings(ids)
    positions = minilm.model.base_model.embeddings.position_embeddings.weight[:n].detach().float()
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    if torch.equal(perm, torch.arange(n)):
        perm = torch.roll(perm, 1)

    def run(x):
        with torch.no_grad():
            out = layer(x[None])
        return (out[0] if isinstance(out, tuple) else out)[0]

    for with_positions in (False, True):
        pos = positions if with_positions else torch.zeros_like(words)
        error = float((run(words[perm] + pos) - run(words + pos)[perm]).abs().max())
        got = ans("multi_head.shuffled_output", {"part": "order", "text": text, "seed": seed},
                  positions=with_positions)  # fmt: skip
        assert got.correct == ("moves" if error <= 1e-4 else "changes"), (with_positions, error)
        assert got.correct == ("changes" if with_positions else "moves")


# ---- /flash-attention: the running sum, exactness, HBM traffic -------------------------------------------------


def page_qkv(n, d, seed):
    """The tiles part's random head: Q, K, V drawn in that order from torch's generator at the page's seed."""
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(n, d, generator=gen, dtype=torch.float64).numpy() for _ in range(3)]


@pytest.mark.parametrize("n, d, br, bc, qtile, step, causal",
                         [(10, 4, 4, 3, 0, 2, 0), (20, 8, 5, 7, 3, 2, 1)])  # fmt: skip
def test_running_sum_is_the_sum_over_every_key_seen_against_their_maximum(n, d, br, bc, qtile, step, causal):
    """l after step j of a row = Σ exp(s - m) over every visible key of key tiles 0..j, m their largest score:
    no recursion, no rescaling."""
    q, k, _ = page_qkv(n, d, 0)
    state = {"n": n, "d": d, "br": br, "bc": bc, "qtile": qtile, "step": step, "causal": causal}
    rows = range(qtile * br, min(n, (qtile + 1) * br))
    seen = range(0, min(n, (step + 1) * bc))
    for r, query in enumerate(rows):
        keys = [j for j in seen if not causal or j <= query]
        if not keys:
            continue
        s = np.array([q[query] @ k[j] / math.sqrt(d) for j in keys])
        got = ans("flash_attention.running_sum", state, row=r)
        assert math.isclose(got.correct, float(np.exp(s - s.max()).sum()), rel_tol=1e-12)
        assert math.isclose(got.detail["m"], float(s.max()), abs_tol=1e-4)


@pytest.mark.parametrize("n, d, br, bc, causal", [(37, 8, 8, 5, 1), (12, 16, 64, 1, 0)])
def test_exact_against_numpy_attention(n, d, br, bc, causal):
    q, k, v = page_qkv(n, d, 0)
    scores = q @ k.T / math.sqrt(d)
    if causal:
        scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)
    w = np.exp(scores - scores.max(1, keepdims=True))
    reference = (w / w.sum(1, keepdims=True)) @ v
    state = {"n": n, "d": d, "br": br, "bc": bc, "causal": causal}
    tiled = fa.walk(n, d, br, bc, causal=bool(causal)).output
    assert np.abs(tiled - reference).max() < 1e-12
    assert ans("flash_attention.exact", state).correct == "rounding"


@pytest.mark.parametrize("diff, verdict", [(3e-16, "rounding"), (2e-6, "approximate"), (0.05, "different")])
def test_exact_says_what_a_kernel_that_is_off_would_get(monkeypatch, diff, verdict):
    real = fa.walk
    monkeypatch.setattr(fa, "walk", lambda *a, **kw: dataclasses.replace(real(*a, **kw), max_abs_diff=diff))
    assert ans("flash_attention.exact", {"n": 10, "seed": 5}).correct == verdict


def algorithm_1_by_its_loops(n, d, m_sram):
    """The paper's Algorithm 1 counted line by line: Bc = ceil(M/4d), Br = min(Bc, d); write O, l, m once; for each
    key tile read K_j, V_j; inside, for each query tile read Q_i, O_i, l_i, m_i and write O_i, l_i, m_i."""
    bc = math.ceil(m_sram / (4 * d))
    br = min(bc, d)
    moved = n * d + 2 * n
    for j in range(0, n, bc):
        moved += 2 * (min(n, j + bc) - j) * d
        for i in range(0, n, br):
            rows = min(n, i + br) - i
            moved += (2 * rows * d + 2 * rows) + (rows * d + 2 * rows)
    return moved


@pytest.mark.parametrize("n, d, kib, nbytes", [(4096, 64, 192, 2), (1000, 32, 100, 4)])
def test_hbm_traffic_against_algorithm_0_by_hand_and_algorithm_1_by_its_loops(n, d, kib, nbytes):
    state = {"tn": n, "td": d, "sram": kib, "bytes": nbytes}
    # Algorithm 0: read Q, K, write S; read S, write P; read P, V, write O: 4 n d + 4 n² numbers
    naive = ans("flash_attention.hbm_traffic", state, algorithm="naive", unit="elements").correct
    assert naive == 4 * n * d + 4 * n * n
    assert ans("flash_attention.hbm_traffic", state, algorithm="naive", unit="bytes").correct == naive * nbytes
    assert math.isclose(ans("flash_attention.hbm_traffic", state, algorithm="naive").correct,
                        naive * nbytes / 2**20)  # fmt: skip
    flash = ans("flash_attention.hbm_traffic", state, algorithm="flash1", unit="elements")
    assert flash.correct == algorithm_1_by_its_loops(n, d, kib * 1024 // nbytes)
    assert math.isclose(float(flash.detail["ratio"]), round(naive / flash.correct, 1))
