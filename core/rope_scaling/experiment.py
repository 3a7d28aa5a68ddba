"""The long-context experiment as the page shows it: the committed results files (results/long_context*.json,
written by scripts/long_context_experiment.py), read with core.results.load_result, and short live reruns.

A missing, unreadable or wrongly shaped file counts as "no results", never as an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ..models.base import recorded_weights
from ..models.rope_scaling import SMOLLM2_ROPE
from ..results import RESULTS_DIR, load_result
from .long_context import PLAIN_LABEL, Progress, evaluate_scaling, load_long_text, run_configs

RESULTS_PATH = RESULTS_DIR / "long_context.json"  # the run with every configuration at 16,384 tokens
# Longer runs go to files beside it (long_context_32k.json...): a CPU run at 32k takes hours, so it is kept apart
# from the complete shorter one instead of replacing it.
STANDARD_RUNS = run_configs(["default", "linear", "dynamic", "yarn"], [2.0, 4.0, 8.0])
ORIGINAL_CONTEXT = SMOLLM2_ROPE["original_context"]


def load_results(path: Path | None = None) -> dict | None:
    """The committed results of scripts/long_context_experiment.py (RESULTS_PATH unless `path` is given), or None
    when there are none, the file is unreadable, or it holds no list of runs."""
    return load_result(Path(path or RESULTS_PATH), required=lambda d: isinstance(d["runs"], list))


def results_by_length() -> dict[int, dict]:
    """Every readable results file next to RESULTS_PATH (long_context*.json), keyed by its length in tokens.
    For two files of the same length, RESULTS_PATH wins, then the first by name."""
    paths = [RESULTS_PATH] + sorted(p for p in RESULTS_PATH.parent.glob("long_context*.json") if p != RESULTS_PATH)
    found: dict[int, dict] = {}
    for path in paths:
        res = load_results(path)
        if res is not None and isinstance(res.get("n_tokens"), int):
            found.setdefault(res["n_tokens"], res)
    return dict(sorted(found.items()))


def missing_runs(res: dict) -> list[str]:
    """Labels of the standard (method, factor) runs that a results file does not hold."""
    done = {(r.get("method"), float(r.get("factor", 0))) for r in res["runs"]}
    return [f"{m} x{f:g}" if m != "default" else PLAIN_LABEL for m, f in STANDARD_RUNS if (m, f) not in done]


def bucket_midpoints(run: dict) -> np.ndarray:
    return (np.asarray(run["start"]) + np.asarray(run["end"])) / 2


def choices() -> dict[int, list[str]]:
    """{length in tokens: the scale factors its runs used ("2", "4", ...)} for every results file with runs."""
    return {
        n: sorted({f"{r['factor']:g}" for r in res["runs"] if r["method"] != "default"}, key=float)
        for n, res in results_by_length().items()
        if res["runs"]
    }


@dataclass(frozen=True)
class LossView:
    runs: list[dict]  # the runs drawn, each with label, start, end, mean_loss (per bucket)
    midpoints: dict[str, np.ndarray]  # label -> bucket centres (positions)
    original_context: int  # L0, marked on the figure when the runs reach it
    reaches_original: bool


def loss_view(runs: list[dict], original_context: int | None = None) -> LossView:
    """The runs' loss curves; L0 from the runs themselves (a live run of an own model records its own), else
    SmolLM2's 8,192 (the committed files' runs)."""
    if original_context is None:
        original_context = runs[0].get("original_context", ORIGINAL_CONTEXT) if runs else ORIGINAL_CONTEXT
    return LossView(
        runs,
        {r["label"]: bucket_midpoints(r) for r in runs},
        original_context,
        bool(runs) and max(max(r["end"]) for r in runs) >= original_context,
    )


@dataclass(frozen=True)
class ExperimentView:
    results: dict  # the whole file (command, date, device ... for the "how made" note)
    weights: tuple[str, dict]  # where the model's weights came from (core.models.base.recorded_weights)
    missing: list[str]  # standard runs the file lacks
    loss: LossView  # the runs shown (all, or plain RoPE and one factor)
    best: dict | None  # lowest loss beyond and within L0, plain RoPE's beyond and within, and the mildest linear
    # (position interpolation, not fine-tuned) run's loss within L0 (None without data beyond)


def experiment_view(n_tokens: int, factor: str = "all") -> ExperimentView | None:
    """The results file of `n_tokens` (None when there is none) with its runs at `factor` ("all": every run;
    plain RoPE is always shown)."""
    res = results_by_length().get(n_tokens)
    if res is None or not res["runs"]:
        return None
    runs = [r for r in res["runs"] if factor == "all" or r["method"] == "default" or f"{r['factor']:g}" == factor]
    beyond = [r for r in res["runs"] if r["mean_loss_beyond_context"] is not None]
    plain = next((r for r in beyond if r["method"] == "default"), None)
    best = None
    if beyond and plain is not None:
        lowest = min(beyond, key=lambda r: r["mean_loss_beyond_context"])
        within = min(res["runs"], key=lambda r: r["mean_loss_within_context"])
        best = {
            "best": lowest["label"],
            "best_loss": lowest["mean_loss_beyond_context"],
            "none_loss": plain["mean_loss_beyond_context"],
            "in_best": within["label"],
            "in_loss": within["mean_loss_within_context"],
            "none_in_loss": plain["mean_loss_within_context"],
        }
        linear = [r for r in res["runs"] if r["method"] == "linear"]
        if linear:  # position interpolation without its fine-tuning: the smallest factor is the kindest
            mildest = min(linear, key=lambda r: r["factor"])
            best |= {"linear": mildest["label"], "linear_in_loss": mildest["mean_loss_within_context"],
                     "linear_hurts_within": mildest["mean_loss_within_context"] > plain["mean_loss_within_context"]}  # fmt: skip
    return ExperimentView(res, recorded_weights(res.get("weights")), missing_runs(res), loss_view(runs), best)


def live_runs(model, n: int, method: str, factor: float, bucket: int, progress: Progress | None = None) -> list[dict]:
    """Plain RoPE and `method` x `factor` on the first n tokens of the long text (a short run, inside L0), with
    `model` (the contract: SmolLM2 or another causal LM with RoPE)."""
    ids = torch.tensor(model.encode(load_long_text())[:n])
    return evaluate_scaling(
        model,
        ids,
        [("default", 1.0), (method, factor)],
        bucket=bucket,
        original_context=model.max_positions,  # L0: SmolLM2's 8,192, or the own model's
        progress=progress,
    )
