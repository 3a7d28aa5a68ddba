"""Speed of the three live head computations (/head-detectors, /ablation, /logit-lens) on this machine
-> results/bench_heads.json.

    python benchmarks/bench_heads.py                 # one torch thread (see scripts/head_detectors.py)
    python benchmarks/bench_heads.py --threads 2

  - detector_map_s: a full detector map (every head, five detectors) at the committed settings, per model
    (target <= 60 s on the 2-core CPU);
  - ablation_run_s: one ablation run as the /ablation page does it live: remove the top 5 induction heads of
    SmolLM2 and measure the repeated-half loss (one forward pass with the hooks, on the live evaluation set), median
    of 3 (target <= 10 s); also the same on the committed cards' larger set, and a whole live card (clean run,
    ablated run, 5 placebo draws);
  - logit_lens_64_s: the logit lens of a 64-token text on SmolLM2, median of 3 (target <= 2 s).
The machine is shared: /proc/loadavg is recorded before and after.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from core import ablation as ab
from core import head_detectors as hd
from core import logit_lens as lens
from core.models import registry
from core.results import save_result
from core.timing import machine_info

RESULT_NAME = "bench_heads"
TARGETS_S = {"detector_map_s": 60.0, "ablation_run_s": 10.0, "logit_lens_64_s": 2.0}
TEXT = "The capital of France is Paris. The capital of Japan is Tokyo. " * 20


def loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


def median_s(fn, reps: int = 3) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    before = loadavg()
    out = {
        "command": "python benchmarks/bench_heads.py" + (f" --threads {args.threads}" if args.threads != 1 else ""),
        "device": machine_info(),
        "loadavg_before": before,
        "targets_s": TARGETS_S,
        "detector_map_s": {},
    }
    for key in ("minilm", "smollm2"):
        model = registry.RECORDS[key].load()
        found = hd.detector_map(model, **hd.SCRIPT_SETTINGS)
        out["detector_map_s"][key] = round(found.seconds, 2)
        print(f"detector map {key}: {found.seconds:.1f} s")
    smol = registry.RECORDS["smollm2"].load()
    heads, _, _ = ab.claim_heads("smollm2", smol, "induction", ab.DEFAULT_HEADS)
    for name, settings in (
        ("ablation_run_s", ab.LIVE_EVAL_SETTINGS),
        ("ablation_run_committed_set_s", ab.EVAL_SETTINGS),
    ):
        evalset = ab.repeated_eval_set(smol, **settings)

        def run(evalset=evalset):
            with ab.ablated(smol, heads):
                return ab.measure(smol, evalset)

        run()  # warm-up
        out[name] = round(median_s(run), 3)
        print(f"{name}: {out[name]:.2f} s")
    live = ab.repeated_eval_set(smol, **ab.LIVE_EVAL_SETTINGS)
    card = ab.claim_card("smollm2", smol, "induction", ab.DEFAULT_HEADS, "zero", 5, 0, evalset=live)
    out["live_card_5_draws_s"] = round(card.seconds, 2)
    print(f"live card (clean, ablated, 5 draws): {card.seconds:.1f} s")
    n = len(smol.tokenize([TEXT], lens.MAX_TOKENS).input_ids[0])
    lens.logit_lens(smol, TEXT)  # warm-up
    out["logit_lens_tokens"] = n
    out["logit_lens_64_s"] = round(median_s(lambda: lens.logit_lens(smol, TEXT)), 3)
    print(f"logit lens at {n} tokens: {out['logit_lens_64_s']:.2f} s")
    out["loadavg_after"] = loadavg()
    out["within_targets"] = {
        "detector_map_s": all(v <= TARGETS_S["detector_map_s"] for v in out["detector_map_s"].values()),
        "ablation_run_s": out["ablation_run_s"] <= TARGETS_S["ablation_run_s"],
        "logit_lens_64_s": out["logit_lens_64_s"] <= TARGETS_S["logit_lens_64_s"],
    }
    print("wrote", save_result(RESULT_NAME, out))


if __name__ == "__main__":
    main()
