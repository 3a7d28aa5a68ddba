"""The model contract (base.py) and the models that implement it."""

from .base import AttentionModel, Batch, ModelUnavailable, Reason, Trace

__all__ = ["AttentionModel", "Batch", "ModelUnavailable", "Reason", "Trace"]
