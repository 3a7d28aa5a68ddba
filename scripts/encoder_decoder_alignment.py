"""Measure how well the shipped encoder-decoder's cross-attention heads align target words with their source words.

    python scripts/encoder_decoder_alignment.py                 # 500 held-out pairs -> results/encoder_decoder_alignment.json
    python scripts/encoder_decoder_alignment.py --pairs 100 --out /tmp/alignment.json

Every held-out pair (never trained on: grammar.is_held_out) is translated with its reference fed in (teacher
forcing); each cross-attention head scores a hit when its largest weight, at the decoder position that writes an
aligned target word, falls on the source word the generator aligned it to (core/encoder_decoder/alignment.py).
Baselines on the same words: a monotone (diagonal) walk along the sentence, and chance.

Picking the best of several heads on the same words flatters it a little, so the pairs are also split in two: the
best head is chosen on the first half and its accuracy reported on the second half ("confirmation").
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import sys
import time

import torch

from core.encoder_decoder import alignment, grammar
from core.encoder_decoder import model as ed
from core.results import save_result
from core.timing import machine_info

NAME = "encoder_decoder_alignment"
SEED = 2  # held-out pairs of another seed than the training report's (seed + 1 = 1): a fresh sample


def confirmation(model, tokenizer, pairs) -> dict:
    """The best head chosen on pairs[: n/2], scored on pairs[n/2 :] beside that half's diagonal baseline."""
    half = len(pairs) // 2
    chosen = alignment.measure(model, tokenizer, pairs[:half]).best(1)[0]
    second = alignment.measure(model, tokenizer, pairs[half:])
    head = next(h for h in second.heads if (h.layer, h.head) == (chosen.layer, chosen.head))
    return {"chosen_on_pairs": half, "scored_on_pairs": len(pairs) - half, "head": head.to_dict(),
            "diagonal": second.diagonal.to_dict(), "chance": second.chance}  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=500, help="held-out pairs (half ja, half ko)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--out", default=NAME, help="results name or .json path")
    args = parser.parse_args(argv)
    if ed.status():
        sys.exit(ed.status())
    torch.set_num_threads(1)
    model, tokenizer = ed.load()
    pairs = grammar.generate(args.pairs, args.seed, held_out=True)
    t0 = time.perf_counter()
    report = alignment.measure(model, tokenizer, pairs)
    result = {
        "command": "python scripts/encoder_decoder_alignment.py " + shlex.join(sys.argv[1:] if argv is None else argv),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
        "device": machine_info(),
        "seed": args.seed,
        "layers": model.config.decoder_layers,
        "heads_per_layer": model.config.decoder_attention_heads,
        **report.to_dict(),
        "per_language": {
            lang: alignment.measure(model, tokenizer, [p for p in pairs if p.language == lang]).to_dict(best=1)["best"]
            for lang in grammar.LANGUAGES
        },
        "confirmation": confirmation(model, tokenizer, pairs),
        "seconds": None,
    }
    result["seconds"] = round(time.perf_counter() - t0, 1)
    path = save_result(args.out, result)
    best = report.best(1)[0]
    low, high = best.interval
    d_low, d_high = report.diagonal.interval
    print(f"{path}: {report.pairs} pairs, {report.diagonal.words} aligned words")
    print(f"best head L{best.layer} H{best.head}: {best.accuracy:.3f} [{low:.3f}, {high:.3f}]")
    print(f"diagonal {report.diagonal.accuracy:.3f} [{d_low:.3f}, {d_high:.3f}], chance {report.chance:.3f}")
    print(f"confirmation: {result['confirmation']['head']}")
    print(f"verdict: {report.verdict()}")


if __name__ == "__main__":
    main()
