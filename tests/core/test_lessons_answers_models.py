"""/models' answer functions against independent references: transformers' own modules and cache for tiny folders of
two families (registered as the operator's), and SmolLM2's and MiniLM's published shapes worked by hand."""

import pytest
import torch
import transformers

from core.lessons.answers import compute
from tests.tiny_models import registered_folders


def ans(name, state, **params):
    return compute(name, params, {k: str(v) for k, v in state.items()})


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """{family: (registry key, transformers model)} for a tiny BERT and a tiny Llama (6 query heads over 2 key/value
    heads of 8)."""
    root = tmp_path_factory.mktemp("models")
    with registered_folders(root, ("bert", "llama")) as keys:
        yield {f: (key, transformers.AutoModel.from_pretrained(root / f"tiny-{f}").eval()) for f, key in keys.items()}


def test_counts_equal_transformers_modules(tiny):
    key, llama = tiny["llama"]
    count = {
        w: ans("models.count", {"pick": key}, what=w).correct for w in ("layers", "query_heads", "kv_heads", "head_dim")
    }
    attention = llama.layers[0].self_attn  # q_proj is heads x d wide, k_proj kv_heads x d
    assert len(llama.layers) == count["layers"]
    assert attention.q_proj.out_features == count["query_heads"] * count["head_dim"]
    assert attention.k_proj.out_features == count["kv_heads"] * count["head_dim"] < attention.q_proj.out_features
    key, bert = tiny["bert"]
    count = {w: ans("models.count", {"pick": key}, what=w).correct for w in ("layers", "query_heads", "head_dim")}
    heads = bert.encoder.layer[0].attention.self
    assert len(bert.encoder.layer) == count["layers"]
    assert (heads.num_attention_heads, heads.attention_head_size) == (count["query_heads"], count["head_dim"])


def test_shipped_counts_by_hand():
    """SmolLM2-135M: hidden 576 over 9 query heads (64 each), 3 key/value heads, 30 layers; MiniLM-L6: 384 / 12."""
    smol = {"pick": "smollm2"}
    assert [ans("models.count", smol, what=w).correct for w in ("layers", "query_heads", "kv_heads", "head_dim")] == [
        30, 9, 3, 64
    ]  # fmt: skip
    assert ans("models.count", {"pick": "minilm"}, what="head_dim").correct == 384 / 12


def test_positions_from_the_modules(tiny):
    bert_key, bert = tiny["bert"]
    llama_key, llama = tiny["llama"]
    assert isinstance(bert.embeddings.position_embeddings, torch.nn.Embedding)  # a trained table
    assert ans("models.positions", {"pick": bert_key}).correct == "learned"
    assert hasattr(llama, "rotary_emb") and not hasattr(llama, "embed_positions")
    assert ans("models.positions", {"pick": llama_key}).correct == "rope"
    assert ans("models.positions", {"pick": "minilm"}).correct == "learned"
    assert ans("models.positions", {"pick": "smollm2"}).correct == "rope"


@pytest.mark.parametrize("n", [1, 7, 20])
def test_cache_bytes_equal_transformers_own_cache(tiny, n):
    """The bytes of the keys and values transformers' DynamicCache holds after n tokens, float32."""
    key, llama = tiny["llama"]
    with torch.no_grad():
        cache = llama(torch.arange(n)[None] % 10 + 4, use_cache=True).past_key_values
    held = sum(layer.keys.nbytes + layer.values.nbytes for layer in cache.layers)
    assert ans("models.cache_bytes", {"pick": key, "tokens": n}, unit="bytes").correct == held
    # the prediction at another length: the learner then sets it
    assert ans("models.cache_bytes", {"pick": key, "tokens": 1}, unit="bytes", to_tokens=n).correct == held


def test_shipped_cache_by_hand():
    mib = 2 * 30 * 3 * 64 * 1024 * 4 / 2**20  # 2 (K, V) x layers x kv heads x d x tokens x 4 bytes
    assert ans("models.cache_bytes", {"pick": "smollm2", "tokens": 1024}).correct == mib == 45
    assert ans("models.cache_bytes", {"pick": "smollm2", "tokens": 1024}, to_tokens=4096).correct == 4 * mib


def test_has_cache_as_transformers_runs_them(tiny):
    """An encoder's forward returns no cache; a decoder's does."""
    for key, model in tiny.values():
        with torch.no_grad():
            out = model(torch.tensor([[4, 5, 6]]), use_cache=True)
        returned = getattr(out, "past_key_values", None) is not None
        assert ans("models.has_cache", {"pick": key}).correct == ("yes" if returned else "no")
    assert ans("models.has_cache", {"pick": "minilm"}).correct == "no"
    assert ans("models.has_cache", {"pick": "smollm2"}).correct == "yes"


@pytest.mark.parametrize("pick, page, correct", [("minilm", "logit-lens", "no"), ("minilm", "multi-head", "yes"),
                                                  ("smollm2", "logit-lens", "yes"), ("smollm2", "multi-head", "no"),
                                                  ("smollm2", "kv-cache", "yes"), ("minilm", "encoder-decoder", "no"),
                                                  ("encoder-decoder", "encoder-decoder", "yes")])  # fmt: skip
def test_supported_pages_by_hand(pick, page, correct):
    """The logit lens, ablation and the KV cache need a decoder; /multi-head a BERT layer; /encoder-decoder an
    encoder-decoder."""
    assert ans("models.supports", {"pick": pick}, page=page).correct == correct


def test_cache_of_window_layers_and_wider_values_by_hand():
    """A sliding-window layer keeps its last W - 1 positions only (transformers' cache: measured in
    tests/core/test_kv_cache_generation.py); values wider than keys cost their own width."""
    from types import SimpleNamespace

    from core.kv_cache.memory import model_cache_bytes

    caps = SimpleNamespace(kind="decoder", kv_latent_dim=None, n_layers=2, n_kv_heads=2, head_dim=8, value_dim=None,
                           sliding_window=(None, 4))  # fmt: skip
    assert model_cache_bytes(caps, 10) == 2 * 2 * 8 * (10 + 3) * 4  # K and V x kv heads x d x (10 + 3) x 4 bytes
    wide = SimpleNamespace(**{**caps.__dict__, "value_dim": 16})
    assert model_cache_bytes(wide, 10) == 2 * (8 + 16) * (10 + 3) * 4
    assert model_cache_bytes(SimpleNamespace(**{**caps.__dict__, "kind": "encoder"}), 10) is None
