"""The model contract is declared once (core/models/base.py AttentionModel): everything the implementation offers
the topics is declared there, and the implementation leaves nothing of it abstract."""

from __future__ import annotations

import inspect

from core.models.base import AttentionModel
from core.models.hf import HFAttentionModel
from core.models.moe_model import MoEModel

# public names of the implementation that are for core/models itself, not for topics
INTERNAL = {"config", "output_projections"}


def public(cls) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls) if not name.startswith("_")}


def test_everything_the_implementation_offers_is_declared():
    undeclared = public(HFAttentionModel) - public(AttentionModel) - INTERNAL
    assert not undeclared, f"declare these in AttentionModel (core/models/base.py): {sorted(undeclared)}"


def test_the_implementations_leave_nothing_of_the_contract_abstract():
    assert not HFAttentionModel.__abstractmethods__
    assert not MoEModel.__abstractmethods__
    assert len(AttentionModel.__abstractmethods__) >= 30  # the declaration is the contract, not two methods
