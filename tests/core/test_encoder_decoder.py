"""core/encoder_decoder: the generated pairs and their alignments, the step-by-step translation against the model's
own modules, and the alignment measurement. A small random-weight model (seeded) keeps these independent of the
shipped weights; tests of the shipped model skip when it is absent."""

import dataclasses

import numpy as np
import pytest
import torch

from core.encoder_decoder import alignment as al
from core.encoder_decoder import grammar
from core.encoder_decoder import model as ed
from core.encoder_decoder import translate as tr
from core.models.seq2seq import Seq2Seq
from tests.fake_traces import random_marian, random_marian_hf

# --- the generated data ---------------------------------------------------------------------------------------------


def test_a_pair_reads_as_its_grammar_says():
    m = grammar.Meaning(subject=0, subject_plural=False, subject_adjective=0, verb=0, transitive=True, past=False,
                        obj=len(grammar.ANIMATE), obj_plural=False, obj_adjective=None, place=0)  # fmt: skip
    ja = grammar.make_pair(m, "ja")
    assert ja.source_text == "<2ja> the big cat sees the ball in the park ."
    assert ja.target_text == "大きい 猫 は 公園 で ボール を 見る 。"
    words = dict((ja.source[s], ja.target[t]) for s, t in ja.alignment)
    assert words == {
        "big": "大きい",
        "cat": "猫",
        "sees": "見る",
        "ball": "ボール",
        "in": "で",
        "park": "公園",
        ".": "。",
    }
    ko = grammar.make_pair(m, "ko")
    assert ko.target_text == "큰 고양이 는 공원 에서 공 을 본다 ."  # 고양이 ends in a vowel: 는; 공 in ㅇ: 을


def test_the_english_word_count_is_what_the_sentences_use():
    """The page's "66 English words in 132 forms": counted here from generated sentences, not from the tables."""
    used = {w for p in grammar.generate(20000, 0) + grammar.generate(3000, 1, held_out=True) for w in p.source[1:]}
    forms = used - {"."}
    assert grammar.english_word_counts() == (66, len(forms)) == (66, 132)
    # a word is its forms: strip the plural / verb endings the tables spell out and 66 remain
    lemmas = {r[0] for r in grammar.ANIMATE + grammar.THINGS + grammar.PLACES + grammar.ADJECTIVES}
    lemmas |= {r[1] for r in grammar.TRANSITIVE + grammar.INTRANSITIVE} | {"the", "in"}
    assert len(lemmas) == 66 and lemmas <= forms


def test_korean_particles_follow_the_final_consonant():
    assert grammar._korean_particle("topic", "고양이") == "는" and grammar._korean_particle("topic", "책") == "은"
    assert grammar._korean_particle("object", "사과") == "를" and grammar._korean_particle("object", "공") == "을"


def test_alignments_cross_because_the_verb_moves_to_the_end():
    pairs = grammar.generate(200, 3)
    crossing = 0
    for p in pairs:
        for s, t in p.alignment:
            assert 0 < s < len(p.source) and 0 <= t < len(p.target)
        crossing += any(s1 < s2 and t1 > t2 for s1, t1 in p.alignment for s2, t2 in p.alignment)
    assert crossing > 150  # every transitive or placed sentence crosses


def test_held_out_sentences_never_appear_in_training_and_generation_is_deterministic():
    train = grammar.generate(3000, 0)
    held = grammar.generate(300, 1, held_out=True)
    assert not {p.source_text[6:] for p in train} & {p.source_text[6:] for p in held}
    assert [p.source_text for p in grammar.generate(50, 0)] == [p.source_text for p in train[:50]]


def test_parse_reads_back_every_generated_sentence_and_names_unknown_words():
    for p in grammar.generate(300, 2, held_out=True):
        meaning, unknown = grammar.parse(p.source_text.split(" ", 1)[1])
        assert not unknown and grammar.make_pair(meaning, p.language).target == p.target
    assert grammar.parse("The cat sees the xylophone.") == (None, ["xylophone"])
    assert grammar.parse("") == (None, [])
    assert grammar.parse("the the the") == (None, [])


def test_the_vocabulary_covers_every_generated_token_once():
    vocab = grammar.vocabulary()
    assert len(vocab) == len(set(vocab)) and vocab[: len(grammar.SPECIAL_TOKENS)] == grammar.SPECIAL_TOKENS
    tokens = {w for p in grammar.generate(500, 4) for w in p.source + p.target}
    assert tokens <= set(vocab)


# --- translating, step by step --------------------------------------------------------------------------------------


def test_every_attention_has_its_shape_and_rows_sum_to_one():
    model, tok = random_marian()
    pair = grammar.generate(1, 7, held_out=True)[0]
    result = tr.translate(model, tok, pair.source_text, reference=pair.target)
    S, T = len(pair.source) + 1, len(pair.target) + 1  # + </s>
    assert result.encoder_attention.shape == (2, 4, S, S) and len(result.steps) == T
    for t, step in enumerate(result.steps):
        assert step.self_attention.shape == (2, 4, t + 1)  # the look-ahead mask: inputs 0..t only
        assert step.cross_attention.shape == (2, 4, S)
        assert torch.allclose(step.self_attention.sum(-1), torch.ones(2, 4), atol=1e-5)
        assert torch.allclose(step.cross_attention.sum(-1), torch.ones(2, 4), atol=1e-5)


def test_cross_attention_takes_q_from_the_decoder_and_k_from_the_encoder_output():
    """Recompute layer 1's cross-attention from its own projections: Q from the decoder's self-attention sublayer
    output (after its LayerNorm), K from the encoder stack's last hidden state."""
    hf = random_marian_hf()  # transformers' MarianMTModel, seen through the contract
    model, tok = Seq2Seq(hf), random_marian()[1]
    pair = grammar.generate(1, 8, held_out=True)[0]
    captured = {}
    layer = hf.model.decoder.layers[1]
    hook = layer.self_attn_layer_norm.register_forward_hook(lambda m, i, o: captured.__setitem__("q_in", o))
    try:
        result = tr.translate(model, tok, pair.source_text, reference=pair.target)
    finally:
        hook.remove()
    source_ids, _ = tr._encode_source(tok, pair.source_text)
    with torch.no_grad():
        memory = hf.get_encoder()(input_ids=source_ids).last_hidden_state[0]  # (S, D)
        att = layer.encoder_attn
        d = att.head_dim
        q = (att.q_proj(captured["q_in"][0]) * att.scaling).view(-1, 4, d).transpose(0, 1)  # (H, T, d)
        k = att.k_proj(memory).view(-1, 4, d).transpose(0, 1)  # (H, S, d)
        weights = torch.softmax(q @ k.transpose(-1, -2), -1)  # (H, T, S)
    for t, step in enumerate(result.steps):
        assert torch.allclose(step.cross_attention[1], weights[:, t], atol=1e-5)


def test_teacher_forcing_is_causal_and_agrees_with_free_generation():
    model, tok = random_marian()
    pair = grammar.generate(1, 9, held_out=True)[0]
    free = tr.translate(model, tok, pair.source_text)
    forced = tr.translate(model, tok, pair.source_text, reference=free.output)
    assert len(forced.steps) == len(free.steps) + (0 if free.finished else 1)  # forcing appends </s>
    for a, b in zip(free.steps, forced.steps):  # the same inputs give the same predictions, all at once
        assert a.chosen == b.chosen and a.chosen_probability == pytest.approx(b.chosen_probability, abs=1e-5)
        # free generation feeds one token at a time on top of the KV cache: the same rows as the full pass
        assert a.input_token == b.input_token
        assert torch.allclose(a.self_attention, b.self_attention, atol=1e-5)
        assert torch.allclose(a.cross_attention, b.cross_attention, atol=1e-5)
        assert [tok for tok, _ in a.top] == [tok for tok, _ in b.top]
    changed = list(pair.target)
    changed[-1] = "猫"
    a = tr.translate(model, tok, pair.source_text, reference=pair.target)
    b = tr.translate(model, tok, pair.source_text, reference=changed)
    for t in range(len(changed)):  # positions before the change cannot see it
        assert torch.allclose(a.steps[t].cross_attention, b.steps[t].cross_attention, atol=1e-6)


def test_unknown_words_are_named_and_translation_still_runs():
    model, tok = random_marian()
    result = tr.translate(model, tok, tr.source_text("The cat sees the <script> 😺.", "ja"))
    assert result.unknown_words == ["<script>", "😺"] and len(result.steps) >= 1


# --- alignment ------------------------------------------------------------------------------------------------------


def test_diagonal_guess_walks_along_the_sentence():
    assert [al.diagonal_guess(t, 5, 5) for t in range(5)] == [1, 2, 3, 4, 5]
    assert al.diagonal_guess(0, 9, 7) == 1 and al.diagonal_guess(6, 9, 7) == 9


def test_alignment_counts_every_aligned_word_and_scores_a_perfect_head_at_one(monkeypatch):
    model, tok = random_marian()
    pairs = grammar.generate(5, 10, held_out=True)
    report = al.measure(model, tok, pairs)
    words = sum(len(p.alignment) for p in pairs)
    assert all(h.words == words for h in report.heads) and len(report.heads) == 2 * 4
    assert 0 < report.chance < 0.5 and report.pairs == 5

    real_translate = al.translate

    def oracle(model, tok, text, reference):  # a head 0 of layer 0 that always looks at the aligned word
        result = real_translate(model, tok, text, reference=reference)
        pair = next(p for p in pairs if p.source_text == text)
        for s, t in pair.alignment:
            result.steps[t].cross_attention[0, 0] = torch.nn.functional.one_hot(
                torch.tensor(s), len(result.source_tokens)
            )
        return result

    monkeypatch.setattr(al, "translate", oracle)
    perfect = al.measure(model, tok, pairs)
    assert perfect.heads[0].accuracy == 1.0 and perfect.best(1)[0] == perfect.heads[0]
    assert perfect.verdict() == "aligns"
    # off the diagonal: the words whose aligned source is not the diagonal guess, counted here independently
    off = [(s, t, len(p.source) - 1) for p in pairs for s, t in p.alignment
           if al.diagonal_guess(t, len(p.source) - 1, len(p.target)) != s]  # fmt: skip
    assert off and len(off) < words  # the verb-final order puts some words off the diagonal, not all
    assert all(h.words == len(off) for h in perfect.off_diagonal)
    assert perfect.off_diagonal[0].accuracy == 1.0 and perfect.off_chance == pytest.approx(
        sum(1 / n for _, _, n in off) / len(off)
    )
    data = perfect.to_dict()
    assert data["off_diagonal"]["best_head"]["hits"] == len(off) and al.off_diagonal_result(data)["words"] == len(off)
    assert al.off_diagonal_result({"heads": []}) is None  # a results file from before this measurement
    # reordered words: links that cross another link of the same pair, found here by brute force
    crossing = [(s, t, p) for p in pairs for s, t in p.alignment
                if any(s2 > s and t2 < t or s2 < s and t2 > t for s2, t2 in p.alignment)]  # fmt: skip
    assert crossing and all(h.words == len(crossing) for h in perfect.crossing)
    assert perfect.crossing[0].accuracy == 1.0
    both = sum(al.diagonal_guess(t, len(p.source) - 1, len(p.target)) != s for s, t, p in crossing)
    assert data["crossing"]["off_diagonal_words"] == perfect.off_crossing == both < len(off)
    assert al.crossing_result(data)["words"] == len(crossing) and al.crossing_result({"heads": []}) is None
    # the page's "the other N are off the guess only because of length": off-diagonal links crossing no other link
    length_only = sum(al.diagonal_guess(t, len(p.source) - 1, len(p.target)) != s
                      and not any(s2 > s and t2 < t or s2 < s and t2 > t for s2, t2 in p.alignment)
                      for p in pairs for s, t in p.alignment)  # fmt: skip
    assert al.off_diagonal_parts(data)["length_only"] == length_only > 0
    assert al.off_diagonal_parts({"heads": []}) is None


# --- the shipped model ------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_shipped_model_translates_held_out_sentences(encoder_decoder):
    model, tok = encoder_decoder
    pairs = grammar.generate(20, 99, held_out=True)
    exact = sum(tr.greedy_translate(model, tok, p.source_text) == p.target for p in pairs)
    assert exact >= 16  # the report's held-out exact match is measured on 1,000 pairs


# --- what the page draws (core/encoder_decoder/view.py) and its figures -------------------------------------------


def test_step_view_slices_one_head_up_to_a_step_with_the_look_ahead_mask():
    from core.encoder_decoder import view as edv

    model, tok = random_marian()
    run = edv.run_sentence(model, tok, "The big cat sees the ball in the park.", "ja")
    assert run.reference == "大きい 猫 は 公園 で ボール を 見る 。".split() and run.forced is not None
    v = edv.step_view(run, "forced", 3, 1, 2)
    S = len(run.forced.source_tokens)
    assert v.mode == "forced" and v.self_attention.shape == (4, 4) and v.cross.shape == (4, S)
    assert v.look_ahead.tolist() == [[c > r for c in range(4)] for r in range(4)]
    assert np.isnan(v.self_attention[v.look_ahead]).all()  # hidden, not small
    assert np.allclose(np.nansum(v.self_attention, 1), 1, atol=1e-5) and np.allclose(v.cross.sum(1), 1, atol=1e-5)
    for t in range(4):  # row t is step t's own row of layer 1, head 2
        assert np.allclose(v.cross[t], run.forced.steps[t].cross_attention[1, 2].numpy())
    assert np.allclose(v.encoder, run.forced.encoder_attention[1, 2].numpy())
    # the grammar's alignment, as (decoder position, source position), only up to the step
    assert v.alignment == sorted((t, s) for s, t in run.alignment if t <= 3) and (1, 3) in v.alignment  # 猫 <- cat
    no_stop = edv.run_sentence(model, tok, "the big cat sees the ball in the park", "ja")  # no full stop typed
    assert no_stop.free.source_tokens == no_stop.forced.source_tokens == run.forced.source_tokens
    # out-of-range requests are clipped, never raise
    far = edv.step_view(run, "forced", 999, 9, -3)
    assert (far.step, far.layer, far.head) == (len(run.forced.steps) - 1, 1, 0)


def test_a_sentence_outside_the_grammar_has_no_reference_and_falls_back_to_free_generation():
    from core.encoder_decoder import view as edv

    model, tok = random_marian()
    for text in ["", "the cat", "cat the sees ball", "The 🐱 sees <script>alert(1)</script> 猫 고양이.", "x" * 20000]:
        run = edv.run_sentence(model, tok, text, "ko")
        assert run.reference is None and run.forced is None and run.agrees is None
        assert edv.comparison_rows(run) == []
        v = edv.step_view(run, "forced", 0, 0, 0)
        assert v.mode == "free" and v.alignment == []
    run = edv.run_sentence(model, tok, "the cat sees the xylophone", "ja")
    assert run.unknown_words == ["xylophone"]
    assert run.named_unknown == (["xylophone"], 0)
    many = dataclasses.replace(run, unknown_words=[f"w{i % 15}" for i in range(30)])  # 15 distinct words, twice each
    assert many.named_unknown == ([f"w{i}" for i in range(12)], 3)  # the page names 12 and counts 3 more
    thirteen = dataclasses.replace(run, unknown_words=[f"w{i}" for i in range(13)])
    assert thirteen.named_unknown == ([f"w{i}" for i in range(13)], 0)  # core.listing: never "and 1 more"
    long = edv.run_sentence(model, tok, "the cat sleeps . " * 50, "ja")
    assert long.truncated and len(long.free.source_tokens) == ed.MAX_LENGTH + 1  # tag + 23 words + </s>
    with pytest.raises(ValueError):
        edv.run_sentence(model, tok, "the cat sleeps", "fr")


def test_comparison_rows_put_free_generation_beside_teacher_forcing():
    from core.encoder_decoder import view as edv

    model, tok = random_marian()
    run = edv.run_sentence(model, tok, "the dog runs", "ja")
    rows = edv.comparison_rows(run)
    assert [r["reference"] for r in rows] == run.reference + ["</s>"]
    for r, step in zip(rows, run.forced.steps):
        assert r["p_reference"] == step.chosen_probability and r["forced_top"] == step.top[0][0]
        assert r["same"] == (r["free"] == r["reference"])


def test_the_stack_names_every_attention_with_its_shape():
    from core.encoder_decoder import view as edv

    model, _ = random_marian()
    blocks = {b.key: b for b in edv.stack_blocks(model.config, 9, 7)}
    assert blocks["enc_self"].shape == (4, 9, 9) and blocks["dec_self"].shape == (4, 7, 7)
    assert blocks["dec_cross"].shape == (4, 7, 9) and blocks["dec_cross"].symbols == ("H", "T", "S")
    assert blocks["logits"].shape == (7, model.config.vocab_size)
    kinds = {k["kind"]: k for k in edv.attention_kinds(model.config, 9, 7)}
    assert kinds["cross"]["q"] == "dec_self_out" and kinds["cross"]["kv"] == "enc_out"
    assert kinds["masked"]["mask"] == "look_ahead"
    view = edv.stack_view(model.config, 9, 7)  # the page's one call: random_marian's d_model 32 over 4 heads
    assert (view.source_len, view.target_len, view.d_model, view.heads, view.d_k) == (9, 7, 32, 4, 8)
    assert view.blocks == edv.stack_blocks(model.config, 9, 7) and view.kinds == list(kinds.values())


def test_examples_are_held_out_and_parse():
    from core.encoder_decoder import view as edv

    for sentence in edv.example_sentences():
        meaning, unknown = grammar.parse(sentence)
        assert meaning is not None and not unknown
        assert grammar.is_held_out(grammar.make_pair(meaning, "ja"))
    words = {w for group in edv.vocabulary_groups().values() for item in group for w in item.split("/")}
    assert words <= set(grammar.vocabulary())


def test_alignment_results_round_trip_through_the_page_reader():
    model, tok = random_marian()
    report = al.measure(model, tok, grammar.generate(4, 11, held_out=True))
    data = {"layers": 2, "heads_per_layer": 4, **report.to_dict()}
    assert al.is_result(data)
    grid = al.result_grid(data)
    assert grid["accuracy"] == report.accuracy_grid(2, 4)
    assert all(lo <= a <= hi for h in data["heads"] for lo, a, hi in [(h["low"], h["accuracy"], h["high"])])
    assert not al.is_result({**data, "verdict": "<script>"})
