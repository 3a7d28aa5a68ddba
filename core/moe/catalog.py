"""Published sizes of real Mixture-of-Experts models, and what fraction of each runs per token.

The numbers are as the developers published them (source named per row); the fractions are computed here.
The active-parameter fraction is larger than the routed-expert fraction because attention, embeddings,
norms and shared experts run for every token: only the routed experts are sparse.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RealMoE:
    name: str
    routed_experts: int  # routed experts per MoE layer
    shared_experts: int  # experts every token goes through (0 if none)
    routed_per_token: int  # routed experts chosen per token (top-k)
    total_params_b: float  # billions, as published
    active_params_b: float  # billions activated per token, as published
    source: str

    @property
    def active_fraction(self) -> float:
        return active_fraction(self.active_params_b, self.total_params_b)

    @property
    def routed_fraction(self) -> float:
        """Share of the routed experts a token uses: k / E."""
        return self.routed_per_token / self.routed_experts


def active_fraction(active: float, total: float) -> float:
    """Share of all parameters a token passes through."""
    if not 0 < active <= total:
        raise ValueError(f"need 0 < active <= total, got {active} and {total}")
    return active / total


REAL_MOE_MODELS = [
    RealMoE(
        "Mixtral 8x22B",
        8,
        0,
        2,
        141,
        39,
        'Mistral AI, "Cheaper, Better, Faster, Stronger" (Mixtral 8x22B announcement, 17 April 2024)',
    ),
    RealMoE(
        "DeepSeek-V3",
        256,
        1,
        8,
        671,
        37,
        'DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437 (2024), sections 2 and 4.2',
    ),
    RealMoE(
        "Llama 4 Scout",
        16,
        1,
        1,
        109,
        17,
        'Meta, Llama-4-Scout-17B-16E model card and "The Llama 4 herd" (5 April 2025)',
    ),
    RealMoE(
        "Qwen3-235B-A22B",
        128,
        0,
        8,
        235,
        22,
        'Qwen Team, "Qwen3 Technical Report", arXiv:2505.09388 (2025), table 2; Qwen3-235B-A22B model card',
    ),
]


# huggingface.co/mistralai/Mixtral-8x22B-v0.1 config.json (the fields that count parameters).
MIXTRAL_8X22B_CONFIG = {
    "vocab_size": 32000,
    "hidden_size": 6144,
    "intermediate_size": 16384,
    "num_hidden_layers": 56,
    "num_attention_heads": 48,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "tie_word_embeddings": False,
}


def mixtral_parameters(cfg: dict) -> tuple[int, int]:
    """(total, active per token) parameters of a Mixtral config, counted: token embedding and output head (V d
    each, unless tied); per layer the attention (W^Q, W^O: d x d; W^K, W^V: d x H_kv d_k), the router (d x E),
    E experts of three d x d_ff matrices (gate, up, down) and two RMSNorm weights; a final norm. Active: only
    k of the E experts per layer. Not 8 x 22B = 176B: the experts share everything but their feed-forward."""
    d, ff, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    head_dim = d // cfg["num_attention_heads"]
    kv = cfg["num_key_value_heads"] * head_dim
    experts, k = cfg["num_local_experts"], cfg["num_experts_per_tok"]
    embed = cfg["vocab_size"] * d * (1 if cfg["tie_word_embeddings"] else 2)
    attention = 2 * d * d + 2 * d * kv
    expert = 3 * d * ff
    shared = embed + d + layers * (attention + d * experts + 2 * d)
    return shared + layers * experts * expert, shared + layers * k * expert


def moe_table(models: list[RealMoE] = REAL_MOE_MODELS) -> dict[str, list]:
    """Columns for display: experts, active experts per token, parameters and the computed fractions."""
    return {
        "model": [m.name for m in models],
        "routed_experts": [m.routed_experts for m in models],
        "shared_experts": [m.shared_experts for m in models],
        "routed_per_token": [m.routed_per_token for m in models],
        "total_params_b": [m.total_params_b for m in models],
        "active_params_b": [m.active_params_b for m in models],
        "active_fraction": [m.active_fraction for m in models],
        "routed_fraction": [m.routed_fraction for m in models],
        "source": [m.source for m in models],
    }
