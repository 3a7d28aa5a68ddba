"""A learner's own checkpoint (core/models/local.py) on many architectures, with no download: tiny random-weight
models built from transformers' own config classes, saved to a temporary folder, loaded through the same path as
a user's folder. For each family: capabilities read right from the config; every layer's weights equal
transformers' eager attention within 1e-5 (GQA, sliding windows, soft-capping and sinks included); a padded batch
leaves each text's weights as when it runs alone. Bad folders get a clear message."""

from __future__ import annotations

import json

import pytest
import torch
import transformers

from core.models import local
from core.models.capabilities import capabilities_of
from core.sdpa import attention_weights
from tests.tiny_models import FAMILIES, TEXTS, build


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family_folder(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    build(request.param, folder)
    return request.param, folder


@pytest.fixture(scope="module")
def family_model(family_folder):
    """The family's folder loaded once for the tests that only read it."""
    return local.load_folder(family_folder[1])


def test_capabilities_are_read_from_the_config(family_folder):
    family, folder = family_folder
    caps = local.describe_folder(folder)
    want = FAMILIES[family][3]
    assert caps.kind == want["kind"]
    assert caps.positions.kind == want["pos"]
    assert caps.n_kv_heads == want.get("kv", caps.n_heads)
    assert caps.kv_groups == [list(range(g * caps.n_heads // caps.n_kv_heads, (g + 1) * caps.n_heads // caps.n_kv_heads)) for g in range(caps.n_kv_heads)]  # fmt: skip
    if "windows" in want:
        assert caps.sliding_window == want["windows"]
    else:
        assert set(caps.sliding_window) <= {None}
    assert caps.attn_softcap == want.get("softcap")
    assert caps.sinks == want.get("sinks", False)
    assert caps.n_experts == want.get("experts")
    rotary = {"gpt_neox": 0.5, "gptj": 0.5, "stablelm": 0.25, "deepseek_v3": 1 / 3}.get(family, 1.0)
    assert caps.positions.rotary_fraction == pytest.approx(rotary)
    assert caps.positions.rope_pairs == ("interleaved" if family in ("gptj", "cohere") else "half")


def test_a_latent_attention_cache_holds_one_compressed_vector_per_token_and_layer(tmp_path):
    """DeepSeek-V3's MLA caches kv_lora_rank + qk_rope_head_dim = 16 + 8 values per token and layer (what
    caps.kv_latent_dim says, from the config), not keys and values per head: the cache's own tensors say so."""
    build("deepseek_v3", tmp_path)
    caps = local.describe_folder(tmp_path)
    assert caps.kv_latent_dim == 24
    model = local.load_folder(tmp_path)
    cache, ids = model.new_cache(), model.encode(TEXTS[0])
    model.prefill(cache, ids)
    assert model.cache_bytes(cache) == caps.n_layers * caps.kv_latent_dim * len(ids) * 4


def test_the_head_size_is_the_one_the_model_computes_with(family_folder, family_model):
    """caps.head_dim (config only) is the size of the q and k the model hands its attention (DeepSeek's latent
    attention: 16 without positions + 8 rotated = 24, where its config's head_dim says 8)."""
    family, folder = family_folder
    caps = local.describe_folder(folder)
    trace = family_model.run(family_model.tokenize(TEXTS[:1]))
    assert trace.queries[0].shape[-1] == trace.keys[0].shape[-1] == caps.head_dim
    assert caps.head_dim == FAMILIES[family][3].get("head_dim", caps.head_dim)
    assert (caps.kv_latent_dim is not None) == (family == "deepseek_v3")


def test_the_last_logit_lens_stage_is_the_models_own_logits(family_folder, family_model):
    """unembed(the last residual stream) runs the family's own final transforms (Cohere's logit scale, Gemma 2's
    final soft-cap): it equals the logits of the model's own forward."""
    family, _ = family_folder
    if FAMILIES[family][3]["kind"] != "decoder":
        pytest.skip("the logit lens reads decoders")
    model = family_model
    streams, out = model.residual_streams(model.tokenize(TEXTS[:1]))
    torch.testing.assert_close(model.unembed(streams[-1]), out.logits.float(), atol=1e-5, rtol=0)


def test_zeroing_a_head_equals_zeroing_its_columns_of_the_output_projection(family_folder, family_model):
    """Ablation's hook (a head's output zeroed before W^O) against the same model with that head's input columns
    of W^O set to 0: the same logits (decoders) or last hidden state (encoders)."""
    import copy

    from core import ablation
    from core.models import hooks

    model = family_model
    batch = model.tokenize(TEXTS[:1])
    layer, head = 1, 1
    with ablation.ablated(model, [(layer, head)]):
        ours = model.forward(batch, logits=model.is_causal)
    edited = copy.deepcopy(model.model)
    projection = hooks.output_projections(edited.base_model)[layer]
    weight = projection.weight  # nn.Linear (out, in); GPT-2's Conv1D (in, out)
    width = (weight.shape[1] if isinstance(projection, torch.nn.Linear) else weight.shape[0]) // model.n_heads
    with torch.no_grad():
        if isinstance(projection, torch.nn.Linear):
            weight[:, head * width : (head + 1) * width] = 0
        else:
            weight[head * width : (head + 1) * width] = 0
        theirs = (edited if model.is_causal else edited.base_model)(
            input_ids=batch.input_ids, attention_mask=batch.attention_mask, **model._run_kwargs()
        )
    field = "logits" if model.is_causal else "last_hidden_state"
    plain = model.forward(batch, logits=model.is_causal)
    assert float((getattr(ours, field) - plain[field]).detach().abs().max()) > 1e-6
    torch.testing.assert_close(getattr(ours, field), getattr(theirs, field), atol=1e-5, rtol=0)


def test_the_bert_layer_capability_says_what_the_contract_can_read(family_folder):
    """caps.bert_layer (read from the config, no weights) is true exactly where encoder_layer can read a BertLayer
    out of the loaded model; elsewhere encoder_layer refuses in words."""
    family, folder = family_folder
    caps = local.describe_folder(folder)
    assert caps.bert_layer == (family in ("bert", "roberta"))
    model = local.load_folder(folder)
    if caps.bert_layer:
        assert model.encoder_layer(0).w_q.shape == (caps.d_model, caps.d_model)
    else:
        with pytest.raises(ValueError, match="BERT"):
            model.encoder_layer(0)


def test_every_layer_equals_transformers_eager_attention(family_folder):
    family, folder = family_folder
    model = local.load_folder(folder)
    result = local.parity(model, TEXTS)
    assert result.layers == model.n_layers
    assert result.exact, f"{family}: max difference {result.max_difference:.2e}"


def test_parity_reports_where_transformers_eager_attention_disagrees(tmp_path, monkeypatch):
    """The /models page's verdict (our weights against transformers' eager ones) must compare the two: they agree to
    1e-6, so only moving one side can tell. Eager attention's softmax (torch.nn.functional.softmax; ours calls
    torch.softmax) made to return its weights + 2^-10: layer 0, whose input the move cannot reach, must differ by
    2^-10 and the model must not be called exact."""
    build("llama", tmp_path)
    model = local.load_folder(tmp_path)
    real = torch.nn.functional.softmax
    monkeypatch.setattr(torch.nn.functional, "softmax", lambda *a, **kw: real(*a, **kw) + 2.0**-10)
    result = local.parity(model, TEXTS)
    assert result.per_layer[0] == pytest.approx(2.0**-10, abs=1e-6) and not result.exact


def test_padding_leaves_each_text_as_alone(family_folder):
    family, folder = family_folder
    model = local.load_folder(folder)
    trace = model.run(model.tokenize(TEXTS))
    for index, text in enumerate(TEXTS):
        alone = model.run(model.tokenize([text]))
        m = trace.length(index)
        for layer in range(model.n_layers):
            torch.testing.assert_close(
                trace.layer_attention(layer, index)[:, :m, :m], alone.layer_attention(layer, 0), atol=1e-5, rtol=0
            )


def test_the_run_records_the_features_the_modules_pass(family_folder):
    """What the attention modules really passed (window, soft-cap, sinks) agrees with the config's reading."""
    family, folder = family_folder
    model = local.load_folder(folder)
    caps = local.describe_folder(folder)
    trace = model.run(model.tokenize(TEXTS[:1]))
    assert [f.window for f in trace.features] == list(caps.sliding_window)[: model.n_layers]
    assert {f.softcap for f in trace.features} == {caps.attn_softcap}
    assert all((f.sinks is not None) == caps.sinks for f in trace.features)


def test_softcap_and_sinks_follow_their_definitions():
    """core.sdpa.attention_weights' two extras against the formulas written out: c·tanh(s/c), and a softmax over
    [scores, sink] whose sink column is dropped, so a row sums to 1 - its sink's share."""
    torch.manual_seed(0)
    q, k = torch.randn(2, 5, 8) * 3, torch.randn(2, 5, 8) * 3
    scores = q @ k.transpose(-1, -2) / 8**0.5
    capped = attention_weights(q, k, softcap=1.5)
    torch.testing.assert_close(capped, torch.softmax(1.5 * torch.tanh(scores / 1.5), -1))
    sinks = torch.tensor([0.5, -1.0])
    with_sinks = attention_weights(q, k, sinks=sinks)
    exp = scores.exp()
    share = exp / (exp.sum(-1, keepdim=True) + sinks.exp()[:, None, None])
    torch.testing.assert_close(with_sinks, share)
    assert bool((with_sinks.sum(-1) < 1).all())


def test_a_config_is_read_without_weights():
    caps = capabilities_of(transformers.LlamaConfig(num_hidden_layers=2, num_attention_heads=8, num_key_value_heads=2))
    assert (caps.kind, caps.n_layers, caps.n_heads, caps.n_kv_heads, caps.is_causal) == ("decoder", 2, 8, 2, True)
    assert caps.positions.rope_theta == 10000.0 and caps.positions.rope_scaling is None


# --- bad folders: a clear message, never a stack trace -----------------------------------------------------------


def test_bad_folders_get_a_clear_message(tmp_path):
    cases = {}
    cases["missing"] = tmp_path / "nowhere"
    (tmp_path / "file.bin").write_bytes(b"\x00\x01")
    cases["a file"] = tmp_path / "file.bin"
    (tmp_path / "empty").mkdir()
    cases["no config"] = tmp_path / "empty"
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "config.json").write_text("{not json", encoding="utf-8")
    cases["not json"] = tmp_path / "garbage"
    (tmp_path / "unknown").mkdir()
    (tmp_path / "unknown" / "config.json").write_text(json.dumps({"model_type": "no-such-arch"}), encoding="utf-8")
    cases["unknown architecture"] = tmp_path / "unknown"
    (tmp_path / "huge").mkdir()
    huge = transformers.LlamaConfig(hidden_size=16384, num_hidden_layers=120, num_attention_heads=128)
    huge.save_pretrained(tmp_path / "huge")
    cases["enormous"] = tmp_path / "huge"
    messages = {}
    for what, folder in cases.items():
        with pytest.raises(local.ModelFolderError) as err:
            local.load_folder(folder)
        messages[what] = str(err.value)
    assert "no such folder" in messages["missing"]
    assert "not a model folder" in messages["a file"]
    assert "no config.json" in messages["no config"]
    assert "not valid JSON" in messages["not json"]
    assert "does not know this architecture" in messages["unknown architecture"]
    assert "billion parameters" in messages["enormous"]
    with pytest.raises(local.ModelFolderError, match="hub id"):
        local.load_folder("someone/some-model")


def test_bloom_is_shown_with_its_alibi_bias(tmp_path):
    """Bloom adds ALiBi inside its own attention code: the weights the contract recomputes equal eager (the family
    tests above) only with each head's bias -m_h (i - j); without it they do not. Its slopes are the paper's
    geometric series 2^(-8h/H) (Press et al. 2022), h = 1 .. H."""
    build("bloom", tmp_path)
    model = local.load_folder(tmp_path)
    trace = model.run(model.tokenize(TEXTS[:1]))
    slopes = trace.features[0].alibi
    torch.testing.assert_close(slopes, torch.tensor([2.0 ** (-8 * h / 4) for h in range(1, 5)]))
    with_bias = trace.layer_attention(1)
    trace.features = []  # plain softmax(q . k)
    assert float((trace.layer_attention(1) - with_bias).abs().max()) > 1e-2


def test_an_alibi_family_the_contract_cannot_read_is_refused_in_one_true_sentence(tmp_path):
    """MPT adds its ALiBi biases inside its own attention code, which never calls transformers' attention interface
    and has no reader of its own here: refused when described (before the registry adds it), in words."""
    from core.models import registry

    transformers.MptConfig(vocab_size=30, d_model=32, n_heads=4, n_layers=2).save_pretrained(tmp_path)
    before = set(registry.RECORDS)
    with pytest.raises(local.ModelFolderError, match="ALiBi") as err:
        registry.register_folder(tmp_path)
    assert set(registry.RECORDS) == before
    assert "\n" not in str(err.value) and "Error" not in str(err.value)


def test_missing_tokenizer_and_paths_outside_the_allowed_list(tmp_path):
    folder = tmp_path / "allowed" / "llama"
    build("llama", folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).unlink(missing_ok=True)
    with pytest.raises(local.ModelFolderError, match="tokenizer"):
        local.load_folder(folder)
    with pytest.raises(local.ModelFolderError, match="not a model folder this server may open"):
        local.describe_folder(folder, allowed=[tmp_path / "elsewhere"])
    assert local.describe_folder(folder, allowed=[tmp_path / "allowed"]).kind == "decoder"
    with pytest.raises(local.ModelFolderError, match="not a model folder this server may open"):
        local.describe_folder(tmp_path / "allowed" / ".." / "x", allowed=[tmp_path / "allowed"])


def test_a_config_its_own_class_refuses_is_one_sentence(tmp_path):
    """A config that transformers' config class rejects (hidden size not a multiple of the heads: huggingface_hub's
    strict dataclass raises its own error type, not a ValueError) is a ModelFolderError, not a crash."""
    build("llama", tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "hidden_size": 50}))
    with pytest.raises(local.ModelFolderError, match="refuses this config .*multiple of the number of attention heads"):
        local.describe_folder(tmp_path)


def test_a_roberta_table_holds_its_rows_after_the_padding_index(tmp_path):
    """RoBERTa numbers positions from padding_idx + 1: a table of P rows holds P - padding_idx - 1 tokens (the real
    one: 514 rows, padding id 1, 512 tokens; the tiny one: 64 rows, padding id 0, 63). A text that long runs; the
    page's cut stops there instead of at an index error."""
    build("roberta", tmp_path)
    caps = local.describe_folder(tmp_path)
    assert caps.max_positions == 63
    model = local.load_folder(tmp_path)
    assert model.max_positions == 63
    batch = model.tokenize(["the cat sat on a mat " * 20])
    assert batch.input_ids.shape[1] == 63 and batch.truncated == [True]
    trace = model.run(batch)
    assert trace.layer_attention(0).shape[-1] == 63
    config = transformers.RobertaConfig(max_position_embeddings=514, pad_token_id=1)
    assert capabilities_of(config).max_positions == 512


def test_the_learned_table_is_indexed_by_position_for_roberta_too(tmp_path):
    """learned_position_embeddings()[p] is the vector RoBERTa adds at position p: transformers' own position ids
    (numbered from padding_idx + 1) pick the same rows; BERT's table is returned whole."""
    from transformers.models.roberta.modeling_roberta import RobertaEmbeddings

    build("roberta", tmp_path / "roberta")
    model = local.load_folder(tmp_path / "roberta")
    ids = model.tokenize(["the cat sat on a mat"]).input_ids
    rows = RobertaEmbeddings.create_position_ids_from_input_ids(ids, model.config.pad_token_id)[0]
    table = model.model.embeddings.position_embeddings.weight.detach()
    ours = model.learned_position_embeddings()
    assert ours.shape[0] == model.max_positions == 63
    assert torch.equal(ours[: ids.shape[1]], table[rows])
    build("bert", tmp_path / "bert")
    bert = local.load_folder(tmp_path / "bert")
    assert torch.equal(bert.learned_position_embeddings(), bert.model.embeddings.position_embeddings.weight.detach())
