"""core/rnn_attention: the GRU cell against torch's, additive attention against a hand loop, the seq2seq attention as
cross-attention, the gradient measurement against finite differences, path length and cost per layer against
counted products. A small random-weight model (seeded) keeps these independent of the shipped weights."""

import functools
import math

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from core.encoder_decoder import alignment as al
from core.encoder_decoder import grammar
from core.encoder_decoder import model as ed
from core.rnn_attention import compare as cmp
from core.rnn_attention import model as rm
from core.rnn_attention import translate as rt
from core.rnn_attention import view as rv
from tests.references import assert_close_in_scale


@functools.cache
def random_model(dtype=torch.float32):
    torch.manual_seed(0)
    tok = ed.make_tokenizer()
    shape = rm.Shape(vocab=len(grammar.vocabulary()), embed=8, hidden=6, decoder=10, attention=7)
    return rm.RNNSearch(shape, tok.pad_token_id).to(dtype).eval(), tok


# --- the GRU cell ---------------------------------------------------------------------------------------------------


@torch.no_grad()
def test_the_gru_cell_is_torchs_gru_cell_with_the_same_weights():
    torch.manual_seed(1)
    ours = rm.GRUCell(5, 7)
    theirs = torch.nn.GRUCell(5, 7)
    theirs.load_state_dict(ours.state_dict())  # same names, same layout
    x, h = torch.randn(4, 5), torch.randn(4, 7)
    assert_close_in_scale(ours(x, h), theirs(x, h), what="one step")
    for _ in range(5):  # and over a few steps
        h, h_ref = ours(x, h), theirs(x, h)
    assert_close_in_scale(h, h_ref, what="five steps")


@torch.no_grad()
def test_the_encoder_runs_torchs_bidirectional_gru_and_padding_changes_nothing():
    model, tok = random_model()
    gru = torch.nn.GRU(8, 6, batch_first=True, bidirectional=True)
    with torch.no_grad():
        for suffix, cell in (("", model.enc_fwd), ("_reverse", model.enc_bwd)):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(gru, f"{name}_l0{suffix}").copy_(getattr(cell, name))
    pairs = grammar.generate(3, 5)
    source = rm.batch(tok, pairs)["source_ids"]
    enc = model.encode(source)
    for i in range(3):
        n = int((source[i] != tok.pad_token_id).sum())
        reference, _ = gru(model.embed(source[i : i + 1, :n]))  # no padding at all
        assert_close_in_scale(enc.annotations[i, :n], reference[0], what=f"pair {i}")
        assert_close_in_scale(enc.forward_states[i, -1], reference[0, n - 1, :6], what="last forward state")
        timed, _ = cmp.torch_gru(model)(model.embed(source[i : i + 1, :n]))  # what the timing script runs
        assert_close_in_scale(timed[0], reference[0], what="compare.torch_gru")


# --- additive attention, and that it is cross-attention ---------------------------------------------------------------


def test_additive_attention_matches_a_hand_loop():
    torch.manual_seed(2)
    query, keys, values, v = torch.randn(2, 5), torch.randn(2, 4, 5), torch.randn(2, 4, 3), torch.randn(5)
    mask = torch.tensor([[True, True, True, True], [True, True, False, False]])
    context, weights = rm.attend(rm.additive_scores(query, keys, v), values, mask)
    for b in range(2):
        real = [j for j in range(4) if mask[b, j]]
        e = [sum(float(v[k]) * math.tanh(float(query[b, k] + keys[b, j, k])) for k in range(5)) for j in real]
        a = [math.exp(x - max(e)) for x in e]
        a = [x / sum(a) for x in a]
        c = [sum(a[i] * float(values[b, j, m]) for i, j in enumerate(real)) for m in range(3)]
        assert_close_in_scale(weights[b, real], torch.tensor(a), what="weights")
        assert float(weights[b, ~mask[b]].abs().sum()) == 0.0
        assert_close_in_scale(context[b], torch.tensor(c), what="context")


def test_seq2seq_attention_is_cross_attention_query_from_the_decoder_keys_and_values_from_the_encoder():
    """The step's context is attend(score(W_q s_{t-1}, W_k h), h): the query is the decoder state, the keys and
    values the encoder's annotations. With the Transformer's score (scaled dot product) in place of the additive
    one, the same attend() is torch's scaled_dot_product_attention of that query over those keys and values."""
    model, tok = random_model()
    b = rm.batch(tok, grammar.generate(2, 7))
    enc = model.encode(b["source_ids"])
    state = torch.randn(2, 10)
    _, _, weights = model.step(enc, b["decoder_ids"][:, 0], state)
    q, k = model.w_q(state), model.w_k(enc.annotations)
    e = torch.tanh(q[:, None] + k) @ model.v
    expected = torch.softmax(e.masked_fill(~enc.mask, float("-inf")), -1)
    assert_close_in_scale(weights, expected, what="alignment from decoder query and encoder keys")
    # the keys and values depend on the source only: another decoder state changes the weights, not the keys
    _, _, other = model.step(enc, b["decoder_ids"][:, 0], torch.randn(2, 10))
    assert not torch.allclose(other, weights)
    # dot-product scores through the same attend() = SDPA with the query from the decoder, K and V from the encoder
    dot = (q[:, None] @ k.transpose(1, 2))[:, 0] / math.sqrt(k.shape[-1])
    context, _ = rm.attend(dot, enc.annotations, enc.mask)
    sdpa = torch.nn.functional.scaled_dot_product_attention(q[:, None, None], k[:, None], enc.annotations[:, None],
                                                            attn_mask=enc.mask[:, None, None])  # fmt: skip
    assert_close_in_scale(context, sdpa[:, 0, 0], what="cross-attention")


# --- teacher forcing, greedy decoding, scores, alignment --------------------------------------------------------------


def test_greedy_decoding_agrees_with_teacher_forcing_on_its_own_output():
    model, tok = random_model()
    pairs = grammar.generate(3, 9, held_out=True)
    out = rt.translate_batch(model, tok, [p.source_text for p in pairs])
    for p, t in zip(pairs, out):
        assert t.source_tokens == p.source + ["</s>"]
        assert t.attention.shape[1] == len(t.source_tokens)
        assert_close_in_scale(t.attention.sum(-1), torch.ones(t.attention.shape[0]), what="rows sum to 1")
        forced = rm.batch(tok, [grammar.Pair(p.source, t.output, p.language, [])])
        logits, att = model(forced["source_ids"], forced["decoder_ids"])
        n = len(t.output)
        assert logits[0, :n].argmax(-1).tolist() == tok.convert_tokens_to_ids(t.output)
        assert_close_in_scale(att[0, :n], t.attention[:n], what="same alignment")


def test_scores_are_exact_match_and_sacrebleus_chrf():
    import sacrebleu

    pairs = grammar.generate(4, 3, held_out=True)
    hyps = [pairs[0].target_text, "x", pairs[2].target_text, pairs[3].target_text]
    s = rt.scores(hyps, pairs)
    assert s["all"]["exact_match"] == 0.75 and s["all"]["pairs"] == 4
    assert s["ko"]["pairs"] == 2 and s["ko"]["exact_match"] == 0.5 and s["ja"]["exact_match"] == 1.0  # ja, ko, ...
    assert s["all"]["chrf"] == sacrebleu.corpus_chrf(hyps, [[p.target_text for p in pairs]]).score


def test_alignment_uses_the_transformers_rule(monkeypatch):
    """A GRU whose attention always lands on the aligned word scores 1; the baseline is al.diagonal_guess's."""
    model, tok = random_model()
    pairs = grammar.generate(6, 4, held_out=True)

    def perfect(model, tokenizer, ps):
        out = []
        for p in ps:
            a = torch.zeros(len(p.target) + 1, len(p.source) + 1)
            for s, t in p.alignment:
                a[t, s] = 1.0
            out.append(a)
        return out

    monkeypatch.setattr(rt, "teacher_forced_attention", perfect)
    report = rt.measure_alignment(model, tok, pairs)
    words = sum(len(p.alignment) for p in pairs)
    assert report.heads[0].hits == words == report.heads[0].words
    diag = sum(al.diagonal_guess(t, len(p.source) - 1, len(p.target)) == s for p in pairs for s, t in p.alignment)
    assert report.diagonal.hits == diag and report.verdict() == "aligns"


# --- the gradient that reaches a source word --------------------------------------------------------------------------


@pytest.mark.parametrize("recurrence_only", [False, True])
def test_source_gradients_match_finite_differences(recurrence_only):
    model, tok = random_model(torch.float64)
    pairs = grammar.generate(2, 6)
    b = rm.batch(tok, pairs)
    norms = cmp.source_gradients(model, tok, pairs, recurrence_only)
    x0 = model.embed(b["source_ids"]).detach()

    def loss(x):
        with torch.no_grad():
            logits, _ = model(b["source_ids"], b["decoder_ids"], inputs=x)
        return float(torch.nn.functional.cross_entropy(logits[0], b["labels"][0], ignore_index=-100, reduction="sum"))

    eps = 1e-6
    n = len(norms[0])
    for j in (0, n // 2, n - 1):
        grad = torch.zeros(8, dtype=torch.float64)
        for k in range(8):
            dx = torch.zeros_like(x0)
            dx[0, j, k] = eps
            if recurrence_only:  # the context held at its value: perturb only what reaches the recurrence
                grad[k] = _recurrence_only_difference(model, b, x0, dx)
            else:
                grad[k] = (loss(x0 + dx) - loss(x0 - dx)) / (2 * eps)
        assert abs(float(grad.norm()) - float(norms[0][j])) <= 1e-6 * max(1.0, float(grad.norm()))


def _recurrence_only_difference(model, b, x0, dx):
    """The finite difference of the loss with every step's context frozen at its unperturbed value."""
    with torch.no_grad():
        enc0 = model.encode(b["source_ids"], x0)
        contexts, state = [], enc0.state
        for t in range(b["decoder_ids"].shape[1]):
            q = model.w_q(state)
            c, _ = rm.attend(rm.additive_scores(q, enc0.keys, model.v), enc0.annotations, enc0.mask)
            contexts.append(c)
            y = model.embed(b["decoder_ids"][:, t])
            state = model.dec(torch.cat([y, c], -1), state)

        def loss(x):
            enc = model.encode(b["source_ids"], x)
            state, total = enc.state, 0.0
            for t in range(b["decoder_ids"].shape[1]):
                y = model.embed(b["decoder_ids"][:, t])
                state = model.dec(torch.cat([y, contexts[t]], -1), state)
                logits = model.out(torch.cat([state, contexts[t], y], -1))
                label = int(b["labels"][0, t])
                if label != -100:
                    total += float(-torch.log_softmax(logits[0], -1)[label])
            return total

        return (loss(x0 + dx) - loss(x0 - dx)) / (2 * 1e-6)


def test_padding_and_other_pairs_receive_no_gradient():
    """A pair's loss reaches its own real source tokens only: padded positions and the other pairs of the batch get
    exactly zero (so the batched measurement is the per-pair one)."""
    model, tok = random_model()
    candidates = sorted(grammar.generate(20, 2), key=lambda p: len(p.source))
    b = rm.batch(tok, [candidates[0], candidates[-1]])
    x = model.embed(b["source_ids"]).detach().requires_grad_(True)
    logits, _ = model(b["source_ids"], b["decoder_ids"], inputs=x, detach_context=True)
    logits[0].sum().backward()
    n = int((b["source_ids"][0] != tok.pad_token_id).sum())
    assert n < b["source_ids"].shape[1]
    assert float(x.grad[0, n:].abs().sum()) == 0.0 and bool((x.grad[0, :n].norm(dim=-1) > 0).all())
    assert float(x.grad[1].abs().sum()) == 0.0


def test_gradient_view_groups_by_distance_from_the_last_token():
    per_pair = [torch.tensor([1.0, 2.0, 4.0]), torch.tensor([3.0, 8.0])]
    assert cmp.by_distance(per_pair) == {0: [4.0, 8.0], 1: [2.0, 3.0], 2: [1.0]}
    model, tok = random_model()
    view = cmp.gradient_view(model, tok, grammar.generate(4, 8))
    assert view.distances == list(range(len(view.distances))) and sum(view.counts) == sum(
        len(p.source) + 1 for p in grammar.generate(4, 8)
    )
    assert view.decay == view.recurrence_only[-1] / view.recurrence_only[0]


# --- path length and cost per layer ------------------------------------------------------------------------------------


def test_path_length_counts_the_steps_between_the_first_and_last_position():
    """In the GRU, the first input reaches the n-th state through n - 1 further cell steps: the Jacobian of state
    j with respect to input 0 is nonzero from j = 0 on, and state j depends on no input after j."""
    torch.manual_seed(3)
    cell = rm.GRUCell(3, 4)
    n = 6
    x = torch.randn(n, 1, 3, requires_grad=True)
    h, states = torch.zeros(1, 4), []
    for j in range(n):
        h = cell(x[j], h)
        states.append(h)
    (g,) = torch.autograd.grad(states[2].sum(), x)
    assert float(g[3:].abs().sum()) == 0.0 and float(g[0].abs().sum()) > 0  # state 2 sees inputs 0..2 only
    assert cmp.path_length(n, cmp.RECURRENT) == n - 1 and cmp.path_length(n, cmp.ATTENTION) == 1
    assert cmp.path_length(1, cmp.RECURRENT) == 0


@pytest.mark.parametrize("n,d", [(5, 8), (8, 8), (16, 8), (3, 12)])
def test_layer_flops_count_the_matrix_products(n, d):
    torch.manual_seed(4)
    cell = torch.nn.GRUCell(d, d)
    x, h = torch.randn(n, 1, d), torch.zeros(1, d)
    with FlopCounterMode(display=False) as counter:
        for j in range(n):
            h = cell(x[j], h)
    assert counter.get_total_flops() == cmp.layer_flops(n, d, cmp.RECURRENT)
    w = [torch.randn(d, d) for _ in range(4)]
    y = torch.randn(n, d)
    with FlopCounterMode(display=False) as counter:
        q, k, v = y @ w[0], y @ w[1], y @ w[2]
        out = torch.softmax(q @ k.T / math.sqrt(d), -1) @ v
        out @ w[3]
    assert counter.get_total_flops() == cmp.layer_flops(n, d, cmp.ATTENTION)


def test_the_layers_cost_the_same_at_n_equals_d_and_the_view_says_which_is_cheaper():
    for d in (8, 64, 512):
        assert cmp.layer_flops(d, d, cmp.RECURRENT) == cmp.layer_flops(d, d, cmp.ATTENTION)
        assert cmp.layer_flops(d - 1, d, cmp.ATTENTION) < cmp.layer_flops(d - 1, d, cmp.RECURRENT)
        assert cmp.layer_flops(d + 1, d, cmp.ATTENTION) > cmp.layer_flops(d + 1, d, cmp.RECURRENT)
    view = cmp.cost_view(32, 128)
    assert view.cheaper == cmp.ATTENTION and view.crossover == 128 and 128 in view.lengths and 32 in view.lengths
    assert cmp.cost_view(256, 128).cheaper == cmp.RECURRENT and cmp.cost_view(128, 128).cheaper == "equal"
    assert view.path_recurrent == 31 and view.path_attention == 1


# --- the page's views of the committed numbers --------------------------------------------------------------------


def _report(exact, hits):
    held = {k: {"pairs": n, "exact_match": exact, "chrf": 99.0} for k, n in (("all", 1000), ("ja", 500), ("ko", 500))}
    head = {"layer": 0, "head": 0, "hits": hits, "words": 1000, "accuracy": hits / 1000}
    low, high = al.HeadAlignment(0, 0, hits, 1000).interval
    diagonal = {"accuracy": 0.25, "low": 0.22, "high": 0.28}
    alignment = {"pairs": 500, "words": 1000, "heads": [{**head, "low": low, "high": high}], "diagonal": diagonal,
                 "chance": 0.14, "verdict": "aligns"}  # fmt: skip
    return {"held_out": held, "alignment": alignment, "parameters": 10, "train_cpu_seconds": 5.0}


def test_scores_view_compares_intervals_and_picks_the_transformers_best_head():
    gru = _report(1.0, 760)
    transformer = {**_report(0.90, 0), "parameters": 20, "train_cpu_seconds": 9.0}
    heads = [{"layer": l, "head": h, "accuracy": a, "low": a - 0.02, "high": a + 0.02} for l, h, a in
             ((0, 0, 0.3), (1, 1, 0.65))]  # fmt: skip
    t_align = {"heads": heads, "best": [heads[1]], "diagonal": gru["alignment"]["diagonal"], "chance": 0.14}
    view = rv.scores_view(gru, transformer, t_align)
    assert [r.key for r in view.rows][:5] == ["exact_all", "exact_ja", "exact_ko", "chrf", "alignment"]
    assert view.exact == "gru_better" and view.alignment == "gru_better" and view.transformer_head == (1, 1)
    assert view.transformer_heads == 2 and view.rows[4].transformer == 0.65
    lo, hi = view.rows[0].gru_interval
    assert (lo, hi) == al.HeadAlignment(0, 0, 1000, 1000).interval  # Wilson interval of 1000 / 1000
    same = rv.scores_view(gru, gru, {**t_align, "best": [{**heads[1], "accuracy": 0.76, "low": 0.73, "high": 0.79}]})
    assert same.exact == "similar" and same.alignment == "similar"
    assert view.off_diagonal is None and "alignment_off" not in [r.key for r in view.rows]  # not measured: no row
    off = {"best_head": {"layer": 0, "head": 0, "words": 700, "accuracy": 0.9, "low": 0.88, "high": 0.92}}
    gru["alignment"]["off_diagonal"] = off
    t_off = {**t_align, "off_diagonal": {"best_head": {**heads[1], "words": 700, "accuracy": 0.5}, "chance": 0.1}}
    view = rv.scores_view(gru, transformer, t_off)
    assert view.rows[5].key == "alignment_off" and view.rows[5].transformer == 0.5 and view.off_diagonal == "gru_better"


def test_timing_view_prefers_cpu_time_and_judges_by_torchs_gru():
    rows = [{"n": n, "gru_ms": 50.0, "gru_cpu_ms": 2.0 * n, "torch_gru_ms": 50.0, "torch_gru_cpu_ms": 0.5 * n,
             "transformer_ms": 1.0, "transformer_cpu_ms": 8.0, "gru_sequential_steps": 2 * n,
             "transformer_sequential_steps": 2} for n in (8, 64)]  # fmt: skip
    view = rv.timing_view({"timing": {"device": "cpu", "rows": rows}})
    assert view.cpu_time and view.gru_ms == [16.0, 128.0] and view.transformer_ms == [8.0, 8.0]
    assert (
        view.ratio_at_longest == 16.0 and view.torch_ratio_at_longest == 4.0 and view.faster_at_longest == "transformer"
    )
    assert view.torch_ratio_at_shortest == 0.5 and view.faster_at_shortest == "gru"
