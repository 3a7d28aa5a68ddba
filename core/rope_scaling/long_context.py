"""Loss per position on a long text: does a RoPE model still predict well past its training context, with and
without scaling? No fine-tuning: the same weights, only the rotary frequencies change (`methods`). Reading the
committed results is in `experiment`.

Memory plan (so 32k tokens fit a CPU): the whole sequence goes through the decoder in one pass with SDPA, whose
fused causal kernel never holds the n x n attention matrix (attention_mask=None lets transformers pass
is_causal=True); the vocabulary projection and the loss are done in blocks of `block` positions, because the
full logits of 32k positions x 49,152 tokens would take 6.4 GB in float32.

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
import torch.nn.functional as F

from .methods import rope_scaling_applied, scaled_inv_freq

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


def load_long_text(path: Path = LONG_TEXT_PATH) -> str:
    return Path(path).read_text(encoding="utf-8")


def text_fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _layer_progress(model, progress: Progress | None, start: float, span: float, label: str):
    """Forward hooks on the decoder layers reporting start + span * (layers done / layers)."""
    if progress is None:
        return []
    layers = model.model.layers
    n = len(layers)

    def hook(index):
        return lambda *_: progress(start + span * (index + 1) / n, label)

    return [layer.register_forward_hook(hook(i)) for i, layer in enumerate(layers)]


@torch.no_grad()
def token_losses(
    model, input_ids: torch.Tensor, block: int = 1024, progress: Progress | None = None, label: str = ""
) -> torch.Tensor:
    """Cross-entropy (nats) of each next token: entry t is -log p(x_(t+1) | x_0..x_t), so position t + 1 is
    predicted from t + 1 tokens of context. input_ids (n,) -> (n - 1,) float32 on the CPU."""
    ids = input_ids.reshape(1, -1).to(next(model.parameters()).device)
    hooks = _layer_progress(model, progress, 0.0, 0.9, label)
    try:
        hidden = model.model(input_ids=ids, use_cache=False).last_hidden_state[0]  # (n, d_model)
    finally:
        for h in hooks:
            h.remove()
    targets = ids[0, 1:]
    out = torch.empty(targets.shape[0], dtype=torch.float32)
    for a in range(0, targets.shape[0], block):
        b = min(a + block, targets.shape[0])
        logits = model.lm_head(hidden[a:b]).float()
        out[a:b] = F.cross_entropy(logits, targets[a:b], reduction="none").cpu()
    if progress is not None:
        progress(1.0, label)
    return out


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
    """For each (method, factor): swap in transformers' rotary embedding for it, compute token_losses over the whole
    sequence, and reduce to per-bucket means. on_result is called after every run (for incremental saving)."""
    results = []
    head_dim = getattr(model.config, "head_dim", None) or model.config.hidden_size // model.config.num_attention_heads
    theta = model.config.rope_parameters["rope_theta"]
    n = int(input_ids.numel())
    for k, (method, factor) in enumerate(runs):
        label = f"{method} x{factor:g}" if method != "default" else "no scaling"

        def step(frac, what, k=k):
            if progress is not None:
                progress((k + frac) / len(runs), what)

        t0 = time.perf_counter()
        with rope_scaling_applied(model, method, factor, original_context):
            losses = token_losses(model, input_ids, progress=step, label=label)
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
