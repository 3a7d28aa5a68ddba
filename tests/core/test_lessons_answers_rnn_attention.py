"""/rnn-attention's answer functions against independent computations: the alignment of hand-checked words and the
GRU's own teacher-forced pass over its greedy output (a second code path through the module), the numbers the
decoder reads measured on the encoder's own tensors, and path lengths and costs worked by hand."""

import pytest
import torch

from core.encoder_decoder import grammar
from core.encoder_decoder.translate import source_text
from core.lessons.answers import compute
from core.rnn_attention import model as rm

SENTENCE = "The big cat sees the ball in the park."


def ans(name, state, **params):
    return compute(name, params, {k: str(v) for k, v in state.items()})


@pytest.fixture(scope="module")
def gru():
    if rm.status():
        pytest.fail(rm.status())  # the weights are committed: a missing model is a failure, not a skip
    return rm.load()


@pytest.mark.parametrize("language, word, source", [("ja", "公園", "9 park"), ("ja", "見る", "4 sees"),
                                                     ("ja", "猫", "3 cat"), ("ko", "본다", "4 sees"),
                                                     ("ko", "공", "6 ball")])  # fmt: skip
def test_aligned_source_of_hand_checked_words(gru, language, word, source):
    """The source words these target words translate (the grammar's dictionary: 公園 = park, 見る/본다 = sees, ...)."""
    a = ans("rnn_attention.aligned_source", {"text": SENTENCE, "target": language}, word=word)
    assert a.correct == source and a.detail["weight"] > 0.5


@pytest.mark.parametrize("language", grammar.LANGUAGES)
def test_aligned_source_equals_the_teacher_forced_pass_over_the_greedy_output(gru, language):
    """Fed its own greedy output (model.forward, teacher forcing), the GRU attends as it did while writing: every
    written word's largest weight falls on the answer's source token."""
    model, tokenizer = gru
    state = {"text": SENTENCE, "target": language}
    output = ans("rnn_attention.aligned_source", state).detail["output"].split()
    pair = grammar.Pair(source_text(SENTENCE, language).split(), output, language, [])
    b = rm.batch(tokenizer, [pair])
    with torch.no_grad():
        _, weights = model(b["source_ids"], b["decoder_ids"])
    source = tokenizer.convert_ids_to_tokens(b["source_ids"][0].tolist())
    for t, word in enumerate(output):
        if output.index(word) != t:  # a repeated word: the answer reads its first occurrence
            continue
        j = int(weights[0, t].argmax())
        assert ans("rnn_attention.aligned_source", state, word=word).correct == f"{j} {source[j]}", word


def test_encoder_numbers_are_the_encoders_own_tensors(gru):
    """With attention the decoder reads every annotation the encoder returns (S x 2H numbers); without it, the
    forward encoder's last state alone (H), for a short and a long sentence alike."""
    model, tokenizer = gru
    for text in ("The doctors sing.", SENTENCE):
        state = {"text": text, "target": "ja"}
        ids = rm.batch(tokenizer, [grammar.Pair(source_text(text, "ja").split(), ["。"], "ja", [])])["source_ids"]
        with torch.no_grad():
            enc = model.encode(ids)
        assert ans("rnn_attention.encoder_numbers", state, what="attended").correct == enc.annotations[0].numel()
        assert ans("rnn_attention.encoder_numbers", state, what="final").correct == enc.forward_states[0, -1].numel()
    assert ans("rnn_attention.encoder_numbers", {"text": SENTENCE, "target": "ja"}).correct == 12 * 128  # by hand


@pytest.mark.parametrize("n, recurrent", [(64, 63), (2, 1), (2048, 2047)])
def test_path_length_by_hand(n, recurrent):
    state = {"part": "cost", "n": n}
    assert ans("rnn_attention.path_length", state, kind="recurrent").correct == recurrent
    assert ans("rnn_attention.path_length", state, kind="attention").correct == 1


def test_the_cheaper_layer_from_hand_counted_operations():
    """12 n d² against 8 n d² + 4 n² d, worked out: n = 512, d = 128: 100,663,296 against 201,326,592."""
    state = {"part": "cost", "n": 64, "d": 128}
    assert ans("rnn_attention.cheaper", state).correct == "attention"  # 12,582,912 against 10,485,760
    assert ans("rnn_attention.cheaper", state, to_n=512).correct == "recurrent"
    assert ans("rnn_attention.cheaper", state, to_n=128).correct == "equal"  # n = d
    assert ans("rnn_attention.cheaper", {**state, "d": 1024}, to_n=512).correct == "attention"
