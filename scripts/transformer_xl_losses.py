"""SmolLM2's loss per position over the shipped long text (data/licence_texts.txt) when it reads the text in
segments, with Transformer-XL's memory, with a sliding window, with attention sinks + a window, or with full
attention (core/transformer_xl.py: each method is a mask on one forward pass).

    python scripts/transformer_xl_losses.py                              # writes results/transformer_xl.json
    python scripts/transformer_xl_losses.py --tokens 2048 --segment 256 --window 256 --sinks 4

What to look for (StreamingLLM, Xiao et al. 2023): a window alone is fine until the first tokens leave it (here,
from position `window` on), then its loss rises; sinks + window stays close to full attention. Independent segments
pay at the start of every segment; XL's memory removes most of that.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from core import transformer_xl as tx
from core.models import registry
from core.results import results_path, save_result
from core.timing import machine_info

ROOT = Path(__file__).resolve().parents[1]
TEXT = ROOT / "data" / "licence_texts.txt"
RESULT_NAME = "transformer_xl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--segment", type=int, default=256)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--sinks", type=int, default=4)
    ap.add_argument("--block", type=int, default=64, help="positions per point of the loss-against-position curve")
    ap.add_argument("--out", default=str(results_path(RESULT_NAME)))
    args = ap.parse_args()
    wrapper = registry.RECORDS["smollm2"].load()
    ids = wrapper.encode(TEXT.read_text(encoding="utf-8"))[: args.tokens]
    before = machine_info("cpu")
    start = time.perf_counter()

    def progress(frac, method):
        print(f"  [{frac:4.0%}] {method}", file=sys.stderr, flush=True)

    result = tx.compare(wrapper, ids, args.segment, args.window, args.sinks, progress=progress)
    seconds = time.perf_counter() - start
    after = machine_info("cpu")
    past_window = args.window + args.sinks  # from here on the plain window has dropped the first tokens
    out = {
        "command": " ".join(["python scripts/transformer_xl_losses.py", *sys.argv[1:]]),
        "date": before["date"],
        "device": "cpu",
        "device_name": before["device_name"],
        "torch": before["torch"],
        "torch_threads": before["torch_threads"],
        "loadavg_1min_before": before["loadavg_1min"],
        "loadavg_1min_after": after["loadavg_1min"],
        "seconds": round(seconds, 1),
        "model": wrapper.name,
        "text": os.path.relpath(TEXT, ROOT),
        "tokens": len(ids),
        "segment": args.segment,
        "window": args.window,
        "sinks": args.sinks,
        "layers": wrapper.n_layers,
        "block": args.block,
        "methods": list(tx.METHODS),
        "mean_loss": {m: round(result.mean(m), 4) for m in tx.METHODS},
        "mean_loss_past_window": {m: round(result.mean(m, past_window), 4) for m in tx.METHODS},
        "past_window_from": past_window,
        "loss_by_position_in_segment": {
            m: [round(float(v), 4) for v in result.by_position_in_segment(m)] for m in tx.METHODS
        },
        "loss_by_block": {m: [round(float(v), 4) for v in result.by_block(m, args.block)] for m in tx.METHODS},
    }
    for m in tx.METHODS:
        print(
            f"{m:>14}: mean loss {out['mean_loss'][m]:.4f}, from position {past_window}: "
            f"{out['mean_loss_past_window'][m]:.4f}"
        )
    print(f"{seconds:.0f} s; load average before {before['loadavg_1min']}, after {after['loadavg_1min']}")
    print(f"wrote {os.path.relpath(save_result(args.out, out), ROOT)}")


if __name__ == "__main__":
    main()
