"""core/models/seq2seq.py, the encoder-decoder's contract, against transformers' own MarianMTModel and
PreTrainedTokenizerFast: the attentions and probabilities of a full eager forward pass (shipped weights and a
random-weight model), the tokenizer, the loss by hand, saving and loading, and the training script's code path."""

import json

import pytest
import torch

from core.encoder_decoder import grammar
from core.encoder_decoder import model as ed
from core.models.seq2seq import Seq2Seq
from tests.fake_traces import random_marian, random_marian_hf
from tests.references import assert_close_in_scale

SENTENCES = ["<2ja> the big cat sees the ball in the park .", "<2ko> the teachers run in the school ."]


def reference_forward(hf, source_ids, decoder_ids):
    """transformers' full eager forward: encoder and decoder in one call from the ids (no cache, no memory passed)."""
    with torch.no_grad():
        return hf(input_ids=source_ids, decoder_input_ids=decoder_ids, output_attentions=True)


def check_against_transformers(model: Seq2Seq, hf, tok, text: str) -> None:
    from core.encoder_decoder.translate import _encode_source

    source_ids, _ = _encode_source(tok, text)
    encoded = model.encode(source_ids)
    # the decoder reads its own greedy output (free generation, step by step on the KV cache)
    token, cache, steps = model.config.decoder_start_token_id, None, []
    for _ in range(6):
        step, cache = model.step(encoded, token, cache)
        steps.append((token, step))
        token = int(step.probs.argmax())
    decoder_ids = torch.tensor([[t for t, _ in steps]])  # (1, T)
    ref = reference_forward(hf, source_ids, decoder_ids)
    forced = model.decode(encoded, decoder_ids)
    for layer in range(model.config.decoder_layers):
        assert torch.allclose(forced.cross_attention[layer], ref.cross_attentions[layer][0], atol=1e-6)
        assert torch.allclose(forced.self_attention[layer], ref.decoder_attentions[layer][0], atol=1e-6)
        for t, (_, step) in enumerate(steps):  # each cached step is the newest query's row of the full pass
            assert torch.allclose(step.cross_attention[layer], ref.cross_attentions[layer][0, :, t], atol=1e-5)
            assert torch.allclose(
                step.self_attention[layer], ref.decoder_attentions[layer][0, :, t, : t + 1], atol=1e-5
            )
    for layer in range(model.config.encoder_layers):
        assert torch.allclose(encoded.attention[layer], ref.encoder_attentions[layer][0], atol=1e-6)
    probs = torch.softmax(ref.logits[0].float(), -1)
    assert_close_in_scale(forced.probs, probs)
    assert_close_in_scale(torch.stack([s.probs for _, s in steps]), probs)


def test_the_contract_reads_what_transformers_eager_marian_computes_random_weights():
    hf = random_marian_hf()
    model, tok = random_marian()
    for text in SENTENCES:
        check_against_transformers(model, hf, tok, text)


def test_the_contract_reads_what_transformers_eager_marian_computes_shipped_weights(encoder_decoder):
    from transformers import MarianMTModel

    model, tok = encoder_decoder
    hf = MarianMTModel.from_pretrained(ed.WEIGHTS_DIR, dtype=torch.float32, attn_implementation="eager").eval()
    for text in SENTENCES:
        check_against_transformers(model, hf, tok, text)


def test_the_word_tokenizer_is_transformers_tokenizer_and_the_shipped_one():
    from transformers import PreTrainedTokenizerFast

    tok = ed.make_tokenizer()
    texts = ["<2ja> the cat sleeps .", "the 😺 <script> sees", ""]
    ids, mask = tok.batch(texts)
    assert ids.shape == mask.shape == (3, 5) and mask.sum(-1).tolist() == [5, 4, 0]
    assert ids[1].tolist()[1:3] == [tok.convert_tokens_to_ids("<unk>")] * 2 and ids[2].tolist() == [0] * 5  # <pad>: 0
    assert tok.batch(["the cat " * 40], max_length=ed.MAX_LENGTH)[0].shape == (1, ed.MAX_LENGTH)
    assert tok.get_vocab() == {w: i for i, w in enumerate(grammar.vocabulary())}
    if ed.status() is None:  # the shipped tokenizer.json gives the same ids
        shipped = PreTrainedTokenizerFast.from_pretrained(ed.WEIGHTS_DIR)
        reference = shipped(texts, padding=True, return_tensors="pt")
        assert torch.equal(ids, reference["input_ids"]) and torch.equal(mask, reference["attention_mask"])


def test_the_loss_is_the_mean_cross_entropy_of_the_shifted_labels():
    model, tok = random_marian()
    batch = ed.encode(tok, grammar.generate(3, 5))
    labels = batch["labels"]
    start = torch.full((3, 1), model.config.decoder_start_token_id)
    decoder_ids = torch.cat([start, labels[:, :-1].clamp(min=0)], 1)  # -100 -> <pad> (0): ignored positions anyway
    hf = random_marian_hf()
    with torch.no_grad():
        logits = hf(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], decoder_input_ids=decoder_ids
        ).logits
        by_hand = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100)
        assert_close_in_scale(model.loss(batch), by_hand)


def test_save_writes_float16_and_load_reads_it_back_as_float32(tmp_path):
    model, tok = random_marian()
    before = [p.detach().clone() for p in model.parameters()]
    model.save(tmp_path)
    tok.save(tmp_path)
    assert all(p.dtype == torch.float32 and torch.equal(p, b) for p, b in zip(model.parameters(), before))
    assert ed.status(tmp_path) is None
    assert json.loads((tmp_path / "config.json").read_text())["dtype"] == "float16"
    loaded, loaded_tok = ed.load(tmp_path)
    assert loaded.config == model.config and loaded_tok.get_vocab() == tok.get_vocab()
    rounded = 0
    for p, b in zip(loaded.parameters(), before):  # learned weights: float16-rounded; sinusoidal tables: rebuilt
        assert p.dtype == torch.float32 and (torch.equal(p, b.half().float()) or torch.equal(p, b))
        rounded += torch.equal(p, b.half().float()) and not torch.equal(p, b)
    assert rounded > 0  # the weights went through float16 (biases of 0 and norms of 1 are exact there)


def test_the_training_script_runs_its_whole_path(tmp_path, one_torch_thread):
    """A tiny run of scripts/train_encoder_decoder.py: train, evaluate, save, report; the folder loads back."""
    pytest.importorskip("sacrebleu")
    from scripts import train_encoder_decoder as script

    script.main(["--pairs", "64", "--held-out", "4", "--epochs", "1", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["train_pairs"] == 64 and report["held_out"]["all"]["pairs"] == 4 and report["loss_curve"]["steps"]
    model, tok = ed.load(tmp_path)
    assert report["parameters"] == sum(p.numel() for p in model.parameters())
    assert len(ed.encode(tok, grammar.generate(1, 0))["input_ids"][0]) > 2
