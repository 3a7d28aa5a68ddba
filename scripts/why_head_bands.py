"""Which frequency bands carry the heads the detectors found, over many held-out texts -> results/why_head_bands.json.

    python scripts/why_head_bands.py                  # SmolLM2, 32 windows of data/licence_texts.txt, 128 tokens
    python scripts/why_head_bands.py --texts 8 --threads 2

Heads: SmolLM2's top 3 on the previous-token, first-token and induction detectors of the committed map
(results/head_detectors.json, found on repeated random tokens). Texts: windows of data/licence_texts.txt taken at
evenly spaced places, natural English the detectors never saw. For each head and text, core/why_head.py splits
every score into wavelength bands (<10, <100, <1,000, <10,000 and more tokens per turn) and measures how much of
the head's pattern survives with content removed, with position removed, and under even attention; the file keeps
the mean and the spread over texts, beside the same over every head of the model (the baseline a detector head is
compared with). Barbero et al. (ICLR 2025, "Round and Round We Go!") report for Gemma 7B that positional heads
(diagonal, previous token) are built from the highest frequencies and that the lowest frequencies act as semantic
channels; this measures the same question on SmolLM2.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from core import head_detectors as hd
from core import why_head as wh
from core.models import registry
from core.results import save_result
from core.timing import machine_info

ROOT = Path(__file__).resolve().parents[1]
TEXT_PATH = ROOT / "data" / "licence_texts.txt"
DETECTORS = ("previous_token", "first_token", "induction")
TOP = 3
WINDOW_CHARACTERS = 900  # more than 128 tokens of English: every window is cut to the same length


def held_out_texts(n: int) -> list[str]:
    """n windows of the licence texts at evenly spaced places, whitespace collapsed."""
    text = " ".join(TEXT_PATH.read_text(encoding="utf-8").split())
    starts = np.linspace(0, len(text) - WINDOW_CHARACTERS, n).astype(int)
    return [text[s : s + WINDOW_CHARACTERS] for s in starts]


def summary(found: wh.SharesOverTexts, layer: int, head: int, all_heads_fastest: np.ndarray) -> dict:
    shares = found.shares[:, layer, head]  # (T, b)
    mean = shares.mean(0)
    return {
        "layer": layer,
        "head": head,
        "band_share_mean": mean.round(4).tolist(),
        "band_share_sd": shares.std(0).round(4).tolist(),
        "carrier_band": int(mean.argmax()),
        "fastest_band_rank": int((all_heads_fastest > mean[0]).sum()) + 1,  # 1: the most high-frequency head
        "kept_mean": {k: round(float(v[:, layer, head].mean()), 4) for k, v in found.kept.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=wh.MAX_TOKENS)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model = registry.RECORDS["smollm2"].load()
    detected = hd.committed_map("smollm2")
    if detected is None:
        raise SystemExit("no committed head-detector map for SmolLM2: run python scripts/head_detectors.py first")
    before = machine_info()
    t0 = time.perf_counter()
    found = wh.shares_over_texts(model, held_out_texts(args.texts), "wavelength", None, args.tokens)
    seconds = time.perf_counter() - t0
    every = found.shares.mean(0)  # (L, H, b) mean over texts
    all_fastest = every[..., 0].ravel()
    heads = {d: [summary(found, layer, head, all_fastest) | {"detector_score": round(score, 4)}
                 for layer, head, score in detected.top(d, TOP)] for d in DETECTORS}  # fmt: skip
    result = {
        "command": "python scripts/why_head_bands.py"
        + (f" --texts {args.texts}" if args.texts != 32 else "")
        + (f" --tokens {args.tokens}" if args.tokens != wh.MAX_TOKENS else "")
        + (f" --threads {args.threads}" if args.threads != 1 else ""),
        "model": "smollm2",
        "date": before["date"],
        "device": before,
        "loadavg_1min_after": machine_info()["loadavg_1min"],
        "seconds": round(seconds, 1),
        "definitions": "core/why_head.py (shares_over_texts), heads from results/head_detectors.json",
        "texts": f"{args.texts} windows of {TEXT_PATH.relative_to(ROOT)}, evenly spaced, first {args.tokens} tokens",
        "tokens_per_text": found.tokens,
        "bands": [
            {"pairs": [a, b - 1], "wavelength_tokens": [round(s, 1), round(w, 1)]}
            for (a, b), (s, w) in zip(found.edges, found.band_wavelengths)
        ],  # fmt: skip
        "all_heads": {
            "band_share_mean": every.reshape(-1, every.shape[-1]).mean(0).round(4).tolist(),
            "kept_mean": {k: round(float(v.mean()), 4) for k, v in found.kept.items()},
        },
        "detector_heads": heads,
        "detector_groups": {
            d: {
                "band_share_mean": np.mean([h["band_share_mean"] for h in heads[d]], 0).round(4).tolist(),
                "kept_mean": {k: round(float(np.mean([h["kept_mean"][k] for h in heads[d]])), 4) for k in wh.KEPT},
            }
            for d in DETECTORS
        },
    }
    path = save_result("why_head_bands", result)
    print(f"{path}: {seconds:.1f} s")
    print("all heads:", result["all_heads"])
    for d, group in result["detector_groups"].items():
        print(d, group, [(h["layer"], h["head"], h["carrier_band"], h["fastest_band_rank"]) for h in heads[d]])


if __name__ == "__main__":
    main()
