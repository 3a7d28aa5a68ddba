"""A learner's encoder-decoder folder, whole, through core/models/seq2seq.py's contract (core/models/local.py's
load_seq2seq): tiny random-weight Marian, BART and T5 models built from transformers' own config classes and saved
with a tokenizer, no download. At every greedy step the contract's cross-attention and decoder self-attention equal
transformers' eager full forward (output_attentions=True) over the generated sequence, teacher-forced; the greedy
output equals model.generate(do_sample=False, num_beams=1) of the same length; the registry's key loads the same
model; a decoder folder is refused in words; the shipped encoder-decoder's capabilities are read from its config."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

from app import i18n
from core.encoder_decoder import own
from core.models import local, registry
from tests.references import assert_close_in_scale
from tests.tiny_models import SEQ2SEQ_FAMILIES, build, build_seq2seq

TEXTS = ["the cat sat on a mat because it was tired", "a dog ran far away from home"]
STEPS = 8


@pytest.fixture(scope="module", params=sorted(SEQ2SEQ_FAMILIES))
def folder(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(f"seq2seq-{request.param}")
    build_seq2seq(request.param, path)
    return request.param, path


def eager_reference(path):
    """The same folder loaded by transformers alone, eager attention, with a generation config that adds nothing
    to greedy decoding (no forced tokens, no stop at end-of-sequence)."""
    hf = transformers.AutoModelForSeq2SeqLM.from_pretrained(path, attn_implementation="eager").eval()
    hf.generation_config = transformers.GenerationConfig(
        decoder_start_token_id=hf.config.decoder_start_token_id, pad_token_id=hf.config.pad_token_id
    )
    return hf


def test_every_step_equals_transformers_eager_full_forward_and_greedy_equals_generate(folder):
    family, path = folder
    model, tok = local.load_seq2seq(path)
    hf = eager_reference(path)
    c = model.config
    assert (c.encoder_layers, c.decoder_layers, c.encoder_attention_heads, c.decoder_attention_heads) == (2, 2, 4, 4)
    seen = set()
    for text in TEXTS:
        source_ids, tokens, cut = tok.source(text, 64)
        assert not cut and tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"  # the tokenizer's own specials
        encoded = model.encode(source_ids)
        steps = model.greedy(encoded, STEPS, eos=-1)  # no token stops it: STEPS steps
        inputs = [token for token, _ in steps]
        written = [int(step.probs.argmax()) for _, step in steps]
        assert inputs[0] == c.decoder_start_token_id and inputs[1:] == written[:-1]
        seen.update(written)
        with torch.no_grad():
            ref = hf(input_ids=source_ids, decoder_input_ids=torch.tensor([inputs]), output_attentions=True)
        for layer in range(c.decoder_layers):
            for t, (_, step) in enumerate(steps):  # each cached step is the newest query's row of the full pass
                torch.testing.assert_close(step.cross_attention[layer], ref.cross_attentions[layer][0, :, t],
                                           atol=1e-5, rtol=0)  # fmt: skip
                torch.testing.assert_close(step.self_attention[layer], ref.decoder_attentions[layer][0, :, t, : t + 1],
                                           atol=1e-5, rtol=0)  # fmt: skip
        for layer in range(c.encoder_layers):
            torch.testing.assert_close(encoded.attention[layer], ref.encoder_attentions[layer][0], atol=1e-6, rtol=0)
        assert_close_in_scale(torch.stack([s.probs for _, s in steps]), torch.softmax(ref.logits[0], -1))
        generated = hf.generate(source_ids, do_sample=False, num_beams=1, max_new_tokens=STEPS)
        assert generated[0].tolist() == [c.decoder_start_token_id, *written]
    assert len(seen) > 1, "a greedy run that writes one token only tests little"


def test_greedy_stops_where_generate_stops_at_end_of_sequence(folder):
    family, path = folder
    model, tok = local.load_seq2seq(path)
    hf = eager_reference(path)
    hf.generation_config.eos_token_id = model.config.eos_token_id
    for text in TEXTS:
        source_ids, _, _ = tok.source(text, 64)
        early = [int(s.probs.argmax()) for _, s in model.greedy(model.encode(source_ids), 3, eos=-1)]
        for eos in {model.config.eos_token_id, *early}:  # the config's, and tokens it writes early: it stops
            steps = model.greedy(model.encode(source_ids), STEPS, eos=eos)
            written = [int(s.probs.argmax()) for _, s in steps]
            assert eos not in written[:-1] and (written[-1] == eos or len(written) == STEPS)
            hf.generation_config.eos_token_id = eos
            generated = hf.generate(source_ids, do_sample=False, num_beams=1, max_new_tokens=STEPS)
            assert generated[0].tolist() == [model.config.decoder_start_token_id, *written]


def test_the_page_run_is_the_contract_greedy_run(folder):
    family, path = folder
    model, tok = local.load_seq2seq(path)
    run = own.run_text(model, tok, TEXTS[0])
    source_ids, tokens, _ = tok.source(TEXTS[0], own.MAX_SOURCE_TOKENS)
    steps = model.greedy(model.encode(source_ids), own.MAX_STEPS)
    assert run.translation.source_tokens == tokens and len(run.translation.steps) == len(steps)
    written = [int(s.probs.argmax()) for _, s in steps]
    assert run.finished == (written[-1] == model.config.eos_token_id)
    assert run.output == tok.convert_ids_to_tokens([w for w in written if w != model.config.eos_token_id])
    v = own.view(run, 2, 1, 3)
    assert (v.layer, v.head, v.step) == (1, 3, min(2, len(steps) - 1))
    assert v.cross.shape == (v.step + 1, len(tokens)) and v.source_tokens == tokens
    for t in range(v.step + 1):
        assert torch.equal(torch.from_numpy(v.cross[t]), steps[t][1].cross_attention[1, 3])
        assert torch.equal(torch.from_numpy(v.self_attention[t, : t + 1]), steps[t][1].self_attention[1, 3])
    assert v.output_tokens[: v.step + 1] == tok.convert_ids_to_tokens(written[: v.step + 1])


def test_a_long_text_is_cut_to_the_position_table():
    config = type("C", (), {"max_positions": 16})()
    assert own.source_limit(config) == 16 and own.step_limit(config) == 16
    assert own.source_limit(type("C", (), {"max_positions": None})()) == own.MAX_SOURCE_TOKENS


def test_a_registered_folder_loads_whole_by_its_key_and_a_decoder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "RECORDS", dict(registry.RECORDS))
    build_seq2seq("t5", tmp_path / "tiny-t5")
    build("llama", tmp_path / "tiny-llama")
    key = registry.register_folder(tmp_path / "tiny-t5")
    by_path, _ = local.load_seq2seq(tmp_path / "tiny-t5")
    assert registry.RECORDS[key].load_seq2seq()[0].config == by_path.config
    llama = registry.register_folder(tmp_path / "tiny-llama")
    assert registry.RECORDS[llama].load_seq2seq is None
    with pytest.raises(local.ModelFolderError, match="tiny-llama: not an encoder-decoder") as refused:
        local.load_seq2seq(registry.RECORDS[llama].folder)
    with pytest.raises(registry.ModelUnavailable) as unloadable:
        registry.loaded(registry.seq2seq_key(llama))
    # each refusal's English is its [models] words in en (the page says them in the reader's language)
    for why in (refused.value.args[0], unloadable.value.args[0]):
        assert why.key == "folder_not_encoder_decoder", why
        assert str(why) == i18n.text("en", "models", why.key, **why.fields), str(why)
    # the encoder-only path of the other pages: Marian's encoder still loads there; T5's, which it cannot read, is
    # refused in words (it was an AttributeError)
    build_seq2seq("marian", tmp_path / "tiny-marian")
    assert local.load_folder(tmp_path / "tiny-marian").n_layers == 2
    with pytest.raises(local.ModelFolderError, match="tiny-t5: the attention contract cannot read this model"):
        local.load_folder(tmp_path / "tiny-t5")


def test_the_shipped_encoder_decoder_capabilities_come_from_its_config():
    from core.encoder_decoder import model as ed

    if ed.status():
        pytest.skip(ed.status())
    caps = registry.capabilities(registry.ENCODER_DECODER)
    config = json.loads((ed.WEIGHTS_DIR / "config.json").read_text())
    assert caps.kind == "encoder-decoder" and caps.positions.kind == "sinusoidal"
    assert (caps.n_layers, caps.n_heads, caps.d_model) == (
        config["encoder_layers"],
        config["encoder_attention_heads"],
        config["d_model"],
    )
    assert (caps.vocab_size, caps.max_positions) == (config["vocab_size"], config["max_position_embeddings"])
