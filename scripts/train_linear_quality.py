"""Linear attention's quality, not only its speed: softmax and linear (elu + 1) attention trained on the
sequence-copy task of Katharopoulos et al. 2020 (core/linear_attention/copy_task.py), same model, same seed,
same batches, one step of each in turn. Writes results/linear_quality.json (loss against steps and against
training seconds, held-out loss and copy accuracy, command, date, load).

    nice -n 5 python scripts/train_linear_quality.py                    # the committed run (~5 min of CPU)
    python scripts/train_linear_quality.py --steps 50 --out /tmp/lq.json

One CPU thread: the run is reproducible on the same machine, and a rerun of the first steps (tests) gives the
same first losses.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

import torch

from core.linear_attention.copy_task import KINDS, CopyConfig, train
from core.results import results_path, save_result
from core.timing import MeasuredRun

RESULT_NAME = "linear_quality"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--length", type=int, default=32, help="symbols per copy (the paper: up to 128)")
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(results_path(RESULT_NAME)))
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    cfg = CopyConfig(length=args.length, seed=args.seed)
    run = MeasuredRun("nice -n 5 python scripts/train_linear_quality.py", sys.argv[1:])

    def on_log(step, losses):
        print(f"step {step:5d}  " + "  ".join(f"{k} {v:.4f}" for k, v in losses.items()), file=sys.stderr, flush=True)

    result = train(cfg, args.steps, log_every=args.log_every, on_log=on_log)
    out = {
        **run.header(),
        "task": "copy: [SEP] s [SEP] s, loss on the second copy (Katharopoulos et al. 2020, section 4.1)",
        "config": dataclasses.asdict(cfg),
        "steps": args.steps,
        "optimizer": "Adam, constant learning rate",
        "kinds": list(KINDS),
        "attention": {
            "softmax": "F.scaled_dot_product_attention(q, k, v, is_causal=True)",
            "linear": "causal_linear_attention, phi = elu + 1 (core/linear_attention/kernel.py)",
        },
        **result,
    }
    save_result(args.out, out)
    print(f"wrote {args.out}: " + ", ".join(f"{k} {v}" for k, v in result["final"].items()), file=sys.stderr)


if __name__ == "__main__":
    main()
