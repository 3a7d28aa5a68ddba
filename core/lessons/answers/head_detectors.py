"""/head-detectors: the committed detector map of the link's model and detector."""

from __future__ import annotations

import torch

from core import head_detectors as hd
from core.lessons.answers.base import register
from core.lessons.kinds import Answer

PAGE = "head-detectors"


@register("head_detectors.best_head", "choice", PAGE, hd.STATE, model_pass=False)
def head_detectors_best_head(params, s):
    """Among four heads 'layer.head', the one the committed detector map scores highest for the page's detector
    (default induction) and model: the best head, and heads ranked at the middle, three quarters and last."""
    found = hd.committed_map(s.model)
    if found is None:
        raise ValueError(f"no committed head-detector map for {s.model}")
    grid = torch.as_tensor(found.scores[s.detector]).float()
    n_heads = grid.shape[1]
    ranked = torch.argsort(grid.flatten(), descending=True, stable=True).tolist()
    picks = [ranked[0], ranked[len(ranked) // 2], ranked[(3 * len(ranked)) // 4], ranked[-1]]
    label = [f"{i // n_heads}.{i % n_heads}" for i in picks]
    return Answer("choice", label[0], tuple(sorted(set(label))), None,
                  {"score": float(grid.flatten()[picks[0]]), "detector": s.detector})  # fmt: skip
