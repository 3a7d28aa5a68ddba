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
