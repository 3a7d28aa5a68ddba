"""The MoE checkpoint's contract methods (core/models/moe_model.py) that core/moe/checkpoint_views.py uses instead of
reaching into the transformers module: held-out evaluation against the training script's committed report, and
the parameter counts against the module's own parameters."""

import pytest

from core.moe import checkpoint_views


def test_held_out_stats_reproduce_the_committed_training_report(moe):
    stats = checkpoint_views.held_out_stats(moe)
    report = moe.report
    assert stats["held_out_tokens"] == report["held_out"]["tokens"]
    assert stats["held_out_loss"] == pytest.approx(report["held_out_loss"], abs=1e-5)
    assert len(stats["layers"]) == len(report["layers"]) == moe.n_layers
    for ours, theirs in zip(stats["layers"], report["layers"]):
        assert ours["category_counts"] == theirs["category_counts"]
        assert ours["expert_load"] == pytest.approx(theirs["expert_load"], abs=1e-6)


def test_parameter_counts_come_from_the_contract(moe):
    total, active = moe.parameter_counts()
    assert total == moe.report["n_params"]  # the training script counted the module's parameters
    view = checkpoint_views.real_models(moe)
    assert (view.ours_total, view.ours_active) == (total, active) and active < total
    assert view.ours_fraction == pytest.approx(active / total)
