"""Absolute positions past their length: a small decoder trained with sinusoidal, learned, ALiBi and RoPE
positions on "the most recent marker" (core/positions/extrapolation.py), tested on sequences up to 4x its training
length. Writes results/position_extrapolation.json: accuracy per position for every kind and seed, the training
losses, command, date, load.

    nice -n 5 python scripts/train_position_extrapolation.py              # the committed run (~2 min of CPU)
    python scripts/train_position_extrapolation.py --steps 20 --seeds 0 --out /tmp/pe.json

One CPU thread: a rerun on the same machine gives the same numbers.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import torch

from core.positions.extrapolation import KINDS, ExtrapolationConfig, train
from core.results import results_path, save_result
from core.timing import MeasuredRun

RESULT_NAME = "position_extrapolation"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--train-length", type=int, default=32)
    ap.add_argument("--out", default=str(results_path(RESULT_NAME)))
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    run = MeasuredRun("nice -n 5 python scripts/train_position_extrapolation.py", sys.argv[1:])
    runs = {}
    for seed in args.seeds:
        cfg = ExtrapolationConfig(seed=seed, train_length=args.train_length)

        def on_log(step, losses, seed=seed):
            print(
                f"seed {seed} step {step:5d}  " + "  ".join(f"{k} {v:.4f}" for k, v in losses.items()), file=sys.stderr
            )

        runs[str(seed)] = train(cfg, args.steps, on_log=on_log)
        print(
            f"seed {seed}: " + ", ".join(f"{k} {runs[str(seed)][k]['accuracy_past']}" for k in KINDS), file=sys.stderr
        )
    cfg = ExtrapolationConfig(train_length=args.train_length)
    out = {
        **run.header(),
        "task": "the most recent marker: at every position, the last of tokens 1..4 seen so far",
        "config": {k: v for k, v in dataclasses.asdict(cfg).items() if k != "seed"},
        "steps": args.steps,
        "seeds": args.seeds,
        "kinds": list(KINDS),
        "runs": runs,
    }
    save_result(args.out, out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
