"""Loss per position on a long text: does a RoPE model still predict well past its training context, with and
without scaling? No fine-tuning: the same weights, only the rotary frequencies change (core/models/rope_scaling.py).
Reading the committed results is in `experiment`.

Memory plan (so 32k tokens fit a CPU): the contract's `next_token_losses` runs the whole sequence through the
decoder in one pass with SDPA's fused causal kernel (never the n x n attention matrix) and projects to the
vocabulary in blocks of positions (the full logits of 32k positions x 49,152 tokens would take 6.4 GB).

Dynamic NTK is computed by transformers for the current sequence length, which in one pass is the whole
sequence: every position of a 16k evaluation uses the frequencies for 16k (a generated token at position p would
have used those for p + 1).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import torch

from ..models.rope_scaling import scaled_inv_freq

ROOT = Path(__file__).resolve().parents[2]
LONG_TEXT_PATH = ROOT / "data" / "licence_texts.txt"
# Licence texts may be copied verbatim (each says so). Near-duplicates (GFDL-1.2, LGPL-2, GPL-1) are left out so
# that little of the text is a copy of something earlier in it (copying would make late positions easy).
LONG_TEXT_SOURCES = [
    "/usr/share/common-licenses/GPL-3",
    "/usr/share/common-licenses/Apache-2.0",
    "/usr/share/common-licenses/MPL-1.1",
    "/usr/share/common-licenses/GFDL-1.3",
    "/usr/share/common-licenses/Artistic",
    "/usr/share/common-licenses/LGPL-2.1",
    "/usr/share/common-licenses/CC0-1.0",
    "/usr/share/common-licenses/MPL-2.0",
    "/usr/share/common-licenses/BSD",
    "/usr/share/common-licenses/GPL-2",
    "/usr/share/common-licenses/LGPL-3",
    "Python 3.11 LICENSE (lib/python3.11/LICENSE.txt)",
]
SEPARATOR = "\n\n"
Progress = Callable[[float, str], None]  # (fraction done in [0, 1], what is running)
PLAIN_LABEL = "no scaling"  # plain RoPE's run, as the results files name it (a page says it in its reader's words)


def load_long_text(path: Path = LONG_TEXT_PATH) -> str:
    return Path(path).read_text(encoding="utf-8")


def text_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def token_losses(model, input_ids: torch.Tensor, rope=None, progress: Progress | None = None, label: str = ""):
    """Cross-entropy (nats) of each next token of input_ids (n,) with `model` (the contract: a causal LM),
    (n - 1,) float32: entry t is -log p(x_(t+1) | x_0..x_t), so position t + 1 is predicted from t + 1 tokens of
    context. rope = (method, factor, original context) runs the pass with that scaled RoPE."""
    report = None if progress is None else (lambda fraction: progress(fraction, label))
    return model.next_token_losses(input_ids, rope=rope, progress=report)


def bucket_losses(losses: torch.Tensor, bucket: int) -> dict:
    """Mean loss per block of `bucket` query positions. Entry t of `losses` is predicted AT position t (the
    position id of the last token the model sees), so bucket k holds t in [k*bucket, (k+1)*bucket)."""
    position = torch.arange(losses.shape[0])
    index = position // bucket
    n_buckets = int(index.max()) + 1
    total = torch.zeros(n_buckets, dtype=torch.float64).index_add_(0, index, losses.double())
    count = torch.bincount(index, minlength=n_buckets)
    starts = torch.arange(n_buckets) * bucket
    return {
        "start": starts.tolist(),
        "end": torch.minimum(starts + bucket - 1, torch.tensor(losses.shape[0] - 1)).tolist(),
        "mean_loss": (total / count).tolist(),
        "count": count.tolist(),
    }


def run_configs(methods: list[str], factors: list[float]) -> list[tuple[str, float]]:
    """(method, factor) pairs to evaluate: plain RoPE once, each scaling method at each factor."""
    runs = [("default", 1.0)] if "default" in methods else []
    runs += [(m, float(f)) for m in methods if m != "default" for f in factors]
    return runs


def evaluate_scaling(
    model,
    input_ids: torch.Tensor,
    runs: list[tuple[str, float]],
    bucket: int = 1024,
    original_context: int = 8192,
    progress: Progress | None = None,
    on_result: Callable[[dict], None] | None = None,
) -> list[dict]:
    """For each (method, factor): the loss of every next token over the whole sequence with transformers' rotary
    embedding for that method (model: the contract, a causal LM with RoPE), reduced to per-bucket means.
    on_result is called after every run (for incremental saving)."""
    results = []
    head_dim = model.capabilities.head_dim
    theta = model.capabilities.positions.rope_theta
    n = int(input_ids.numel())
    for k, (method, factor) in enumerate(runs):
        label = f"{method} x{factor:g}" if method != "default" else PLAIN_LABEL

        def step(frac, what, k=k):
            if progress is not None:
                progress((k + frac) / len(runs), what)

        t0 = time.perf_counter()
        # "default": the model's own rotary embedding, as trained (a learner's Llama 3.1 keeps its llama3 scaling)
        rope = None if method == "default" else (method, factor, original_context)
        losses = token_losses(model, input_ids, rope, step, label)
        seconds = time.perf_counter() - t0
        _, attention_factor = scaled_inv_freq(
            method, factor, seq_len=n, head_dim=head_dim, rope_theta=theta, original_context=original_context
        )
        result = {
            "method": method,
            "factor": factor,
            "label": label,
            "attention_factor": attention_factor,
            "n_tokens": n,
            "original_context": original_context,
            "seconds": round(seconds, 1),
            "mean_loss_all": float(losses.mean()),
            "mean_loss_within_context": float(losses[:original_context].mean()),
            "mean_loss_beyond_context": (
                float(losses[original_context:].mean()) if losses.shape[0] > original_context else None
            ),
            **bucket_losses(losses, bucket),
        }
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results
